// SPDX-License-Identifier: MIT
/*
 * The 0.1 ABI (node MXACCEL_0.1), for programs built against it.
 *
 * 0.2 grew struct mxa_matrix, struct mxa_op_desc and struct mxa_recipe
 * (scale types, block sizes, the per-tensor scale).  A 0.1 program passes
 * the smaller structs below, frozen here as 0.1 laid them out; each
 * function converts them (every added field takes its old meaning: E8M0
 * scales, blocks of 32, no tensor scale) and calls the 0.2 function.  A
 * 0.1 recipe cannot say UE4M3, so the recipe functions show 0.1 callers
 * only the E8M0 recipes.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compat_0_1.h"

/* NULL stays NULL, so that 0.2 reports it as 0.1 did. */
static const struct mxa_matrix *matrix(const struct mxa_matrix_0_1 *m,
				       struct mxa_matrix *out)
{
	if (!m)
		return NULL;
	memset(out, 0, sizeof(*out));
	memcpy(out, m, sizeof(*m));
	return out;
}

static const struct mxa_op_desc *desc(const struct mxa_op_desc_0_1 *d,
				      struct mxa_op_desc *out)
{
	if (!d)
		return NULL;
	memset(out, 0, sizeof(*out));
	memcpy(out, d, sizeof(*d));
	return out;
}

MXA_EXPORT int mxa_quantize_0_1(struct mxa_device *dev,
				const struct mxa_dense *src,
				const struct mxa_matrix_0_1 *dst,
				enum mxa_scale_mode mode, enum mxa_pref pref)
{
	struct mxa_matrix m;

	if (mode == MXA_SCALE_NVFP4)
		return mxa__err(-EINVAL, "quantize: unknown scale mode %d",
				(int)mode);
	return mxa_quantize(dev, src, matrix(dst, &m), mode, pref);
}
MXA_SYMVER_COMPAT(mxa_quantize_0_1, mxa_quantize, "MXACCEL_0.1");

MXA_EXPORT int mxa_dequantize_0_1(struct mxa_device *dev,
				  const struct mxa_matrix_0_1 *src,
				  const struct mxa_dense *dst,
				  enum mxa_pref pref)
{
	struct mxa_matrix m;

	return mxa_dequantize(dev, matrix(src, &m), dst, pref);
}
MXA_SYMVER_COMPAT(mxa_dequantize_0_1, mxa_dequantize, "MXACCEL_0.1");

MXA_EXPORT int mxa_gemm_0_1(struct mxa_device *dev,
			    const struct mxa_matrix_0_1 *a,
			    const struct mxa_matrix_0_1 *b,
			    const struct mxa_dense *c, uint32_t flags,
			    enum mxa_pref pref)
{
	struct mxa_matrix ma, mb;

	return mxa_gemm(dev, matrix(a, &ma), matrix(b, &mb), c, flags, pref);
}
MXA_SYMVER_COMPAT(mxa_gemm_0_1, mxa_gemm, "MXACCEL_0.1");

MXA_EXPORT int mxa_gemm_async_0_1(struct mxa_device *dev,
				  const struct mxa_matrix_0_1 *a,
				  const struct mxa_matrix_0_1 *b,
				  const struct mxa_dense *c, uint32_t flags,
				  enum mxa_pref pref,
				  struct mxa_fence **fence)
{
	struct mxa_matrix ma, mb;

	return mxa_gemm_async(dev, matrix(a, &ma), matrix(b, &mb), c, flags,
			      pref, fence);
}
MXA_SYMVER_COMPAT(mxa_gemm_async_0_1, mxa_gemm_async, "MXACCEL_0.1");

MXA_EXPORT int mxa_gemm_batch_0_1(struct mxa_device *dev,
				  const struct mxa_gemm_op_0_1 *ops,
				  unsigned int count, enum mxa_pref pref,
				  struct mxa_fence **fence)
{
	struct mxa_gemm_op *nops;
	struct mxa_matrix *m;
	unsigned int i;
	int ret;

	if (fence)
		*fence = NULL;
	/* 0.2 reports these; the arrays below need a sane count. */
	if (!ops || !count || count > MXA_BATCH_MAX) {
		static const struct mxa_gemm_op none;

		return mxa_gemm_batch(dev, ops ? &none : NULL, count, pref,
				      fence);
	}
	nops = calloc(count, sizeof(*nops));
	m = calloc(2 * (size_t)count, sizeof(*m));
	if (!nops || !m) {
		free(nops);
		free(m);
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		nops[i] = (struct mxa_gemm_op){
			.a = matrix(ops[i].a, &m[2 * i]),
			.b = matrix(ops[i].b, &m[2 * i + 1]),
			.c = ops[i].c, .flags = ops[i].flags,
		};
	}
	/* The fence refers to copies of the descriptors, never to these. */
	ret = mxa_gemm_batch(dev, nops, count, pref, fence);
	free(nops);
	free(m);
	return ret;
}
MXA_SYMVER_COMPAT(mxa_gemm_batch_0_1, mxa_gemm_batch, "MXACCEL_0.1");

MXA_EXPORT int mxa_plan_0_1(struct mxa_device *dev,
			    const struct mxa_op_desc_0_1 *d,
			    enum mxa_pref pref, struct mxa_plan *out)
{
	struct mxa_op_desc nd;

	return mxa_plan(dev, desc(d, &nd), pref, out);
}
MXA_SYMVER_COMPAT(mxa_plan_0_1, mxa_plan, "MXACCEL_0.1");

MXA_EXPORT int mxa_query_0_1(struct mxa_device *dev,
			     const struct mxa_op_desc_0_1 *d,
			     enum mxa_pref pref, struct mxa_capability *out)
{
	struct mxa_op_desc nd;

	return mxa_query(dev, desc(d, &nd), pref, out);
}
MXA_SYMVER_COMPAT(mxa_query_0_1, mxa_query, "MXACCEL_0.1");

/* The index-th E8M0 recipe, or NULL. */
static const struct mxa_recipe_entry *mx_recipe_at(unsigned int index)
{
	unsigned int i;

	for (i = 0; i < mxa__n_recipes; i++)
		if (mxa__recipes[i].recipe.scale_type == MXA_SCALE_E8M0 &&
		    !index--)
			return &mxa__recipes[i];
	return NULL;
}

MXA_EXPORT int mxa_recipe_parse_0_1(const char *name,
				    struct mxa_recipe_0_1 *out)
{
	struct mxa_recipe r;
	int ret = mxa_recipe_parse(name, &r);

	if (ret)
		return ret;
	if (r.scale_type != MXA_SCALE_E8M0)
		return mxa__err(-EINVAL,
				"recipe '%s' has %s scales, which a 0.1 struct mxa_recipe cannot hold",
				name, mxa_scale_type_name(r.scale_type));
	out->elem = r.elem;
	out->mode = r.mode;
	return 0;
}
MXA_SYMVER_COMPAT(mxa_recipe_parse_0_1, mxa_recipe_parse, "MXACCEL_0.1");

MXA_EXPORT const char *mxa_recipe_name_0_1(const struct mxa_recipe_0_1 *recipe)
{
	struct mxa_recipe r = { 0 };

	if (!recipe)
		return NULL;
	r.elem = recipe->elem;
	r.mode = recipe->mode;
	return mxa_recipe_name(&r);
}
MXA_SYMVER_COMPAT(mxa_recipe_name_0_1, mxa_recipe_name, "MXACCEL_0.1");

MXA_EXPORT const char *mxa_recipe_at_0_1(unsigned int index)
{
	const struct mxa_recipe_entry *e = mx_recipe_at(index);

	return e ? e->name : NULL;
}
MXA_SYMVER_COMPAT(mxa_recipe_at_0_1, mxa_recipe_at, "MXACCEL_0.1");
