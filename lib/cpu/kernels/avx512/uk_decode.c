// SPDX-License-Identifier: MIT
/*
 * AVX-512 row kernel of the decode GEMM (contract in cpu_decode.h): one B
 * row's chunk of K is decoded in registers, 32 elements at a time, and
 * dotted with up to 8 rows of A at once, 16 fp32 lanes along K.
 *
 * Decoding: e2m1 nibbles index a 16-entry fp32 value table (vpermps), low
 * nibbles giving the even elements of 32 and high nibbles the odd ones;
 * the 8-bit and 6-bit codes become fp16 bit patterns (sign to bit 15,
 * exponent and mantissa to fp16's, which holds every value of these
 * formats up to a power of two: e5m2 is fp16's top byte) and vcvtph2ps
 * widens them exactly; e4m3's NaN code, which has no fp16 twin, is masked
 * in.  The block scale is applied in fp32: vscalefps by the E8M0 exponent
 * plus the fp16 re-bias (one rounding, only in the subnormal range, and
 * NaN for a NaN scale), or a multiply by the UE4M3 value (exact: e2m1
 * times e4m3 needs 6 bits).  Each product is then rounded once with its
 * addition (FMA), and the 16 lanes are added at the end.
 */
#if defined(__x86_64__)
#include <immintrin.h>

#include "../../cpu_decode.h"

#define DK __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define DK_INLINE __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))

#define DEC_ROWS 8		/* rows of A per pass: 16 accumulators */
#define DEC_ROWS_BF16 16	/* the bf16 kernel's widest pass */
#define DEC_PRE_CHUNKS 12	/* B chunks of 32 decoded ahead (K <= 384) */
#ifndef DEC_PREFETCH
#define DEC_PREFETCH 1024	/* bytes of B ahead */
#endif

static const float e2m1_values[16] = {
	0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
	-0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

/* How the 8- and 6-bit codes map onto fp16 bits. */
struct fp16_map {
	__m512i sign_mask, mag_mask;
	__m128i sign_shift, mag_shift;
	bool e4m3_nan;
};

DK static struct fp16_map fp16_map(enum mxcore_elem elem)
{
	const struct mxcore_format *f = mxcore_format(elem);
	unsigned int sbit = f->code_bits - 1;
	struct fp16_map m;

	m.sign_mask = _mm512_set1_epi16((short)(1u << sbit));
	m.mag_mask = _mm512_set1_epi16((short)((1u << sbit) - 1));
	m.sign_shift = _mm_cvtsi32_si128((int)(15 - sbit));
	m.mag_shift = _mm_cvtsi32_si128((int)(10 - f->mbits));
	m.e4m3_nan = elem == MXCORE_E4M3;
	return m;
}

/* 32 codes of 8 or 6 bits to fp32 (not yet re-biased or scaled). */
DK_INLINE static inline void decode_fp16(const struct fp16_map *m,
					 const uint8_t *codes, __m512 f[2])
{
	__m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const void *)codes));
	__m512i mag = _mm512_and_si512(w, m->mag_mask);
	__m512i h = _mm512_or_si512(
		_mm512_sll_epi16(_mm512_and_si512(w, m->sign_mask),
				 m->sign_shift),
		_mm512_sll_epi16(mag, m->mag_shift));

	f[0] = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
	f[1] = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
	if (m->e4m3_nan) {
		__mmask32 nan = _mm512_cmpeq_epi16_mask(mag, m->mag_mask);

		if (nan) {
			__m512 q = _mm512_set1_ps(__builtin_nanf(""));

			f[0] = _mm512_mask_mov_ps(f[0], (__mmask16)nan, q);
			f[1] = _mm512_mask_mov_ps(f[1], (__mmask16)(nan >> 16),
						  q);
		}
	}
}

/* 32 e2m1 codes (16 bytes): even elements to f0, odd ones to f1. */
DK_INLINE static inline void decode_e2m1(__m512 lut, const uint8_t *codes,
					 __m512 f[2])
{
	__m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)codes));

	f[0] = _mm512_permutexvar_ps(_mm512_and_si512(v, _mm512_set1_epi32(15)),
				     lut);
	f[1] = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), lut);
}

DK_INLINE static inline __m512 scale_by(__m512 f, __m512 s, bool ue4m3)
{
	return ue4m3 ? _mm512_mul_ps(f, s) : _mm512_scalef_ps(f, s);
}

/*
 * A last block of 16 (NVFP4), at K offset k, scaled: its evens in lanes
 * 0-7, odds in 8-15 (the kernel order of a group of 16).
 */
DK_INLINE static inline __m512 decode_e2m1_half(const struct cpu_decode_args *d,
						__m512 lut, const uint8_t *codes,
						const uint8_t *scales, uint32_t k)
{
	__m512i v = _mm512_cvtepu8_epi32(
			_mm_loadl_epi64((const void *)(codes + k / 2)));
	__m512i lo = _mm512_and_si512(v, _mm512_set1_epi32(15));
	__m512i hi = _mm512_srli_epi32(v, 4);
	__m512i idx = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);

	return scale_by(_mm512_permutexvar_ps(idx, lut),
			_mm512_set1_ps(d->table[scales[k / 16]]), d->ue4m3);
}

/*
 * Rows [0, R) of A against the chunk: R is a constant in each caller, so
 * the accumulators live in registers.
 */
DK_INLINE static inline void rows_pass(const struct cpu_decode_args *d,
			 const struct fp16_map *map, __m512 lut,
			 const uint8_t *codes, const uint8_t *scales,
			 const float *a, unsigned int R, float *sums)
{
	__m512 acc0[DEC_ROWS], acc1[DEC_ROWS];
	const float *t = d->table;
	bool e2m1 = d->elem == MXCORE_E2M1;
	uint32_t k, full = d->kn & ~31u;
	unsigned int r;

	#pragma GCC unroll 8
	for (r = 0; r < R; r++) {
		acc0[r] = _mm512_setzero_ps();
		acc1[r] = _mm512_setzero_ps();
	}
	for (k = 0; k < full; k += 32) {
		__m512 f[2], s;

		/* The hardware prefetcher falls behind on B: help it. */
		_mm_prefetch((const char *)codes + (e2m1 ? k / 2 : k) +
			     DEC_PREFETCH, _MM_HINT_T0);
		if (e2m1) {
			decode_e2m1(lut, codes + k / 2, f);
			if (d->bs == 16)
				s = _mm512_mask_blend_ps(0xff00,
					_mm512_set1_ps(t[scales[k / 16]]),
					_mm512_set1_ps(t[scales[k / 16 + 1]]));
			else
				s = _mm512_set1_ps(t[scales[k / 32]]);
		} else {
			decode_fp16(map, codes + k, f);
			s = _mm512_set1_ps(t[scales[k / 32]]);
		}
		f[0] = scale_by(f[0], s, d->ue4m3);
		f[1] = scale_by(f[1], s, d->ue4m3);
		#pragma GCC unroll 8
		for (r = 0; r < R; r++) {
			const float *ar = a + r * d->lda + k;

			acc0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(ar), f[0],
						  acc0[r]);
			acc1[r] = _mm512_fmadd_ps(_mm512_loadu_ps(ar + 16), f[1],
						  acc1[r]);
		}
	}
	if (k < d->kn) {
		/* A last block of 16 (NVFP4). */
		__m512 f = decode_e2m1_half(d, lut, codes, scales, k);

		#pragma GCC unroll 8
		for (r = 0; r < R; r++)
			acc0[r] = _mm512_fmadd_ps(
				_mm512_loadu_ps(a + r * d->lda + k), f, acc0[r]);
	}
	#pragma GCC unroll 8
	for (r = 0; r < R; r++)
		sums[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

DK void cpu_decode_rows_avx512(const struct cpu_decode_args *d,
			       const uint8_t *codes, const uint8_t *scales,
			       float *sums)
{
	__m512 lut = _mm512_loadu_ps(e2m1_values);
	struct fp16_map map = fp16_map(d->elem == MXCORE_E2M1 ?
				       MXCORE_E4M3 : d->elem);
	unsigned int i0, rows;

	for (i0 = 0; i0 < d->m; i0 += rows) {
		const float *a = d->a + i0 * d->lda;

		rows = d->m - i0 < DEC_ROWS ? d->m - i0 : DEC_ROWS;
		switch (rows) {
		case 8:
			rows_pass(d, &map, lut, codes, scales, a, 8, sums + i0);
			break;
		case 7:
			rows_pass(d, &map, lut, codes, scales, a, 7, sums + i0);
			break;
		case 6:
			rows_pass(d, &map, lut, codes, scales, a, 6, sums + i0);
			break;
		case 5:
			rows_pass(d, &map, lut, codes, scales, a, 5, sums + i0);
			break;
		case 4:
			rows_pass(d, &map, lut, codes, scales, a, 4, sums + i0);
			break;
		case 3:
			rows_pass(d, &map, lut, codes, scales, a, 3, sums + i0);
			break;
		case 2:
			rows_pass(d, &map, lut, codes, scales, a, 2, sums + i0);
			break;
		default:
			rows_pass(d, &map, lut, codes, scales, a, 1, sums + i0);
			break;
		}
	}
}

/*
 * The same on bf16 A with AVX512_BF16 (contract in cpu_decode.h): the
 * decoded, scaled B values are bf16 exactly (the framework sends only rows
 * whose scales make them bf16 normals), packed as A is, and vdpbf16ps
 * multiplies 32 pairs at once; two accumulators per row alternate chunks.
 */
#define DKB __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#define DKB_INLINE __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"), always_inline))

DKB_INLINE static inline __m512bh to_bf16(__m512 lo, __m512 hi)
{
	return _mm512_cvtne2ps_pbh(hi, lo);
}

/*
 * 32 e2m1 codes as scaled bf16 in the kernel's order (even elements in
 * words 0-15, odd ones in 16-31): the 16 values scaled once per block and
 * converted (words 0-15 for the chunk's first block, 16-31 for an NVFP4
 * chunk's second), then one vpermw by nibble.
 */
DKB_INLINE static inline __m512bh decode_e2m1_bf16(const struct cpu_decode_args *d,
						   __m512 lut,
						   const uint8_t *codes,
						   const uint8_t *scales,
						   uint32_t k)
{
	const float *t = d->table;
	__m256i w = _mm256_cvtepu8_epi16(
			_mm_loadu_si128((const void *)(codes + k / 2)));
	__m512i idx = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_and_si256(w,
					_mm256_set1_epi16(15))),
		_mm256_srli_epi16(w, 4), 1);
	__m256bh v0, v1;

	if (d->bs == 16) {
		v0 = _mm512_cvtneps_pbh(scale_by(lut,
				_mm512_set1_ps(t[scales[k / 16]]), d->ue4m3));
		v1 = _mm512_cvtneps_pbh(scale_by(lut,
				_mm512_set1_ps(t[scales[k / 16 + 1]]),
				d->ue4m3));
		/* Bytes 8-15 of the chunk are the second block's. */
		idx = _mm512_or_si512(idx, _mm512_set_epi64(
			0x0010001000100010ll, 0x0010001000100010ll, 0, 0,
			0x0010001000100010ll, 0x0010001000100010ll, 0, 0));
	} else {
		v0 = _mm512_cvtneps_pbh(scale_by(lut,
				_mm512_set1_ps(t[scales[k / 32]]), d->ue4m3));
		v1 = v0;
	}
	return (__m512bh)_mm512_permutexvar_epi16(idx,
		_mm512_inserti64x4(_mm512_castsi256_si512((__m256i)v0),
				   (__m256i)v1, 1));
}

/* 32 B values from K offset k, scaled, as bf16 pairs. */
DKB_INLINE static inline __m512bh decode_bf16(const struct cpu_decode_args *d,
					      const struct fp16_map *map,
					      __m512 lut, const uint8_t *codes,
					      const uint8_t *scales, uint32_t k,
					      bool e2m1)
{
	const float *t = d->table;
	__m512 f[2], s;

	_mm_prefetch((const char *)codes + (e2m1 ? k / 2 : k) + DEC_PREFETCH,
		     _MM_HINT_T0);
	if (e2m1)
		return decode_e2m1_bf16(d, lut, codes, scales, k);
	decode_fp16(map, codes + k, f);
	s = _mm512_set1_ps(t[scales[k / 32]]);
	return to_bf16(scale_by(f[0], s, d->ue4m3),
		       scale_by(f[1], s, d->ue4m3));
}

DKB_INLINE static inline void rows_pass_bf16(const struct cpu_decode_args *d,
					     const struct fp16_map *map,
					     __m512 lut, const uint8_t *codes,
					     const uint8_t *scales,
					     const uint16_t *a, unsigned int R,
					     float *sums)
{
	__m512 acc0[DEC_ROWS_BF16], acc1[DEC_ROWS_BF16];
	bool e2m1 = d->elem == MXCORE_E2M1;
	bool two = R <= DEC_ROWS;	/* a second chain per row fits */
	uint32_t k, full = d->kn & ~31u;
	unsigned int r;
	__m512bh bv;

	#pragma GCC unroll 16
	for (r = 0; r < R; r++) {
		acc0[r] = _mm512_setzero_ps();
		acc1[r] = _mm512_setzero_ps();
	}
	/*
	 * Chunks in pairs, one accumulator each (two dependency chains per
	 * row) for up to 8 rows; 16 rows have 16 chains with one each.
	 */
	for (k = 0; k + 64 <= full; k += 64) {
		bv = decode_bf16(d, map, lut, codes, scales, k, e2m1);
		#pragma GCC unroll 16
		for (r = 0; r < R; r++)
			acc0[r] = _mm512_dpbf16_ps(acc0[r],
				(__m512bh)_mm512_loadu_si512(a + r * d->lda + k),
				bv);
		bv = decode_bf16(d, map, lut, codes, scales, k + 32, e2m1);
		#pragma GCC unroll 16
		for (r = 0; r < R; r++) {
			__m512bh av = (__m512bh)_mm512_loadu_si512(a +
						r * d->lda + k + 32);

			if (two)
				acc1[r] = _mm512_dpbf16_ps(acc1[r], av, bv);
			else
				acc0[r] = _mm512_dpbf16_ps(acc0[r], av, bv);
		}
	}
	if (k < full) {
		bv = decode_bf16(d, map, lut, codes, scales, k, e2m1);
		#pragma GCC unroll 16
		for (r = 0; r < R; r++)
			acc0[r] = _mm512_dpbf16_ps(acc0[r],
				(__m512bh)_mm512_loadu_si512(a + r * d->lda + k),
				bv);
		k += 32;
	}
	if (k < d->kn) {
		/* A last block of 16 (NVFP4): A's other half reads as zeros. */
		bv = to_bf16(decode_e2m1_half(d, lut, codes, scales, k),
			     _mm512_setzero_ps());
		#pragma GCC unroll 16
		for (r = 0; r < R; r++)
			acc0[r] = _mm512_dpbf16_ps(acc0[r],
				(__m512bh)_mm512_maskz_loadu_epi16(0xffff,
					a + r * d->lda + k), bv);
	}
	#pragma GCC unroll 16
	for (r = 0; r < R; r++)
		sums[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

/*
 * Rows [0, 8) of A against two B rows' chunks: each load of A feeds both,
 * one accumulator (one chain) per pair of rows, in the order the 16-row
 * pass of rows_pass_bf16() adds, so the sums are the same bits.
 */
DKB_INLINE static inline void pair_pass_bf16(const struct cpu_decode_args *d,
					     const struct fp16_map *map,
					     __m512 lut, const uint8_t *c0,
					     const uint8_t *s0,
					     const uint8_t *c1,
					     const uint8_t *s1,
					     const uint16_t *a,
					     const __m512bh *pre, float *sums0,
					     float *sums1)
{
	__m512 acc0[DEC_ROWS], acc1[DEC_ROWS];
	bool e2m1 = d->elem == MXCORE_E2M1;
	uint32_t k, full = d->kn & ~31u;
	unsigned int r;
	__m512bh b0, b1;

	#pragma GCC unroll 8
	for (r = 0; r < DEC_ROWS; r++) {
		acc0[r] = _mm512_setzero_ps();
		acc1[r] = _mm512_setzero_ps();
	}
	for (k = 0; k < full; k += 32) {
		if (pre) {
			b0 = pre[k / 16];
			b1 = pre[k / 16 + 1];
		} else {
			b0 = decode_bf16(d, map, lut, c0, s0, k, e2m1);
			b1 = decode_bf16(d, map, lut, c1, s1, k, e2m1);
		}
		#pragma GCC unroll 8
		for (r = 0; r < DEC_ROWS; r++) {
			__m512bh av = (__m512bh)_mm512_loadu_si512(a +
						r * d->lda + k);

			acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
			acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
		}
	}
	if (k < d->kn) {
		/* A last block of 16 (NVFP4), as in rows_pass_bf16(). */
		b0 = to_bf16(decode_e2m1_half(d, lut, c0, s0, k),
			     _mm512_setzero_ps());
		b1 = to_bf16(decode_e2m1_half(d, lut, c1, s1, k),
			     _mm512_setzero_ps());
		#pragma GCC unroll 8
		for (r = 0; r < DEC_ROWS; r++) {
			__m512bh av = (__m512bh)_mm512_maskz_loadu_epi16(0xffff,
						a + r * d->lda + k);

			acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
			acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
		}
	}
	/* The 16-row pass adds its unused second accumulator: so do we. */
	#pragma GCC unroll 8
	for (r = 0; r < DEC_ROWS; r++) {
		sums0[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r],
						_mm512_setzero_ps()));
		sums1[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc1[r],
						_mm512_setzero_ps()));
	}
}

DKB void cpu_decode_rows_avx512bf16(const struct cpu_decode_args *d,
				    const uint8_t *codes, const uint8_t *scales,
				    float *sums)
{
	__m512 lut = _mm512_loadu_ps(e2m1_values);
	struct fp16_map map = fp16_map(d->elem == MXCORE_E2M1 ?
				       MXCORE_E4M3 : d->elem);
	unsigned int i0, rows;

	for (i0 = 0; i0 < d->m; i0 += rows) {
		const uint16_t *a = d->ab + i0 * d->lda;

		/* 16 rows share each decoded chunk of B, else up to 8. */
		if (d->m - i0 >= DEC_ROWS_BF16) {
			rows = DEC_ROWS_BF16;
			rows_pass_bf16(d, &map, lut, codes, scales, a, 16,
				       sums + i0);
			continue;
		}
		rows = d->m - i0 < DEC_ROWS ? d->m - i0 : DEC_ROWS;
		switch (rows) {
		case 8:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 8, sums + i0);
			break;
		case 7:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 7, sums + i0);
			break;
		case 6:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 6, sums + i0);
			break;
		case 5:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 5, sums + i0);
			break;
		case 4:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 4, sums + i0);
			break;
		case 3:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 3, sums + i0);
			break;
		case 2:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 2, sums + i0);
			break;
		default:
			rows_pass_bf16(d, &map, lut, codes, scales, a, 1, sums + i0);
			break;
		}
	}
}

DKB void cpu_decode_rows2_avx512bf16(const struct cpu_decode_args *d,
				     const uint8_t *codes0,
				     const uint8_t *scales0,
				     const uint8_t *codes1,
				     const uint8_t *scales1,
				     float *sums0, float *sums1)
{
	__m512 lut = _mm512_loadu_ps(e2m1_values);
	struct fp16_map map = fp16_map(d->elem == MXCORE_E2M1 ?
				       MXCORE_E4M3 : d->elem);
	__m512bh pre[2 * DEC_PRE_CHUNKS];
	struct cpu_decode_args rest;
	bool e2m1 = d->elem == MXCORE_E2M1;
	uint32_t k, full = d->kn & ~31u;
	unsigned int i0;
	__m512bh *p = NULL;

	/* Both rows' chunks decoded once for every 16 rows of A. */
	if (d->m >= DEC_ROWS_BF16 && full <= 32 * DEC_PRE_CHUNKS) {
		for (k = 0; k < full; k += 32) {
			pre[k / 16] = decode_bf16(d, &map, lut, codes0, scales0,
						  k, e2m1);
			pre[k / 16 + 1] = decode_bf16(d, &map, lut, codes1,
						      scales1, k, e2m1);
		}
		p = pre;
	}
	/* Blocks of 16 rows as two halves of 8; the rest one B row a time. */
	for (i0 = 0; d->m - i0 >= DEC_ROWS_BF16; i0 += DEC_ROWS_BF16) {
		const uint16_t *a = d->ab + i0 * d->lda;

		pair_pass_bf16(d, &map, lut, codes0, scales0, codes1, scales1,
			       a, p, sums0 + i0, sums1 + i0);
		pair_pass_bf16(d, &map, lut, codes0, scales0, codes1, scales1,
			       a + DEC_ROWS * d->lda, p, sums0 + i0 + DEC_ROWS,
			       sums1 + i0 + DEC_ROWS);
	}
	if (i0 < d->m) {
		rest = *d;
		rest.ab = d->ab + i0 * d->lda;
		rest.m = d->m - i0;
		cpu_decode_rows_avx512bf16(&rest, codes0, scales0, sums0 + i0);
		cpu_decode_rows_avx512bf16(&rest, codes1, scales1, sums1 + i0);
	}
}
#endif
