// SPDX-License-Identifier: MIT
/*
 * cuda-weight-only: C (+)= A B^T with a dense fp32 or bf16 A (M x K,
 * activations) and a block-scaled B (N x K, weights: MX with E8M0 scales
 * per 32, or NVFP4 with UE4M3 scales per 16 and an optional fp32 tensor
 * scale), for sm_90a.  A decode kernel: built for M <= 64, where the
 * GEMM is bound by B's bytes, which it reads once; larger M runs as
 * groups of 64 rows of A, each reading B again (correct, not fast).
 *
 * The skinny MX kernel's structure (cuda_gemm_sm90_skinny.cu) with a dense
 * A.  With X = B (N rows) and Y = A (M rows), C^T = X Y^T:
 *
 * - every B code is exact in bf16 (all five element types; e4m3 and e5m2
 *   NaN / Inf codes are patched to bf16's own where a word holds one), so
 *   the tensor cores form exact products with mma.sync m16n8k16 bf16;
 * - bf16 A is its own bf16 operand; fp32 A is cut into three bf16 pieces
 *   by truncation, a = hi + mid + lo exactly (each piece keeps the next 8
 *   significant bits; all have a's sign), three mmas instead of one:
 *   free at decode, where the kernel waits for B's bytes;
 * - a pre-pass lays A out as the mma's B fragments (per slot, a span's
 *   worth of K, per piece, per 8 rows of A, per lane: four bf16 pairs), rows
 *   past M and K as zeros, once per call; the main kernel is its
 *   programmatic dependent and starts loading B while it runs;
 * - each CTA takes 32 rows of B (16 per warp) and a range of spans; each
 *   warp loads its rows' codes and scales for U spans straight into
 *   registers, the next U while it computes these (e2m1: U = 8, 2 KB of
 *   B per warp in flight, for up to 32 rows of A), past L1 (read once:
 *   L1 keeps A's fragments, which every CTA of the SM reads); A's
 *   fragments, where few (M <= 8 or 16), are loaded 2 or 4 slots before
 *   the mmas take them, into a ring of registers;
 * - fp8/fp6 (slot = span): within a scale block the order of k is free
 *   as long as both operands agree: a thread takes 8 consecutive codes of
 *   a row (one 8-byte load) and the pre-pass lays A out to match
 *   (kslot()); each block's partial leaves the tensor cores on its own
 *   (from zero: the mmas of its pieces and halves) and is promoted with
 *   one fp32 fused multiply-add by the block's E8M0 scale (a power of
 *   two, exact);
 * - e2m1 (windows of 4 spans): the 4 lanes of a row each load one whole
 *   span of the window (16 bytes, one load) and its scale(s), and fold
 *   the scale into the codes: the bf16 multiply that makes a code's bits
 *   its value multiplies by the scale too, so an mma may sum codes of 4
 *   spans (4 of each lane's span; slot q of the window takes codes
 *   8q .. 8q + 7 of each).  MX: the 4 lanes agree on the row's largest
 *   scale 2^sm in the window (two shuffles), each folds 2^(s - sm) (exact
 *   bf16 normals while s >= sm - 125) and the slot's sum is promoted by
 *   2^sm; NVFP4: each 16 codes fold their UE4M3 scale times 2^-8 (exact,
 *   between 2^-18 and 10.5), promoted by 2^8.  One promotion per slot
 *   (its mmas from zero): as many roundings as the MX path has, half as
 *   many as NVFP4 had with a promotion per block.  Before, each lane took
 *   4 codes of every span (a 4 x 4 transpose of the loaded spans across
 *   the lanes, and the scales by shuffle): 87 instructions per span and
 *   warp at M = 1, 73 with the fold (34 of them the conversion);
 * - the tensor scale multiplies once at the end, before C_in is added;
 * - when K is split, each CTA stores its partial tile and the last one of
 *   a tile (a counter per tile, which it resets) adds them in range order:
 *   results do not depend on timing.
 *
 * Special values follow the exact rules: NaN/Inf codes and A values are
 * bf16's own (Inf * 0 = NaN in the tensor cores), NaN scales give NaN
 * through the promotion (fp8/fp6) or the folded multiplier (e2m1).  For fp32 A an e5m2 Inf code meets the pieces
 * mid and lo as 0 (hi alone carries a's sign and non-zero-ness: a zero
 * mid must not turn A * Inf into NaN).  Accuracy: Documentation/numerics.rst.
 */
#include <errno.h>
#include <stdint.h>

#include <cuda.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"
#include "cuda_sm90_fold.cuh"
#include "cuda_splitk.cuh"

namespace {

/*
 * Small CTAs, many per SM: the rows of B spread evenly over the SMs (N =
 * 28672: 896 CTAs of 32 rows, 6 or 7 per SM, where CTAs of 128 rows put
 * 2 on 92 SMs and 1 on 40, the time set by the 2s: 15 % lost).
 */
constexpr int WARPS = 2, THREADS = 32 * WARPS, ROWS = 16 * WARPS;
/* Rows of A per group (gridDim.z); n-tiles of 8 rows at most. */
constexpr uint32_t GROUP = 64;
constexpr int CTAS_PER_SM = 8;

/*
 * CTAs per SM sharing the registers (__launch_bounds__): 8, 128 registers
 * a thread; e2m1 with 64 rows of A, 4: its eight n-tiles' accumulators
 * and A fragments spilled at 128 (0.278 ms at 64 x 28672 x 8192 MXFP4,
 * 0.163 ms with 4 CTAs, H200).
 */
__host__ __device__ constexpr int ctas_per_sm(int e, int nt)
{
	return e == SM90_E2M1 && nt >= 8 ? 4 : CTAS_PER_SM;
}

/*
 * Spans (32 values of K) per iteration: 128 bytes of a row of codes;
 * e2m1 with up to 32 rows of A, 8 (two windows of 4 spans, 2 KB of B per
 * warp in flight; 16 spans held 64 registers of loads and spilled).  A
 * multiple of 4 for e2m1 (its windows).
 */
__host__ __device__ constexpr uint32_t spans_per_iter(int e, int nt)
{
	return e == SM90_E2M1 && nt <= 4 ? 8 : 4;
}

#ifdef SM90_CODE

/*
 * The k of half h of bf16 pair p (0..3) of lane t (0..3) in slot sp: a
 * span's worth of the main loop's work, two mmas (pairs 0 and 1 are the
 * first mma's two registers, 2 and 3 the second's).  fp8/fp6: slot sp is
 * span sp, the lane's 8 consecutive codes of it.  e2m1: four slots make a
 * window of four spans, lane t holds span 4 w + t of window w whole (one
 * 16-byte load) and gives slot 4 w + q its codes 8 q .. 8 q + 7: an mma
 * sums codes of four spans, whose scales are folded into the codes.
 */
__host__ __device__ constexpr uint32_t kslot(bool fp4, uint32_t sp, uint32_t t, uint32_t p,
					     uint32_t h)
{
	return fp4 ? 128 * (sp / 4) + 32 * t + 8 * (sp % 4) + 2 * p + h :
		     32 * sp + 8 * t + 2 * p + h;
}

#endif /* SM90_CODE */

struct wo_args {
	const uint8_t *data;		/* B's codes, rows 16-byte aligned */
	uint64_t stride;		/* bytes */
	const uint8_t *scale;		/* as the matrix has them */
	struct mxcore_geom geom;	/* B's geometry (scale positions) */
	uint32_t n, m;			/* rows of B, of A */
	uint32_t spans, blocks;		/* ceil(K / 32), K / block */
	uint32_t slots;			/* A's fragments per group and piece: spans, e2m1 rounded up to 4 */
	float post;			/* the tensor scale, else 1 */
	struct sm90_c out;
	/*
	 * Redo for cuda-weight-only-wgmma (else NULL): only where *any is
	 * non-zero and then only the stripes of 128 rows of B flagged in
	 * stripes[]; every other CTA returns at once.
	 */
	const uint32_t *any, *stripes;
};

struct wo_prep_args {
	const uint8_t *a;		/* A's first row */
	uint64_t stride;		/* bytes */
	uint32_t m, k, slots, groups;
	int bf16;			/* A is bf16 (one piece), else fp32 (three) */
	int fp4;			/* kslot() of e2m1 */
	const uint32_t *any;		/* wo_args.any */
};

#ifdef SM90_CODE

/* d = A B (+ d with ACC), m16n8k16, bf16 operands, fp32 sums. */
template <bool ACC>
__device__ __forceinline__ void mma_bf16(float *d, uint32_t a0, uint32_t a1, uint32_t a2,
					 uint32_t a3, uint32_t b0, uint32_t b1)
{
	const float z = 0.0f;

	if (ACC)
		asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
	else
		asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
		    : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(z));
}

__device__ __forceinline__ uint32_t prmt2(uint32_t a, uint32_t b, uint32_t sel)
{
	uint32_t d;

	asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
	return d;
}

/*
 * B's codes are read once, by one thread: loaded past L1 (no line
 * allocated there), so that L1 keeps A's fragments, which every CTA of
 * the SM reads.  Same bytes as __ldg().
 */
__device__ __forceinline__ uint4 ldg_stream_u4(const void *at)
{
	uint4 v;

	asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
	    : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(at));
	return v;
}

__device__ __forceinline__ uint2 ldg_stream_u2(const void *at)
{
	uint2 v;

	asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
	    : "=r"(v.x), "=r"(v.y) : "l"(at));
	return v;
}

/* 2^e in both halves of a bf16x2 (e + 127 in 1..254). */
__host__ __device__ constexpr uint32_t bf16x2_pow2(int e)
{
	return ((uint32_t)(e + 127) << 7) | ((uint32_t)(e + 127) << 23);
}

/*
 * Eight e2m1 codes (element 2i in the low nibble) as four bf16 pairs:
 * each code's nibble moved to the top of a byte (the even codes by v << 4,
 * the odd ones are there), the byte and a copy of its sign bit (prmt with
 * sign replication) shifted so that sign, exponent and mantissa land on
 * bf16's sign and lowest bits: the value times 2^-126, subnormal 0.5
 * included; one bf16x2 multiply by mul (2^126 times the block's scale,
 * fold_mx() / fold_nv()) makes it the value times the scale, exact where
 * that is a bf16 normal.
 */
__device__ __forceinline__ void e2m1x8_bf16(uint32_t v, uint32_t *f, uint32_t mul)
{
	const uint32_t v4 = v << 4;

	f[0] = bf16x2_mul((prmt2(v4, v, 0xc480) << 2) & 0x81c081c0u, mul);
	f[1] = bf16x2_mul((prmt2(v4, v, 0xd591) << 2) & 0x81c081c0u, mul);
	f[2] = bf16x2_mul((prmt2(v4, v, 0xe6a2) << 2) & 0x81c081c0u, mul);
	f[3] = bf16x2_mul((prmt2(v4, v, 0xf7b3) << 2) & 0x81c081c0u, mul);
}

/*
 * The e2m1 fold of an MX window: each lane holds span 4 w + t of a row
 * and its E8M0 scale sv; the four lanes of the row agree on the largest
 * scale sm of the window (NaN, 0xff, aside) and each multiplies its codes
 * by 2^(sv - sm) (times 2^126, e2m1x8_bf16()): *mul, the lane's bf16x2
 * multiplier; the return value 2^(sm - 127), the row's promotion factor
 * (fp32).  A code times 2^(sv - sm) is an exact bf16 normal where
 * sv >= sm - 125; below, the bf16 multiply makes it a subnormal or 0 (a
 * block 2^125 under the largest of its 128 values of K).  A NaN scale
 * makes the multiplier NaN.  Every lane of the warp must call it.
 */
__device__ __forceinline__ float fold_mx(uint32_t sv, uint32_t *mul)
{
	const uint32_t own = sv == 0xff ? 0 : sv;
	uint32_t sm = max(own, __shfl_xor_sync(~0u, own, 1));
	int e;

	sm = max(sm, __shfl_xor_sync(~0u, sm, 2));
	e = max((int)sv + 253 - (int)sm, 0);
	*mul = sv == 0xff ? 0x7fc07fc0u : ((uint32_t)e << 7) | ((uint32_t)e << 23);
	return e8m0_to_f32(sm);
}

/*
 * The e2m1 fold of an NVFP4 span: its two UE4M3 scales (bits 0-7, 8-15)
 * times 2^118 as bf16x2 multipliers (mul[0], mul[1], each in both halves):
 * with e2m1x8_bf16()'s 2^-126 a value is code * scale * 2^-8, at most 6
 * significant bits and between 2^-18 and 10.5 in magnitude, an exact
 * bf16 normal.  A scale is exact in fp32 (ue4m3x2_to_f32()), so is its
 * product by 2^118 and that product's upper half (3 significant bits);
 * NaN stays NaN (a quiet one, which truncation keeps), 0 stays 0.  The
 * sums are promoted by 2^8.
 */
__device__ __forceinline__ void fold_nv(uint32_t sv, uint32_t *mul)
{
	const float2 f = ue4m3x2_to_f32(sv);
	const uint32_t lo = __float_as_uint(f.x * 0x1p118f), hi = __float_as_uint(f.y * 0x1p118f);

	mul[0] = prmt2(lo, lo, 0x3232);
	mul[1] = prmt2(hi, hi, 0x3232);
}

/* Word w of v (w a compile-time index: v stays in registers). */
__device__ __forceinline__ uint32_t word_of(uint4 v, uint32_t w)
{
	return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}

/* A NaN or Inf e4m3 / e5m2 code as bf16 bits. */
__device__ __forceinline__ uint32_t special_bf16(int e, uint32_t code)
{
	if (e == SM90_E5M2 && !(code & 3))
		return ((code & 0x80) << 8) | 0x7f80;
	return 0x7fc0;
}

/*
 * Eight fp8/fp6 codes of one row (v.x codes 0-3, v.y codes 4-7) as four
 * bf16 pairs f[0..3] (codes 0 1, 2 3, 4 5, 6 7), exact (e2m1:
 * e2m1x8_bf16()).  With INF0 (fp32 A, e5m2): z[] is f with Inf codes as
 * 0, for the pieces mid and lo.
 */
template <int E, bool INF0>
__device__ __forceinline__ void codes_bf16(uint2 v, uint32_t *f, uint32_t *z)
{
	static_assert(E != SM90_E2M1, "e2m1 folds its scales: e2m1x8_bf16()");
	constexpr uint32_t sh = E == SM90_E5M2 ? 5 : 4;
	constexpr uint32_t mask = E == SM90_E5M2 ? 0x8fe08fe0u : 0x87f087f0u;
	constexpr uint32_t mul = bf16x2_pow2(E == SM90_E4M3 ? 120 : E == SM90_E5M2 ? 112 :
					     E == SM90_E3M2 ? 124 : 126);
	uint32_t w[2] = { v.x, v.y };

	if (E == SM90_E2M3) {
		w[0] = e2m3_to_e4m3(w[0]);
		w[1] = e2m3_to_e4m3(w[1]);
	} else if (E == SM90_E3M2) {
		w[0] = e3m2_to_e4m3(w[0]);
		w[1] = e3m2_to_e4m3(w[1]);
	}
#pragma unroll
	for (int i = 0; i < 2; i++) {
		f[2 * i] = bf16x2_mul(bf16_lo(w[i], sh, mask), mul);
		f[2 * i + 1] = bf16x2_mul(bf16_hi(w[i], sh, mask), mul);
	}
	if (INF0) {
#pragma unroll
		for (int i = 0; i < 4; i++)
			z[i] = f[i];
	}
	if (E != SM90_E4M3 && E != SM90_E5M2)
		return;
	/* NaN / Inf codes: rare, patched one by one. */
	if (specials(E, w[0]) | specials(E, w[1])) {
#pragma unroll
		for (int c = 0; c < 8; c++) {
			const uint32_t code = (w[c / 4] >> (8 * (c % 4))) & 0xff;
			const uint32_t at = 16 * (c % 2), keep = ~(0xffffu << at);

			if (!specials(E, code))
				continue;
			f[c / 2] = (f[c / 2] & keep) | (special_bf16(E, code) << at);
			if (INF0)
				z[c / 2] = (z[c / 2] & keep) |
					   ((special_bf16(E, code) == 0x7fc0 ? 0x7fc0u : 0u) << at);
		}
	}
}

/*
 * Scale (r, kb) is at index(r, 0) + index(0, kb) in both layouts (plain:
 * r * stride + kb; swizzled: a row part and a block part of the tiling),
 * so a thread finds its rows' part once and adds the block's, both from
 * the core's geometry (its divisions depend on the parameters only).
 */
__device__ __forceinline__ uint32_t scale_byte(const struct wo_args &p, uint64_t row_at,
					       uint32_t kb)
{
	return __ldg(p.scale + row_at + mxcore_geom_scale_index(&p.geom, 0, kb));
}


/*
 * fp32 bits as three bf16 pieces by truncation, a = hi + mid + lo exactly
 * for |a| >= 2^-103 (every piece a normal bf16 or 0; below, lo may lose
 * bits under 2^-133).  a - hi and r - mid are exact (Sterbenz).  NaN
 * and Inf are hi alone (NaN as the quiet NaN: truncating a payload in the
 * low bits would make it Inf).
 */
__device__ __forceinline__ void split3(uint32_t bits, uint32_t *hi, uint32_t *mid, uint32_t *lo)
{
	if ((bits & 0x7f800000u) == 0x7f800000u) {
		*hi = bits & 0x7fffffu ? 0x7fc0u : bits >> 16;
		*mid = 0;
		*lo = 0;
		return;
	}
	const float r = __uint_as_float(bits) - __uint_as_float(bits & 0xffff0000u);
	const uint32_t rb = __float_as_uint(r);
	const float l = r - __uint_as_float(rb & 0xffff0000u);

	*hi = bits >> 16;
	*mid = rb >> 16;
	*lo = __float_as_uint(l) >> 16;
}

#endif /* SM90_CODE */

/*
 * A as the main kernel's Y fragments: for each group of 64 rows, slot,
 * piece, n-tile j of 8 rows and lane (g, t), a uint4 of four bf16 pairs:
 * row 64 grp + 8 j + g, k = kslot(slot, t, p, h).  Rows past M and k
 * past K are 0.
 */
template <int NT>
__global__ void wo_prep_kernel(const struct wo_prep_args p, uint4 *out)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	const uint64_t total = (uint64_t)p.groups * p.slots * NT * 32;
	const int pieces = p.bf16 ? 1 : 3;

	/* The main kernel may start loading B now. */
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	if (p.any && !*p.any)
		return;
	/*
	 * A grid of a few waves, by a stride: a redo with nothing to do
	 * (the usual case) then costs one launch, where one CTA per 256
	 * fragments cost 0.14 ms for A of 28672 x 8192 just to start and
	 * return.
	 */
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		const uint32_t lane = i % 32, j = i / 32 % NT;
		const uint64_t rest = i / (32 * NT);
		const uint32_t slot = rest % p.slots, grp = (uint32_t)(rest / p.slots);
		const uint32_t g = lane / 4, t = lane % 4, row = grp * GROUP + 8 * j + g;
		uint32_t w[3][4] = {};

		for (uint32_t q = 0; q < 4; q++) {
			for (uint32_t h = 0; h < 2; h++) {
				const uint32_t k = kslot(p.fp4, slot, t, q, h);
				uint32_t bits = 0, x[3];

				if (row < p.m && k < p.k) {
					const uint8_t *ar = p.a + row * p.stride;

					bits = p.bf16 ? (uint32_t)((const uint16_t *)ar)[k] << 16 :
							((const uint32_t *)ar)[k];
				}
				if (p.bf16) {
					x[0] = bits >> 16;
					x[1] = x[2] = 0;
				} else {
					split3(bits, &x[0], &x[1], &x[2]);
				}
				for (int pc = 0; pc < 3; pc++)
					w[pc][q] |= x[pc] << (16 * h);
			}
		}
		for (int pc = 0; pc < pieces; pc++)
			out[(((uint64_t)grp * p.slots + slot) * pieces + pc) * NT * 32 + j * 32 + lane] =
				make_uint4(w[pc][0], w[pc][1], w[pc][2], w[pc][3]);
	}
#endif
}

/*
 * CTA (x, y, z): rows 128 x .. 128 x + 127 of B, spans [range y,
 * range (y + 1)), rows 64 z .. 64 z + 63 of A.  yfrag: A as
 * wo_prep_kernel() lays it out.  With more than one range, partial holds
 * the tiles' partial sums (per thread its NT float4) and count the ranges
 * done per tile.
 */
template <int E, bool NV, int P, int NT>
__global__ void __launch_bounds__(THREADS, ctas_per_sm(E, NT))
wo_kernel(const struct wo_args p, const uint4 *yfrag, uint32_t range, float4 *partial,
	  uint32_t *count)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	constexpr bool FP4 = E == SM90_E2M1;
	constexpr uint32_t U = spans_per_iter(E, NT);
	constexpr uint32_t UW = U / 4;			/* e2m1: spans per load / 4 */
	constexpr uint32_t SB = FP4 ? 16 : 32;		/* bytes of a row per span */
	constexpr bool INF0 = P == 3 && E == SM90_E5M2;
	/*
	 * A's fragments of a span (YN uint4 per lane): with few of them
	 * (e2m1: bf16 A, M <= 8; the others: M <= 16 with bf16 A, M <= 8
	 * with fp32: where the registers are there, without spills, as
	 * cuobjdump -res-usage shows; e2m1 with M <= 16 fits since its
	 * fold, but ran slower: 0.069 -> 0.074 ms MXFP4, 0.080 -> 0.091
	 * NVFP4 at 16 x 28672 x 8192), loaded YD spans ahead into a
	 * ring of registers (YD divides U: a slot is a compile-time index),
	 * so that the mmas do not wait on them (before, each span's mmas
	 * waited on its load: the kernel was latency bound); else loaded
	 * where the mmas take them.
	 */
	constexpr int YN = P * NT;
	constexpr bool STEP = NT <= 2;
	/* NVFP4 keeps its scale bytes apart until used (load4()). */
	constexpr bool SPLIT = NV && STEP && P == 1;
	constexpr bool YPF = YN == 1 || (!FP4 && YN <= 3);
	constexpr uint32_t YD = YN == 1 ? 4 : 2;
	static_assert(U % YD == 0, "a ring slot per span offset");
	static_assert(SM90_BF16_BM % ROWS == 0, "a CTA's rows lie in one stripe");
	/* A redo of the stripes cuda-weight-only-wgmma left: nothing else. */
	if (p.any && (!*p.any || !p.stripes[blockIdx.x * ROWS / SM90_BF16_BM]))
		return;
	const uint32_t ranges = gridDim.y, part = blockIdx.y, grp = blockIdx.z;
	const uint32_t tile = grp * gridDim.x + blockIdx.x;
	const uint32_t s0 = part * range, s1 = min(s0 + range, p.spans);
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const uint32_t g = lane / 4, t = lane % 4;
	const uint32_t r0 = blockIdx.x * ROWS + warp * 16 + g;
	/* Rows past N read row N - 1 (their results are not stored). */
	const uint32_t rr[2] = { min(r0, p.n - 1), min(r0 + 8, p.n - 1) };
	const uint8_t *x[2] = { p.data + rr[0] * p.stride, p.data + rr[1] * p.stride };
	const uint64_t srow[2] = { mxcore_geom_scale_index(&p.geom, rr[0], 0),
				   mxcore_geom_scale_index(&p.geom, rr[1], 0) };
	const uint4 *yg = yfrag + (uint64_t)grp * p.slots * P * NT * 32 + lane;
	uint2 cur[2][U], nxt[2][U];
	uint32_t scur[2][U], snxt[2][U];
	/* Rows past M stay 0: fetch_y() does not load them. */
	uint4 yring[YD][YN] = {};
	float acc[NT][4];


	/* fp8/fp6: codes and scale bytes of spans s .. s + U - 1. */
	auto load = [&](uint32_t s, uint2 (*w)[U], uint32_t (*sc)[U]) {
#pragma unroll
		for (uint32_t u = 0; u < U; u++) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const uint32_t sp = s + u;

				w[h][u] = sp < s1 ? ldg_stream_u2(x[h] + (uint64_t)sp * SB + 8 * t) :
						    make_uint2(0, 0);
				sc[h][u] = sp < s1 ? scale_byte(p, srow[h], sp) : 0;
			}
		}
	};

	/*
	 * e2m1 with up to 16 rows of A (STEP: where the registers are there;
	 * at 32 and 64 rows the pointers cost more than they save: 0.104 ->
	 * 0.117 ms at 32 x 28672 x 8192 MXFP4): the scale of span s0 + t of
	 * each row (NVFP4: its first block's),
	 * and the bytes from a window's to the next's: the same in both
	 * layouts for every row and for blocks a multiple of 4 apart
	 * (mxcore_geom_scale_step4()), and the second block of an NVFP4 span
	 * (an even block) is the next byte.
	 */
	const uint32_t bps = NV ? 2 : 1;
	const uint64_t wstep = STEP ? mxcore_geom_scale_step4(&p.geom, bps) : 0;
	const uint8_t *sbase[2] = {
		STEP ? p.scale + srow[0] + mxcore_geom_scale_index(&p.geom, 0, bps * (s0 + t)) : NULL,
		STEP ? p.scale + srow[1] + mxcore_geom_scale_index(&p.geom, 0, bps * (s0 + t)) : NULL };

	/*
	 * e2m1: lane t of a row loads the whole span s + 4 q + t of window q
	 * (16 bytes, one load) and its scale byte(s), which fold_mx() /
	 * fold_nv() fold into its codes: sc[b][h][q], with SPLIT NVFP4's
	 * second block (b = 1) apart, put together where they are used
	 * (putting them together here made each step wait for its loads:
	 * NVFP4 issued 0.49 instructions a cycle and scheduler where MXFP4
	 * issued 0.64, and 1 x 28672 x 8192 NVFP4 took 0.073 ms, now 0.061;
	 * fp32 A and 32 rows and more keep doing it: registers).
	 */
	auto load4 = [&](uint32_t s, uint4 (*w)[UW], uint32_t (*sc)[2][UW]) {
#pragma unroll
		for (uint32_t q = 0; q < UW; q++) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const uint32_t sp = s + 4 * q + t;
				const uint8_t *at = x[h] + (uint64_t)sp * SB;
				uint4 v = make_uint4(0, 0, 0, 0);

				if (sp < s1) {
					/* NVFP4: the span's second block may be past K. */
					if (!NV || 2 * sp + 1 < p.blocks) {
						v = ldg_stream_u4(at);
					} else {
						const uint2 lo = ldg_stream_u2(at);

						v.x = lo.x;
						v.y = lo.y;
					}
				}
				w[h][q] = v;
				sc[0][h][q] = 0;
				sc[1][h][q] = 0;
				if (sp < s1 && STEP) {
					const uint8_t *at_s = sbase[h] + ((s - s0) / 4 + q) * wstep;

					sc[0][h][q] = __ldg(at_s);
					if (NV && 2 * sp + 1 < p.blocks && SPLIT)
						sc[1][h][q] = __ldg(at_s + 1);
					else if (NV && 2 * sp + 1 < p.blocks)
						sc[0][h][q] |= (uint32_t)__ldg(at_s + 1) << 8;
				} else if (sp < s1) {
					/* Registers: put together here (as without SPLIT). */
					sc[0][h][q] = scale_byte(p, srow[h], bps * sp);
					if (NV && 2 * sp + 1 < p.blocks)
						sc[0][h][q] |= scale_byte(p, srow[h], 2 * sp + 1) << 8;
				}
			}
		}
	};

	/*
	 * A's fragments of slot sp for this lane into the ring: not loaded
	 * past the range (never used) or for rows past M (the ring's zeros
	 * stay).  A plain load, not __ldg(): the pre-pass wrote them while
	 * this grid ran.
	 */
	auto fetch_y = [&](uint32_t sp, uint4 *y) {
		const uint4 *ys = yg + (uint64_t)sp * P * NT * 32;
		/* e2m1: a slot holds k of its whole window of 4 spans. */
		const bool in = (FP4 ? sp & ~3u : sp) < s1;

#pragma unroll
		for (int pc = 0; pc < P; pc++) {
#pragma unroll
			for (int j = 0; j < NT; j++)
				if (in && grp * GROUP + 8 * j + g < p.m)
					y[pc * NT + j] = ys[(pc * NT + j) * 32];
		}
	};

	/*
	 * With YPF, slot s + v's fragments (v: the slot's compile-time
	 * offset in an iteration of U, s: the iteration's first slot) are
	 * ring slot v % YD, which loads slot s + v + YD once the mmas took
	 * them (ring_next(): not before, so that no copy is made).  The ring
	 * starts with slots s0 .. s0 + YD - 1 (ring_start()).
	 */
	auto ring_start = [&]() {
		if (YPF) {
#pragma unroll
			for (uint32_t d = 0; d < YD; d++)
				fetch_y(s0 + d, yring[d]);
		}
	};
	auto ring_next = [&](uint32_t s, uint32_t v) {
		if (YPF)
			fetch_y(s + v + YD, yring[v % YD]);
	};

	/*
	 * One slot: fa, fb the lane's codes of rows r0, r0 + 8 as bf16
	 * pairs (codes_bf16(); e2m1 with the scales folded in), za, zb the
	 * same for the pieces mid and lo (INF0), post the rows' promotion
	 * factors (fp8/fp6: the block's scale); ys the slot's A fragments
	 * for this lane, yv (with YPF) the same loaded.  The slot's two mmas
	 * (of each piece) sum from zero, then one fused multiply-add promotes
	 * the sum.
	 */
	auto slot = [&](const uint4 *ys, const uint4 *yv, const uint32_t *fa, const uint32_t *fb,
			const uint32_t *za, const uint32_t *zb, const float *post) {
#pragma unroll
		for (int j = 0; j < NT; j++) {
			float d[4];

#pragma unroll
			for (int pc = 0; pc < P; pc++) {
				/*
				 * A plain load, not __ldg(): the pre-pass wrote it
				 * while this grid ran.  Rows past M are zeros
				 * there: not loaded (M = 1 reads an eighth).
				 */
				const uint4 y = YPF ? yv[pc * NT + j] :
						grp * GROUP + 8 * j + g < p.m ?
						ys[(pc * NT + j) * 32] : make_uint4(0, 0, 0, 0);
				const uint32_t *ua = pc && INF0 ? za : fa;
				const uint32_t *ub = pc && INF0 ? zb : fb;

				if (pc == 0)
					mma_bf16<false>(d, ua[0], ub[0], ua[1], ub[1], y.x, y.y);
				else
					mma_bf16<true>(d, ua[0], ub[0], ua[1], ub[1], y.x, y.y);
				mma_bf16<true>(d, ua[2], ub[2], ua[3], ub[3], y.z, y.w);
			}
			acc[j][0] = fmaf(d[0], post[0], acc[j][0]);
			acc[j][1] = fmaf(d[1], post[0], acc[j][1]);
			acc[j][2] = fmaf(d[2], post[1], acc[j][2]);
			acc[j][3] = fmaf(d[3], post[1], acc[j][3]);
		}
	};

#pragma unroll
	for (int j = 0; j < NT; j++)
		for (int e = 0; e < 4; e++)
			acc[j][e] = 0.0f;

	if constexpr (FP4) {
		/*
		 * Spans s .. s + U - 1 from cur, sc, while the next U load into
		 * nxt, sn, copied over at the end.  (Two iterations alternating
		 * the buffers, without the copies, doubled the loop's code and
		 * made NVFP4 and M = 32 slower: 0.125 -> 0.165 ms at 32 x 28672
		 * x 8192 NVFP4.)
		 */
		uint4 cur[2][UW], nxt[2][UW];
		uint32_t sc[2][2][UW], sn[2][2][UW];

		if (s0 < s1)
			load4(s0, cur, sc);
		/* A's fragments come from the pre-pass. */
		asm volatile("griddepcontrol.wait;" ::: "memory");
		ring_start();
		for (uint32_t s = s0; s < s1; s += U) {
			const uint4 *ys = yg + (uint64_t)s * P * NT * 32;

			if (s + U < s1)
				load4(s + U, nxt, sn);
#pragma unroll
			for (uint32_t q = 0; q < UW; q++) {
				uint32_t mul[2][2];
				float post[2];

				/* Uniform over the warp: fold_mx() shuffles. */
				if (s + 4 * q >= s1)
					break;
#pragma unroll
				for (int h = 0; h < 2; h++) {
					if (NV) {
						fold_nv(sc[0][h][q] | sc[1][h][q] << 8, mul[h]);
						post[h] = 256.0f;
					} else {
						post[h] = fold_mx(sc[0][h][q], &mul[h][0]);
						mul[h][1] = mul[h][0];
					}
				}
#pragma unroll
				for (uint32_t w = 0; w < 4; w++) {
					uint32_t fa[4], fb[4];

					/* Words 0, 1: an NVFP4 span's first block. */
					e2m1x8_bf16(word_of(cur[0][q], w), fa, mul[0][w / 2]);
					e2m1x8_bf16(word_of(cur[1][q], w), fb, mul[1][w / 2]);
					slot(ys + (4 * q + w) * P * NT * 32, yring[(4 * q + w) % YD], fa,
					     fb, fa, fb, post);
					ring_next(s, 4 * q + w);
				}
			}
#pragma unroll
			for (int h = 0; h < 2; h++) {
#pragma unroll
				for (uint32_t q = 0; q < UW; q++) {
					cur[h][q] = nxt[h][q];
					sc[0][h][q] = sn[0][h][q];
					sc[1][h][q] = sn[1][h][q];
				}
			}
		}
	} else {
		if (s0 < s1)
			load(s0, cur, scur);
		/* A's fragments come from the pre-pass. */
		asm volatile("griddepcontrol.wait;" ::: "memory");
		ring_start();
		for (uint32_t s = s0; s < s1; s += U) {
			const uint4 *ys = yg + (uint64_t)s * P * NT * 32;

			if (s + U < s1)
				load(s + U, nxt, snxt);
#pragma unroll
			for (uint32_t u = 0; u < U; u++) {
				const float post[2] = { e8m0_to_f32(scur[0][u]),
							e8m0_to_f32(scur[1][u]) };
				uint32_t fa[4], fb[4], za[4], zb[4];

				if (s + u >= s1)
					break;
				codes_bf16<E, INF0>(cur[0][u], fa, za);
				codes_bf16<E, INF0>(cur[1][u], fb, zb);
				slot(ys + u * P * NT * 32, yring[u % YD], fa, fb, za, zb, post);
				ring_next(s, u);
			}
#pragma unroll
			for (int h = 0; h < 2; h++) {
#pragma unroll
				for (uint32_t u = 0; u < U; u++) {
					cur[h][u] = nxt[h][u];
					scur[h][u] = snxt[h][u];
				}
			}
		}
	}
	/* Split K: the last CTA of the tile adds the ranges in order. */
	if (ranges > 1 &&
	    !splitk_ordered_sum<NT, THREADS>(acc, partial, count, tile, ranges, part))
		return;
#pragma unroll
	for (int j = 0; j < NT; j++) {
		for (int e = 0; e < 4; e++) {
			const uint32_t i = r0 + (e >= 2 ? 8 : 0);
			const uint32_t c = grp * GROUP + 8 * j + 2 * t + (e & 1);

			if (i < p.n && c < p.m)
				store_c_value(p.out, (uint64_t)c * p.out.stride + i,
					      acc[j][e] * p.post);
		}
	}
#endif
}

/* Where a launch's pieces are. */
struct plan {
	uint32_t tiles, ranges, range, groups;
	const uint4 *yfrag;
	float4 *partial;
	uint32_t *count;
};

template <int E, bool NV, int P, int NT>
int launch_inst(struct cuda_device *cd, const struct wo_args &p, const struct plan &pl)
{
	cudaLaunchAttribute attr;
	cudaLaunchConfig_t cfg = {};
	cudaError_t e;

	cfg.gridDim = dim3(pl.tiles, pl.ranges, pl.groups);
	cfg.blockDim = dim3(THREADS);
	cfg.dynamicSmemBytes = 0;
	cfg.stream = cd->stream;
	attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr.val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	e = cudaLaunchKernelEx(&cfg, wo_kernel<E, NV, P, NT>, p, pl.yfrag, pl.range,
			       pl.partial, pl.count);
	return e == cudaSuccess ? 0 : cuda_fail(e, "cuda-weight-only: launch");
}

template <int E, bool NV, int NT>
int launch_p(struct cuda_device *cd, const struct wo_args &p, const struct plan &pl, int pieces)
{
	return pieces == 1 ? launch_inst<E, NV, 1, NT>(cd, p, pl) :
			     launch_inst<E, NV, 3, NT>(cd, p, pl);
}

template <int NT>
int launch_e(struct cuda_device *cd, const struct wo_args &p, const struct plan &pl,
	     int elem, bool nv, int pieces)
{
	switch (elem) {
	case SM90_E5M2:
		return launch_p<SM90_E5M2, false, NT>(cd, p, pl, pieces);
	case SM90_E2M3:
		return launch_p<SM90_E2M3, false, NT>(cd, p, pl, pieces);
	case SM90_E3M2:
		return launch_p<SM90_E3M2, false, NT>(cd, p, pl, pieces);
	case SM90_E2M1:
		return nv ? launch_p<SM90_E2M1, true, NT>(cd, p, pl, pieces) :
			    launch_p<SM90_E2M1, false, NT>(cd, p, pl, pieces);
	default:
		return launch_p<SM90_E4M3, false, NT>(cd, p, pl, pieces);
	}
}

/*
 * The device's workspace: `tiles` counters (zero between GEMMs), then
 * `bytes` more (16-byte aligned); grown in stream order.
 */
int workspace(struct cuda_device *cd, uint32_t tiles, size_t bytes, uint32_t **count,
	      uint8_t **rest)
{
	const uint32_t have = cd->wo_ws_tiles;
	const size_t count_bytes = ((size_t)max(tiles, have) * 4 + 255) / 256 * 256;
	cudaError_t e;

	if (tiles > have || count_bytes + bytes > cd->wo_ws_bytes) {
		if (cd->wo_ws)
			cudaFreeAsync(cd->wo_ws, cd->stream);
		cd->wo_ws = NULL;
		cd->wo_ws_bytes = 0;
		cd->wo_ws_tiles = 0;
		e = cudaMallocAsync(&cd->wo_ws, count_bytes + bytes, cd->stream);
		if (e == cudaSuccess)
			e = cudaMemsetAsync(cd->wo_ws, 0, count_bytes, cd->stream);
		if (e != cudaSuccess) {
			if (cd->wo_ws)
				cudaFreeAsync(cd->wo_ws, cd->stream);
			cd->wo_ws = NULL;
			return cuda_fail(e, "cuda-weight-only: workspace");
		}
		cd->wo_ws_bytes = count_bytes + bytes;
		cd->wo_ws_tiles = (uint32_t)(count_bytes / 4);
	}
	*count = (uint32_t *)cd->wo_ws;
	*rest = (uint8_t *)cd->wo_ws + (size_t)cd->wo_ws_tiles * 4;
	return 0;
}

template <int NT>
int launch_nt(struct cuda_device *cd, const struct wo_args &p, const struct wo_prep_args &ap,
	      int elem, bool nv)
{
	const uint32_t slots = ctas_per_sm(elem, NT) * (uint32_t)cd->sms;
	const uint32_t u = spans_per_iter(elem, NT);
	const int pieces = ap.bf16 ? 1 : 3;
	struct plan pl;
	size_t partial_bytes, y_bytes;
	uint64_t threads;
	uint8_t *rest;
	int ret;

	/*
	 * Split K only as far as the CTAs fill the SMs once, each range at
	 * least two iterations, a multiple of one.
	 */
	pl.tiles = (p.n + ROWS - 1) / ROWS;
	pl.groups = ap.groups;
	pl.ranges = max(1u, min(slots / (pl.tiles * pl.groups), p.spans / (2 * u)));
	pl.range = (p.spans + pl.ranges - 1) / pl.ranges;
	pl.range = (pl.range + u - 1) / u * u;
	pl.ranges = (p.spans + pl.range - 1) / pl.range;
	partial_bytes = pl.ranges > 1 ? (size_t)pl.tiles * pl.groups * pl.ranges * NT *
					THREADS * 16 : 0;
	y_bytes = (size_t)pl.groups * p.slots * pieces * NT * 32 * 16;
	ret = workspace(cd, pl.tiles * pl.groups, partial_bytes + y_bytes, &pl.count, &rest);
	if (ret)
		return ret;
	pl.partial = (float4 *)rest;
	pl.yfrag = (const uint4 *)(rest + partial_bytes);
	threads = (uint64_t)pl.groups * p.slots * NT * 32;
	wo_prep_kernel<NT><<<(unsigned int)min((threads + 255) / 256, (uint64_t)cd->sms * 16),
			     256, 0, cd->stream>>>(ap, (uint4 *)pl.yfrag);
	return launch_e<NT>(cd, p, pl, elem, nv, pieces);
}

} /* namespace */

/*
 * Every format, dtype and layout of the op is taken; what is not: devices
 * other than sm_90a (or without its code loaded), and grids past CUDA's
 * limits.
 */
const char *cuda_weight_only_reject(struct cuda_device *cd, const struct mxa_op_desc *desc)
{
	const uint64_t groups = (desc->m + (uint64_t)GROUP - 1) / GROUP;
	const char *no;

	if (cd->cc_major != 9 || cd->cc_minor != 0)
		return "cuda-weight-only is built for sm_90a (Hopper) only";
	no = sm90_operand_reject();
	if (no)
		return no;

	/* gridDim.z: groups of 64 rows of A; a counter per tile and group. */
	if (groups > 65535)
		return "cuda-weight-only runs M <= 4194240 (65535 groups of 64 rows)";
	if (groups * ((desc->n + (uint64_t)ROWS - 1) / ROWS) >= 1ull << 31)
		return "cuda-weight-only runs ceil(M / 64) * ceil(N / 32) < 2^31 tiles";
	return NULL;
}

int cuda_weight_only_redo(struct cuda_device *cd, const struct mxa_job *job,
			  const uint32_t *any, const uint32_t *stripes)
{
	const struct mxa_matrix *b = &job->b;
	const struct mxa_dense *a = &job->a_dense;
	const bool bf16 = a->dtype == MXA_DTYPE_BF16;
	const uint8_t *ad = cuda_ptr(a->buf, a->offset);
	const uint32_t m = a->rows, nt = m <= 8 ? 1 : m <= 16 ? 2 : m <= 32 ? 4 : 8;
	struct wo_prep_args ap;
	struct wo_args p;
	const uint8_t *xd;
	void *xscratch;
	uint64_t xs;
	int elem, ret;

	if ((uintptr_t)ad % (bf16 ? 2 : 4))
		return cuda_err(-EINVAL,
				"cuda-weight-only: a at device address %p is not %d-byte aligned (a wrapped buffer's base plus offset must be)",
				(const void *)ad, bf16 ? 2 : 4);
	ret = sm90_aligned_data(cd, b, &xd, &xs, &xscratch);
	if (ret)
		return ret;
	p.data = xd;
	p.stride = xs;
	p.scale = cuda_ptr(b->scale, b->scale_offset);
	p.geom = mxa__geom(b);
	p.n = b->rows;
	p.m = m;
	p.spans = (b->cols + 31) / 32;
	p.slots = b->elem == MXA_ELEM_E2M1 ? (p.spans + 3) / 4 * 4 : p.spans;
	p.blocks = b->cols / mxa__block(b);
	p.post = b->scale_type == MXA_SCALE_UE4M3 && b->tensor_scale != 0.0f ?
		 b->tensor_scale : 1.0f;
	p.out = sm90_c_of(job);
	p.any = any;
	p.stripes = stripes;
	ap.any = any;
	ap.a = ad;
	ap.stride = mxa__dense_stride(a);
	ap.m = m;
	ap.k = a->cols;
	ap.slots = p.slots;
	ap.groups = (m + GROUP - 1) / GROUP;
	ap.bf16 = bf16;
	ap.fp4 = b->elem == MXA_ELEM_E2M1;
	elem = sm90_elem_of(b->elem);
	switch (nt) {
	case 1:
		ret = launch_nt<1>(cd, p, ap, elem, b->scale_type == MXA_SCALE_UE4M3);
		break;
	case 2:
		ret = launch_nt<2>(cd, p, ap, elem, b->scale_type == MXA_SCALE_UE4M3);
		break;
	case 4:
		ret = launch_nt<4>(cd, p, ap, elem, b->scale_type == MXA_SCALE_UE4M3);
		break;
	default:
		ret = launch_nt<8>(cd, p, ap, elem, b->scale_type == MXA_SCALE_UE4M3);
		break;
	}
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	return ret;
}

int cuda_launch_gemm_weight_only(struct cuda_device *cd, const struct mxa_job *job)
{
	return cuda_weight_only_redo(cd, job, NULL, NULL);
}
