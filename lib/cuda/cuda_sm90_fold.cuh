/* SPDX-License-Identifier: MIT */
/*
 * Exact bf16 operands with the MX scales folded in, for the sm_90a bf16
 * kernels (cuda_gemm_sm90_bf16.cu, cuda_gemm_sm90_decode.cu): element
 * codes as bf16 bits, the per-block multiplier 2^(bias + s - R), and the
 * checks that keep the result exact (Documentation/cuda.rst).
 */
#ifndef MXA_CUDA_SM90_FOLD_CUH
#define MXA_CUDA_SM90_FOLD_CUH

#include <stdint.h>

#include "cuda_sm90.cuh"

#ifdef SM90_CODE

/* Per element type: log2(value / bf16 bits of the codes). */
static __device__ __forceinline__ int bias_of(int e)
{
	return e == SM90_E4M3 ? 120 : e == SM90_E5M2 ? 112 :
	       e == SM90_E3M2 ? 124 : 126;
}

/* The widest scale span that keeps every non-zero operand >= 2^-63. */
static __device__ __forceinline__ uint32_t span_of(int e)
{
	return e == SM90_E4M3 ? 54 : e == SM90_E5M2 ? 47 :
	       e == SM90_E2M3 ? 60 : e == SM90_E3M2 ? 59 : 62;
}

/* Non-zero where a byte of w is a NaN or Inf code. */
static __device__ __forceinline__ uint32_t specials(int e, uint32_t w)
{
	if (e == SM90_E4M3)
		return ((w & 0x7f7f7f7fu) + 0x01010101u) & 0x80808080u;
	if (e == SM90_E5M2)
		return ((w & 0x7c7c7c7cu) + 0x04040404u) & 0x80808080u;
	return 0;
}

/*
 * 16 elements as four words of e4m3 bytes (e5m2 stays e5m2), in element
 * order: from 16 bytes (fp8, fp6 one code per byte) or 8 (fp4, v.x and
 * v.y).  Returns the specials mask.
 */
static __device__ __forceinline__ uint32_t to_e4m3(int e, uint4 v, uint32_t w[4])
{
	if (e == SM90_E2M1) {
		uint2 lo = e2m1x8_to_e4m3(v.x), hi = e2m1x8_to_e4m3(v.y);

		w[0] = lo.x;
		w[1] = lo.y;
		w[2] = hi.x;
		w[3] = hi.y;
		return 0;
	}
	w[0] = v.x;
	w[1] = v.y;
	w[2] = v.z;
	w[3] = v.w;
	if (e == SM90_E2M3) {
		for (int i = 0; i < 4; i++)
			w[i] = e2m3_to_e4m3(w[i]);
	} else if (e == SM90_E3M2) {
		for (int i = 0; i < 4; i++)
			w[i] = e3m2_to_e4m3(w[i]);
	}
	return specials(e, w[0]) | specials(e, w[1]) | specials(e, w[2]) |
	       specials(e, w[3]);
}

/* prmt with sign replication (__byte_perm ignores a selector's msb). */
static __device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t sel)
{
	uint32_t d;

	asm("prmt.b32 %0, %1, 0, %2;" : "=r"(d) : "r"(a), "r"(sel));
	return d;
}

/*
 * Bytes 0, 1 (lo) or 2, 3 (hi) of a word of e4m3 (shift 4) or e5m2
 * (shift 5) codes as bf16x2 bits: each byte and a copy of its sign bit,
 * shifted so that exponent and mantissa land on bf16's low bits.
 */
static __device__ __forceinline__ uint32_t bf16_lo(uint32_t w, uint32_t shift, uint32_t mask)
{
	return (prmt(w, 0x9180) << shift) & mask;
}

static __device__ __forceinline__ uint32_t bf16_hi(uint32_t w, uint32_t shift, uint32_t mask)
{
	return (prmt(w, 0xb3a2) << shift) & mask;
}

static __device__ __forceinline__ uint32_t bf16x2_mul(uint32_t a, uint32_t b)
{
	uint32_t d;

	asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
	return d;
}

/*
 * The bf16x2 multiplier of one block: 2^(bias + s - R) in both halves;
 * sets *bad where the block breaks the exactness argument (NaN scale, span
 * too wide).  Blocks past K are zero codes: multiplier 0.
 */
static __device__ __forceinline__ uint32_t multiplier(int e, uint32_t s, uint32_t r,
					       bool valid, uint32_t *bad)
{
	uint32_t m;

	if (!valid)
		return 0;
	*bad |= r - s > span_of(e);
	m = ((uint32_t)(bias_of(e) + 127) + s - r) & 0xff;
	return (m << 7) | (m << 23);
}

/*
 * The bf16x2 multiplier of one NVFP4 block: its UE4M3 scale (float8_e4m3fn;
 * a set sign bit makes it negative, as the exact core reads it) times
 * 2^118, in both halves.  e2m1 codes as bf16_lo()/bf16_hi() give them
 * (through e2m1_bytes_to_e4m3()) are the value times 2^-126, so a
 * product is element * scale * 2^-8: at most 2 x 4 significant bits and
 * between 2^-18 and 10.5 in magnitude, an exact bf16 normal.  The
 * multiplier itself (2^109 to 15 * 2^123) is an exact bf16 normal.  A NaN
 * scale sets *nan and gives 0 (the epilogue makes the row NaN).
 */
static __device__ __forceinline__ uint32_t ue4m3_multiplier(uint32_t code, uint32_t *nan)
{
	const uint32_t s = code & 0x7f, e = s >> 3, m = s & 7;
	uint32_t h;

	if (s == 0x7f) {
		*nan = 1;
		return 0;
	}
	/* (8 + m) * 2^(e - 10) or, subnormal, m * 2^-9; times 2^118. */
	h = __float_as_uint((float)(e ? 8 + m : m) *
			    __uint_as_float((127 + (e ? e + 108 : 109)) << 23)) >> 16;
	h |= (code & 0x80) << 8;
	return h | (h << 16);
}

/*
 * Two UE4M3 (float8_e4m3fn) scale bytes (bits 0-7, 8-15) as fp32: through
 * fp16, exact both ways (e4m3's subnormals are fp16 normals), NaN (0x7f,
 * 0xff) kept, a sign bit kept as the exact reference reads it.
 */
static __device__ __forceinline__ float2 ue4m3x2_to_f32(uint32_t s)
{
	uint32_t h2;
	float lo, hi;

	asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %1;\n"
	    "cvt.rn.f16x2.e4m3x2 %0, l;\n}" : "=r"(h2) : "r"(s));
	asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\n"
	    "cvt.f32.f16 %0, l;\ncvt.f32.f16 %1, h;\n}" : "=f"(lo), "=f"(hi) : "r"(h2));
	return make_float2(lo, hi);
}

template <int R> static __device__ __forceinline__ void fence_u32(uint32_t *r)
{
#pragma unroll
	for (int i = 0; i < R; i++)
		asm volatile("" : "+r"(r[i]) :: "memory");
}

/*
 * ldexpf() out of line: inlined at each of a thread's 128 accumulators it
 * made the bf16 kernel's epilogue tens of KB of code, which the
 * instruction cache then fetched for every tile.
 */
static __device__ __noinline__ float ldexp_rare(float v, int e)
{
	return ldexpf(v, e);
}

/* v * 2^e, one rounding. */
static __device__ __forceinline__ float scale_pow2(float v, int e)
{
	if (e >= -126 && e <= 127)
		return v * __int_as_float((e + 127) << 23);
	return ldexp_rare(v, e);
}

/*
 * One row's half of a thread's A fragment for wgmma m64nNk16 with A from
 * registers: elements 16q to 16q + 15 of row r of a chunk of 64, as the
 * tensor memory accelerator left them in raw (64-byte rows, 16-byte unit
 * u at u ^ (r / 2 % 4); fp4: 32-byte rows, at u ^ (r / 4 % 2)), times the
 * block's multiplier m, into f[4 sl + h] (k 2q, 2q + 1 of k16 step sl) and
 * f[4 sl + 2 + h] (k 2q + 8, 2q + 9).  Returns the specials mask.
 */
template <int E>
static __device__ __forceinline__ uint32_t frag_row(const uint8_t *raw, int r, int q,
						    int h, uint32_t m, uint32_t *f)
{
	constexpr int cb = E == SM90_E2M1 ? SM90_BF16_KC / 2 : SM90_BF16_KC;
	constexpr uint32_t sh = E == SM90_E5M2 ? 5 : 4;
	constexpr uint32_t mask = E == SM90_E5M2 ? 0x8fe08fe0u : 0x87f087f0u;
	const uint8_t *row = raw + r * cb;
	uint32_t w[4], bad;
	uint4 v;

	if (E == SM90_E2M1) {
		uint2 x = *(const uint2 *)(row + (((q >> 1) ^ ((r >> 2) & 1)) * 16) +
					   (q & 1) * 8);

		v = make_uint4(x.x, x.y, 0, 0);
	} else {
		v = *(const uint4 *)(row + ((q ^ ((r >> 1) & 3)) * 16));
	}
	bad = to_e4m3(E, v, w);
#pragma unroll
	for (int sl = 0; sl < 4; sl++) {
		f[4 * sl + h] = bf16x2_mul(bf16_lo(w[sl], sh, mask), m);
		f[4 * sl + 2 + h] = bf16x2_mul(bf16_hi(w[sl], sh, mask), m);
	}
	return bad;
}

/* An element code's value, exactly (OCP MX v1.0); NaN and Inf as coded. */
static __device__ float sm90_code_value(int e, uint32_t c)
{
	uint32_t s, x, m;
	float v;

	switch (e) {
	case SM90_E4M3:
		s = c >> 7;
		x = (c >> 3) & 15;
		m = c & 7;
		if (x == 15 && m == 7)
			return __int_as_float(0x7fc00000);
		v = x ? ldexpf((float)(8 + m), (int)x - 10) : ldexpf((float)m, -9);
		break;
	case SM90_E5M2:
		s = c >> 7;
		x = (c >> 2) & 31;
		m = c & 3;
		if (x == 31)
			return m ? __int_as_float(0x7fc00000) :
				   __int_as_float(s ? 0xff800000 : 0x7f800000);
		v = x ? ldexpf((float)(4 + m), (int)x - 17) : ldexpf((float)m, -16);
		break;
	case SM90_E2M3:
		s = (c >> 5) & 1;
		x = (c >> 3) & 3;
		m = c & 7;
		v = x ? ldexpf((float)(8 + m), (int)x - 4) : ldexpf((float)m, -3);
		break;
	case SM90_E3M2:
		s = (c >> 5) & 1;
		x = (c >> 2) & 7;
		m = c & 3;
		v = x ? ldexpf((float)(4 + m), (int)x - 5) : ldexpf((float)m, -4);
		break;
	default:	/* e2m1 */
		s = (c >> 3) & 1;
		x = (c >> 1) & 3;
		m = c & 1;
		v = x ? ldexpf((float)(2 + m), (int)x - 2) : ldexpf((float)m, -1);
		break;
	}
	return s ? -v : v;
}

/* Code k of a row of codes (e2m1: two a byte, low nibble first). */
static __device__ __forceinline__ uint32_t sm90_code_at(const uint8_t *row, int e, uint32_t k)
{
	if (e == SM90_E2M1)
		return (row[k / 2] >> (4 * (k & 1))) & 15;
	return row[k];
}

/*
 * Block kb of a row of A's codes times the same of B's: the 32 exact
 * products summed in fp32 in K order (the fallback kernels').
 */
static __device__ float sm90_block_sum(const uint8_t *ar, int ea, const uint8_t *br, int eb,
				       uint32_t kb)
{
	float part = 0.0f;

	for (uint32_t k = 32 * kb; k < 32 * kb + 32; k++)
		part = fmaf(sm90_code_value(ea, sm90_code_at(ar, ea, k)),
			    sm90_code_value(eb, sm90_code_at(br, eb, k)), part);
	return part;
}

/*
 * One C element of a fallback kernel's tile: blocks [kb0, kb1) of rows ar
 * and br, each block's exact sum promoted by its two scales (K-major:
 * block kb of the rows' columns sa_col and sb_col) as the fp8 kernel
 * promotes (promote_fma()), in K order.
 */
static __device__ float sm90_fallback_dot(const uint8_t *ar, int ea, const uint8_t *br, int eb,
					  const uint8_t *sa, uint32_t a_pad, uint32_t sa_col,
					  const uint8_t *sb, uint32_t b_pad, uint32_t sb_col,
					  uint32_t kb0, uint32_t kb1)
{
	float acc = 0.0f;

	for (uint32_t kb = kb0; kb < kb1; kb++)
		acc = promote_fma(sm90_block_sum(ar, ea, br, eb, kb),
				  e8m0_to_f32(sa[(uint64_t)kb * a_pad + sa_col]),
				  e8m0_to_f32(sb[(uint64_t)kb * b_pad + sb_col]), acc);
	return acc;
}

#endif /* SM90_CODE */

#endif /* MXA_CUDA_SM90_FOLD_CUH */
