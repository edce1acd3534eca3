// SPDX-License-Identifier: MIT
/*
 * The exact reference GEMM (Documentation/numerics.rst), built directly on
 * the freestanding core: integer block dots into the 640-bit accumulator,
 * one rounding per output.  Rows are spread over the thread pool.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Rows per task: enough work per task, enough tasks per thread. */
static unsigned int row_tasks(uint32_t rows, uint32_t *chunk)
{
	*chunk = rows < 64 ? 1 : rows / 64;
	return (rows + *chunk - 1) / *chunk;
}

static void load_f32(const uint8_t *row, enum mxa_dtype dtype, uint32_t i,
		     uint32_t *out)
{
	if (dtype == MXA_DTYPE_BF16) {
		uint16_t h;

		memcpy(&h, row + 2 * (size_t)i, 2);
		*out = (uint32_t)h << 16;
	} else {
		memcpy(out, row + 4 * (size_t)i, 4);
	}
}

static void store(uint8_t *row, enum mxa_dtype dtype, uint32_t i,
		  uint32_t bits)
{
	if (dtype == MXA_DTYPE_BF16) {
		uint16_t h = (uint16_t)bits;

		memcpy(row + 2 * (size_t)i, &h, 2);
	} else {
		memcpy(row + 4 * (size_t)i, &bits, 4);
	}
}

/*
 * A matrix decoded once for the exact GEMM: every element as its integer
 * k (value k * 2^exp of its block), and per block the exponent and whether
 * the block needs the special-value path (Inf/NaN code or NaN scale).
 */
struct decoded {
	int64_t *k;
	int16_t *exp;
	uint8_t *special;
};

static void decode_row(const struct mxa_matrix *m, uint32_t row,
		       int64_t *k, int16_t *exp, uint8_t *special)
{
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	size_t bbytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	const uint8_t *codes = cpu_data(m) + (size_t)row * mxa__data_stride(m);
	uint32_t b;

	for (b = 0; b < m->cols / MXCORE_BLOCK; b++) {
		uint8_t s = cpu_scales(m)[mxa__scale_index(m, row, b)];

		special[b] = mxcore_decode_block(elem, codes + b * bbytes,
						 k + (size_t)b * MXCORE_BLOCK) ||
			     s == MXCORE_SCALE_NAN;
		exp[b] = (int16_t)(mxcore_format(elem)->k_exp + s - 127);
	}
}

static int decoded_alloc(struct decoded *d, size_t rows, size_t cols)
{
	size_t blocks = rows * (cols / MXCORE_BLOCK);

	d->k = malloc(rows * cols * sizeof(*d->k));
	d->exp = malloc(blocks * sizeof(*d->exp));
	d->special = malloc(blocks);
	if (!d->k || !d->exp || !d->special) {
		free(d->k);
		free(d->exp);
		free(d->special);
		return -ENOMEM;
	}
	return 0;
}

static void decoded_free(struct decoded *d)
{
	free(d->k);
	free(d->exp);
	free(d->special);
}

struct exact_gemm_job {
	const struct mxa_job *job;
	uint32_t chunk;
	struct decoded b;		/* all of B */
	struct decoded *a;		/* one row of A per worker */
};

static void gemm_rows(void *arg, unsigned int task, unsigned int worker)
{
	const struct exact_gemm_job *gj = arg;
	const struct mxa_job *job = gj->job;
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	const struct mxa_dense *c = &job->dense;
	const struct decoded *db = &gj->b, *da = &gj->a[worker];
	enum mxcore_elem ea = (enum mxcore_elem)a->elem;
	enum mxcore_elem eb = (enum mxcore_elem)b->elem;
	enum mxcore_dtype dt = c->dtype == MXA_DTYPE_BF16 ? MXCORE_BF16 :
							    MXCORE_F32;
	size_t abytes = mxcore_row_bytes(ea, MXCORE_BLOCK);
	size_t bbytes = mxcore_row_bytes(eb, MXCORE_BLOCK);
	uint32_t blocks = a->cols / MXCORE_BLOCK;
	uint32_t i, j, k, end = (task + 1) * gj->chunk;
	struct mxcore_acc acc;

	if (end > a->rows)
		end = a->rows;
	for (i = task * gj->chunk; i < end; i++) {
		const uint8_t *arow = cpu_data(a) + (size_t)i *
				      mxa__data_stride(a);
		uint8_t *crow = cpu_dense_row(c, i);

		decode_row(a, i, da->k, da->exp, da->special);
		for (j = 0; j < b->rows; j++) {
			const uint8_t *brow = cpu_data(b) + (size_t)j *
					      mxa__data_stride(b);
			size_t jb = (size_t)j * blocks;
			uint32_t cin;

			mxcore_acc_init(&acc);
			if (job->flags & MXA_GEMM_ACCUMULATE) {
				load_f32(crow, c->dtype, j, &cin);
				mxcore_acc_add_float(&acc, cin, MXCORE_F32);
			}
			for (k = 0; k < blocks; k++) {
				if (da->special[k] || db->special[jb + k]) {
					mxcore_acc_block_dot(&acc,
						ea, arow + k * abytes,
						cpu_scales(a)[mxa__scale_index(a, i, k)],
						eb, brow + k * bbytes,
						cpu_scales(b)[mxa__scale_index(b, j, k)]);
					continue;
				}
				mxcore_acc_dot_decoded(&acc,
					da->k + (size_t)k * MXCORE_BLOCK,
					db->k + (jb + k) * MXCORE_BLOCK,
					da->exp[k] + db->exp[jb + k]);
			}
			store(crow, c->dtype, j, mxcore_acc_round(&acc, dt));
		}
	}
}

int cpu_gemm_exact(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_pool *pool = cpu_dev(dev)->pool;
	unsigned int workers = cpu_pool_threads(pool), w, n;
	struct exact_gemm_job gj = { .job = job };
	uint32_t j, blocks = job->b.cols / MXCORE_BLOCK;
	int ret;

	n = row_tasks(job->a.rows, &gj.chunk);
	ret = decoded_alloc(&gj.b, job->b.rows, job->b.cols);
	if (ret)
		return mxa__err(ret, "gemm: no memory to decode B (%u x %u)",
				job->b.rows, job->b.cols);
	gj.a = calloc(workers, sizeof(*gj.a));
	if (!gj.a) {
		ret = -ENOMEM;
		goto out_free_b;
	}
	for (w = 0; w < workers; w++) {
		ret = decoded_alloc(&gj.a[w], 1, job->a.cols);
		if (ret)
			goto out_free_a;
	}
	for (j = 0; j < job->b.rows; j++)
		decode_row(&job->b, j, gj.b.k + (size_t)j * job->b.cols,
			   gj.b.exp + (size_t)j * blocks,
			   gj.b.special + (size_t)j * blocks);
	cpu_parallel(pool, n, gemm_rows, &gj);
out_free_a:
	while (w--)
		decoded_free(&gj.a[w]);
	free(gj.a);
out_free_b:
	decoded_free(&gj.b);
	if (ret)
		return mxa__err(ret, "gemm: out of memory for the exact kernel");
	return 0;
}
