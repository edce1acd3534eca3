/* SPDX-License-Identifier: MIT */
/*
 * Quantization and dequantization rows, written once with GCC's generic
 * vectors and compiled once per instruction set by the file that includes
 * this one after defining QV_TARGET and QV_LANES (16 for AVX-512, 8 for
 * AVX2): zstd's HUF_DGEN idea.  The same source is bit-exact everywhere by
 * construction, and must be bit-exact with the scalar core
 * (lib/core/mxcore_quant.c), whose steps it follows:
 *
 * - QV_LANES blocks at a time: amax per block (integer max of |x|, so any
 *   NaN gives a NaN amax, which every mode turns into scale 0xff), then
 *   their scales in vector form;
 * - a block with scale 0xff gets the core's code for y = 0x7fffffff in
 *   every element (mxcore_f32_mul() returns that NaN for any x times the
 *   NaN reciprocal); in every other block x * 2^(127 - s) is finite;
 * - y = x * 2^(127 - s) by an fp32 multiply (exact, or correctly rounded
 *   in the subnormal range; callers run with MXCSR at its default);
 * - codes by the core's integer rounding for normals, and below the
 *   smallest normal by adding 2^(k_exp + 23) in fp32, which rounds to a
 *   multiple of 2^k_exp with ties to even, as subnormal_code() does (and
 *   as PyTorch's converters do).
 *
 * Dequantization forms the element value exactly in fp32 (the code's
 * exponent and mantissa bits shifted into fp32's, times 2^(127 - bias))
 * and multiplies it by 2^(s - 127): one rounding, as mxcore_dequantize().
 *
 * Each row function switches on the element type once and runs a copy of
 * the body specialized for it, its format constants folded.
 */
#ifndef MXA_QUANT_BODY_H
#define MXA_QUANT_BODY_H

#include <immintrin.h>
#include <string.h>

#include "../cpu_quant.h"

#if !defined(QV_ISA) || !defined(QV_LANES)
#error "define QV_ISA and QV_LANES before including quant_body.h"
#endif

/* Row functions, and helpers that are always inlined into them. */
#define QV_TARGET __attribute__((target(QV_ISA)))
#define QV __attribute__((always_inline, target(QV_ISA)))
#define QV_PER_BLOCK (MXCORE_BLOCK / QV_LANES)
/* Loops over a block's vectors are unrolled so their arrays stay in registers. */

/*
 * The helpers pass vectors by value; they are always inlined and never
 * part of an ABI, so GCC's note about how such vectors are passed without
 * the wider ISA does not apply.
 */
#pragma GCC diagnostic ignored "-Wpsabi"

/*
 * Vectors of QV_LANES lanes: GCC's own vector types from <immintrin.h>
 * (unsigned 32-bit, float, 16-bit and 8-bit lanes), so generic operators
 * apply to them lane by lane.
 */
#if QV_LANES == 16
#define QV_U __v16su
#define QV_F __v16sf
#define QV_U16 __v16hu
#define QV_U8 __v16qu
#elif QV_LANES == 8
#define QV_U __v8su
#define QV_F __v8sf
#define QV_U16 __v8hu
#define QV_U8 __v8qi
#endif

/* The core's formats (lib/core/mxcore_elem.c), as constants to fold. */
static const struct mxcore_format qv_formats[] = {
	[MXCORE_E4M3] = { 4, 3, 7, 8, 8, 0x7e, -9, 0x43e00000 },
	[MXCORE_E5M2] = { 5, 2, 15, 15, 8, 0x7b, -16, 0x47600000 },
	[MXCORE_E2M3] = { 2, 3, 1, 2, 6, 0x1f, -3, 0x40f00000 },
	[MXCORE_E3M2] = { 3, 2, 3, 4, 6, 0x1f, -4, 0x41e00000 },
	[MXCORE_E2M1] = { 2, 1, 1, 2, 4, 0x7, -1, 0x40c00000 },
};

/* fp32(1 / max) as torchao computes it (lib/core/mxcore_quant.c). */
static const uint32_t qv_rcp_max[] = {
	[MXCORE_E4M3] = 0x3b124925,
	[MXCORE_E5M2] = 0x37924925,
	[MXCORE_E2M3] = 0x3e088889,
	[MXCORE_E3M2] = 0x3d124925,
	[MXCORE_E2M1] = 0x3e2aaaab,
};

static inline QV QV_U qv_splat(uint32_t x)
{
	QV_U zero = { 0 };

	return zero + x;
}

/*
 * The few operations generic vectors express badly, per ISA: comparisons
 * into a mask, selection by mask, unsigned min and max.  Comparisons are
 * signed: every value compared here is below 2^31 or a small negative
 * exponent.
 */
#if QV_LANES == 16
#define QV_M __mmask16

static inline QV QV_M qv_lt(QV_U a, QV_U b)
{
	return _mm512_cmplt_epi32_mask((__m512i)a, (__m512i)b);
}

static inline QV QV_M qv_eq(QV_U a, QV_U b)
{
	return _mm512_cmpeq_epi32_mask((__m512i)a, (__m512i)b);
}

/* Lanes of a where m is set, else of b. */
static inline QV QV_U qv_sel(QV_M m, QV_U a, QV_U b)
{
	return (QV_U)_mm512_mask_blend_epi32(m, (__m512i)b, (__m512i)a);
}

static inline QV QV_U qv_max(QV_U a, QV_U b)
{
	return (QV_U)_mm512_max_epu32((__m512i)a, (__m512i)b);
}

static inline QV QV_U qv_min(QV_U a, QV_U b)
{
	return (QV_U)_mm512_min_epu32((__m512i)a, (__m512i)b);
}
#else
#define QV_M QV_U

static inline QV QV_M qv_lt(QV_U a, QV_U b)
{
	return (QV_U)_mm256_cmpgt_epi32((__m256i)b, (__m256i)a);
}

static inline QV QV_M qv_eq(QV_U a, QV_U b)
{
	return (QV_U)_mm256_cmpeq_epi32((__m256i)a, (__m256i)b);
}

static inline QV QV_U qv_sel(QV_M m, QV_U a, QV_U b)
{
	return (QV_U)_mm256_blendv_epi8((__m256i)b, (__m256i)a, (__m256i)m);
}

static inline QV QV_U qv_max(QV_U a, QV_U b)
{
	return (QV_U)_mm256_max_epu32((__m256i)a, (__m256i)b);
}

static inline QV QV_U qv_min(QV_U a, QV_U b)
{
	return (QV_U)_mm256_min_epu32((__m256i)a, (__m256i)b);
}
#endif

static inline QV QV_M qv_gt(QV_U a, QV_U b)
{
	return qv_lt(b, a);
}

static inline QV QV_U qv_fmul(QV_U a, QV_U b)
{
	return (QV_U)((QV_F)a * (QV_F)b);
}

/* Elements [i0, i0 + QV_LANES) of a row of fp32, as bits. */
static inline QV QV_U qv_load(const uint8_t *src, size_t i0)
{
	QV_U v;

	memcpy(&v, src + 4 * i0, sizeof(v));
	return v;
}

#if QV_LANES == 16
#define QV_HALF_LO { 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 }
#define QV_HALF_HI { 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31 }
#define QV_QUART_LO { 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27 }
#define QV_QUART_HI { 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31 }
#define QV_PAIR_LO { 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29 }
#define QV_PAIR_HI { 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31 }
#define QV_EVEN { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 }
#define QV_ODD { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31 }
#define QV_ZIP_LO { 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23 }
#define QV_ZIP_HI { 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31 }
#elif QV_LANES == 8
#define QV_PAIR_LO { 0, 1, 4, 5, 8, 9, 12, 13 }
#define QV_PAIR_HI { 2, 3, 6, 7, 10, 11, 14, 15 }
#define QV_QUART_LO { 0, 1, 2, 3, 8, 9, 10, 11 }
#define QV_QUART_HI { 4, 5, 6, 7, 12, 13, 14, 15 }
#define QV_EVEN { 0, 2, 4, 6, 8, 10, 12, 14 }
#define QV_ODD { 1, 3, 5, 7, 9, 11, 13, 15 }
#define QV_ZIP_LO { 0, 8, 1, 9, 2, 10, 3, 11 }
#define QV_ZIP_HI { 4, 12, 5, 13, 6, 14, 7, 15 }
#else
#error "QV_LANES must be 16 or 8"
#endif

/*
 * The maximum of each pair of 16-bit lanes (the bf16 rows compare
 * magnitudes two to a 32-bit lane).
 */
static inline QV QV_U qv_max16(QV_U a, QV_U b)
{
#if QV_LANES == 16
	return (QV_U)_mm512_max_epu16((__m512i)a, (__m512i)b);
#else
	return (QV_U)_mm256_max_epu16((__m256i)a, (__m256i)b);
#endif
}

static inline QV QV_U qv_max_as(bool u16, QV_U a, QV_U b)
{
	return u16 ? qv_max16(a, b) : qv_max(a, b);
}

/* max(shuffle(a, b, lo), shuffle(a, b, hi)): one level of the tree. */
#define QV_FOLD(a, b, lo, hi) \
	qv_max_as(u16, __builtin_shuffle((a), (b), (QV_U)lo), \
		  __builtin_shuffle((a), (b), (QV_U)hi))

/*
 * Lane b of the result: the maximum of the lanes of m[b], by a tree of
 * two-vector shuffles (QV_LANES - 1 steps instead of QV_LANES reductions).
 * With u16 the maxima are taken per 16-bit half; the shuffles move whole
 * 32-bit lanes, so each half keeps to its own tree.
 */
static inline QV QV_U qv_transpose_max(QV_U m[QV_LANES], bool u16)
{
	QV_U r[QV_LANES / 2];
	unsigned int i, n = QV_LANES;

#if QV_LANES == 16
	#pragma GCC unroll 16
	for (i = 0; i < n / 2; i++)
		r[i] = QV_FOLD(m[2 * i], m[2 * i + 1], QV_HALF_LO, QV_HALF_HI);
	n /= 2;
	#pragma GCC unroll 16
	for (i = 0; i < n / 2; i++)
		r[i] = QV_FOLD(r[2 * i], r[2 * i + 1], QV_QUART_LO, QV_QUART_HI);
#else
	#pragma GCC unroll 16
	for (i = 0; i < n / 2; i++)
		r[i] = QV_FOLD(m[2 * i], m[2 * i + 1], QV_QUART_LO, QV_QUART_HI);
#endif
	n /= 2;
	#pragma GCC unroll 16
	for (i = 0; i < n / 2; i++)
		r[i] = QV_FOLD(r[2 * i], r[2 * i + 1], QV_PAIR_LO, QV_PAIR_HI);
	return QV_FOLD(r[0], r[1], QV_EVEN, QV_ODD);
}

static inline QV QV_M qv_isnan(QV_U x)
{
	return qv_gt(x & 0x7fffffff, qv_splat(0x7f800000));
}

/* mxcore_scale() on QV_LANES amax values (sign bits clear). */
static inline QV QV_U qv_scale(enum mxcore_elem elem, enum mxcore_mode mode, QV_U amax)
{
	const struct mxcore_format *f = &qv_formats[elem];
	QV_U zero = qv_splat(0), one = qv_splat(1), e;
	QV_M nonfinite;

	if (mode == MXCORE_RCEIL) {
		QV_U v = qv_fmul(amax, qv_splat(qv_rcp_max[elem]));
		QV_U be = (v >> 23) & 0xff, m = v & 0x7fffff;
		/* E8M0 byte 0 is 2^-127: round up from above its half. */
		QV_M up = qv_gt(m, qv_sel(qv_eq(be, zero),
					  qv_splat(0x400000), zero));

		return qv_sel(qv_eq(be, qv_splat(0xff)),
			      qv_splat(MXCORE_SCALE_NAN),
			      be + qv_sel(up, one, zero));
	}
	if (mode == MXCORE_EVEN)
		amax = qv_sel(qv_isnan(amax), amax,
			      (amax + (1u << (23 - f->mbits - 1))) &
			      0xff800000u);
	nonfinite = qv_eq(amax & 0x7f800000, qv_splat(0x7f800000));
	/* The unbiased exponent, as two's complement in unsigned lanes. */
	e = ((amax >> 23) & 0xff) - 127;
	if (mode == MXCORE_CEIL)
		e += qv_sel(qv_eq(amax & 0x7fffff, zero), zero, one);
	e -= f->emax;
	e = qv_sel(qv_lt(e, qv_splat((uint32_t)-127)),
		   qv_splat((uint32_t)-127), e);
	e = qv_sel(qv_gt(e, qv_splat(128)), qv_splat(128), e);
	return qv_sel(nonfinite, qv_splat(MXCORE_SCALE_NAN), e + 127);
}

/*
 * _e8m0_scale_to_reciprocal_fp32(): fp32 bits of 2^(127 - scale), for
 * scales other than 0xff (whose lanes are garbage).
 */
static inline QV QV_U qv_reciprocal(QV_U scale)
{
	return qv_sel(qv_eq(scale, qv_splat(254)), qv_splat(0x00400000u),
		      (254 - scale) << 23);
}

/*
 * A value the compiler must keep in a register: GCC otherwise re-creates
 * splatted constants inside loops from a general register, and each such
 * broadcast is a shuffle-port uop that the encode loop cannot spare.
 */
static inline QV QV_U qv_pin(QV_U x)
{
	__asm__("" : "+v"(x));
	return x;
}

/* One format's encode constants, made once per row (qv_enc_init()). */
struct qv_enc {
	QV_U abs;		/* 0x7fffffff */
	QV_U max_f32;		/* the largest value, fp32 bits */
	QV_U magic;		/* 2^(k_exp + 23): rounds to a multiple of 2^k_exp */
	QV_U min_normal;	/* the smallest normal, fp32 bits */
	QV_U round;		/* rebias plus half an ulp less one */
	QV_U one;
	QV_U max_code;
	QV_U sign;		/* the code's sign bit */
};

static inline QV void qv_enc_init(const struct mxcore_format *f,
				  struct qv_enc *k)
{
	unsigned int shift = 23 - f->mbits;

	k->abs = qv_pin(qv_splat(0x7fffffffu));
	k->max_f32 = qv_pin(qv_splat(f->max_f32));
	k->magic = qv_pin(qv_splat((uint32_t)(127 + f->k_exp + 23) << 23));
	k->min_normal = qv_pin(qv_splat((uint32_t)(127 + 1 - f->bias) << 23));
	k->round = qv_pin(qv_splat(((uint32_t)(f->bias - 127) << 23) +
				   ((1u << (shift - 1)) - 1)));
	k->one = qv_pin(qv_splat(1));
	k->max_code = qv_pin(qv_splat(f->max_code));
	k->sign = qv_pin(qv_splat(1u << (f->ebits + f->mbits)));
}

/*
 * Codes of finite values y, one per lane (at most 8 bits): of |y| by
 * qv_encode_mag(), with y's sign by qv_encode().  Normals take
 * the core's integer rounding (encode_fp8 / encode_floatx): the rebiased
 * bits plus half an ulp less one plus the kept lowest bit, shifted.
 */
static inline QV QV_U qv_encode_mag(const struct mxcore_format *f,
				    const struct qv_enc *k, QV_U ay)
{
	unsigned int shift = 23 - f->mbits;
	QV_U sub, code;

	if (f->code_bits == 8)		/* torch.clamp(data, -max, max) */
		ay = qv_min(ay, k->max_f32);
	sub = (QV_U)((QV_F)ay + (QV_F)k->magic) - k->magic;
	code = qv_sel(qv_lt(ay, k->min_normal), sub,
		      (ay + k->round + ((ay >> shift) & k->one)) >> shift);
	if (f->code_bits != 8)
		code = qv_sel(qv_lt(ay, k->max_f32), code, k->max_code);
	return code;
}

static inline QV QV_U qv_encode(const struct mxcore_format *f,
				const struct qv_enc *k, QV_U y)
{
	unsigned int sign_pos = f->ebits + f->mbits;

	return qv_encode_mag(f, k, y & k->abs) |
	       ((y >> (31 - sign_pos)) & k->sign);
}

/* The core's code for y = 0x7fffffff (every element of a NaN block). */
static inline uint8_t qv_nan_code(const struct mxcore_format *f)
{
	unsigned int shift = 23 - f->mbits;
	uint32_t ay = 0x7fffffffu;

	if (f->code_bits == 8)
		return 0x7f;
	/* encode_floatx() has no NaN: its normal branch, wrapped to 8 bits */
	return (uint8_t)((ay + ((uint32_t)(f->bias - 127) << 23) +
			  ((1u << (shift - 1)) - 1) + ((ay >> shift) & 1)) >>
			 shift);
}

/*
 * Four vectors of codes (each lane below 256) to 4 * QV_LANES bytes in
 * lane order: two saturating packs (exact on such lanes) interleave the
 * four vectors by 128-bit lane, one dword permute puts them back in
 * order.  Three shuffle uops where a narrowing move per vector takes two
 * each.
 */
#if QV_LANES == 16
#define QV_BYTES4 __m512i

static inline QV __m512i qv_narrow4(const QV_U c[4])
{
	__m512i w0 = _mm512_packus_epi32((__m512i)c[0], (__m512i)c[1]);
	__m512i w1 = _mm512_packus_epi32((__m512i)c[2], (__m512i)c[3]);

	return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5,
							  9, 13, 2, 6, 10, 14,
							  3, 7, 11, 15),
					_mm512_packus_epi16(w0, w1));
}

/* Bytes 2i and 2i + 1 (codes below 16) to nibbles of byte i, 32 bytes. */
static inline QV __m256i qv_nibbles(__m512i b)
{
	return _mm512_cvtepi16_epi8(_mm512_or_si512(b, _mm512_srli_epi16(b, 4)));
}
#else
#define QV_BYTES4 __m256i

static inline QV __m256i qv_narrow4(const QV_U c[4])
{
	__m256i w0 = _mm256_packus_epi32((__m256i)c[0], (__m256i)c[1]);
	__m256i w1 = _mm256_packus_epi32((__m256i)c[2], (__m256i)c[3]);

	return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w0, w1),
					   _mm256_setr_epi32(0, 4, 1, 5, 2, 6,
							     3, 7));
}

static inline QV __m128i qv_nibbles(__m256i b)
{
	__m256i w = _mm256_and_si256(_mm256_or_si256(b, _mm256_srli_epi16(b, 4)),
				     _mm256_set1_epi16(0xff));

	return _mm_packus_epi16(_mm256_castsi256_si128(w),
				_mm256_extracti128_si256(w, 1));
}
#endif

/* Blocks whose codes one qv_narrow4() call packs: 2 (16 lanes) or 1. */
#define QV_GROUP_BLOCKS (4 / QV_PER_BLOCK)

/*
 * Blocks [b, b + n) of a row (n <= QV_GROUP_BLOCKS), their scales'
 * reciprocals in rcp[] (bits): every element's code, a NaN-scale block
 * wholly the core's NaN code, stored packed (pack_uint4() for e2m1: odd
 * element in the high nibble).
 */
static inline QV void qv_encode_group(enum mxcore_elem elem,
				      const struct qv_enc *k,
				      const uint8_t *in,
				      size_t at, const uint32_t *rcp,
				      const uint8_t *scale, bool any_nan,
				      unsigned int n, uint8_t *out)
{
	const struct mxcore_format *f = &qv_formats[elem];
	QV_U c[4] = { { 0 } };
	unsigned int j, v;
	QV_BYTES4 b;

	#pragma GCC unroll 4
	for (j = 0; j < QV_GROUP_BLOCKS; j++) {
		QV_U r;

		if (j == n)
			break;
		if (any_nan && scale[j] == MXCORE_SCALE_NAN) {
			#pragma GCC unroll 4
			for (v = 0; v < QV_PER_BLOCK; v++)
				c[j * QV_PER_BLOCK + v] = qv_splat(qv_nan_code(f));
			continue;
		}
		r = qv_splat(rcp[j]);
		#pragma GCC unroll 4
		for (v = 0; v < QV_PER_BLOCK; v++)
			c[j * QV_PER_BLOCK + v] =
				qv_encode(f, k, qv_fmul(qv_load(in,
					at + (j * QV_PER_BLOCK + v) * QV_LANES), r));
	}
	b = qv_narrow4(c);
	if (elem == MXCORE_E2M1) {
		/* qv_nan_code() of e2m1 is 4, a nibble like every code */
		__typeof__(qv_nibbles(b)) h = qv_nibbles(b);

		if (n == QV_GROUP_BLOCKS)
			memcpy(out, &h, QV_GROUP_BLOCKS * MXCORE_BLOCK / 2);
		else
			memcpy(out, &h, MXCORE_BLOCK / 2);
		return;
	}
	if (n == QV_GROUP_BLOCKS)
		memcpy(out, &b, QV_GROUP_BLOCKS * MXCORE_BLOCK);
	else
		memcpy(out, &b, MXCORE_BLOCK);
}

/*
 * bf16 rows.  A 32-bit lane holds two bf16 elements, and every step that
 * does not need fp32 arithmetic takes both at once: their magnitudes
 * (one AND), the amax (16-bit maxima, qv_transpose_max(m, true)), their
 * signs and the packing of their codes.  Widening is a shift for the
 * even element and a mask for the odd one, so no lane crosses a shuffle
 * on the way in; each half is then encoded as an fp32 row is.  The two
 * codes of a lane come out as the 16-bit halves of one lane (8- and
 * 6-bit codes) or as one byte (e2m1), in element order.
 */

/* Raw vectors of bf16 per block, and the blocks one group encodes. */
#define QV_B16_PER_BLOCK (QV_PER_BLOCK / 2)
#define QV_B16_GROUP_BLOCKS (4 / QV_B16_PER_BLOCK)

/* The 2 * QV_LANES bf16 elements from element i0 on, as they are. */
static inline QV QV_U qv_load_pairs(const uint8_t *in, size_t i0)
{
	QV_U v;

	memcpy(&v, in + 2 * i0, sizeof(v));
	return v;
}

/*
 * Codes with sign of the two elements of each lane of raw, scaled by the
 * reciprocal r: one 16-bit half each, or one e2m1 byte (even element in
 * the low nibble, as pack_uint4()).
 */
static inline QV QV_U qv_encode_pairs(const struct mxcore_format *f,
				      const struct qv_enc *k, QV_U raw,
				      QV_U r)
{
	unsigned int sign_pos = f->ebits + f->mbits;
	uint32_t sign2 = (1u << sign_pos) | (1u << (16 + sign_pos));
	QV_U ax = raw & 0x7fff7fffu, ce, co, w;

	ce = qv_encode_mag(f, k, qv_fmul(ax << 16, r));
	co = qv_encode_mag(f, k, qv_fmul(ax & 0xffff0000u, r));
	w = ce | (co << 16) | ((raw >> (15 - sign_pos)) & sign2);
	if (f->code_bits == 4)
		w = (w | (w >> 12)) & 0xff;
	return w;
}

/*
 * Four vectors of code pairs (16-bit halves below 256) to 8 * QV_LANES
 * bytes in element order: a saturating pack (exact on such halves)
 * interleaves two vectors by 128-bit lane, one qword permute puts them
 * back in order.
 */
#if QV_LANES == 16
static inline QV void qv_narrow_pairs(const QV_U w[4], uint8_t *out)
{
	const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
	__m512i b[2];
	unsigned int i;

	for (i = 0; i < 2; i++)
		b[i] = _mm512_permutexvar_epi64(order, _mm512_packus_epi16(
				(__m512i)w[2 * i], (__m512i)w[2 * i + 1]));
	memcpy(out, b, sizeof(b));
}
#else
static inline QV void qv_narrow_pairs(const QV_U w[4], uint8_t *out)
{
	__m256i b[2];
	unsigned int i;

	for (i = 0; i < 2; i++)
		b[i] = _mm256_permute4x64_epi64(_mm256_packus_epi16(
				(__m256i)w[2 * i], (__m256i)w[2 * i + 1]),
				0xd8);
	memcpy(out, b, sizeof(b));
}
#endif

/* qv_encode_group() for bf16 rows: n <= QV_B16_GROUP_BLOCKS blocks. */
static inline QV void qv_encode_group_bf16(enum mxcore_elem elem,
					   const struct qv_enc *k,
					   const uint8_t *in, size_t at,
					   const uint32_t *rcp,
					   const uint8_t *scale, bool any_nan,
					   unsigned int n, uint8_t *out)
{
	const struct mxcore_format *f = &qv_formats[elem];
	/* the NaN code in each 16-bit half; e2m1's (4) in each nibble */
	uint32_t nan2 = qv_nan_code(f) *
			(elem == MXCORE_E2M1 ? 0x11u : 0x10001u);
	size_t blk_bytes = elem == MXCORE_E2M1 ? MXCORE_BLOCK / 2 : MXCORE_BLOCK;
	uint8_t tmp[4 * 2 * QV_LANES];
	QV_U w[4] = { { 0 } };
	unsigned int j, v;

	#pragma GCC unroll 4
	for (j = 0; j < QV_B16_GROUP_BLOCKS; j++) {
		QV_U r;

		if (j == n)
			break;
		if (any_nan && scale[j] == MXCORE_SCALE_NAN) {
			#pragma GCC unroll 4
			for (v = 0; v < QV_B16_PER_BLOCK; v++)
				w[j * QV_B16_PER_BLOCK + v] = qv_splat(nan2);
			continue;
		}
		r = qv_splat(rcp[j]);
		#pragma GCC unroll 4
		for (v = 0; v < QV_B16_PER_BLOCK; v++)
			w[j * QV_B16_PER_BLOCK + v] = qv_encode_pairs(f, k,
				qv_load_pairs(in, at + (j * QV_B16_PER_BLOCK + v) *
						  2 * QV_LANES), r);
	}
	if (elem == MXCORE_E2M1) {
		QV_BYTES4 b = qv_narrow4(w);

		if (n == QV_B16_GROUP_BLOCKS)
			memcpy(out, &b, sizeof(b));
		else
			memcpy(out, &b, n * blk_bytes);
		return;
	}
	if (n == QV_B16_GROUP_BLOCKS) {
		qv_narrow_pairs(w, out);
		return;
	}
	qv_narrow_pairs(w, tmp);
	memcpy(out, tmp, n * blk_bytes);
}

/*
 * The input QV_READ_AHEAD elements past element at into L1, as many
 * bytes as one group encodes: the amax pass reads a chunk of QV_LANES
 * blocks at once and the encode pass then computes from L1, so without
 * this the chunk's reads from L3 or memory and the encoding take turns
 * instead of overlapping.  Prefetches past the row (or the buffer) are
 * harmless: the next row usually follows, and a prefetch never faults.
 */
#define QV_READ_AHEAD (2 * QV_LANES * MXCORE_BLOCK)

static inline QV void qv_read_ahead(const uint8_t *in, bool bf16, size_t at)
{
	size_t es = bf16 ? 2 : 4, bytes;
	const uint8_t *p = in + (at + QV_READ_AHEAD) * es;
	size_t off;

	bytes = (bf16 ? QV_B16_GROUP_BLOCKS : QV_GROUP_BLOCKS) *
		MXCORE_BLOCK * es;
	for (off = 0; off < bytes; off += 64)
		_mm_prefetch((const char *)p + off, _MM_HINT_T0);
}

/* The largest magnitude of block b (sign bit clear), in every lane's half. */
static inline QV QV_U qv_block_absmax(const uint8_t *in, bool bf16, uint32_t b)
{
	size_t at = (size_t)b * MXCORE_BLOCK;
	QV_U m;
	uint32_t v;

	if (bf16) {
		m = qv_load_pairs(in, at) & 0x7fff7fffu;
		#pragma GCC unroll 16
		for (v = 1; v < QV_B16_PER_BLOCK; v++)
			m = qv_max16(m, qv_load_pairs(in, at + v * 2 * QV_LANES) &
					0x7fff7fffu);
		return m;
	}
	m = qv_load(in, at) & 0x7fffffffu;
	#pragma GCC unroll 16
	for (v = 1; v < QV_PER_BLOCK; v++)
		m = qv_max(m, qv_load(in, at + v * QV_LANES) & 0x7fffffffu);
	return m;
}

/*
 * Each lane of the result: the largest magnitude (sign bit clear, as
 * fp32 bits) of one of blocks [b0, b0 + nb), the others' zero.  A whole
 * chunk is unrolled so that its vectors stay in registers.
 */
static inline QV QV_U qv_block_amax(const uint8_t *in, bool bf16,
				    uint32_t b0, uint32_t nb)
{
	QV_U m[QV_LANES], r;
	uint32_t i;

	if (nb == QV_LANES) {
		#pragma GCC unroll 16
		for (i = 0; i < QV_LANES; i++)
			m[i] = qv_block_absmax(in, bf16, b0 + i);
	} else {
		for (i = 0; i < QV_LANES; i++)
			m[i] = i < nb ? qv_block_absmax(in, bf16, b0 + i) :
					qv_splat(0);
	}
	r = qv_transpose_max(m, bf16);
	/* bf16: the larger half, widened to fp32 bits */
	return bf16 ? qv_max(r << 16, r & 0xffff0000u) : r;
}

/* The low bytes of the lanes of x (each below 256), to out. */
static inline QV void qv_store_bytes(QV_U x, uint8_t *out)
{
#if QV_LANES == 16
	__m128i b = _mm512_cvtepi32_epi8((__m512i)x);
#else
	__m128i w = _mm_packus_epi32(_mm256_castsi256_si128((__m256i)x),
				     _mm256_extracti128_si256((__m256i)x, 1));
	__m128i b = _mm_packus_epi16(w, w);
#endif

	memcpy(out, &b, QV_LANES);
}

/* Whether a lane of x equals y. */
static inline QV bool qv_any_eq(QV_U x, uint32_t y)
{
#if QV_LANES == 16
	return qv_eq(x, qv_splat(y)) != 0;
#else
	return _mm256_movemask_epi8((__m256i)qv_eq(x, qv_splat(y))) != 0;
#endif
}

static inline QV void qv_quantize_elem(enum mxcore_elem elem, enum mxcore_mode mode,
			 const uint8_t *in, bool bf16, uint32_t cols,
			 uint8_t *codes, uint8_t *scales)
{
	const struct mxcore_format *f = &qv_formats[elem];
	size_t blk_bytes = elem == MXCORE_E2M1 ? MXCORE_BLOCK / 2 : MXCORE_BLOCK;
	uint32_t group = bf16 ? QV_B16_GROUP_BLOCKS : QV_GROUP_BLOCKS;
	uint32_t blocks = cols / MXCORE_BLOCK, b0, nb, i, n;
	struct qv_enc k;

	qv_enc_init(f, &k);
	for (b0 = 0; b0 < blocks; b0 += nb) {
		QV_U scale, rcp;
		uint32_t rcps[QV_LANES] __attribute__((aligned(64)));
		uint8_t s8[QV_LANES];
		bool any_nan;

		nb = blocks - b0 < QV_LANES ? blocks - b0 : QV_LANES;
		/* lanes past nb: amax 0, never a NaN scale */
		scale = qv_scale(elem, mode, qv_block_amax(in, bf16, b0, nb));
		qv_store_bytes(scale, s8);
		memcpy(scales + b0, s8, nb);
		rcp = qv_reciprocal(scale);
		memcpy(rcps, &rcp, sizeof(rcp));
		any_nan = qv_any_eq(scale, MXCORE_SCALE_NAN);
		for (i = 0; i < nb; i += group) {
			size_t at = (size_t)(b0 + i) * MXCORE_BLOCK;

			n = nb - i < group ? nb - i : group;
			qv_read_ahead(in, bf16, at);
			if (bf16)
				qv_encode_group_bf16(elem, &k, in, at, rcps + i,
						     s8 + i, any_nan, n,
						     codes + (b0 + i) * blk_bytes);
			else
				qv_encode_group(elem, &k, in, at, rcps + i,
						s8 + i, any_nan, n,
						codes + (b0 + i) * blk_bytes);
		}
	}
}

/* Each element type's body twice: for fp32 rows and for bf16 rows. */
static inline QV void qv_quantize_either(enum mxcore_elem elem,
					 enum mxcore_mode mode,
					 const void *src, bool bf16,
					 uint32_t cols, uint8_t *codes,
					 uint8_t *scales)
{
	if (bf16)
		qv_quantize_elem(elem, mode, src, true, cols, codes, scales);
	else
		qv_quantize_elem(elem, mode, src, false, cols, codes, scales);
}

static QV_TARGET void qv_quantize_row(enum mxcore_elem elem,
				      enum mxcore_mode mode, const void *src,
				      bool bf16, uint32_t cols, uint8_t *codes,
				      uint8_t *scales)
{
	switch (elem) {
	case MXCORE_E4M3:
		qv_quantize_either(MXCORE_E4M3, mode, src, bf16, cols, codes,
				   scales);
		break;
	case MXCORE_E5M2:
		qv_quantize_either(MXCORE_E5M2, mode, src, bf16, cols, codes,
				   scales);
		break;
	case MXCORE_E2M3:
		qv_quantize_either(MXCORE_E2M3, mode, src, bf16, cols, codes,
				   scales);
		break;
	case MXCORE_E3M2:
		qv_quantize_either(MXCORE_E3M2, mode, src, bf16, cols, codes,
				   scales);
		break;
	case MXCORE_E2M1:
		qv_quantize_either(MXCORE_E2M1, mode, src, bf16, cols, codes,
				   scales);
		break;
	}
}

/* fp32 bits of codes' values times 2^(scale - 127), as the core. */
static inline QV QV_U qv_decode(enum mxcore_elem elem, QV_U c, uint8_t scale)
{
	const struct mxcore_format *f = &qv_formats[elem];
	unsigned int mag_bits = f->ebits + f->mbits;
	QV_U sign = (c >> mag_bits) & 1, mag = c & ((1u << mag_bits) - 1);
	uint32_t sf = scale ? (uint32_t)scale << 23 : 0x00400000u;
	QV_U v;

	if (scale == MXCORE_SCALE_NAN)
		return qv_splat(0x7fc00000u);
	/* exact: the bits shifted into fp32's fields, times 2^(127 - bias) */
	v = qv_fmul(mag << (23 - f->mbits),
		    qv_splat((uint32_t)(254 - f->bias) << 23));
	v = qv_fmul(v, qv_splat(sf)) | sign << 31;
	if (elem == MXCORE_E4M3)
		return qv_sel(qv_eq(mag, qv_splat(0x7f)), qv_splat(0x7fc00000u),
			      v);
	if (elem == MXCORE_E5M2) {
		v = qv_sel(qv_eq(mag, qv_splat(0x7c)),
			   qv_splat(0x7f800000u) | sign << 31, v);
		return qv_sel(qv_gt(mag, qv_splat(0x7c)),
			      qv_splat(0x7fc00000u), v);
	}
	return v;
}

static inline QV void qv_store_values(QV_U v, bool bf16, uint8_t *out)
{
	QV_U16 h;

	if (!bf16) {
		memcpy(out, &v, sizeof(v));
		return;
	}
	v = qv_sel(qv_isnan(v), qv_splat(0x7fc00000u),
		   v + 0x7fff + ((v >> 16) & 1));
	h = __builtin_convertvector(v >> 16, QV_U16);
	memcpy(out, &h, sizeof(h));
}

/* The 32 codes of a block, QV_LANES per vector. */
static inline QV void qv_load_codes(enum mxcore_elem elem, const uint8_t *p,
		      QV_U c[QV_PER_BLOCK])
{
	unsigned int v;
	QV_U8 raw;

	if (elem != MXCORE_E2M1) {
		#pragma GCC unroll 16
		for (v = 0; v < QV_PER_BLOCK; v++) {
			memcpy(&raw, p + v * QV_LANES, QV_LANES);
			c[v] = __builtin_convertvector(raw, QV_U);
		}
		return;
	}
	#pragma GCC unroll 16
	for (v = 0; v < QV_PER_BLOCK; v += 2) {
		QV_U l, h;

		memcpy(&raw, p + v / 2 * QV_LANES, QV_LANES);
		l = __builtin_convertvector(raw, QV_U) & 0xf;
		h = __builtin_convertvector(raw, QV_U) >> 4;
		c[v] = __builtin_shuffle(l, h, (QV_U)QV_ZIP_LO);
		c[v + 1] = __builtin_shuffle(l, h, (QV_U)QV_ZIP_HI);
	}
}

static inline QV void qv_dequantize_elem(enum mxcore_elem elem, const uint8_t *codes,
			   const uint8_t *scales, uint32_t cols, bool bf16,
			   uint8_t *out)
{
	size_t blk_bytes = elem == MXCORE_E2M1 ? MXCORE_BLOCK / 2 : MXCORE_BLOCK;
	size_t es = bf16 ? 2 : 4;
	uint32_t b, v;

	for (b = 0; b < cols / MXCORE_BLOCK; b++) {
		QV_U c[QV_PER_BLOCK];

		qv_load_codes(elem, codes + b * blk_bytes, c);
		#pragma GCC unroll 16
		for (v = 0; v < QV_PER_BLOCK; v++)
			qv_store_values(qv_decode(elem, c[v], scales[b]), bf16,
					out + ((size_t)b * MXCORE_BLOCK +
					       v * QV_LANES) * es);
	}
}

static QV_TARGET void qv_dequantize_row(enum mxcore_elem elem,
					const uint8_t *codes,
					const uint8_t *scales, uint32_t cols,
					bool bf16, void *dst)
{
	switch (elem) {
	case MXCORE_E4M3:
		qv_dequantize_elem(MXCORE_E4M3, codes, scales, cols, bf16, dst);
		break;
	case MXCORE_E5M2:
		qv_dequantize_elem(MXCORE_E5M2, codes, scales, cols, bf16, dst);
		break;
	case MXCORE_E2M3:
		qv_dequantize_elem(MXCORE_E2M3, codes, scales, cols, bf16, dst);
		break;
	case MXCORE_E3M2:
		qv_dequantize_elem(MXCORE_E3M2, codes, scales, cols, bf16, dst);
		break;
	case MXCORE_E2M1:
		qv_dequantize_elem(MXCORE_E2M1, codes, scales, cols, bf16, dst);
		break;
	}
}

#endif /* MXA_QUANT_BODY_H */
