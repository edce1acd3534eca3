// SPDX-License-Identifier: MIT
/*
 * MX quantization bit-exact with torchao's to_mx() and to_dtype()
 * (torchao/prototype/mx_formats/mx_tensor.py as run under PyTorch 2.11):
 * every floating-point step torchao takes is reproduced on bit patterns,
 * including its rounding, clamping and NaN behaviour.
 */
#include "mxcore.h"

#define F32_INF 0x7f800000u
#define F32_SIGN 0x80000000u

/*
 * fp32(1 / max) as torchao computes it: Python double, then fp32.  Indexed
 * by enum mxcore_elem; positional, so that C++ compiles it too.
 */
static const MXCORE_TABLE uint32_t rcp_max_f32[] = {
	0,		/* 0 is no element type */
	0x3b124925,	/* MXCORE_E4M3 */
	0x37924925,	/* MXCORE_E5M2 */
	0x3e088889,	/* MXCORE_E2M3 */
	0x3d124925,	/* MXCORE_E3M2 */
	0x3e2aaaab,	/* MXCORE_E2M1 */
};

static MXCORE_FN bool f32_finite(uint32_t x)
{
	return (x & F32_INF) != F32_INF;
}

/* _f32_to_e8m0_rceil(): round a positive fp32 up to a power of two. */
static MXCORE_FN uint8_t e8m0_round_up(uint32_t v)
{
	uint32_t be = (v >> 23) & 0xff;
	uint32_t m = v & 0x7fffff;
	bool up = be ? m != 0 : m > 0x400000;	/* E8M0 byte 0 is 2^-127 */

	if (!f32_finite(v))
		return MXCORE_SCALE_NAN;
	return (uint8_t)(be + up);
}

MXCORE_FN uint8_t mxcore_scale(enum mxcore_elem elem, enum mxcore_mode mode,
			       uint32_t amax)
{
	const struct mxcore_format *f = mxcore_format(elem);
	int e;

	amax &= ~F32_SIGN;
	if (mode == MXCORE_RCEIL)
		return e8m0_round_up(mxcore_f32_mul(amax, rcp_max_f32[elem]));
	/*
	 * EVEN rounds amax's mantissa to the element's width first; a carry
	 * out of fp32's largest binade makes it Inf, hence a NaN scale.
	 */
	if (mode == MXCORE_EVEN && !mxcore_f32_isnan(amax))
		amax = (amax + (1u << (23 - f->mbits - 1))) & 0xff800000u;
	if (!f32_finite(amax))
		return MXCORE_SCALE_NAN;
	e = (int)((amax >> 23) & 0xff) - 127;
	if (mode == MXCORE_CEIL && (amax & 0x7fffff))
		e++;
	e -= f->emax;
	if (e < -127)
		e = -127;
	if (e > 128)
		e = 128;
	return (uint8_t)(e + 127);
}

/* _e8m0_scale_to_reciprocal_fp32(): fp32 bits of 2^(127 - scale). */
static MXCORE_FN uint32_t scale_reciprocal(uint8_t scale)
{
	uint8_t r = (uint8_t)(254 - scale);

	if (r == 0)
		return 0x00400000;	/* 2^-127, an fp32 subnormal */
	if (r == MXCORE_SCALE_NAN)
		return 0x7f800001;
	return (uint32_t)r << 23;
}

/*
 * Code of a non-negative fp32 below the element's smallest normal: |y| /
 * 2^k_exp rounded to an integer, ties to even.  Both PyTorch's and torchao's
 * converters get this by adding a magic power of two in fp32.
 */
static MXCORE_FN uint32_t subnormal_code(const struct mxcore_format *f, uint32_t ay)
{
	uint32_t be = ay >> 23;
	uint64_t sig = be ? (ay & 0x7fffff) | 0x800000 : ay & 0x7fffff;
	int exp = be ? (int)be - 150 : -149;
	int sh = f->k_exp - exp;	/* > 0: ay is below 2^k_exp * 2^mbits */
	uint64_t q;
	bool half, rest;

	if (sh > 64)
		return 0;
	q = sh == 64 ? 0 : sig >> sh;
	half = (sig >> (sh - 1)) & 1;
	rest = sh > 1 && (sig & ((1ull << (sh - 1)) - 1));
	return (uint32_t)q + (half && (rest || (q & 1)));
}

/*
 * PyTorch's fp32 -> float8 casts (c10 fp8e4m3fn/fp8e5m2_from_fp32_value)
 * after torchao's clamp to +-max: round to nearest even, NaN keeps its sign.
 */
static MXCORE_FN uint8_t encode_fp8(const struct mxcore_format *f, uint32_t y)
{
	uint32_t sign = y & F32_SIGN, ay = y & ~F32_SIGN;
	unsigned int shift = 23 - f->mbits;
	uint32_t min_normal = (uint32_t)(127 + 1 - f->bias) << 23;
	uint32_t code;

	if (ay > F32_INF)
		return 0x7f | (uint8_t)(sign >> 24);
	if (ay > f->max_f32)	/* torch.clamp(data, -max, max) */
		ay = f->max_f32;
	if (ay < min_normal) {
		code = subnormal_code(f, ay);
	} else {
		code = (ay + ((uint32_t)(f->bias - 127) << 23) +
			((1u << (shift - 1)) - 1) + ((ay >> shift) & 1)) >>
		       shift;
	}
	return (uint8_t)(code | (sign >> 24));
}

/*
 * torchao's _f32_to_floatx_unpacked() for fp6/fp4: saturating round to
 * nearest even.  It has no NaN: a NaN falls into its "normal" branch and
 * yields whatever that integer arithmetic makes of the bits (wrapping int32,
 * truncated to uint8), which this reproduces.
 */
static MXCORE_FN uint8_t encode_floatx(const struct mxcore_format *f, uint32_t y)
{
	uint32_t sign = y & F32_SIGN, ay = y & ~F32_SIGN;
	unsigned int shift = 23 - f->mbits;
	uint32_t min_normal = (uint32_t)(127 + 1 - f->bias) << 23;
	uint8_t sign_lp = sign ? (uint8_t)(1u << (f->ebits + f->mbits)) : 0;
	uint32_t code;

	if (!mxcore_f32_isnan(ay) && ay >= f->max_f32) {
		code = f->max_code;
	} else if (!mxcore_f32_isnan(ay) && ay < min_normal) {
		code = subnormal_code(f, ay);
	} else {
		code = (ay + ((uint32_t)(f->bias - 127) << 23) +
			((1u << (shift - 1)) - 1) + ((ay >> shift) & 1)) >>
		       shift;
	}
	return (uint8_t)code | sign_lp;
}

MXCORE_FN uint8_t mxcore_quantize_block(enum mxcore_elem elem, enum mxcore_mode mode,
					const uint32_t x[MXCORE_BLOCK], uint8_t *out)
{
	const struct mxcore_format *f = mxcore_format(elem);
	uint8_t codes[MXCORE_BLOCK];
	uint32_t amax = 0, rcp;
	uint8_t scale;
	unsigned int i;

	/* torch.amax(abs(x)): NaN if any element is NaN. */
	for (i = 0; i < MXCORE_BLOCK; i++) {
		uint32_t a = x[i] & ~F32_SIGN;

		if (mxcore_f32_isnan(a)) {
			amax = 0x7fc00000;
			break;
		}
		if (a > amax)
			amax = a;
	}
	scale = mxcore_scale(elem, mode, amax);
	rcp = scale_reciprocal(scale);

	for (i = 0; i < MXCORE_BLOCK; i++) {
		uint32_t y = mxcore_f32_mul(x[i], rcp);

		codes[i] = f->code_bits == 8 ? encode_fp8(f, y)
					     : encode_floatx(f, y);
	}
	if (elem == MXCORE_E2M1) {
		/* pack_uint4(): (odd << 4 | even) in uint8 arithmetic */
		for (i = 0; i < MXCORE_BLOCK / 2; i++)
			out[i] = (uint8_t)(codes[2 * i + 1] << 4) |
				 codes[2 * i];
	} else {
		for (i = 0; i < MXCORE_BLOCK; i++)
			out[i] = codes[i];
	}
	return scale;
}

MXCORE_FN uint32_t mxcore_dequantize(enum mxcore_elem elem, uint8_t code, uint8_t scale,
				     enum mxcore_dtype dtype)
{
	unsigned int mbits = dtype == MXCORE_BF16 ? 7 : 23;
	uint32_t sign_bit = 1u << (8 + mbits);
	int64_t k;
	unsigned int special = mxcore_decode(elem, code, &k);

	if (scale == MXCORE_SCALE_NAN || (special & MXCORE_NAN))
		return dtype == MXCORE_BF16 ? 0x7fc0 : 0x7fc00000;
	if (special)
		return (0xffu << mbits) |
		       (special & MXCORE_NINF ? sign_bit : 0);
	if (!k)		/* keep the sign of -0 */
		return (code >> (mxcore_format(elem)->code_bits - 1)) & 1 ?
		       sign_bit : 0;
	return mxcore_round_float(k < 0, (uint64_t)(k < 0 ? -k : k),
				  mxcore_format(elem)->k_exp + scale - 127,
				  false, mbits);
}

MXCORE_FN uint32_t mxcore_e4m3_to_f32(uint8_t code)
{
	int64_t k;

	if (mxcore_decode(MXCORE_E4M3, code, &k) & MXCORE_NAN)
		return 0x7fc00000;
	if (!k)
		return code & 0x80 ? F32_SIGN : 0;
	return mxcore_round_float(k < 0, (uint64_t)(k < 0 ? -k : k),
				  mxcore_format(MXCORE_E4M3)->k_exp, false, 23);
}

/* fp32 bits of 6.0, 2^-6 (float8_e4m3fn's smallest normal) and 448. */
#define F32_SIX		0x40c00000u
#define F32_E4M3_TINY	0x3c800000u
#define F32_E4M3_MAX	0x43e00000u
#define F32_ONE		0x3f800000u

/* torch.clamp(x, lo, hi) of a non-negative or NaN x: NaN stays NaN. */
static MXCORE_FN uint32_t clamp_pos(uint32_t x, uint32_t lo, uint32_t hi)
{
	if (mxcore_f32_isnan(x))
		return x;
	return x < lo ? lo : x > hi ? hi : x;
}

MXCORE_FN uint8_t mxcore_nvfp4_quantize_block(const uint32_t x[MXCORE_NVFP4_BLOCK],
					      uint32_t tensor_scale, uint8_t *out)
{
	const struct mxcore_format *f4 = mxcore_format(MXCORE_E2M1);
	const struct mxcore_format *f8 = mxcore_format(MXCORE_E4M3);
	uint8_t codes[MXCORE_NVFP4_BLOCK], scale;
	uint32_t amax = 0, s, r;
	unsigned int i;

	/* torch.amax(abs(x)): NaN if any element is NaN. */
	for (i = 0; i < MXCORE_NVFP4_BLOCK; i++) {
		uint32_t a = x[i] & ~F32_SIGN;

		if (mxcore_f32_isnan(a)) {
			amax = 0x7fc00000;
			break;
		}
		if (a > amax)
			amax = a;
	}
	s = mxcore_f32_div(amax, F32_SIX);
	if (tensor_scale)
		s = mxcore_f32_div(s, tensor_scale);
	scale = encode_fp8(f8, clamp_pos(s, F32_E4M3_TINY, F32_E4M3_MAX));
	s = mxcore_e4m3_to_f32(scale);
	r = mxcore_f32_div(F32_ONE, s);
	if (tensor_scale)
		r = mxcore_f32_div(mxcore_f32_div(F32_ONE, tensor_scale), s);
	for (i = 0; i < MXCORE_NVFP4_BLOCK; i++)
		codes[i] = encode_floatx(f4, mxcore_f32_mul(x[i], r));
	for (i = 0; i < MXCORE_NVFP4_BLOCK / 2; i++)
		out[i] = (uint8_t)(codes[2 * i + 1] << 4) | codes[2 * i];
	return scale;
}

MXCORE_FN uint32_t mxcore_nvfp4_dequantize(uint8_t code, uint8_t scale,
					   uint32_t tensor_scale,
					   enum mxcore_dtype dtype)
{
	uint32_t total = mxcore_e4m3_to_f32(scale);
	uint32_t v = mxcore_dequantize(MXCORE_E2M1, code, 127, MXCORE_F32);

	if (tensor_scale)
		total = mxcore_f32_mul(tensor_scale, total);
	v = mxcore_f32_mul(v, total);
	if (dtype != MXCORE_BF16)
		return v;
	if (mxcore_f32_isnan(v))
		return 0x7fc0;
	/* fp32 -> bf16, round to nearest even */
	return (v + 0x7fff + ((v >> 16) & 1)) >> 16;
}
