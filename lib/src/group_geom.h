/* SPDX-License-Identifier: MIT */
/*
 * Where one group of a grouped GEMM (mxa_gemm_grouped()) lives inside the
 * operands, stated once: the library's walk (grouped.c, mxa__group_next())
 * and the CUDA plugin's device code (which reads the offsets on the GPU)
 * both cut a group out of an operand with these functions.  Inline and
 * marked MXCORE_GEOM_FN ("__host__ __device__" in the CUDA plugin).
 *
 * A group is a sub-matrix of an operand (a struct mxa_matrix with its
 * offsets moved and rows or cols cut), so that any dense GEMM kernel runs
 * it.  Swizzled scales follow torchao's per-group layouts: each group's
 * [rows x blocks] scales swizzled alone in 128 x 4 tiles, one group after
 * the other, so a group's scales start where the previous groups' padded
 * tiles end (*swz, the running sum of group_swizzled_bytes()).
 */
#ifndef MXA_GROUP_GEOM_H
#define MXA_GROUP_GEOM_H

#include "backend.h"

/* Bytes of one group's swizzled scales: rows x blocks in 128 x 4 tiles. */
static inline MXCORE_GEOM_FN uint64_t mxa__group_swizzled_bytes(uint64_t rows,
								uint64_t blocks)
{
	return mxcore_swizzle_bytes(rows, blocks);
}

/*
 * Rows [start, start + size) of an M-grouped operand (A of 2D_3D); *swz
 * is where this group's swizzled scales start and grows past them.
 */
static inline MXCORE_GEOM_FN void
mxa__group_rows_part(const struct mxa_matrix *m, uint32_t start,
		     uint32_t size, uint64_t *swz, struct mxa_matrix *out)
{
	out->rows = size;
	out->data_offset += start * mxa__data_stride(m);
	out->data_stride = mxa__data_stride(m);
	if (m->scale_layout == MXA_LAYOUT_SWIZZLED) {
		out->scale_offset += *swz;
		*swz += mxa__group_swizzled_bytes(size, m->cols / mxa__block(m));
	} else {
		out->scale_offset += start * mxa__scale_stride(m);
		out->scale_stride = mxa__scale_stride(m);
	}
}

/* Group g of a stack of rows x K matrices (B of 2D_3D). */
static inline MXCORE_GEOM_FN void
mxa__group_stack_part(const struct mxa_matrix *m, uint32_t g,
		      struct mxa_matrix *out)
{
	size_t rows = (size_t)g * m->rows;

	out->data_offset += rows * mxa__data_stride(m);
	out->data_stride = mxa__data_stride(m);
	if (m->scale_layout == MXA_LAYOUT_SWIZZLED) {
		out->scale_offset += g * mxa__group_swizzled_bytes(m->rows,
								   m->cols / mxa__block(m));
	} else {
		out->scale_offset += rows * mxa__scale_stride(m);
		out->scale_stride = mxa__scale_stride(m);
	}
}

/*
 * Columns (K) [start, start + size) of a K-grouped operand (2D_2D); *swz
 * as for mxa__group_rows_part().
 */
static inline MXCORE_GEOM_FN void
mxa__group_cols_part(const struct mxa_matrix *m, uint32_t start,
		     uint32_t size, uint64_t *swz, struct mxa_matrix *out)
{
	uint32_t block = mxa__block(m);

	out->cols = size;
	out->data_offset += mxcore_row_bytes(m->elem, start);
	out->data_stride = mxa__data_stride(m);
	if (m->scale_layout == MXA_LAYOUT_SWIZZLED) {
		out->scale_offset += *swz;
		*swz += mxa__group_swizzled_bytes(m->rows, size / block);
	} else {
		out->scale_offset += start / block;
		out->scale_stride = mxa__scale_stride(m);
	}
}

/*
 * Group g's operands (*a, *b start as copies of the whole ones) and C's
 * rows: [start, end) is the group's extent (rows for 2D_3D, K for
 * 2D_2D), *a_swz / *b_swz where its swizzled scales start (advanced past
 * them).  C of 2D_3D is the whole C's rows [start, end); C of 2D_2D is
 * its own rows x N matrix, rows [g * rows, (g + 1) * rows) of the whole.
 */
static inline MXCORE_GEOM_FN void
mxa__group_operands(enum mxa_group_kind kind, const struct mxa_matrix *wa,
		    const struct mxa_matrix *wb, uint32_t g, uint32_t start,
		    uint32_t end, uint64_t *a_swz, uint64_t *b_swz,
		    struct mxa_matrix *a, struct mxa_matrix *b,
		    uint64_t *c_row0, uint32_t *c_rows)
{
	uint32_t size = end - start;

	if (kind == MXA_GROUP_2D_3D) {
		mxa__group_rows_part(wa, start, size, a_swz, a);
		mxa__group_stack_part(wb, g, b);
		*c_row0 = start;
		*c_rows = size;
	} else {
		mxa__group_cols_part(wa, start, size, a_swz, a);
		mxa__group_cols_part(wb, start, size, b_swz, b);
		*c_row0 = (uint64_t)g * wa->rows;
		*c_rows = wa->rows;
	}
}

#endif /* MXA_GROUP_GEOM_H */
