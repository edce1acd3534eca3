/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the CUDA backend's tests: open cuda:0 or skip, and
 * compare whole buffers between two devices.
 */
#ifndef MXA_CUDATEST_H
#define MXA_CUDATEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* cuda:0, or exit 77 (skip) with the backend's reason when there is none. */
static inline struct mxa_device *cudatest_open(void)
{
	struct mxa_device_info info;
	struct mxa_backend_info bi;
	struct mxa_device *dev = NULL;
	unsigned int i;
	int ret;

	for (i = 0; i < mxa_backend_count(); i++) {
		if (mxa_backend_info(i, &bi) || strcmp(bi.name, "cuda"))
			continue;
		if (!bi.available) {
			printf("skip: %s\n", bi.reason);
			exit(TEST_SKIP);
		}
	}
	ret = mxa_device_open("cuda:0", &dev);
	if (ret) {
		fprintf(stderr, "FAIL: mxa_device_open(\"cuda:0\") = %d (%s)\n",
			ret, mxa_strerror(ret));
		exit(1);
	}
	if (!mxa_device_info(dev, &info))
		printf("%s: %s\n", info.name, info.description);
	return dev;
}

/* A whole buffer read back to the host (the caller frees it). */
static inline uint8_t *cudatest_read(struct mxa_buffer *buf)
{
	size_t n = mxa_buffer_size(buf);
	uint8_t *h = malloc(n ? n : 1);

	if (!h || mxa_buffer_read(buf, 0, h, n)) {
		fprintf(stderr, "FAIL: cannot read a buffer back\n");
		exit(1);
	}
	return h;
}

/* Number of bytes that differ between two buffers of the same size. */
static inline size_t cudatest_diff(struct mxa_buffer *x, struct mxa_buffer *y,
				   size_t *first)
{
	size_t n = mxa_buffer_size(x), i, bad = 0;
	uint8_t *a = cudatest_read(x), *b = cudatest_read(y);

	*first = 0;
	if (n != mxa_buffer_size(y)) {
		bad = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (a[i] == b[i])
			continue;
		if (!bad++)
			*first = i;
	}
out:
	free(a);
	free(b);
	return bad;
}

#endif /* MXA_CUDATEST_H */
