// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90, skinny path: C = A B^T with M <= 32 (decode), one pass over
 * B's codes (49 % of copy bandwidth for MXFP8 on the H200, where the
 * time goes: Documentation/bench-cuda.rst).
 *
 * At small M the GEMM is bound by the bytes of B (the weights): what
 * matters is bytes in flight and few instructions per byte, not the
 * tensor-core rate.  With X = B (N rows) and Y = A (M rows):
 *
 * - every element is exact in fp16 (fp6/fp4 re-encoded as e4m3 first, as
 *   in the fp8 kernel; then one cvt per pair, NaN and Inf kept), so the
 *   tensor cores form exact products with mma.sync m16n8k16 (Hopper has no
 *   fp8 mma.sync: the compiler emulates it with three times as many
 *   instructions);
 * - a pre-pass turns Y, a few KB, into fragments in global memory (e4m3
 *   or e5m2 bytes, scales as fp32 powers of two); the main kernel is
 *   launched as its programmatic dependent, so that it starts streaming X
 *   while the pre-pass runs, then copies its range of Y into shared
 *   memory at once;
 * - each CTA takes 128 rows of X (16 per warp) and a range of K; every
 *   warp streams its rows through a two-stage ring of shared memory with
 *   cp.async, 128 bytes of each row per stage, one stage in flight while
 *   one is computed, the warps starting at different stages;
 * - within an MX block the order of k is free as long as X and Y agree, so
 *   a thread takes 8 consecutive codes of a row for the A fragments of two
 *   mmas, and Y's fragments are laid out to match;
 * - each MX block's partial leaves the tensor cores on its own (two mmas
 *   from zero) and is promoted as in the fp8 kernel:
 *   acc += partial * (2^sx * 2^sy) by promote_fma() (one exact factor,
 *   two steps where 2^(sx + sy) is not a normal fp32);
 * - when K is split, each CTA stores its partial tile and the last of a
 *   tile (a counter per tile, which it resets) adds them in range order:
 *   results do not depend on timing.
 *
 * No tile is left to another kernel: NaN and Inf codes are fp16's own, NaN
 * scales go through the promotion.  Accuracy: Documentation/numerics.rst.
 *
 * NVFP4 x NVFP4 (NV; e2m1 with a UE4M3 scale per 16, K a multiple of 32):
 * the same stream of 32-value spans, each two NVFP4 blocks.  A thread takes
 * codes 4t .. 4t + 3 and 16 + 4t .. 19 + 4t of its rows (two 2-byte reads
 * of the stage), so that each of the span's two mmas stays inside one
 * block; each leaves the tensor cores on its own and is added as
 * acc += partial * (sx * sy), the product of two UE4M3 values exact in
 * fp32 (at most 8 significant bits, 2^-18 .. 448^2), one rounding; the
 * tensor scales multiply once at the end (sm90_nvfp4_factors()).
 */
#include <errno.h>
#include <stdint.h>
#include <type_traits>

#include <cuda.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"
#include "cuda_sm90_fold.cuh"
#include "cuda_splitk.cuh"

namespace {

constexpr int WARPS = 8, THREADS = 32 * WARPS, ROWS = 16 * WARPS;
/* The ring: bytes of a row per stage, stages; CTAs per SM it allows. */
constexpr int SPAN = 128, STAGES = 2, CTAS_PER_SM = 3;
constexpr int STAGE_BYTES = 16 * SPAN;
constexpr int RING_BYTES = WARPS * STAGES * STAGE_BYTES;
/* Shared memory of a CTA, so that CTAS_PER_SM fit. */
constexpr uint32_t SMEM_CTA = (227 * 1024) / CTAS_PER_SM - 1024;

/*
 * One MX block of Y as the pre-pass lays it out, for NT n-tiles of 8 rows:
 * per lane NT pairs of words (codes 8t .. 8t + 7 of row 8j + g as e4m3 or
 * e5m2 bytes: the B fragments of the block's two mmas once in fp16), then
 * per t NT pairs of fp32 scales (rows 8j + 2t and 8j + 2t + 1, the columns
 * of its C fragment).
 */
template <int NT, bool NV = false> struct yblock {
	static constexpr int FRAG = 32 * NT * 8;
	/* NV: per t and j a float4, rows 2t and 2t + 1 of each of two blocks. */
	static constexpr int SCALE = (NV ? 8 : 4) * NT * 8;
	static constexpr int BYTES = FRAG + SCALE;
};

/* X's scale bytes per span of 32 values: one E8M0, or two UE4M3. */
__host__ __device__ constexpr uint32_t scales_per_span(bool nv)
{
	return nv ? 2 : 1;
}

/* Blocks of K per stage. */
__host__ __device__ constexpr uint32_t blocks_per_stage(int e)
{
	return e == SM90_E2M1 ? SPAN / 16 : SPAN / 32;
}

/* X's scale bytes in shared memory: a row every scale_pitch() bytes. */
__host__ __device__ constexpr uint32_t scale_pitch(uint32_t pad)
{
	return (pad + 3) / 8 * 8 + 4;	/* odd words: rows on other banks */
}

/* The ring, Y's range, X's scale bytes, an mbarrier. */
template <int NT, bool NV> __host__ __device__ constexpr uint32_t smem_bytes(uint32_t pad)
{
	return RING_BYTES + pad * yblock<NT, NV>::BYTES +
	       ROWS * scale_pitch(scales_per_span(NV) * pad) + 16;
}

/* The longest range of K (a multiple of 8 spans) that fits SMEM_CTA. */
template <int NT, bool NV> constexpr uint32_t max_range(void)
{
	return (SMEM_CTA - RING_BYTES - ROWS * 12 - 16) /
	       (yblock<NT, NV>::BYTES + ROWS * scales_per_span(NV)) / 8 * 8;
}

#ifdef SM90_CODE

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, uint32_t n)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
		     :: "r"(dst), "l"(src), "r"(n) : "memory");
}

__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes,
					  uint64_t *bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1], %2, [%3];"
		     :: "r"(smem_addr(dst)), "l"((uint64_t)src), "r"(bytes),
			"r"(smem_addr(bar))
		     : "memory");
}

__device__ __forceinline__ void cp_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int N> __device__ __forceinline__ void cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

/*
 * Byte offset of byte `off` of row h in a stage, the units of each row
 * swizzled so that the rows a fragment load touches use different banks:
 * fp8 and fp6 threads read 8 bytes (per half-warp four rows of 32 bytes:
 * 32-byte units), fp4 threads 4 bytes (eight rows of 16 bytes: 16-byte
 * units).  16-byte units for all had every fp8 load conflict two ways.
 */
template <int TB>
__device__ __forceinline__ uint32_t ring_at(uint32_t h, uint32_t off)
{
	if (TB == 4)
		return h * SPAN + (((off >> 4) ^ (h & 7)) << 4) + (off & 15);
	return h * SPAN + (((off >> 5) ^ (h & 3)) << 5) + (off & 31);
}

/* d = A B (+ d with ACC), m16n8k16, fp16 operands, fp32 sums. */
template <bool ACC>
__device__ __forceinline__ void mma_f16(float *d, uint32_t a0, uint32_t a1, uint32_t a2,
					uint32_t a3, uint32_t b0, uint32_t b1)
{
	const float z = 0.0f;

	if (ACC)
		asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
	else
		asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
		    : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(z));
}

/*
 * Codes 2h, 2h + 1 of a word of fp8 codes (e4m3, or e5m2 with E5) as an
 * fp16 pair: exact, NaN and Inf kept (one F2FP).
 */
template <bool E5, int H> __device__ __forceinline__ uint32_t fp8x2_f16(uint32_t w)
{
	uint32_t d;

#define MXA_CVT(T, HALF)							\
	asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %1;\n"			\
	    "cvt.rn.f16x2." T "x2 %0, " HALF ";\n}" : "=r"(d) : "r"(w))
	if (E5 && H)
		MXA_CVT("e5m2", "h");
	else if (E5)
		MXA_CVT("e5m2", "l");
	else if (H)
		MXA_CVT("e4m3", "h");
	else
		MXA_CVT("e4m3", "l");
#undef MXA_CVT
	return d;
}

/* Eight codes of one row (fp8/fp6: v.x, v.y; fp4: v.x) as e4m3 (e5m2) bytes. */
__device__ __forceinline__ uint2 to_fp8(int e, uint2 v)
{
	if (e == SM90_E2M1)
		return e2m1x8_to_e4m3(v.x);
	if (e == SM90_E2M3)
		return make_uint2(e2m3_to_e4m3(v.x), e2m3_to_e4m3(v.y));
	if (e == SM90_E3M2)
		return make_uint2(e3m2_to_e4m3(v.x), e3m2_to_e4m3(v.y));
	return v;
}

/*
 * Eight codes of one row as four fp16 pairs f[0..3] (codes 0 1, 2 3, 4 5,
 * 6 7): the A (or B) halves of the block's two mmas.
 */
template <int E>
__device__ __forceinline__ void to_f16(uint2 v, uint32_t *f)
{
	const uint2 w = to_fp8(E, v);

	f[0] = fp8x2_f16<E == SM90_E5M2, 0>(w.x);
	f[1] = fp8x2_f16<E == SM90_E5M2, 1>(w.x);
	f[2] = fp8x2_f16<E == SM90_E5M2, 0>(w.y);
	f[3] = fp8x2_f16<E == SM90_E5M2, 1>(w.y);
}

/* Codes k0 .. k0 + 7 of row r of Y as e4m3 (e5m2) bytes. */
__device__ __forceinline__ uint2 y_codes(const struct sm90_mx_operand &y, uint32_t r,
					 uint32_t k0)
{
	const uint8_t *row = y.data + r * y.stride;
	uint2 v = make_uint2(0, 0);

	if (y.elem == SM90_E2M1) {
		for (int i = 0; i < 4; i++)
			v.x |= (uint32_t)row[k0 / 2 + i] << (8 * i);
	} else {
		for (int i = 0; i < 4; i++) {
			v.x |= (uint32_t)row[k0 + i] << (8 * i);
			v.y |= (uint32_t)row[k0 + 4 + i] << (8 * i);
		}
	}
	return to_fp8(y.elem, v);
}

/*
 * NVFP4: codes k0 + 4t .. k0 + 4t + 3 and k0 + 16 + 4t .. k0 + 19 + 4t of
 * row r of Y (k0 a multiple of 32) as e4m3 bytes, the first four for the
 * span's first block's mma, the others for the second's.
 */
__device__ __forceinline__ uint2 y_codes_nv(const struct sm90_mx_operand &y, uint32_t r,
					    uint32_t k0, uint32_t t)
{
	const uint8_t *row = y.data + r * y.stride + k0 / 2;
	const uint32_t v = (uint32_t)row[2 * t] | (uint32_t)row[2 * t + 1] << 8 |
			   (uint32_t)row[8 + 2 * t] << 16 | (uint32_t)row[9 + 2 * t] << 24;

	return to_fp8(SM90_E2M1, make_uint2(v, 0));
}

/* Non-zero where a byte of x is zero. */
__device__ __forceinline__ uint32_t zero_byte(uint32_t x)
{
	return (x - 0x01010101u) & ~x & 0x80808080u;
}

/*
 * X's scale bytes of the CTA's rows, blocks [kb0, kb0 + pad) (past
 * kb1: fill, 1.0 in the scale type, whose codes are zero); returns
 * non-zero where one of them is 0 or 0xff (E8M0: 2^-127 and NaN, which
 * the fast conversion gets wrong).
 */
__device__ __forceinline__ uint32_t stage_scales(const struct sm90_skinny_args &p,
						 uint8_t *xs, uint32_t row0, uint32_t kb0,
						 uint32_t kb1, uint32_t pad, uint32_t fill)
{
	const uint32_t pitch = scale_pitch(pad), words = (pad + 3) / 4;
	uint32_t odd = 0;

#pragma unroll 4
	for (uint32_t i = threadIdx.x; i < ROWS * words; i += THREADS) {
		const uint32_t r = i / words, kb = kb0 + 4 * (i % words);
		const uint32_t xr = min(row0 + r, p.x.rows - 1);
		uint32_t v = 0;

		if (p.x_scale_words && kb + 4 <= kb1) {
			v = __ldg((const uint32_t *)(p.x.scale +
						     sm90_scale_index(p.x.swizzled,
								      p.x.scale_stride,
								      p.x.swz_tiles, xr, kb)));
		} else {
			for (uint32_t q = 0; q < 4; q++)
				v |= (kb + q < kb1 ?
				      (uint32_t)__ldg(p.x.scale +
						      sm90_scale_index(p.x.swizzled,
								       p.x.scale_stride,
								       p.x.swz_tiles, xr, kb + q)) :
				      fill) << (8 * q);
		}
		odd |= zero_byte(v) | zero_byte(~v);
		*(uint32_t *)(xs + r * pitch + 4 * (i % words)) = v;
	}
	return odd;
}

#endif /* SM90_CODE */

/*
 * Y to fragments (yblock<NT, NV>), spans beyond K as zero codes and scale
 * 1; NV: y.scale holds UE4M3 scales per 16 (blocks counts spans of 32).
 */
template <int NT, bool NV>
__global__ void skinny_prep_kernel(const struct sm90_mx_operand y, uint32_t blocks,
				   uint32_t pad, uint8_t *out)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = yblock<NT, NV>;
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t kb = i / (32 * NT), lane = i / NT % 32, j = i % NT;
	const uint32_t g = lane / 4, t = lane % 4;

	/* The main kernel may start streaming X now. */
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	if (kb >= pad)
		return;
	uint8_t *blk = out + (size_t)kb * L::BYTES;
	const uint32_t r = 8 * j + g;

	if (NV) {
		((uint2 *)blk)[lane * NT + j] = r < y.rows && kb < blocks ?
						y_codes_nv(y, r, kb * 32, t) : make_uint2(0, 0);
		if (g != 0)
			return;
		float v[4];

		for (int h = 0; h < 4; h++) {
			const uint32_t rs = 8 * j + 2 * t + h % 2, b = 2 * kb + h / 2;

			v[h] = rs < y.rows && kb < blocks ?
			       ue4m3x2_to_f32(y.scale[sm90_scale_index(y.swizzled, y.scale_stride,
									y.swz_tiles, rs, b)]).x :
			       1.0f;
		}
		((float4 *)(blk + L::FRAG))[t * NT + j] = make_float4(v[0], v[1], v[2], v[3]);
		return;
	}
	((uint2 *)blk)[lane * NT + j] = r < y.rows && kb < blocks ?
					y_codes(y, r, kb * 32 + 8 * t) : make_uint2(0, 0);
	if (g == 0) {
		float v[2];

		for (int h = 0; h < 2; h++) {
			const uint32_t rs = 8 * j + 2 * t + h;

			v[h] = rs < y.rows && kb < blocks ?
			       e8m0_to_f32(y.scale[sm90_scale_index(y.swizzled, y.scale_stride,
								    y.swz_tiles, rs, kb)]) :
			       1.0f;
		}
		((float2 *)(blk + L::FRAG))[t * NT + j] = make_float2(v[0], v[1]);
	}
#endif
}

/*
 * CTA (blockIdx.x, blockIdx.y): rows 128 x .. 128 x + 127 of X, blocks
 * [range y, range (y + 1)) of K.  yfrag: Y as skinny_prep_kernel() lays it
 * out.  With more than one range, partial holds the tiles' partial sums
 * (per thread its NT x 4 values) and count the ranges done per tile.
 */
template <int EX, int EY, int NT, bool NV>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
skinny_kernel(const struct sm90_skinny_args p, const uint8_t *yfrag, uint32_t range,
	      float *partial, uint32_t *count)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = yblock<NT, NV>;
	constexpr uint32_t SPS = scales_per_span(NV);
	constexpr uint32_t U = blocks_per_stage(EX);
	constexpr uint32_t CB = EX == SM90_E2M1 ? 16 : 32;	/* bytes of a row per block */
	constexpr uint32_t TB = EX == SM90_E2M1 ? 4 : 8;	/* of them per thread */
	extern __shared__ __align__(16) uint8_t smem[];
	const uint32_t ranges = gridDim.y, part = blockIdx.y, tile = blockIdx.x;
	const uint32_t kb0 = part * range, kb1 = min(kb0 + range, p.blocks);
	const uint32_t iters = (kb1 - kb0 + U - 1) / U, pad = iters * U;
	const uint32_t pitch = scale_pitch(SPS * pad);
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int g = lane / 4, t = lane % 4;
	const uint32_t row0 = tile * ROWS, wrow = row0 + warp * 16, r0 = wrow + g;
	/*
	 * The n-tiles of 8 rows of Y this tile needs: all, or grouped only
	 * those holding rows of A in the groups of its rows of X (a decode
	 * step's group has a few); the others' results would be discarded.
	 * The schedule pass finished before the pre-pass began.
	 */
	int jlo = 0, jhi = NT - 1;

	if (p.group_row) {
		const uint32_t last = min(row0 + ROWS, p.x.rows) - 1;
		const uint32_t y0 = p.group_row[row0 / p.group_n];
		const uint32_t y1 = p.group_row[last / p.group_n + 1];

		jlo = (int)(y0 / 8);
		jhi = y1 > y0 ? (int)((y1 - 1) / 8) : -1;
	}
	uint8_t *ring = smem + warp * STAGES * STAGE_BYTES;
	uint8_t *ys = smem + RING_BYTES;
	uint8_t *xs = ys + pad * L::BYTES;
	uint64_t *bar = (uint64_t *)(xs + ROWS * pitch);
	/*
	 * This lane copies 16-byte unit lane % UNITS of rows RPI i + lane /
	 * UNITS of the warp's 16 (rows past N read row N - 1).
	 */
	constexpr uint32_t UNITS = SPAN / 16, RPI = 32 / UNITS;	/* per row, rows per copy */
	const uint32_t cu = lane % UNITS, ch = lane / UNITS;
	const uint32_t ring_s = smem_addr(ring);
	const uint8_t *src[16 / RPI];
	float acc[NT][4];

#pragma unroll
	for (uint32_t i = 0; i < 16 / RPI; i++)
		src[i] = p.x.data + kb0 * CB + cu * 16 +
			 min(wrow + RPI * i + ch, p.x.rows - 1) * p.x.stride;

	/*
	 * The warps start at different stages of the range and wrap around
	 * (Y's whole range is in shared memory), so that they do not all ask
	 * for the same offsets of their rows at once.
	 */
	const uint32_t rot = (((tile * 7 + part) * WARPS + warp) * 5) % iters;
	auto stage_of = [&](uint32_t it) {
		return it + rot < iters ? it + rot : it + rot - iters;
	};
	/* The it-th stage: blocks kb0 + U stage_of(it) .. of the warp's 16 rows. */
	auto issue = [&](uint32_t it) {
		const uint32_t at = ring_s + (it % STAGES) * STAGE_BYTES;

		it = stage_of(it);
		const uint32_t n = kb0 + it * U + cu * 16 / CB < kb1 ? 16 : 0;

#pragma unroll
		for (uint32_t i = 0; i < 16 / RPI; i++)
			cp_async16(at + ring_at<TB>(RPI * i + ch, cu * 16),
				   n ? src[i] + it * U * CB : src[i], n);
	};

	if (threadIdx.x == 0) {
		mbar_init(bar, 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	for (uint32_t it = 0; it < STAGES - 1; it++) {
		if (it < iters)
			issue(it);
		cp_commit();
	}
	const uint32_t odd = stage_scales(p, xs, row0, SPS * kb0, SPS * kb1, SPS * pad,
					  NV ? 0x38u : 127u);
	/* Y's fragments come from the pre-pass, its range in one copy. */
	asm volatile("griddepcontrol.wait;" ::: "memory");
	if (threadIdx.x == 0) {
		mbar_expect_tx(bar, pad * L::BYTES);
		bulk_load(ys, yfrag + (size_t)kb0 * L::BYTES, pad * L::BYTES, bar);
	}
	const bool fast = !__syncthreads_or(odd);
	mbar_wait(bar, 0);
#pragma unroll
	for (int j = 0; j < NT; j++)
		for (int e = 0; e < 4; e++)
			acc[j][e] = 0.0f;

	for (uint32_t it = 0; it < iters; it++) {
		const uint8_t *st = ring + (it % STAGES) * STAGE_BYTES;

		/* Everyone is done with the stage the next copy overwrites. */
		__syncwarp();
		if (it + STAGES - 1 < iters)
			issue(it + STAGES - 1);
		cp_commit();
		cp_wait<STAGES - 1>();
		__syncwarp();
		const uint32_t b0 = stage_of(it) * U;
		const uint8_t *yb0 = ys + b0 * L::BYTES;
		const uint8_t *sa8 = xs + (warp * 16 + g) * pitch + SPS * b0;
		const uint8_t *sb8 = xs + (warp * 16 + g + 8) * pitch + SPS * b0;
		const uint32_t *sa = (const uint32_t *)sa8, *sb = (const uint32_t *)sb8;
		/*
		 * X's scales four blocks a word; as fp32 by moving the byte to
		 * the exponent (fast: no 0 or 0xff among the CTA's scales).
		 */
		/*
		 * NVFP4: per span two blocks, each its own mma from zero,
		 * promoted by the exact product of X's and Y's UE4M3 values.
		 */
		auto compute_nv = [&]() {
#pragma unroll
			for (uint32_t u = 0; u < U; u++) {
				const uint8_t *yb = yb0 + u * L::BYTES;
				const uint2 *yf = (const uint2 *)yb + lane * NT;
				const float4 *sy = (const float4 *)(yb + L::FRAG) + t * NT;
				const uint32_t o0 = u * CB + 2 * t, o1 = o0 + 8;
				const uint2 va = make_uint2(
					*(const uint16_t *)(st + ring_at<TB>(g, o0)) |
					(uint32_t)*(const uint16_t *)(st + ring_at<TB>(g, o1)) << 16, 0);
				const uint2 vb = make_uint2(
					*(const uint16_t *)(st + ring_at<TB>(g + 8, o0)) |
					(uint32_t)*(const uint16_t *)(st + ring_at<TB>(g + 8, o1)) << 16, 0);
				const float2 xa = ue4m3x2_to_f32(*(const uint16_t *)(sa8 + 2 * u));
				const float2 xb = ue4m3x2_to_f32(*(const uint16_t *)(sb8 + 2 * u));
				uint32_t fa[4], fb[4];

				to_f16<EX>(va, fa);
				to_f16<EX>(vb, fb);
#pragma unroll
				for (int j = 0; j < NT; j++) {
					if (j < jlo || j > jhi)
						continue;
					const float4 s = sy[j];
					uint32_t y[4];
					float d0[4], d1[4];

					to_f16<SM90_E4M3>(yf[j], y);
					mma_f16<false>(d0, fa[0], fb[0], fa[1], fb[1], y[0], y[1]);
					mma_f16<false>(d1, fa[2], fb[2], fa[3], fb[3], y[2], y[3]);
					acc[j][0] = fmaf(d0[0], xa.x * s.x, acc[j][0]);
					acc[j][1] = fmaf(d0[1], xa.x * s.y, acc[j][1]);
					acc[j][2] = fmaf(d0[2], xb.x * s.x, acc[j][2]);
					acc[j][3] = fmaf(d0[3], xb.x * s.y, acc[j][3]);
					acc[j][0] = fmaf(d1[0], xa.y * s.z, acc[j][0]);
					acc[j][1] = fmaf(d1[1], xa.y * s.w, acc[j][1]);
					acc[j][2] = fmaf(d1[2], xb.y * s.z, acc[j][2]);
					acc[j][3] = fmaf(d1[3], xb.y * s.w, acc[j][3]);
				}
			}
		};
		auto compute = [&](auto fast_tag) {
#pragma unroll
			for (uint32_t u = 0; u < U; u++) {
				const uint8_t *yb = yb0 + u * L::BYTES;
				const uint2 *yf = (const uint2 *)yb + lane * NT;
				const float2 *sy = (const float2 *)(yb + L::FRAG) + t * NT;
				const uint32_t off = u * CB + TB * t;
				const uint32_t wa = sa[u / 4], wb = sb[u / 4];
				uint2 va = make_uint2(0, 0), vb = make_uint2(0, 0);
				uint32_t fa[4], fb[4];
				float xa, xb;

				if (TB == 4) {
					va.x = *(const uint32_t *)(st + ring_at<TB>(g, off));
					vb.x = *(const uint32_t *)(st + ring_at<TB>(g + 8, off));
				} else {
					va = *(const uint2 *)(st + ring_at<TB>(g, off));
					vb = *(const uint2 *)(st + ring_at<TB>(g + 8, off));
				}
				to_f16<EX>(va, fa);
				to_f16<EX>(vb, fb);
				if (decltype(fast_tag)::value) {
					const uint32_t sel = ((u % 4) << 12) | 0x444;

					xa = __uint_as_float(__byte_perm(wa, 0, sel) >> 1);
					xb = __uint_as_float(__byte_perm(wb, 0, sel) >> 1);
				} else {
					xa = e8m0_to_f32((wa >> (8 * (u % 4))) & 0xff);
					xb = e8m0_to_f32((wb >> (8 * (u % 4))) & 0xff);
				}
#pragma unroll
				for (int j = 0; j < NT; j++) {
					if (j < jlo || j > jhi)
						continue;
					const float2 s = sy[j];
					uint32_t y[4];
					float d[4];

					to_f16<EY == SM90_E5M2 ? SM90_E5M2 : SM90_E4M3>(yf[j], y);
					/* Rows g, g + 8 of the first pairs, then of the second. */
					mma_f16<false>(d, fa[0], fb[0], fa[1], fb[1], y[0], y[1]);
					mma_f16<true>(d, fa[2], fb[2], fa[3], fb[3], y[2], y[3]);
					acc[j][0] = promote_fma(d[0], xa, s.x, acc[j][0]);
					acc[j][1] = promote_fma(d[1], xa, s.y, acc[j][1]);
					acc[j][2] = promote_fma(d[2], xb, s.x, acc[j][2]);
					acc[j][3] = promote_fma(d[3], xb, s.y, acc[j][3]);
				}
			}
		};
		if constexpr (NV)
			compute_nv();
		else if (fast)
			compute(std::true_type());
		else
			compute(std::false_type());
	}
	cp_wait<0>();

	/* Split K: the last CTA of the tile adds the ranges in order. */
	if (ranges > 1 &&
	    !splitk_ordered_sum<NT, THREADS>(acc, (float4 *)partial, count, tile, ranges, part))
		return;
	if (p.group_row && *(volatile const uint32_t *)p.group_status)
		return;
#pragma unroll
	for (int j = 0; j < NT; j++) {
		for (int e = 0; e < 4; e++) {
			uint32_t i = r0 + (e >= 2 ? 8 : 0);
			const uint32_t c = 8 * j + 2 * t + (e & 1);

			if (i >= p.x.rows || c >= p.y.rows)
				continue;
			/* Grouped: only the rows of A in this row of B's group. */
			if (p.group_row) {
				const uint32_t gr = i / p.group_n;

				if (c < p.group_row[gr] || c >= p.group_row[gr + 1])
					continue;
				i -= gr * p.group_n;
			}
			store_c_value(p.out, (uint64_t)c * p.out.stride + i,
				      NV ? acc[j][e] * p.post * p.t1 * p.t2 :
					   acc[j][e] * p.post);
		}
	}
#endif
}

/* Where a launch's pieces are. */
struct plan {
	uint32_t tiles, ranges, range;
	const uint8_t *yfrag;
	float *partial;
	uint32_t *count;
};

template <int EX, int EY, int NT, bool NV = false>
int launch_inst(struct cuda_device *cd, const struct sm90_skinny_args &p,
		const struct plan &pl)
{
	static unsigned long long configured;
	const uint32_t u = blocks_per_stage(EX);
	cudaLaunchAttribute attr;
	cudaLaunchConfig_t cfg = {};
	cudaError_t e;
	int ret = sm90_allow_smem(cd, skinny_kernel<EX, EY, NT, NV>,
				  (int)smem_bytes<NT, NV>(max_range<NT, NV>()), &configured);

	if (ret)
		return ret;
	cfg.gridDim = dim3(pl.tiles, pl.ranges);
	cfg.blockDim = dim3(THREADS);
	cfg.dynamicSmemBytes = smem_bytes<NT, NV>((pl.range + u - 1) / u * u);
	cfg.stream = cd->stream;
	attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr.val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	e = cudaLaunchKernelEx(&cfg, skinny_kernel<EX, EY, NT, NV>, p, pl.yfrag, pl.range,
			       pl.partial, pl.count);
	return e == cudaSuccess ? 0 : cuda_fail(e, "cuda-mx-sm90: skinny launch");
}

template <int EX, int NT>
int launch_ey(struct cuda_device *cd, const struct sm90_skinny_args &p, const struct plan &pl)
{
	switch (p.y.elem) {
	case SM90_E5M2:
		return launch_inst<EX, SM90_E5M2, NT>(cd, p, pl);
	case SM90_E2M3:
		return launch_inst<EX, SM90_E2M3, NT>(cd, p, pl);
	case SM90_E3M2:
		return launch_inst<EX, SM90_E3M2, NT>(cd, p, pl);
	case SM90_E2M1:
		return launch_inst<EX, SM90_E2M1, NT>(cd, p, pl);
	default:
		return launch_inst<EX, SM90_E4M3, NT>(cd, p, pl);
	}
}

template <int NT>
int launch_ex(struct cuda_device *cd, const struct sm90_skinny_args &p, const struct plan &pl)
{
	switch (p.x.elem) {
	case SM90_E5M2:
		return launch_ey<SM90_E5M2, NT>(cd, p, pl);
	case SM90_E2M3:
		return launch_ey<SM90_E2M3, NT>(cd, p, pl);
	case SM90_E3M2:
		return launch_ey<SM90_E3M2, NT>(cd, p, pl);
	case SM90_E2M1:
		return launch_ey<SM90_E2M1, NT>(cd, p, pl);
	default:
		return launch_ey<SM90_E4M3, NT>(cd, p, pl);
	}
}

/*
 * The device's workspace: `tiles` counters (zero between GEMMs), then
 * `bytes` more; grown in stream order.
 */
int workspace(struct cuda_device *cd, uint32_t tiles, size_t bytes, uint32_t **count,
	      uint8_t **rest)
{
	const uint32_t have = cd->skinny_ws_tiles;
	const size_t count_bytes = ((size_t)max(tiles, have) * 4 + 255) / 256 * 256;
	cudaError_t e;

	if (tiles > have || count_bytes + bytes > cd->skinny_ws_bytes) {
		if (cd->skinny_ws)
			cudaFreeAsync(cd->skinny_ws, cd->stream);
		cd->skinny_ws = NULL;
		cd->skinny_ws_bytes = 0;
		cd->skinny_ws_tiles = 0;
		e = cudaMallocAsync(&cd->skinny_ws, count_bytes + bytes, cd->stream);
		if (e == cudaSuccess)
			e = cudaMemsetAsync(cd->skinny_ws, 0, count_bytes, cd->stream);
		if (e != cudaSuccess) {
			cd->skinny_ws = NULL;
			return cuda_fail(e, "cuda-mx-sm90: skinny workspace");
		}
		cd->skinny_ws_bytes = count_bytes + bytes;
		cd->skinny_ws_tiles = (uint32_t)(count_bytes / 4);
	}
	*count = (uint32_t *)cd->skinny_ws;
	*rest = (uint8_t *)cd->skinny_ws + (size_t)cd->skinny_ws_tiles * 4;
	return 0;
}

template <int NT, bool NV>
int launch_nt(struct cuda_device *cd, const struct sm90_skinny_args &p)
{
	static unsigned long long prep_configured;
	const uint32_t slots = CTAS_PER_SM * (uint32_t)cd->sms;
	const uint32_t u = blocks_per_stage(p.x.elem);
	struct plan pl;
	size_t partial_bytes, y_bytes;
	uint32_t pad, threads;
	uint8_t *rest;
	int ret;

	/*
	 * Split K only as far as the CTAs fill the SMs once (no second
	 * wave), each range at least two stages and at most max_range().
	 */
	pl.tiles = (p.x.rows + ROWS - 1) / ROWS;
	pl.ranges = max(1u, min(slots / pl.tiles, p.blocks / (2 * u)));
	pl.range = (p.blocks + pl.ranges - 1) / pl.ranges;
	pl.range = min((pl.range + u - 1) / u * u, max_range<NT, NV>());
	pl.ranges = (p.blocks + pl.range - 1) / pl.range;
	/* Y's fragments cover every stage of every range. */
	pad = (pl.ranges - 1) * pl.range + (p.blocks - (pl.ranges - 1) * pl.range + u - 1) / u * u;
	partial_bytes = pl.ranges > 1 ? (size_t)pl.tiles * pl.ranges * THREADS * NT * 16 : 0;
	y_bytes = (size_t)pad * yblock<NT, NV>::BYTES;
	ret = workspace(cd, pl.tiles, partial_bytes + y_bytes, &pl.count, &rest);
	if (ret)
		return ret;
	pl.partial = (float *)rest;
	pl.yfrag = rest + partial_bytes;
	threads = pad * 32 * NT;
	/*
	 * The main kernel's CTAs start while this runs: with the default
	 * carveout the SMs running it took none of them (114 of 132 SMs used
	 * at M = 16, by %smid).
	 */
	ret = sm90_prefer_shared(cd, skinny_prep_kernel<NT, NV>, &prep_configured);
	if (ret)
		return ret;
	skinny_prep_kernel<NT, NV><<<(threads + 255) / 256, 256, 0, cd->stream>>>(
		p.y, p.blocks, pad, (uint8_t *)pl.yfrag);
	if constexpr (NV)
		return launch_inst<SM90_E2M1, SM90_E2M1, NT, true>(cd, p, pl);
	else
		return launch_ex<NT>(cd, p, pl);
}

template <bool NV>
int launch_nv(struct cuda_device *cd, const struct sm90_skinny_args &p)
{
	if (p.y.rows <= 8)
		return launch_nt<1, NV>(cd, p);
	if (p.y.rows <= 16)
		return launch_nt<2, NV>(cd, p);
	return launch_nt<4, NV>(cd, p);
}

} /* namespace */

int sm90_launch_skinny(struct cuda_device *cd, const struct sm90_skinny_args &p)
{
	return p.nvfp4 ? launch_nv<true>(cd, p) : launch_nv<false>(cd, p);
}
