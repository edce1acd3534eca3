// SPDX-License-Identifier: MIT
/*
 * Names of element types, scale modes, layouts, dtypes, preferences and
 * recipes: the strings users, the CLI and environment variables speak.
 */
#include <string.h>

#include "internal.h"

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

struct recipe_entry {
	const char *name;
	struct mxa_recipe recipe;
};

/* Device-agnostic recipe names; the first name of a pair is canonical. */
static const struct recipe_entry recipes[] = {
	{ "mxfp8", { MXA_ELEM_E4M3, MXA_SCALE_FLOOR } },
	{ "mxfp8_rceil", { MXA_ELEM_E4M3, MXA_SCALE_RCEIL } },
	{ "mxfp8_e5m2", { MXA_ELEM_E5M2, MXA_SCALE_FLOOR } },
	{ "mxfp8_e5m2_rceil", { MXA_ELEM_E5M2, MXA_SCALE_RCEIL } },
	{ "mxfp6_e2m3", { MXA_ELEM_E2M3, MXA_SCALE_FLOOR } },
	{ "mxfp6_e2m3_rceil", { MXA_ELEM_E2M3, MXA_SCALE_RCEIL } },
	{ "mxfp6_e3m2", { MXA_ELEM_E3M2, MXA_SCALE_FLOOR } },
	{ "mxfp6_e3m2_rceil", { MXA_ELEM_E3M2, MXA_SCALE_RCEIL } },
	{ "mxfp4", { MXA_ELEM_E2M1, MXA_SCALE_FLOOR } },
	{ "mxfp4_rceil", { MXA_ELEM_E2M1, MXA_SCALE_RCEIL } },
};

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

/* One parse/print pair per enum, all thin wrappers over the tables. */
#define NAME_FUNCS(type, table, parse, print)                            \
	MXA_EXPORT int parse(const char *name, enum type *out)           \
	{                                                                \
		int v, ret = lookup(table, MXA_ARRAY_SIZE(table), name, &v); \
		if (ret)                                                 \
			return mxa__err(ret, "unknown %s name '%s'",     \
					#type + 4, name ? name : "(null)"); \
		*out = (enum type)v;                                     \
		return 0;                                                \
	}                                                                \
	MXA_EXPORT const char *print(enum type value)                    \
	{                                                                \
		return rlookup(table, MXA_ARRAY_SIZE(table), (int)value); \
	}

NAME_FUNCS(mxa_elem, elem_names, mxa_elem_parse, mxa_elem_name)
NAME_FUNCS(mxa_scale_mode, mode_names, mxa_scale_mode_parse,
	   mxa_scale_mode_name)
NAME_FUNCS(mxa_scale_layout, layout_names, mxa_layout_parse, mxa_layout_name)
NAME_FUNCS(mxa_dtype, dtype_names, mxa_dtype_parse, mxa_dtype_name)
NAME_FUNCS(mxa_pref, pref_names, mxa_pref_parse, mxa_pref_name)

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
	for (i = 0; i < MXA_ARRAY_SIZE(recipes); i++) {
		if (!strcmp(recipes[i].name, name)) {
			*out = recipes[i].recipe;
			return 0;
		}
	}
	return mxa__err(-EINVAL, "unknown recipe '%s'", name);
}

MXA_EXPORT const char *mxa_recipe_name(const struct mxa_recipe *recipe)
{
	size_t i;

	if (!recipe)
		return NULL;
	for (i = 0; i < MXA_ARRAY_SIZE(recipes); i++)
		if (recipes[i].recipe.elem == recipe->elem &&
		    recipes[i].recipe.mode == recipe->mode)
			return recipes[i].name;
	return NULL;
}

MXA_EXPORT const char *mxa_recipe_at(unsigned int index)
{
	return index < MXA_ARRAY_SIZE(recipes) ? recipes[index].name : NULL;
}
