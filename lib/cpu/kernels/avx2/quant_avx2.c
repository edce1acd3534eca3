// SPDX-License-Identifier: MIT
/*
 * Quantization rows for AVX2: kernels/quant_body.h compiled with AVX2
 * 8 lanes (one ymm).
 */
#if defined(__x86_64__)
#define QV_ISA "avx2"
#define QV_LANES 8
#include "../quant_body.h"

const struct cpu_quant cpu_quant_avx2 = {
	.name = "avx2",
	.quantize_row = qv_quantize_row,
	.dequantize_row = qv_dequantize_row,
	.nvfp4_quantize_row = cpu_nvfp4_quantize_row_ref,
	.nvfp4_dequantize_row = cpu_nvfp4_dequantize_row_ref,
};
#endif
