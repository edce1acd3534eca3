// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90, bf16 path: the fused MX x MX GEMM on Hopper's bf16 tensor
 * cores, with every MX scale folded into the operands so that no per-block
 * promotion is left in the inner loop.
 *
 * Why: promoting an fp8 partial per 32-block costs two fp32 instructions
 * per accumulator per block, which caps the fp8 kernel at the bf16 tensor
 * rate before any other overhead (Documentation/bench-cuda.rst).  Folding
 * the scales into bf16 operands moves that work from M * N * K / 32 to
 * (M + N) * K conversions.
 *
 * Exactness: row r of A is stored as a'[r][k] = a[r][k] * 2^(s[r][k/32] -
 * R[r]), R[r] the largest scale of the row.  An element has at most 4
 * significant bits and a' stays within bf16's range, so a' is exact; the
 * same for B; the tensor cores form a' * b' exactly in fp32 and sum in
 * fp32, and C = acc * 2^(R_a[i] - 127) * 2^(R_b[j] - 127).  That holds
 * while every non-zero |a'| and |b'| is at least 2^-63 (products stay fp32
 * normals): a row whose scales span more than 63 + log2(smallest element)
 * binades, a NaN scale, or a NaN/Inf element code would break it.  A tile
 * that meets one writes nothing and is marked in p.redo; the fp8 kernel
 * (cuda_gemm_sm90.cu) then computes exactly those tiles.
 *
 * Conversion is bit manipulation: an e4m3 byte's exponent and mantissa
 * bits placed at bf16's low exponent bits give the value times 2^-120 for
 * normals and subnormals alike (e5m2: 2^-112); fp6/fp4 are re-encoded as
 * e4m3 first.  One bf16x2 multiply by 2^(120 + s - R) then applies the
 * scale exactly.
 *
 * B is converted once, by a pre-pass into a bf16 scratch matrix (each CTA
 * would otherwise convert its B tile again for every tile row).  A is
 * converted by the consumers in registers, where it costs no shared memory
 * traffic: wgmma m64n256k16 takes A from registers.  Within a chunk of 64
 * the K order is permuted - the same way for A and B, so the sum is
 * unchanged - so that a thread's A fragment is 16 contiguous elements of a
 * row: thread q of a row quad holds elements 16q + 4s + t, t < 4, in k16
 * step s, at k = 2q + t (t < 2) or 2q + 6 + t.  Where that conversion
 * costs more than a second pass over A (fp4 and fp6 A on long grids),
 * the same pre-pass converts A too and gemm_sm90_bf16_ss_kernel takes
 * both operands from shared memory.
 *
 * Per CTA a tile of 128 rows of A by 256 of B, K in chunks of 64 (two MX
 * blocks).  Warp 0 of the producer warpgroup streams A's codes and scales
 * (or its bf16) and B's bf16 with the tensor memory accelerator; two
 * consumer warpgroups of 64 rows each run four wgmma per chunk.
 */
#include <errno.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_bf16.h>

#include "cuda_internal.cuh"
#include "cuda_wgmma.cuh"
#include "cuda_sm90.cuh"
#include "cuda_sm90_fold.cuh"

namespace {

constexpr int BM = SM90_BF16_BM, BN = SM90_BF16_BN, KC = SM90_BF16_KC;
#ifndef SM90_BF16_STAGES
#define SM90_BF16_STAGES 4
#endif
constexpr int STAGES = SM90_BF16_STAGES;

struct layout {
	static constexpr int BFB_BYTES = BN * KC * 2;
	static constexpr int RAWA_BYTES = BM * KC;
	static constexpr int SA_BYTES = 2 * BM;
	static constexpr int BFB_OFF = 0;
	static constexpr int RAWA_OFF = BFB_OFF + STAGES * BFB_BYTES;
	static constexpr int SA_OFF = RAWA_OFF + STAGES * RAWA_BYTES;
	static constexpr int BAR_OFF = SA_OFF + STAGES * SA_BYTES;
	static constexpr int BAD_OFF = BAR_OFF + 2 * STAGES * 8;
	static constexpr int RB_OFF = BAD_OFF + 16;
	static constexpr int BYTES = RB_OFF + BN * 4;
	static constexpr int SMEM = BYTES + 1024;
	static_assert(RAWA_OFF % 1024 == 0 && SA_OFF % 128 == 0,
		      "tensor memory accelerator destinations need alignment");
	static_assert(SMEM <= 227 * 1024, "more shared memory than a block gets");
};

/* The kernel with A too in bf16 from the pre-pass (gemm_sm90_bf16_ss_kernel). */
struct layout_ss {
	static constexpr int BFB_BYTES = BN * KC * 2;
	static constexpr int BFA_BYTES = BM * KC * 2;
	static constexpr int BFB_OFF = 0;
	static constexpr int BFA_OFF = BFB_OFF + STAGES * BFB_BYTES;
	static constexpr int BAR_OFF = BFA_OFF + STAGES * BFA_BYTES;
	static constexpr int RB_OFF = BAR_OFF + 2 * STAGES * 8;
	static constexpr int BYTES = RB_OFF + BN * 4;
	static constexpr int SMEM = BYTES + 1024;
	static_assert(BFA_OFF % 1024 == 0 && BFA_BYTES % 1024 == 0,
		      "128-byte swizzled tiles need 1024-byte alignment");
	static_assert(SMEM <= 227 * 1024, "more shared memory than a block gets");
};

#ifdef SM90_CODE

constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;

/*
 * A consumer thread's place in the tile: rows r0 and r0 + 8 of its
 * warpgroup's 64 (as wgmma lays out the accumulators), q its lane in the
 * row quad, ra A's row maxima there.
 */
struct consumer_rows {
	int r0, q;
	uint32_t ra[2];
};

__device__ __forceinline__ struct consumer_rows rows_of(const struct sm90_bf16_args &p,
							uint32_t a_row, const uint32_t *rmax_a)
{
	const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
	const int r0 = wg * 64 + warp * 16 + lane / 4;
	const uint32_t gi = a_row + r0;
	const struct consumer_rows c = {
		r0, lane % 4,
		{ gi < p.m ? rmax_a[gi] : 0, gi + 8 < p.m ? rmax_a[gi + 8] : 0 },
	};

	return c;
}

/*
 * C for the tile: each consumer thread leaves its scaled accumulators in
 * shared memory (the stages are free once the main loop is done), then
 * the two warpgroups write rows of C with contiguous stores.  The staged
 * tile is C's own orientation: 128 x 256, or 256 x 128 when the operands
 * were swapped (C^T = B A^T); rows padded by 4 words against bank
 * conflicts.
 */
constexpr int EPI_LD = BN + 4, EPI_LDT = BM + 4;
static_assert(BM * EPI_LD * 4 <= STAGES * (layout::BFB_BYTES + layout::RAWA_BYTES) &&
	      BN * EPI_LDT * 4 <= STAGES * (layout::BFB_BYTES + layout::RAWA_BYTES),
	      "the epilogue stages C in the pipeline's buffers");

/*
 * One result before C: the MX fold's 2^(R_a + R_b - 254), or for NVFP4
 * (ra, rb NaN-scale flags) acc * 2^16 (exact) * t1 * t2, NaN for a row
 * with a NaN scale.  A template parameter, so that the MX kernels'
 * epilogue is the code it was.
 */
template <bool NV>
__device__ __forceinline__ float out_value(const struct sm90_bf16_args &p, float acc,
					   uint32_t ra, uint32_t rb)
{
	if (NV)
		return (ra | rb) ? __uint_as_float(0x7fc00000u) :
				   acc * 0x1p16f * p.t1 * p.t2;
	return scale_pow2(acc, (int)ra + (int)rb - 254);
}

template <bool NV>
__device__ __forceinline__ void stage_acc(const struct sm90_bf16_args &p,
					  float *st, const float *acc, const uint32_t *rb,
					  const struct consumer_rows &at)
{
	const int r0 = at.r0, q = at.q;
	const uint32_t ra0 = at.ra[0], ra1 = at.ra[1];

#pragma unroll
	for (int i = 0; i < 32; i++) {
		const int c = 8 * i + 2 * q;
		const uint2 rbc = *(const uint2 *)&rb[c];
		const float v0 = out_value<NV>(p, acc[4 * i + 0], ra0, rbc.x);
		const float v1 = out_value<NV>(p, acc[4 * i + 1], ra0, rbc.y);
		const float v2 = out_value<NV>(p, acc[4 * i + 2], ra1, rbc.x);
		const float v3 = out_value<NV>(p, acc[4 * i + 3], ra1, rbc.y);

		if (p.transposed) {
			st[c * EPI_LDT + r0] = v0;
			st[(c + 1) * EPI_LDT + r0] = v1;
			st[c * EPI_LDT + r0 + 8] = v2;
			st[(c + 1) * EPI_LDT + r0 + 8] = v3;
		} else {
			*(float2 *)&st[r0 * EPI_LD + c] = make_float2(v0, v1);
			*(float2 *)&st[(r0 + 8) * EPI_LD + c] = make_float2(v2, v3);
		}
	}
}

/* Four values to C[at..at + 3], 16-byte (fp32) or 8-byte (bf16) aligned. */
__device__ __forceinline__ void store_four(const struct sm90_bf16_args &p,
					   uint64_t at, float4 v)
{
	if (p.out.bf16) {
		uint2 *c = (uint2 *)((__nv_bfloat16 *)p.out.c + at);
		__nv_bfloat162 lo, hi;

		if (p.out.accumulate) {
			uint2 o = *c;
			float2 a = __bfloat1622float2(*(__nv_bfloat162 *)&o.x);
			float2 b = __bfloat1622float2(*(__nv_bfloat162 *)&o.y);

			v.x += a.x;
			v.y += a.y;
			v.z += b.x;
			v.w += b.y;
		}
		lo = __floats2bfloat162_rn(v.x, v.y);
		hi = __floats2bfloat162_rn(v.z, v.w);
		*c = make_uint2(*(uint32_t *)&lo, *(uint32_t *)&hi);
	} else {
		float4 *c = (float4 *)((float *)p.out.c + at);

		if (p.out.accumulate) {
			float4 o = *c;

			v.x += o.x;
			v.y += o.y;
			v.z += o.z;
			v.w += o.w;
		}
		*c = v;
	}
}

/*
 * Staged rows (rows x cols, leading dimension ld) to C at (row0, col0),
 * by the 256 consumer threads: whole-width 16-byte aligned rows four
 * columns per thread, anything else one element per thread.  cols is BN
 * or BM: per-thread positions by shifts (a division here cost as much as
 * the stores).  Inlined, so that st is known to be shared memory: called,
 * it was read with generic loads.
 */
__device__ __forceinline__ void write_c(const struct sm90_bf16_args &p,
				     const float *st, int ld, int rows, int cols,
				     uint32_t row0, uint32_t col0,
				     uint32_t mrows, uint32_t ncols)
{
	const int t = threadIdx.x;
	const bool vec = !(p.out.stride & 3) && !((uintptr_t)p.out.c & 15) &&
			 col0 + cols <= ncols;

	static_assert(BN == 256 && BM == 128, "write_c() shifts by log2(cols / 4)");
	if (vec) {
		const int lp = cols == BN ? 6 : 5;	/* log2(threads per row) */

		for (int r = t >> lp; r < rows && row0 + r < mrows; r += 256 >> lp) {
			const int c4 = 4 * (t & ((1 << lp) - 1));

			store_four(p, (uint64_t)(row0 + r) * p.out.stride + col0 + c4,
				   *(const float4 *)&st[r * ld + c4]);
		}
		return;
	}
	for (int r = 0; r < rows && row0 + r < mrows; r++) {
		for (int c = t; c < cols; c += 256)
			if (col0 + c < ncols)
				store_c_value(p.out, (uint64_t)(row0 + r) * p.out.stride + col0 + c,
					      st[r * ld + c]);
	}
}

/* The stages' barriers, by thread 0, before anyone uses them. */
__device__ __forceinline__ void init_stages(uint64_t *tmafull, uint64_t *empty)
{
	if (threadIdx.x == 0)
		init_pipeline(tmafull, empty, STAGES, 256);
	__syncthreads();
}

/*
 * Where a CTA's tile lies, as a tile mapping policy (dense_tiles,
 * group_tiles) finds it: its first rows of A and of B in their tensor
 * maps, its first column of A's K-major scales (16-byte aligned: the
 * innermost coordinate of a TMA box must be), its first column of C, and
 * the ends past which rows of A (rows of C) and columns of C are not
 * stored; id is the policy's own.  c_a is C's coordinate of A's first
 * row (its row; its column where p.transposed): a_row, except where A is
 * a group's part of a stack.  K: the tile's blocks of 32 and where they
 * start in A's codes (a_k, in the map's innermost unit), in B's bf16
 * (b_k; and in A's, where A is pre-passed too) and in A's K-major scales
 * (sa_k); kt its chunks of 64; rmax_a, rmax_b: the row maxima (NVFP4: the
 * NaN-scale flags) its rows use.  All but the K-grouped GEMM's tiles take
 * all of K from 0 and the whole arrays (all_k()).
 */
struct tile_at {
	uint32_t a_row, b_row, c_col, sa_col, c_a;
	uint32_t m_end, n_end;
	uint32_t id;
	uint32_t blocks, a_k, b_k, sa_k, kt;
	const uint32_t *rmax_a, *rmax_b;
};

__device__ __forceinline__ void all_k(const struct sm90_bf16_args &p, struct tile_at *t)
{
	t->blocks = p.blocks;
	t->kt = (p.blocks + 1) / 2;
	t->a_k = t->b_k = t->sa_k = 0;
	t->rmax_a = p.rmax_a;
	t->rmax_b = p.rmax_b;
}

/*
 * B's row maxima of the tile into shared memory for the epilogue, by the
 * 256 consumer threads (read after a bar.sync 1 that follows).
 */
__device__ __forceinline__ void rows_b(const struct sm90_bf16_args &p, uint32_t *rb,
				       const struct tile_at &t)
{
	const uint32_t gj = t.c_col + threadIdx.x;

	rb[threadIdx.x] = gj < t.n_end ? t.rmax_b[t.b_row + threadIdx.x] : 0;
}

/* Grouped raster: eight tile rows share the B tiles in L2. */
__device__ __forceinline__ void tile_of(const struct sm90_bf16_args &p, uint32_t *tile_m,
					uint32_t *tile_n)
{
	const uint32_t group = 8, per = group * p.tiles_n;
	const uint32_t bid = blockIdx.x, first = bid / per * group;
	const uint32_t gm = min(p.tiles_m - first, group);

	*tile_m = first + bid % per % gm;
	*tile_n = bid % per / gm;
}

/*
 * The tile's C from the consumers' accumulators, staged in st (the
 * stages, which both warpgroups are done with); NV: NVFP4's epilogue.
 */
template <bool NV = false>
__device__ __forceinline__ void write_tile(const struct sm90_bf16_args &p, float *st,
					   const float *acc, const uint32_t *rb,
					   const struct consumer_rows &c, const struct tile_at &t)
{
	stage_acc<NV>(p, st, acc, rb, c);
	asm volatile("bar.sync 1, 256;" ::: "memory");
	if (p.transposed)
		write_c(p, st, EPI_LDT, BN, BM, t.c_col, t.c_a, t.n_end, t.m_end);
	else
		write_c(p, st, EPI_LD, BM, BN, t.c_a, t.c_col, t.m_end, t.n_end);
}

/*
 * The tile's C (MX epilogue) staged for TMA stores: 128-byte columns of C
 * (32 fp32 or 64 bf16 values) as boxes of 128 rows one after the other,
 * each row's 16-byte units in the 128-byte swizzle (unit u of row r at
 * u ^ (r % 8)), which also spreads a warp's rows over the banks.
 */
__device__ __forceinline__ void stage_tma(const struct sm90_bf16_args &p, uint8_t *st,
					  const float *acc, const uint32_t *rb,
					  const struct consumer_rows &at)
{
#pragma unroll
	for (int i = 0; i < 32; i++) {
		const int c = 8 * i + 2 * at.q;
		const uint2 rbc = *(const uint2 *)&rb[c];
		const uint32_t byte = p.out.bf16 ? 2 * c : 4 * c, in = byte & 127;

#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int r = at.r0 + 8 * h;
			const float v0 = out_value<false>(p, acc[4 * i + 2 * h], at.ra[h], rbc.x);
			const float v1 = out_value<false>(p, acc[4 * i + 2 * h + 1], at.ra[h], rbc.y);
			uint8_t *a = st + (byte >> 7) * (BM * 128) + r * 128 +
				     (((in >> 4) ^ (r & 7)) << 4) + (in & 15);

			if (p.out.bf16)
				*(__nv_bfloat162 *)a = __floats2bfloat162_rn(v0, v1);
			else
				*(float2 *)a = make_float2(v0, v1);
		}
	}
}

/* Hand this tile to the fp8 kernel: it is two of its tiles wide. */
__device__ __forceinline__ void leave_tile(const struct sm90_bf16_args &p,
					   uint32_t tile_m, uint32_t tile_n)
{
	uint32_t n8 = 2 * tile_n, two = n8 + 1 < p.tiles_n8;
	uint32_t at = atomicAdd(p.list_count, 1 + two);

	p.list[at] = tile_m * p.tiles_n8 + n8;
	if (two)
		p.list[at + 1] = tile_m * p.tiles_n8 + n8 + 1;
}

/* A dense GEMM: tiles_m x tiles_n tiles in the grouped raster. */
struct dense_tiles {
	static __device__ __forceinline__ bool at(const struct sm90_bf16_args &p,
						  struct tile_at *t)
	{
		uint32_t tile_m, tile_n;

		tile_of(p, &tile_m, &tile_n);
		t->a_row = t->sa_col = t->c_a = tile_m * BM;
		t->b_row = t->c_col = tile_n * BN;
		t->m_end = p.m;
		t->n_end = p.n;
		t->id = 0;
		all_k(p, t);
		return true;
	}
	/* By every thread: B's rows of this tile cannot be folded exactly. */
	static __device__ __forceinline__ bool bad(const struct sm90_bf16_args &p,
						   const struct tile_at &t)
	{
		return p.bad_cols[t.b_row / BN];
	}
	static __device__ __forceinline__ void leave(const struct sm90_bf16_args &p,
						     const struct tile_at &t)
	{
		leave_tile(p, t.a_row / BM, t.b_row / BN);
	}
	/* The same with A from the pre-pass too: its rows may not fold either. */
	static __device__ __forceinline__ bool bad_ss(const struct sm90_bf16_args &p,
						      const struct tile_at &t)
	{
		return p.bad_cols[t.b_row / BN] || p.bad_rows[t.a_row / BM];
	}
};

/*
 * A grouped GEMM (2d x 3d): the tile rows of all groups (p.groups, from
 * the device-side offsets), in the same raster; CTAs past the last tile
 * exit.  A group's rows of A and its B rows start at their group's
 * offsets in the tensor maps, A's scales at the tile row's own 128
 * (sm90_group_scale_row()); rows past the group's end and columns past
 * its N are loaded (A's next group, B's next stack entry: finite, or the
 * tile is left) but never stored.
 */
struct group_tiles {
	static __device__ __forceinline__ bool at(const struct sm90_bf16_args &p,
						  struct tile_at *t)
	{
		const struct sm90_groups &g = p.groups;
		uint32_t u, tn;
		struct sm90_group_tile gt;

		if (!sm90_group_raster(g.tile_start[g.count], p.tiles_n, blockIdx.x, &u, &tn))
			return false;
		gt = sm90_group_tile(g, u, tn);
		t->a_row = t->c_a = gt.a_row;
		t->b_row = gt.b_row;
		t->c_col = gt.c_col;
		t->sa_col = gt.sa_col;
		t->m_end = gt.m_end;
		t->n_end = g.n;
		t->id = u * p.tiles_n + tn;
		all_k(p, t);
		return true;
	}
	/* By every thread (a block-wide vote): any of the tile's B rows. */
	static __device__ __forceinline__ bool bad(const struct sm90_bf16_args &p,
						   const struct tile_at &t)
	{
		const uint32_t j = threadIdx.x;

		return __syncthreads_or(j < BN && t.c_col + j < t.n_end &&
					p.groups.bad_b[t.b_row + j]);
	}
	static __device__ __forceinline__ void leave(const struct sm90_bf16_args &p,
						     const struct tile_at &t)
	{
		p.groups.list[atomicAdd(p.groups.list_count, 1)] = t.id;
	}
	/*
	 * With A from the pre-pass too: the grouped instance of that kernel
	 * runs NVFP4 only, whose rows always fold (a NaN scale is a row flag
	 * the epilogue turns into NaN), so B's flags are the only ones.
	 */
	static __device__ __forceinline__ bool bad_ss(const struct sm90_bf16_args &p,
						      const struct tile_at &t)
	{
		return bad(p, t);
	}
};

/*
 * A grouped GEMM (2d x 3d) with the operands swapped, C^T = B A^T per
 * group (sm90_group_unit()): the kernel's A is 128 rows of the B stack,
 * in registers (its K-major scales at its stack row: N a multiple of 16
 * keeps that 16-byte aligned), its B 256 rows of the group's A from the
 * pre-pass; stored transposed, C's columns from the tile of N, its rows
 * A's.  Why: the other mapping converts the whole stack (groups x N x K)
 * by the pre-pass, which the dense GEMM of the same work does not;
 * here the pre-pass converts A (M x K), as the dense one converts its B.
 */
struct group_tiles_swapped {
	static __device__ __forceinline__ bool at(const struct sm90_bf16_args &p,
						  struct tile_at *t)
	{
		const struct sm90_groups &g = p.groups;
		uint32_t u, tn;
		struct sm90_group_unit gu;

		if (!sm90_group_raster(g.unit_start[g.count], p.tiles_n, blockIdx.x, &u, &tn))
			return false;
		gu = sm90_group_unit(g, u, tn);
		t->a_row = t->sa_col = gu.b_row;
		t->c_a = gu.n0;
		t->m_end = g.n;
		t->b_row = t->c_col = gu.a_row;
		t->n_end = gu.a_end;
		t->id = u * p.tiles_n + tn;
		all_k(p, t);
		return true;
	}
	/* By every thread (a block-wide vote): any of the tile's rows of A. */
	static __device__ __forceinline__ bool bad(const struct sm90_bf16_args &p,
						   const struct tile_at &t)
	{
		return group_tiles::bad(p, t);
	}
	static __device__ __forceinline__ void leave(const struct sm90_bf16_args &p,
						     const struct tile_at &t)
	{
		group_tiles::leave(p, t);
	}
};

/*
 * A grouped GEMM along K (2d x 2d, sm90_launch_bf16_grouped_k()): group g
 * is the dense GEMM of its K columns into its own C (rows g * m on), its
 * tiles the dense raster's, the groups' one after the other.  A's codes
 * and K-major scales start at the group's first block, B is the bf16 of
 * every group, each padded to whole chunks (chunk0), the row maxima are
 * the group's own.  Nothing runs unless the schedule pass passed the
 * offsets.
 */
struct group_k_tiles {
	static __device__ __forceinline__ bool at(const struct sm90_bf16_args &p,
						  struct tile_at *t)
	{
		const struct sm90_kgroups &k = p.kgroups;
		const uint32_t per = p.tiles_m * p.tiles_n, g = blockIdx.x / per;
		uint32_t tm, tn;

		if (*k.status || g >= k.count)
			return false;
		sm90_group_raster(p.tiles_m, p.tiles_n, blockIdx.x % per, &tm, &tn);
		t->a_row = t->sa_col = tm * BM;
		t->c_a = g * p.m + t->a_row;
		t->m_end = (g + 1) * p.m;
		t->b_row = t->c_col = tn * BN;
		t->n_end = p.n;
		t->id = blockIdx.x;
		t->blocks = k.block0[g + 1] - k.block0[g];
		t->kt = k.chunk0[g + 1] - k.chunk0[g];
		t->a_k = k.block0[g] * (p.elem_a == SM90_E2M1 ? KC / 4 : KC / 2);
		t->b_k = k.chunk0[g] * KC * 2;
		t->sa_k = k.block0[g];
		t->rmax_a = p.rmax_a + (uint64_t)g * p.m;
		t->rmax_b = p.rmax_b + (uint64_t)g * p.n;
		return true;
	}
	/* B's rows of this tile in this group cannot be folded (the pre-pass's flag). */
	static __device__ __forceinline__ bool bad(const struct sm90_bf16_args &p,
						   const struct tile_at &t)
	{
		return p.kgroups.bad[t.id / (p.tiles_m * p.tiles_n) * p.tiles_n + t.b_row / BN];
	}
	static __device__ __forceinline__ void leave(const struct sm90_bf16_args &p,
						     const struct tile_at &t)
	{
		p.kgroups.list[atomicAdd(p.kgroups.list_count, 1)] = t.id;
	}
	/*
	 * With A from the pre-pass too: NVFP4 only, whose rows always fold
	 * (a NaN scale is a row flag the epilogue turns into NaN).
	 */
	static __device__ __forceinline__ bool bad_ss(const struct sm90_bf16_args &p,
						      const struct tile_at &t)
	{
		return false;
	}
};

/*
 * Whether a policy's K may end inside a chunk with the next group's codes
 * after it in A (group_k_tiles): those must not reach the sum, not even
 * times a zero multiplier (a NaN code would).
 */
template <typename Tiles>
struct k_of {
	static constexpr bool partial = false;
	static constexpr bool tma_c = false;	/* C by TMA where p.c_tma (maps[3]) */
};

template <>
struct k_of<group_k_tiles> {
	static constexpr bool partial = true;
	static constexpr bool tma_c = true;
};

/* What a consumer thread's main loop needs. */
struct consumer {
	uint8_t *smem;
	uint64_t *tmafull, *empty;
	uint32_t kt, blocks;
	struct consumer_rows at;
};

/*
 * This thread's A fragment of chunk it: rows r0 and r0 + 8 (frag_row()),
 * scales from the stage.
 */
template <int EA, bool PART>
__device__ __forceinline__ void load_frag(const struct consumer &c, uint32_t it,
					  uint32_t *f, uint32_t *flag)
{
	using L = layout;
	const int s = it % STAGES;
	const uint32_t ph = (it / STAGES) & 1;
	const uint8_t *raw = c.smem + L::RAWA_OFF + s * L::RAWA_BYTES;
	const uint8_t *sc = c.smem + L::SA_OFF + s * L::SA_BYTES;
	const int blk = c.at.q >> 1;
	const bool valid = it * 2 + blk < c.blocks;

	mbar_wait(&c.tmafull[s], ph);
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int r = c.at.r0 + 8 * h;
		const uint32_t m = multiplier(EA, sc[blk * BM + r], c.at.ra[h], valid, flag);
		const uint32_t sp = frag_row<EA>(raw, r, c.at.q, h, m, f);

		if (PART) {
			*flag |= valid ? sp : 0;
#pragma unroll
			for (int sl = 0; sl < 4; sl++) {
				f[4 * sl + h] = valid ? f[4 * sl + h] : 0;
				f[4 * sl + 2 + h] = valid ? f[4 * sl + 2 + h] : 0;
			}
		} else {
			*flag |= sp;
		}
	}
}

/* Chunk it on the tensor cores; then the fragment of chunk it + 1. */
template <int EA, bool PART>
__device__ __forceinline__ void step(const struct consumer &c, uint32_t it,
				     float *acc, uint32_t *cur, uint32_t *nxt,
				     uint32_t *flag)
{
	using L = layout;
	const int s = it % STAGES;
	const uint64_t db = make_desc(smem_addr(c.smem + L::BFB_OFF + s * L::BFB_BYTES));

	fence_regs<128>(acc);
	fence_u32<16>(cur);
	wgmma_fence();
#pragma unroll
	for (int sl = 0; sl < 4; sl++)
		wgmma_bf16_rs<256>::mma(acc, cur + 4 * sl, db + 2 * sl);
	wgmma_commit();
	wgmma_wait<1>();
	fence_regs<128>(acc);
	fence_u32<16>(nxt);
	if (it > 0)
		mbar_arrive(&c.empty[(it - 1) % STAGES]);
	if (it + 1 < c.kt)
		load_frag<EA, PART>(c, it + 1, nxt, flag);
}

#else
struct dense_tiles;
struct group_tiles;
struct group_tiles_swapped;
struct group_k_tiles;
template <typename Tiles>
struct k_of {
	static constexpr bool tma_c = false;
};
#endif /* SM90_CODE */

/*
 * An operand (B, or A for the kernel taking both from shared memory) to
 * bf16 for the main kernels: b'[n][k] = b[n][k] * 2^(s - R[n]) at the
 * chunk's permuted position, columns past K zero.  One thread per k16
 * step sl of a chunk: the output's 16-byte units 2 sl and 2 sl + 1 (bytes
 * 0-1 and 2-3 of the words 4q + sl), so that a warp's stores are
 * contiguous.  A row that breaks the exactness argument marks its tile in
 * bad_tiles.  Grid: x over a row's units, y over rows (strided).  With K
 * groups (k.count), chunk c is a chunk of its group's blocks, the rest of
 * it zeros (sm90_prep_bf16_grouped_k()).
 */
__global__ void prep_bf16_kernel(const struct sm90_prep_args p, const struct sm90_kgroups k,
				 uint32_t chunks, uint32_t bad_stride)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	const uint32_t kt = k.count ? chunks : (p.blocks + 1) / 2;
	const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t c = t / 4, sl = t % 4;
	const int e = p.elem;
	const uint32_t cb = e == SM90_E2M1 ? KC / 2 : KC;
	const uint32_t sh = e == SM90_E5M2 ? 5 : 4;
	const uint32_t mask = e == SM90_E5M2 ? 0x8fe08fe0u : 0x87f087f0u;
	/* The chunk's first block, the end of its blocks, its group. */
	uint32_t kb0 = 2 * c, kb_end = p.blocks, g = 0;

	if (c >= kt || (k.count && *k.status))
		return;
	if (k.count) {
		g = sm90_group_of(k.chunk0, k.count, c);
		kb0 = k.block0[g] + 2 * (c - k.chunk0[g]);
		kb_end = k.block0[g + 1];
	}
	for (uint32_t n = blockIdx.y; n < p.rows; n += gridDim.y) {
		const uint8_t *src = p.data + n * p.stride + (uint64_t)kb0 * (cb / 2);
		const uint32_t rmax = p.rmax[(uint64_t)g * p.rows + n];
		uint32_t lo[4], hi[4], flag = 0, m[2];

		for (int blk = 0; blk < 2; blk++) {
			bool valid = kb0 + blk < kb_end;

			m[blk] = multiplier(e, valid ? p.scales[(uint64_t)(kb0 + blk) *
								 p.rows_pad + n] : 0,
					    rmax, valid, &flag);
		}
#pragma unroll
		for (int q = 0; q < 4; q++) {
			/* Word sl of elements 16q..16q+15: 4 codes (2 bytes of fp4). */
			uint32_t w[4], x = 0;

			if (kb0 + (q >> 1) < kb_end)
				x = e == SM90_E2M1 ? *(const uint16_t *)(src + 8 * q + 2 * sl) :
						     *(const uint32_t *)(src + 16 * q + 4 * sl);
			flag |= to_e4m3(e, make_uint4(x, x, x, x), w);
			lo[q] = bf16x2_mul(bf16_lo(w[0], sh, mask), m[q >> 1]);
			hi[q] = bf16x2_mul(bf16_hi(w[0], sh, mask), m[q >> 1]);
		}
		uint4 *dst = (uint4 *)(p.out + ((uint64_t)n * kt + c) * KC * 2 + sl * 32);

		dst[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
		dst[1] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
		if (flag)
			atomicOr(&p.bad_tiles[g * bad_stride + (n >> p.tile_shift)], 1u);
	}
#endif
}

/*
 * prep_bf16_kernel() for NVFP4: the same threads and output layout, each
 * 16-element group of a chunk (q) one NVFP4 block with its own multiplier
 * (ue4m3_multiplier()), scales read where the matrix has them.  With K
 * groups (k.count), chunk c is a chunk of its group's blocks (the rest of
 * it zeros), per-group swizzled scales at the group's own tiles (k.swz0),
 * the NaN-scale flags the group's (row_nan + g x rows).
 */
__global__ void prep_nvfp4_kernel(const struct sm90_nvfp4_prep_args p,
				  const struct sm90_kgroups k, uint32_t chunks)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	const uint32_t kt = k.count ? chunks : (p.blocks + 3) / 4;
	const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t c = t / 4, sl = t % 4;
	const uint32_t mask = 0x87f087f0u;
	/* The chunk's first block in its group and in K, the group's end, its scales. */
	uint32_t local0 = 4 * c, kb0 = 4 * c, kb_end = p.blocks, g = 0, swz_tiles = p.swz_tiles;
	uint64_t sbase = 0;

	if (c >= kt || (k.count && *k.status))
		return;
	if (k.count) {
		g = sm90_group_of(k.chunk0, k.count, c);
		local0 = 4 * (c - k.chunk0[g]);
		kb0 = k.block0[g] + local0;
		kb_end = k.block0[g + 1];
		if (p.swizzled) {
			swz_tiles = k.swz0[g + 1] - k.swz0[g];
			sbase = (uint64_t)k.swz0[g] * ((p.rows + 127) / 128) * 512;
		}
	}
	for (uint32_t n = blockIdx.y; n < p.rows; n += gridDim.y) {
		const uint8_t *src = p.data + n * p.stride + (uint64_t)kb0 * 8;
		uint32_t lo[4], hi[4], nan = 0;

#pragma unroll
		for (int q = 0; q < 4; q++) {
			const uint32_t kb = kb0 + q;
			uint32_t w[4], x = 0, m = 0;

			if (kb < kb_end) {
				const uint64_t at = k.count && p.swizzled ?
					sbase + sm90_scale_index(true, 0, swz_tiles, n, local0 + q) :
					sm90_scale_index(p.swizzled, p.scale_stride, p.swz_tiles, n,
							 kb);

				m = ue4m3_multiplier(p.scale[at], &nan);
				x = *(const uint16_t *)(src + 8 * q + 2 * sl);
			}
			to_e4m3(SM90_E2M1, make_uint4(x, x, x, x), w);
			lo[q] = bf16x2_mul(bf16_lo(w[0], 4, mask), m);
			hi[q] = bf16x2_mul(bf16_hi(w[0], 4, mask), m);
		}
		uint4 *dst = (uint4 *)(p.out + ((uint64_t)n * kt + c) * KC * 2 + sl * 32);

		dst[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
		dst[1] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
		if (nan)
			p.row_nan[(uint64_t)g * p.rows + n] = 1;
	}
#endif
}

template <int EA, typename Tiles>
__global__ void __launch_bounds__(384, 1)
gemm_sm90_bf16_kernel(const __grid_constant__ CUtensorMap tma_a,
		      const __grid_constant__ CUtensorMap tma_b,
		      const __grid_constant__ CUtensorMap tma_sa,
		      const __grid_constant__ CUtensorMap tma_c,
		      const struct sm90_bf16_args p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = layout;
	extern __shared__ uint8_t smem_raw[];
	uint8_t *smem = smem_align1024(smem_raw);
	uint64_t *tmafull = (uint64_t *)(smem + L::BAR_OFF);
	uint64_t *empty = tmafull + STAGES;
	volatile uint32_t *bad = (volatile uint32_t *)(smem + L::BAD_OFF);
	const int wg = threadIdx.x / 128;
	struct tile_at t;

	if (!Tiles::at(p, &t))
		return;
	/* B's rows of this tile cannot be done exactly here. */
	if (Tiles::bad(p, t)) {
		if (threadIdx.x == 0)
			Tiles::leave(p, t);
		return;
	}
	/* An empty K group's tile runs no chunk: its C is 0 (+ C_in). */
	const uint32_t kt = t.kt;

	if (threadIdx.x == 0)
		*bad = 0;
	init_stages(tmafull, empty);

	if (wg == 2) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(PRODUCER_REGS));
		if (threadIdx.x == 256) {
			const int cba = EA == SM90_E2M1 ? KC / 2 : KC;
			const uint32_t bytes = cba * BM + L::BFB_BYTES + L::SA_BYTES;

			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_a) : "memory");
			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_b) : "memory");
			for (uint32_t it = 0; it < kt; it++) {
				const int s = it % STAGES;
				const uint32_t ph = (it / STAGES) & 1;

				mbar_wait(&empty[s], ph ^ 1);
				mbar_expect_tx(&tmafull[s], bytes);
				tma_load_2d(smem + L::RAWA_OFF + s * L::RAWA_BYTES, &tma_a,
					    &tmafull[s], (int)(it * cba + t.a_k), (int)t.a_row);
				tma_load_2d(smem + L::BFB_OFF + s * L::BFB_BYTES, &tma_b,
					    &tmafull[s], (int)(it * KC * 2 + t.b_k), (int)t.b_row);
				tma_load_2d(smem + L::SA_OFF + s * L::SA_BYTES, &tma_sa,
					    &tmafull[s], (int)t.sa_col, (int)(it * 2 + t.sa_k));
			}
		}
	} else {
		constexpr bool part = k_of<Tiles>::partial;
		const struct consumer_rows at = rows_of(p, t.a_row, t.rmax_a);
		uint32_t *rb = (uint32_t *)(smem + L::RB_OFF);
		const struct consumer cs = { smem, tmafull, empty, kt, t.blocks, at };
		uint32_t flag = 0;
		float acc[128];
		uint32_t fa[16], fb[16];

		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(CONSUMER_REGS));
		rows_b(p, rb, t);
#pragma unroll
		for (int i = 0; i < 128; i++)
			acc[i] = 0.0f;

		if (!part || kt) {
			load_frag<EA, part>(cs, 0, fa, &flag);
			for (uint32_t it = 0; it < kt; it += 2) {
				step<EA, part>(cs, it, acc, fa, fb, &flag);
				if (it + 1 < kt)
					step<EA, part>(cs, it + 1, acc, fb, fa, &flag);
			}
			wgmma_wait<0>();
			fence_regs<128>(acc);
			fence_u32<16>(fa);
			fence_u32<16>(fb);
			mbar_arrive(&empty[(kt - 1) % STAGES]);
		}

		/* All or nothing per tile: the fp8 kernel redoes a bad one. */
		if (flag)
			*bad = 1;
		asm volatile("bar.sync 1, 256;" ::: "memory");
		if (*bad) {
			if (threadIdx.x == 0)
				Tiles::leave(p, t);
			return;
		}
		/*
		 * By TMA: the CTA waits only until the stores have read the
		 * staged tile, and its writes drain while the next CTA runs.
		 */
		if (k_of<Tiles>::tma_c && p.c_tma) {
			const uint32_t es = p.out.bf16 ? 2 : 4;

			stage_tma(p, smem, acc, rb, at);
			fence_proxy_async();
			asm volatile("bar.sync 1, 256;" ::: "memory");
			if (threadIdx.x != 0)
				return;
			for (uint32_t b = 0; b < BN * es / 128; b++)
				tma_store_3d(&tma_c, smem + b * (BM * 128), (int)(t.c_col * es + b * 128),
					     (int)t.a_row, (int)(t.id / (p.tiles_m * p.tiles_n)));
			tma_store_wait_read();
			return;
		}
		write_tile(p, (float *)smem, acc, rb, at, t);
	}
#endif
}

/*
 * The same tile with A too converted by the pre-pass: both operands from
 * shared memory (wgmma with A by descriptor), nothing converted in the
 * main loop.  Faster where A's conversion in registers costs more than a
 * second pre-pass: fp4 and fp6 A on large grids
 * (Documentation/bench-cuda.rst).
 */
template <typename Tiles>
__global__ void __launch_bounds__(384, 1)
gemm_sm90_bf16_ss_kernel(const __grid_constant__ CUtensorMap tma_a,
			 const __grid_constant__ CUtensorMap tma_b,
			 const struct sm90_bf16_args p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = layout_ss;
	extern __shared__ uint8_t smem_raw[];
	uint8_t *smem = smem_align1024(smem_raw);
	uint64_t *tmafull = (uint64_t *)(smem + L::BAR_OFF);
	uint64_t *empty = tmafull + STAGES;
	const int wg = threadIdx.x / 128;
	struct tile_at t;

	if (!Tiles::at(p, &t))
		return;
	/* Rows of A or B in this tile cannot be done exactly here. */
	if (Tiles::bad_ss(p, t)) {
		if (threadIdx.x == 0)
			Tiles::leave(p, t);
		return;
	}
	const uint32_t kt = t.kt;

	init_stages(tmafull, empty);

	if (wg == 2) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(PRODUCER_REGS));
		if (threadIdx.x == 256) {
			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_a) : "memory");
			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_b) : "memory");
			for (uint32_t it = 0; it < kt; it++) {
				const int s = it % STAGES;
				const uint32_t ph = (it / STAGES) & 1;

				mbar_wait(&empty[s], ph ^ 1);
				mbar_expect_tx(&tmafull[s], L::BFA_BYTES + L::BFB_BYTES);
				/* Both pre-passed alike: A's chunks where B's are. */
				tma_load_2d(smem + L::BFA_OFF + s * L::BFA_BYTES, &tma_a,
					    &tmafull[s], (int)(it * KC * 2 + t.b_k), (int)t.a_row);
				tma_load_2d(smem + L::BFB_OFF + s * L::BFB_BYTES, &tma_b,
					    &tmafull[s], (int)(it * KC * 2 + t.b_k), (int)t.b_row);
			}
		}
	} else {
		const struct consumer_rows at = rows_of(p, t.a_row, t.rmax_a);
		uint32_t *rb = (uint32_t *)(smem + L::RB_OFF);
		float acc[128];

		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(CONSUMER_REGS));
		rows_b(p, rb, t);
#pragma unroll
		for (int i = 0; i < 128; i++)
			acc[i] = 0.0f;

		/* Four wgmma a chunk; the chunk before stays in flight meanwhile. */
		for (uint32_t it = 0; it < kt; it++) {
			const int s = it % STAGES;
			const uint64_t da = make_desc(smem_addr(smem + L::BFA_OFF + s * L::BFA_BYTES +
								wg * (BM / 2) * KC * 2));
			const uint64_t db = make_desc(smem_addr(smem + L::BFB_OFF + s * L::BFB_BYTES));

			mbar_wait(&tmafull[s], (it / STAGES) & 1);
			fence_regs<128>(acc);
			wgmma_fence();
#pragma unroll
			for (int sl = 0; sl < 4; sl++)
				wgmma_bf16_ss<256>::mma(acc, da + 2 * sl, db + 2 * sl);
			wgmma_commit();
			wgmma_wait<1>();
			fence_regs<128>(acc);
			if (it > 0)
				mbar_arrive(&empty[(it - 1) % STAGES]);
		}
		wgmma_wait<0>();
		fence_regs<128>(acc);
		if (kt)
			mbar_arrive(&empty[(kt - 1) % STAGES]);

		/* Both warpgroups are done with the stages the epilogue reuses. */
		asm volatile("bar.sync 1, 256;" ::: "memory");
		if (p.nvfp4)
			write_tile<true>(p, (float *)smem, acc, rb, at, t);
		else
			write_tile(p, (float *)smem, acc, rb, at, t);
	}
#endif
}

/*
 * One instance of the kernel: dense_tiles, or group_tiles for the grouped
 * GEMM (p.tiles_m tile rows bound the groups' own); maps[3] C's for the
 * policies that store it by TMA (k_of<Tiles>::tma_c).
 */
template <int EA, typename Tiles>
int launch_inst(struct cuda_device *cd, const CUtensorMap *maps,
		const struct sm90_bf16_args &p)
{
	static unsigned long long configured;
	int ret = sm90_allow_smem(cd, gemm_sm90_bf16_kernel<EA, Tiles>, layout::SMEM,
				 &configured);

	if (ret)
		return ret;
	gemm_sm90_bf16_kernel<EA, Tiles><<<p.tiles_m * p.tiles_n * (p.kgroups.count ?
								      p.kgroups.count : 1),
					   384, layout::SMEM, cd->stream>>>(maps[0], maps[1], maps[2],
									    k_of<Tiles>::tma_c ?
									    maps[3] : maps[0], p);
	return 0;
}

/* The kernel's instance for A's element type. */
template <typename Tiles>
int launch_elem(struct cuda_device *cd, const CUtensorMap *maps,
		const struct sm90_bf16_args &p)
{
	switch (p.elem_a) {
	case SM90_E5M2:
		return launch_inst<SM90_E5M2, Tiles>(cd, maps, p);
	case SM90_E2M3:
		return launch_inst<SM90_E2M3, Tiles>(cd, maps, p);
	case SM90_E3M2:
		return launch_inst<SM90_E3M2, Tiles>(cd, maps, p);
	case SM90_E2M1:
		return launch_inst<SM90_E2M1, Tiles>(cd, maps, p);
	default:
		return launch_inst<SM90_E4M3, Tiles>(cd, maps, p);
	}
}

/* The kernel with both operands from the pre-pass, for a tile policy. */
template <typename Tiles>
int launch_ss(struct cuda_device *cd, const CUtensorMap *maps,
	      const struct sm90_bf16_args &p)
{
	static unsigned long long configured;
	int ret = sm90_allow_smem(cd, gemm_sm90_bf16_ss_kernel<Tiles>, layout_ss::SMEM,
				  &configured);

	if (ret)
		return ret;
	gemm_sm90_bf16_ss_kernel<Tiles><<<p.tiles_m * p.tiles_n * (p.kgroups.count ?
								     p.kgroups.count : 1),
					  384, layout_ss::SMEM, cd->stream>>>(maps[0], maps[1], p);
	return 0;
}

} /* namespace */

int sm90_launch_bf16(struct cuda_device *cd, const CUtensorMap *maps,
		     const struct sm90_bf16_args &p)
{
	return launch_elem<dense_tiles>(cd, maps, p);
}

int sm90_launch_bf16_grouped(struct cuda_device *cd, const CUtensorMap *maps,
			     const struct sm90_bf16_args &p)
{
	return launch_elem<group_tiles>(cd, maps, p);
}

int sm90_launch_bf16_grouped_swapped(struct cuda_device *cd, const CUtensorMap *maps,
				     const struct sm90_bf16_args &p)
{
	/* fp8 codes only: the others convert at a cost the pre-pass does not have. */
	if (p.elem_a == SM90_E5M2)
		return launch_inst<SM90_E5M2, group_tiles_swapped>(cd, maps, p);
	if (p.elem_a == SM90_E4M3)
		return launch_inst<SM90_E4M3, group_tiles_swapped>(cd, maps, p);
	return cuda_err(-EINVAL, "cuda-grouped-sm90: the swapped mapping takes fp8 b only (elem %d)",
			p.elem_a);
}

int sm90_launch_bf16_grouped_k(struct cuda_device *cd, const CUtensorMap *maps,
			       const struct sm90_bf16_args &p)
{
	return launch_elem<group_k_tiles>(cd, maps, p);
}

int sm90_launch_bf16_ss(struct cuda_device *cd, const CUtensorMap *maps,
			const struct sm90_bf16_args &p)
{
	return launch_ss<dense_tiles>(cd, maps, p);
}

int sm90_launch_bf16_ss_grouped(struct cuda_device *cd, const CUtensorMap *maps,
				const struct sm90_bf16_args &p)
{
	return launch_ss<group_tiles>(cd, maps, p);
}

int sm90_launch_bf16_ss_grouped_k(struct cuda_device *cd, const CUtensorMap *maps,
				  const struct sm90_bf16_args &p)
{
	return launch_ss<group_k_tiles>(cd, maps, p);
}

bool sm90_bf16_fits(struct cuda_device *cd)
{
	return cd->smem_optin >= (size_t)layout::SMEM &&
	       cd->smem_optin >= (size_t)layout_ss::SMEM;
}

int sm90_prep_bf16(struct cuda_device *cd, const struct sm90_prep_args &p)
{
	const struct sm90_kgroups none = {};

	return sm90_prep_bf16_grouped_k(cd, p, none, (p.blocks + 1) / 2, 0);
}

int sm90_prep_bf16_grouped_k(struct cuda_device *cd, const struct sm90_prep_args &p,
			     const struct sm90_kgroups &k, uint32_t chunks, uint32_t bad_stride)
{
	uint32_t units = chunks * 4;

	prep_bf16_kernel<<<dim3((units + 127) / 128, p.rows < 65535 ? p.rows : 65535), 128, 0,
			cd->stream>>>(p, k, chunks, bad_stride);
	return 0;
}

int sm90_prep_nvfp4(struct cuda_device *cd, const struct sm90_nvfp4_prep_args &p)
{
	const struct sm90_kgroups none = {};

	return sm90_prep_nvfp4_grouped_k(cd, p, none, (p.blocks + 3) / 4);
}

int sm90_prep_nvfp4_grouped_k(struct cuda_device *cd, const struct sm90_nvfp4_prep_args &p,
			      const struct sm90_kgroups &k, uint32_t chunks)
{
	uint32_t units = chunks * 4;

	prep_nvfp4_kernel<<<dim3((units + 127) / 128, p.rows < 65535 ? p.rows : 65535), 128, 0,
			     cd->stream>>>(p, k, chunks);
	return 0;
}
