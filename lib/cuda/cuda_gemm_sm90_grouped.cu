// SPDX-License-Identifier: MIT
/*
 * cuda-grouped-sm90: the native grouped MX GEMM for Hopper.  2d x 3d
 * (torch._scaled_grouped_mm's forward and dgrad shape) on the bf16
 * kernel's main loop (cuda_gemm_sm90_bf16.cu, its group_tiles mapping),
 * below; 2d x 2d (wgrad) in one launch (cuda_gemm_sm90_grouped_k.cu),
 * M <= 32 (cuda-grouped-sm90-skinny) on a caller's stream, for NVFP4 and
 * from 16 groups on; else (and where that launch cannot take the job,
 * cuda_grouped_k_reject()) by the dense native GEMM per group, with the
 * offsets read on the host (launch_2d_2d()).
 *
 * 2d x 3d: the group offsets stay in device memory, the host never reads
 * them.  A one-CTA schedule pass checks them as the library checks
 * host-visible ones (lib/src/grouped.c) and turns them into each group's
 * first row and first tile row (sm90_groups); every later kernel reads
 * those.  With malformed offsets it records why in a status word, makes
 * the tile count 0 (nothing is written) and the launcher reports the
 * error where the call waits anyway (the device's own stream); on a
 * caller's stream the call returns once queued and C is left untouched.
 *
 * Then, per call: A's scales K-major with row maxima and B's (the stack of
 * all groups) the same, each group's swizzled scales found at their
 * torchao per-group position; B's stack to bf16 with a flag per row that
 * cannot be folded exactly (sm90_prep_bf16()); the bf16 kernel over the
 * tile rows of every group (an upper bound of ceil(M / 128) + groups tile
 * rows by ceil(N / 256) columns of CTAs, those past the real count exit);
 * and for the tiles it leaves (NaN/Inf codes, NaN scales, scale spans too
 * wide to fold) a plain fp32 kernel with the fp8 kernel's per-block
 * promotion, slow but exact in its special values.
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
#include "group_geom.h"

namespace {

constexpr uint32_t BM = SM90_BF16_BM, BN = SM90_BF16_BN;
constexpr int SCHED_THREADS = 1024;

/* This pass's own refusal (status[0]), after the offsets' (enum sm90_sched_error). */
enum sched_error {
	SCHED_A_SCALES = SM90_SCHED_OWN,	/* A's per-group swizzled scales overrun their buffer */
};

struct sched_args {
	const int32_t *ends;
	uint32_t count, extent;
	/* A's swizzled scales: bytes per 128-row tile row (0: plain). */
	uint64_t a_swz_row_bytes, a_scale_avail;
	uint32_t *row_start, *tile_start;	/* count + 1 each */
	uint32_t *unit_start;			/* count + 1, or NULL (sm90_groups) */
	uint32_t *status;			/* 4 words, zeroed */
};

/*
 * The groups from the offsets, by one CTA: each thread checks and counts
 * a run of groups, a block scan gives each group its first tile row.  The
 * first failing end (lowest index) is the one reported, as on the host.
 */
__global__ void __launch_bounds__(SCHED_THREADS) schedule_kernel(const struct sched_args p)
{
	typedef cub::BlockScan<uint32_t, SCHED_THREADS> scan;
	__shared__ typename scan::TempStorage tmp;
	__shared__ unsigned long long first_bad;
	const uint32_t per = (p.count + SCHED_THREADS - 1) / SCHED_THREADS;
	const uint32_t g0 = min(threadIdx.x * per, p.count), g1 = min(g0 + per, p.count);
	unsigned long long bad = ~0ull;
	uint32_t tiles = 0, first, total, g, utotal = 0;

	if (threadIdx.x == 0)
		first_bad = ~0ull;
	__syncthreads();
	for (g = g0; g < g1; g++) {
		bad = sm90_end_fault(p.ends, g, p.extent, 1);
		if (bad != ~0ull)
			break;
		tiles += ((uint32_t)(p.ends[g] - (g ? p.ends[g - 1] : 0)) + BM - 1) / BM;
	}
	sm90_vote_fault(&first_bad, bad, p.ends, p.count, p.extent);
	scan(tmp).ExclusiveSum(tiles, first, total);
	for (g = g0; g < g1; g++) {
		const int32_t prev = g ? p.ends[g - 1] : 0;

		p.row_start[g] = (uint32_t)prev;
		p.tile_start[g] = first;
		first += ((uint32_t)(p.ends[g] - prev) + BM - 1) / BM;
	}
	/* The same in units of 256 rows, for the swapped mapping. */
	if (p.unit_start) {
		uint32_t units = 0, ufirst;

		for (g = g0; g < g1; g++)
			units += ((uint32_t)(p.ends[g] - (g ? p.ends[g - 1] : 0)) + BN - 1) / BN;
		__syncthreads();	/* tmp again */
		scan(tmp).ExclusiveSum(units, ufirst, utotal);
		for (g = g0; g < g1; g++) {
			p.unit_start[g] = ufirst;
			ufirst += ((uint32_t)(p.ends[g] - (g ? p.ends[g - 1] : 0)) + BN - 1) / BN;
		}
	}
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	if (first_bad == ~0ull && p.a_swz_row_bytes &&
	    total * p.a_swz_row_bytes > p.a_scale_avail)
		first_bad = SCHED_A_SCALES;
	p.row_start[p.count] = p.extent;
	p.tile_start[p.count] = first_bad == ~0ull ? total : 0;
	if (p.unit_start)
		p.unit_start[p.count] = first_bad == ~0ull ? utotal : 0;
	p.status[3] = total;
	if (first_bad != ~0ull) {
		const uint32_t i = (uint32_t)(first_bad >> 8);

		p.status[1] = i;
		p.status[2] = i < p.count ? (uint32_t)p.ends[i] : 0;
		p.status[0] = (uint32_t)(first_bad & 0xff);
	}
}

/*
 * An operand's scales K-major ([blocks][rows_pad], rows past `rows` 0),
 * any layout in: plain (the whole matrix's rows, as the groups' rows are),
 * or swizzled per group as torchao lays them out: A of 2d x 3d (by_rows:
 * each group's rows on their own at its first tile row's 128-row tile row)
 * or the stack of B (n rows per group, each group's at g times its size).
 * A's go out by tile row (tile_rows, sm90_group_scale_row(): rows_pad is
 * then the bound on tile rows times 128), its row maxima by row of A.
 */
struct scales_args {
	const uint8_t *scale;
	uint64_t stride;
	uint32_t rows, blocks, rows_pad, swz_tiles;
	int swizzled, by_rows, tile_rows;
	uint32_t n;
	struct sm90_groups g;
	const uint32_t *status;
	uint8_t *out;
	uint32_t *rmax;
};

/*
 * Row r (< p.rows) of the scales wherever the layout puts it: its first
 * byte, or for swizzled ones its group's first byte and its row in the
 * group (*lr).  Found once per row (a binary search of the groups for A),
 * then scale_in() per block.
 */
__device__ __forceinline__ const uint8_t *scale_row(const struct scales_args &p, uint32_t r,
						   uint32_t *lr)
{
	uint32_t lo;
	uint64_t base;

	*lr = r;
	if (!p.swizzled)
		return p.scale + r * p.stride;
	if (p.by_rows) {
		lo = sm90_group_of(p.g.row_start, p.g.count, r);
		*lr = r - p.g.row_start[lo];
		base = (uint64_t)p.g.tile_start[lo] * BM;
	} else {
		lo = r / p.n;
		*lr = r % p.n;
		base = (uint64_t)lo * ((p.n + BM - 1) / BM * BM);
	}
	return p.scale + base * p.swz_tiles * 4;
}

/* Block kb of the row scale_row() found. */
__device__ __forceinline__ uint8_t scale_in(const struct scales_args &p, const uint8_t *row,
					    uint32_t lr, uint32_t kb)
{
	return p.swizzled ? row[sm90_scale_index(true, 0, p.swz_tiles, lr, kb)] : row[kb];
}

/*
 * By CTAs of 32 x 8 threads over 32 rows, walking all blocks in steps of
 * SK_COLS through a shared tile (reads along a row, writes along K-major
 * columns, both coalesced where the layout allows), with each row's
 * maximum on the way.
 */
constexpr uint32_t SK_COLS = 128;

__global__ void scales_kernel(const struct scales_args p)
{
	__shared__ uint8_t tile[32][SK_COLS + 4];
	const uint32_t r0 = blockIdx.x * 32;
	const uint32_t tx = threadIdx.x, ty = threadIdx.y;
	uint32_t m[4] = { 0, 0, 0, 0 }, src[4], lr[4];
	const uint8_t *row[4];
	bool own[4];

	if (p.status[0])
		return;
	/* The row of the operand each of this thread's output rows holds. */
#pragma unroll
	for (int j = 0; j < 4; j++) {
		src[j] = r0 + ty + 8 * j;
		own[j] = true;
		if (p.tile_rows)
			src[j] = sm90_group_scale_row(p.g, src[j], &own[j]);
		row[j] = src[j] < p.rows ? scale_row(p, src[j], &lr[j]) : NULL;
	}
	for (uint32_t kb0 = 0; kb0 < p.blocks; kb0 += SK_COLS) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const uint32_t i = ty + 8 * j;

#pragma unroll
			for (uint32_t c = 0; c < SK_COLS; c += 32) {
				const uint32_t kb = kb0 + c + tx;
				const uint8_t v = row[j] && kb < p.blocks ?
						  scale_in(p, row[j], lr[j], kb) : 0;

				tile[i][c + tx] = v;
				m[j] = max(m[j], v == 0xff ? 0u : (uint32_t)v);
			}
		}
		__syncthreads();
		for (uint32_t i = ty; i < SK_COLS; i += 8) {
			const uint32_t kb = kb0 + i, r = r0 + tx;

			if (kb < p.blocks && r < p.rows_pad)
				p.out[(uint64_t)kb * p.rows_pad + r] = tile[tx][i];
		}
		__syncthreads();
	}
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const uint32_t i = ty + 8 * j, v = __reduce_max_sync(0xffffffffu, m[j]);

		if (tx == 0 && !p.tile_rows && r0 + i < p.rows_pad)
			p.rmax[r0 + i] = v;
		/* By row of A, from the one output row in the row's own group. */
		if (tx == 0 && p.tile_rows && own[j] && src[j] < p.rows)
			p.rmax[src[j]] = v;
	}
}

/*
 * NVFP4's UE4M3 scales as a plain [rows][blocks] matrix from any layout
 * scale_row() reads (the per-group swizzled ones have no single stride),
 * for sm90_prep_nvfp4().  Grid: y over rows (strided), a CTA's threads
 * over a row's blocks.
 */
__global__ void plain_scales_kernel(const struct scales_args p)
{
	if (p.status[0])
		return;
	for (uint32_t r = blockIdx.y; r < p.rows; r += gridDim.y) {
		uint32_t lr;
		const uint8_t *row = scale_row(p, r, &lr);

		for (uint32_t kb = threadIdx.x; kb < p.blocks; kb += blockDim.x)
			p.out[(uint64_t)r * p.blocks + kb] = scale_in(p, row, lr, kb);
	}
}

/*
 * Queue the gather of m's per-group swizzled scales (m->rows x blocks;
 * A's groups by rows, else the stack of n-row matrices) into plain ones
 * at out, row after row; nothing runs for malformed offsets (status).
 */
void gather_plain_scales(struct cuda_device *cd, const struct mxa_matrix *m, uint32_t blocks,
			 bool by_rows, const struct sm90_groups &g, const uint32_t *status,
			 uint8_t *out)
{
	const uint32_t rows = m->rows;
	struct scales_args sa;

	memset(&sa, 0, sizeof(sa));
	sa.scale = cuda_ptr(m->scale, m->scale_offset);
	sa.rows = rows;
	sa.blocks = blocks;
	sa.swz_tiles = (blocks + 3) / 4;
	sa.swizzled = 1;
	sa.by_rows = by_rows;
	sa.n = g.n;
	sa.g = g;
	sa.status = status;
	sa.out = out;
	plain_scales_kernel<<<dim3(1, rows < 65535 ? rows : 65535), 128, 0, cd->stream>>>(sa);
}

/* The tiles the bf16 kernel left: read in place, one C element per step. */
struct fallback_args {
	const uint8_t *a, *b;		/* codes, A and the B stack */
	uint64_t a_stride, b_stride;
	const uint8_t *sa, *sb;		/* K-major scales, A's by tile row */
	uint32_t a_pad, b_pad;
	int ea, eb;			/* enum sm90_elem */
	uint32_t blocks, tiles_n;
	int swapped;			/* list ids of sm90_group_unit()'s mapping */
	struct sm90_groups g;
	struct sm90_c out;
};


/*
 * C = sum over blocks of (the block's 32 exact products summed in fp32)
 * times 2^sa * 2^sb (promote_fma(), as the fp8 kernel promotes), + C_in.
 */
__global__ void __launch_bounds__(256) fallback_kernel(const struct fallback_args p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	for (uint32_t i = blockIdx.x; i < *p.g.list_count; i += gridDim.x) {
		const uint32_t id = p.g.list[i];
		/* The tile's rows of A from a0 (scales from sa0), C's columns from c0. */
		uint32_t a0, a_end, sa0, b0, c0, cols;

		if (p.swapped) {
			const struct sm90_group_unit t = sm90_group_unit(p.g, id / p.tiles_n,
									 id % p.tiles_n);

			a0 = sa0 = t.a_row;
			a_end = t.a_end;
			b0 = t.b_row;
			c0 = t.n0;
			cols = BM;
		} else {
			const struct sm90_group_tile t = sm90_group_tile(p.g, id / p.tiles_n,
									 id % p.tiles_n);

			a0 = t.a_row;
			sa0 = t.sa_col;
			a_end = t.m_end;
			b0 = t.b_row;
			c0 = t.c_col;
			cols = BN;
		}
		for (uint32_t e = threadIdx.x; e < BM * BN; e += blockDim.x) {
			const uint32_t r = a0 + e / cols, j = e % cols;

			if (r >= a_end || c0 + j >= p.g.n)
				continue;
			store_c_value(p.out, r * p.out.stride + c0 + j,
				      sm90_fallback_dot(p.a + r * p.a_stride, p.ea,
							p.b + (uint64_t)(b0 + j) * p.b_stride, p.eb,
							p.sa, p.a_pad, sa0 + e / cols,
							p.sb, p.b_pad, b0 + j, 0, p.blocks));
		}
	}
#endif
}

/* tile_rows: A's, out by tile row, tile_rows of them at most (scales_args). */
int scales_of(struct cuda_device *cd, const struct mxa_matrix *m, uint32_t rows,
	      bool by_rows, uint32_t tile_rows, uint32_t n, const struct sm90_groups &g,
	      const uint32_t *status, void **scratch, struct scales_args *s)
{
	cudaError_t e;

	s->scale = cuda_ptr(m->scale, m->scale_offset);
	s->stride = mxa__scale_stride(m);
	s->rows = rows;
	s->blocks = m->cols / 32;
	s->rows_pad = tile_rows ? tile_rows * BM : (rows + 15) / 16 * 16;
	s->swz_tiles = (s->blocks + 3) / 4;
	s->swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	s->by_rows = by_rows;
	s->tile_rows = tile_rows != 0;
	s->n = n;
	s->g = g;
	s->status = status;
	e = cudaMallocAsync(scratch, (size_t)s->rows_pad * s->blocks + (size_t)s->rows_pad * 4 + 16,
			    cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-grouped-sm90: scale scratch");
	s->out = (uint8_t *)*scratch;
	s->rmax = (uint32_t *)((uint8_t *)*scratch +
			       ((size_t)s->rows_pad * s->blocks + 15) / 16 * 16);
	scales_kernel<<<(s->rows_pad + 31) / 32, dim3(32, 8), 0, cd->stream>>>(*s);
	return 0;
}

/* The schedule pass's verdict, as lib/src/grouped.c words it on the host. */
int report_status(const struct mxa_job *job, const uint32_t *st)
{
	const struct mxa_matrix *a = &job->a;

	if (st[0] < SM90_SCHED_OWN)
		return sm90_offsets_verdict(st, "M", a->rows, 1);
	switch (st[0]) {
	case SCHED_A_SCALES:
		return cuda_err(-EOVERFLOW, "gemm_grouped: a's per-group swizzled scales need %llu bytes (%u tile rows of 128), the buffer has %zu after scale_offset",
				(unsigned long long)st[3] * 128 * ((a->cols / mxa__block(a) + 3) / 4 * 4),
				st[3], a->scale->size - a->scale_offset);
	}
	return cuda_err(-EIO, "cuda-grouped-sm90: unknown schedule status %u", st[0]);
}

/* C (rows x cols) = 0, or C_in + 0 accumulating: an empty K group's. */
__global__ void zero_kernel(const struct sm90_c out, uint32_t rows, uint32_t cols)
{
	const uint64_t n = (uint64_t)rows * cols;

	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		store_c_value(out, i / cols * out.stride + i % cols, 0.0f);
}

/* The native GEMM's best path for a group (the table's ranks, cuda_sm90_select.cu). */
int best_path(struct cuda_device *cd, const struct mxa_job *sub, enum sm90_path *out)
{
	static const enum sm90_path paths[] = {
		SM90_PATH_SKINNY, SM90_PATH_DECODE, SM90_PATH_BF16, SM90_PATH_BF16_SS,
		SM90_PATH_FP8,
	};
	const struct mxa_op_desc d = sm90_desc_of(sub);
	int best = -1, r;

	for (unsigned int i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (cuda_sm90_path_reject(cd, &d, paths[i]))
			continue;
		r = cuda_sm90_path_rank(cd, &d, paths[i]);
		if (r > best) {
			best = r;
			*out = paths[i];
		}
	}
	return best < 0 ? cuda_err(-EOPNOTSUPP, "cuda-grouped-sm90: no native path for a %u x %u x %u group",
				   d.m, d.n, d.k) : 0;
}

/*
 * 2d x 2d (groups along K, wgrad): the offsets are read on the host, one
 * synchronisation (a schedule on the device, as 2d x 3d has, is not
 * written yet), checked as lib/src/grouped.c checks host-visible ones;
 * then each group is the dense GEMM of its K columns, by the native
 * GEMM's best path for its shape, into its own C; an empty group's C is
 * 0 (C_in + 0).  Nothing runs unless every end and every group's swizzled
 * scales pass.
 */
int launch_2d_2d(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_grouped *gr = &job->groups;
	const uint32_t count = gr->count, total = job->a.cols;
	const size_t cstride = mxa__dense_stride(&job->dense);
	const uint32_t kblock = mxa__block(&job->a) > mxa__block(&job->b) ?
				mxa__block(&job->a) : mxa__block(&job->b);
	uint64_t swz[2] = { 0, 0 };
	int32_t *ends = (int32_t *)malloc((size_t)count * 4);
	struct mxa_job sub;
	enum sm90_path path;
	int32_t prev = 0;
	cudaError_t e;
	uint32_t g;
	int ret = 0;

	if (!ends)
		return -ENOMEM;
	e = cudaMemcpyAsync(ends, cuda_ptr(gr->offsets, gr->offsets_offset), (size_t)count * 4,
			    cudaMemcpyDeviceToHost, cd->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(cd->stream);
	if (e != cudaSuccess)
		ret = cuda_fail(e, "cuda-grouped-sm90: reading the offsets");
	for (g = 0; g < count && !ret; g++) {
		if (ends[g] < prev)
			ret = cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d is below %s (offsets must not decrease and start at >= 0)",
				       g, ends[g], g ? "offsets[i - 1]" : "0");
		else if ((uint32_t)ends[g] > total)
			ret = cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d is beyond the total K = %u",
				       g, ends[g], total);
		else if (ends[g] % kblock)
			ret = cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d: K group boundaries must be multiples of the block size %u",
				       g, ends[g], kblock);
		prev = ends[g];
	}
	if (!ret && (uint32_t)prev != total)
		ret = cuda_err(-EINVAL, "gemm_grouped: the last offset (offsets[%u] = %d) must equal the total K = %u",
			       count - 1, prev, total);
	/* Every group's swizzled scales inside their buffers, before anything runs. */
	for (g = 0, prev = 0; g < count && !ret; prev = ends[g], g++) {
		struct mxa_matrix pa, pb;

		pa = job->a;
		pb = job->b;
		mxa__group_cols_part(&job->a, (uint32_t)prev, (uint32_t)(ends[g] - prev),
				     &swz[0], &pa);
		mxa__group_cols_part(&job->b, (uint32_t)prev, (uint32_t)(ends[g] - prev),
				     &swz[1], &pb);
	}
	if (!ret && job->a.scale_layout == MXA_LAYOUT_SWIZZLED &&
	    job->a.scale_offset + swz[0] > job->a.scale->size)
		ret = cuda_err(-EOVERFLOW, "gemm_grouped: a's per-group swizzled scales need %llu bytes after scale_offset, the buffer has %zu",
			       (unsigned long long)swz[0], job->a.scale->size - job->a.scale_offset);
	if (!ret && job->b.scale_layout == MXA_LAYOUT_SWIZZLED &&
	    job->b.scale_offset + swz[1] > job->b.scale->size)
		ret = cuda_err(-EOVERFLOW, "gemm_grouped: b's per-group swizzled scales need %llu bytes after scale_offset, the buffer has %zu",
			       (unsigned long long)swz[1], job->b.scale->size - job->b.scale_offset);
	swz[0] = swz[1] = 0;
	for (g = 0, prev = 0; g < count && !ret; prev = ends[g], g++) {
		const uint32_t size = (uint32_t)(ends[g] - prev);

		sub = *job;
		sub.op = MXA_OP_GEMM;
		memset(&sub.groups, 0, sizeof(sub.groups));
		mxa__group_cols_part(&job->a, (uint32_t)prev, size, &swz[0], &sub.a);
		mxa__group_cols_part(&job->b, (uint32_t)prev, size, &swz[1], &sub.b);
		sub.dense.rows = job->a.rows;
		sub.dense.stride = cstride;
		sub.dense.offset += (size_t)g * job->a.rows * cstride;
		if (!size) {
			const uint64_t n = (uint64_t)sub.dense.rows * sub.dense.cols;
			const unsigned int grid = n / 256 + 1 < 4096 ? (unsigned int)(n / 256 + 1) :
								       4096;

			zero_kernel<<<grid, 256, 0, cd->stream>>>(sm90_c_of(&sub), sub.dense.rows,
								   sub.dense.cols);
			continue;
		}
		ret = best_path(cd, &sub, &path);
		if (!ret)
			ret = cuda_launch_gemm_sm90(cd, &sub, path);
	}
	free(ends);
	return ret;
}

/*
 * 2d x 3d with MX operands: A's scales K-major by tile row and the B
 * stack's K-major, B's stack to bf16 (rows that cannot fold flagged), the
 * bf16 kernel over every group's tiles, the fp32 fallback for the tiles
 * it leaves.  swapped (fp8 B, N a multiple of 16, the stack at least as
 * many rows as A): A's scales K-major by row and A to bf16 instead, the
 * bf16 kernel over sm90_group_unit()'s tiles with the stack's codes in
 * registers; the pre-pass then converts M x K values, not groups x N x K.
 * tiles_m: tile rows (units of 256 rows when swapped), tiles_n: tile
 * columns of the launch.
 */
int launch_2d_3d_mx(struct cuda_device *cd, const struct mxa_job *job,
		    const struct sm90_groups &g, uint32_t tiles_m, uint32_t tiles_n,
		    const uint32_t *status, bool swapped)
{
	const struct mxa_matrix *a = &job->a;
	struct mxa_matrix bs = job->b;
	const uint32_t n = g.n, blocks = a->cols / 32;
	const uint64_t list_max = (uint64_t)tiles_m * tiles_n;
	void *scr[5] = { NULL, NULL, NULL, NULL, NULL };	/* a, b copies, scales, bf16 */
	const uint8_t *ad, *bd;
	uint64_t as, bstr;
	struct scales_args ssa, ssb;
	struct sm90_prep_args pp;
	struct sm90_bf16_args p;
	struct fallback_args fb;
	CUtensorMap maps[3];
	cudaError_t e;
	int ret;

	bs.rows = g.count * n;
	ret = sm90_aligned_data(cd, a, &ad, &as, &scr[0]);
	if (!ret)
		ret = sm90_aligned_data(cd, &bs, &bd, &bstr, &scr[1]);
	if (!ret)
		ret = scales_of(cd, a, a->rows, true, swapped ? 0 : tiles_m, 0, g, status, &scr[2],
				&ssa);
	if (!ret)
		ret = scales_of(cd, &job->b, bs.rows, false, 0, n, g, status, &scr[3], &ssb);
	/* The operand in registers (codes) and the one the pre-pass converts. */
	const struct mxa_matrix *cm = swapped ? &bs : a, *pm = swapped ? a : &bs;
	const struct scales_args &cs = swapped ? ssb : ssa, &ps = swapped ? ssa : ssb;

	if (!ret) {
		e = cudaMallocAsync(&scr[4], (size_t)pm->rows * ((blocks + 1) / 2) *
					     SM90_BF16_KC * 2, cd->stream);
		if (e != cudaSuccess)
			ret = cuda_fail(e, "cuda-grouped-sm90: bf16 scratch");
	}
	if (!ret) {
		pp = sm90_prep_args_of(pm, swapped ? ad : bd, swapped ? as : bstr, ps.out, ps.rmax,
				       (uint8_t *)scr[4], (uint32_t *)g.bad_b, 0);
		pp.rows_pad = ps.rows_pad;
		ret = sm90_prep_bf16(cd, pp);
	}
	if (!ret)
		ret = sm90_map_codes(&maps[0], cm, swapped ? bd : ad, swapped ? bstr : as, BM);
	if (!ret)
		ret = sm90_map_prepped(&maps[1], pp, BN);
	if (!ret)
		ret = sm90_make_map(&maps[2], cs.out, cs.rows_pad, blocks, cs.rows_pad, BM, 2,
				    CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret) {
		memset(&p, 0, sizeof(p));
		p.m = cm->rows;
		p.n = swapped ? a->rows : n;
		p.blocks = blocks;
		p.elem_a = sm90_elem_of(cm->elem);
		p.out = sm90_c_of(job);
		p.transposed = swapped;
		p.tiles_m = tiles_m;
		p.tiles_n = tiles_n;
		p.rmax_a = cs.rmax;
		p.rmax_b = ps.rmax;
		p.groups = g;
		ret = swapped ? sm90_launch_bf16_grouped_swapped(cd, maps, p) :
				sm90_launch_bf16_grouped(cd, maps, p);
	}
	if (!ret) {
		fb.a = ad;
		fb.b = bd;
		fb.a_stride = as;
		fb.b_stride = bstr;
		fb.sa = ssa.out;
		fb.sb = ssb.out;
		fb.a_pad = ssa.rows_pad;
		fb.b_pad = ssb.rows_pad;
		fb.ea = sm90_elem_of(a->elem);
		fb.eb = sm90_elem_of(bs.elem);
		fb.blocks = blocks;
		fb.tiles_n = tiles_n;
		fb.swapped = swapped;
		fb.g = g;
		fb.out = p.out;
		fallback_kernel<<<(unsigned int)(list_max < 4u * cd->sms ? list_max : 4u * cd->sms),
				  256, 0, cd->stream>>>(fb);
	}
	for (int i = 4; i >= 0; i--)
		if (scr[i])
			cudaFreeAsync(scr[i], cd->stream);
	return ret;
}

/*
 * 2d x 3d with NVFP4 operands (UE4M3 scales on both sides): A and the B
 * stack to exact bf16 with their block scales folded (sm90_prep_nvfp4();
 * per-group swizzled scales gathered to plain ones first), then the
 * bf16-ss kernel over every group's tiles with NVFP4's epilogue (per-row
 * NaN-scale flags, the tensor scales).  Every tile folds: nothing is left
 * to a fallback.  Scratch: A and the B stack in bf16 (1024-byte aligned),
 * their row flags, the plain scales of each swizzled operand.
 */
int launch_2d_3d_nvfp4(struct cuda_device *cd, const struct mxa_job *job,
		       const struct sm90_groups &g, uint32_t tiles_m, uint32_t tiles_n,
		       const uint32_t *status)
{
	const uint32_t blocks = job->a.cols / 16, kt = (blocks + 3) / 4;
	const uint64_t row_bytes = (uint64_t)kt * SM90_BF16_KC * 2;
	struct mxa_matrix ms[2] = { job->a, job->b };
	void *scratch = NULL, *dscr[2] = { NULL, NULL };
	size_t bf_at[2], flag_at, sc_at[2], total;
	struct sm90_nvfp4_prep_args pp;
	struct sm90_bf16_args p;
	CUtensorMap maps[2];
	cudaError_t e;
	int ret = 0, i;

	ms[1].rows = g.count * g.n;	/* the B stack */
	bf_at[0] = 0;
	bf_at[1] = ((size_t)ms[0].rows * row_bytes + 1023) / 1024 * 1024;
	flag_at = bf_at[1] + ((size_t)ms[1].rows * row_bytes + 1023) / 1024 * 1024;
	sc_at[0] = flag_at + ((size_t)ms[0].rows + ms[1].rows) * 4;
	sc_at[1] = sc_at[0] + (ms[0].scale_layout == MXA_LAYOUT_SWIZZLED ?
			       (size_t)ms[0].rows * blocks : 0);
	total = sc_at[1] + (ms[1].scale_layout == MXA_LAYOUT_SWIZZLED ?
			    (size_t)ms[1].rows * blocks : 0);
	e = cudaMallocAsync(&scratch, total, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync((uint8_t *)scratch + flag_at, 0,
				    ((size_t)ms[0].rows + ms[1].rows) * 4, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-grouped-sm90: NVFP4 scratch");
	memset(&p, 0, sizeof(p));
	p.rmax_a = (const uint32_t *)((uint8_t *)scratch + flag_at);
	p.rmax_b = p.rmax_a + ms[0].rows;
	for (i = 0; i < 2 && !ret; i++) {
		const struct mxa_matrix *m = &ms[i];

		const uint8_t *data;
		uint64_t stride;

		ret = sm90_aligned_data(cd, m, &data, &stride, &dscr[i]);
		if (ret)
			break;
		pp = sm90_nvfp4_prep_args_of(m, data, stride, (uint8_t *)scratch + bf_at[i],
					     (uint32_t *)(i ? p.rmax_b : p.rmax_a));
		if (m->scale_layout == MXA_LAYOUT_SWIZZLED) {
			/* Per-group swizzled scales: gathered to plain ones. */
			uint8_t *plain = (uint8_t *)scratch + sc_at[i];

			gather_plain_scales(cd, m, blocks, i == 0, g, status, plain);
			pp.scale = plain;
			pp.scale_stride = blocks;
			pp.swizzled = 0;
		}
		ret = sm90_prep_nvfp4(cd, pp);
		if (!ret)
			ret = sm90_make_map(&maps[i], pp.out, row_bytes, m->rows, row_bytes,
					    SM90_BF16_KC * 2, i ? BN : BM,
					    CU_TENSOR_MAP_SWIZZLE_128B);
	}
	if (!ret) {
		p.m = ms[0].rows;
		p.n = g.n;
		p.blocks = (job->a.cols + 31) / 32;	/* the kernel's chunks: (blocks + 1) / 2 */
		p.elem_a = SM90_E2M1;
		p.out = sm90_c_of(job);
		p.tiles_m = tiles_m;
		p.tiles_n = tiles_n;
		p.tiles_n8 = 2 * tiles_n;
		p.nvfp4 = 1;
		sm90_nvfp4_factors(&job->a, &job->b, &p.t1, &p.t2);
		p.groups = g;
		ret = sm90_launch_bf16_ss_grouped(cd, maps, p);
	}
	for (i = 0; i < 2; i++)
		if (dscr[i])
			cudaFreeAsync(dscr[i], cd->stream);
	cudaFreeAsync(scratch, cd->stream);
	return ret;
}

/*
 * 2d x 3d with few rows of A in all (total M <= 32, a decode step of a
 * mixture of experts): the skinny kernel over the stack of every group's
 * B as one matrix (count x N rows, streamed once) against all of A, each
 * result stored only where the row of A is in the group of that row of B
 * (the schedule's first rows).  Per-group swizzled scales are gathered to
 * plain ones first (the kernel reads scales in place by one stride).
 */
int launch_2d_3d_skinny(struct cuda_device *cd, const struct mxa_job *job,
			const struct sm90_groups &g, const uint32_t *status)
{
	const struct mxa_matrix *a = &job->a;
	const uint32_t blocks = a->cols / mxa__block(a);
	struct mxa_matrix ms[2] = { job->b, job->a };	/* x, y */
	struct sm90_mx_operand ops[2];
	void *scr[2] = { NULL, NULL }, *xscratch = NULL;
	struct sm90_skinny_args s;
	const uint8_t *xd;
	uint64_t xs;
	int ret, i;

	ms[0].rows = g.count * g.n;
	ret = sm90_aligned_data(cd, &ms[0], &xd, &xs, &xscratch);
	if (ret)
		return ret;
	ops[0] = sm90_mx_operand_of(&ms[0], xd, xs);
	ops[1] = sm90_mx_operand_of(&ms[1], cuda_ptr(a->data, a->data_offset),
				    mxa__data_stride(a));
	for (i = 0; i < 2 && !ret; i++) {
		cudaError_t e;

		if (ms[i].scale_layout != MXA_LAYOUT_SWIZZLED)
			continue;
		e = cudaMallocAsync(&scr[i], (size_t)ms[i].rows * blocks, cd->stream);
		if (e != cudaSuccess) {
			ret = cuda_fail(e, "cuda-grouped-sm90-skinny: scale scratch");
			break;
		}
		gather_plain_scales(cd, &ms[i], blocks, i == 1, g, status, (uint8_t *)scr[i]);
		ops[i].scale = (const uint8_t *)scr[i];
		ops[i].scale_stride = blocks;
		ops[i].swizzled = 0;
	}
	if (!ret) {
		s = sm90_skinny_args_of(job, ops[0], ops[1]);
		s.group_row = g.row_start;
		s.group_status = status;
		s.group_n = g.n;
		ret = sm90_launch_skinny(cd, s);
	}
	for (i = 0; i < 2; i++)
		if (scr[i])
			cudaFreeAsync(scr[i], cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	return ret;
}

/*
 * 2d x 3d: the schedule pass over the device-side offsets, then the MX or
 * the NVFP4 kernels over every group's tiles (both operands' scales of
 * one type: cuda_plugin.cu refuses mixed ones), or with skinny the
 * skinny kernel over the whole stack.
 */
int launch_2d_3d(struct cuda_device *cd, const struct mxa_job *job, bool skinny)
{
	const struct mxa_grouped *gr = &job->groups;
	const struct mxa_matrix *a = &job->a;
	const uint32_t count = gr->count, n = job->b.rows, blocks = a->cols / mxa__block(a);
	const bool nvfp4 = a->scale_type == MXA_SCALE_UE4M3;
	/*
	 * The swapped mapping where it converts fewer values in the pre-pass
	 * (the stack has at least A's rows) and its conditions hold: fp8 B
	 * (converted in registers cheaply) and N on 16 (its scales' TMA
	 * column).
	 */
	const bool swapped = !skinny && !nvfp4 &&
			     (job->b.elem == MXA_ELEM_E4M3 || job->b.elem == MXA_ELEM_E5M2) &&
			     n % 16 == 0 && (uint64_t)count * n >= a->rows;
	const uint32_t tiles_n = (n + BN - 1) / BN;
	const uint32_t tiles_m = (a->rows + BM - 1) / BM + count;
	const uint32_t tiles_n_s = (n + BM - 1) / BM;
	const uint32_t units = (a->rows + BN - 1) / BN + count;
	const uint64_t list_max = swapped ? (uint64_t)units * tiles_n_s :
				  (uint64_t)tiles_m * tiles_n;
	void *sched = NULL;
	size_t sched_bytes;
	struct sched_args sp;
	struct sm90_groups g;
	uint32_t st[4] = { 0, 0, 0, 0 }, left = 0, stack_rows, flag_rows;
	cudaError_t e;
	int ret;

	if (list_max > INT32_MAX)
		return cuda_err(-EOVERFLOW,
				"cuda-grouped-sm90: %llu tiles of 128 x 256 (total M = %u + %u groups, N = %u) are more than one grid holds",
				(unsigned long long)list_max, a->rows, count, n);
	/* A's scales by tile row: one row of the scale map holds them all. */
	if ((uint64_t)tiles_m * BM > UINT32_MAX)
		return cuda_err(-EOVERFLOW,
				"cuda-grouped-sm90: a's scales by tile row need %u x 128 rows (total M = %u + %u groups), more than 2^32 - 1",
				tiles_m, a->rows, count);
	/* The library checked the stack in its buffers (lib/src/grouped.c). */
	if ((uint64_t)count * n > UINT32_MAX)
		return cuda_err(-EOVERFLOW, "cuda-grouped-sm90: b's stack of %u x %u rows has more than 2^32 - 1",
				count, n);
	stack_rows = count * n;
	flag_rows = swapped ? a->rows : stack_rows;

	/*
	 * status (4 words), row_start, tile_start, unit_start, list count,
	 * list, per-row flags of the pre-passed operand.
	 */
	sched_bytes = 16 + 3 * ((size_t)count + 1) * 4 + 4 + list_max * 4 + (size_t)flag_rows * 4;
	e = cudaMallocAsync(&sched, sched_bytes, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(sched, 0, sched_bytes, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-grouped-sm90: schedule scratch");
	g.row_start = (const uint32_t *)((uint8_t *)sched + 16);
	g.tile_start = g.row_start + count + 1;
	g.unit_start = swapped ? g.tile_start + count + 1 : NULL;
	g.count = count;
	g.n = n;
	g.list_count = (uint32_t *)(g.tile_start + 2 * (count + 1));
	g.list = g.list_count + 1;
	g.bad_b = g.list + list_max;

	sp.ends = (const int32_t *)cuda_ptr(gr->offsets, gr->offsets_offset);
	sp.count = count;
	sp.extent = a->rows;
	sp.a_swz_row_bytes = a->scale_layout == MXA_LAYOUT_SWIZZLED ?
			     (uint64_t)BM * ((blocks + 3) / 4 * 4) : 0;
	sp.a_scale_avail = a->scale->size - a->scale_offset;
	sp.row_start = (uint32_t *)g.row_start;
	sp.tile_start = (uint32_t *)g.tile_start;
	sp.unit_start = (uint32_t *)g.unit_start;
	sp.status = (uint32_t *)sched;
	schedule_kernel<<<1, SCHED_THREADS, 0, cd->stream>>>(sp);

	ret = skinny ? launch_2d_3d_skinny(cd, job, g, sp.status) :
	      nvfp4 ? launch_2d_3d_nvfp4(cd, job, g, tiles_m, tiles_n, sp.status) :
	      swapped ? launch_2d_3d_mx(cd, job, g, units, tiles_n_s, sp.status, true) :
		      launch_2d_3d_mx(cd, job, g, tiles_m, tiles_n, sp.status, false);
	/*
	 * The verdict on the offsets, where the call waits for the stream
	 * anyway (not on a caller's stream: no host synchronisation there).
	 */
	if (!ret && sm90_grouped_waits(cd)) {
		ret = sm90_grouped_verdict(cd, sched, g.list_count, st, &left);
		if (!ret)
			ret = report_status(job, st);
		if (!ret)
			cuda_dbg("cuda-grouped-sm90: %s, %u groups, %u of %llu tile rows x %u used; %u tiles left to the fp32 fallback (NaN/Inf codes, NaN scales or scale spans too wide for exact bf16 operands)",
				 nvfp4 ? "NVFP4" : swapped ? "MX, swapped (B's stack in registers)" : "MX",
				 count, st[3], (unsigned long long)tiles_m, tiles_n, left);
	}
	cudaFreeAsync(sched, cd->stream);
	return ret;
}

} /* namespace */

/* The offsets' refusals of both schedule passes, worded as lib/src/grouped.c words them. */
int sm90_offsets_verdict(const uint32_t *st, const char *dim, uint32_t extent, uint32_t block)
{
	switch (st[0]) {
	case SM90_SCHED_OK:
		return 0;
	case SM90_SCHED_DECREASING:
		return cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d is below %s (offsets must not decrease and start at >= 0)",
				st[1], (int32_t)st[2], st[1] ? "offsets[i - 1]" : "0");
	case SM90_SCHED_BEYOND:
		return cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d is beyond the total %s = %u",
				st[1], (int32_t)st[2], dim, extent);
	case SM90_SCHED_LAST:
		return cuda_err(-EINVAL, "gemm_grouped: the last offset (offsets[%u] = %d) must equal the total %s = %u",
				st[1], (int32_t)st[2], dim, extent);
	case SM90_SCHED_BLOCK:
		return cuda_err(-EINVAL, "gemm_grouped: offsets[%u] = %d: %s group boundaries must be multiples of the block size %u",
				st[1], (int32_t)st[2], dim, block);
	}
	return cuda_err(-EIO, "cuda-grouped-sm90: unknown schedule status %u", st[0]);
}

bool sm90_grouped_waits(struct cuda_device *cd)
{
	return !cd->user_stream || cuda_host->debug();
}

int sm90_grouped_verdict(struct cuda_device *cd, const void *status, const uint32_t *list_count,
			 uint32_t *st, uint32_t *left)
{
	cudaError_t e = cudaMemcpyAsync(st, status, 16, cudaMemcpyDeviceToHost, cd->stream);

	if (e == cudaSuccess)
		e = cudaMemcpyAsync(left, list_count, 4, cudaMemcpyDeviceToHost, cd->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(cd->stream);
	return e == cudaSuccess ? 0 : cuda_fail(e, "cuda-grouped-sm90: schedule status");
}

int cuda_launch_gemm_grouped_sm90(struct cuda_device *cd, const struct mxa_job *job)
{
	if (cuda_sm90_reject(cd))
		return cuda_err(-EOPNOTSUPP, "cuda-grouped-sm90: %s", cuda_sm90_reject(cd));
	if (job->a.scale_type != job->b.scale_type)
		return cuda_err(-EINVAL, "cuda-grouped-sm90: mixed NVFP4 x MX operands are not taken (UE4M3 scales on both or neither)");
	if (job->groups.kind == MXA_GROUP_2D_2D) {
		const char *no = cuda_grouped_k_reject(cd, job);

		if (!no)
			return cuda_launch_gemm_grouped_k(cd, job);
		cuda_dbg("cuda-grouped-sm90: 2d x 2d per group (%s)", no);
		return launch_2d_2d(cd, job);
	}
	return launch_2d_3d(cd, job, false);
}

int cuda_launch_gemm_grouped_skinny(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_op_desc d = sm90_desc_of(job);
	const char *no = cuda_grouped_skinny_reject(cd, &d);

	if (no)
		return cuda_err(-EINVAL, "cuda-grouped-sm90-skinny: %s", no);
	/*
	 * 2d x 2d: every group's tiles in one launch, the offsets read on
	 * the GPU only, as cuda-grouped-sm90 runs it (M <= 32 fills part of
	 * a tile row), on a caller's stream (which the call must not
	 * synchronise), for NVFP4 and from 16 groups on; else each group by
	 * the dense skinny kernel, which reads the offsets on the host and
	 * was faster there for MXFP8 (H200: 4 groups 8 x 7168 x 4096, 0.065
	 * against 0.095 ms; 32 groups 32 x 2048 x 8192, 0.31 against 0.082;
	 * Documentation/bench-cuda.rst), or where one launch cannot take the
	 * job.
	 */
	if (job->groups.kind == MXA_GROUP_2D_2D) {
		const char *why = cuda_grouped_k_reject(cd, job);

		if (!why && !cd->user_stream && job->a.scale_type != MXA_SCALE_UE4M3 &&
		    job->groups.count < 16)
			why = "MX operands in under 16 groups, on the device's own stream";
		if (!why)
			return cuda_launch_gemm_grouped_k(cd, job);
		cuda_dbg("cuda-grouped-sm90-skinny: 2d x 2d per group (%s)", why);
		return launch_2d_2d(cd, job);
	}
	return launch_2d_3d(cd, job, true);
}

/* The dense skinny path's range: M (2d x 3d: A's rows of all groups) <= 32. */
const char *cuda_grouped_skinny_reject(struct cuda_device *cd, const struct mxa_op_desc *d)
{
	const char *no = cuda_sm90_reject(cd);

	return no ? no : cuda_sm90_path_reject(cd, d, SM90_PATH_SKINNY);
}
