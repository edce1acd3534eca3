// SPDX-License-Identifier: MIT
/*
 * cuda-weight-only-wgmma: C (+)= A B^T with a dense bf16 A (M x K) and an
 * MX or NVFP4 B (N x K) on Hopper's bf16 wgmma, for the shapes where the
 * tensor cores, not B's bytes, bound the GEMM (prefill: M in the hundreds
 * and more).
 *
 * Why: cuda-weight-only (cuda_gemm_sm90_weight_only.cu) streams B through
 * registers once per group of 64 rows of A, on mma.sync: right for decode,
 * but at M = 4096 it reads B 64 times and runs at the mma.sync rate.  Here
 * the MX x MX bf16 GEMM's kernels run C^T = B A^T with B as their 128-row
 * A and A's rows, laid out in their permuted chunks of 64 (wo_act_kernel(),
 * below), as their B:
 * - MX B on grids under two waves, or with fp8 codes (cheap to convert):
 *   gemm_sm90_bf16_kernel, which converts B's codes in its consumers'
 *   registers, each element times 2^(s - R), R the largest scale of its
 *   row; B's bytes are read as they are, once per tile column.
 * - Otherwise B goes to exact bf16 once, by the same pre-passes
 *   (sm90_prep_bf16(); sm90_prep_nvfp4(): times its UE4M3 scale and
 *   2^-8), and gemm_sm90_bf16_ss_kernel takes both from shared memory.
 * The products are exact, the sums fp32 on the tensor cores, and the
 * epilogue scales by 2^(R - 127) (MX) or 2^8 times the tensor scale
 * (NVFP4).
 *
 * What cannot be folded exactly (an MX row whose scales span too many
 * binades for bf16, NaN scales, NaN/Inf codes) leaves its stripe of 128
 * rows of B: the kernels write nothing there and cuda-weight-only computes
 * exactly those stripes after them (cuda_weight_only_redo(): every other
 * CTA of that launch returns at once).  NVFP4 always folds: a NaN scale
 * is a row flag the epilogue makes NaN.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"

namespace {

/*
 * Where it overtakes cuda-weight-only, which reads B once per group of 64
 * rows of A.  Measured at M x 28672 x 8192 on the H200
 * (Documentation/cuda.rst): MX B, its codes converted in registers, takes
 * 0.31-0.33 ms from M = 64 to 128, against cuda-weight-only's 0.18 / 0.26
 * ms (MXFP4 / MXFP8) at 64 and 0.33 / 0.46 at 96, where it reads B twice.
 * NVFP4 B goes through the pre-pass first: 0.51 ms at 128 and 144 against
 * 0.40 (two groups) and 0.56 (three).  So MX ranks first from the second
 * group on, NVFP4 from the third.
 */
constexpr uint32_t WGMMA_MIN_M_MX = 65;
constexpr uint32_t WGMMA_MIN_M_NVFP4 = 129;

struct act_args {
	const uint8_t *a;		/* A's first row, bf16 */
	uint64_t stride;		/* bytes */
	uint32_t m, k, kt;		/* rows, columns, chunks of 64 */
	uint8_t *out;			/* m rows of kt * 128 bytes */
	uint32_t *rflag;		/* per row: the epilogue's rb */
	uint32_t rflag_value;
};

/*
 * A's rows as the bf16 kernels' B: chunk c of a row holds k = 64 c + 16 q +
 * 4 sl + 2 half + h at bf16 position 16 sl + 8 half + 2 q + h (the order
 * sm90_prep_bf16() writes an operand in, so that both operands of a
 * wgmma meet in the same K order), k past K zero.  One thread per (row,
 * c, sl): its four runs of 4 elements in, 32 contiguous bytes out.  Also
 * each row's rb for the epilogue (2^(rb - 127) = 1 for MX; 0, no NaN
 * flag, for NVFP4).
 */
__global__ void wo_act_kernel(const struct act_args p)
{
	const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t c = t / 4, sl = t % 4;

	if (c >= p.kt)
		return;
	for (uint32_t r = blockIdx.y; r < p.m; r += gridDim.y) {
		const uint16_t *row = (const uint16_t *)(p.a + r * p.stride);
		const bool wide = !((uintptr_t)row & 7);
		uint32_t lo[4], hi[4];

#pragma unroll
		for (int q = 0; q < 4; q++) {
			const uint32_t k0 = 64 * c + 16 * q + 4 * sl;

			if (wide && k0 + 3 < p.k) {
				const uint2 v = *(const uint2 *)(row + k0);

				lo[q] = v.x;
				hi[q] = v.y;
			} else {
				uint32_t e[4];

				for (int j = 0; j < 4; j++)
					e[j] = k0 + j < p.k ? row[k0 + j] : 0;
				lo[q] = e[0] | e[1] << 16;
				hi[q] = e[2] | e[3] << 16;
			}
		}
		uint4 *dst = (uint4 *)(p.out + ((uint64_t)r * p.kt + c) * SM90_BF16_KC * 2 + sl * 32);

		dst[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
		dst[1] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
		if (t == 0)
			p.rflag[r] = p.rflag_value;
	}
}

/*
 * The stripes of 128 rows of B that gemm_sm90_bf16_kernel left (its list
 * of the fp8 kernel's tiles, tiles_n8 per stripe) as flags.
 */
__global__ void wo_stripes_kernel(const uint32_t *count, const uint32_t *list,
				  uint32_t tiles_n8, uint32_t *stripes)
{
	for (uint32_t i = threadIdx.x; i < *count; i += blockDim.x)
		stripes[list[i] / tiles_n8] = 1;
}

size_t align1k(size_t n)
{
	return (n + 1023) / 1024 * 1024;
}

} /* namespace */

const char *cuda_weight_only_wgmma_reject(struct cuda_device *cd,
					  const struct mxa_op_desc *desc)
{
	const uint64_t tiles = ((desc->n + (uint64_t)SM90_BF16_BM - 1) / SM90_BF16_BM) *
			       ((desc->m + (uint64_t)SM90_BF16_BN - 1) / SM90_BF16_BN);
	const char *no = cuda_sm90_reject(cd);

	if (no)
		return no;
	if (desc->a_dtype != MXA_DTYPE_BF16)
		return "cuda-weight-only-wgmma takes bf16 A only (fp32 A is three bf16 pieces: cuda-weight-only)";
	if (tiles >= 1ull << 31)
		return "cuda-weight-only-wgmma runs ceil(N / 128) * ceil(M / 256) < 2^31 tiles";
	/* Its redo (MX stripes that cannot be folded) is cuda-weight-only's kernel. */
	return cuda_weight_only_reject(cd, desc);
}

int cuda_weight_only_wgmma_rank(struct cuda_device *cd, const struct mxa_op_desc *desc)
{
	const uint32_t min_m = desc->b_scale_type == MXA_SCALE_UE4M3 ? WGMMA_MIN_M_NVFP4 :
								     WGMMA_MIN_M_MX;

	(void)cd;
	/* Above cuda-weight-only (10) from min_m rows of A on. */
	return desc->m >= min_m ? 20 : 5;
}

int cuda_launch_gemm_weight_only_wgmma(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_matrix *x = &job->b;		/* the kernel's A: B */
	const struct mxa_dense *y = &job->a_dense;	/* the kernel's B: A */
	const bool nv = x->scale_type == MXA_SCALE_UE4M3;
	const uint32_t k = x->cols, blocks32 = (k + 31) / 32, kt = (blocks32 + 1) / 2;
	const uint64_t row_bytes = (uint64_t)kt * SM90_BF16_KC * 2;
	const uint8_t *ad = cuda_ptr(y->buf, y->offset);
	const uint32_t tiles_m = (x->rows + SM90_BF16_BM - 1) / SM90_BF16_BM;
	const uint32_t tiles_n = (y->rows + SM90_BF16_BN - 1) / SM90_BF16_BN;
	const bool fp8 = x->elem == MXA_ELEM_E4M3 || x->elem == MXA_ELEM_E5M2;
	/* B's codes in registers: the rule the MX x MX bf16 paths rank by. */
	const bool in_regs = !nv && (fp8 || (uint64_t)tiles_m * tiles_n < 2ull * (uint32_t)cd->sms);
	const size_t x_bytes = in_regs ? 0 : align1k((size_t)x->rows * row_bytes);
	const size_t y_bytes = align1k((size_t)y->rows * row_bytes);
	struct sm90_bf16_args b = {};
	struct sm90_prep_args pa;
	struct act_args act;
	void *xscratch = NULL, *xs_scratch = NULL, *scratch = NULL;
	const uint8_t *xd;
	uint32_t *flags, xpad;
	uint64_t xs;
	CUtensorMap maps[3];
	cudaError_t e;
	int ret;

	if ((uintptr_t)ad % 2)
		return cuda_err(-EINVAL,
				"cuda-weight-only-wgmma: a at device address %p is not 2-byte aligned (a wrapped buffer's base plus offset must be)",
				(const void *)ad);
	b.m = x->rows;
	b.n = y->rows;
	b.blocks = blocks32;
	b.elem_a = sm90_elem_of(x->elem);
	b.out = sm90_c_of(job);
	b.transposed = 1;
	b.tiles_m = tiles_m;
	b.tiles_n = tiles_n;
	b.tiles_n8 = 2 * b.tiles_n;
	b.nvfp4 = nv;
	/* C = acc * 2^16 * t1 * t2 = acc * 2^8 * the tensor scale. */
	if (nv)
		sm90_nvfp4_factors_of(x->tensor_scale != 0.0f ? x->tensor_scale : 1.0f,
				      0x1p-8f, &b.t1, &b.t2);

	ret = sm90_aligned_data(cd, x, &xd, &xs, &xscratch);
	if (!ret && !nv)
		ret = sm90_kmajor_scales(cd, x, true, NULL, &xs_scratch, &xpad);
	if (ret)
		goto out;
	ret = sm90_bf16_scratch(cd, &b, x_bytes + y_bytes, &scratch,
				"cuda-weight-only-wgmma: scratch");
	if (ret)
		goto out;
	flags = (uint32_t *)b.rmax_a;
	/* MX: B's row maxima from its K-major scales (its row words unused). */
	if (!nv)
		b.rmax_a = sm90_rmax_of(xs_scratch, x);

	if (nv) {
		ret = sm90_prep_nvfp4(cd, sm90_nvfp4_prep_args_of(x, xd, xs, (uint8_t *)scratch,
								 flags));
	} else if (!in_regs) {
		static_assert(SM90_BF16_BM == 1 << 7, "a flag per stripe by a shift");
		pa = sm90_prep_args_of(x, xd, xs, xs_scratch, b.rmax_a, (uint8_t *)scratch,
				       (uint32_t *)b.bad_rows, 7);
		ret = sm90_prep_bf16(cd, pa);
	}
	if (ret)
		goto out;

	act.a = ad;
	act.stride = mxa__dense_stride(y);
	act.m = y->rows;
	act.k = k;
	act.kt = kt;
	act.out = (uint8_t *)scratch + x_bytes;
	act.rflag = (uint32_t *)b.rmax_b;
	act.rflag_value = nv ? 0 : 127;
	wo_act_kernel<<<dim3((kt * 4 + 127) / 128, y->rows < 65535 ? y->rows : 65535), 128, 0,
			cd->stream>>>(act);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		ret = cuda_fail(e, "cuda-weight-only-wgmma: A's pre-pass");
		goto out;
	}

	if (in_regs)
		ret = sm90_map_codes(&maps[0], x, xd, xs, SM90_BF16_BM);
	else
		ret = sm90_make_map(&maps[0], (const uint8_t *)scratch, row_bytes, x->rows,
				    row_bytes, SM90_BF16_KC * 2, SM90_BF16_BM,
				    CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret)
		ret = sm90_make_map(&maps[1], act.out, row_bytes, y->rows, row_bytes,
				    SM90_BF16_KC * 2, SM90_BF16_BN, CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret && in_regs)
		ret = sm90_make_map(&maps[2], (const uint8_t *)xs_scratch, xpad, x->cols / 32,
				    xpad, SM90_BF16_BM, 2, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret)
		ret = in_regs ? sm90_launch_bf16(cd, maps, b) : sm90_launch_bf16_ss(cd, maps, b);
	/* The stripes they left (the pre-pass flagged them, or the list). */
	if (!ret && in_regs) {
		wo_stripes_kernel<<<1, 256, 0, cd->stream>>>(b.list_count, b.list, b.tiles_n8,
							     (uint32_t *)b.bad_rows);
		e = cudaGetLastError();
		if (e != cudaSuccess)
			ret = cuda_fail(e, "cuda-weight-only-wgmma: stripes");
	}
	/* ... by cuda-weight-only (nothing when there are none). */
	if (!ret && !nv)
		ret = cuda_weight_only_redo(cd, job, b.list_count, b.bad_rows);
	if (!ret && !nv && cuda_host->debug()) {
		uint32_t n = 0;

		if (cudaMemcpyAsync(&n, b.list_count, 4, cudaMemcpyDeviceToHost,
				    cd->stream) == cudaSuccess &&
		    cudaStreamSynchronize(cd->stream) == cudaSuccess)
			cuda_dbg("cuda-weight-only-wgmma: %u tiles of 128 x 128 left to cuda-weight-only (NaN/Inf codes, NaN scales or scale spans too wide for exact bf16)",
				 n);
	}
out:
	if (scratch)
		cudaFreeAsync(scratch, cd->stream);
	if (xs_scratch)
		cudaFreeAsync(xs_scratch, cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	return ret;
}
