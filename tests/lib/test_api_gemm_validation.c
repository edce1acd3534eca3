// SPDX-License-Identifier: MIT
/*
 * mxa_gemm() and mxa_gemm_async() validation: every misuse (NULL
 * arguments, unknown enums, flags and preferences, zero or mismatched
 * shapes, strides below one row, buffers too small and size_t wrap,
 * misaligned dense offsets, C overlapping an input, a buffer of another
 * device) returns the documented errno, leaves C alone and, async, sets no
 * fence; the valid request still computes the right C afterwards.  One
 * invalid field per check, on an otherwise valid request.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev;

/* C is preset to a pattern: a failed call must leave it alone. */
static void fill_c(struct test_req *r)
{
	uint8_t pat[48];

	memset(pat, 0x5a, sizeof(pat));
	mxa_buffer_write(r->cb, 0, pat, sizeof(pat));
}

static bool c_untouched(struct test_req *r)
{
	uint8_t got[48];
	size_t i;

	if (mxa_buffer_read(r->cb, 0, got, sizeof(got)))
		return false;
	for (i = 0; i < sizeof(got); i++)
		if (got[i] != 0x5a)
			return false;
	return true;
}

/* Run gemm, sync and async, on a copy of r modified by the caller. */
static void expect_gemm(struct test_req *r, const struct test_req *q, uint32_t flags,
			enum mxa_pref pref, int want, int line)
{
	struct mxa_fence *f = (struct mxa_fence *)&f;
	int ret;

	fill_c(r);
	ret = mxa_gemm(dev, &q->a, &q->b, &q->c, flags, pref);
	if (ret != want)
		test_fail(__FILE__, line, "mxa_gemm returned %d (%s), want %d",
			  ret, mxa_strerror(ret), want);
	if (want && !c_untouched(r))
		test_fail(__FILE__, line, "a failed mxa_gemm wrote C");
	ret = mxa_gemm_async(dev, &q->a, &q->b, &q->c, flags, pref, &f);
	if (ret != want)
		test_fail(__FILE__, line, "mxa_gemm_async returned %d, want %d",
			  ret, want);
	if (ret) {
		if (f)
			test_fail(__FILE__, line,
				  "a failed mxa_gemm_async left *fence set");
		return;
	}
	ret = mxa_fence_wait(f, -1);
	if (ret)
		test_fail(__FILE__, line, "fence of a valid gemm: %d", ret);
	mxa_fence_free(f);
}

#define GEMM_EXPECT(r, q, flags, pref, want) \
	expect_gemm(r, q, flags, pref, want, __LINE__)

static void test_gemm_validation(void)
{
	struct mxa_device *dev2 = NULL;
	struct mxa_buffer *other = NULL, *big = NULL;
	struct test_req r, q;
	float c[12];
	unsigned int i;

	test_req_init(dev, &r);
	q = r;
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_EMULATED, 0);
	CHECK(!mxa_buffer_read(r.cb, 0, c, sizeof(c)) && c[0] == 64.0f &&
	      c[11] == 64.0f, "baseline gemm: C[0] = %g, want 64", c[0]);
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_NATIVE, test_native_ret(dev, MXA_OP_GEMM));
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_AUTO, 0);
	GEMM_EXPECT(&r, &q, MXA_GEMM_ACCUMULATE, MXA_PREF_AUTO, 0);

	/* NULL arguments. */
	CHECK_RET(mxa_gemm(NULL, &r.a, &r.b, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, NULL, &r.b, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, &r.a, NULL, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, NULL, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0, 0, NULL), -EINVAL);
	q = r;
	q.a.data = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.scale = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.buf = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* Unknown enums and flags. */
	q = r;
	q.a.elem = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.elem = 6;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.scale_layout = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.dtype = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	GEMM_EXPECT(&r, &q, 2, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, 0x80000000u, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, MXA_GEMM_ACCUMULATE | 4, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, 0, 3, -EINVAL);
	GEMM_EXPECT(&r, &q, 0, (enum mxa_pref)-1, -EINVAL);

	/* Zero sizes, K % 32, shapes that do not match. */
	q = r;
	q.a.rows = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.rows = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.cols = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 48;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 16;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.cols = 32;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.rows = 3;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);	/* C has 4 rows */
	q = r;
	q.c.cols = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.rows = 3;
	q.c.cols = 4;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);	/* transposed C */

	/* Strides below one row. */
	q = r;
	q.a.data_stride = 63;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.data_stride = 31;			/* e2m1: 32 bytes a row */
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.scale_stride = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.stride = 8;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	/* Swizzled scales have no row stride. */
	q = r;
	q.a.scale_layout = MXA_LAYOUT_SWIZZLED;
	q.a.scale_stride = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* Buffers too small, offsets past the end, size_t wrap. */
	q = r;
	q.a.rows = q.c.rows = 5;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_offset = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_stride = 65;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.b.scale_offset = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.scale_layout = MXA_LAYOUT_SWIZZLED;	/* needs 512 bytes */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.offset = 4;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.dtype = MXA_DTYPE_BF16;
	q.c.offset = 26;			/* 24 bytes of bf16 + 26 > 48 */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_offset = SIZE_MAX - 10;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.b.scale_offset = SIZE_MAX;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_stride = SIZE_MAX / 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.scale_stride = SIZE_MAX / 3 + 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.stride = SIZE_MAX - 3;		/* a multiple of 4 */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.offset = SIZE_MAX - 3;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);

	/* Misaligned dense offset or stride (the library's rule). */
	q = r;
	q.c.offset = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.stride = 14;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* C overlapping an input in the same buffer. */
	if (!mxa_buffer_alloc(dev, 4096, &big)) {
		q = r;
		q.a.data = big;
		q.c.buf = big;
		q.c.offset = 252;		/* A's data is [0, 256) */
		GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
		q.c.offset = 256;
		fill_c(&r);
		CHECK_RET(mxa_gemm(dev, &q.a, &q.b, &q.c, 0, 0), 0);
		mxa_buffer_free(big);
	}

	/* A buffer of another device. */
	if (!mxa_device_open(test_device_name(), &dev2) && dev2 != dev &&
	    !mxa_buffer_alloc(dev2, 4096, &other)) {
		q = r;
		q.a.data = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		q = r;
		q.b.scale = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		q = r;
		q.c.buf = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		/* The same request on the other device is fine. */
		q = r;
		q.a.data = other;
		CHECK_RET(mxa_gemm(dev2, &q.a, &q.b, &q.c, 0, 0), -EXDEV);
	}
	mxa_buffer_free(other);
	mxa_device_close(dev2);

	/* The C that the successful calls left is still right. */
	for (i = 0; i < 12; i++)
		c[i] = 0;
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_EMULATED), 0);
	CHECK(!mxa_buffer_read(r.cb, 0, c, sizeof(c)) && c[5] == 64.0f,
	      "gemm after the misuse: C[5] = %g", c[5]);
	test_req_free(&r);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	test_gemm_validation();
	mxa_device_close(dev);
	return test_finish();
}
