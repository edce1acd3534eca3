// SPDX-License-Identifier: MIT
/*
 * Errors of the accel device reach the caller with the documented errno:
 *
 *   - NATIVE on the software engine (a conformance device): -EOPNOTSUPP,
 *     with a reason naming the device, before anything is submitted; on
 *     the PCI engine (hardware) NATIVE is planned, named and runs, and
 *     gives EMULATED's bytes on inputs whose sums are exact in fp32;
 *   - bad sizes, offsets, strides and foreign buffers: -EINVAL, -EOVERFLOW,
 *     -EXDEV from the library's validation, before any SUBMIT (counted by
 *     the ioctl() wrapper of tests/e2e/common) and without touching C; a
 *     dimension above the device's limit is refused as mxa_query() says;
 *   - a job that hangs (module parameter test_hang=1, job_timeout_ms
 *     lowered so that queues created afterwards time out fast): mxa_gemm()
 *     and mxa_fence_wait() return -ETIMEDOUT, a short wait -ETIME, a job
 *     queued behind the hung one -ECANCELED, a batch the first error; and
 *     once jobs run again the next GEMM on the same device succeeds (the
 *     library replaces the guilty queue) and is bit-identical to the cpu's
 *     EMULATED result.
 *
 * The module parameters are restored on exit.  Needs root for them (the
 * timeout subtests are skipped otherwise).  Runs on $MXACCEL_E2E_DEVICE
 * (accel:0 by default).  Exits 4 (skip) without an accel device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"

#define PARAMS "/sys/module/mxaccel/parameters/"
#define TEST_TIMEOUT_MS 300

static struct mxa_device *dev, *cpu;

/* --- module parameters ----------------------------------------------------- */

static int read_param(const char *name, unsigned int *v)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%u", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

static int write_param(const char *name, unsigned int v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%u\n", v) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static unsigned int saved_timeout, saved_hang;
static bool saved;

static void restore_params(void)
{
	if (!saved)
		return;
	write_param("test_hang", saved_hang);
	write_param("job_timeout_ms", saved_timeout);
	saved = false;
}

/* --- a valid request: A 4 x 64 e4m3, B 3 x 64 e2m1, C 4 x 3 fp32 ------------ */

struct req {
	struct mxa_matrix a, b;
	struct mxa_dense c;
};

static void req_init(struct mxa_device *on, struct req *r)
{
	uint8_t ad[4 * 64], bd[3 * 32], sc[8];
	size_t i;

	for (i = 0; i < sizeof(ad); i++)
		ad[i] = (uint8_t)(0x30 + i % 16);	/* e4m3 0.5 .. 0.94 */
	for (i = 0; i < sizeof(bd); i++)
		bd[i] = (uint8_t)(0x2 | (i % 8) << 4);	/* e2m1 1 and others */
	memset(sc, 127, sizeof(sc));
	memset(r, 0, sizeof(*r));
	r->a = (struct mxa_matrix){
		.data = e2e_buffer(on, ad, sizeof(ad)),
		.scale = e2e_buffer(on, sc, 8), .elem = MXA_ELEM_E4M3,
		.rows = 4, .cols = 64,
	};
	r->b = (struct mxa_matrix){
		.data = e2e_buffer(on, bd, sizeof(bd)),
		.scale = e2e_buffer(on, sc, 6), .elem = MXA_ELEM_E2M1,
		.rows = 3, .cols = 64,
	};
	r->c = (struct mxa_dense){
		.buf = e2e_buffer(on, NULL, 48), .dtype = MXA_DTYPE_F32,
		.rows = 4, .cols = 3,
	};
	if (!r->a.data || !r->a.scale || !r->b.data || !r->b.scale ||
	    !r->c.buf) {
		printf("Bail out! cannot allocate a request\n");
		exit(1);
	}
}

static void req_free(struct req *r)
{
	mxa_buffer_free(r->a.data);
	mxa_buffer_free(r->a.scale);
	mxa_buffer_free(r->b.data);
	mxa_buffer_free(r->b.scale);
	mxa_buffer_free(r->c.buf);
}

static void fill_c(const struct req *r)
{
	uint8_t pat[48];

	memset(pat, 0x5a, sizeof(pat));
	mxa_buffer_write(r->c.buf, 0, pat, sizeof(pat));
}

static bool c_untouched(const struct req *r)
{
	uint8_t got[48];
	size_t i;

	if (mxa_buffer_read(r->c.buf, 0, got, sizeof(got)))
		return false;
	for (i = 0; i < sizeof(got); i++)
		if (got[i] != 0x5a)
			return false;
	return true;
}

/* The result of r on the cpu, EMULATED: what the device must produce. */
static void req_reference(const struct req *r, uint8_t want[48])
{
	struct req h;
	uint8_t buf[4 * 64];

	req_init(cpu, &h);
	mxa_buffer_read(r->a.data, 0, buf, 4 * 64);
	mxa_buffer_write(h.a.data, 0, buf, 4 * 64);
	mxa_buffer_read(r->b.data, 0, buf, 3 * 32);
	mxa_buffer_write(h.b.data, 0, buf, 3 * 32);
	E2E_CHECK_RET(mxa_gemm(cpu, &h.a, &h.b, &h.c, 0, MXA_PREF_EMULATED),
		      0);
	mxa_buffer_read(h.c.buf, 0, want, 48);
	req_free(&h);
}

/* Run q (a modified r) on dev: want, nothing submitted, C untouched. */
static void expect(const struct req *r, const struct req *q, uint32_t flags,
		   int want, int line)
{
	uint64_t before = e2e_submits();
	struct mxa_fence *f = (struct mxa_fence *)&f;
	int ret;

	fill_c(r);
	ret = mxa_gemm(dev, &q->a, &q->b, &q->c, flags, MXA_PREF_AUTO);
	if (ret != want)
		e2e_fail(line, "mxa_gemm = %d (%s), want %d", ret,
			 mxa_strerror(ret), want);
	ret = mxa_gemm_async(dev, &q->a, &q->b, &q->c, flags, MXA_PREF_AUTO,
			     &f);
	if (ret != want)
		e2e_fail(line, "mxa_gemm_async = %d, want %d", ret, want);
	if (ret)
		E2E_CHECK(!f, "line %d: a failed mxa_gemm_async left a fence",
			  line);
	else
		mxa_fence_free(f);
	if (!want)
		return;
	if (e2e_submits() != before)
		e2e_fail(line, "a rejected gemm made %llu SUBMIT(s)",
			 (unsigned long long)(e2e_submits() - before));
	if (!c_untouched(r))
		e2e_fail(line, "a rejected gemm wrote C");
}

#define EXPECT(r, q, flags, want) expect(r, q, flags, want, __LINE__)

/*
 * A hardware device runs NATIVE.  r's products have at most 5 significant
 * bits and its sums of 64 stay far inside fp32's 24, so every order of
 * summation is exact: NATIVE must give EMULATED's bytes here.
 */
static void test_native_hardware(const struct mxa_device_info *info,
				 const struct mxa_op_desc *d)
{
	struct mxa_fence *f = NULL;
	struct mxa_capability cap;
	struct mxa_gemm_op op;
	struct mxa_plan plan;
	uint8_t want[48], got[48];
	struct req r;

	req_init(dev, &r);
	req_reference(&r, want);
	E2E_CHECK_RET(mxa_plan(dev, d, MXA_PREF_NATIVE, &plan), 0);
	E2E_CHECK(plan.support == MXA_SUPPORT_NATIVE && *plan.kernel,
		  "NATIVE plan on %s: support %d, kernel '%s'", info->name,
		  plan.support, plan.kernel);
	E2E_CHECK_RET(mxa_query(dev, d, MXA_PREF_NATIVE, &cap), 0);
	E2E_CHECK(cap.support == MXA_SUPPORT_NATIVE &&
		  !strcmp(cap.kernel, plan.kernel),
		  "NATIVE query: support %d, kernel '%s'", cap.support,
		  cap.kernel);
	e2e_note("NATIVE gemm on %s: kernel %s", info->name, plan.kernel);

	fill_c(&r);
	E2E_CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_NATIVE), 0);
	E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, sizeof(got)) &&
		  !memcmp(got, want, sizeof(got)),
		  "NATIVE gemm differs from cpu EMULATED");
	fill_c(&r);
	E2E_CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0,
				     MXA_PREF_NATIVE, &f), 0);
	if (f) {
		E2E_CHECK_RET(mxa_fence_wait(f, -1), 0);
		mxa_fence_free(f);
	}
	E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, sizeof(got)) &&
		  !memcmp(got, want, sizeof(got)),
		  "NATIVE gemm_async differs from cpu EMULATED");
	fill_c(&r);
	op = (struct mxa_gemm_op){ .a = &r.a, .b = &r.b, .c = &r.c };
	E2E_CHECK_RET(mxa_gemm_batch(dev, &op, 1, MXA_PREF_NATIVE, NULL), 0);
	E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, sizeof(got)) &&
		  !memcmp(got, want, sizeof(got)),
		  "NATIVE gemm_batch differs from cpu EMULATED");
	req_free(&r);
	e2e_subtest("NATIVE runs on %s (hardware) and gives EMULATED's bytes on exact inputs",
		    info->name);
}

static void test_native(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
		.b_elem = MXA_ELEM_E2M1, .m = 4, .n = 3, .k = 64,
	};
	struct mxa_device_info info;
	struct mxa_fence *f = (struct mxa_fence *)&f;
	struct mxa_capability cap;
	struct mxa_gemm_op op;
	struct mxa_plan plan;
	uint64_t before = e2e_submits();
	struct req r;

	req_init(dev, &r);
	E2E_CHECK_RET(mxa_device_info(dev, &info), 0);
	if (!info.conformance) {
		req_free(&r);
		test_native_hardware(&info, &d);
		return;
	}
	E2E_CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), -EOPNOTSUPP);
	E2E_CHECK(plan.support == MXA_SUPPORT_NONE &&
		  strstr(plan.reason, info.name) && strstr(plan.reason, "native"),
		  "NATIVE plan: support %d, reason '%s'", plan.support,
		  plan.reason);
	e2e_note("NATIVE gemm on %s: %s", info.name, plan.reason);
	E2E_CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);
	E2E_CHECK(cap.support == MXA_SUPPORT_NONE && *cap.reason,
		  "NATIVE query: support %d", cap.support);

	fill_c(&r);
	E2E_CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_NATIVE),
		      -EOPNOTSUPP);
	E2E_CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0,
				     MXA_PREF_NATIVE, &f), -EOPNOTSUPP);
	E2E_CHECK(!f, "a refused gemm_async left a fence");
	op = (struct mxa_gemm_op){ .a = &r.a, .b = &r.b, .c = &r.c };
	E2E_CHECK_RET(mxa_gemm_batch(dev, &op, 1, MXA_PREF_NATIVE, NULL),
		      -EOPNOTSUPP);
	E2E_CHECK(c_untouched(&r), "a refused NATIVE gemm wrote C");

	/* Quantize and dequantize: A's codes as fp32, B as the MX side. */
	{
		struct mxa_dense src = {
			.buf = r.a.data, .dtype = MXA_DTYPE_F32, .rows = 1,
			.cols = 32,
		};
		struct mxa_matrix mx = r.b;
		uint8_t before_a[256], after_a[256], before_b[96], after_b[96];

		mx.rows = 1;
		mx.cols = 32;
		mxa_buffer_read(r.a.data, 0, before_a, sizeof(before_a));
		mxa_buffer_read(r.b.data, 0, before_b, sizeof(before_b));
		E2E_CHECK_RET(mxa_quantize(dev, &src, &mx, MXA_SCALE_FLOOR,
					   MXA_PREF_NATIVE), -EOPNOTSUPP);
		E2E_CHECK_RET(mxa_dequantize(dev, &mx, &src, MXA_PREF_NATIVE),
			      -EOPNOTSUPP);
		mxa_buffer_read(r.a.data, 0, after_a, sizeof(after_a));
		mxa_buffer_read(r.b.data, 0, after_b, sizeof(after_b));
		E2E_CHECK(!memcmp(before_a, after_a, sizeof(after_a)) &&
			  !memcmp(before_b, after_b, sizeof(after_b)),
			  "a refused quantize or dequantize wrote");
	}
	E2E_CHECK(e2e_submits() == before, "refused requests made SUBMITs");
	req_free(&r);
	e2e_subtest("NATIVE is refused with -EOPNOTSUPP and a reason, before any SUBMIT");
}

static void test_validation(void)
{
	struct mxa_device *dev2 = NULL, *none = (struct mxa_device *)&none;
	struct mxa_buffer *other = NULL, *host = NULL, *b = NULL;
	struct req r, q;
	uint8_t want[48], got[48];

	req_init(dev, &r);
	req_reference(&r, want);
	q = r;
	EXPECT(&r, &q, 0, 0);
	E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, 48) &&
		  !memcmp(got, want, 48), "the valid request differs from cpu");

	/* K not a multiple of 32; shapes that do not match. */
	q = r;
	q.a.cols = q.b.cols = 48;
	EXPECT(&r, &q, 0, -EINVAL);
	q = r;
	q.b.cols = 32;
	EXPECT(&r, &q, 0, -EINVAL);
	q = r;
	q.c.cols = 2;
	EXPECT(&r, &q, 0, -EINVAL);
	q = r;
	q.a.rows = 0;
	EXPECT(&r, &q, 0, -EINVAL);
	EXPECT(&r, &q, 8, -EINVAL);
	/* Past the end of a buffer object, and size_t wrap-around. */
	q = r;
	q.a.rows = q.c.rows = 5;
	EXPECT(&r, &q, 0, -EOVERFLOW);
	q = r;
	q.b.data_offset = 1;
	EXPECT(&r, &q, 0, -EOVERFLOW);
	q = r;
	q.a.data_offset = SIZE_MAX - 8;
	EXPECT(&r, &q, 0, -EOVERFLOW);
	q = r;
	q.c.stride = SIZE_MAX - 3;
	EXPECT(&r, &q, 0, -EOVERFLOW);
	q = r;
	q.a.scale_layout = MXA_LAYOUT_SWIZZLED;		/* needs 512 bytes */
	EXPECT(&r, &q, 0, -EOVERFLOW);
	/* C overlapping an input. */
	q = r;
	q.c.buf = r.a.data;
	EXPECT(&r, &q, 0, -EINVAL);

	/* Buffers of another handle of the same device, and of the cpu. */
	E2E_CHECK_RET(mxa_device_open(e2e_device(), &dev2), 0);
	if (dev2)
		other = e2e_buffer(dev2, NULL, 4096);
	host = e2e_buffer(cpu, NULL, 4096);
	if (other && host) {
		q = r;
		q.a.data = other;
		EXPECT(&r, &q, 0, -EXDEV);
		q = r;
		q.c.buf = host;
		EXPECT(&r, &q, 0, -EXDEV);
	}
	mxa_buffer_free(other);
	mxa_buffer_free(host);
	mxa_device_close(dev2);

	/* A batch is validated whole: one bad op and none runs. */
	{
		struct mxa_gemm_op ops[5];
		uint64_t before = e2e_submits();
		unsigned int i;

		q = r;
		q.a.data_offset = 4;
		for (i = 0; i < 5; i++)
			ops[i] = (struct mxa_gemm_op){ .a = &r.a, .b = &r.b,
						       .c = &r.c };
		ops[2].a = &q.a;
		fill_c(&r);
		E2E_CHECK_RET(mxa_gemm_batch(dev, ops, 5, MXA_PREF_AUTO, NULL),
			      -EOVERFLOW);
		E2E_CHECK_RET(mxa_gemm_batch(dev, ops, 0, MXA_PREF_AUTO, NULL),
			      -EINVAL);
		E2E_CHECK_RET(mxa_gemm_batch(dev, ops, MXA_BATCH_MAX + 1,
					     MXA_PREF_AUTO, NULL), -EINVAL);
		E2E_CHECK(c_untouched(&r) && e2e_submits() == before,
			  "a rejected batch ran");
	}

	/* Quantize: K % 32, and a destination too small. */
	{
		struct mxa_dense src = {
			.buf = r.c.buf, .dtype = MXA_DTYPE_F32, .rows = 1,
			.cols = 12,
		};
		struct mxa_matrix mx = r.b;
		uint64_t before = e2e_submits();

		mx.rows = 1;
		mx.cols = 12;
		E2E_CHECK_RET(mxa_quantize(dev, &src, &mx, MXA_SCALE_FLOOR,
					   MXA_PREF_AUTO), -EINVAL);
		src.cols = mx.cols = 32;
		mx.rows = src.rows = 7;
		E2E_CHECK_RET(mxa_quantize(dev, &src, &mx, MXA_SCALE_FLOOR,
					   MXA_PREF_AUTO), -EOVERFLOW);
		E2E_CHECK(e2e_submits() == before, "a rejected quantize ran");
	}

	/* Buffers: size 0, and sizes no device can hold. */
	E2E_CHECK_RET(mxa_buffer_alloc(dev, 0, &b), -EINVAL);
	E2E_CHECK_RET(mxa_buffer_alloc(dev, SIZE_MAX, &b), -ENOMEM);
	E2E_CHECK_RET(mxa_buffer_alloc(dev, (size_t)1 << 40, &b), -ENOMEM);
	E2E_CHECK(!b, "a failed alloc left a buffer");
	E2E_CHECK_RET(mxa_device_open("accel:9", &none), -ENODEV);
	E2E_CHECK(!none, "a failed open left a device");
	req_free(&r);
	e2e_subtest("bad sizes, offsets and buffers: -EINVAL/-EOVERFLOW/-EXDEV before any SUBMIT");
}

/*
 * M above the device's limit (DRM_MXACCEL_PARAM_MAX_DIM = 2^20): valid for
 * the library, beyond the device.  mxa_query() says NONE with the reason,
 * and mxa_gemm() fails with -EOPNOTSUPP without submitting.
 */
static void test_device_limit(void)
{
	const uint32_t m = (1u << 20) + 1;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E2M1,
		.b_elem = MXA_ELEM_E2M1, .m = m, .n = 1, .k = 32,
	};
	struct mxa_matrix a = {
		.data = e2e_buffer(dev, NULL, (size_t)m * 16),
		.scale = e2e_buffer(dev, NULL, m), .elem = MXA_ELEM_E2M1,
		.rows = m, .cols = 32,
	};
	struct mxa_matrix b = {
		.data = e2e_buffer(dev, NULL, 16),
		.scale = e2e_buffer(dev, NULL, 1), .elem = MXA_ELEM_E2M1,
		.rows = 1, .cols = 32,
	};
	struct mxa_dense c = {
		.buf = e2e_buffer(dev, NULL, (size_t)m * 4),
		.dtype = MXA_DTYPE_F32, .rows = m, .cols = 1,
	};
	struct mxa_capability cap;
	uint64_t before = e2e_submits();

	E2E_CHECK(a.data && a.scale && b.data && b.scale && c.buf,
		  "cannot allocate %u rows", m);
	E2E_CHECK_RET(mxa_query(dev, &d, MXA_PREF_AUTO, &cap), 0);
	E2E_CHECK(cap.support == MXA_SUPPORT_NONE && strstr(cap.reason, "limit"),
		  "M = %u: support %d, reason '%s'", m, cap.support,
		  cap.reason);
	e2e_note("M = %u: %s", m, cap.reason);
	if (a.data && a.scale && b.data && b.scale && c.buf)
		E2E_CHECK_RET(mxa_gemm(dev, &a, &b, &c, 0, MXA_PREF_AUTO),
			      -EOPNOTSUPP);
	E2E_CHECK(e2e_submits() == before, "the refused gemm was submitted");
	mxa_buffer_free(a.data);
	mxa_buffer_free(a.scale);
	mxa_buffer_free(b.data);
	mxa_buffer_free(b.scale);
	mxa_buffer_free(c.buf);
	e2e_subtest("a dimension above the device's limit is refused as mxa_query() says");
}

/* --- hung jobs ------------------------------------------------------------ */

static bool hang(unsigned int on)
{
	int ret = write_param("test_hang", on);

	E2E_CHECK(!ret, "cannot set test_hang=%u: %s", on, mxa_strerror(ret));
	return !ret;
}

static double ms_since(int64_t t0)
{
	return (double)(e2e_now_ns() - t0) * 1e-6;
}

static void test_timeouts(void)
{
	struct mxa_fence *f1 = NULL, *f2 = NULL, *fb = NULL;
	struct mxa_gemm_op ops[3];
	struct req r;
	int64_t t0;
	double ms;
	unsigned int i;

	/* A device opened now makes its queue with the short timeout. */
	req_init(dev, &r);
	if (!hang(1))
		goto out;

	t0 = e2e_now_ns();
	fill_c(&r);
	E2E_CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO),
		      -ETIMEDOUT);
	ms = ms_since(t0);
	e2e_note("hung gemm: -ETIMEDOUT after %.0f ms", ms);
	E2E_CHECK(ms >= TEST_TIMEOUT_MS * 0.8 && ms < 20000,
		  "-ETIMEDOUT after %.0f ms, timeout %u ms", ms,
		  TEST_TIMEOUT_MS);
	E2E_CHECK(c_untouched(&r), "a job that hung wrote C");
	e2e_subtest("a hung job: mxa_gemm returns -ETIMEDOUT after the job timeout");

	/*
	 * Two jobs: the first hangs, the second waits behind it on the same
	 * (fresh) queue and is canceled when the first times out.
	 */
	E2E_CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO,
				     &f1), 0);
	E2E_CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO,
				     &f2), 0);
	if (f1 && f2) {
		E2E_CHECK_RET(mxa_fence_wait(f1, 0), -ETIME);
		E2E_CHECK_RET(mxa_fence_wait(f1, 1000000), -ETIME);
		E2E_CHECK_RET(mxa_fence_wait(f2, 0), -ETIME);
		E2E_CHECK_RET(mxa_fence_wait(f1, -1), -ETIMEDOUT);
		E2E_CHECK_RET(mxa_fence_wait(f1, 0), -ETIMEDOUT);
		E2E_CHECK_RET(mxa_fence_wait(f2, 5000000000ll), -ECANCELED);
	}
	mxa_fence_free(f1);
	mxa_fence_free(f2);
	e2e_subtest("async: -ETIME while hung, -ETIMEDOUT, then -ECANCELED for the job behind it");

	/* A batch carries the first error; sync and async. */
	for (i = 0; i < 3; i++)
		ops[i] = (struct mxa_gemm_op){ .a = &r.a, .b = &r.b,
					       .c = &r.c };
	E2E_CHECK_RET(mxa_gemm_batch(dev, ops, 3, MXA_PREF_AUTO, NULL),
		      -ETIMEDOUT);
	E2E_CHECK_RET(mxa_gemm_batch(dev, ops, 3, MXA_PREF_AUTO, &fb), 0);
	if (fb)
		E2E_CHECK_RET(mxa_fence_wait(fb, -1), -ETIMEDOUT);
	mxa_fence_free(fb);
	e2e_subtest("a hung batch: -ETIMEDOUT, sync and through its fence");

	/* Jobs run again: the same device works, on a fresh queue. */
	if (!hang(0))
		goto out;
	{
		uint8_t want[48], got[48];

		req_reference(&r, want);
		fill_c(&r);
		E2E_CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO),
			      0);
		E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, 48) &&
			  !memcmp(got, want, 48),
			  "the gemm after the hang differs from the cpu's");
		fill_c(&r);
		f1 = NULL;
		E2E_CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0,
					     MXA_PREF_AUTO, &f1), 0);
		if (f1)
			E2E_CHECK_RET(mxa_fence_wait(f1, -1), 0);
		mxa_fence_free(f1);
		E2E_CHECK(!mxa_buffer_read(r.c.buf, 0, got, 48) &&
			  !memcmp(got, want, 48),
			  "the async gemm after the hang differs");
	}
	e2e_subtest("after the hang the next GEMM on the same device succeeds, bit-exact");
	req_free(&r);
	return;
out:
	req_free(&r);
	e2e_subtest("timeouts (could not set the module parameters)");
}

int main(void)
{
	const unsigned int tests = 7;
	int ret;

	dev = e2e_open(e2e_device());
	cpu = e2e_open("cpu");
	e2e_plan(tests);
	test_native();
	test_validation();
	test_device_limit();

	ret = read_param("test_hang", &saved_hang);
	if (!ret)
		ret = read_param("job_timeout_ms", &saved_timeout);
	if (!ret) {
		saved = true;
		atexit(restore_params);
		ret = write_param("job_timeout_ms", TEST_TIMEOUT_MS);
	}
	if (ret) {
		unsigned int i;

		for (i = 4; i <= tests; i++)
			printf("ok %u # SKIP module parameters: %s\n", i,
			       mxa_strerror(ret));
		mxa_device_close(cpu);
		mxa_device_close(dev);
		return e2e_exit_status();
	}
	/* A fresh handle: its queue is created with the short timeout. */
	mxa_device_close(dev);
	dev = e2e_open(e2e_device());
	test_timeouts();
	restore_params();
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return e2e_exit_status();
}
