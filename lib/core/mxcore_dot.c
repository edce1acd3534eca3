// SPDX-License-Identifier: MIT
/*
 * Exact block-scaled dot products.  A block's 32 products are exact integers
 * times one power of two, so their sum is an exact 128-bit integer; blocks
 * land in a 704-bit two's complement fixed-point accumulator, which is
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

/* --- UE4M3 scales, tensor scales, mixed blocks, dense fp32 ------------- */

MXCORE_FN unsigned int mxcore_scale_decode(unsigned int scale_type, uint8_t s,
					   int64_t *sig, int *exp)
{
	uint32_t e, m;

	*sig = 0;
	*exp = 0;
	if (scale_type != MXCORE_SCALE_UE4M3) {
		if (s == MXCORE_SCALE_NAN)
			return MXCORE_NAN;
		*sig = 1;
		*exp = (int)s - 127;
		return 0;
	}
	e = (s >> 3) & 0xf;
	m = s & 7;
	if (e == 15 && m == 7)
		return MXCORE_NAN;
	/* The significand without trailing zeros: 4 bits, not e4m3's k. */
	*sig = e ? (int64_t)(m | 8) : (int64_t)m;
	*exp = e ? (int)e - 10 : -9;
	if (s & 0x80)
		*sig = -*sig;
	return 0;
}

MXCORE_FN unsigned int mxcore_f32_decode(uint32_t bits, int64_t *sig, int *exp)
{
	uint32_t be = (bits >> 23) & 0xff, m = bits & 0x7fffff;
	bool neg = bits >> 31;

	*sig = 0;
	*exp = 0;
	if (be == 0xff) {
		if (m)
			return MXCORE_NAN;
		return neg ? MXCORE_NINF : MXCORE_PINF;
	}
	*sig = be ? (int64_t)(m | 0x800000) : (int64_t)m;
	*exp = be ? (int)be - 150 : -149;
	if (neg)
		*sig = -*sig;
	return 0;
}

MXCORE_FN unsigned int mxcore_tensor_scale_decode(uint32_t bits, int64_t *sig,
						  int *exp)
{
	if (!bits) {
		*sig = 1;
		*exp = 0;
		return 0;
	}
	return mxcore_f32_decode(bits, sig, exp);
}

MXCORE_FN void mxcore_acc_dot_scaled(struct mxcore_acc *acc, const int64_t *ka,
				     const int64_t *kb, unsigned int n,
				     int64_t sig, int exp)
{
	__int128 sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += (__int128)ka[i] * kb[i];
	if (sig != 1)
		sum *= sig;
	mxcore_acc_add(acc, sum, exp);
}

/* The sign and zero-ness of a product's scale factors: -1, 0 or 1. */
static MXCORE_FN int factor_sign(int64_t sig)
{
	return sig < 0 ? -1 : sig > 0;
}

/*
 * The special products of a segment: NaN codes, Inf codes (Inf times a
 * zero value is NaN, else a signed Inf).  fsa/fsb: signs of each side's
 * scale factors (block scale times tensor scale), 0 when one is zero.
 */
static MXCORE_FN void seg_dot_special(struct mxcore_acc *acc, unsigned int n,
				      enum mxcore_elem ea, const uint8_t *a,
				      int fsa, enum mxcore_elem eb,
				      const uint8_t *b, int fsb)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		int64_t ka, kb;
		unsigned int fa = mxcore_decode(ea, mxcore_get_code(ea, a, i),
						&ka);
		unsigned int fb = mxcore_decode(eb, mxcore_get_code(eb, b, i),
						&kb);
		int sa, sb;

		if (!fa && !fb)
			continue;
		if ((fa | fb) & MXCORE_NAN) {
			acc->flags |= MXCORE_NAN;
			continue;
		}
		sa = (fa ? (fa == MXCORE_NINF ? -1 : 1) : factor_sign(ka)) *
		     fsa;
		sb = (fb ? (fb == MXCORE_NINF ? -1 : 1) : factor_sign(kb)) *
		     fsb;
		if (!sa || !sb) {
			acc->flags |= MXCORE_NAN;
			continue;
		}
		acc->flags |= sa != sb ? MXCORE_NINF : MXCORE_PINF;
	}
}

MXCORE_FN void mxcore_acc_seg_dot(struct mxcore_acc *acc, unsigned int n,
				  const struct mxcore_scaling *fa,
				  const uint8_t *a, uint8_t sa,
				  const struct mxcore_scaling *fb,
				  const uint8_t *b, uint8_t sb)
{
	enum mxcore_elem ea = (enum mxcore_elem)fa->elem;
	enum mxcore_elem eb = (enum mxcore_elem)fb->elem;
	int64_t ka[MXCORE_BLOCK], kb[MXCORE_BLOCK];
	int64_t siga, sigb, ta, tb;
	int xa, xb, xta, xtb;
	unsigned int i, special = 0;

	if (mxcore_scale_decode(fa->scale_type, sa, &siga, &xa) |
	    mxcore_scale_decode(fb->scale_type, sb, &sigb, &xb) |
	    mxcore_tensor_scale_decode(fa->tensor_scale, &ta, &xta) |
	    mxcore_tensor_scale_decode(fb->tensor_scale, &tb, &xtb)) {
		acc->flags |= MXCORE_NAN;
		return;
	}
	for (i = 0; i < n; i++) {
		special |= mxcore_decode(ea, mxcore_get_code(ea, a, i), &ka[i]);
		special |= mxcore_decode(eb, mxcore_get_code(eb, b, i), &kb[i]);
	}
	if (special)
		seg_dot_special(acc, n, ea, a, factor_sign(siga) * factor_sign(ta),
				eb, b, factor_sign(sigb) * factor_sign(tb));
	mxcore_acc_dot_scaled(acc, ka, kb, n, siga * sigb * ta * tb,
			      mxcore_format(ea)->k_exp + xa + xta +
			      mxcore_format(eb)->k_exp + xb + xtb);
}

/*
 * x * kb * sig * 2^exp for one fp32 x: non-finite x set flags (Inf times
 * a zero weight is NaN).  Finite products are at most 24 + 32 + 28 bits.
 */
static MXCORE_FN void dense_product(struct mxcore_acc *acc, uint32_t x,
				    int64_t kb, int64_t sig, int exp)
{
	int64_t sx;
	int ex;
	unsigned int f = mxcore_f32_decode(x, &sx, &ex);

	if (f) {
		bool neg = (f == MXCORE_NINF) ^ (kb < 0) ^ (sig < 0);

		if (f & MXCORE_NAN || !kb || !sig)
			acc->flags |= MXCORE_NAN;
		else
			acc->flags |= neg ? MXCORE_NINF : MXCORE_PINF;
		return;
	}
	mxcore_acc_add(acc, (__int128)sx * kb * sig, ex + exp);
}

MXCORE_FN void mxcore_acc_dense_dot_decoded(struct mxcore_acc *acc,
					    const uint32_t *x, const int64_t *kb,
					    unsigned int n, int64_t sig, int exp)
{
	__int128 sum = 0;
	unsigned int i;
	int base = 0, top = 0;
	bool any = false;

	/*
	 * Products whose fp32 exponents lie within 40 of each other sum
	 * exactly in 128 bits (24 + 32 + 5 + 40 bits); a segment that
	 * spreads wider, or holds Inf/NaN, adds product by product.
	 */
	for (i = 0; i < n; i++) {
		uint32_t be = (x[i] >> 23) & 0xff;
		int e = be ? (int)be : 1;

		if (be == 0xff || !(x[i] & 0x7fffffff) || !kb[i])
			continue;
		if (!any) {
			base = e;
			top = e;
			any = true;
		} else if (e < base) {
			base = e;
		} else if (e > top) {
			top = e;
		}
	}
	if (top - base > 40) {
		for (i = 0; i < n; i++)
			dense_product(acc, x[i], kb[i], sig, exp);
		return;
	}
	for (i = 0; i < n; i++) {
		int64_t sx;
		int ex;

		if (mxcore_f32_decode(x[i], &sx, &ex)) {
			dense_product(acc, x[i], kb[i], sig, exp);
			continue;
		}
		if (!sx || !kb[i])
			continue;
		/* ex - (base - 150) is the lsb's distance above the base. */
		sum += ((__int128)sx * kb[i]) << (ex - (base - 150));
	}
	/*
	 * |kb * sig| < 2^32 (e5m2's k with E8M0's 1, or e2m1's 12 times a
	 * UE4M3 and an fp32 significand), so |sum * sig| < 2^(24 + 32 + 40
	 * + 5) = 2^101.
	 */
	mxcore_acc_add(acc, sum * sig, base - 150 + exp);
}

MXCORE_FN void mxcore_acc_dense_dot(struct mxcore_acc *acc, const uint32_t *x,
				    unsigned int n,
				    const struct mxcore_scaling *fb,
				    const uint8_t *b, uint8_t sb)
{
	enum mxcore_elem eb = (enum mxcore_elem)fb->elem;
	int64_t kb[MXCORE_BLOCK], sig, t;
	uint32_t xs[MXCORE_BLOCK];
	int xb, xt;
	unsigned int i, fl;

	if (mxcore_scale_decode(fb->scale_type, sb, &sig, &xb) |
	    mxcore_tensor_scale_decode(fb->tensor_scale, &t, &xt)) {
		acc->flags |= MXCORE_NAN;
		return;
	}
	for (i = 0; i < n; i++) {
		bool neg;

		xs[i] = x[i];
		fl = mxcore_decode(eb, mxcore_get_code(eb, b, i), &kb[i]);
		if (!fl)
			continue;
		/* An Inf or NaN weight: its product here, the rest exactly. */
		neg = (fl == MXCORE_NINF) ^ (x[i] >> 31) ^ (sig * t < 0);
		if (fl & MXCORE_NAN || mxcore_f32_isnan(x[i]) ||
		    !(x[i] & 0x7fffffff) || !sig || !t)
			acc->flags |= MXCORE_NAN;
		else
			acc->flags |= neg ? MXCORE_NINF : MXCORE_PINF;
		xs[i] = 0;
	}
	mxcore_acc_dense_dot_decoded(acc, xs, kb, n, sig * t,
				     mxcore_format(eb)->k_exp + xb + xt);
}
