// SPDX-License-Identifier: MIT
/*
 * NATIVE NVFP4 x NVFP4 GEMM against the exact reference, on
 * $MXACCEL_TEST_DEVICE (default cpu).
 *
 * Operands are e2m1 codes with UE4M3 block scales per 16 and optional fp32
 * tensor scales; the reference is cpu-exact (EMULATED on the cpu device,
 * fed host copies of the same operands), so the test needs no exact NVFP4
 * kernel on the device under test.  Where the device has one, its
 * EMULATED result must equal the cpu's bit for bit.  Shapes are ragged in
 * every M range the CUDA paths distinguish (M <= 16, <= 32, <= 64, > 64),
 * with N and K (multiples of 16) that fit no tile; plain and swizzled
 * scales, row strides and offsets; fp32 and bf16 C, with and without
 * ACCUMULATE; tensor scales off, on one side, on both, ordinary, tiny
 * (subnormal, product below fp32's normal range) and huge (product above
 * it); UE4M3 scales across their range (subnormal, zero, a set sign bit)
 * and NaN scales (0x7f, 0xff) that make their whole row or column NaN.
 *
 * The bound (Documentation/numerics.rst, "CUDA kernels"), looked up by
 * the kernel mxa_plan() names (and cuda-mx-sm90-bf16-ss, forced by
 * MXACCEL_KERNEL, where the plan names another path): cuda-mx-sm90-*
 * states for NVFP4
 *
 *   gamma = 2^-9 + (K / 16 + 4) * 2^-24
 *
 * and, with S = sum_k |a_k b_k| (values with block and tensor scales,
 * plus |C| when accumulating) and c_ref the exact result rounded once:
 *
 *   fp32 C: |c - c_ref| <= gamma * S + 2^-24 |c_ref| + tiny
 *   bf16 C: |c - c_ref| <= gamma * S + 2^-8 (|c| + |c_ref|) + tiny
 *
 * tiny = (K / 16 + 6) * 2^-149 (fp32) or 2^-133 (bf16) for roundings in
 * the subnormal range (tiny tensor scales reach it).  NaN and Inf must
 * match exactly.  A device whose NATIVE kernel for NVFP4 is one this file
 * has no bound for skips (test_nvfp4 checks the cpu's); one
 * without a NATIVE NVFP4 kernel must refuse NATIVE with -EOPNOTSUPP.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev, *cpu;
static bool dev_exact;		/* dev has an EMULATED NVFP4 GEMM */
static unsigned int n_cases, n_checked, n_special, n_bitexact;
static double worst[4][2];	/* M range, fp32 / bf16 */

/* Host copy of an NVFP4 matrix: one code per byte, scales [rows][K/16]. */
struct nv_mx {
	uint32_t rows, cols;
	uint8_t *code, *scale;
	float ts;		/* 0 = single level */
	enum mxa_scale_layout layout;
	size_t data_offset, data_pad, scale_offset, scale_pad;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		printf("out of memory\n");
		exit(1);
	}
	return p;
}

/* float8_e4m3fn with its sign, as the exact core reads a UE4M3 byte. */
static double ue4m3_value(uint8_t s)
{
	uint32_t e = (s >> 3) & 15, m = s & 7;
	double v;

	if ((s & 0x7f) == 0x7f)
		return NAN;
	v = e ? ldexp(8 + m, (int)e - 10) : ldexp(m, -9);
	return s & 0x80 ? -v : v;
}

static double nv_value(const struct nv_mx *x, uint32_t r, uint32_t k)
{
	double v = test_elem_value(MXA_ELEM_E2M1, x->code[(size_t)r * x->cols + k]) *
		   ue4m3_value(x->scale[(size_t)r * (x->cols / 16) + k / 16]);

	return x->ts != 0.0f ? v * x->ts : v;
}

/* Mostly ordinary scales; now and then subnormal, zero or negative. */
static uint8_t rand_ue4m3(void)
{
	uint32_t r = test_rand_below(64);

	if (r == 0)
		return (uint8_t)test_rand_below(8);		/* 0, subnormal */
	if (r == 1)
		return (uint8_t)(0x80 | test_rand_below(0x7f)); /* negative */
	/* exponents 3..14: 2^-4 .. 2^7 times 1.0 .. 1.875 */
	return (uint8_t)(((3 + test_rand_below(12)) << 3) | test_rand_below(8));
}

/* 2^e times a random 24-bit significand. */
static float rand_ts(int e)
{
	return ldexpf(1.0f + (float)test_rand_below(1u << 23) * 0x1p-23f, e);
}

static void nv_random(struct nv_mx *x, uint32_t rows, uint32_t cols, float ts)
{
	size_t i;

	memset(x, 0, sizeof(*x));
	x->rows = rows;
	x->cols = cols;
	x->ts = ts;
	x->code = xcalloc((size_t)rows * cols, 1);
	x->scale = xcalloc((size_t)rows * (cols / 16), 1);
	for (i = 0; i < (size_t)rows * cols; i++)
		x->code[i] = (uint8_t)test_rand_below(16);
	for (i = 0; i < (size_t)rows * (cols / 16); i++)
		x->scale[i] = rand_ue4m3();
	x->layout = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
	if (test_rand_below(2)) {
		x->data_offset = test_rand_below(14);
		x->data_pad = test_rand_below(10);
		x->scale_offset = test_rand_below(8);
		if (x->layout == MXA_LAYOUT_PLAIN)
			x->scale_pad = test_rand_below(6);
	}
}

static void nv_free(struct nv_mx *x)
{
	free(x->code);
	free(x->scale);
}

/* x on device d, as its placement says; padding bytes 0xa5. */
static int nv_upload(struct mxa_device *d, const struct nv_mx *x, struct mxa_matrix *out)
{
	uint32_t blocks = x->cols / 16, r, c;
	size_t dstride = x->cols / 2 + x->data_pad, sstride = blocks + x->scale_pad;
	size_t dsize = x->data_offset + (size_t)x->rows * dstride, ssize;
	uint8_t *db, *sb;
	int ret;

	if (x->layout == MXA_LAYOUT_SWIZZLED)
		ssize = x->scale_offset + (size_t)(x->rows + 127) / 128 * 128 *
			((blocks + 3) / 4 * 4);
	else
		ssize = x->scale_offset + (size_t)x->rows * sstride;
	db = xcalloc(dsize, 1);
	sb = xcalloc(ssize, 1);
	memset(db, 0xa5, dsize);
	memset(sb, 0xa5, ssize);
	for (r = 0; r < x->rows; r++) {
		const uint8_t *codes = x->code + (size_t)r * x->cols;
		uint8_t *row = db + x->data_offset + r * dstride;

		for (c = 0; c < x->cols / 2; c++)
			row[c] = (uint8_t)(codes[2 * c] | (codes[2 * c + 1] << 4));
		for (c = 0; c < blocks; c++) {
			size_t at = x->layout == MXA_LAYOUT_SWIZZLED ?
				    mxa_swizzle_index(x->rows, blocks, r, c) :
				    r * sstride + c;

			sb[x->scale_offset + at] = x->scale[(size_t)r * blocks + c];
		}
	}
	memset(out, 0, sizeof(*out));
	ret = mxa_buffer_alloc(d, dsize, &out->data);
	if (!ret)
		ret = mxa_buffer_alloc(d, ssize, &out->scale);
	if (!ret)
		ret = mxa_buffer_write(out->data, 0, db, dsize);
	if (!ret)
		ret = mxa_buffer_write(out->scale, 0, sb, ssize);
	free(db);
	free(sb);
	out->data_offset = x->data_offset;
	out->data_stride = x->data_pad ? dstride : 0;
	out->scale_offset = x->scale_offset;
	out->scale_stride = x->layout == MXA_LAYOUT_PLAIN && x->scale_pad ? sstride : 0;
	out->elem = MXA_ELEM_E2M1;
	out->scale_layout = x->layout;
	out->rows = x->rows;
	out->cols = x->cols;
	out->scale_type = MXA_SCALE_UE4M3;
	out->tensor_scale = x->ts;
	return ret;
}

static void nv_release(struct mxa_matrix *m)
{
	mxa_buffer_free(m->data);
	mxa_buffer_free(m->scale);
}

struct c_args {
	enum mxa_dtype dtype;
	uint32_t flags;
	const uint32_t *cin;
	size_t off, pad;
};

static int gemm_on(struct mxa_device *d, const struct nv_mx *a, const struct nv_mx *b,
		   const struct c_args *ca, enum mxa_pref pref, uint32_t *out, bool *pad_ok)
{
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	int ret = nv_upload(d, a, &ma);

	if (!ret)
		ret = nv_upload(d, b, &mb);
	if (!ret) {
		ret = test_dense_upload(d, ca->dtype, a->rows, b->rows, ca->cin, ca->off,
					ca->pad, &c);
		if (!ret) {
			ret = mxa_gemm(d, &ma, &mb, &c, ca->flags, pref);
			if (!ret)
				ret = test_dense_download(&c, out);
			*pad_ok = test_dense_pad_intact(&c);
			test_dense_release(&c);
		}
		nv_release(&mb);
	}
	nv_release(&ma);
	return ret;
}

static struct mxa_op_desc desc_of(uint32_t m, uint32_t n, uint32_t k, enum mxa_dtype dtype,
				  uint32_t flags, enum mxa_scale_type b_scales)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E2M1, .b_elem = MXA_ELEM_E2M1,
		.dtype = dtype, .m = m, .n = n, .k = k, .flags = flags,
		.a_scale_type = MXA_SCALE_UE4M3, .b_scale_type = b_scales,
	};

	return d;
}

/* gamma of the NATIVE kernel `kernel` for NVFP4, or < 0 if not stated here. */
static double nvfp4_gamma(const char *kernel, uint32_t k)
{
	if (!strncmp(kernel, "cuda-mx-sm90", 12))
		return 0x1p-9 + (k / 16 + 4) * 0x1p-24;
	return -1;
}

static int m_range(uint32_t m)
{
	return m <= 16 ? 0 : m <= 32 ? 1 : m <= 64 ? 2 : 3;
}

static bool is_special(uint32_t bits, unsigned int mbits)
{
	return ((bits >> mbits) & 0xff) == 0xff;
}

/* Tensor scales: off, one side, both; ordinary, tiny or huge products. */
static void pick_ts(float *ta, float *tb)
{
	switch (test_rand_below(7)) {
	case 0:
	case 1:
		*ta = *tb = 0;
		break;
	case 2:
		*ta = rand_ts((int)test_rand_below(21) - 10);
		*tb = 0;
		break;
	case 3:
		*ta = 0;
		*tb = rand_ts((int)test_rand_below(21) - 10);
		break;
	case 4:
		*ta = rand_ts((int)test_rand_below(21) - 10);
		*tb = rand_ts((int)test_rand_below(21) - 10);
		break;
	case 5:
		/* product below 2^-126: two steps; one side subnormal */
		*ta = test_rand_below(2) ? rand_ts(-100) : rand_ts(-135);
		*tb = rand_ts(-30 - (int)test_rand_below(8));
		break;
	default:
		/* product above 2^128: two steps; many results overflow */
		*ta = rand_ts(70);
		*tb = rand_ts(59 + (int)test_rand_below(4));
		break;
	}
	if (test_rand_below(2)) {
		float t = *ta;

		*ta = *tb;
		*tb = t;
	}
}

/*
 * One random case; force: the kernel MXACCEL_KERNEL names for the NATIVE
 * call only (the cpu reference must not see it), or NULL.
 */
static void one_case(uint32_t m, uint32_t n, uint32_t k, const char *kernel, const char *force,
		     bool nan_scales)
{
	enum mxa_dtype dtype = test_rand_below(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	unsigned int mbits = dtype == MXA_DTYPE_BF16 ? 7 : 23;
	size_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4, mn = (size_t)m * n, i;
	bool accumulate = test_rand_below(2), pad_ok = true;
	uint32_t *cin = xcalloc(mn, 4), *ref = xcalloc(mn, 4), *got = xcalloc(mn, 4);
	double *sabs = xcalloc(mn, sizeof(double));
	double gamma = nvfp4_gamma(kernel, k);
	double tiny = (k / 16 + 6) * (mbits == 23 ? 0x1p-149 : 0x1p-133);
	struct c_args ca;
	struct nv_mx a, b;
	unsigned int bad = 0, t;
	float ta, tb;
	int ret;

	n_cases++;
	pick_ts(&ta, &tb);
	nv_random(&a, m, k, ta);
	nv_random(&b, n, k, tb);
	if (nan_scales) {
		for (t = 0; t < 2; t++) {
			struct nv_mx *x = test_rand_below(2) ? &a : &b;

			x->scale[test_rand_below(x->rows * (k / 16))] =
				test_rand_below(2) ? 0x7f : 0xff;
		}
	}
	for (i = 0; i < mn; i++) {
		float v = test_rand_float(64.0f);

		cin[i] = dtype == MXA_DTYPE_BF16 ? test_f32_bits(v) >> 16 : test_f32_bits(v);
	}
	ca.dtype = dtype;
	ca.flags = accumulate ? MXA_GEMM_ACCUMULATE : 0;
	ca.cin = cin;
	ca.off = es * test_rand_below(4);
	ca.pad = es * test_rand_below(4);

	for (i = 0; i < mn; i++) {
		uint32_t r = (uint32_t)(i / n), c = (uint32_t)(i % n), kk;
		double s = 0;

		for (kk = 0; kk < k; kk++)
			s += fabs(nv_value(&a, r, kk) * nv_value(&b, c, kk));
		if (accumulate)
			s += fabs(test_float_value(cin[i], mbits));
		sabs[i] = s * (1 + 0x1p-40);
	}

	ret = gemm_on(cpu, &a, &b, &ca, MXA_PREF_EMULATED, ref, &pad_ok);
	CHECK(ret == 0, "cpu emulated NVFP4 gemm %ux%ux%u: %d (%s)", m, n, k, ret,
	      mxa_strerror(ret));
	if (ret)
		goto out;
	if (dev != cpu && dev_exact) {
		ret = gemm_on(dev, &a, &b, &ca, MXA_PREF_EMULATED, got, &pad_ok);
		CHECK(ret == 0, "emulated NVFP4 gemm on %s: %d (%s)", test_device_name(), ret,
		      mxa_strerror(ret));
		for (i = 0; !ret && i < mn; i++) {
			if (got[i] == ref[i])
				continue;
			CHECK(0, "emulated NVFP4 %ux%ux%u: C[%zu] = 0x%08x on %s, 0x%08x on cpu",
			      m, n, k, i, got[i], test_device_name(), ref[i]);
			break;
		}
		if (!ret)
			n_bitexact++;
	}

	if (force)
		setenv("MXACCEL_KERNEL", force, 1);
	ret = gemm_on(dev, &a, &b, &ca, MXA_PREF_NATIVE, got, &pad_ok);
	if (force)
		unsetenv("MXACCEL_KERNEL");
	CHECK(ret == 0, "native (%s) NVFP4 gemm %ux%ux%u: %d (%s)", kernel, m, n, k, ret,
	      mxa_strerror(ret));
	if (ret)
		goto out;
	CHECK(pad_ok, "native (%s) NVFP4 gemm %ux%ux%u wrote outside C's rows", kernel, m, n, k);
	for (i = 0; i < mn && bad < 3; i++) {
		double c = test_float_value(got[i], mbits);
		double cr = test_float_value(ref[i], mbits);
		double bound = 0, err = 0;
		bool ok;

		n_checked++;
		if (is_special(ref[i], mbits) || is_special(got[i], mbits)) {
			n_special++;
			ok = test_isnan_bits(ref[i], mbits) ? test_isnan_bits(got[i], mbits) :
							      got[i] == ref[i];
		} else {
			err = fabs(c - cr);
			bound = gamma * sabs[i] + tiny +
				(mbits == 23 ? 0x1p-24 * fabs(cr) : 0x1p-8 * (fabs(c) + fabs(cr)));
			ok = err <= bound;
			if (bound > 0 && err / bound > worst[m_range(m)][mbits == 7])
				worst[m_range(m)][mbits == 7] = err / bound;
		}
		if (ok)
			continue;
		bad++;
		CHECK(0, "native (%s) NVFP4 %ux%ux%u %s%s, ts %a x %a, layouts %d/%d: C[%zu][%zu] = 0x%08x (%a), reference 0x%08x (%a), |diff| %a > bound %a (sum|ab| %a)",
		      kernel, m, n, k, mbits == 7 ? "bf16" : "f32", accumulate ? " accumulate" : "",
		      (double)ta, (double)tb, a.layout, b.layout, i / n, i % n, got[i], c, ref[i],
		      cr, err, bound, sabs[i]);
	}
out:
	nv_free(&a);
	nv_free(&b);
	free(cin);
	free(ref);
	free(got);
	free(sabs);
}

/* NATIVE NVFP4 x MX (mixed): refused unless the device says it runs it. */
static void check_mixed(void)
{
	struct mxa_op_desc d = desc_of(8, 8, 64, MXA_DTYPE_F32, 0, MXA_SCALE_E8M0);
	struct mxa_capability cap;

	CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);
	printf("NATIVE NVFP4 x MX on %s: %s (%s)\n", test_device_name(),
	       mxa_support_name(cap.support), cap.reason);
}

#define BF16_SS "cuda-mx-sm90-bf16-ss"

struct shape {
	uint32_t m, n, k;
};

/* Ragged shapes in every M range; several tiles in M, N and K above 64. */
static const struct shape shapes[] = {
	{ 1, 1, 16 }, { 1, 300, 4096 }, { 3, 7, 48 }, { 16, 33, 272 },
	{ 5, 129, 1040 }, { 16, 17, 64 },
	{ 17, 5, 80 }, { 31, 129, 272 }, { 32, 33, 1040 }, { 20, 300, 64 },
	{ 33, 7, 4096 }, { 64, 129, 272 }, { 48, 33, 1040 }, { 63, 300, 80 },
	{ 65, 33, 272 }, { 130, 129, 64 }, { 257, 300, 80 }, { 129, 1, 1040 },
	{ 300, 260, 48 }, { 100, 20, 4096 },
	/* M <= 32 with K a multiple of 32: CUDA's skinny kernel, split K too */
	{ 9, 1, 32 }, { 7, 260, 1024 }, { 32, 129, 2048 }, { 24, 513, 320 },
};

int main(void)
{
	struct mxa_op_desc d = desc_of(1, 1, 16, MXA_DTYPE_F32, 0, MXA_SCALE_UE4M3);
	struct mxa_capability cap;
	struct mxa_plan plan;
	/* MXACCEL_TEST_QUICK=1 (under compute-sanitizer): one case a shape */
	unsigned int i, rep, reps = getenv("MXACCEL_TEST_QUICK") ? 1 : 3;

	test_seed(0x6e7666346e6174ull);
	dev = test_open_device();
	cpu = test_is_cpu(dev) ? dev : test_open_cpu();
	dev_exact = !mxa_query(dev, &d, MXA_PREF_EMULATED, &cap) &&
		    cap.support == MXA_SUPPORT_EMULATED;
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);
	printf("NATIVE NVFP4 x NVFP4 on %s: %s (%s); EMULATED: %s\n", test_device_name(),
	       mxa_support_name(cap.support), cap.reason, dev_exact ? "yes" : "no");
	if (cap.support == MXA_SUPPORT_NONE) {
		/* Refused before anything runs. */
		struct nv_mx a, b;
		struct c_args ca = { MXA_DTYPE_F32, 0, NULL, 0, 0 };
		uint32_t out[4];
		bool pad_ok;

		nv_random(&a, 2, 32, 0);
		nv_random(&b, 2, 32, 0);
		CHECK_RET(gemm_on(dev, &a, &b, &ca, MXA_PREF_NATIVE, out, &pad_ok), -EOPNOTSUPP);
		nv_free(&a);
		nv_free(&b);
		printf("no NATIVE NVFP4 gemm: refused with -EOPNOTSUPP\n");
		goto done;
	}
	check_mixed();
	for (i = 0; i < TEST_ARRAY_SIZE(shapes); i++) {
		const struct shape *sh = &shapes[i];

		d = desc_of(sh->m, sh->n, sh->k, MXA_DTYPE_F32, 0, MXA_SCALE_UE4M3);
		CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), 0);
		if (nvfp4_gamma(plan.kernel, sh->k) < 0) {
			printf("NATIVE NVFP4 runs on %s, whose bound test_nvfp4 checks: skipped\n",
			       plan.kernel);
			goto skip;
		}
		printf("M %u N %u K %u: %s\n", sh->m, sh->n, sh->k, plan.kernel);
		/* three random cases a shape, the third with NaN scales */
		for (rep = 0; rep < reps; rep++)
			one_case(sh->m, sh->n, sh->k, plan.kernel, NULL, rep == 2);
		/* bf16-ss runs every M: also where the plan takes another path */
		if (!strncmp(plan.kernel, "cuda-mx-sm90", 12) &&
		    strcmp(plan.kernel, BF16_SS)) {
			for (rep = 0; rep < reps; rep++)
				one_case(sh->m, sh->n, sh->k, BF16_SS, BF16_SS, rep == 2);
		}
	}
	printf("%u cases, %u results checked (%u special), %u EMULATED bit-identical to cpu; worst error / bound (fp32, bf16): M<=16 %.3g %.3g, M<=32 %.3g %.3g, M<=64 %.3g %.3g, M>64 %.3g %.3g\n",
	       n_cases, n_checked, n_special, n_bitexact, worst[0][0], worst[0][1], worst[1][0],
	       worst[1][1], worst[2][0], worst[2][1], worst[3][0], worst[3][1]);
done:
	if (cpu != dev)
		mxa_device_close(cpu);
	mxa_device_close(dev);
	return test_finish();
skip:
	if (cpu != dev)
		mxa_device_close(cpu);
	mxa_device_close(dev);
	test_finish();
	return 77;
}
