// SPDX-License-Identifier: MIT
/*
 * NVFP4 rows (UE4M3 scales, blocks of 16, optional per-tensor scale) for
 * cpu-quantize and cpu-dequantize: each block through the MX core's
 * torchao-exact functions (mxcore_nvfp4_quantize_block(),
 * mxcore_nvfp4_dequantize()), so the library, the kernel's software
 * engine and the CUDA plugin share one definition.  Scalar: a vector
 * version is future work (Documentation/formats.rst).
 */
#include <string.h>

#include "cpu.h"

void cpu_nvfp4_quantize_row(const struct mxa_job *job, uint32_t r)
{
	const struct mxa_matrix *m = &job->a;
	struct mxcore_geom g = mxa__geom(m);
	const uint8_t *in = cpu_dense_row(&job->dense, r);
	bool bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	uint8_t *data = (uint8_t *)cpu_data(m) + mxcore_geom_data_offset(&g, r);
	uint8_t *scales = (uint8_t *)cpu_scales(m);
	uint32_t ts = mxa__tensor_scale_bits(m), x[MXCORE_NVFP4_BLOCK];
	uint64_t b, blocks = mxcore_geom_blocks(&g);
	unsigned int i;

	for (b = 0; b < blocks; b++) {
		for (i = 0; i < MXCORE_NVFP4_BLOCK; i++)
			x[i] = mxa__dense_bits(in, bf16,
					  (uint32_t)(b * MXCORE_NVFP4_BLOCK + i));
		scales[mxcore_geom_scale_index(&g, r, b)] =
			mxcore_nvfp4_quantize_block(x, ts, data + b * 8);
	}
}

void cpu_nvfp4_dequantize_row(const struct mxa_job *job, uint32_t r)
{
	const struct mxa_matrix *m = &job->a;
	struct mxcore_geom g = mxa__geom(m);
	const uint8_t *codes = cpu_data(m) + mxcore_geom_data_offset(&g, r);
	const uint8_t *scales = cpu_scales(m);
	uint8_t *out = cpu_dense_row(&job->dense, r);
	bool bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	uint32_t ts = mxa__tensor_scale_bits(m), i;

	for (i = 0; i < m->cols; i++) {
		uint8_t s = scales[mxcore_geom_scale_index(&g, r,
							   i / MXCORE_NVFP4_BLOCK)];
		uint8_t c = (codes[i / 2] >> ((i & 1) * 4)) & 0xf;
		uint32_t v = mxcore_nvfp4_dequantize(c, s, ts,
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
