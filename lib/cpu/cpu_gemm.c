// SPDX-License-Identifier: MIT
/*
 * The native CPU GEMM framework (BLIS style): the output is cut into
 * MC x NC tiles, one task each; a task walks K in KC chunks, packs its A
 * rows and B columns into micro-panels and calls the microkernel per
 * MR x NR sub-tile, accumulating in an fp32 tile it owns.  No task writes
 * another's output, so tasks need no synchronisation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_pack.h"
#include "cpu_ukernel.h"

#define CPU_MC 64			/* multiple of CPU_MR */
#define CPU_NC 128			/* multiple of CPU_NR */
#define CPU_KB 8			/* blocks of 32 per K chunk */

struct task_mem {
	float acc[CPU_MC][CPU_NC];
	float a[CPU_MC / CPU_MR][CPU_KB * 32 * CPU_MR];
	int16_t sa[CPU_MC / CPU_MR][CPU_KB * CPU_MR];
	float b[CPU_KB * 32 * CPU_NR];
	int16_t sb[CPU_KB * CPU_NR];
	float tile[CPU_MR][CPU_NR];
};

struct blocked_job {
	const struct mxa_job *job;
	const struct cpu_ukernel *uk;
	uint32_t tiles_n;
	struct task_mem *mem;		/* one per pool thread */
};

/* fp32 to bf16, round to nearest even, NaN stays (quiet) NaN. */
static uint16_t f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static void store_tile(const struct mxa_job *job, uint32_t i0, uint32_t j0,
		       uint32_t mc, uint32_t nc, float (*acc)[CPU_NC])
{
	const struct mxa_dense *c = &job->dense;
	bool accumulate = job->flags & MXA_GEMM_ACCUMULATE;
	uint32_t i, j;

	for (i = 0; i < mc; i++) {
		uint8_t *row = cpu_dense_row(c, i0 + i);

		for (j = 0; j < nc; j++) {
			float v = acc[i][j];

			if (c->dtype == MXA_DTYPE_BF16) {
				uint16_t h;

				if (accumulate) {
					uint32_t w;
					float cin;

					memcpy(&h, row + 2 * (size_t)(j0 + j), 2);
					w = (uint32_t)h << 16;
					memcpy(&cin, &w, 4);
					v += cin;
				}
				h = f32_to_bf16(v);
				memcpy(row + 2 * (size_t)(j0 + j), &h, 2);
			} else {
				if (accumulate) {
					float cin;

					memcpy(&cin, row + 4 * (size_t)(j0 + j), 4);
					v += cin;
				}
				memcpy(row + 4 * (size_t)(j0 + j), &v, 4);
			}
		}
	}
}

static void blocked_tile(void *arg, unsigned int task, unsigned int worker)
{
	const struct blocked_job *bj = arg;
	const struct mxa_job *job = bj->job;
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	uint32_t i0 = task / bj->tiles_n * CPU_MC;
	uint32_t j0 = task % bj->tiles_n * CPU_NC;
	uint32_t mc = a->rows - i0 < CPU_MC ? a->rows - i0 : CPU_MC;
	uint32_t nc = b->rows - j0 < CPU_NC ? b->rows - j0 : CPU_NC;
	uint32_t blocks = a->cols / 32, kb0, ir, jr, i, j;
	struct task_mem *t = &bj->mem[worker];

	memset(t->acc, 0, sizeof(t->acc));
	for (kb0 = 0; kb0 < blocks; kb0 += CPU_KB) {
		unsigned int kbn = blocks - kb0 < CPU_KB ? blocks - kb0 :
							   CPU_KB;

		for (ir = 0; ir < mc; ir += CPU_MR)
			cpu_pack_panel(a, i0 + ir, CPU_MR, kb0, kbn,
				       t->a[ir / CPU_MR], t->sa[ir / CPU_MR]);
		for (jr = 0; jr < nc; jr += CPU_NR) {
			cpu_pack_panel(b, j0 + jr, CPU_NR, kb0, kbn, t->b,
				       t->sb);
			for (ir = 0; ir < mc; ir += CPU_MR) {
				memset(t->tile, 0, sizeof(t->tile));
				bj->uk->run(kbn, t->a[ir / CPU_MR],
					    t->sa[ir / CPU_MR], t->b, t->sb,
					    t->tile);
				for (i = 0; i < CPU_MR && ir + i < mc; i++)
					for (j = 0; j < CPU_NR && jr + j < nc;
					     j++)
						t->acc[ir + i][jr + j] +=
							t->tile[i][j];
			}
		}
	}
	store_tile(job, i0, j0, mc, nc, t->acc);
}

int cpu_gemm_blocked(struct mxa_device *dev, const struct mxa_job *job)
{
	struct blocked_job bj = {
		.job = job,
		.uk = &cpu_ukernel_ref,
		.tiles_n = (job->b.rows + CPU_NC - 1) / CPU_NC,
	};
	uint32_t tiles_m = (job->a.rows + CPU_MC - 1) / CPU_MC;
	struct cpu_pool *pool = cpu_dev(dev)->pool;

	bj.mem = calloc(cpu_pool_threads(pool), sizeof(*bj.mem));
	if (!bj.mem)
		return mxa__err(-ENOMEM, "gemm: no memory for %u thread tiles",
				cpu_pool_threads(pool));
	cpu_parallel(pool, tiles_m * bj.tiles_n, blocked_tile, &bj);
	free(bj.mem);
	return 0;
}
