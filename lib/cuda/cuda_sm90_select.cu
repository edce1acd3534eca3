// SPDX-License-Identifier: MIT
/*
 * Selection among the native MX GEMM's paths: each is an entry of the
 * backend's kernel table (cuda_plugin.cu) whose range this file states
 * (reject) and whose rank may depend on the shape (rank), so that the
 * library's dispatch walk picks the path, mxa_plan() / `mxaccel gemm
 * --explain` name it and MXACCEL_KERNEL can force any of them on the
 * shapes it can run.
 *
 * The ranks are measurements (Documentation/bench-cuda.rst):
 *
 * - M <= 32: the skinny kernel (B streamed once, split K).
 * - 16 < M <= 64: the decode kernel, 1.06x the fp8 kernel for MXFP8 and
 *   1.8x for MXFP4 at M = 64; for M <= 16 the fp8 kernel's 16-wide tiles
 *   beat it (both below the skinny kernel).
 * - M > 64: the bf16 kernel; converting A by a pre-pass too (bf16-ss) is
 *   faster for fp4/fp6 A on grids of two waves or more, slower for fp8 A
 *   and small grids.
 * - The fp8 kernel alone runs every shape (rank below the others); its
 *   single-partial and four-warpgroup tilings for M > 64 only when forced.
 * - NVFP4 x NVFP4 (UE4M3 scales on both sides): skinny for M <= 32 with
 *   K a multiple of 32 (its spans hold two NVFP4 blocks), decode for
 *   M <= 64 (it reads B's packed codes once), bf16-ss for every M (the
 *   only one for M > 64); the fp8 kernel takes E8M0 only.  Mixed NVFP4 x
 *   MX: no native path.
 *
 * M is desc->m: the kernels see A's rows (job->a.rows), the same number.
 */
#include <stdio.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"

/* The bf16 kernel's tile (SM90_BF16_BM x SM90_BF16_BN), for the grid size. */
static uint32_t bf16_tiles(const struct mxa_op_desc *d)
{
	/* The larger operand is the kernel's A (cuda_launch_gemm_sm90()). */
	uint32_t rows_x = d->n > d->m ? d->n : d->m;
	uint32_t rows_y = d->n > d->m ? d->m : d->n;

	return ((rows_x + SM90_BF16_BM - 1) / SM90_BF16_BM) *
	       ((rows_y + SM90_BF16_BN - 1) / SM90_BF16_BN);
}

const char *cuda_sm90_path_reject(struct cuda_device *cd,
				  const struct mxa_op_desc *d,
				  enum sm90_path path)
{
	const bool nv_a = d->a_scale_type == MXA_SCALE_UE4M3;
	const bool nv_b = d->b_scale_type == MXA_SCALE_UE4M3;

	(void)cd;
	/*
	 * NVFP4: the bf16-ss kernel at every M (its pre-pass folds UE4M3),
	 * the decode kernel for M <= 64 (it folds them in registers), the
	 * skinny kernel for M <= 32 (it promotes per block of 16).
	 */
	if (nv_a || nv_b) {
		if (path != SM90_PATH_BF16_SS && path != SM90_PATH_DECODE &&
		    path != SM90_PATH_SKINNY)
			return "NVFP4 (UE4M3 scales) runs on cuda-mx-sm90-skinny, -decode and -bf16-ss only";
		if (nv_a != nv_b)
			return "mixed NVFP4 x MX operands are not taken (UE4M3 scales on both or neither)";
		if (path == SM90_PATH_SKINNY)
			return d->m > SM90_SKINNY_M ? "the skinny kernel runs M <= 32 only" :
			       d->k % 32 ? "the skinny kernel takes NVFP4 with K a multiple of 32 only" :
			       NULL;
		return path == SM90_PATH_DECODE && d->m > 64 ?
		       "the decode kernel runs M <= 64 only" : NULL;
	}
	switch (path) {
	case SM90_PATH_SKINNY:
		return d->m > SM90_SKINNY_M ? "the skinny kernel runs M <= 32 only" :
					      NULL;
	case SM90_PATH_DECODE:
		return d->m > 64 ? "the decode kernel runs M <= 64 only" : NULL;
	case SM90_PATH_BF16:
	case SM90_PATH_BF16_SS:
		return d->m <= 64 ? "the bf16 kernel runs M > 64 only" : NULL;
	case SM90_PATH_FP8_SINGLE:
	case SM90_PATH_FP8_QUAD:
		return d->m <= 64 ? "this fp8 tiling runs M > 64 only" : NULL;
	case SM90_PATH_FP8:
		return NULL;
	}
	return "unknown path";
}

int cuda_sm90_path_rank(struct cuda_device *cd, const struct mxa_op_desc *d,
			enum sm90_path path)
{
	enum mxa_elem ex = d->n > d->m ? d->b_elem : d->a_elem;
	bool fp8_x = ex == MXA_ELEM_E4M3 || ex == MXA_ELEM_E5M2;

	/* NVFP4: skinny, then decode (B read once) where they run, else bf16-ss. */
	if (d->a_scale_type == MXA_SCALE_UE4M3)
		return path == SM90_PATH_SKINNY ? 40 : path == SM90_PATH_DECODE ? 30 : 21;
	switch (path) {
	case SM90_PATH_SKINNY:
		return 40;
	case SM90_PATH_DECODE:
		return d->m > 16 ? 30 : 8;
	case SM90_PATH_BF16_SS:
		return !fp8_x && bf16_tiles(d) >= 2u * (uint32_t)cd->sms ? 21 : 19;
	case SM90_PATH_BF16:
		return 20;
	case SM90_PATH_FP8:
		return 10;
	case SM90_PATH_FP8_SINGLE:
	case SM90_PATH_FP8_QUAD:
		return 1;
	}
	return 0;
}
