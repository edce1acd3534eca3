// SPDX-License-Identifier: MIT
/*
 * Buffers: allocation, read, write and map with their -EINVAL, -ENOMEM and
 * -EOVERFLOW (including size_t wrap) and a failed call changing nothing;
 * wrapped user memory read and written in place (or refused with
 * -EOPNOTSUPP where buffers are buffer objects); dma-buf export and import,
 * refused by the cpu and shared between two handles of an accel device.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static struct mxa_device *dev;
static struct mxa_device_info dinfo;	/* dev's */
static bool is_cpu, is_accel;

static void test_buffers(void)
{
	struct mxa_buffer *b = (struct mxa_buffer *)&b, *w;
	uint8_t data[64], back[64], user[48];
	void *p = NULL;
	unsigned int i;

	CHECK_RET(mxa_buffer_alloc(NULL, 16, &b), -EINVAL);
	CHECK_RET(mxa_buffer_alloc(dev, 16, NULL), -EINVAL);
	CHECK_RET(mxa_buffer_alloc(dev, 0, &b), -EINVAL);
	CHECK(b == NULL, "a failed alloc left *out set");
	CHECK_RET(mxa_buffer_alloc(dev, SIZE_MAX, &b), -ENOMEM);
	CHECK_RET(mxa_buffer_alloc(dev, SIZE_MAX - 40, &b), -ENOMEM);

	CHECK_RET(mxa_buffer_alloc(dev, 64, &b), 0);
	if (!b)
		return;
	CHECK(mxa_buffer_size(b) == 64, "size %zu", mxa_buffer_size(b));
	CHECK(mxa_buffer_size(NULL) == 0, "size of NULL");
	for (i = 0; i < 64; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	CHECK_RET(mxa_buffer_write(b, 0, data, 64), 0);
	CHECK_RET(mxa_buffer_read(b, 0, back, 64), 0);
	CHECK(!memcmp(data, back, 64), "buffer read back differs");
	CHECK_RET(mxa_buffer_write(b, 60, data + 60, 4), 0);
	CHECK_RET(mxa_buffer_write(b, 64, data, 0), 0);
	CHECK_RET(mxa_buffer_write(b, 61, data, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, 65, data, 0), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, SIZE_MAX, data, 2), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, 2, data, SIZE_MAX), -EOVERFLOW);
	CHECK_RET(mxa_buffer_read(b, 61, back, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_read(b, SIZE_MAX - 1, back, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(NULL, 0, data, 4), -EINVAL);
	CHECK_RET(mxa_buffer_write(b, 0, NULL, 4), -EINVAL);
	CHECK_RET(mxa_buffer_write(b, 0, NULL, 0), 0);
	CHECK_RET(mxa_buffer_read(NULL, 0, back, 4), -EINVAL);
	CHECK_RET(mxa_buffer_read(b, 0, NULL, 4), -EINVAL);
	CHECK_RET(mxa_buffer_read(b, 0, back, 64), 0);
	CHECK(!memcmp(data, back, 64), "a failed write changed the buffer");

	if (dinfo.host_visible) {
		CHECK_RET(mxa_buffer_map(b, &p), 0);
		CHECK(p && !memcmp(p, data, 64), "map does not show the contents");
	} else {
		/* cuda: device memory, reached by read and write only. */
		CHECK_RET(mxa_buffer_map(b, &p), -EOPNOTSUPP);
	}
	CHECK_RET(mxa_buffer_map(NULL, &p), -EINVAL);
	CHECK_RET(mxa_buffer_map(b, NULL), -EINVAL);
	mxa_buffer_free(b);

	/* Wrapped user memory: the library reads and writes it in place. */
	memset(user, 0x11, sizeof(user));
	CHECK_RET(mxa_buffer_wrap(NULL, user, 48, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, NULL, 48, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, user, 0, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, user, 48, NULL), -EINVAL);
	w = (struct mxa_buffer *)&w;
	if (!is_cpu) {
		/*
		 * accel: buffers are buffer objects; no host memory.  cuda
		 * wraps device memory only: host memory is -EINVAL.
		 */
		int ret = mxa_buffer_wrap(dev, user, 48, &w);

		CHECK(is_accel ? ret == -EOPNOTSUPP :
		      !dinfo.host_visible ? ret == -EINVAL :
			       ret == 0 || ret == -EOPNOTSUPP,
		      "buffer_wrap on %s: %d", dinfo.name, ret);
		if (ret) {
			CHECK(!w, "a refused wrap left *out set");
			return;
		}
		mxa_buffer_free(w);
	}
	w = NULL;
	CHECK_RET(mxa_buffer_wrap(dev, user, 48, &w), 0);
	if (w) {
		CHECK_RET(mxa_buffer_write(w, 8, data, 8), 0);
		CHECK(!memcmp(user + 8, data, 8), "wrap write missed memory");
		CHECK_RET(mxa_buffer_map(w, &p), 0);
		CHECK(p == user, "wrapped buffer maps elsewhere");
		CHECK_RET(mxa_buffer_write(w, 41, data, 8), -EOVERFLOW);
		mxa_buffer_free(w);
		CHECK(user[0] == 0x11, "freeing a wrapped buffer touched it");
	}
}

/*
 * dma-buf sharing: the cpu refuses it; an accel device exports a buffer
 * object and a second handle of the same device imports it, the two
 * buffers share their bytes, and the original stays usable after the
 * import is freed.
 */
static void test_dmabuf(void)
{
	struct mxa_buffer *b = NULL, *imp = (struct mxa_buffer *)&imp;
	struct mxa_device *dev2 = NULL;
	uint8_t data[256], back[256];
	int fd = -1, nul = open("/dev/null", O_RDONLY | O_CLOEXEC), ret;
	bool shared = false;
	unsigned int i;

	CHECK_RET(mxa_buffer_export_dmabuf(NULL, &fd), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(NULL, nul, &imp), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(dev, nul, NULL), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(dev, -1, &imp), -EBADF);
	CHECK(!imp, "a failed import left *out set");
	if (mxa_buffer_alloc(dev, 4096, &b)) {
		CHECK(0, "cannot allocate");
		close(nul);
		return;
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	CHECK_RET(mxa_buffer_write(b, 0, data, sizeof(data)), 0);
	CHECK_RET(mxa_buffer_export_dmabuf(b, NULL), -EINVAL);
	ret = mxa_buffer_export_dmabuf(b, &fd);
	if (is_cpu) {
		CHECK(ret == -EOPNOTSUPP, "cpu dma-buf export: %d", ret);
		imp = (struct mxa_buffer *)&imp;
		CHECK_RET(mxa_buffer_import_dmabuf(dev, nul, &imp),
			  -EOPNOTSUPP);
		CHECK(!imp, "a refused import left *out set");
	} else if (is_accel && !dinfo.conformance) {
		/* A hardware engine's buffers are device memory: not shared. */
		CHECK(ret == -EOPNOTSUPP,
		      "device-memory dma-buf export: %d, fd %d", ret, fd);
	} else if (is_accel) {
		CHECK(ret == 0 && fd >= 0, "accel dma-buf export: %d, fd %d",
		      ret, fd);
		/* Not a dma-buf. */
		ret = mxa_buffer_import_dmabuf(dev, nul, &imp);
		CHECK(ret == -EBADF || ret == -EINVAL,
		      "import of /dev/null: %d", ret);
		imp = NULL;
		CHECK_RET(mxa_device_open(test_device_name(), &dev2), 0);
		if (dev2)
			CHECK_RET(mxa_buffer_import_dmabuf(dev2, fd, &imp), 0);
		shared = imp != NULL;
	}
	if (fd >= 0)
		close(fd);
	if (shared) {
		CHECK(mxa_buffer_size(imp) >= sizeof(data),
		      "imported size %zu", mxa_buffer_size(imp));
		CHECK(!mxa_buffer_read(imp, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "the imported buffer shows other bytes");
		data[7] ^= 0xff;
		CHECK_RET(mxa_buffer_write(imp, 7, data + 7, 1), 0);
		CHECK(!mxa_buffer_read(b, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "a write through the import is not in the original");
		mxa_buffer_free(imp);
		/* The original outlives its import, also as an operand. */
		{
			struct mxa_buffer *c = NULL;
			struct mxa_matrix a = {
				.data = b, .scale = b, .scale_offset = 64,
				.elem = MXA_ELEM_E4M3, .rows = 1, .cols = 32,
			};
			struct mxa_dense d = {
				.dtype = MXA_DTYPE_F32, .rows = 1, .cols = 1,
			};

			CHECK(!mxa_buffer_alloc(dev, 4, &c), "alloc C");
			d.buf = c;
			CHECK_RET(mxa_gemm(dev, &a, &a, &d, 0, MXA_PREF_AUTO),
				  0);
			mxa_buffer_free(c);
		}
		CHECK(!mxa_buffer_read(b, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "freeing the import changed the original");
	}
	mxa_buffer_free(b);
	mxa_device_close(dev2);
	close(nul);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	dinfo = test_device_info(dev);
	is_cpu = !strcmp(dinfo.backend, "cpu");
	is_accel = !strcmp(dinfo.backend, "accel");
	test_buffers();
	test_dmabuf();
	mxa_device_close(dev);
	return test_finish();
}
