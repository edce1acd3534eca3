// SPDX-License-Identifier: MIT
/*
 * Exact block-scaled dot products.  A block's 32 products are exact integers
 * times one power of two, so their sum is an exact 128-bit integer; blocks
 * land in a 640-bit two's complement fixed-point accumulator, which is
 * rounded once at the end.  The result is independent of summation order.
 */
#include "mxcore.h"

MXCORE_FN void mxcore_acc_init(struct mxcore_acc *acc)
{
	unsigned int i;

	for (i = 0; i < MXCORE_ACC_LIMBS; i++)
		acc->limb[i] = 0;
	acc->flags = 0;
}

MXCORE_FN void mxcore_acc_add(struct mxcore_acc *acc, __int128 v, int exp)
{
	unsigned int off = (unsigned int)(exp + MXCORE_ACC_LSB);
	unsigned int li = off / 64, sh = off % 64, i;
	uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
	uint64_t ext = v < 0 ? ~0ull : 0;
	uint64_t w[3], carry = 0;

	if (!v)
		return;
	w[0] = lo << sh;
	w[1] = sh ? (hi << sh) | (lo >> (64 - sh)) : hi;
	w[2] = sh ? (ext << sh) | (hi >> (64 - sh)) : ext;

	for (i = li; i < MXCORE_ACC_LIMBS; i++) {
		uint64_t add = i - li < 3 ? w[i - li] : ext;
		uint64_t s = acc->limb[i] + add;
		uint64_t c = s < add;

		s += carry;
		c |= s < carry;
		acc->limb[i] = s;
		carry = c;
		/*
		 * Past the three value words only the sign extension is
		 * left: adding 0 without carry, or ~0 with carry, changes
		 * nothing further up.
		 */
		if (i - li >= 2 && carry == (ext & 1))
			break;
	}
}

MXCORE_FN void mxcore_acc_add_float(struct mxcore_acc *acc, uint32_t bits,
				    enum mxcore_dtype dtype)
{
	uint32_t x = dtype == MXCORE_BF16 ? bits << 16 : bits;
	uint32_t be = (x >> 23) & 0xff, m = x & 0x7fffff;
	bool neg = x >> 31;
	__int128 sig;

	if (be == 0xff) {
		if (m)
			acc->flags |= MXCORE_NAN;
		else
			acc->flags |= neg ? MXCORE_NINF : MXCORE_PINF;
		return;
	}
	sig = be ? (m | 0x800000) : m;
	mxcore_acc_add(acc, neg ? -sig : sig, be ? (int)be - 150 : -149);
}

MXCORE_FN uint32_t mxcore_acc_round(const struct mxcore_acc *acc,
				    enum mxcore_dtype dtype)
{
	unsigned int mbits = dtype == MXCORE_BF16 ? 7 : 23;
	uint64_t mag[MXCORE_ACC_LIMBS];
	uint64_t top;
	bool neg, sticky = false;
	int i, li, p, lo;

	if (acc->flags & MXCORE_NAN ||
	    (acc->flags & MXCORE_PINF && acc->flags & MXCORE_NINF))
		return dtype == MXCORE_BF16 ? 0x7fc0 : 0x7fc00000;
	if (acc->flags)
		return (0xffu << mbits) |
		       (acc->flags & MXCORE_NINF ? 1u << (8 + mbits) : 0);

	neg = acc->limb[MXCORE_ACC_LIMBS - 1] >> 63;
	if (neg) {
		uint64_t carry = 1;

		for (i = 0; i < MXCORE_ACC_LIMBS; i++) {
			mag[i] = ~acc->limb[i] + carry;
			carry = carry && !mag[i];
		}
	} else {
		for (i = 0; i < MXCORE_ACC_LIMBS; i++)
			mag[i] = acc->limb[i];
	}

	for (li = MXCORE_ACC_LIMBS - 1; li >= 0 && !mag[li]; li--)
		;
	if (li < 0)
		return 0;	/* an exact zero is +0 */
	p = li * 64 + 63 - __builtin_clzll(mag[li]);

	/* The 64-bit window whose top bit is p, and what lies below it. */
	lo = p - 63 > 0 ? p - 63 : 0;
	{
		int wl = lo / 64, ws = lo % 64;

		top = mag[wl] >> ws;
		if (ws && wl + 1 < MXCORE_ACC_LIMBS)
			top |= mag[wl + 1] << (64 - ws);
		if (ws && (mag[wl] & ((1ull << ws) - 1)))
			sticky = true;
		for (i = 0; i < wl && !sticky; i++)
			sticky = mag[i] != 0;
	}
	return mxcore_round_float(neg, top, lo - MXCORE_ACC_LSB, sticky, mbits);
}

/* Products with an Inf or NaN code, or under a NaN scale. */
static MXCORE_FN void block_dot_special(struct mxcore_acc *acc,
					enum mxcore_elem ea, const uint8_t *a,
					enum mxcore_elem eb, const uint8_t *b)
{
	unsigned int i;

	for (i = 0; i < MXCORE_BLOCK; i++) {
		int64_t ka, kb;
		unsigned int fa = mxcore_decode(ea, mxcore_get_code(ea, a, i),
						&ka);
		unsigned int fb = mxcore_decode(eb, mxcore_get_code(eb, b, i),
						&kb);
		bool na, nb;

		if (!fa && !fb)
			continue;
		if ((fa | fb) & MXCORE_NAN) {
			acc->flags |= MXCORE_NAN;
			continue;
		}
		/* Inf * 0 is NaN; Inf * finite or Inf keeps the sign rule. */
		if ((!fa && !ka) || (!fb && !kb)) {
			acc->flags |= MXCORE_NAN;
			continue;
		}
		na = fa ? fa == MXCORE_NINF : ka < 0;
		nb = fb ? fb == MXCORE_NINF : kb < 0;
		acc->flags |= na != nb ? MXCORE_NINF : MXCORE_PINF;
	}
}

MXCORE_FN unsigned int mxcore_decode_block(enum mxcore_elem elem, const uint8_t *codes,
					   int64_t k[MXCORE_BLOCK])
{
	unsigned int i, special = 0;

	for (i = 0; i < MXCORE_BLOCK; i++)
		special |= mxcore_decode(elem, mxcore_get_code(elem, codes, i),
					 &k[i]);
	return special;
}

MXCORE_FN void mxcore_acc_dot_decoded(struct mxcore_acc *acc, const int64_t *ka,
				      const int64_t *kb, int exp)
{
	__int128 sum = 0;
	unsigned int i;

	for (i = 0; i < MXCORE_BLOCK; i++)
		sum += (__int128)ka[i] * kb[i];
	mxcore_acc_add(acc, sum, exp);
}

MXCORE_FN void mxcore_acc_block_dot(struct mxcore_acc *acc,
				    enum mxcore_elem ea, const uint8_t *a, uint8_t sa,
				    enum mxcore_elem eb, const uint8_t *b, uint8_t sb)
{
	int64_t ka[MXCORE_BLOCK], kb[MXCORE_BLOCK];
	unsigned int special;

	if (sa == MXCORE_SCALE_NAN || sb == MXCORE_SCALE_NAN) {
		acc->flags |= MXCORE_NAN;
		return;
	}
	/* Special codes decode as 0, so the finite products still add up. */
	special = mxcore_decode_block(ea, a, ka);
	special |= mxcore_decode_block(eb, b, kb);
	if (special)
		block_dot_special(acc, ea, a, eb, b);
	mxcore_acc_dot_decoded(acc, ka, kb,
			       mxcore_format(ea)->k_exp +
			       mxcore_format(eb)->k_exp +
			       (int)sa - 127 + (int)sb - 127);
}
