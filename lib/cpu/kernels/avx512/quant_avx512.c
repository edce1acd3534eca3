// SPDX-License-Identifier: MIT
/*
 * Quantization rows for AVX-512: kernels/quant_body.h compiled with
 * AVX-512 F/BW/VL/DQ, 16 lanes (one zmm).
 */
#if defined(__x86_64__)
#define QV_ISA "avx512f,avx512bw,avx512vl,avx512dq"
#define QV_LANES 16
#include "../quant_body.h"

const struct cpu_quant cpu_quant_avx512 = {
	.name = "avx512",
	.quantize_row = qv_quantize_row,
	.dequantize_row = qv_dequantize_row,
	.nvfp4_quantize_row = cpu_nvfp4_quantize_row_avx512,
	.nvfp4_dequantize_row = cpu_nvfp4_dequantize_row_avx512,
};
#endif
