// SPDX-License-Identifier: MIT
/*
 * Asynchronous GEMM through fences: several jobs in flight at once complete
 * with the synchronous result; a poll and a short wait answer 0 or -ETIME,
 * a signalled fence stays signalled; freeing a fence whose job may still
 * run waits for it; validation errors come back at submission with no
 * fence.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev;

static void test_async(void)
{
	const uint32_t m = 96, n = 96, k = 1024;
	struct test_mx a, b;
	struct mxa_matrix ma, mb;
	struct mxa_dense c[4], cs;
	struct mxa_fence *f[4] = { NULL };
	uint32_t *want = calloc((size_t)m * n, 4), *got = calloc((size_t)m * n, 4);
	unsigned int i, polls_busy = 0;
	size_t j;
	int ret;

	test_seed(0x6173796e63ull);
	test_mx_alloc(&a, MXA_ELEM_E5M2, m, k);
	test_mx_alloc(&b, MXA_ELEM_E2M3, n, k);
	for (j = 0; j < (size_t)m * k; j++)
		a.code[j] = test_rand_code(MXA_ELEM_E5M2, false);
	for (j = 0; j < (size_t)n * k; j++)
		b.code[j] = test_rand_code(MXA_ELEM_E2M3, false);
	memset(a.scale, 127, (size_t)m * k / 32);
	memset(b.scale, 126, (size_t)n * k / 32);
	if (test_mx_upload(dev, &a, NULL, &ma) ||
	    test_mx_upload(dev, &b, NULL, &mb) ||
	    test_dense_upload(dev, MXA_DTYPE_F32, m, n, NULL, 0, 0, &cs)) {
		CHECK(0, "async setup failed");
		return;
	}
	CHECK_RET(mxa_gemm(dev, &ma, &mb, &cs, 0, MXA_PREF_EMULATED), 0);
	test_dense_download(&cs, want);

	/* Several jobs in flight at once, then poll, then wait. */
	for (i = 0; i < 4; i++) {
		if (test_dense_upload(dev, MXA_DTYPE_F32, m, n, NULL, 0, 0,
				      &c[i])) {
			CHECK(0, "cannot allocate C");
			return;
		}
		ret = mxa_gemm_async(dev, &ma, &mb, &c[i], 0,
				     MXA_PREF_EMULATED, &f[i]);
		CHECK(ret == 0 && f[i], "gemm_async %u: %d", i, ret);
	}
	for (i = 0; i < 4; i++) {
		if (!f[i])
			continue;
		ret = mxa_fence_wait(f[i], 0);
		CHECK(ret == 0 || ret == -ETIME, "poll: %d", ret);
		polls_busy += ret == -ETIME;
		ret = mxa_fence_wait(f[i], 1000);	/* 1 us */
		CHECK(ret == 0 || ret == -ETIME, "short wait: %d", ret);
		CHECK_RET(mxa_fence_wait(f[i], -1), 0);
		CHECK_RET(mxa_fence_wait(f[i], 0), 0);	/* stays signalled */
		CHECK_RET(mxa_fence_wait(f[i], 5000000000ll), 0);
		CHECK_RET(test_dense_download(&c[i], got), 0);
		CHECK(!memcmp(want, got, (size_t)m * n * 4),
		      "async gemm %u differs from the synchronous one", i);
		mxa_fence_free(f[i]);
	}
	printf("async: %u of 4 polls found the job running\n", polls_busy);
	CHECK_RET(mxa_fence_wait(NULL, 0), -EINVAL);

	/* Freeing a fence whose job may still run waits for it. */
	f[0] = NULL;
	CHECK_RET(mxa_gemm_async(dev, &ma, &mb, &c[0], MXA_GEMM_ACCUMULATE,
				 MXA_PREF_AUTO, &f[0]), 0);
	mxa_fence_free(f[0]);

	/* Validation errors come back at submission, with no fence. */
	f[1] = (struct mxa_fence *)&f[1];
	mb.cols = 32;
	CHECK_RET(mxa_gemm_async(dev, &ma, &mb, &c[1], 0, MXA_PREF_AUTO,
				 &f[1]), -EINVAL);
	CHECK(!f[1], "failed gemm_async left *fence set");
	mb.cols = k;

	for (i = 0; i < 4; i++)
		test_dense_release(&c[i]);
	test_dense_release(&cs);
	test_mx_release(&ma);
	test_mx_release(&mb);
	test_mx_free(&a);
	test_mx_free(&b);
	free(want);
	free(got);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	test_async();
	mxa_device_close(dev);
	return test_finish();
}
