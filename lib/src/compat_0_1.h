/* SPDX-License-Identifier: MIT */
/*
 * The 0.1 ABI's structs, frozen as libmxaccel 0.1 laid them out, and the
 * functions of compat_0_1.c that take them.
 */
#ifndef MXA_COMPAT_0_1_H
#define MXA_COMPAT_0_1_H

#include <stddef.h>

#include "mxaccel.h"

struct mxa_matrix_0_1 {
	struct mxa_buffer *data;
	size_t data_offset;
	size_t data_stride;
	struct mxa_buffer *scale;
	size_t scale_offset;
	size_t scale_stride;
	enum mxa_elem elem;
	enum mxa_scale_layout scale_layout;
	uint32_t rows;
	uint32_t cols;
};

struct mxa_op_desc_0_1 {
	enum mxa_op op;
	enum mxa_elem a_elem;
	enum mxa_elem b_elem;
	enum mxa_dtype dtype;
	enum mxa_scale_mode mode;
	uint32_t m, n, k;
	uint32_t flags;
};

struct mxa_recipe_0_1 {
	enum mxa_elem elem;
	enum mxa_scale_mode mode;
};

struct mxa_gemm_op_0_1 {
	const struct mxa_matrix_0_1 *a;
	const struct mxa_matrix_0_1 *b;
	const struct mxa_dense *c;
	uint32_t flags;
};

/* 0.1's layout is 0.2's first fields: they must not have moved. */
_Static_assert(offsetof(struct mxa_matrix, cols) ==
	       offsetof(struct mxa_matrix_0_1, cols) &&
	       offsetof(struct mxa_op_desc, flags) ==
	       offsetof(struct mxa_op_desc_0_1, flags) &&
	       offsetof(struct mxa_recipe, mode) ==
	       offsetof(struct mxa_recipe_0_1, mode),
	       "a 0.1 field moved");

/* Bound to NAME@MXACCEL_0.1; no 0.2 program calls these names. */
int mxa_quantize_0_1(struct mxa_device *dev, const struct mxa_dense *src,
		     const struct mxa_matrix_0_1 *dst,
		     enum mxa_scale_mode mode, enum mxa_pref pref);
int mxa_dequantize_0_1(struct mxa_device *dev,
		       const struct mxa_matrix_0_1 *src,
		       const struct mxa_dense *dst, enum mxa_pref pref);
int mxa_gemm_0_1(struct mxa_device *dev, const struct mxa_matrix_0_1 *a,
		 const struct mxa_matrix_0_1 *b, const struct mxa_dense *c,
		 uint32_t flags, enum mxa_pref pref);
int mxa_gemm_async_0_1(struct mxa_device *dev,
		       const struct mxa_matrix_0_1 *a,
		       const struct mxa_matrix_0_1 *b,
		       const struct mxa_dense *c, uint32_t flags,
		       enum mxa_pref pref, struct mxa_fence **fence);
int mxa_gemm_batch_0_1(struct mxa_device *dev,
		       const struct mxa_gemm_op_0_1 *ops, unsigned int count,
		       enum mxa_pref pref, struct mxa_fence **fence);
int mxa_plan_0_1(struct mxa_device *dev, const struct mxa_op_desc_0_1 *desc,
		 enum mxa_pref pref, struct mxa_plan *out);
int mxa_query_0_1(struct mxa_device *dev, const struct mxa_op_desc_0_1 *desc,
		  enum mxa_pref pref, struct mxa_capability *out);
int mxa_recipe_parse_0_1(const char *name, struct mxa_recipe_0_1 *out);
const char *mxa_recipe_name_0_1(const struct mxa_recipe_0_1 *recipe);
const char *mxa_recipe_at_0_1(unsigned int index);

#endif /* MXA_COMPAT_0_1_H */
