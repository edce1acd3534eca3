/* SPDX-License-Identifier: MIT */
/*
 * Row kernels for quantization and dequantization.  The scalar ones
 * (kernels/ref) call the freestanding core block by block; the vector
 * ones (kernels/quant_body.h, compiled per ISA) must produce the same
 * bits for every input, NaN, Inf and subnormals included.
 */
#ifndef MXA_CPU_QUANT_H
#define MXA_CPU_QUANT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mxcore_geom.h"

/*
 * The n values of one block at element index `at` of a source row (fp32,
 * or bf16 when bf16) as fp32 bits in x: bf16 widened exactly (<< 16), as
 * torchao widens it before quantizing.  Shared by the scalar MX and
 * NVFP4 rows (kernels/ref), which hand x to the core.
 */
static inline void cpu_quant_gather(const void *src, bool bf16, size_t at,
				    unsigned int n, uint32_t *x)
{
	const uint8_t *in = (const uint8_t *)src;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (bf16) {
			uint16_t h;

			memcpy(&h, in + 2 * (at + i), 2);
			x[i] = (uint32_t)h << 16;
		} else {
			memcpy(&x[i], in + 4 * (at + i), 4);
		}
	}
}

struct cpu_quant {
	const char *name;
	/*
	 * cols (a multiple of 32) fp32 values, or bf16 when bf16, at src ->
	 * codes (mxcore_row_bytes() bytes) and one E8M0 scale per block.
	 */
	void (*quantize_row)(enum mxcore_elem elem, enum mxcore_mode mode,
			     const void *src, bool bf16, uint32_t cols,
			     uint8_t *codes, uint8_t *scales);
	/* The inverse: cols values of dtype bf16 or fp32 to dst. */
	void (*dequantize_row)(enum mxcore_elem elem, const uint8_t *codes,
			       const uint8_t *scales, uint32_t cols, bool bf16,
			       void *dst);
	/*
	 * NVFP4: cols (a multiple of 16) fp32 or bf16 values at src ->
	 * cols / 2 bytes of e2m1 codes and one UE4M3 scale per 16;
	 * tensor_scale the fp32 bits of the per-tensor scale, 0 for none.
	 */
	void (*nvfp4_quantize_row)(const void *src, bool bf16, uint32_t cols,
				   uint32_t tensor_scale, uint8_t *codes,
				   uint8_t *scales);
	/* The inverse: cols values of dtype bf16 or fp32 to dst. */
	void (*nvfp4_dequantize_row)(const uint8_t *codes,
				     const uint8_t *scales, uint32_t cols,
				     uint32_t tensor_scale, bool bf16,
				     void *dst);
};

void cpu_nvfp4_quantize_row_ref(const void *src, bool bf16, uint32_t cols,
				uint32_t tensor_scale, uint8_t *codes,
				uint8_t *scales);
void cpu_nvfp4_dequantize_row_ref(const uint8_t *codes,
				  const uint8_t *scales, uint32_t cols,
				  uint32_t tensor_scale, bool bf16, void *dst);
void cpu_nvfp4_dequantize_row_avx512(const uint8_t *codes,
				     const uint8_t *scales, uint32_t cols,
				     uint32_t tensor_scale, bool bf16,
				     void *dst);
void cpu_nvfp4_quantize_row_avx512(const void *src, bool bf16,
				   uint32_t cols, uint32_t tensor_scale,
				   uint8_t *codes, uint8_t *scales);

extern const struct cpu_quant cpu_quant_ref;
extern const struct cpu_quant cpu_quant_avx2;
extern const struct cpu_quant cpu_quant_avx512;

#endif /* MXA_CPU_QUANT_H */
