// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90-*: the fused MX x MX GEMM for Hopper (sm_90a): each path's
 * launch sequence (the operand view is cuda_sm90_operand.cu, the fp8
 * kernel cuda_gemm_sm90_fp8.cu).
 *
 * The paths are kernel-table entries; cuda_sm90_select.cu says which
 * shapes each runs and which the dispatch walk picks.  The skinny kernel
 * (cuda_gemm_sm90_skinny.cu) does everything itself.  The bf16 kernel
 * (cuda_gemm_sm90_bf16.cu, the smaller operand as its pre-converted B)
 * and the decode kernel (cuda_gemm_sm90_decode.cu) leave the tiles they
 * cannot do exactly (NaN/Inf codes, NaN scales, scale spans too wide) to
 * the fp8 kernel (cuda_gemm_sm90_fp8.cu), which walks their list.  The
 * fp8 paths run the fp8 kernel alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <math.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"

namespace {

/*
 * The bf16 kernel's scratch: B in bf16 (rows x 128 bytes per chunk of
 * 64), then a flag per tile column and per tile row, then the count and
 * list of the fp8 kernel's tiles (128 x 128) left to it, then A in bf16
 * (at a_offset()).
 */
size_t bf16_b_bytes(const struct mxa_matrix *y)
{
	return (size_t)y->rows * ((y->cols / 32 + 1) / 2) * SM90_BF16_KC * 2;
}

size_t list_offset(const struct mxa_matrix *x, const struct mxa_matrix *y)
{
	return bf16_b_bytes(y) + (y->rows + SM90_BF16_BN - 1) / SM90_BF16_BN * 4 +
	       (x->rows + SM90_BF16_BM - 1) / SM90_BF16_BM * 4;
}

size_t a_offset(const struct mxa_matrix *x, const struct mxa_matrix *y, uint32_t fp_tiles)
{
	return (list_offset(x, y) + 4 + (size_t)fp_tiles * 4 + 1023) / 1024 * 1024;
}

/*
 * B (and A, with prep_a: the cuda-mx-sm90-bf16-ss kernel) to bf16, then
 * the bf16 kernel: x, y as the
 * fp8 kernel takes them (A and B), their codes 16-byte aligned, their
 * scales K-major with row maxima (sm90_kmajor_scales()).  The list of tiles it
 * leaves for the fp8 kernel is at list_offset() in *scratch (freed by the
 * caller after the launches).
 */
int launch_bf16(struct cuda_device *cd, const struct mxa_matrix *x,
		const uint8_t *xd, uint64_t xs, const void *xsc,
		const struct mxa_matrix *y, const uint8_t *yd, uint64_t ys,
		const void *ysc, const struct sm90_fp8_params &fp, bool prep_a, void **scratch)
{
	const uint32_t xpad = (x->rows + 15) / 16 * 16;
	const size_t a_off = a_offset(x, y, fp.tiles_m * fp.tiles_n);
	struct sm90_bf16_args b = {};
	struct sm90_prep_args pa, pb;
	size_t flags;
	CUtensorMap maps[3];
	cudaError_t e;
	int ret;

	b.m = x->rows;
	b.n = y->rows;
	b.blocks = x->cols / 32;
	b.elem_a = sm90_elem_of(x->elem);
	b.out = fp.out;
	b.transposed = fp.transposed;
	b.tiles_m = (b.m + SM90_BF16_BM - 1) / SM90_BF16_BM;
	b.tiles_n = (b.n + SM90_BF16_BN - 1) / SM90_BF16_BN;
	b.rmax_a = sm90_rmax_of(xsc, x);
	b.rmax_b = sm90_rmax_of(ysc, y);
	b.tiles_n8 = fp.tiles_n;
	b.nvfp4 = 0;
	flags = list_offset(x, y) + 4 - bf16_b_bytes(y);
	e = cudaMallocAsync(scratch, prep_a ? a_off + bf16_b_bytes(x) : a_off, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync((uint8_t *)*scratch + bf16_b_bytes(y), 0, flags,
				    cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: bf16 scratch");
	b.bad_cols = (const uint32_t *)((uint8_t *)*scratch + bf16_b_bytes(y));
	b.bad_rows = b.bad_cols + b.tiles_n;
	b.list_count = (uint32_t *)((uint8_t *)*scratch + list_offset(x, y));
	b.list = b.list_count + 1;

	static_assert(SM90_BF16_BN == 1 << 8 && SM90_BF16_BM == 1 << 7,
		      "flags per tile by shifts");
	pb = sm90_prep_args_of(y, yd, ys, ysc, b.rmax_b, (uint8_t *)*scratch,
		       (uint32_t *)b.bad_cols, 8);
	ret = sm90_prep_bf16(cd, pb);
	if (!ret && prep_a) {
		pa = sm90_prep_args_of(x, xd, xs, xsc, b.rmax_a, (uint8_t *)*scratch + a_off,
			       (uint32_t *)b.bad_rows, 7);
		ret = sm90_prep_bf16(cd, pa);
	}
	if (!ret)
		ret = prep_a ? sm90_map_prepped(&maps[0], pa, SM90_BF16_BM) :
			       sm90_map_codes(&maps[0], x, xd, xs, SM90_BF16_BM);
	if (!ret)
		ret = sm90_map_prepped(&maps[1], pb, SM90_BF16_BN);
	if (!ret && !prep_a)
		ret = sm90_make_map(&maps[2], (const uint8_t *)xsc, xpad, x->cols / 32,
			       xpad, SM90_BF16_BM, 2, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret)
		ret = prep_a ? sm90_launch_bf16_ss(cd, maps, b) : sm90_launch_bf16(cd, maps, b);
	return ret;
}

/*
 * NVFP4 x NVFP4 (both UE4M3): both operands to exact bf16 with their
 * block scales folded in (sm90_prep_nvfp4()), then
 * gemm_sm90_bf16_ss_kernel on them, any M.  The larger operand is the
 * kernel's A (x, tiles of SM90_BF16_BM rows), C^T = B A^T when that is B.
 * Every tile can be folded (no fp8 kernel behind it): the per-row NaN
 * flags make the epilogue write NaN.  Scratch: x in bf16, y in bf16
 * (1024-byte aligned), then x's and y's row flags, the kernel's (zero)
 * tile flags, and its tile list count and list (unused: it leaves no
 * tile).
 */
int launch_nvfp4(struct cuda_device *cd, const struct mxa_job *job)
{
	const bool swap = job->b.rows > job->a.rows;
	const struct mxa_matrix *x = swap ? &job->b : &job->a;
	const struct mxa_matrix *y = swap ? &job->a : &job->b;
	const uint32_t blocks = x->cols / 16, kt = (blocks + 3) / 4;
	const uint64_t row_bytes = (uint64_t)kt * SM90_BF16_KC * 2;
	const size_t x_bytes = ((size_t)x->rows * row_bytes + 1023) / 1024 * 1024;
	const size_t y_bytes = ((size_t)y->rows * row_bytes + 1023) / 1024 * 1024;
	struct sm90_bf16_args b = {};
	const struct mxa_matrix *ms[2] = { x, y };
	void *xscratch = NULL, *yscratch = NULL, *scratch = NULL;
	const uint8_t *data[2];
	uint64_t stride[2];
	CUtensorMap maps[2];
	int ret, i;

	b.m = x->rows;
	b.n = y->rows;
	b.blocks = (x->cols + 31) / 32;	/* the kernel's chunks: (blocks + 1) / 2 */
	b.elem_a = SM90_E2M1;
	b.out = sm90_c_of(job);
	b.transposed = swap;
	b.tiles_m = (b.m + SM90_BF16_BM - 1) / SM90_BF16_BM;
	b.tiles_n = (b.n + SM90_BF16_BN - 1) / SM90_BF16_BN;
	b.tiles_n8 = 2 * b.tiles_n;
	b.nvfp4 = 1;
	sm90_nvfp4_factors(&job->a, &job->b, &b.t1, &b.t2);

	ret = sm90_aligned_data(cd, x, &data[0], &stride[0], &xscratch);
	if (!ret)
		ret = sm90_aligned_data(cd, y, &data[1], &stride[1], &yscratch);
	if (ret)
		goto out;
	ret = sm90_bf16_scratch(cd, &b, x_bytes + y_bytes, &scratch, "cuda-mx-sm90: NVFP4 scratch");
	if (ret)
		goto out;

	for (i = 0; i < 2 && !ret; i++) {
		const struct mxa_matrix *m = ms[i];
		const struct sm90_nvfp4_prep_args p =
			sm90_nvfp4_prep_args_of(m, data[i], stride[i],
						(uint8_t *)scratch + (i ? x_bytes : 0),
						(uint32_t *)(i ? b.rmax_b : b.rmax_a));

		ret = sm90_prep_nvfp4(cd, p);
		if (!ret)
			ret = sm90_make_map(&maps[i], p.out, row_bytes, m->rows, row_bytes,
					    SM90_BF16_KC * 2, i ? SM90_BF16_BN : SM90_BF16_BM,
					    CU_TENSOR_MAP_SWIZZLE_128B);
	}
	if (!ret)
		ret = sm90_launch_bf16_ss(cd, maps, b);
out:
	if (scratch)
		cudaFreeAsync(scratch, cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	if (yscratch)
		cudaFreeAsync(yscratch, cd->stream);
	return ret;
}

/*
 * NVFP4 x NVFP4 with M <= 64 on the decode kernel: x = B (streamed, its
 * UE4M3 scales folded in registers), y = A to bf16 by sm90_prep_nvfp4().
 * Nothing is left to the fp8 kernel.  Scratch: the kernel's (zero) list
 * count, Y flag and list, Y's NaN-scale flags, then Y in bf16 (1024-byte
 * aligned).
 */
int launch_nvfp4_decode(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_matrix *x = &job->b, *y = &job->a;
	const uint32_t blocks = x->cols / 16, kt = (blocks + 3) / 4;
	const uint64_t row_bytes = (uint64_t)kt * SM90_BF16_KC * 2;
	const uint32_t tiles = (x->rows + 63) / 64;
	const size_t head = ((8 + (size_t)tiles * 4 + (size_t)y->rows * 4) + 1023) / 1024 * 1024;
	struct sm90_nvfp4_prep_args pb;
	struct sm90_decode_args d = {};
	void *xscratch = NULL, *yscratch = NULL, *scratch = NULL;
	const uint8_t *xd, *yd;
	uint64_t xs, ys;
	CUtensorMap maps[2];
	cudaError_t e;
	int ret;

	/* x for the tensor memory accelerator, y for the pre-pass's loads */
	ret = sm90_aligned_data(cd, x, &xd, &xs, &xscratch);
	if (!ret)
		ret = sm90_aligned_data(cd, y, &yd, &ys, &yscratch);
	if (ret)
		goto out;
	e = cudaMallocAsync(&scratch, head + (size_t)y->rows * row_bytes, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(scratch, 0, head, cd->stream);
	if (e != cudaSuccess) {
		ret = cuda_fail(e, "cuda-mx-sm90: NVFP4 decode scratch");
		goto out;
	}
	d.x = sm90_mx_operand_of(x, xd, xs);
	d.x.swz_tiles = (blocks + 3) / 4;
	d.y = sm90_mx_operand_of(y, yd, ys);
	d.y.swz_tiles = (blocks + 3) / 4;
	d.blocks = (x->cols + 31) / 32;	/* the kernel's chunks: (blocks + 1) / 2 */
	d.blocks16 = blocks;
	d.out = sm90_c_of(job);
	d.tiles = tiles;
	d.list_count = (uint32_t *)scratch;
	d.bad_y = d.list_count + 1;
	d.list = d.list_count + 2;
	d.rmax_y = d.list + tiles;
	d.nvfp4 = 1;
	sm90_nvfp4_factors(&job->a, &job->b, &d.t1, &d.t2);

	pb = sm90_nvfp4_prep_args_of(y, yd, ys, (uint8_t *)scratch + head,
				     (uint32_t *)d.rmax_y);
	ret = sm90_prep_nvfp4(cd, pb);
	if (!ret)
		ret = sm90_map_codes(&maps[0], x, xd, xs, 64);
	if (!ret)
		ret = sm90_make_map(&maps[1], pb.out, row_bytes, y->rows, row_bytes,
				    SM90_BF16_KC * 2, 64, CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret)
		ret = sm90_launch_decode(cd, maps, d);
out:
	if (scratch)
		cudaFreeAsync(scratch, cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	if (yscratch)
		cudaFreeAsync(yscratch, cd->stream);
	return ret;
}

/* With MXACCEL_DEBUG: how many tiles the fp8 kernel had to redo (syncs). */
void report_redo(struct cuda_device *cd, const struct sm90_fp8_params &p)
{
	uint32_t n = 0;

	if (cudaMemcpyAsync(&n, p.list_count, 4, cudaMemcpyDeviceToHost,
			    cd->stream) == cudaSuccess &&
	    cudaStreamSynchronize(cd->stream) == cudaSuccess)
		cuda_dbg("cuda-mx-sm90: %u of %u tiles of the fp8 kernel left to it by the bf16 kernels (NaN/Inf codes, NaN scales or scale spans too wide for exact bf16 operands)",
			 n, p.tiles_m * p.tiles_n);
}

/*
 * The decode kernel (M <= 64): x = B, y = A, their codes 16-byte aligned,
 * y's scales K-major with row maxima (sm90_kmajor_scales()).  Y goes to bf16
 * first (sm90_prep_bf16()).  *scratch holds the count and list of tiles left
 * to the fp8 kernel, then Y's flag and bf16 (freed by the caller after
 * the launches).
 */
int launch_decode(struct cuda_device *cd, const struct mxa_matrix *x,
		  const uint8_t *xd, uint64_t xs, const struct mxa_matrix *y,
		  const uint8_t *yd, uint64_t ys, const void *ysc, uint32_t tiles,
		  const struct mxa_job *job, void **scratch)
{
	const uint32_t bn = 64, kt = (x->cols / 32 + 1) / 2;
	const size_t head = (8 + (size_t)tiles * 4 + 1023) / 1024 * 1024;
	struct sm90_decode_args d = {};
	struct sm90_prep_args pb;
	CUtensorMap maps[2];
	cudaError_t e;
	int ret;

	e = cudaMallocAsync(scratch, head + (size_t)y->rows * kt * SM90_BF16_KC * 2,
			    cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(*scratch, 0, 8, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: decode scratch");
	d.x = sm90_mx_operand_of(x, xd, xs);
	d.y = sm90_mx_operand_of(y, yd, ys);
	d.blocks = x->cols / 32;
	d.out = sm90_c_of(job);
	d.tiles = tiles;
	d.list_count = (uint32_t *)*scratch;
	d.bad_y = d.list_count + 1;
	d.list = d.list_count + 2;
	d.rmax_y = sm90_rmax_of(ysc, y);
	d.nvfp4 = 0;

	pb = sm90_prep_args_of(y, yd, ys, ysc, d.rmax_y, (uint8_t *)*scratch + head,
		       (uint32_t *)d.bad_y, 8);
	ret = sm90_prep_bf16(cd, pb);
	if (!ret)
		ret = sm90_map_codes(&maps[0], x, xd, xs, 64);
	if (!ret)
		ret = sm90_map_prepped(&maps[1], pb, bn);
	return ret ? ret : sm90_launch_decode(cd, maps, d);
}

/*
 * The skinny kernel (M <= SM90_SKINNY_M): x = B, read in place (16-byte
 * aligned), y = A, read by its pre-pass.
 */
int launch_skinny(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_matrix *x = &job->b, *y = &job->a;
	struct sm90_skinny_args s;
	const uint8_t *xd;
	void *xscratch;
	uint64_t xs;
	int ret;

	ret = sm90_aligned_data(cd, x, &xd, &xs, &xscratch);
	if (ret)
		return ret;
	s = sm90_skinny_args_of(job, sm90_mx_operand_of(x, xd, xs),
				sm90_mx_operand_of(y, cuda_ptr(y->data, y->data_offset),
						   mxa__data_stride(y)));
	ret = sm90_launch_skinny(cd, s);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	return ret;
}

/*
 * Variables of earlier versions that chose kernels here: set, they are an
 * error (the choice is MXACCEL_KERNEL's now), never silently ignored.
 */
int check_env(void)
{
	static const char *const gone[][2] = {
		{ "MXACCEL_CUDA_TILE", "MXACCEL_KERNEL=cuda-mx-sm90-fp8, -fp8-single, -fp8-quad, -bf16 or -bf16-ss" },
		{ "MXACCEL_CUDA_SKINNY", "MXACCEL_KERNEL=cuda-mx-sm90-decode or cuda-mx-sm90-fp8" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		const char *v = getenv(gone[i][0]);

		if (v)
			return cuda_err(-EINVAL,
					"%s='%s' is no longer read: choose the kernel with %s",
					gone[i][0], v, gone[i][1]);
	}
	return 0;
}

} /* namespace */

const char *cuda_sm90_reject(struct cuda_device *cd)
{
	const char *no;

	if (cd->cc_major != 9 || cd->cc_minor != 0)
		return "the fused MX GEMM is built for sm_90a (Hopper) only";
	no = sm90_operand_reject();
	if (no)
		return no;
	if (cd->smem_optin < (size_t)sm90_fp8_smem() || !sm90_bf16_fits(cd))
		return "the device has too little shared memory per block";
	return NULL;
}

int cuda_launch_gemm_sm90(struct cuda_device *cd, const struct mxa_job *job,
			  enum sm90_path path)
{
	/*
	 * Small M: C^T = B * A^T, B's rows on the 64-row side of wgmma, with
	 * 64- or 16-wide tiles.  The bf16 kernel converts its B in a
	 * pre-pass: the smaller operand.  Which path runs is the kernel
	 * table's choice (cuda_sm90_select.cu).
	 */
	bool small = job->a.rows <= 64;
	int cfg = small ? (job->a.rows > 16 ? 3 : 4) :
		  path == SM90_PATH_FP8_SINGLE ? 1 :
		  path == SM90_PATH_FP8_QUAD ? 2 : 0;
	bool bf16 = path == SM90_PATH_BF16 || path == SM90_PATH_BF16_SS;
	bool decode = path == SM90_PATH_DECODE;
	bool swap = small || (bf16 && job->b.rows > job->a.rows);
	const struct mxa_matrix *x = swap ? &job->b : &job->a;
	const struct mxa_matrix *y = swap ? &job->a : &job->b;
	const uint8_t *xd, *yd;
	uint64_t xs, ys;
	void *xscratch = NULL, *yscratch = NULL, *xs_scratch = NULL, *ys_scratch = NULL;
	void *bscratch = NULL;
	uint32_t xpad, ypad;
	CUtensorMap maps[4];	/* A, B and their K-major scales */
	struct sm90_fp8_params p;
	struct mxa_op_desc desc;
	const char *no;
	int ret;

	ret = check_env();
	if (ret)
		return ret;
	if (cuda_sm90_reject(cd))
		return cuda_err(-EOPNOTSUPP, "cuda-mx-sm90: %s", cuda_sm90_reject(cd));
	/* The table's predicates, again: a forced path runs inside its range only. */
	desc = sm90_desc_of(job);
	no = cuda_sm90_path_reject(cd, &desc, path);
	if (no)
		return cuda_err(-EINVAL, "cuda-mx-sm90: path %d at M = %u, K = %u: %s",
				(int)path, job->a.rows, job->a.cols, no);
	/* NVFP4: skinny, decode or bf16-ss; both UE4M3 (cuda_sm90_select.cu). */
	if (job->a.scale_type == MXA_SCALE_UE4M3) {
		if (path == SM90_PATH_SKINNY)
			return launch_skinny(cd, job);
		return decode ? launch_nvfp4_decode(cd, job) : launch_nvfp4(cd, job);
	}
	if (path == SM90_PATH_SKINNY)
		return launch_skinny(cd, job);
	ret = sm90_aligned_data(cd, x, &xd, &xs, &xscratch);
	if (!ret)
		ret = sm90_aligned_data(cd, y, &yd, &ys, &yscratch);
	if (!ret)
		ret = sm90_make_map(&maps[0], xd, sm90_row_bytes(x), x->rows, xs,
			       x->elem == MXA_ELEM_E2M1 ? 64 : 128, sm90_fp8_tile_m(cfg),
			       x->elem == MXA_ELEM_E2M1 ? CU_TENSOR_MAP_SWIZZLE_NONE :
							  CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret)
		ret = sm90_make_map(&maps[1], yd, sm90_row_bytes(y), y->rows, ys,
			       y->elem == MXA_ELEM_E2M1 ? 64 : 128, sm90_fp8_tile_n(cfg),
			       y->elem == MXA_ELEM_E2M1 ? CU_TENSOR_MAP_SWIZZLE_NONE :
							  CU_TENSOR_MAP_SWIZZLE_128B);
	/*
	 * Decode: Y's scales first (the kernel's pre-pass needs them), X's for
	 * the fp8 kernel only if it has tiles to do.
	 */
	if (!ret && decode)
		ret = sm90_kmajor_scales(cd, y, true, NULL, &ys_scratch, &ypad);
	if (!ret && decode)
		ret = launch_decode(cd, x, xd, xs, y, yd, ys, ys_scratch,
				    (x->rows + sm90_fp8_tile_m(cfg) - 1) / sm90_fp8_tile_m(cfg), job,
				    &bscratch);
	if (!ret)
		ret = sm90_kmajor_scales(cd, x, bf16, decode ? (uint32_t *)bscratch : NULL,
				    &xs_scratch, &xpad);
	if (!ret && !decode)
		ret = sm90_kmajor_scales(cd, y, bf16, NULL, &ys_scratch, &ypad);
	if (!ret)
		ret = sm90_make_map(&maps[2], (const uint8_t *)xs_scratch, xpad, x->cols / 32,
			       xpad, sm90_fp8_tile_m(cfg), 4, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret)
		ret = sm90_make_map(&maps[3], (const uint8_t *)ys_scratch, ypad, y->cols / 32,
			       ypad, sm90_fp8_tile_n(cfg), 4, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret) {
		p.a = sm90_fp8_operand_of(x);
		p.b = sm90_fp8_operand_of(y);
		p.out = sm90_c_of(job);
		p.tiles_m = (x->rows + sm90_fp8_tile_m(cfg) - 1) / sm90_fp8_tile_m(cfg);
		p.tiles_n = (y->rows + sm90_fp8_tile_n(cfg) - 1) / sm90_fp8_tile_n(cfg);
		p.transposed = swap;
		p.post = ldexpf(1.0f, sm90_shift_of(x->elem) + sm90_shift_of(y->elem));
		p.list = NULL;
		p.list_count = NULL;
	}
	if (!ret && bf16)
		ret = launch_bf16(cd, x, xd, xs, xs_scratch, y, yd, ys, ys_scratch,
				  p, path == SM90_PATH_BF16_SS, &bscratch);
	/* The fp8 kernel for the marked tiles; the others return at once. */
	if (!ret && bf16) {
		p.list_count = (const uint32_t *)((uint8_t *)bscratch + list_offset(x, y));
		p.list = p.list_count + 1;
	}
	if (!ret && decode) {
		p.list_count = (const uint32_t *)bscratch;
		p.list = p.list_count + 2;
	}
	if (!ret)
		ret = sm90_launch_fp8(cd, cfg, x->elem == MXA_ELEM_E5M2,
				      y->elem == MXA_ELEM_E5M2, maps, p);
	if (!ret && (bf16 || decode) && cuda_host->debug())
		report_redo(cd, p);
	if (bscratch)
		cudaFreeAsync(bscratch, cd->stream);
	if (xs_scratch)
		cudaFreeAsync(xs_scratch, cd->stream);
	if (ys_scratch)
		cudaFreeAsync(ys_scratch, cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	if (yscratch)
		cudaFreeAsync(yscratch, cd->stream);
	return ret;
}
