// SPDX-License-Identifier: MIT
/*
 * The exact weight-only GEMM (EMULATED): C (+)= A * B^T with A's fp32 or
 * bf16 values exactly as given and B's values code * block scale (*
 * tensor scale), every product and the sum exact in the core's wide
 * accumulator (mxcore_acc_dense_dot), one rounding per output.  Rows of A
 * are spread over the thread pool.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

struct exact_wo {
	const struct mxa_job *job;
	struct mxcore_scaling fb;
	uint32_t bs;			/* B's block size */
	uint32_t *x;			/* one row of A (fp32 bits) per worker */
};

static void exact_wo_row(void *arg, unsigned int i, unsigned int worker)
{
	const struct exact_wo *w = arg;
	const struct mxa_job *job = w->job;
	const struct mxa_dense *a = &job->a_dense, *c = &job->dense;
	const struct mxa_matrix *b = &job->b;
	enum mxcore_dtype dt = c->dtype == MXA_DTYPE_BF16 ? MXCORE_BF16 :
							    MXCORE_F32;
	uint32_t *x = w->x + (size_t)worker * a->cols;
	const uint8_t *arow = cpu_dense_row(a, i);
	uint8_t *crow = cpu_dense_row(c, i);
	size_t bbytes = mxcore_row_bytes(b->elem, w->bs);
	uint32_t k, j, blk, blocks = b->cols / w->bs;
	struct mxcore_acc acc;

	for (k = 0; k < a->cols; k++) {
		if (a->dtype == MXA_DTYPE_BF16) {
			uint16_t h;

			memcpy(&h, arow + 2 * (size_t)k, 2);
			x[k] = (uint32_t)h << 16;
		} else {
			memcpy(&x[k], arow + 4 * (size_t)k, 4);
		}
	}
	for (j = 0; j < b->rows; j++) {
		const uint8_t *brow = cpu_data(b) + (size_t)j *
				      mxa__data_stride(b);
		uint32_t bits;

		mxcore_acc_init(&acc);
		if (job->flags & MXA_GEMM_ACCUMULATE) {
			if (dt == MXCORE_BF16) {
				uint16_t h;

				memcpy(&h, crow + 2 * (size_t)j, 2);
				bits = (uint32_t)h << 16;
			} else {
				memcpy(&bits, crow + 4 * (size_t)j, 4);
			}
			mxcore_acc_add_float(&acc, bits, MXCORE_F32);
		}
		for (blk = 0; blk < blocks; blk++)
			mxcore_acc_dense_dot(&acc, x + (size_t)blk * w->bs,
					     w->bs, &w->fb, brow + blk * bbytes,
					     cpu_scales(b)[mxa__scale_index(b, j,
									    blk)]);
		bits = mxcore_acc_round(&acc, dt);
		if (dt == MXCORE_BF16) {
			uint16_t h = (uint16_t)bits;

			memcpy(crow + 2 * (size_t)j, &h, 2);
		} else {
			memcpy(crow + 4 * (size_t)j, &bits, 4);
		}
	}
}

int cpu_gemm_weight_only_exact(struct mxa_device *dev,
			       const struct mxa_job *job)
{
	struct cpu_pool *pool = cpu_dev(dev)->pool;
	const struct mxa_matrix *b = &job->b;
	struct exact_wo w = { .job = job, .bs = mxa__block(b) };

	w.fb.elem = (uint32_t)b->elem;
	w.fb.scale_type = (uint32_t)b->scale_type;
	memcpy(&w.fb.tensor_scale, &b->tensor_scale, 4);
	w.x = malloc((size_t)cpu_pool_threads(pool) * job->a_dense.cols * 4);
	if (!w.x)
		return mxa__err(-ENOMEM,
				"gemm_weight_only: no memory for the exact kernel");
	cpu_parallel(pool, job->a_dense.rows, exact_wo_row, &w);
	free(w.x);
	return 0;
}
