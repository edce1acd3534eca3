// SPDX-License-Identifier: MIT
/*
 * Names of element types, scale modes, layouts, dtypes, preferences and
 * recipes: the strings users, the CLI and environment variables speak.
 */
#include <string.h>

#include "internal.h"
#include "mxcore_geom.h"

/* Public enums are handed to the MX core unchanged. */
_Static_assert(MXA_ELEM_E4M3 == (int)MXCORE_E4M3 &&
	       MXA_ELEM_E5M2 == (int)MXCORE_E5M2 &&
	       MXA_ELEM_E2M3 == (int)MXCORE_E2M3 &&
	       MXA_ELEM_E3M2 == (int)MXCORE_E3M2 &&
	       MXA_ELEM_E2M1 == (int)MXCORE_E2M1, "element enums drifted");
_Static_assert(MXA_SCALE_FLOOR == (int)MXCORE_FLOOR &&
	       MXA_SCALE_RCEIL == (int)MXCORE_RCEIL &&
	       MXA_SCALE_CEIL == (int)MXCORE_CEIL &&
	       MXA_SCALE_EVEN == (int)MXCORE_EVEN, "scale mode enums drifted");
_Static_assert(MXA_SCALE_E8M0 == (int)MXCORE_SCALE_E8M0 &&
	       MXA_SCALE_UE4M3 == (int)MXCORE_SCALE_UE4M3 &&
	       MXA_LAYOUT_PLAIN == (int)MXCORE_LAYOUT_PLAIN &&
	       MXA_LAYOUT_SWIZZLED == (int)MXCORE_LAYOUT_SWIZZLED &&
	       MXA_DTYPE_F32 == (int)MXCORE_F32 &&
	       MXA_DTYPE_BF16 == (int)MXCORE_BF16, "geometry enums drifted");

struct name_entry {
	const char *name;
	int value;
};

static const struct name_entry elem_names[] = {
	{ "e4m3", MXA_ELEM_E4M3 }, { "e5m2", MXA_ELEM_E5M2 },
	{ "e2m3", MXA_ELEM_E2M3 }, { "e3m2", MXA_ELEM_E3M2 },
	{ "e2m1", MXA_ELEM_E2M1 },
};

static const struct name_entry mode_names[] = {
	{ "floor", MXA_SCALE_FLOOR }, { "rceil", MXA_SCALE_RCEIL },
	{ "ceil", MXA_SCALE_CEIL }, { "even", MXA_SCALE_EVEN },
	{ "nvfp4", MXA_SCALE_NVFP4 },
};

static const struct name_entry scale_type_names[] = {
	{ "e8m0", MXA_SCALE_E8M0 }, { "ue4m3", MXA_SCALE_UE4M3 },
};

static const struct name_entry layout_names[] = {
	{ "plain", MXA_LAYOUT_PLAIN }, { "swizzled", MXA_LAYOUT_SWIZZLED },
};

static const struct name_entry dtype_names[] = {
	{ "f32", MXA_DTYPE_F32 }, { "bf16", MXA_DTYPE_BF16 },
};

static const struct name_entry pref_names[] = {
	{ "auto", MXA_PREF_AUTO }, { "native", MXA_PREF_NATIVE },
	{ "emulated", MXA_PREF_EMULATED },
};

static const struct name_entry support_names[] = {
	{ "native", MXA_SUPPORT_NATIVE }, { "emulated", MXA_SUPPORT_EMULATED },
	{ "unsupported", MXA_SUPPORT_NONE },
};

#define MX(e, m)	{ MXA_ELEM_##e, MXA_SCALE_##m, MXA_SCALE_E8M0, \
			  MXA_BLOCK_SIZE }

/*
 * Device-agnostic recipe names: element type, scale type and mode, no
 * vendor.  0.1 callers see the E8M0 ones only (compat_0_1.c).
 */
const struct mxa_recipe_entry mxa__recipes[] = {
	{ "mxfp8", MX(E4M3, FLOOR) },
	{ "mxfp8_rceil", MX(E4M3, RCEIL) },
	{ "mxfp8_e5m2", MX(E5M2, FLOOR) },
	{ "mxfp8_e5m2_rceil", MX(E5M2, RCEIL) },
	{ "mxfp6_e2m3", MX(E2M3, FLOOR) },
	{ "mxfp6_e2m3_rceil", MX(E2M3, RCEIL) },
	{ "mxfp6_e3m2", MX(E3M2, FLOOR) },
	{ "mxfp6_e3m2_rceil", MX(E3M2, RCEIL) },
	{ "mxfp4", MX(E2M1, FLOOR) },
	{ "mxfp4_rceil", MX(E2M1, RCEIL) },
	{ "nvfp4", { MXA_ELEM_E2M1, MXA_SCALE_NVFP4, MXA_SCALE_UE4M3,
		     MXA_NVFP4_BLOCK_SIZE } },
};

const unsigned int mxa__n_recipes = MXA_ARRAY_SIZE(mxa__recipes);

static int lookup(const struct name_entry *t, size_t n, const char *name,
		  int *out)
{
	size_t i;

	if (!name || !out)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!strcmp(t[i].name, name)) {
			*out = t[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *rlookup(const struct name_entry *t, size_t n, int value)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].value == value)
			return t[i].name;
	return NULL;
}

static int parse_name(const struct name_entry *t, size_t n, const char *what,
		 const char *name, const void *dst, int *out)
{
	int ret;

	if (!dst)
		return mxa__err(-EINVAL, "%s parse: out is NULL", what);
	ret = lookup(t, n, name, out);
	if (ret)
		return mxa__err(ret, "unknown %s name '%s'", what,
				name ? name : "(null)");
	return 0;
}

MXA_EXPORT int mxa_elem_parse(const char *name, enum mxa_elem *out)
{
	int v, ret = parse_name(elem_names, MXA_ARRAY_SIZE(elem_names),
			   "element type", name, out, &v);

	if (!ret)
		*out = (enum mxa_elem)v;
	return ret;
}

MXA_EXPORT const char *mxa_elem_name(enum mxa_elem elem)
{
	return rlookup(elem_names, MXA_ARRAY_SIZE(elem_names), (int)elem);
}

MXA_EXPORT int mxa_scale_mode_parse(const char *name,
				    enum mxa_scale_mode *out)
{
	int v, ret = parse_name(mode_names, MXA_ARRAY_SIZE(mode_names),
			   "scale mode", name, out, &v);

	if (!ret)
		*out = (enum mxa_scale_mode)v;
	return ret;
}

MXA_EXPORT const char *mxa_scale_mode_name(enum mxa_scale_mode mode)
{
	return rlookup(mode_names, MXA_ARRAY_SIZE(mode_names), (int)mode);
}

MXA_EXPORT int mxa_scale_type_parse(const char *name,
				    enum mxa_scale_type *out)
{
	int v, ret = parse_name(scale_type_names,
				MXA_ARRAY_SIZE(scale_type_names), "scale type",
				name, out, &v);

	if (!ret)
		*out = (enum mxa_scale_type)v;
	return ret;
}

MXA_EXPORT const char *mxa_scale_type_name(enum mxa_scale_type type)
{
	return rlookup(scale_type_names, MXA_ARRAY_SIZE(scale_type_names),
		       (int)type);
}

MXA_EXPORT int mxa_layout_parse(const char *name, enum mxa_scale_layout *out)
{
	int v, ret = parse_name(layout_names, MXA_ARRAY_SIZE(layout_names),
			   "scale layout", name, out, &v);

	if (!ret)
		*out = (enum mxa_scale_layout)v;
	return ret;
}

MXA_EXPORT const char *mxa_layout_name(enum mxa_scale_layout layout)
{
	return rlookup(layout_names, MXA_ARRAY_SIZE(layout_names),
		       (int)layout);
}

MXA_EXPORT int mxa_dtype_parse(const char *name, enum mxa_dtype *out)
{
	int v, ret = parse_name(dtype_names, MXA_ARRAY_SIZE(dtype_names), "dtype",
			   name, out, &v);

	if (!ret)
		*out = (enum mxa_dtype)v;
	return ret;
}

MXA_EXPORT const char *mxa_dtype_name(enum mxa_dtype dtype)
{
	return rlookup(dtype_names, MXA_ARRAY_SIZE(dtype_names), (int)dtype);
}

MXA_EXPORT int mxa_pref_parse(const char *name, enum mxa_pref *out)
{
	int v, ret = parse_name(pref_names, MXA_ARRAY_SIZE(pref_names),
			   "kernel preference", name, out, &v);

	if (!ret)
		*out = (enum mxa_pref)v;
	return ret;
}

MXA_EXPORT const char *mxa_pref_name(enum mxa_pref pref)
{
	return rlookup(pref_names, MXA_ARRAY_SIZE(pref_names), (int)pref);
}

MXA_EXPORT const char *mxa_support_name(enum mxa_support support)
{
	return rlookup(support_names, MXA_ARRAY_SIZE(support_names),
		       (int)support);
}

MXA_EXPORT int mxa_recipe_parse(const char *name, struct mxa_recipe *out)
{
	size_t i;

	if (!name || !out)
		return mxa__err(-EINVAL, "recipe: NULL argument");
	for (i = 0; i < mxa__n_recipes; i++) {
		if (!strcmp(mxa__recipes[i].name, name)) {
			*out = mxa__recipes[i].recipe;
			return 0;
		}
	}
	return mxa__err(-EINVAL, "unknown recipe '%s'", name);
}
MXA_SYMVER(mxa_recipe_parse, "MXACCEL_0.2");

/* A block size of 0 is the scale type's. */
static bool recipe_equal(const struct mxa_recipe *a, const struct mxa_recipe *b)
{
	uint32_t ba = a->block_size ? a->block_size :
		      mxcore_scale_block((enum mxcore_scale_type)a->scale_type);
	uint32_t bb = b->block_size ? b->block_size :
		      mxcore_scale_block((enum mxcore_scale_type)b->scale_type);

	return a->elem == b->elem && a->mode == b->mode &&
	       a->scale_type == b->scale_type && ba == bb;
}

MXA_EXPORT const char *mxa_recipe_name(const struct mxa_recipe *recipe)
{
	size_t i;

	if (!recipe)
		return NULL;
	for (i = 0; i < mxa__n_recipes; i++)
		if (recipe_equal(&mxa__recipes[i].recipe, recipe))
			return mxa__recipes[i].name;
	return NULL;
}
MXA_SYMVER(mxa_recipe_name, "MXACCEL_0.2");

MXA_EXPORT const char *mxa_recipe_at(unsigned int index)
{
	return index < mxa__n_recipes ? mxa__recipes[index].name : NULL;
}
MXA_SYMVER(mxa_recipe_at, "MXACCEL_0.2");
