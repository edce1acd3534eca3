// SPDX-License-Identifier: MIT
/*
 * Grouped GEMM on the cpu: each group is the dense GEMM the core's walk
 * (lib/src/grouped.c) makes of it, run by the dense kernel of the same
 * class, so a group's result is exactly what mxa_gemm() gives for it:
 * bit-identical for the exact kernel, within the blocked kernel's bound
 * for the native one.  An empty K group's C is 0 (C_in, rounded once).
 */
#include <string.h>

#include "cpu.h"

/* C of an empty 2d x 2d group: the exact sum of nothing (+ C_in). */
static void empty_k_group(const struct mxa_job *sub)
{
	const struct mxa_dense *c = &sub->dense;
	enum mxcore_dtype dt = c->dtype == MXA_DTYPE_BF16 ? MXCORE_BF16 :
							    MXCORE_F32;
	size_t es = mxcore_dtype_size(c->dtype);
	struct mxcore_acc acc;
	uint32_t i, j, bits = 0;

	for (i = 0; i < c->rows; i++) {
		uint8_t *row = cpu_dense_row(c, i);

		if (!(sub->flags & MXA_GEMM_ACCUMULATE)) {
			memset(row, 0, c->cols * es);
			continue;
		}
		for (j = 0; j < c->cols; j++) {
			mxcore_acc_init(&acc);
			memcpy(&bits, row + j * es, es);
			mxcore_acc_add_float(&acc, bits, dt);
			bits = mxcore_acc_round(&acc, dt);
			memcpy(row + j * es, &bits, es);
		}
	}
}

static int run_groups(struct mxa_device *dev, const struct mxa_job *job,
		      int (*dense)(struct mxa_device *dev,
				   const struct mxa_job *job))
{
	const struct mxa_grouped *gr = &job->groups;
	const int32_t *ends = (const int32_t *)
		((const uint8_t *)gr->offsets->host + gr->offsets_offset);
	struct mxa_group_iter it;
	struct mxa_job sub;
	bool empty;
	int ret;

	mxa__group_iter_init(&it, job, ends);
	while (mxa__group_next(&it, &sub, &empty)) {
		if (empty) {
			if (gr->kind == MXA_GROUP_2D_2D)
				empty_k_group(&sub);
			continue;
		}
		ret = dense(dev, &sub);
		if (ret)
			return ret;
	}
	return 0;
}

int cpu_gemm_grouped_exact(struct mxa_device *dev, const struct mxa_job *job)
{
	return run_groups(dev, job, cpu_gemm_exact);
}

int cpu_gemm_grouped_blocked(struct mxa_device *dev, const struct mxa_job *job)
{
	return run_groups(dev, job, cpu_gemm_blocked);
}
