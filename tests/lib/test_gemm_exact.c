// SPDX-License-Identifier: MIT
/*
 * EMULATED GEMM is exact: each result is the exact sum of products (plus C)
 * rounded once, to nearest even, checked against rational arithmetic done
 * here with a small bignum, independently of lib/core.  Codes are decoded
 * from the specification (testlib), each product is an integer times a
 * power of two, and the sum is held exactly as a two's complement fixed
 * point number of 32-bit limbs.  The library's answer r is then verified
 * rather than recomputed: |exact - r| must be at most half the spacing of
 * floats next to r on the side of exact, a tie must leave r's mantissa
 * even, and r = +-Inf exactly when |exact| reaches the overflow threshold.
 *
 * Also: the result does not depend on the order of the K blocks.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu): every device's EMULATED
 * kernel must meet this.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/*
 * Fixed point: bit 0 weighs 2^-BIG_LSB.  Products reach down to
 * 2^-286 (e5m2 subnormals under scale 0 on both sides) and up to about
 * 2^290; 768 bits leave room for any carry.
 */
#define BIG_LIMBS 24
#define BIG_LSB 320

struct big {
	uint32_t l[BIG_LIMBS];
};

static void big_zero(struct big *b)
{
	memset(b, 0, sizeof(*b));
}

static bool big_neg(const struct big *b)
{
	return b->l[BIG_LIMBS - 1] >> 31;
}

static bool big_is_zero(const struct big *b)
{
	int i;

	for (i = 0; i < BIG_LIMBS; i++)
		if (b->l[i])
			return false;
	return true;
}

static void big_negate(struct big *b)
{
	uint64_t carry = 1;
	int i;

	for (i = 0; i < BIG_LIMBS; i++) {
		carry += (uint32_t)~b->l[i];
		b->l[i] = (uint32_t)carry;
		carry >>= 32;
	}
}

/* b += (neg ? -1 : 1) * mag * 2^e */
static void big_add_u64(struct big *b, bool neg, uint64_t mag, int e)
{
	struct big t;
	int p = e + BIG_LSB, li, sh, i;
	uint64_t carry = 0;

	if (!mag)
		return;
	if (p < 0 || p / 32 + 3 > BIG_LIMBS) {
		fprintf(stderr, "test bug: 2^%d outside the bignum\n", e);
		abort();
	}
	big_zero(&t);
	li = p / 32;
	sh = p % 32;
	/* mag << sh spans at most three limbs (64 + 31 bits). */
	t.l[li] = (uint32_t)(mag << sh);
	if (sh == 0)
		t.l[li + 1] = (uint32_t)(mag >> 32);
	else
		t.l[li + 1] = (uint32_t)(mag >> (32 - sh));
	t.l[li + 2] = sh ? (uint32_t)(mag >> (64 - sh)) : 0;
	if (neg)
		big_negate(&t);
	for (i = 0; i < BIG_LIMBS; i++) {
		carry += (uint64_t)b->l[i] + t.l[i];
		b->l[i] = (uint32_t)carry;
		carry >>= 32;
	}
}

static void big_add_term(struct big *b, int64_t k, int e)
{
	big_add_u64(b, k < 0, k < 0 ? (uint64_t)-k : (uint64_t)k, e);
}

/* a -= b */
static void big_sub(struct big *a, const struct big *b)
{
	struct big t = *b;
	uint64_t carry = 0;
	int i;

	big_negate(&t);
	for (i = 0; i < BIG_LIMBS; i++) {
		carry += (uint64_t)a->l[i] + t.l[i];
		a->l[i] = (uint32_t)carry;
		carry >>= 32;
	}
}

/* Compare a non-negative b with 2^e: -1, 0, 1. */
static int big_cmp_pow2(const struct big *b, int e)
{
	struct big p;
	int i;

	big_zero(&p);
	big_add_u64(&p, false, 1, e);
	for (i = BIG_LIMBS - 1; i >= 0; i--) {
		if (b->l[i] != p.l[i])
			return b->l[i] > p.l[i] ? 1 : -1;
	}
	return 0;
}

/* A finite fp32 (mbits 23) or bf16 (mbits 7) value, added exactly. */
static void big_add_float(struct big *b, uint32_t bits, unsigned int mbits)
{
	uint32_t be = (bits >> mbits) & 0xff;
	uint32_t m = bits & ((1u << mbits) - 1);
	bool neg = (bits >> (8 + mbits)) & 1;

	if (be)
		big_add_u64(b, neg, m | (1u << mbits),
			    (int)be - 127 - (int)mbits);
	else
		big_add_u64(b, neg, m, -126 - (int)mbits);
}

static unsigned int n_checked, n_nan, n_inf, n_sub, n_ties;

/* Special-value state of one result, design section 4. */
struct special {
	bool nan, pinf, ninf;
};

/*
 * Verify r (fp32 or bf16 bits) against the exact value and the special
 * state.  Returns NULL when r is right, else why not.
 */
static const char *verify(const struct big *exact, const struct special *sp,
			  uint32_t r, unsigned int mbits)
{
	uint32_t inf = 0xffu << mbits, sign_bit = 1u << (8 + mbits);
	uint32_t mag = r & (sign_bit - 1);
	uint32_t be = mag >> mbits, m = mag & ((1u << mbits) - 1);
	bool rneg = r & sign_bit;
	struct big d, a;
	int up, down, c;

	if (sp->nan || (sp->pinf && sp->ninf))
		return test_isnan_bits(r, mbits) ? NULL : "want NaN";
	if (sp->pinf || sp->ninf) {
		if (mag == inf && rneg == sp->ninf)
			return NULL;
		return sp->pinf ? "want +Inf" : "want -Inf";
	}
	if (test_isnan_bits(r, mbits))
		return "NaN for a finite sum";

	a = *exact;
	if (big_neg(&a))
		big_negate(&a);
	if (mag == inf) {
		/* Overflow: |exact| >= 2^128 - 2^(127 - mbits - 1). */
		struct big t;

		big_zero(&t);
		big_add_u64(&t, false, 1, 128);
		big_add_u64(&t, true, 1, 127 - (int)mbits - 1);
		big_sub(&t, &a);	/* threshold - |exact| */
		if (!big_neg(&t) && !big_is_zero(&t))
			return "Inf below the overflow threshold";
		if (rneg != big_neg(exact))
			return "Inf of the wrong sign";
		return NULL;
	}
	if (big_is_zero(exact))
		return r == 0 ? NULL : "exact zero must be +0";
	if (rneg != big_neg(exact))
		return "wrong sign";

	/* d = |exact| - |r| */
	d = a;
	{
		struct big rb;

		big_zero(&rb);
		big_add_float(&rb, mag, mbits);
		big_sub(&d, &rb);
	}
	/* Spacing of floats just above |r| and just below it (log2). */
	up = (be ? (int)be : 1) - 127 - (int)mbits;
	down = (be > 1 && !m) ? up - 1 : up;
	if (big_neg(&d)) {
		if (!mag)
			return "test bug: below zero";
		big_negate(&d);
		c = big_cmp_pow2(&d, down - 1);
	} else {
		c = big_cmp_pow2(&d, up - 1);
	}
	if (c > 0)
		return "not the nearest float";
	if (c == 0 && (r & 1))
		return "tie not rounded to even";
	n_ties += c == 0;
	return NULL;
}

/* --- random cases --------------------------------------------------------- */


enum regime {
	R_NORMAL,	/* scales near 127 */
	R_WIDE,		/* any scale 0..254 */
	R_EXTREME,	/* 0, 1, 2, 126..128, 252..254 */
	R_TINY,		/* products near fp32's subnormal range */
	R_HUGE,		/* products near fp32's overflow */
	R_NREGIME,
};

static uint8_t rand_scale(enum regime rg)
{
	static const uint8_t extremes[] = { 0, 1, 2, 126, 127, 128, 252,
					    253, 254 };

	switch (rg) {
	case R_NORMAL:
		return (uint8_t)(121 + test_rand_below(13));
	case R_WIDE:
		return (uint8_t)test_rand_below(255);
	case R_EXTREME:
		return extremes[test_rand_below(TEST_ARRAY_SIZE(extremes))];
	case R_TINY:
		return (uint8_t)(47 + test_rand_below(21));
	default:
		return (uint8_t)(175 + test_rand_below(11));
	}
}

static uint8_t negate_code(enum mxa_elem elem, uint8_t c)
{
	return c ^ test_elem_sign(elem);
}

/* A special code of the type (NaN or +-Inf), or a zero if it has none. */
static uint8_t special_code(enum mxa_elem elem)
{
	static const uint8_t e4m3[] = { 0x7f, 0xff };
	static const uint8_t e5m2[] = { 0x7c, 0xfc, 0x7c, 0xfc, 0x7d, 0xfe };

	if (elem == MXA_ELEM_E4M3)
		return e4m3[test_rand_below(2)];
	if (elem == MXA_ELEM_E5M2)
		return e5m2[test_rand_below(6)];
	return 0;
}

static void fill(struct test_mx *m, enum regime rg, bool zeros)
{
	size_t i, n = (size_t)m->rows * m->cols;

	for (i = 0; i < n; i++)
		m->code[i] = zeros && test_rand_below(4) == 0 ?
			     (uint8_t)(test_rand_below(2) ?
				       test_elem_sign(m->elem) : 0) :
			     test_rand_code(m->elem, false);
	for (i = 0; i < (size_t)m->rows * (m->cols / 32); i++)
		m->scale[i] = rand_scale(rg);
}

/* A random C value (fp32 bits, or bf16 bits in the low half). */
static uint32_t rand_c(unsigned int mbits, enum regime rg, bool specials)
{
	uint32_t r = (uint32_t)test_rand(), e;

	if (specials && test_rand_below(16) == 0) {
		static const uint32_t f32[] = { 0x7fc00000, 0x7f800000,
						0xff800000 };

		r = f32[test_rand_below(3)];
		return mbits == 7 ? r >> 16 : r;
	}
	switch (test_rand_below(4)) {
	case 0:
		return test_rand_below(2) ? 1u << (8 + mbits) : 0;
	case 1:		/* any finite pattern */
		e = test_rand_below(255);
		break;
	default:	/* near the magnitude of the products */
		e = rg == R_TINY ? test_rand_below(10) :
		    rg == R_HUGE ? 230 + test_rand_below(25) :
		    117 + test_rand_below(20);
		break;
	}
	r &= (1u << mbits) - 1;
	r |= e << mbits;
	if (test_rand_below(2))
		r |= 1u << (8 + mbits);
	return r;
}

static enum test_class decode(enum mxa_elem elem, uint8_t code, int64_t *k,
			      int *e)
{
	return test_elem_decode(elem, code, k, e, NULL);
}

/*
 * The exact C[i][j] and its special state, from A and B (and C before,
 * when cin is not NULL).
 */
static void exact_dot(const struct test_mx *a, const struct test_mx *b,
		      uint32_t i, uint32_t j, const uint32_t *cin,
		      unsigned int mbits, struct big *sum, struct special *sp)
{
	uint32_t kb, t, blocks = a->cols / 32;

	big_zero(sum);
	memset(sp, 0, sizeof(*sp));
	if (cin) {
		uint32_t c = *cin, mag = c & ((1u << (8 + mbits)) - 1);

		if (mag > (0xffu << mbits))
			sp->nan = true;
		else if (mag == (0xffu << mbits))
			*((c >> (8 + mbits)) & 1 ? &sp->ninf : &sp->pinf) = true;
		else
			big_add_float(sum, c, mbits);
	}
	for (kb = 0; kb < blocks; kb++) {
		uint8_t sa = a->scale[i * blocks + kb];
		uint8_t sb = b->scale[j * blocks + kb];

		/* A NaN scale poisons the block whatever its codes. */
		if (sa == 0xff || sb == 0xff) {
			sp->nan = true;
			continue;
		}
		for (t = kb * 32; t < kb * 32 + 32; t++) {
			int64_t ka, kbv;
			int ea, eb;
			enum test_class ca = decode(a->elem,
						    a->code[i * a->cols + t],
						    &ka, &ea);
			enum test_class cb = decode(b->elem,
						    b->code[j * b->cols + t],
						    &kbv, &eb);
			bool na, nb;

			if (ca == TEST_FINITE && cb == TEST_FINITE) {
				big_add_term(sum, ka * kbv,
					     ea + eb + sa - 127 + sb - 127);
				continue;
			}
			if (ca == TEST_NAN || cb == TEST_NAN) {
				sp->nan = true;
				continue;
			}
			/* An Inf times zero is NaN; else a signed Inf. */
			if ((ca == TEST_FINITE && !ka) ||
			    (cb == TEST_FINITE && !kbv)) {
				sp->nan = true;
				continue;
			}
			na = ca == TEST_FINITE ? ka < 0 : ca == TEST_NINF;
			nb = cb == TEST_FINITE ? kbv < 0 : cb == TEST_NINF;
			*(na != nb ? &sp->ninf : &sp->pinf) = true;
		}
	}
}

static int run_gemm(struct mxa_device *dev, const struct test_mx *a,
		    const struct test_mx *b, enum mxa_dtype dtype,
		    uint32_t flags, const uint32_t *cin, uint32_t *out)
{
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	int ret = test_mx_upload(dev, a, NULL, &ma);

	if (ret)
		return ret;
	ret = test_mx_upload(dev, b, NULL, &mb);
	if (!ret) {
		ret = test_dense_upload(dev, dtype, a->rows, b->rows, cin, 0,
					0, &c);
		if (!ret) {
			ret = mxa_gemm(dev, &ma, &mb, &c, flags,
				       MXA_PREF_EMULATED);
			if (!ret)
				ret = test_dense_download(&c, out);
			test_dense_release(&c);
		}
		test_mx_release(&mb);
	}
	test_mx_release(&ma);
	return ret;
}

/* Permute the K blocks of a (codes and scales) by perm. */
static void permute_blocks(const struct test_mx *src, struct test_mx *dst,
			   const uint32_t *perm)
{
	uint32_t r, kb, blocks = src->cols / 32;

	test_mx_alloc(dst, src->elem, src->rows, src->cols);
	for (r = 0; r < src->rows; r++) {
		for (kb = 0; kb < blocks; kb++) {
			memcpy(dst->code + r * src->cols + kb * 32,
			       src->code + r * src->cols + perm[kb] * 32, 32);
			dst->scale[r * blocks + kb] =
				src->scale[r * blocks + perm[kb]];
		}
	}
}

static void one_case(struct mxa_device *dev, enum mxa_elem ea,
		     enum mxa_elem eb, enum mxa_dtype dtype, bool accumulate,
		     unsigned int serial)
{
	static const uint32_t ks[] = { 32, 64, 96, 160 };
	unsigned int mbits = dtype == MXA_DTYPE_BF16 ? 7 : 23;
	uint32_t m = 1 + test_rand_below(7), n = 1 + test_rand_below(7);
	uint32_t k = ks[test_rand_below(4)], blocks = k / 32, i, j, t;
	enum regime rg = (enum regime)test_rand_below(R_NREGIME);
	bool specials = test_rand_below(4) == 0;
	bool cancel = blocks > 1 && test_rand_below(4) == 0;
	uint32_t *cin = calloc((size_t)m * n, 4), *out = calloc((size_t)m * n, 4);
	uint32_t *out2 = calloc((size_t)m * n, 4);
	struct test_mx a, b;
	int ret;

	test_mx_alloc(&a, ea, m, k);
	test_mx_alloc(&b, eb, n, k);
	fill(&a, rg, specials);
	fill(&b, rg, specials);
	if (specials) {
		/* A few NaN / Inf codes, and now and then a NaN scale. */
		for (t = 0; t < 1 + test_rand_below(3); t++) {
			struct test_mx *x = test_rand_below(2) ? &a : &b;

			x->code[test_rand_below(x->rows * x->cols)] =
				special_code(x->elem);
		}
		if (test_rand_below(3) == 0) {
			struct test_mx *x = test_rand_below(2) ? &a : &b;

			x->scale[test_rand_below(x->rows * blocks)] = 0xff;
		}
	}
	if (cancel) {
		/*
		 * Block 1 = block 0 in A and its negation in B, under block
		 * 0's scales, with block 0 scaled up: the big terms cancel
		 * exactly and the small rest must survive.
		 */
		for (i = 0; i < m; i++) {
			memcpy(a.code + i * k + 32, a.code + i * k, 32);
			uint8_t s = a.scale[i * blocks];

			if (s < 200)
				s += 40;
			a.scale[i * blocks] = a.scale[i * blocks + 1] = s;
		}
		for (j = 0; j < n; j++) {
			for (t = 0; t < 32; t++)
				b.code[j * k + 32 + t] =
					negate_code(eb, b.code[j * k + t]);
			b.scale[j * blocks + 1] = b.scale[j * blocks];
		}
	}
	for (i = 0; i < m * n; i++)
		cin[i] = rand_c(mbits, rg, specials);

	ret = run_gemm(dev, &a, &b, dtype, accumulate ? MXA_GEMM_ACCUMULATE : 0,
		       cin, out);
	CHECK(ret == 0, "gemm %s x %s %ux%ux%u: %d (%s)", test_elem(ea)->name,
	      test_elem(eb)->name, m, n, k, ret, mxa_strerror(ret));
	if (ret)
		goto out;

	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			struct big sum;
			struct special sp;
			uint32_t r = out[i * n + j];
			const char *why;

			exact_dot(&a, &b, i, j, accumulate ? &cin[i * n + j] :
				  NULL, mbits, &sum, &sp);
			why = verify(&sum, &sp, r, mbits);
			n_checked++;
			if (test_isnan_bits(r, mbits))
				n_nan++;
			else if ((r & ((1u << (8 + mbits)) - 1)) ==
				 (0xffu << mbits))
				n_inf++;
			else if (!((r >> mbits) & 0xff) &&
				 (r & ((1u << mbits) - 1)))
				n_sub++;
			CHECK(!why,
			      "case %u: %s x %s, %ux%ux%u, %s%s, regime %d: C[%u][%u] = 0x%08x (%a): %s",
			      serial, test_elem(ea)->name, test_elem(eb)->name,
			      m, n, k, dtype ? "bf16" : "f32",
			      accumulate ? " accumulate" : "", (int)rg, i, j,
			      r, test_float_value(r, mbits), why);
		}
	}

	/* The same gemm with the K blocks shuffled: identical bits. */
	if (blocks > 1) {
		uint32_t perm[8];
		struct test_mx pa, pb;

		for (t = 0; t < blocks; t++)
			perm[t] = t;
		for (t = blocks - 1; t > 0; t--) {
			uint32_t u = test_rand_below(t + 1), x = perm[t];

			perm[t] = perm[u];
			perm[u] = x;
		}
		permute_blocks(&a, &pa, perm);
		permute_blocks(&b, &pb, perm);
		ret = run_gemm(dev, &pa, &pb, dtype,
			       accumulate ? MXA_GEMM_ACCUMULATE : 0, cin, out2);
		CHECK(ret == 0, "permuted gemm: %d", ret);
		for (i = 0; !ret && i < m * n; i++)
			CHECK(out[i] == out2[i],
			      "case %u: %s x %s %ux%ux%u: K blocks permuted changes C[%u] from 0x%08x to 0x%08x",
			      serial, test_elem(ea)->name, test_elem(eb)->name,
			      m, n, k, i, out[i], out2[i]);
		test_mx_free(&pa);
		test_mx_free(&pb);
	}
out:
	test_mx_free(&a);
	test_mx_free(&b);
	free(cin);
	free(out);
	free(out2);
}

/* The checker itself must reject wrong answers: feed it some. */
static void self_test(void)
{
	struct special none = { 0 };
	struct big s;

	/* 1 + 2^-24 is the fp32 tie between 1 and 1 + 2^-23: to 1. */
	big_zero(&s);
	big_add_term(&s, 1, 0);
	big_add_term(&s, 1, -24);
	CHECK(!verify(&s, &none, 0x3f800000, 23), "self test: tie to even");
	CHECK(verify(&s, &none, 0x3f800001, 23), "self test: tie to odd");
	/* 1 - 2^-25 is the tie below 1 (finer spacing): to 1. */
	big_zero(&s);
	big_add_term(&s, 1, 0);
	big_add_term(&s, -1, -25);
	CHECK(!verify(&s, &none, 0x3f800000, 23), "self test: below 1");
	CHECK(verify(&s, &none, 0x3f7fffff, 23), "self test: below 1, odd");
	/* 1 - 2^-26 rounds to 1, not to the float below. */
	big_zero(&s);
	big_add_term(&s, 1, 0);
	big_add_term(&s, -1, -26);
	CHECK(verify(&s, &none, 0x3f7fffff, 23), "self test: 1 - 2^-26");
	/* fp32 max + 2^103 - 2^60 is finite; + 2^103 is Inf. */
	big_zero(&s);
	big_add_float(&s, 0x7f7fffff, 23);
	big_add_term(&s, 1, 103);
	CHECK(!verify(&s, &none, 0x7f800000, 23), "self test: overflow tie");
	CHECK(verify(&s, &none, 0x7f7fffff, 23), "self test: max at tie");
	big_add_term(&s, -1, 60);
	CHECK(!verify(&s, &none, 0x7f7fffff, 23), "self test: below tie");
	CHECK(verify(&s, &none, 0x7f800000, 23), "self test: early Inf");
	/* -2^-150 underflows to -0; exact 0 is +0 only. */
	big_zero(&s);
	big_add_term(&s, -1, -150);
	CHECK(!verify(&s, &none, 0x80000000, 23), "self test: -0");
	CHECK(verify(&s, &none, 0x00000000, 23), "self test: +0 for -tiny");
	big_zero(&s);
	CHECK(verify(&s, &none, 0x80000000, 23), "self test: -0 for 0");
	/* bf16: 1 + 2^-8 is a tie: to 1 (0x3f80). */
	big_zero(&s);
	big_add_term(&s, 1, 0);
	big_add_term(&s, 1, -8);
	CHECK(!verify(&s, &none, 0x3f80, 7), "self test: bf16 tie");
	CHECK(verify(&s, &none, 0x3f81, 7), "self test: bf16 odd");
	/* Tiny terms at the bottom and the top of the range. */
	big_zero(&s);
	big_add_term(&s, 3, -286);
	big_add_term(&s, -3, -286);
	CHECK(big_is_zero(&s), "self test: cancellation");
}

int main(void)
{
	static const enum mxa_dtype dtypes[] = { MXA_DTYPE_F32, MXA_DTYPE_BF16 };
	struct mxa_device *dev;
	unsigned int a, b, t, acc, rep, serial = 0;
	struct mxa_plan plan;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
		.b_elem = MXA_ELEM_E4M3, .m = 1, .n = 1, .k = 32,
	};

	self_test();
	test_seed(0x6578616374ull);
	dev = test_open_device();
	CHECK(mxa_plan(dev, &d, MXA_PREF_EMULATED, &plan) == 0 && plan.exact,
	      "EMULATED gemm on %s does not plan an exact kernel",
	      test_device_name());
	for (a = 0; a < 5; a++)
		for (b = 0; b < 5; b++)
			for (t = 0; t < 2; t++)
				for (acc = 0; acc < 2; acc++)
					for (rep = 0; rep < 6; rep++)
						one_case(dev, test_elems[a],
							 test_elems[b],
							 dtypes[t], acc,
							 serial++);
	printf("%u cases, %u results checked (%u NaN, %u Inf, %u subnormal, %u exact ties)\n",
	       serial, n_checked, n_nan, n_inf, n_sub, n_ties);
	mxa_device_close(dev);
	return test_finish();
}
