// SPDX-License-Identifier: MIT
/*
 * Column-wise quantization (cpu-quantize-colwise): row r of dst is column
 * r of src, so each block gathers block consecutive elements down one
 * column of src and goes through the MX core's block quantizer
 * (mxcore_quantize_block() for E8M0, mxcore_nvfp4_quantize_block() for
 * UE4M3), the very function mxa_quantize() ends in: the result is
 * bit-exact with quantizing the transpose.  Tasks are bands of dst rows;
 * within a task the gather walks src rows, so each cache line of src is
 * used for the band's columns while it is loaded.
 */
#include <string.h>

#include "cpu.h"
#include "cpu_fpenv.h"

/* dst rows per task: a band of src columns that shares cache lines. */
#define BAND 16u

struct colwise_job {
	const struct mxa_job *job;
};

static void colwise_band(void *arg, unsigned int task, unsigned int worker)
{
	const struct colwise_job *cj = arg;
	const struct mxa_job *job = cj->job;
	const struct mxa_matrix *m = &job->a;
	const struct mxa_dense *src = &job->dense;
	struct mxcore_geom g = mxa__geom(m);
	bool bf16 = src->dtype == MXA_DTYPE_BF16;
	bool nvfp4 = m->scale_type == MXA_SCALE_UE4M3;
	uint32_t block = mxcore_geom_block(&g);
	uint32_t ts = mxa__tensor_scale_bits(m);
	uint64_t blocks = mxcore_geom_blocks(&g), bb = mxcore_geom_block_bytes(&g);
	uint32_t r0 = task * BAND, r1 = r0 + BAND, r, i;
	uint8_t *data = (uint8_t *)cpu_data(m);
	uint8_t *scales = (uint8_t *)cpu_scales(m);
	unsigned int saved = cpu_fpenv_enter();
	uint32_t x[MXCORE_BLOCK];
	uint64_t b;

	(void)worker;
	if (r1 > m->rows)
		r1 = m->rows;
	for (b = 0; b < blocks; b++) {
		for (r = r0; r < r1; r++) {
			uint8_t *out = data + mxcore_geom_data_offset(&g, r) +
				       b * bb;
			uint8_t s;

			for (i = 0; i < block; i++)
				x[i] = mxa__dense_bits(cpu_dense_row(src,
							      (uint32_t)(b * block + i)),
						bf16, r);
			s = nvfp4 ? mxcore_nvfp4_quantize_block(x, ts, out) :
			    mxcore_quantize_block((enum mxcore_elem)m->elem,
						  (enum mxcore_mode)job->mode,
						  x, out);
			scales[mxcore_geom_scale_index(&g, r, b)] = s;
		}
	}
	cpu_fpenv_leave(saved);
}

int cpu_quantize_colwise(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_device *cd = cpu_dev(dev);
	struct colwise_job cj = { .job = job };
	struct mxcore_geom g = mxa__geom(&job->a);

	/* Padding of the swizzled layout is zero, as torchao's to_blocked. */
	if (job->a.scale_layout == MXA_LAYOUT_SWIZZLED) {
		uint64_t span = 0;

		mxcore_geom_scale_span(&g, &span);
		memset((uint8_t *)cpu_scales(&job->a), 0, (size_t)span);
	}
	cpu_parallel(cd->pool, (job->a.rows + BAND - 1) / BAND, colwise_band,
		     &cj);
	return 0;
}
