// SPDX-License-Identifier: MIT
/*
 * Sizes of block-scaled storage: element rows and the two scale layouts
 * (the arithmetic is the core's, mxcore_geom.h).
 */
#include "backend.h"
#include "mxcore_geom.h"

MXA_EXPORT int mxa_data_row_bytes(enum mxa_elem elem, uint32_t cols,
				  size_t *out)
{
	if (!out)
		return mxa__err(-EINVAL, "data_row_bytes: out is NULL");
	if (!mxcore_elem_valid(elem))
		return mxa__err(-EINVAL, "data_row_bytes: unknown element type %d",
				(int)elem);
	if (cols % MXA_BLOCK_SIZE)
		return mxa__err(-EINVAL,
				"data_row_bytes: cols %u is not a multiple of 32",
				cols);
	*out = mxcore_row_bytes((enum mxcore_elem)elem, cols);
	return 0;
}

MXA_EXPORT int mxa_scale_bytes(enum mxa_scale_layout layout, uint32_t rows,
			       uint32_t cols, size_t *out)
{
	if (!out)
		return mxa__err(-EINVAL, "scale_bytes: out is NULL");
	if (cols % MXA_BLOCK_SIZE)
		return mxa__err(-EINVAL,
				"scale_bytes: cols %u is not a multiple of 32",
				cols);
	switch (layout) {
	case MXA_LAYOUT_PLAIN:
	case MXA_LAYOUT_SWIZZLED: {
		struct mxcore_geom g = {
			.rows = rows, .cols = cols, .elem = MXCORE_E4M3,
			.layout = (uint32_t)layout,
		};
		uint64_t span = 0;

		if (!rows) {
			*out = 0;
			return 0;
		}
		mxcore_geom_scale_span(&g, &span);
		*out = (size_t)span;
		return 0;
	}
	}
	return mxa__err(-EINVAL, "scale_bytes: unknown layout %d", (int)layout);
}

MXA_EXPORT size_t mxa_swizzle_index(uint32_t rows, uint32_t blocks,
				    uint32_t row, uint32_t block)
{
	return mxcore_swizzle_index(rows, blocks, row, block);
}

MXA_EXPORT int mxa_matrix_bytes(const struct mxa_matrix *m, size_t *data_bytes,
				size_t *scale_bytes)
{
	struct mxcore_geom g;
	uint64_t data = 0, scale = 0;
	int ret;

	if (!m)
		return mxa__err(-EINVAL, "matrix_bytes: matrix is NULL");
	ret = mxa__matrix_shape_check("matrix_bytes", m);
	if (ret)
		return ret;
	g = mxa__geom(m);
	if (!mxcore_geom_data_span(&g, &data) ||
	    !mxcore_geom_scale_span(&g, &scale) || data > SIZE_MAX ||
	    scale > SIZE_MAX)
		return mxa__err(-EOVERFLOW,
				"matrix_bytes: %ux%u extents overflow size_t",
				m->rows, m->cols);
	if (data_bytes)
		*data_bytes = (size_t)data;
	if (scale_bytes)
		*scale_bytes = (size_t)scale;
	return 0;
}
