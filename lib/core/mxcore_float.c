// SPDX-License-Identifier: MIT
/*
 * IEEE binary32 / bfloat16 rounding and multiplication on bit patterns.
 * Integer-only so that the kernel's software engine can use it.
 */
#include "mxcore.h"

#define F32_EMIN (-126)
#define F32_EMAX 127

static MXCORE_FN int msb64(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

MXCORE_FN uint32_t mxcore_round_float(bool neg, uint64_t mag, int exp, bool sticky,
				      unsigned int mbits)
{
	uint32_t sign = (uint32_t)neg << (8 + mbits);
	uint32_t inf = 0xffu << mbits;
	uint32_t enc;
	uint64_t q;
	bool half, rest;
	int e, lsb, shift;

	if (!mag)
		return sign;

	/* e: exponent of the leading bit; lsb: exponent of the result ulp. */
	e = msb64(mag) + exp;
	if (e > F32_EMAX)
		return sign | inf;
	lsb = e - (int)mbits;
	if (lsb < F32_EMIN - (int)mbits)
		lsb = F32_EMIN - (int)mbits;
	shift = lsb - exp;

	if (shift <= 0) {
		q = mag << -shift;
		half = false;
		rest = sticky;
	} else if (shift > 64) {
		q = 0;
		half = false;
		rest = true;
	} else {
		q = shift == 64 ? 0 : mag >> shift;
		half = (mag >> (shift - 1)) & 1;
		rest = sticky ||
		       (shift > 1 && (mag & ((1ull << (shift - 1)) - 1)));
	}

	/*
	 * A normal q carries the implicit bit at position mbits; adding it to
	 * (e - 1 + bias) << mbits yields the biased exponent, and a rounding
	 * carry out of the mantissa moves into the exponent (up to Inf).
	 */
	if (e >= F32_EMIN)
		enc = ((uint32_t)(e + 126) << mbits) + (uint32_t)q;
	else
		enc = (uint32_t)q;
	if (half && (rest || (enc & 1)))
		enc++;
	if (enc >= inf)
		enc = inf;
	return sign | enc;
}

/* Split a finite nonzero fp32 into significand and exponent of its lsb. */
static MXCORE_FN void f32_split(uint32_t x, uint64_t *sig, int *exp)
{
	uint32_t be = (x >> 23) & 0xff;
	uint32_t m = x & 0x7fffff;

	if (be) {
		*sig = m | 0x800000;
		*exp = (int)be - 127 - 23;
	} else {
		*sig = m;
		*exp = -149;
	}
}

MXCORE_FN uint32_t mxcore_f32_mul(uint32_t a, uint32_t b)
{
	uint32_t sign = (a ^ b) & 0x80000000u;
	uint32_t aa = a & 0x7fffffffu, ab = b & 0x7fffffffu;
	uint64_t sa, sb;
	int ea, eb;

	/* NVIDIA GPUs (where torchao's reference ran) return this NaN. */
	if (aa > 0x7f800000u || ab > 0x7f800000u)
		return 0x7fffffffu;
	if (aa == 0x7f800000u || ab == 0x7f800000u) {
		if (!aa || !ab)
			return 0x7fffffffu;
		return sign | 0x7f800000u;
	}
	if (!aa || !ab)
		return sign;
	f32_split(aa, &sa, &ea);
	f32_split(ab, &sb, &eb);
	return mxcore_round_float(sign != 0, sa * sb, ea + eb, false, 23);
}

MXCORE_FN uint32_t mxcore_f32_div(uint32_t a, uint32_t b)
{
	uint32_t sign = (a ^ b) & 0x80000000u;
	uint32_t aa = a & 0x7fffffffu, ab = b & 0x7fffffffu;
	uint64_t sa, sb, q;
	int ea, eb;

	if (aa > 0x7f800000u || ab > 0x7f800000u)
		return 0x7fffffffu;
	if (aa == 0x7f800000u)
		return ab == 0x7f800000u ? 0x7fffffffu : sign | 0x7f800000u;
	if (ab == 0x7f800000u)
		return sign;
	if (!ab)
		return aa ? sign | 0x7f800000u : 0x7fffffffu;
	if (!aa)
		return sign;
	f32_split(aa, &sa, &ea);
	f32_split(ab, &sb, &eb);
	/* Normalise both to 24 bits, then 40 more quotient bits and a sticky. */
	while (!(sa & 0x800000)) {
		sa <<= 1;
		ea--;
	}
	while (!(sb & 0x800000)) {
		sb <<= 1;
		eb--;
	}
	q = (sa << 40) / sb;
	return mxcore_round_float(sign != 0, q, ea - eb - 40,
				  (sa << 40) % sb != 0, 23);
}
