// SPDX-License-Identifier: MIT
/*
 * Quantize and dequantize: rows spread over the thread pool, each row run
 * by the row kernels of the device's instruction-set level (cpu_quant.h),
 * scales moved between the kernels' contiguous per-row order and the
 * matrix's layout here.
 */
#include <string.h>

#include "cpu.h"
#include "cpu_fpenv.h"
#include "cpu_isa.h"

/* Blocks handed to a row kernel at once when scales need a bounce. */
#define CHUNK_BLOCKS 256u

struct rows_job {
	const struct mxa_job *job;
	const struct cpu_quant *q;
	uint32_t chunk;			/* rows per task */
};

/* Rows per task: enough work per task, enough tasks per thread. */
static unsigned int row_tasks(uint32_t rows, uint32_t *chunk)
{
	*chunk = rows < 64 ? 1 : rows / 64;
	return (rows + *chunk - 1) / *chunk;
}

static size_t dense_elem(const struct mxa_dense *d)
{
	return d->dtype == MXA_DTYPE_BF16 ? 2 : 4;
}

static void quantize_rows(void *arg, unsigned int task, unsigned int worker)
{
	const struct rows_job *rj = arg;
	const struct mxa_matrix *m = &rj->job->a;
	const struct mxa_dense *src = &rj->job->dense;
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	enum mxcore_mode mode = (enum mxcore_mode)rj->job->mode;
	bool bf16 = src->dtype == MXA_DTYPE_BF16, plain;
	size_t blk_bytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	uint32_t blocks = m->cols / MXCORE_BLOCK, r, b, n, i;
	uint32_t end = (task + 1) * rj->chunk;
	unsigned int saved = cpu_fpenv_enter();
	uint8_t tmp[CHUNK_BLOCKS];

	(void)worker;
	plain = m->scale_layout == MXA_LAYOUT_PLAIN;
	if (end > m->rows)
		end = m->rows;
	for (r = task * rj->chunk; r < end; r++) {
		const uint8_t *in = cpu_dense_row(src, r);

		if (m->scale_type == MXA_SCALE_UE4M3) {
			cpu_nvfp4_quantize_row(rj->job, rj->q, r);
			continue;
		}
		uint8_t *out = (uint8_t *)cpu_data(m) +
			       (size_t)r * mxa__data_stride(m);
		uint8_t *scales = (uint8_t *)cpu_scales(m);

		if (plain) {
			rj->q->quantize_row(elem, mode, in, bf16, m->cols, out,
					    scales + mxa__scale_index(m, r, 0));
			continue;
		}
		for (b = 0; b < blocks; b += n) {
			n = blocks - b < CHUNK_BLOCKS ? blocks - b : CHUNK_BLOCKS;
			rj->q->quantize_row(elem, mode,
					    in + (size_t)b * MXCORE_BLOCK *
						 dense_elem(src),
					    bf16, n * MXCORE_BLOCK,
					    out + b * blk_bytes, tmp);
			for (i = 0; i < n; i++)
				scales[mxa__scale_index(m, r, b + i)] = tmp[i];
		}
	}
	cpu_fpenv_leave(saved);
}

int cpu_quantize(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_device *cd = cpu_dev(dev);
	struct rows_job rj = { .job = job, .q = cd->isa->quant };
	unsigned int n = row_tasks(job->a.rows, &rj.chunk);

	/* Padding of the swizzled layout is zero, as torchao's to_blocked. */
	if (job->a.scale_layout == MXA_LAYOUT_SWIZZLED) {
		struct mxcore_geom g = mxa__geom(&job->a);
		uint64_t span = 0;

		mxcore_geom_scale_span(&g, &span);
		memset((uint8_t *)cpu_scales(&job->a), 0, (size_t)span);
	}
	cpu_parallel(cd->pool, n, quantize_rows, &rj);
	return 0;
}

static void dequantize_rows(void *arg, unsigned int task,
			    unsigned int worker)
{
	const struct rows_job *rj = arg;
	const struct mxa_matrix *m = &rj->job->a;
	const struct mxa_dense *dst = &rj->job->dense;
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	bool bf16 = dst->dtype == MXA_DTYPE_BF16, plain;
	size_t blk_bytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	uint32_t blocks = m->cols / MXCORE_BLOCK, r, b, n, i;
	uint32_t end = (task + 1) * rj->chunk;
	unsigned int saved = cpu_fpenv_enter();
	uint8_t tmp[CHUNK_BLOCKS];

	(void)worker;
	plain = m->scale_layout == MXA_LAYOUT_PLAIN;
	if (end > m->rows)
		end = m->rows;
	for (r = task * rj->chunk; r < end; r++) {
		const uint8_t *codes = cpu_data(m) +
				       (size_t)r * mxa__data_stride(m);
		uint8_t *out = cpu_dense_row(dst, r);

		if (m->scale_type == MXA_SCALE_UE4M3) {
			cpu_nvfp4_dequantize_row(rj->job, rj->q, r);
			continue;
		}
		if (plain) {
			rj->q->dequantize_row(elem, codes,
					      cpu_scales(m) +
					      mxa__scale_index(m, r, 0),
					      m->cols, bf16, out);
			continue;
		}
		for (b = 0; b < blocks; b += n) {
			n = blocks - b < CHUNK_BLOCKS ? blocks - b : CHUNK_BLOCKS;
			for (i = 0; i < n; i++)
				tmp[i] = cpu_scales(m)[mxa__scale_index(m, r,
								       b + i)];
			rj->q->dequantize_row(elem, codes + b * blk_bytes, tmp,
					      n * MXCORE_BLOCK, bf16,
					      out + (size_t)b * MXCORE_BLOCK *
						    dense_elem(dst));
		}
	}
	cpu_fpenv_leave(saved);
}

int cpu_dequantize(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_device *cd = cpu_dev(dev);
	struct rows_job rj = { .job = job, .q = cd->isa->quant };
	unsigned int n = row_tasks(job->a.rows, &rj.chunk);

	cpu_parallel(cd->pool, n, dequantize_rows, &rj);
	return 0;
}
