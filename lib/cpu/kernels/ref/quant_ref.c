// SPDX-License-Identifier: MIT
/*
 * The scalar row kernels: the freestanding core, block by block.  This is
 * the definition the vector kernels must reproduce bit for bit.
 */
#include <string.h>

#include "../../cpu_quant.h"

static void quantize_row(enum mxcore_elem elem, enum mxcore_mode mode,
			 const void *src, bool bf16, uint32_t cols,
			 uint8_t *codes, uint8_t *scales)
{
	size_t blk_bytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	uint32_t x[MXCORE_BLOCK], b;

	for (b = 0; b < cols / MXCORE_BLOCK; b++) {
		cpu_quant_gather(src, bf16, (size_t)b * MXCORE_BLOCK,
				 MXCORE_BLOCK, x);
		scales[b] = mxcore_quantize_block(elem, mode, x,
						  codes + b * blk_bytes);
	}
}

static void dequantize_row(enum mxcore_elem elem, const uint8_t *codes,
			   const uint8_t *scales, uint32_t cols, bool bf16,
			   void *dst)
{
	enum mxcore_dtype dt = bf16 ? MXCORE_BF16 : MXCORE_F32;
	uint8_t *out = dst;
	uint32_t i;

	for (i = 0; i < cols; i++) {
		uint32_t v = mxcore_dequantize(elem,
					       mxcore_get_code(elem, codes, i),
					       scales[i / MXCORE_BLOCK], dt);

		if (bf16) {
			uint16_t h = (uint16_t)v;

			memcpy(out + 2 * (size_t)i, &h, 2);
		} else {
			memcpy(out + 4 * (size_t)i, &v, 4);
		}
	}
}

const struct cpu_quant cpu_quant_ref = {
	.name = "scalar",
	.quantize_row = quantize_row,
	.dequantize_row = dequantize_row,
	.nvfp4_quantize_row = cpu_nvfp4_quantize_row_ref,
	.nvfp4_dequantize_row = cpu_nvfp4_dequantize_row_ref,
};
