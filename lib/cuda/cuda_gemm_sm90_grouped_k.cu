// SPDX-License-Identifier: MIT
/*
 * cuda-grouped-sm90, 2d x 2d (groups along K, the wgrad of
 * torch._scaled_grouped_mm): every group's tiles in one launch of the
 * bf16 kernel, the offsets never read on the host.  Below for MX operands;
 * NVFP4 x NVFP4 the same way with both operands folded by their pre-pass
 * and the bf16-ss kernel (launch_k_nvfp4()), K groups on 16.
 *
 * Group g is the dense GEMM of A's and B's K columns [ends[g - 1],
 * ends[g]) into its own M x N matrix, rows g x M of C.  The passes:
 *   - the schedule (one CTA) checks the device-side offsets as the library
 *     checks host-visible ones (lib/src/grouped.c) and turns them into
 *     each group's first block of 32, its first chunk of 64 in B's bf16
 *     (each group padded to whole chunks) and where its swizzled scales
 *     start; malformed offsets set a status word and nothing else runs
 *     (C untouched), the launcher reports them where the call waits;
 *   - A's and B's scales K-major over all of K, from plain or torchao's
 *     per-group swizzled layout, and each group's row maxima;
 *   - B to bf16 group by group (sm90_prep_bf16_grouped_k(): the group's
 *     row maxima, a flag per group and tile column where a row cannot
 *     fold);
 *   - the bf16 kernel over count x tiles_m x tiles_n tiles (group_k_tiles
 *     in cuda_gemm_sm90_bf16.cu): A's codes from the group's first block,
 *     the next group's codes in a chunk's tail kept out of the sum; an
 *     empty group's tiles write 0 (+ C_in).  C (count planes of M x N)
 *     by TMA stores where it is not accumulated and its rows are 16-byte
 *     aligned: a CTA waits only until they have read its staged tile.
 *     C's stores are most of what the kernel spends over the dense GEMM
 *     (8 groups write 8 times its C); by TMA they cost 3-6 % less, the
 *     rest is not overlapped (Documentation/bench-cuda.rst);
 *   - an fp32 kernel for the tiles it leaves (NaN/Inf codes, NaN scales,
 *     scale spans too wide to fold), exact in its special values as the
 *     2d x 3d one is.
 * Why one launch: per group, the dense path paid a host synchronisation,
 * a launch of each pass and a partial last wave (Documentation/
 * bench-cuda.rst).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cub/block/block_scan.cuh>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"
#include "cuda_sm90_fold.cuh"

namespace {

constexpr uint32_t BM = SM90_BF16_BM, BN = SM90_BF16_BN;
constexpr int SCHED_THREADS = 1024;

/* This pass's own refusals (status[0]), after the offsets' (enum sm90_sched_error). */
enum ksched_error {
	KSCHED_A_SCALES = SM90_SCHED_OWN,	/* a's per-group swizzled scales overrun their buffer */
	KSCHED_B_SCALES,			/* b's the same */
};

struct ksched_args {
	const int32_t *ends;
	uint32_t count, extent;
	uint32_t block;				/* 32 (MX) or 16 (NVFP4) */
	/* Per swizzled column of 4 blocks, bytes of each operand's (0: plain). */
	uint64_t a_swz_col, b_swz_col, a_avail, b_avail;
	uint32_t *block0, *chunk0, *swz0;	/* count + 1 each */
	uint32_t *status;			/* 4 words, zeroed; [3]: the chunks */
};

/*
 * The groups from the offsets, by one CTA: each thread checks a run of
 * groups, block scans give each group its first chunk and its first
 * swizzled column.  The first failing end (lowest index) is the one
 * reported, as on the host.
 */
__global__ void __launch_bounds__(SCHED_THREADS) kschedule_kernel(const struct ksched_args p)
{
	typedef cub::BlockScan<uint32_t, SCHED_THREADS> scan;
	__shared__ typename scan::TempStorage tmp;
	__shared__ unsigned long long first_bad;
	const uint32_t per = (p.count + SCHED_THREADS - 1) / SCHED_THREADS;
	const uint32_t g0 = min(threadIdx.x * per, p.count), g1 = min(g0 + per, p.count);
	unsigned long long bad = ~0ull;
	uint32_t chunks = 0, cols = 0, cfirst, ctotal, sfirst, stotal, g;

	if (threadIdx.x == 0)
		first_bad = ~0ull;
	__syncthreads();
	for (g = g0; g < g1; g++) {
		uint32_t blocks;

		bad = sm90_end_fault(p.ends, g, p.extent, p.block);
		if (bad != ~0ull)
			break;
		blocks = (uint32_t)(p.ends[g] - (g ? p.ends[g - 1] : 0)) / p.block;
		chunks += (blocks * p.block + 63) / 64;
		cols += (blocks + 3) / 4;
	}
	sm90_vote_fault(&first_bad, bad, p.ends, p.count, p.extent);
	scan(tmp).ExclusiveSum(chunks, cfirst, ctotal);
	__syncthreads();	/* tmp again */
	scan(tmp).ExclusiveSum(cols, sfirst, stotal);
	__syncthreads();
	if (first_bad != ~0ull) {
		if (threadIdx.x == 0) {
			const uint32_t i = (uint32_t)(first_bad >> 8);

			p.status[1] = i;
			p.status[2] = (uint32_t)p.ends[i];
			p.status[0] = (uint32_t)(first_bad & 0xff);
		}
		return;
	}
	for (g = g0; g < g1; g++) {
		const uint32_t blocks = (uint32_t)(p.ends[g] - (g ? p.ends[g - 1] : 0)) / p.block;

		p.block0[g] = (g ? (uint32_t)p.ends[g - 1] : 0) / p.block;
		p.chunk0[g] = cfirst;
		p.swz0[g] = sfirst;
		cfirst += (blocks * p.block + 63) / 64;
		sfirst += (blocks + 3) / 4;
	}
	if (threadIdx.x != 0)
		return;
	p.block0[p.count] = p.extent / p.block;
	p.chunk0[p.count] = ctotal;
	p.swz0[p.count] = stotal;
	p.status[3] = ctotal;
	if (p.a_swz_col && stotal * p.a_swz_col > p.a_avail)
		p.status[0] = KSCHED_A_SCALES;
	else if (p.b_swz_col && stotal * p.b_swz_col > p.b_avail)
		p.status[0] = KSCHED_B_SCALES;
	if (p.status[0])
		p.status[1] = stotal;
}

/* An operand's scales K-major over all of K and its row maxima per group. */
struct kscales_args {
	const uint8_t *scale;
	uint64_t stride;		/* plain: bytes per row */
	int swizzled;			/* torchao's per-group layout (k.swz0) */
	uint32_t rows, rows_pad, blocks;
	struct sm90_kgroups k;
	uint8_t *out;			/* [blocks][rows_pad] */
	uint32_t *rmax;			/* [count][rows] */
};

/*
 * Output byte (kb, r): threads along rows (coalesced stores), blocks
 * strided over the grid's y; a swizzled scale is found in its group's
 * tiles, which start where the groups before end (sm90_group_of()).
 */
__global__ void kscales_kernel(const struct kscales_args p)
{
	const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t row_tiles = (p.rows + BM - 1) / BM;

	if (*p.k.status || r >= p.rows_pad)
		return;
	for (uint32_t kb = blockIdx.y; kb < p.blocks; kb += gridDim.y) {
		uint8_t v = 0;

		if (r < p.rows && !p.swizzled) {
			v = p.scale[r * p.stride + kb];
		} else if (r < p.rows) {
			/* Never an empty group: they have no blocks. */
			const uint32_t g = sm90_group_of(p.k.block0, p.k.count, kb);
			const uint32_t cols = p.k.swz0[g + 1] - p.k.swz0[g];

			v = p.scale[(uint64_t)p.k.swz0[g] * row_tiles * 512 +
				    sm90_scale_index(true, 0, cols, r, kb - p.k.block0[g])];
		}
		p.out[(uint64_t)kb * p.rows_pad + r] = v;
	}
}

/*
 * rmax[g][r]: the largest scale of row r in group g other than NaN (0xff),
 * 0 if none.  Groups strided over the grid's y (count may pass 65535).
 */
__global__ void krmax_kernel(const struct kscales_args p)
{
	const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;

	if (*p.k.status || r >= p.rows)
		return;
	for (uint32_t g = blockIdx.y; g < p.k.count; g += gridDim.y) {
		uint32_t m = 0;

		for (uint32_t kb = p.k.block0[g]; kb < p.k.block0[g + 1]; kb++) {
			const uint32_t v = p.out[(uint64_t)kb * p.rows_pad + r];

			m = v != 0xff && v > m ? v : m;
		}
		p.rmax[(uint64_t)g * p.rows + r] = m;
	}
}

/* The tiles the bf16 kernel left: read in place, one C element per step. */
struct kfallback_args {
	const uint8_t *a, *b;		/* codes */
	uint64_t a_stride, b_stride;
	const uint8_t *sa, *sb;		/* K-major scales, all of K */
	uint32_t a_pad, b_pad;
	int ea, eb;			/* enum sm90_elem */
	uint32_t m, n, tiles_m, tiles_n;
	struct sm90_kgroups k;
	struct sm90_c out;
};

/*
 * C = sum over the group's blocks of (the block's 32 exact products
 * summed in fp32) times 2^sa * 2^sb (promote_fma(), as the fp8 kernel
 * promotes), + C_in: what the 2d x 3d fallback computes, for a tile of
 * group_k_tiles (its id the CTA's).
 */
__global__ void __launch_bounds__(256) kfallback_kernel(const struct kfallback_args p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	const uint32_t per = p.tiles_m * p.tiles_n;

	for (uint32_t i = blockIdx.x; i < *p.k.list_count; i += gridDim.x) {
		const uint32_t id = p.k.list[i], g = id / per;
		const uint32_t kb0 = p.k.block0[g], kb1 = p.k.block0[g + 1];
		uint32_t tm, tn;

		sm90_group_raster(p.tiles_m, p.tiles_n, id % per, &tm, &tn);
		for (uint32_t e = threadIdx.x; e < BM * BN; e += blockDim.x) {
			const uint32_t r = tm * BM + e / BN, j = tn * BN + e % BN;

			if (r >= p.m || j >= p.n)
				continue;
			store_c_value(p.out, ((uint64_t)g * p.m + r) * p.out.stride + j,
				      sm90_fallback_dot(p.a + r * p.a_stride, p.ea,
							p.b + (uint64_t)j * p.b_stride, p.eb,
							p.sa, p.a_pad, r, p.sb, p.b_pad, j, kb0, kb1));
		}
	}
#endif
}

/* The schedule pass's verdict, as lib/src/grouped.c words it on the host. */
int report_kstatus(const struct mxa_job *job, const uint32_t *st)
{
	if (st[0] < SM90_SCHED_OWN)
		return sm90_offsets_verdict(st, "K", job->a.cols, mxa__block(&job->a));
	switch (st[0]) {
	case KSCHED_A_SCALES:
	case KSCHED_B_SCALES: {
		const struct mxa_matrix *m = st[0] == KSCHED_A_SCALES ? &job->a : &job->b;

		return cuda_err(-EOVERFLOW, "gemm_grouped: %s's per-group swizzled scales need %llu bytes after scale_offset, the buffer has %zu",
				st[0] == KSCHED_A_SCALES ? "a" : "b",
				(unsigned long long)st[1] * 4 * ((m->rows + BM - 1) / BM * BM),
				m->scale->size - m->scale_offset);
	}
	}
	return cuda_err(-EIO, "cuda-grouped-sm90: unknown schedule status %u", st[0]);
}

/*
 * One operand's K-major scales and per-group row maxima into *scratch
 * (rows_pad on 16: the scale map's row pitch).
 */
int kscales_of(struct cuda_device *cd, const struct mxa_matrix *m, const struct sm90_kgroups &k,
	       void **scratch, struct kscales_args *s)
{
	cudaError_t e;

	memset(s, 0, sizeof(*s));
	s->scale = cuda_ptr(m->scale, m->scale_offset);
	s->swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	s->stride = s->swizzled ? 0 : mxa__scale_stride(m);
	s->rows = m->rows;
	s->rows_pad = (m->rows + 15) / 16 * 16;
	s->blocks = m->cols / 32;
	s->k = k;
	e = cudaMallocAsync(scratch, (size_t)s->rows_pad * s->blocks + 16 +
				     (size_t)k.count * m->rows * 4, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-grouped-sm90: scale scratch");
	s->out = (uint8_t *)*scratch;
	s->rmax = (uint32_t *)((uint8_t *)*scratch + ((size_t)s->rows_pad * s->blocks + 15) / 16 * 16);
	kscales_kernel<<<dim3((s->rows_pad + 255) / 256, s->blocks < 65535 ? s->blocks : 65535),
			 256, 0, cd->stream>>>(*s);
	krmax_kernel<<<dim3((s->rows + 127) / 128, k.count < 65535 ? k.count : 65535), 128, 0,
		       cd->stream>>>(*s);
	return 0;
}

/*
 * MX: scales K-major and row maxima per group for both operands, B to
 * bf16 group by group, the bf16 kernel over every group's tiles (C by TMA
 * where it can), the fp32 fallback for the tiles it leaves.
 */
int launch_k_mx(struct cuda_device *cd, const struct mxa_job *job, const struct sm90_kgroups &k,
		uint32_t tiles_m, uint32_t tiles_n)
{
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	const uint32_t blocks = a->cols / 32;
	const uint64_t tiles = (uint64_t)k.count * tiles_m * tiles_n;
	/* Each group padded to whole chunks: at most one more chunk per group. */
	const uint32_t chunks_max = (blocks + 1) / 2 + k.count;
	const uint64_t b_row_bytes = (uint64_t)chunks_max * SM90_BF16_KC * 2;
	const size_t cstride = mxa__dense_stride(&job->dense);
	void *scr[5] = { NULL, NULL, NULL, NULL, NULL };	/* a, b copies, scales, bf16 */
	struct kscales_args ssa, ssb;
	struct sm90_prep_args pb;
	struct sm90_bf16_args p;
	struct kfallback_args fb;
	const uint8_t *ad = NULL, *bd = NULL;
	uint64_t as = 0, bs = 0;
	CUtensorMap maps[4];
	cudaError_t e;
	int ret;

	ret = sm90_aligned_data(cd, a, &ad, &as, &scr[0]);
	if (!ret)
		ret = sm90_aligned_data(cd, b, &bd, &bs, &scr[1]);
	if (!ret)
		ret = kscales_of(cd, a, k, &scr[2], &ssa);
	if (!ret)
		ret = kscales_of(cd, b, k, &scr[3], &ssb);
	if (!ret) {
		e = cudaMallocAsync(&scr[4], (size_t)b->rows * b_row_bytes, cd->stream);
		if (e != cudaSuccess)
			ret = cuda_fail(e, "cuda-grouped-sm90: bf16 scratch");
	}
	if (!ret) {
		pb = sm90_prep_args_of(b, bd, bs, ssb.out, ssb.rmax, (uint8_t *)scr[4],
				       (uint32_t *)k.bad, 0);
		pb.rows_pad = ssb.rows_pad;
		pb.tile_shift = 8;	/* a flag per tile column of 256 rows */
		ret = sm90_prep_bf16_grouped_k(cd, pb, k, chunks_max, tiles_n);
	}
	if (!ret)
		ret = sm90_map_codes(&maps[0], a, ad, as, BM);
	if (!ret)
		ret = sm90_make_map(&maps[1], (const uint8_t *)scr[4], b_row_bytes, b->rows,
				    b_row_bytes, SM90_BF16_KC * 2, BN, CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret)
		ret = sm90_make_map(&maps[2], ssa.out, ssa.rows_pad, blocks, ssa.rows_pad, BM, 2,
				    CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret) {
		memset(&p, 0, sizeof(p));
		p.out = sm90_c_of(job);
		p.c_tma = !p.out.accumulate && !((uintptr_t)p.out.c & 15) && !(cstride & 15);
		maps[3] = maps[0];
		if (p.c_tma)
			ret = sm90_make_map_3d(&maps[3], p.out.c,
					       (uint64_t)b->rows * (p.out.bf16 ? 2 : 4), a->rows,
					       k.count, cstride, (uint64_t)a->rows * cstride, 128, BM,
					       CU_TENSOR_MAP_SWIZZLE_128B);
	}
	if (!ret) {
		p.m = a->rows;
		p.n = b->rows;
		p.blocks = blocks;
		p.elem_a = sm90_elem_of(a->elem);
		p.tiles_m = tiles_m;
		p.tiles_n = tiles_n;
		p.rmax_a = ssa.rmax;
		p.rmax_b = ssb.rmax;
		p.kgroups = k;
		ret = sm90_launch_bf16_grouped_k(cd, maps, p);
	}
	if (!ret) {
		memset(&fb, 0, sizeof(fb));
		fb.a = ad;
		fb.b = bd;
		fb.a_stride = as;
		fb.b_stride = bs;
		fb.sa = ssa.out;
		fb.sb = ssb.out;
		fb.a_pad = ssa.rows_pad;
		fb.b_pad = ssb.rows_pad;
		fb.ea = sm90_elem_of(a->elem);
		fb.eb = sm90_elem_of(b->elem);
		fb.m = a->rows;
		fb.n = b->rows;
		fb.tiles_m = tiles_m;
		fb.tiles_n = tiles_n;
		fb.k = k;
		fb.out = p.out;
		kfallback_kernel<<<(unsigned int)(tiles < 4u * cd->sms ? tiles : 4u * cd->sms), 256,
				   0, cd->stream>>>(fb);
	}
	for (int i = 4; i >= 0; i--)
		if (scr[i])
			cudaFreeAsync(scr[i], cd->stream);
	return ret;
}

/*
 * NVFP4 x NVFP4 (UE4M3 scales per 16, K groups on 16): both operands to
 * exact bf16 with their block scales folded, group by group into the same
 * padded chunks (sm90_prep_nvfp4_grouped_k(): per-group swizzled scales
 * read in place, NaN-scale flags per group and row), then the bf16-ss
 * kernel over every group's tiles with NVFP4's epilogue.  Every tile
 * folds: nothing is left to a fallback.
 */
int launch_k_nvfp4(struct cuda_device *cd, const struct mxa_job *job,
		   const struct sm90_kgroups &k, uint32_t tiles_m, uint32_t tiles_n)
{
	/* Each group padded to whole chunks of 4 blocks: at most one more per group. */
	const uint32_t chunks_max = (job->a.cols / 16 + 3) / 4 + k.count;
	const uint64_t row_bytes = (uint64_t)chunks_max * SM90_BF16_KC * 2;
	const struct mxa_matrix *ms[2] = { &job->a, &job->b };
	void *scratch = NULL, *dscr[2] = { NULL, NULL };
	size_t bf_at[2], flag_at, total;
	struct sm90_nvfp4_prep_args pp;
	struct sm90_bf16_args p;
	CUtensorMap maps[2];
	cudaError_t e;
	int ret = 0, i;

	bf_at[0] = 0;
	bf_at[1] = ((size_t)ms[0]->rows * row_bytes + 1023) / 1024 * 1024;
	flag_at = bf_at[1] + ((size_t)ms[1]->rows * row_bytes + 1023) / 1024 * 1024;
	total = flag_at + (size_t)k.count * (ms[0]->rows + ms[1]->rows) * 4;
	e = cudaMallocAsync(&scratch, total, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync((uint8_t *)scratch + flag_at, 0, total - flag_at, cd->stream);
	if (e != cudaSuccess) {
		if (scratch)
			cudaFreeAsync(scratch, cd->stream);
		return cuda_fail(e, "cuda-grouped-sm90: NVFP4 scratch");
	}
	memset(&p, 0, sizeof(p));
	p.rmax_a = (const uint32_t *)((uint8_t *)scratch + flag_at);
	p.rmax_b = p.rmax_a + (size_t)k.count * ms[0]->rows;
	for (i = 0; i < 2 && !ret; i++) {
		const uint8_t *data;
		uint64_t stride;

		ret = sm90_aligned_data(cd, ms[i], &data, &stride, &dscr[i]);
		if (ret)
			break;
		pp = sm90_nvfp4_prep_args_of(ms[i], data, stride, (uint8_t *)scratch + bf_at[i],
					     (uint32_t *)(i ? p.rmax_b : p.rmax_a));
		ret = sm90_prep_nvfp4_grouped_k(cd, pp, k, chunks_max);
		if (!ret)
			ret = sm90_make_map(&maps[i], pp.out, row_bytes, ms[i]->rows, row_bytes,
					    SM90_BF16_KC * 2, i ? BN : BM,
					    CU_TENSOR_MAP_SWIZZLE_128B);
	}
	if (!ret) {
		p.m = ms[0]->rows;
		p.n = ms[1]->rows;
		p.blocks = (job->a.cols + 31) / 32;
		p.elem_a = SM90_E2M1;
		p.out = sm90_c_of(job);
		p.tiles_m = tiles_m;
		p.tiles_n = tiles_n;
		p.nvfp4 = 1;
		sm90_nvfp4_factors(&job->a, &job->b, &p.t1, &p.t2);
		p.kgroups = k;
		ret = sm90_launch_bf16_ss_grouped_k(cd, maps, p);
	}
	for (i = 0; i < 2; i++)
		if (dscr[i])
			cudaFreeAsync(dscr[i], cd->stream);
	cudaFreeAsync(scratch, cd->stream);
	return ret;
}

} /* namespace */

const char *cuda_grouped_k_reject(struct cuda_device *cd, const struct mxa_job *job)
{
	const uint64_t tiles = (uint64_t)job->groups.count * ((job->a.rows + BM - 1) / BM) *
			       ((job->b.rows + BN - 1) / BN);

	if (job->a.scale_type != job->b.scale_type)
		return "mixed NVFP4 x MX operands";
	if (!sm90_bf16_fits(cd))
		return "the bf16 kernels' shared memory does not fit";
	if (tiles > INT32_MAX)
		return "more tiles than one grid holds";
	if ((uint64_t)job->groups.count * job->a.rows > UINT32_MAX ||
	    (uint64_t)job->groups.count * job->b.rows > UINT32_MAX)
		return "count x M or count x N beyond 2^32 - 1";
	return NULL;
}

/*
 * 2d x 2d in one launch of each pass (the file's comment);
 * cuda_grouped_k_reject(cd, job) must be NULL.
 */
int cuda_launch_gemm_grouped_k(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_grouped *gr = &job->groups;
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	const bool nvfp4 = a->scale_type == MXA_SCALE_UE4M3;
	const uint32_t count = gr->count;
	const uint32_t tiles_m = (a->rows + BM - 1) / BM, tiles_n = (b->rows + BN - 1) / BN;
	const uint64_t tiles = (uint64_t)count * tiles_m * tiles_n;
	struct ksched_args sp;
	struct sm90_kgroups k;
	uint32_t st[4] = { 0, 0, 0, 0 }, left = 0;
	void *sched = NULL;
	size_t sched_bytes;
	cudaError_t e;
	int ret;

	/* status, block0, chunk0, swz0, list count, list, flags per group and tile column */
	sched_bytes = 16 + 3 * ((size_t)count + 1) * 4 + 4 + tiles * 4 +
		      (size_t)count * tiles_n * 4;
	e = cudaMallocAsync(&sched, sched_bytes, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(sched, 0, sched_bytes, cd->stream);
	if (e != cudaSuccess) {
		if (sched)
			cudaFreeAsync(sched, cd->stream);
		return cuda_fail(e, "cuda-grouped-sm90: schedule scratch");
	}
	k.status = (const uint32_t *)sched;
	k.block0 = k.status + 4;
	k.chunk0 = k.block0 + count + 1;
	k.swz0 = k.chunk0 + count + 1;
	k.count = count;
	k.list_count = (uint32_t *)(k.swz0 + count + 1);
	k.list = k.list_count + 1;
	k.bad = k.list + tiles;

	memset(&sp, 0, sizeof(sp));
	sp.ends = (const int32_t *)cuda_ptr(gr->offsets, gr->offsets_offset);
	sp.count = count;
	sp.extent = a->cols;
	sp.block = mxa__block(a);
	if (a->scale_layout == MXA_LAYOUT_SWIZZLED)
		sp.a_swz_col = (uint64_t)(a->rows + BM - 1) / BM * BM * 4;
	if (b->scale_layout == MXA_LAYOUT_SWIZZLED)
		sp.b_swz_col = (uint64_t)(b->rows + BM - 1) / BM * BM * 4;
	sp.a_avail = a->scale->size - a->scale_offset;
	sp.b_avail = b->scale->size - b->scale_offset;
	sp.block0 = (uint32_t *)k.block0;
	sp.chunk0 = (uint32_t *)k.chunk0;
	sp.swz0 = (uint32_t *)k.swz0;
	sp.status = (uint32_t *)k.status;
	kschedule_kernel<<<1, SCHED_THREADS, 0, cd->stream>>>(sp);

	ret = nvfp4 ? launch_k_nvfp4(cd, job, k, tiles_m, tiles_n) :
		      launch_k_mx(cd, job, k, tiles_m, tiles_n);
	/*
	 * The verdict on the offsets, where the call waits for the stream
	 * anyway (not on a caller's stream: no host synchronisation there).
	 */
	if (!ret && sm90_grouped_waits(cd)) {
		ret = sm90_grouped_verdict(cd, sched, k.list_count, st, &left);
		if (!ret)
			ret = report_kstatus(job, st);
		if (!ret)
			cuda_dbg("cuda-grouped-sm90: 2d x 2d in one launch, %s, %u groups, %u chunks of 64, %llu tiles of 128 x 256; %u left to the fp32 fallback (NaN/Inf codes, NaN scales or scale spans too wide for exact bf16 operands)",
				 nvfp4 ? "NVFP4" : "MX", count, st[3], (unsigned long long)tiles,
				 left);
	}
	cudaFreeAsync(sched, cd->stream);
	return ret;
}
