// SPDX-License-Identifier: MIT
/*
 * The scalar NVFP4 rows: the freestanding core's torchao-exact
 * mxcore_nvfp4_quantize_block() block by block, mxcore_nvfp4_dequantize()
 * element by element.  The definition the vector rows reproduce, and
 * their fallback for the blocks they do not take
 * (kernels/avx512/nvfp4_avx512.c).
 */
#include <string.h>

#include "../../cpu_quant.h"

void cpu_nvfp4_quantize_row_ref(const void *src, bool bf16, uint32_t cols,
				uint32_t tensor_scale, uint8_t *codes,
				uint8_t *scales)
{
	uint32_t x[MXCORE_NVFP4_BLOCK], b;

	for (b = 0; b < cols / MXCORE_NVFP4_BLOCK; b++) {
		cpu_quant_gather(src, bf16, (size_t)b * MXCORE_NVFP4_BLOCK,
				 MXCORE_NVFP4_BLOCK, x);
		scales[b] = mxcore_nvfp4_quantize_block(x, tensor_scale,
							codes + b * 8);
	}
}

void cpu_nvfp4_dequantize_row_ref(const uint8_t *codes,
				  const uint8_t *scales, uint32_t cols,
				  uint32_t tensor_scale, bool bf16, void *dst)
{
	uint8_t *out = dst;
	uint32_t i;

	for (i = 0; i < cols; i++) {
		uint8_t c = (codes[i / 2] >> ((i & 1) * 4)) & 0xf;
		uint32_t v = mxcore_nvfp4_dequantize(c,
						     scales[i / MXCORE_NVFP4_BLOCK],
						     tensor_scale,
						     bf16 ? MXCORE_BF16 :
						     MXCORE_F32);

		if (bf16) {
			uint16_t h = (uint16_t)v;

			memcpy(out + 2 * (size_t)i, &h, 2);
		} else {
			memcpy(out + 4 * (size_t)i, &v, 4);
		}
	}
}
