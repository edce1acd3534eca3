// SPDX-License-Identifier: MIT
/*
 * NVFP4 rows (UE4M3 scales, blocks of 16, optional per-tensor scale) for
 * cpu-quantize and cpu-dequantize: each block through the MX core's
 * torchao-exact functions (mxcore_nvfp4_quantize_block(),
 * mxcore_nvfp4_dequantize()), so the library, the kernel's software
 * engine and the CUDA plugin share one definition.  Both run the
 * row kernels of the device's instruction-set level (cpu_quant.h: the core
 * itself, or kernels/avx512/nvfp4_avx512.c, bit-exact with it); the scales
 * go to and from the matrix's layout here.
 */
#include <string.h>

#include "cpu.h"
#include "cpu_quant.h"

/* Blocks handed to the row kernel at once when scales need a bounce. */
#define CHUNK_BLOCKS 256u

void cpu_nvfp4_quantize_row(const struct mxa_job *job,
			    const struct cpu_quant *q, uint32_t r)
{
	const struct mxa_matrix *m = &job->a;
	struct mxcore_geom g = mxa__geom(m);
	const uint8_t *in = cpu_dense_row(&job->dense, r);
	bool bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	size_t es = bf16 ? 2 : 4;
	uint8_t *data = (uint8_t *)cpu_data(m) + mxcore_geom_data_offset(&g, r);
	uint8_t *scales = (uint8_t *)cpu_scales(m);
	uint32_t ts = mxa__tensor_scale_bits(m);
	uint32_t blocks = (uint32_t)mxcore_geom_blocks(&g), b, n, i;
	uint8_t tmp[CHUNK_BLOCKS];

	if (m->scale_layout == MXA_LAYOUT_PLAIN) {
		q->nvfp4_quantize_row(in, bf16, m->cols, ts, data,
				      scales + mxcore_geom_scale_index(&g, r, 0));
		return;
	}
	for (b = 0; b < blocks; b += n) {
		n = blocks - b < CHUNK_BLOCKS ? blocks - b : CHUNK_BLOCKS;
		q->nvfp4_quantize_row(in + (size_t)b * MXCORE_NVFP4_BLOCK * es,
				      bf16, n * MXCORE_NVFP4_BLOCK, ts,
				      data + (size_t)b * 8, tmp);
		for (i = 0; i < n; i++)
			scales[mxcore_geom_scale_index(&g, r, b + i)] = tmp[i];
	}
}

void cpu_nvfp4_dequantize_row(const struct mxa_job *job,
			      const struct cpu_quant *q, uint32_t r)
{
	const struct mxa_matrix *m = &job->a;
	struct mxcore_geom g = mxa__geom(m);
	const uint8_t *codes = cpu_data(m) + mxcore_geom_data_offset(&g, r);
	const uint8_t *scales = cpu_scales(m);
	uint8_t *out = cpu_dense_row(&job->dense, r);
	bool bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	size_t es = bf16 ? 2 : 4;
	uint32_t ts = mxa__tensor_scale_bits(m);
	uint32_t blocks = (uint32_t)mxcore_geom_blocks(&g), b, n, i;
	uint8_t tmp[CHUNK_BLOCKS];

	if (m->scale_layout == MXA_LAYOUT_PLAIN) {
		q->nvfp4_dequantize_row(codes,
					scales + mxcore_geom_scale_index(&g, r, 0),
					m->cols, ts, bf16, out);
		return;
	}
	for (b = 0; b < blocks; b += n) {
		n = blocks - b < CHUNK_BLOCKS ? blocks - b : CHUNK_BLOCKS;
		for (i = 0; i < n; i++)
			tmp[i] = scales[mxcore_geom_scale_index(&g, r, b + i)];
		q->nvfp4_dequantize_row(codes + (size_t)b * 8, tmp,
					n * MXCORE_NVFP4_BLOCK, ts, bf16,
					out + (size_t)b * MXCORE_NVFP4_BLOCK * es);
	}
}
