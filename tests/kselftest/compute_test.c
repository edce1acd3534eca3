// SPDX-License-Identifier: GPL-2.0
/*
 * What the engine computes, bit for bit, against values this test works
 * out by itself from the OCP MX v1.0 element tables and the rules in
 * Documentation/numerics.rst and formats.rst (it shares no code with the
 * driver): small GEMMs whose exact result is obvious, every element type
 * pair, fp32 and bf16 output, accumulation, plain, strided and swizzled
 * scales, special values; quantization of powers of two, ties,
 * saturation, zero and non-finite blocks, every scale mode; and random
 * GEMMs checked against an exact integer model rounded once.
 */
#include "mxaccel_test.h"

#define E4M3	DRM_MXACCEL_ELEM_E4M3
#define E5M2	DRM_MXACCEL_ELEM_E5M2
#define E2M3	DRM_MXACCEL_ELEM_E2M3
#define E3M2	DRM_MXACCEL_ELEM_E3M2
#define E2M1	DRM_MXACCEL_ELEM_E2M1
#define F32	DRM_MXACCEL_DTYPE_F32
#define BF16	DRM_MXACCEL_DTYPE_BF16

#define F32_NAN		0x7fc00000u
#define F32_PINF	0x7f800000u
#define F32_NINF	0xff800000u
#define BF16_NAN	0x7fc0u

/* ---- the element formats, from the OCP tables ------------------------- */

static const struct {
	int ebits, mbits, bias, bits;
	int emax;	/* exponent of the largest power of two <= max */
	__u8 one;	/* the code of 1.0 */
} fmt[] = {
	[E4M3] = { 4, 3, 7, 8, 8, 0x38 },
	[E5M2] = { 5, 2, 15, 8, 15, 0x3c },
	[E2M3] = { 2, 3, 1, 6, 2, 0x08 },
	[E3M2] = { 3, 2, 3, 6, 4, 0x0c },
	[E2M1] = { 2, 1, 1, 4, 2, 0x2 },
};

static const char *const elem_name[] = {
	[E4M3] = "e4m3", [E5M2] = "e5m2", [E2M3] = "e2m3", [E3M2] = "e3m2",
	[E2M1] = "e2m1",
};

/* Every value is k * 2^kexp(elem) with k an integer. */
static int kexp(__u32 elem)
{
	return 1 - fmt[elem].bias - fmt[elem].mbits;
}

static bool code_special(__u32 elem, __u32 code)
{
	if (elem == E4M3)
		return (code & 0x7f) == 0x7f;
	if (elem == E5M2)
		return ((code >> 2) & 0x1f) == 0x1f;
	return false;
}

static __s64 code_k(__u32 elem, __u32 code)
{
	int mb = fmt[elem].mbits;
	__u32 e = (code >> mb) & ((1u << fmt[elem].ebits) - 1);
	__u32 m = code & ((1u << mb) - 1);
	__s64 k = e ? (__s64)((1u << mb) | m) << (e - 1) : m;

	return (code >> (fmt[elem].bits - 1)) & 1 ? -k : k;
}

/* The code of +-2^e: exact, or rounded to nearest even below subnormals. */
static __u8 pow2_code(__u32 elem, int e, bool neg)
{
	int minsub = kexp(elem), minnorm = 1 - fmt[elem].bias;
	__u8 sign = neg ? 1u << (fmt[elem].bits - 1) : 0;

	if (e < minsub)		/* 2^(minsub-1) is a tie: even, i.e. zero */
		return sign;
	if (e < minnorm)
		return sign | (1u << (e - minsub));
	return sign | ((e + fmt[elem].bias) << fmt[elem].mbits);
}

static __u64 row_bytes(__u32 elem, __u32 cols)
{
	return mxt_row_bytes(elem, cols);
}

/* Store code as element i of a row (fp4: element 2i in the low nibble). */
static void put_code(__u32 elem, __u8 *row, __u32 i, __u8 code)
{
	if (elem != E2M1) {
		row[i] = code;
		return;
	}
	row[i / 2] &= i & 1 ? 0x0f : 0xf0;
	row[i / 2] |= (code & 0xf) << (i & 1 ? 4 : 0);
}

/* ---- the exact model ----------------------------------------------------- */

/* Block sums of one output element, plus C_in: K up to 32 * 32. */
#define MAX_TERMS	33

static unsigned int bitlen(__uint128_t x)
{
	unsigned int n = 0;

	while (x) {
		n++;
		x >>= 1;
	}
	return n;
}

/*
 * Round sum(v[i] * 2^e[i]) once to fp32 (bf16 when bf16), to nearest,
 * ties to even; an exact zero is +0.  Only normal results are handled:
 * false if the test's data strayed out of that range.
 */
static bool exact_round(const __int128_t *v, const int *e, int n, bool bf16,
			__u32 *bits)
{
	const int sig = bf16 ? 8 : 24;
	__uint128_t mag, q;
	__int128_t sum = 0, t[MAX_TERMS];
	int te[MAX_TERMS], emin = 1 << 30, i, x, biased;
	unsigned int p;
	bool neg;

	if (n > MAX_TERMS)
		return false;
	for (i = 0; i < n; i++) {
		t[i] = v[i];
		te[i] = e[i];
		while (t[i] && !(t[i] & 1)) {
			t[i] /= 2;
			te[i]++;
		}
		if (t[i] && te[i] < emin)
			emin = te[i];
	}
	for (i = 0; i < n; i++) {
		if (!t[i])
			continue;
		mag = t[i] < 0 ? -(__uint128_t)t[i] : t[i];
		if (bitlen(mag) + te[i] - emin > 120)
			return false;
		sum += t[i] * ((__int128_t)1 << (te[i] - emin));
	}
	if (!sum) {
		*bits = 0;
		return true;
	}
	neg = sum < 0;
	mag = neg ? -(__uint128_t)sum : (__uint128_t)sum;
	p = bitlen(mag);
	x = emin;
	if ((int)p > sig) {
		unsigned int sh = p - sig;
		__uint128_t rem = mag & (((__uint128_t)1 << sh) - 1);
		__uint128_t half = (__uint128_t)1 << (sh - 1);

		q = mag >> sh;
		if (rem > half || (rem == half && (q & 1)))
			q++;
		x += sh;
		if (q >> sig) {
			q >>= 1;
			x++;
		}
	} else {
		q = mag << (sig - p);
		x -= sig - p;
	}
	/* value = q * 2^x, 2^(sig-1) <= q < 2^sig */
	biased = x + sig - 1 + 127;
	if (biased < 1 || biased > 254)
		return false;
	*bits = (neg ? 0x80000000u : 0) | (__u32)biased << 23 |
		(__u32)(q & (((__uint128_t)1 << (sig - 1)) - 1))
		<< (24 - sig);
	if (bf16)
		*bits >>= 16;
	return true;
}

/* An fp32 (or bf16, in the low half) value as v * 2^e; false if special. */
static bool float_term(__u32 bits, bool bf16, __int128_t *v, int *e)
{
	__u32 x = bf16 ? bits << 16 : bits;
	__u32 be = (x >> 23) & 0xff, m = x & 0x7fffff;

	if (be == 0xff)
		return false;
	*v = be ? (__int128_t)(m | 0x800000) : m;
	*e = (be ? (int)be : 1) - 150;
	if (x >> 31)
		*v = -*v;
	return true;
}

/* ---- the fixture --------------------------------------------------------- */

FIXTURE(compute) {
	int fd;
	__u32 queue;
};

FIXTURE_SETUP(compute)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &self->queue, NULL));
}

FIXTURE_TEARDOWN(compute)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * A small GEMM on one buffer object: A's codes at 0, its scales (plain,
 * packed) at 0x1000, B's at 0x2000 and 0x3000, C (packed) at 0x4000.
 */
#define SMALL_BO	0x8000
#define SMALL_AS	0x1000
#define SMALL_B		0x2000
#define SMALL_BS	0x3000
#define SMALL_C		0x4000

static void small_gemm(struct drm_mxaccel_op *op, const struct mxt_bo *bo,
		       __u32 m, __u32 n, __u32 k, __u32 ea, __u32 eb,
		       __u32 dtype)
{
	mxt_gemm(op, m, n, k);
	mxt_mx(&op->a, bo->handle, 0, SMALL_AS, ea);
	mxt_mx(&op->b, bo->handle, SMALL_B, SMALL_BS, eb);
	mxt_dense(&op->c, bo->handle, SMALL_C, dtype);
}

/* Fill an MX matrix stored packed at data/scales with one code and scale. */
static void fill_mx(const struct mxt_bo *bo, __u64 data, __u64 scales,
		    __u32 elem, __u32 rows, __u32 cols, __u8 code, __u8 scale)
{
	__u32 r, i;

	for (r = 0; r < rows; r++)
		for (i = 0; i < cols; i++)
			put_code(elem, mxt_bo_at(bo, data + r *
						 row_bytes(elem, cols)), i,
				 code);
	memset(mxt_bo_at(bo, scales), scale, rows * (cols / 32));
}

TEST_F(compute, gemm_e4m3_obvious)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	/* 1.0 * 2^0 times 2.0 * 2^1, 32 times: 128. */
	fill_mx(&bo, 0, SMALL_AS, E4M3, 2, 32, 0x38, 127);
	fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, 3, 32, 0x40, 128);
	small_gemm(&op, &bo, 2, 3, 32, E4M3, E4M3, F32);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0x43000000u, mxt_get_u32(mxt_bo_at(&bo, SMALL_C +
							      4 * i)));
	/* Nothing past C was written. */
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, SMALL_C + 24), 0,
			    SMALL_BO - SMALL_C - 24));
	mxt_bo_free(self->fd, &bo);
}

TEST_F(compute, gemm_e2m1_obvious)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	/* 1.0 (0x2) * 2^0 times 6.0 (0x7) * 2^-1, 32 times: 96. */
	fill_mx(&bo, 0, SMALL_AS, E2M1, 1, 32, 0x2, 127);
	fill_mx(&bo, SMALL_B, SMALL_BS, E2M1, 1, 32, 0x7, 126);
	EXPECT_EQ(0x22, *mxt_bo_at(&bo, 0));
	EXPECT_EQ(0x77, *mxt_bo_at(&bo, SMALL_B));
	small_gemm(&op, &bo, 1, 1, 32, E2M1, E2M1, F32);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x42c00000u, mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));
	mxt_bo_free(self->fd, &bo);
}

/* 1.0 of every element type against 1.0 of every other: K = 64 gives 64. */
TEST_F(compute, gemm_all_pairs_ones)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 ea, eb;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	for (ea = E4M3; ea <= E2M1; ea++) {
		for (eb = E4M3; eb <= E2M1; eb++) {
			memset(bo.map, 0, SMALL_BO);
			fill_mx(&bo, 0, SMALL_AS, ea, 2, 64, fmt[ea].one, 127);
			fill_mx(&bo, SMALL_B, SMALL_BS, eb, 2, 64, fmt[eb].one,
				127);
			small_gemm(&op, &bo, 2, 2, 64, ea, eb, F32);
			ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
			EXPECT_EQ(0x42800000u,
				  mxt_get_u32(mxt_bo_at(&bo, SMALL_C + 12)))
				TH_LOG("%s x %s", elem_name[ea], elem_name[eb]);
		}
	}
	mxt_bo_free(self->fd, &bo);
}

/* Round to nearest even: fp32 at 2^24, bf16 at 256. */
TEST_F(compute, gemm_rounding_ties)
{
	static const struct {
		__u8 big_scale, small_code;
		__u32 dtype, expect;
	} cases[] = {
		/* 256 * 2^16 + 1.0 = 2^24 + 1: a tie, to 2^24. */
		{ 127 + 16, 0x38, F32, 0x4b800000u },
		/* 2^24 + 3: a tie between 2^24 + 2 and 2^24 + 4 (even). */
		{ 127 + 16, 0x44, F32, 0x4b800002u },
		/* 256 + 1.0 = 257: a tie in bf16, to 256. */
		{ 127, 0x38, BF16, 0x4380u },
		/* 256 + 3.0 = 259: a tie between 258 and 260 (even). */
		{ 127, 0x44, BF16, 0x4382u },
	};
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	unsigned int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(bo.map, 0, SMALL_BO);
		/* A: block 0 = [256, 0...], block 1 = [small, 0...]. */
		*mxt_bo_at(&bo, 0) = 0x78;
		*mxt_bo_at(&bo, 32) = cases[i].small_code;
		*mxt_bo_at(&bo, SMALL_AS) = cases[i].big_scale;
		*mxt_bo_at(&bo, SMALL_AS + 1) = 127;
		fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, 1, 64, 0x38, 127);
		small_gemm(&op, &bo, 1, 1, 64, E4M3, E4M3, cases[i].dtype);
		ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
		if (cases[i].dtype == F32) {
			EXPECT_EQ(cases[i].expect,
				  mxt_get_u32(mxt_bo_at(&bo, SMALL_C)))
				TH_LOG("case %u", i);
		} else {
			EXPECT_EQ(cases[i].expect,
				  mxt_get_u16(mxt_bo_at(&bo, SMALL_C)))
				TH_LOG("case %u", i);
			/* The two bytes after a bf16 C are untouched. */
			EXPECT_EQ(0, mxt_get_u16(mxt_bo_at(&bo, SMALL_C + 2)));
		}
	}
	mxt_bo_free(self->fd, &bo);
}

/* C += A * B^T: C_in is added exactly before the single rounding. */
TEST_F(compute, gemm_accumulate)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	fill_mx(&bo, 0, SMALL_AS, E4M3, 1, 32, 0x38, 127);
	fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, 1, 32, 0x38, 127);

	/* fp32: 0.5 + 32 = 32.5. */
	small_gemm(&op, &bo, 1, 1, 32, E4M3, E4M3, F32);
	op.flags |= DRM_MXACCEL_OP_ACCUMULATE;
	mxt_put_u32(mxt_bo_at(&bo, SMALL_C), mxt_f32_bits(0.5f));
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(mxt_f32_bits(32.5f), mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));
	/* Again: 32.5 + 32. */
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(mxt_f32_bits(64.5f), mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));
	/* (2^24 + 2) + 32 = 2^24 + 34, exact in fp32. */
	mxt_put_u32(mxt_bo_at(&bo, SMALL_C), 0x4b800001u);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x4b800011u, mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));

	/* bf16: 1.0 + 32 = 33 (0x4204). */
	op.c.dtype = BF16;
	mxt_put_u16(mxt_bo_at(&bo, SMALL_C), 0x3f80);
	mxt_put_u16(mxt_bo_at(&bo, SMALL_C + 2), 0x1234);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x4204, mxt_get_u16(mxt_bo_at(&bo, SMALL_C)));
	EXPECT_EQ(0x1234, mxt_get_u16(mxt_bo_at(&bo, SMALL_C + 2)));

	/* Without the flag, C is only written. */
	op.flags &= ~DRM_MXACCEL_OP_ACCUMULATE;
	op.c.dtype = F32;
	mxt_put_u32(mxt_bo_at(&bo, SMALL_C), F32_NAN);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x42000000u, mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));
	mxt_bo_free(self->fd, &bo);
}

/* Special values (Documentation/numerics.rst), on a 1 x 1 x 32 GEMM. */
TEST_F(compute, gemm_special_values)
{
	static const struct {
		const char *what;
		__u32 ea;
		__u8 a0, a1, sa, b0, b1, sb;
		bool acc;
		__u32 c_in, expect;
	} cases[] = {
		{ "scale 0xff", E4M3, 0x38, 0, 0xff, 0x38, 0, 127, false, 0,
		  F32_NAN },
		{ "scale 0xff on zeros", E4M3, 0, 0, 0xff, 0x38, 0, 127, false,
		  0, F32_NAN },
		{ "B scale 0xff", E4M3, 0x38, 0, 127, 0x38, 0, 0xff, false, 0,
		  F32_NAN },
		{ "e4m3 NaN", E4M3, 0x7f, 0, 127, 0x38, 0, 127, false, 0,
		  F32_NAN },
		{ "e4m3 -NaN", E4M3, 0xff, 0, 127, 0x38, 0, 127, false, 0,
		  F32_NAN },
		{ "e5m2 NaN", E5M2, 0x7d, 0, 127, 0x38, 0, 127, false, 0,
		  F32_NAN },
		{ "+Inf * 1", E5M2, 0x7c, 0, 127, 0x38, 0, 127, false, 0,
		  F32_PINF },
		{ "+Inf * -1", E5M2, 0x7c, 0, 127, 0xb8, 0, 127, false, 0,
		  F32_NINF },
		{ "-Inf * 1", E5M2, 0xfc, 0, 127, 0x38, 0, 127, false, 0,
		  F32_NINF },
		{ "Inf * 0", E5M2, 0x7c, 0, 127, 0x00, 0, 127, false, 0,
		  F32_NAN },
		{ "+Inf + -Inf", E5M2, 0x7c, 0xfc, 127, 0x38, 0x38, 127, false,
		  0, F32_NAN },
		{ "Inf beats finite", E5M2, 0x7c, 0x3c, 127, 0x38, 0xb8, 127,
		  false, 0, F32_PINF },
		{ "C_in NaN", E4M3, 0x38, 0, 127, 0x38, 0, 127, true,
		  0x7fc00001u, F32_NAN },
		{ "C_in -Inf", E4M3, 0x38, 0, 127, 0x38, 0, 127, true,
		  F32_NINF, F32_NINF },
		{ "C_in +Inf, -Inf product", E5M2, 0xfc, 0, 127, 0x38, 0, 127,
		  true, F32_PINF, F32_NAN },
		{ "1 - 1 is +0", E4M3, 0x38, 0x38, 127, 0x38, 0xb8, 127, false,
		  0, 0 },
		{ "-0 products are +0", E4M3, 0x80, 0x80, 127, 0x38, 0x38, 127,
		  false, 0, 0 },
		{ "C_in -0 plus 0", E4M3, 0, 0, 127, 0x38, 0, 127, true,
		  0x80000000u, 0 },
		{ "C_in -1 plus 1", E4M3, 0x38, 0, 127, 0x38, 0, 127, true,
		  0xbf800000u, 0 },
		/* 448 * 2^127 * 448 overflows fp32: +-Inf. */
		{ "overflow", E4M3, 0x7e, 0, 254, 0x7e, 0, 127, false, 0,
		  F32_PINF },
		{ "-overflow", E4M3, 0xfe, 0, 254, 0x7e, 0, 127, false, 0,
		  F32_NINF },
		/* 2^-127 * 2^-13 = 2^-140, an fp32 subnormal. */
		{ "subnormal", E4M3, 0x38, 0, 0, 0x38, 0, 127 - 13, false, 0,
		  0x00000200u },
		/* 2^-150 is half the smallest subnormal: a tie, to +0. */
		{ "underflow tie", E4M3, 0x38, 0, 0, 0x38, 0, 127 - 23, false,
		  0, 0 },
		/* 1.5 * 2^-149: a tie between 1 and 2 units, to 2. */
		{ "subnormal rounding", E4M3, 0x3c, 0, 0, 0x38, 0, 127 - 22,
		  false, 0, 0x00000002u },
		/* 1.25 * 2^-149 rounds to 1 unit. */
		{ "subnormal rounding down", E4M3, 0x3a, 0, 0, 0x38, 0,
		  127 - 22, false, 0, 0x00000001u },
	};
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	unsigned int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(bo.map, 0, SMALL_BO);
		*mxt_bo_at(&bo, 0) = cases[i].a0;
		*mxt_bo_at(&bo, 1) = cases[i].a1;
		*mxt_bo_at(&bo, SMALL_AS) = cases[i].sa;
		*mxt_bo_at(&bo, SMALL_B) = cases[i].b0;
		*mxt_bo_at(&bo, SMALL_B + 1) = cases[i].b1;
		*mxt_bo_at(&bo, SMALL_BS) = cases[i].sb;
		mxt_put_u32(mxt_bo_at(&bo, SMALL_C), cases[i].c_in);
		small_gemm(&op, &bo, 1, 1, 32, cases[i].ea, E4M3, F32);
		if (cases[i].acc)
			op.flags |= DRM_MXACCEL_OP_ACCUMULATE;
		ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
		EXPECT_EQ(cases[i].expect,
			  mxt_get_u32(mxt_bo_at(&bo, SMALL_C)))
			TH_LOG("%s", cases[i].what);
	}

	/* bf16: NaN is 0x7fc0, Inf 0x7f80, and 2^-130 a bf16 subnormal. */
	memset(bo.map, 0, SMALL_BO);
	*mxt_bo_at(&bo, 0) = 0x38;
	*mxt_bo_at(&bo, SMALL_AS) = 0xff;
	fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, 1, 32, 0x38, 127);
	small_gemm(&op, &bo, 1, 1, 32, E4M3, E4M3, BF16);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(BF16_NAN, mxt_get_u16(mxt_bo_at(&bo, SMALL_C)));
	*mxt_bo_at(&bo, SMALL_AS) = 254;
	*mxt_bo_at(&bo, 0) = 0x7e;
	*mxt_bo_at(&bo, SMALL_B) = 0x7e;
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x7f80, mxt_get_u16(mxt_bo_at(&bo, SMALL_C)));
	/* 2^-127 * 0.125 (0x20) = 2^-130 = 8 * 2^-133. */
	*mxt_bo_at(&bo, 0) = 0x38;
	*mxt_bo_at(&bo, SMALL_B) = 0x20;
	*mxt_bo_at(&bo, SMALL_AS) = 0;
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_EQ(0x0008, mxt_get_u16(mxt_bo_at(&bo, SMALL_C)));
	mxt_bo_free(self->fd, &bo);
}

/*
 * Scales differ per row and block: A's (r, c) is 2^(r + c), B's (j, c)
 * 2^-j, every element 1.0, K = 64; C[r][j] = 32 * 2^(r - j) * (1 + 2).
 * The same GEMM with plain, strided and swizzled scales.
 */
TEST_F(compute, gemm_scale_layouts)
{
	const __u32 m = 3, n = 2, k = 64, blocks = 2;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 layout, r, j, c;
	__u64 at;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	for (layout = 0; layout < 4; layout++) {
		bool swz_a = layout & 1, swz_b = layout & 2;

		memset(bo.map, 0, SMALL_BO);
		fill_mx(&bo, 0, SMALL_AS, E4M3, m, k, 0x38, 0);
		fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, n, k, 0x38, 0);
		small_gemm(&op, &bo, m, n, k, E4M3, E4M3, F32);
		/* Plain scales with rows 5 bytes apart (stride > blocks). */
		if (!swz_a)
			op.a.scale_stride = 5;
		if (!swz_b)
			op.b.scale_stride = 7;
		if (swz_a)
			op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		if (swz_b)
			op.b.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		for (r = 0; r < m; r++)
			for (c = 0; c < blocks; c++) {
				at = swz_a ? mxt_swizzle_index(blocks, r, c) :
					     r * 5 + c;
				*mxt_bo_at(&bo, SMALL_AS + at) = 127 + r + c;
			}
		for (j = 0; j < n; j++)
			for (c = 0; c < blocks; c++) {
				at = swz_b ? mxt_swizzle_index(blocks, j, c) :
					     j * 7 + c;
				*mxt_bo_at(&bo, SMALL_BS + at) = 127 - j;
			}
		ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
		for (r = 0; r < m; r++)
			for (j = 0; j < n; j++) {
				float want = 96.0f * (float)(1u << r) /
					     (float)(1u << j);

				at = SMALL_C + 4 * (r * n + j);
				EXPECT_EQ(mxt_f32_bits(want),
					  mxt_get_u32(mxt_bo_at(&bo, at)))
					TH_LOG("layout %u C[%u][%u]", layout,
					       r, j);
			}
	}
	mxt_bo_free(self->fd, &bo);
}

/*
 * Operands at offsets, rows further apart than they need to be: the
 * engine reads only the rows and writes only C's elements.
 */
TEST_F(compute, gemm_strides)
{
	const __u32 m = 3, n = 5, k = 64;
	const __u64 astride = 100, bstride = 67, cstride = 4 * n + 12;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 r, j;
	__u64 i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	memset(bo.map, 0xcc, SMALL_BO);
	/* e2m1 A rows of 32 bytes, 100 apart from offset 8, all 1.0. */
	for (r = 0; r < m; r++)
		memset(mxt_bo_at(&bo, 8 + r * astride), 0x22, k / 2);
	/* e4m3 B rows of 64, 67 apart from offset 0x2001, row j = (j + 1). */
	for (j = 0; j < n; j++)
		for (i = 0; i < k; i++)
			*mxt_bo_at(&bo, SMALL_B + 1 + j * bstride + i) =
				j == 0 ? 0x38 : j == 1 ? 0x40 : j == 2 ? 0x44 :
				j == 3 ? 0x48 : 0x4a;
	memset(mxt_bo_at(&bo, SMALL_AS), 127, 64);
	memset(mxt_bo_at(&bo, SMALL_BS), 127, 64);
	mxt_gemm(&op, m, n, k);
	mxt_mx(&op.a, bo.handle, 8, SMALL_AS, E2M1);
	op.a.data_stride = astride;
	mxt_mx(&op.b, bo.handle, SMALL_B + 1, SMALL_BS, E4M3);
	op.b.data_stride = bstride;
	mxt_dense(&op.c, bo.handle, SMALL_C + 8, F32);
	op.c.stride = cstride;
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	for (r = 0; r < m; r++)
		for (j = 0; j < n; j++)
			EXPECT_EQ(mxt_f32_bits(64.0f * (j + 1)),
				  mxt_get_u32(mxt_bo_at(&bo, SMALL_C + 8 +
							r * cstride + 4 * j)));
	/* The gaps between C's rows and around C are untouched. */
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, SMALL_C), 0xcc, 8));
	for (r = 0; r < m; r++)
		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, SMALL_C + 8 + r * cstride +
					      4 * n), 0xcc, 12));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, SMALL_C + 8 + m * cstride), 0xcc,
			    SMALL_BO - SMALL_C - 8 - m * cstride));
	mxt_bo_free(self->fd, &bo);
}

/* ---- random GEMMs against the exact model -------------------------------- */

static __u32 rng(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s >> 32;
}

static __u8 random_code(__u32 elem, __u64 *s)
{
	__u8 code;

	do {
		code = rng(s) & ((1u << fmt[elem].bits) - 1);
	} while (code_special(elem, code));
	return code;
}

struct gemm_case {
	__u32 m, n, k;
	__u32 ea, eb, dtype;
	bool acc, swz_a, swz_b;
};

/* Each operand in its own buffer object, with offsets and padded strides. */
#define RND_BO		0x40000
#define RND_OFF		24
#define RND_PAD		8

static void random_gemm(struct __test_metadata *_metadata, int fd,
			__u32 queue, const struct gemm_case *gc, __u64 seed,
			struct mxt_bo bo[5])
{
	const __u32 blocks = gc->k / 32;
	const __u64 es = gc->dtype == BF16 ? 2 : 4;
	const __u64 astride = row_bytes(gc->ea, gc->k) + RND_PAD;
	const __u64 bstride = row_bytes(gc->eb, gc->k) + RND_PAD;
	const __u64 sstride = blocks + 3, cstride = gc->n * es + RND_PAD;
	__u8 *acode, *bcode, *ascale, *bscale;
	__u32 *cin, r, j, i, c, wrong = 0;
	struct drm_mxaccel_op op;
	__u64 s = seed, at;

	acode = calloc(gc->m, gc->k);
	bcode = calloc(gc->n, gc->k);
	ascale = calloc(gc->m, blocks);
	bscale = calloc(gc->n, blocks);
	cin = calloc(gc->m * gc->n, sizeof(*cin));
	ASSERT_TRUE(acode && bcode && ascale && bscale && cin);
	ASSERT_GE(MAX_TERMS, blocks + 1);
	for (i = 0; i < 5; i++)
		memset(bo[i].map, 0xcc, RND_BO);

	mxt_gemm(&op, gc->m, gc->n, gc->k);
	mxt_mx(&op.a, bo[0].handle, RND_OFF, 0, gc->ea);
	op.a.scale_handle = bo[1].handle;
	op.a.data_stride = astride;
	mxt_mx(&op.b, bo[2].handle, RND_OFF, 0, gc->eb);
	op.b.scale_handle = bo[3].handle;
	op.b.data_stride = bstride;
	mxt_dense(&op.c, bo[4].handle, RND_OFF, gc->dtype);
	op.c.stride = cstride;
	op.flags |= gc->acc ? DRM_MXACCEL_OP_ACCUMULATE : 0;

	/* A and B: codes, scales 2^-7 .. 2^7, laid out as the op says. */
	for (r = 0; r < gc->m; r++) {
		for (i = 0; i < gc->k; i++) {
			acode[r * gc->k + i] = random_code(gc->ea, &s);
			put_code(gc->ea, mxt_bo_at(&bo[0], RND_OFF +
						   r * astride), i,
				 acode[r * gc->k + i]);
		}
		for (c = 0; c < blocks; c++) {
			ascale[r * blocks + c] = 120 + rng(&s) % 15;
			at = gc->swz_a ? mxt_swizzle_index(blocks, r, c) :
					 r * sstride + c;
			*mxt_bo_at(&bo[1], at) = ascale[r * blocks + c];
		}
	}
	for (j = 0; j < gc->n; j++) {
		for (i = 0; i < gc->k; i++) {
			bcode[j * gc->k + i] = random_code(gc->eb, &s);
			put_code(gc->eb, mxt_bo_at(&bo[2], RND_OFF +
						   j * bstride), i,
				 bcode[j * gc->k + i]);
		}
		for (c = 0; c < blocks; c++) {
			bscale[j * blocks + c] = 120 + rng(&s) % 15;
			at = gc->swz_b ? mxt_swizzle_index(blocks, j, c) :
					 j * sstride + c;
			*mxt_bo_at(&bo[3], at) = bscale[j * blocks + c];
		}
	}
	if (gc->swz_a)
		op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
	else
		op.a.scale_stride = sstride;
	if (gc->swz_b)
		op.b.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
	else
		op.b.scale_stride = sstride;

	/* C_in: small integers times 2^-4 .. 2^4, exact in bf16 too. */
	for (r = 0; r < gc->m; r++)
		for (j = 0; j < gc->n; j++) {
			__u8 *p = mxt_bo_at(&bo[4], RND_OFF + r * cstride +
					    j * es);
			float v = (float)((int)(rng(&s) % 201) - 100) *
				  (float)(1u << (rng(&s) % 9)) / 16.0f;
			__u32 bits = mxt_f32_bits(v);

			if (!gc->acc)
				continue;
			cin[r * gc->n + j] = gc->dtype == BF16 ? bits >> 16 :
								  bits;
			if (gc->dtype == BF16)
				mxt_put_u16(p, bits >> 16);
			else
				mxt_put_u32(p, bits);
		}

	ASSERT_EQ(0, mxt_run(fd, queue, &op, 1));

	for (r = 0; r < gc->m; r++) {
		for (j = 0; j < gc->n; j++) {
			__int128_t v[MAX_TERMS];
			int e[MAX_TERMS], t = 0;
			__u32 want, got;
			__u8 *p;

			for (c = 0; c < blocks; c++) {
				__int128_t sum = 0;

				for (i = c * 32; i < c * 32 + 32; i++)
					sum += (__int128_t)code_k(gc->ea,
							acode[r * gc->k + i]) *
					       code_k(gc->eb,
						      bcode[j * gc->k + i]);
				v[t] = sum;
				e[t++] = kexp(gc->ea) + kexp(gc->eb) +
					 ascale[r * blocks + c] - 127 +
					 bscale[j * blocks + c] - 127;
			}
			if (gc->acc) {
				ASSERT_TRUE(float_term(cin[r * gc->n + j],
						       gc->dtype == BF16,
						       &v[t], &e[t]));
				t++;
			}
			ASSERT_TRUE(exact_round(v, e, t, gc->dtype == BF16,
						&want));
			p = mxt_bo_at(&bo[4], RND_OFF + r * cstride + j * es);
			got = gc->dtype == BF16 ? mxt_get_u16(p) :
						  mxt_get_u32(p);
			if (got != want && wrong++ < 4)
				TH_LOG("%s x %s %s%s%s%s C[%u][%u]: 0x%x, not 0x%x",
				       elem_name[gc->ea], elem_name[gc->eb],
				       gc->dtype == BF16 ? "bf16" : "f32",
				       gc->acc ? " acc" : "",
				       gc->swz_a ? " swz-a" : "",
				       gc->swz_b ? " swz-b" : "", r, j, got,
				       want);
		}
		/* The padding after each row of C is untouched. */
		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo[4], RND_OFF + r * cstride +
					      gc->n * es), 0xcc, RND_PAD));
	}
	EXPECT_EQ(0, wrong);
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo[4], 0), 0xcc, RND_OFF));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo[4], RND_OFF + gc->m * cstride),
			    0xcc, RND_BO - RND_OFF - gc->m * cstride));
	free(acode);
	free(bcode);
	free(ascale);
	free(bscale);
	free(cin);
}

TEST_F_TIMEOUT(compute, gemm_random_all_pairs, 300)
{
	static const struct {
		__u32 dtype;
		bool acc, swz_a, swz_b;
	} kinds[] = {
		{ F32, false, false, false },
		{ BF16, true, true, false },
		{ F32, true, false, true },
		{ BF16, false, true, true },
	};
	struct gemm_case gc;
	struct mxt_bo bo[5];
	__u32 ea, eb, v;
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, mxt_bo_new(self->fd, RND_BO, &bo[i]));
	for (ea = E4M3; ea <= E2M1; ea++)
		for (eb = E4M3; eb <= E2M1; eb++)
			for (v = 0; v < ARRAY_SIZE(kinds); v++) {
				gc = (struct gemm_case){
					.m = 5, .n = 7, .k = 96,
					.ea = ea, .eb = eb,
					.dtype = kinds[v].dtype,
					.acc = kinds[v].acc,
					.swz_a = kinds[v].swz_a,
					.swz_b = kinds[v].swz_b,
				};
				random_gemm(_metadata, self->fd, self->queue,
					    &gc,
					    0x9e3779b97f4a7c15ull *
					    (ea * 100 + eb * 10 + v + 1), bo);
			}
	for (i = 0; i < 5; i++)
		mxt_bo_free(self->fd, &bo[i]);
}

/* Enough rows to be split over CPUs, K with many blocks, ragged M / N. */
TEST_F_TIMEOUT(compute, gemm_random_larger, 300)
{
	static const struct gemm_case cases[] = {
		{ 67, 33, 256, E4M3, E2M1, F32, true, false, false },
		{ 130, 5, 160, E3M2, E5M2, BF16, false, true, true },
		{ 1, 129, 512, E2M3, E4M3, F32, false, false, true },
	};
	struct mxt_bo bo[5];
	unsigned int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, mxt_bo_new(self->fd, RND_BO, &bo[i]));
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		random_gemm(_metadata, self->fd, self->queue, &cases[i],
			    12345 + i, bo);
	for (i = 0; i < 5; i++)
		mxt_bo_free(self->fd, &bo[i]);
}

/* ---- QUANTIZE ------------------------------------------------------------ */

/*
 * Quantize one row of 32 fp32 (or bf16) values at QC of a buffer object
 * into codes at QA and a scale at QS; returns the job's status.
 */
#define Q_BO	0x4000
#define QA	0x0
#define QS	0x100
#define QC	0x1000

struct qrun {
	int fd;
	__u32 queue;
	struct mxt_bo *bo;
};

static int quantize_block(const struct qrun *qr, __u32 elem, __u32 mode,
			  __u32 dtype, const __u32 x[32])
{
	struct mxt_bo *bo = qr->bo;
	struct drm_mxaccel_op op;
	int i;

	memset(bo->map, 0xcc, Q_BO);
	for (i = 0; i < 32; i++) {
		if (dtype == BF16)
			mxt_put_u16(mxt_bo_at(bo, QC + 2 * i), x[i] >> 16);
		else
			mxt_put_u32(mxt_bo_at(bo, QC + 4 * i), x[i]);
	}
	mxt_quantize(&op, 1, 32, mode);
	mxt_mx(&op.a, bo->handle, QA, QS, elem);
	mxt_dense(&op.c, bo->handle, QC, dtype);
	return mxt_run(qr->fd, qr->queue, &op, 1);
}

/* The 32 codes of a quantized block, unpacked. */
static void block_codes(const struct mxt_bo *bo, __u32 elem, __u8 out[32])
{
	int i;

	for (i = 0; i < 32; i++)
		out[i] = elem == E2M1 ?
			 (*mxt_bo_at(bo, QA + i / 2) >> (i & 1 ? 4 : 0)) & 0xf :
			 *mxt_bo_at(bo, QA + i);
}

/*
 * x[i] = +-2^(i - 16), negative for odd i: amax is 2^15, so the scale is
 * 2^(15 - emax) in every mode (RCEIL: 2^15 / max is no power of two) and
 * the elements become +-2^(i - 31 + emax), exact or rounded to (signed)
 * zero below the subnormals.
 */
static void check_powers_of_two(struct __test_metadata *_metadata,
				const struct qrun *qr, __u32 elem, __u32 mode,
				__u32 dtype, const __u32 x[32])
{
	const int emax = fmt[elem].emax;
	const __u64 rb = row_bytes(elem, 32);
	__u8 codes[32];
	int i;

	ASSERT_EQ(0, quantize_block(qr, elem, mode, dtype, x));
	EXPECT_EQ(127 + 15 - emax, *mxt_bo_at(qr->bo, QS))
		TH_LOG("%s mode %u", elem_name[elem], mode);
	block_codes(qr->bo, elem, codes);
	for (i = 0; i < 32; i++)
		EXPECT_EQ(pow2_code(elem, i - 31 + emax, i & 1), codes[i])
			TH_LOG("%s mode %u dtype %u element %d",
			       elem_name[elem], mode, dtype, i);
	/* Only the row's codes and its one scale are written. */
	EXPECT_TRUE(mxt_all(mxt_bo_at(qr->bo, QA + rb), 0xcc, QS - rb));
	EXPECT_TRUE(mxt_all(mxt_bo_at(qr->bo, QS + 1), 0xcc, QC - QS - 1));
}

TEST_F(compute, quantize_powers_of_two)
{
	struct mxt_bo bo;
	const struct qrun qr = { self->fd, self->queue, &bo };
	__u32 x[32], elem, mode, dtype;
	int i;

	for (i = 0; i < 32; i++)
		x[i] = (__u32)(127 + i - 16) << 23 | (i & 1 ? 1u << 31 : 0);
	ASSERT_EQ(0, mxt_bo_new(self->fd, Q_BO, &bo));
	for (elem = E4M3; elem <= E2M1; elem++)
		for (mode = DRM_MXACCEL_SCALE_FLOOR;
		     mode <= DRM_MXACCEL_SCALE_EVEN; mode++)
			for (dtype = F32; dtype <= BF16; dtype++)
				check_powers_of_two(_metadata, &qr, elem, mode,
						    dtype, x);
	mxt_bo_free(self->fd, &bo);
}

/* The four scale modes disagree on amax = 3.0 and 3.5 for e2m1. */
TEST_F(compute, quantize_scale_modes)
{
	static const struct {
		float amax;
		__u32 mode;
		__u8 scale, code;
	} cases[] = {
		/* FLOOR: 2^(E(amax) - emax) = 2^-1; 3.0 / 0.5 = 6 (0x7). */
		{ 3.0f, DRM_MXACCEL_SCALE_FLOOR, 126, 0x7 },
		/* CEIL: mantissa non-zero, 2^0; 3.0 (0x5). */
		{ 3.0f, DRM_MXACCEL_SCALE_CEIL, 127, 0x5 },
		/* EVEN: 3.0 rounded to 1 mantissa bit is 2.0 (ties even). */
		{ 3.0f, DRM_MXACCEL_SCALE_EVEN, 126, 0x7 },
		/* RCEIL: fp32(3 * fp32(1/6)) = 0.5 exactly: 2^-1. */
		{ 3.0f, DRM_MXACCEL_SCALE_RCEIL, 126, 0x7 },
		/* FLOOR: 2^-1, 3.5 / 0.5 = 7 saturates to 6 (0x7). */
		{ 3.5f, DRM_MXACCEL_SCALE_FLOOR, 126, 0x7 },
		/* CEIL: 2^0, 3.5 is a tie between 3 and 4: 4 (0x6). */
		{ 3.5f, DRM_MXACCEL_SCALE_CEIL, 127, 0x6 },
		/* EVEN: 3.5 rounds up to 4.0: 2^0. */
		{ 3.5f, DRM_MXACCEL_SCALE_EVEN, 127, 0x6 },
		/* RCEIL: 3.5 / 6 = 0.58, rounded up to 2^0. */
		{ 3.5f, DRM_MXACCEL_SCALE_RCEIL, 127, 0x6 },
	};
	struct mxt_bo bo;
	const struct qrun qr = { self->fd, self->queue, &bo };
	unsigned int i;
	__u32 x[32];

	ASSERT_EQ(0, mxt_bo_new(self->fd, Q_BO, &bo));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(x, 0, sizeof(x));
		x[0] = mxt_f32_bits(cases[i].amax);
		x[1] = mxt_f32_bits(-cases[i].amax);
		ASSERT_EQ(0, quantize_block(&qr, E2M1, cases[i].mode,
					    F32, x));
		EXPECT_EQ(cases[i].scale, *mxt_bo_at(&bo, QS))
			TH_LOG("case %u", i);
		EXPECT_EQ(cases[i].code | (cases[i].code | 0x8) << 4,
			  *mxt_bo_at(&bo, QA))
			TH_LOG("case %u", i);
		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, QA + 1), 0, 15));
	}
	mxt_bo_free(self->fd, &bo);
}

/* Ties to even, subnormal codes, saturation, the sign of zero. */
TEST_F(compute, quantize_rounding_and_saturation)
{
	static const float e2m1_x[8] = {
		4.0f, 2.5f, 3.5f, 1.25f, 0.75f, 0.25f, 5.0f, -0.25f,
	};
	/* Scale 2^0 (amax 5: E = 2 = emax); RNE on the OCP value grid. */
	static const __u8 e2m1_packed[4] = { 0x46, 0x26, 0x02, 0x86 };
	struct mxt_bo bo;
	const struct qrun qr = { self->fd, self->queue, &bo };
	__u32 x[32];
	int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, Q_BO, &bo));
	memset(x, 0, sizeof(x));
	for (i = 0; i < 8; i++)
		x[i] = mxt_f32_bits(e2m1_x[i]);
	ASSERT_EQ(0, quantize_block(&qr, E2M1, DRM_MXACCEL_SCALE_FLOOR,
				    F32, x));
	EXPECT_EQ(127, *mxt_bo_at(&bo, QS));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(e2m1_packed[i], *mxt_bo_at(&bo, QA + i))
			TH_LOG("byte %d", i);
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, QA + 4), 0, 12));

	/* e4m3: 480 is above the largest value 448 (0x7e): saturates. */
	memset(x, 0, sizeof(x));
	x[0] = mxt_f32_bits(480.0f);
	x[1] = mxt_f32_bits(1.0f);
	x[2] = mxt_f32_bits(-0.5f);
	x[3] = mxt_f32_bits(-0.0f);
	x[4] = mxt_f32_bits(1.0625f);	/* a tie between 1.0 and 1.125 */
	x[5] = mxt_f32_bits(1.1875f);	/* a tie between 1.125 and 1.25 */
	x[6] = mxt_f32_bits(0x1p-10f);	/* half the smallest subnormal */
	x[7] = mxt_f32_bits(0x1.8p-9f);	/* 1.5 subnormal steps: 2 */
	ASSERT_EQ(0, quantize_block(&qr, E4M3, DRM_MXACCEL_SCALE_FLOOR,
				    F32, x));
	EXPECT_EQ(127, *mxt_bo_at(&bo, QS));
	EXPECT_EQ(0x7e, *mxt_bo_at(&bo, QA + 0));
	EXPECT_EQ(0x38, *mxt_bo_at(&bo, QA + 1));
	EXPECT_EQ(0xb0, *mxt_bo_at(&bo, QA + 2));
	EXPECT_EQ(0x80, *mxt_bo_at(&bo, QA + 3));
	EXPECT_EQ(0x38, *mxt_bo_at(&bo, QA + 4));
	EXPECT_EQ(0x3a, *mxt_bo_at(&bo, QA + 5));
	EXPECT_EQ(0x00, *mxt_bo_at(&bo, QA + 6));
	EXPECT_EQ(0x02, *mxt_bo_at(&bo, QA + 7));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, QA + 8), 0, 24));
	mxt_bo_free(self->fd, &bo);
}

/* A zero block has scale 2^-127 (byte 0) and zero codes, in every mode. */
TEST_F(compute, quantize_zero_block)
{
	struct mxt_bo bo;
	const struct qrun qr = { self->fd, self->queue, &bo };
	__u32 x[32], elem, mode;

	memset(x, 0, sizeof(x));
	ASSERT_EQ(0, mxt_bo_new(self->fd, Q_BO, &bo));
	for (elem = E4M3; elem <= E2M1; elem++)
		for (mode = DRM_MXACCEL_SCALE_FLOOR;
		     mode <= DRM_MXACCEL_SCALE_EVEN; mode++) {
			ASSERT_EQ(0, quantize_block(&qr, elem, mode, F32,
						    x));
			EXPECT_EQ(0, *mxt_bo_at(&bo, QS));
			EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, QA), 0,
					    row_bytes(elem, 32)));
		}
	mxt_bo_free(self->fd, &bo);
}

/*
 * A NaN or infinite input makes the scale 0xff and every code what
 * torchao writes for a NaN product: 0x7f (fp8), 0x10 (fp6), 0x44 (fp4
 * bytes).
 */
TEST_F(compute, quantize_non_finite_block)
{
	static const __u8 nan_byte[] = {
		[E4M3] = 0x7f, [E5M2] = 0x7f, [E2M3] = 0x10, [E3M2] = 0x10,
		[E2M1] = 0x44,
	};
	static const __u32 bad[] = { F32_NAN, F32_PINF, F32_NINF };
	struct mxt_bo bo;
	const struct qrun qr = { self->fd, self->queue, &bo };
	__u32 x[32], elem, mode, b;
	int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, Q_BO, &bo));
	for (b = 0; b < ARRAY_SIZE(bad); b++)
		for (elem = E4M3; elem <= E2M1; elem++)
			for (mode = DRM_MXACCEL_SCALE_FLOOR;
			     mode <= DRM_MXACCEL_SCALE_EVEN; mode++) {
				for (i = 0; i < 32; i++)
					x[i] = mxt_f32_bits(1.0f + i);
				x[7] = bad[b];
				ASSERT_EQ(0, quantize_block(&qr, elem,
							    mode, F32, x));
				EXPECT_EQ(0xff, *mxt_bo_at(&bo, QS));
				EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, QA),
						    nan_byte[elem],
						    row_bytes(elem, 32)))
					TH_LOG("%s mode %u input 0x%x",
					       elem_name[elem], mode, bad[b]);
			}
	mxt_bo_free(self->fd, &bo);
}

/*
 * Several rows and blocks into swizzled scales: each scale lands where
 * the 128x4 tile layout puts it, the padding of the tile is written as
 * zero, and nothing past the tile is touched.  Row r, block c holds
 * powers of two with amax 2^(r + 2c): e4m3 FLOOR scale 127 + r + 2c - 8.
 */
TEST_F(compute, quantize_swizzled_scales)
{
	const __u32 m = 3, k = 96, blocks = 3;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 r, c, i;
	__u64 at;

	ASSERT_EQ(0, mxt_bo_new(self->fd, 0x4000, &bo));
	memset(bo.map, 0xcc, 0x4000);
	for (r = 0; r < m; r++)
		for (i = 0; i < k; i++)
			mxt_put_u32(mxt_bo_at(&bo, 0x2000 + 4 * (r * k + i)),
				    (127 + r + 2 * (i / 32) - (i % 2)) << 23);
	mxt_quantize(&op, m, k, DRM_MXACCEL_SCALE_FLOOR);
	mxt_mx(&op.a, bo.handle, 0, 0x1000, E4M3);
	op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
	mxt_dense(&op.c, bo.handle, 0x2000, F32);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));

	ASSERT_EQ(512, mxt_swizzle_bytes(m, blocks));
	for (at = 0; at < 512; at++) {
		__u8 want = 0;

		for (r = 0; r < m; r++)
			for (c = 0; c < blocks; c++)
				if (mxt_swizzle_index(blocks, r, c) == at)
					want = 127 + r + 2 * c - 8;
		EXPECT_EQ(want, *mxt_bo_at(&bo, 0x1000 + at))
			TH_LOG("scale byte %llu", (unsigned long long)at);
	}
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, 0x1000 + 512), 0xcc, 0x1000 - 512));
	/* Codes: 2^8 (0x78) and 2^7 (0x70) alternate in every block. */
	for (i = 0; i < m * k; i++)
		EXPECT_EQ(i % 2 ? 0x70 : 0x78, *mxt_bo_at(&bo, i));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, m * k), 0xcc, 0x1000 - m * k));
	mxt_bo_free(self->fd, &bo);
}

/* Strided source and destination rows: the gaps stay untouched. */
#define QSC	0x2000

TEST_F(compute, quantize_strides)
{
	const __u32 m = 4, k = 64;
	const __u64 dstride = 40, sstride = 5, cstride = 4 * k + 20;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 r, i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, 0x4000, &bo));
	memset(bo.map, 0xcc, 0x4000);
	/* Row r: all 2^r, so scale 2^(r - 2) and every code 4.0 (0x6). */
	for (r = 0; r < m; r++)
		for (i = 0; i < k; i++)
			mxt_put_u32(mxt_bo_at(&bo, QSC + r * cstride + 4 * i),
				    (127 + r) << 23);
	mxt_quantize(&op, m, k, DRM_MXACCEL_SCALE_FLOOR);
	mxt_mx(&op.a, bo.handle, 4, 0x1001, E2M1);
	op.a.data_stride = dstride;
	op.a.scale_stride = sstride;
	mxt_dense(&op.c, bo.handle, QSC, F32);
	op.c.stride = cstride;
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	for (r = 0; r < m; r++) {
		__u64 row = 4 + r * dstride;
		__u64 gap = r == m - 1 ? 0x1000 - row - k / 2 : dstride - k / 2;

		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, row), 0x66, k / 2));
		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, row + k / 2), 0xcc, gap));
		EXPECT_EQ(127 + r - 2, *mxt_bo_at(&bo, 0x1001 + r * sstride));
		EXPECT_EQ(127 + r - 2,
			  *mxt_bo_at(&bo, 0x1001 + r * sstride + 1));
		EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, 0x1001 + r * sstride + 2),
				    0xcc, sstride - 2));
	}
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, 0), 0xcc, 4));
	mxt_bo_free(self->fd, &bo);
}

/*
 * One job, two ops, run in order: quantize ones into A (e4m3 FLOOR: scale
 * 2^-8, codes 2^8 = 0x78), then GEMM that A with a B of ones: 32.
 */
TEST_F(compute, quantize_then_gemm_in_one_job)
{
	struct drm_mxaccel_op ops[2];
	struct mxt_bo bo;
	int i;

	ASSERT_EQ(0, mxt_bo_new(self->fd, SMALL_BO, &bo));
	for (i = 0; i < 32; i++)
		mxt_put_u32(mxt_bo_at(&bo, 0x5000 + 4 * i), mxt_f32_bits(1.0f));
	fill_mx(&bo, SMALL_B, SMALL_BS, E4M3, 1, 32, 0x38, 127);
	mxt_quantize(&ops[0], 1, 32, DRM_MXACCEL_SCALE_FLOOR);
	mxt_mx(&ops[0].a, bo.handle, 0, SMALL_AS, E4M3);
	mxt_dense(&ops[0].c, bo.handle, 0x5000, F32);
	small_gemm(&ops[1], &bo, 1, 1, 32, E4M3, E4M3, F32);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, ops, 2));
	EXPECT_EQ(119, *mxt_bo_at(&bo, SMALL_AS));
	EXPECT_TRUE(mxt_all(bo.map, 0x78, 32));
	EXPECT_EQ(0x42000000u, mxt_get_u32(mxt_bo_at(&bo, SMALL_C)));
	mxt_bo_free(self->fd, &bo);
}

TEST_HARNESS_MAIN
