// SPDX-License-Identifier: MIT
/*
 * MX element formats (OCP MX v1.0): e4m3 and e5m2 (MXFP8), e2m3 and e3m2
 * (MXFP6), e2m1 (MXFP4).
 */
#include "mxcore.h"

/* Indexed by enum mxcore_elem; positional, so that C++ compiles it too. */
static const MXCORE_TABLE struct mxcore_format formats[] = {
	{ 0 },		/* 0 is no element type */
	/* MXCORE_E4M3 */
	{ .ebits = 4, .mbits = 3, .bias = 7, .emax = 8,
	  .code_bits = 8, .max_code = 0x7e, .k_exp = -9,
	  .max_f32 = 0x43e00000 },	/* 448 */
	/* MXCORE_E5M2 */
	{ .ebits = 5, .mbits = 2, .bias = 15, .emax = 15,
	  .code_bits = 8, .max_code = 0x7b, .k_exp = -16,
	  .max_f32 = 0x47600000 },	/* 57344 */
	/* MXCORE_E2M3 */
	{ .ebits = 2, .mbits = 3, .bias = 1, .emax = 2,
	  .code_bits = 6, .max_code = 0x1f, .k_exp = -3,
	  .max_f32 = 0x40f00000 },	/* 7.5 */
	/* MXCORE_E3M2 */
	{ .ebits = 3, .mbits = 2, .bias = 3, .emax = 4,
	  .code_bits = 6, .max_code = 0x1f, .k_exp = -4,
	  .max_f32 = 0x41e00000 },	/* 28 */
	/* MXCORE_E2M1 */
	{ .ebits = 2, .mbits = 1, .bias = 1, .emax = 2,
	  .code_bits = 4, .max_code = 0x7, .k_exp = -1,
	  .max_f32 = 0x40c00000 },	/* 6 */
};

MXCORE_FN bool mxcore_elem_valid(unsigned int elem)
{
	return elem >= MXCORE_ELEM_FIRST && elem <= MXCORE_ELEM_LAST;
}

MXCORE_FN const struct mxcore_format *mxcore_format(enum mxcore_elem elem)
{
	return &formats[elem];
}

MXCORE_FN unsigned int mxcore_decode(enum mxcore_elem elem, uint8_t code, int64_t *k)
{
	const struct mxcore_format *f = &formats[elem];
	unsigned int sbit = f->ebits + f->mbits;
	bool neg = (code >> sbit) & 1;
	uint32_t e = (code >> f->mbits) & ((1u << f->ebits) - 1);
	uint32_t m = code & ((1u << f->mbits) - 1);
	int64_t v;

	if (elem == MXCORE_E4M3 && e == 15 && m == 7) {
		*k = 0;
		return MXCORE_NAN;
	}
	if (elem == MXCORE_E5M2 && e == 31) {
		*k = 0;
		if (m)
			return MXCORE_NAN;
		return neg ? MXCORE_NINF : MXCORE_PINF;
	}
	/* value = (2^mbits + m) * 2^(e - bias - mbits) = k * 2^k_exp */
	v = e ? (int64_t)((m | (1u << f->mbits)) << (e - 1)) : (int64_t)m;
	*k = neg ? -v : v;
	return 0;
}

