// SPDX-License-Identifier: MIT
/*
 * The freestanding core's exact products with UE4M3 scales, tensor scales
 * and dense fp32 operands (mxcore_acc_seg_dot(), mxcore_acc_dense_dot(),
 * mxcore_acc_dense_dot_decoded()), which no public function reaches
 * directly (the weight-only GEMM and the driver build on them).
 *
 * Each result is checked against the same sum built product by product:
 * every factor decoded here from its definition (testlib's OCP MX tables,
 * float8_e4m3fn for UE4M3, IEEE binary32 for fp32), every product an
 * integer times a power of two added alone with mxcore_acc_add() (the
 * adder test_gemm_exact proves against an independent bignum), and the
 * special-value rules applied here.  Random blocks cover fp32 exponents
 * spread over the whole range (the 40-exponent grouping and its
 * fallback), subnormal and huge tensor scales, zero, negative and NaN
 * scale bytes, and Inf/NaN codes and activations.
 *
 * Linked with the static library, whose objects carry the core's
 * (hidden) symbols.
 */
#include <stdio.h>
#include <string.h>

#include "testlib.h"
#include "mxcore.h"

/* A factor: value = k * 2^e, or a special class. */
struct factor {
	enum test_class cls;
	int64_t k;
	int e;
};

static struct factor elem_factor(enum mxa_elem elem, uint8_t code)
{
	struct factor f = { 0 };
	bool nz;

	f.cls = test_elem_decode(elem, code, &f.k, &f.e, &nz);
	return f;
}

/* float8_e4m3fn (UE4M3 scales), from its definition. */
static struct factor ue4m3_factor(uint8_t s)
{
	struct factor f = { 0 };
	unsigned int e = (s >> 3) & 15, m = s & 7;

	if (e == 15 && m == 7) {
		f.cls = TEST_NAN;
		return f;
	}
	f.k = e ? (int64_t)(8 + m) : (int64_t)m;
	f.e = e ? (int)e - 7 - 3 : -6 - 3;
	if (s & 0x80)
		f.k = -f.k;
	return f;
}

static struct factor e8m0_factor(uint8_t s)
{
	struct factor f = { .k = 1, .e = (int)s - 127 };

	if (s == 0xff)
		f.cls = TEST_NAN;
	return f;
}

static struct factor f32_factor(uint32_t x)
{
	struct factor f = { 0 };
	unsigned int be = (x >> 23) & 0xff;
	uint32_t m = x & 0x7fffff;

	if (be == 0xff) {
		f.cls = m ? TEST_NAN : (x >> 31 ? TEST_NINF : TEST_PINF);
		return f;
	}
	f.k = be ? (int64_t)(m | 0x800000) : (int64_t)m;
	f.e = be ? (int)be - 150 : -149;
	if (x >> 31)
		f.k = -f.k;
	return f;
}

static int sign_of(const struct factor *f)
{
	if (f->cls == TEST_PINF)
		return 1;
	if (f->cls == TEST_NINF)
		return -1;
	return f->k > 0 ? 1 : f->k < 0 ? -1 : 0;
}

/*
 * acc += the product of n factors, one at a time: special rules here
 * (NaN anywhere: NaN; an infinity times a zero: NaN; else signed Inf).
 */
static void add_product(struct mxcore_acc *acc, const struct factor *f,
			unsigned int n)
{
	__int128 v = 1;
	bool inf = false;
	int sign = 1, e = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (f[i].cls == TEST_NAN) {
			acc->flags |= MXCORE_NAN;
			return;
		}
		inf |= f[i].cls != TEST_FINITE;
		sign *= sign_of(&f[i]);
	}
	if (inf) {
		acc->flags |= !sign ? MXCORE_NAN :
			      sign < 0 ? MXCORE_NINF : MXCORE_PINF;
		return;
	}
	for (i = 0; i < n; i++) {
		v *= f[i].k;
		e += f[i].e;
	}
	mxcore_acc_add(acc, v, e);
}

struct side {
	struct mxcore_scaling f;
	uint8_t codes[32];	/* unpacked */
	uint8_t packed[32];
	uint8_t scale;
};

static uint8_t rand_scale(bool ue4m3)
{
	static const uint8_t odd[] = { 0x00, 0x80, 0x7f, 0xff, 0x01, 0x7e,
				       0xb8 };

	if (ue4m3)
		return test_rand_below(8) ? (uint8_t)test_rand_below(0x7f) :
		       odd[test_rand_below(TEST_ARRAY_SIZE(odd))];
	return test_rand_below(16) ? (uint8_t)test_rand_below(255) : 0xff;
}

static uint32_t rand_tensor_scale(void)
{
	switch (test_rand_below(4)) {
	case 0:
		return 0;				/* single level */
	case 1:
		return 1 + test_rand_below(0x7fffff);	/* subnormal */
	default:
		return (uint32_t)(test_rand_below(254) + 1) << 23 |
		       test_rand_below(1u << 23);
	}
}

static void rand_side(struct side *s, bool nvfp4, unsigned int n)
{
	enum mxa_elem elem = nvfp4 ? MXA_ELEM_E2M1 :
			     (enum mxa_elem)(1 + test_rand_below(5));
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->f.elem = elem;
	s->f.scale_type = nvfp4 ? MXCORE_SCALE_UE4M3 : MXCORE_SCALE_E8M0;
	s->f.tensor_scale = nvfp4 ? rand_tensor_scale() : 0;
	s->scale = rand_scale(nvfp4);
	for (i = 0; i < n; i++) {
		s->codes[i] = test_rand_code(elem, test_rand_below(8) == 0);
		if (!test_rand_below(6))
			s->codes[i] = 0;
	}
	for (i = 0; i < n; i++) {
		if (elem == MXA_ELEM_E2M1)
			s->packed[i / 2] |= (uint8_t)(s->codes[i] << (i % 2 * 4));
		else
			s->packed[i] = s->codes[i];
	}
}

/* The factors of element i of a side: code, block scale, tensor scale. */
static unsigned int side_factors(const struct side *s, unsigned int i,
				 struct factor *out)
{
	unsigned int n = 0;

	out[n++] = elem_factor((enum mxa_elem)s->f.elem, s->codes[i]);
	out[n++] = s->f.scale_type == MXCORE_SCALE_UE4M3 ?
		   ue4m3_factor(s->scale) : e8m0_factor(s->scale);
	if (s->f.tensor_scale)
		out[n++] = f32_factor(s->f.tensor_scale);
	return n;
}

/* A NaN block scale makes the whole dot NaN, whatever the codes. */
static bool nan_scale(const struct side *s)
{
	return s->f.scale_type == MXCORE_SCALE_UE4M3 ?
	       (s->scale & 0x7f) == 0x7f : s->scale == 0xff;
}

static uint32_t rand_f32(void)
{
	uint32_t x;

	switch (test_rand_below(12)) {
	case 0:
		return 0x7f800000u | (uint32_t)test_rand_below(2) << 31;
	case 1:
		return 0x7fc00000u;
	case 2:
		return (uint32_t)test_rand_below(2) << 31;
	case 3:
		return test_rand_below(0x800000) |
		       (uint32_t)test_rand_below(2) << 31;	/* subnormal */
	case 4:
	case 5:
		/* narrow: exponents near 127 */
		x = (uint32_t)(117 + test_rand_below(20)) << 23;
		return x | test_rand_below(1u << 23) |
		       (uint32_t)test_rand_below(2) << 31;
	default:
		x = (uint32_t)(1 + test_rand_below(254)) << 23;
		return x | test_rand_below(1u << 23) |
		       (uint32_t)test_rand_below(2) << 31;
	}
}

static void test_seg_dot(unsigned int rounds)
{
	unsigned int r, i, j, bad = 0;

	for (r = 0; r < rounds; r++) {
		bool nva = test_rand_below(3) != 0, nvb = test_rand_below(3) != 0;
		unsigned int n = nva || nvb ? 16 : 32;
		struct mxcore_acc got, want;
		struct side a, b;
		uint32_t cin = rand_f32();

		rand_side(&a, nva, n);
		rand_side(&b, nvb, n);
		mxcore_acc_init(&got);
		mxcore_acc_init(&want);
		mxcore_acc_add_float(&got, cin, MXCORE_F32);
		mxcore_acc_add_float(&want, cin, MXCORE_F32);
		mxcore_acc_seg_dot(&got, n, &a.f, a.packed, a.scale, &b.f,
				   b.packed, b.scale);
		if (nan_scale(&a) || nan_scale(&b)) {
			want.flags |= MXCORE_NAN;
		} else {
			for (i = 0; i < n; i++) {
				struct factor f[6];
				unsigned int k = side_factors(&a, i, f);

				k += side_factors(&b, i, f + k);
				add_product(&want, f, k);
			}
		}
		for (j = 0; j < 2; j++) {
			enum mxcore_dtype dt = j ? MXCORE_BF16 : MXCORE_F32;
			uint32_t g = mxcore_acc_round(&got, dt);
			uint32_t w = mxcore_acc_round(&want, dt);

			if (g != w && bad++ < 10)
				CHECK(false,
				      "seg_dot round %u (%s x %s, n %u, ts 0x%x 0x%x, scales 0x%x 0x%x) %s: 0x%x, want 0x%x",
				      r, nva ? "nvfp4" : "mx", nvb ? "nvfp4" : "mx",
				      n, a.f.tensor_scale, b.f.tensor_scale,
				      a.scale, b.scale, j ? "bf16" : "f32", g, w);
		}
	}
	CHECK(!bad, "seg_dot: %u mismatches", bad);
	printf("mxcore_acc_seg_dot: %u random segments (NVFP4/MX, mixed) exact\n",
	       rounds);
}

static void test_dense_dot(unsigned int rounds)
{
	unsigned int r, i, j, bad = 0;

	for (r = 0; r < rounds; r++) {
		bool nv = test_rand_below(2) != 0;
		unsigned int n = nv ? 16 : 32;
		bool narrow = test_rand_below(2) != 0;
		struct mxcore_acc got, want;
		uint32_t x[32];
		struct side b;

		rand_side(&b, nv, n);
		for (i = 0; i < n; i++) {
			x[i] = rand_f32();
			/* Half the blocks within 40 exponents (one sum). */
			if (narrow && ((x[i] >> 23) & 0xff) != 0xff)
				x[i] = (x[i] & 0x807fffffu) |
				       (uint32_t)(100 + r % 30) << 23;
		}
		mxcore_acc_init(&got);
		mxcore_acc_init(&want);
		mxcore_acc_dense_dot(&got, x, n, &b.f, b.packed, b.scale);
		if (nan_scale(&b)) {
			want.flags |= MXCORE_NAN;
		} else {
			for (i = 0; i < n; i++) {
				struct factor f[4];
				unsigned int k = side_factors(&b, i, f + 1);

				f[0] = f32_factor(x[i]);
				add_product(&want, f, k + 1);
			}
		}
		for (j = 0; j < 2; j++) {
			enum mxcore_dtype dt = j ? MXCORE_BF16 : MXCORE_F32;
			uint32_t g = mxcore_acc_round(&got, dt);
			uint32_t w = mxcore_acc_round(&want, dt);

			if (g != w && bad++ < 10)
				CHECK(false,
				      "dense_dot round %u (%s, %s, ts 0x%x, scale 0x%x) %s: 0x%x, want 0x%x",
				      r, nv ? "nvfp4" : "mx",
				      narrow ? "narrow" : "wide",
				      b.f.tensor_scale, b.scale,
				      j ? "bf16" : "f32", g, w);
		}
	}
	CHECK(!bad, "dense_dot: %u mismatches", bad);
	printf("mxcore_acc_dense_dot: %u random blocks (fp32 x NVFP4/MX) exact\n",
	       rounds);
}

/* The smallest products decide ties: 2^-318 and 2^-308. */
static void test_tiny(void)
{
	struct mxcore_scaling f = { MXCORE_E2M1, MXCORE_SCALE_UE4M3, 1 };
	uint8_t one[8] = { 1 }, neg[8] = { 9 };
	uint32_t x[16] = { 1 };
	struct mxcore_acc acc;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		const uint8_t *b = i & 1 ? neg : one;
		uint32_t want = i & 1 ? 0x3f800000 : 0x3f800001;

		mxcore_acc_init(&acc);
		mxcore_acc_add_float(&acc, 0x3f800000, MXCORE_F32);
		mxcore_acc_add(&acc, 1, -24);	/* a tie at 1.0 */
		if (i < 2)
			mxcore_acc_seg_dot(&acc, 16, &f, one, 0x01, &f, b, 0x01);
		else
			mxcore_acc_dense_dot(&acc, x, 16, &f, b, 0x01);
		CHECK(mxcore_acc_round(&acc, MXCORE_F32) == want,
		      "tie broken by a 2^-%d product: 0x%x, want 0x%x",
		      i < 2 ? 318 : 308, mxcore_acc_round(&acc, MXCORE_F32),
		      want);
	}
}

int main(void)
{
	test_seed(20261202);
	test_tiny();
	test_seg_dot(20000);
	test_dense_dot(20000);
	return test_finish();
}
