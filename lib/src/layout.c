// SPDX-License-Identifier: MIT
/*
 * Sizes of MX storage: element rows and the two scale layouts.
 */
#include "backend.h"
#include "mxcore.h"

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
		*out = (size_t)rows * (cols / MXA_BLOCK_SIZE);
		return 0;
	case MXA_LAYOUT_SWIZZLED:
		*out = mxcore_swizzle_bytes(rows, cols / MXA_BLOCK_SIZE);
		return 0;
	}
	return mxa__err(-EINVAL, "scale_bytes: unknown layout %d", (int)layout);
}

MXA_EXPORT size_t mxa_swizzle_index(uint32_t rows, uint32_t blocks,
				    uint32_t row, uint32_t block)
{
	return mxcore_swizzle_index(rows, blocks, row, block);
}
