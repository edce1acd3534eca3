// SPDX-License-Identifier: MIT
/*
 * The scalar NVFP4 row: the freestanding core's torchao-exact
 * mxcore_nvfp4_quantize_block(), block by block.  The definition the
 * vector rows reproduce, and their fallback for the blocks they do not
 * take (kernels/avx512/nvfp4_avx512.c).
 */
#include <string.h>

#include "../../cpu_quant.h"

void cpu_nvfp4_quantize_row_ref(const void *src, bool bf16, uint32_t cols,
				uint32_t tensor_scale, uint8_t *codes,
				uint8_t *scales)
{
	const uint8_t *in = src;
	uint32_t x[MXCORE_NVFP4_BLOCK], b, i;

	for (b = 0; b < cols / MXCORE_NVFP4_BLOCK; b++) {
		for (i = 0; i < MXCORE_NVFP4_BLOCK; i++) {
			size_t at = (size_t)b * MXCORE_NVFP4_BLOCK + i;

			if (bf16) {
				uint16_t h;

				memcpy(&h, in + 2 * at, 2);
				x[i] = (uint32_t)h << 16;
			} else {
				memcpy(&x[i], in + 4 * at, 4);
			}
		}
		scales[b] = mxcore_nvfp4_quantize_block(x, tensor_scale,
							codes + b * 8);
	}
}
