// SPDX-License-Identifier: MIT
/*
 * Devices and backends: mxa_device_open() rejects malformed names with
 * -EINVAL and absent devices with -ENODEV and leaves *out NULL; "auto" never
 * picks a conformance device; a NULL name follows $MXACCEL_DEVICE and an
 * unknown value (or an unknown $MXACCEL_THREADS) is an error, not a default;
 * mxa_device_info() describes the device under test truthfully,
 * mxa_device_set_threads() works or says -EOPNOTSUPP, mxa_backend_info()
 * lists every backend with a reason for an absent one, and freeing NULL is
 * a no-op.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev;
static struct mxa_device_info dinfo;	/* dev's */
static bool is_cpu, is_accel;

static void test_devices(void)
{
	struct mxa_device *d = (struct mxa_device *)&d;	/* not NULL */
	struct mxa_device_info info;
	struct mxa_backend_info bi;
	unsigned int i, n;

	CHECK_RET(mxa_device_open("cpu", NULL), -EINVAL);
	CHECK_RET(mxa_device_open("nonsense", &d), -EINVAL);
	CHECK(d == NULL, "a failed open left *out set");
	CHECK_RET(mxa_device_open("", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:-1", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:x", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:0x", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cuda:7", &d), -ENODEV);
	CHECK_RET(mxa_device_open("cpu:1", &d), -ENODEV);
	CHECK(d == NULL, "a failed open left *out set");

	CHECK_RET(mxa_device_open("cpu:0", &d), 0);
	mxa_device_close(d);
	d = NULL;
	CHECK_RET(mxa_device_open("auto", &d), 0);
	/* auto never picks a conformance device (design section 5). */
	if (d && !mxa_device_info(d, &info))
		CHECK(!info.conformance, "auto opened %s, a conformance device",
		      info.name);
	mxa_device_close(d);

	/* NULL means $MXACCEL_DEVICE, else auto; an unknown value fails. */
	unsetenv("MXACCEL_DEVICE");
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	mxa_device_close(d);
	setenv("MXACCEL_DEVICE", "nonsense", 1);
	CHECK_RET(mxa_device_open(NULL, &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu", &d), 0);	/* a name wins */
	mxa_device_close(d);
	setenv("MXACCEL_DEVICE", "cuda:7", 1);
	CHECK_RET(mxa_device_open(NULL, &d), -ENODEV);
	setenv("MXACCEL_DEVICE", "cpu", 1);
	d = NULL;
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(!strcmp(info.name, "cpu"), "MXACCEL_DEVICE=cpu opened %s",
		      info.name);
	mxa_device_close(d);
	/* ... and the device under test by its name. */
	setenv("MXACCEL_DEVICE", test_device_name(), 1);
	d = NULL;
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(!strcmp(info.name, dinfo.name),
		      "MXACCEL_DEVICE=%s opened %s", test_device_name(),
		      info.name);
	mxa_device_close(d);
	unsetenv("MXACCEL_DEVICE");

	/* An unknown MXACCEL_THREADS is an error, not a default. */
	setenv("MXACCEL_THREADS", "many", 1);
	CHECK_RET(mxa_device_open("cpu", &d), -EINVAL);
	setenv("MXACCEL_THREADS", "2", 1);
	d = NULL;
	CHECK_RET(mxa_device_open("cpu", &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(info.threads == 2, "MXACCEL_THREADS=2 gave %u threads",
		      info.threads);
	mxa_device_close(d);
	unsetenv("MXACCEL_THREADS");

	CHECK_RET(mxa_device_info(NULL, &info), -EINVAL);
	CHECK_RET(mxa_device_info(dev, NULL), -EINVAL);
	memset(&info, 0xcc, sizeof(info));
	CHECK_RET(mxa_device_info(dev, &info), 0);
	if (is_cpu)
		CHECK(!strcmp(info.name, "cpu") &&
		      !strcmp(info.backend, "cpu") &&
		      memchr(info.description, 0, sizeof(info.description)) &&
		      info.threads >= 1 && info.host_visible == 1 &&
		      info.conformance == 0,
		      "cpu device info: name %.8s backend %.8s threads %u host %d conf %d",
		      info.name, info.backend, info.threads, info.host_visible,
		      info.conformance);
	else
		CHECK(memchr(info.name, 0, sizeof(info.name)) &&
		      !strcmp(info.name, test_device_name()) &&
		      !strncmp(info.name, info.backend, strlen(info.backend)) &&
		      info.name[strlen(info.backend)] == ':' &&
		      memchr(info.description, 0, sizeof(info.description)) &&
		      *info.description &&
		      (!is_accel || (info.threads == 0 &&
				     info.host_visible == 1)),
		      "%s device info: name %.8s backend %.8s threads %u host %d conf %d",
		      test_device_name(), info.name, info.backend,
		      info.threads, info.host_visible, info.conformance);

	CHECK_RET(mxa_device_set_threads(NULL, 1), -EINVAL);
	if (info.threads) {
		CHECK_RET(mxa_device_set_threads(dev, 3), 0);
		CHECK(!mxa_device_info(dev, &info) && info.threads == 3,
		      "set_threads(3) gave %u", info.threads);
		CHECK_RET(mxa_device_set_threads(dev, 0), 0);
		CHECK_RET(mxa_device_set_threads(dev, 1u << 30), -EINVAL);
		CHECK(!mxa_device_info(dev, &info) && info.threads >= 1,
		      "a failed set_threads broke the pool: %u", info.threads);
	} else {
		/* No worker threads: nothing to set, and it says so. */
		CHECK(!is_cpu, "the cpu device has no worker threads");
		CHECK_RET(mxa_device_set_threads(dev, 3), -EOPNOTSUPP);
		CHECK_RET(mxa_device_set_threads(dev, 0), -EOPNOTSUPP);
		CHECK(!mxa_device_info(dev, &info) && info.threads == 0,
		      "a refused set_threads gave %u threads", info.threads);
	}

	n = mxa_backend_count();
	CHECK(n >= 1, "no backends");
	for (i = 0; i < n; i++) {
		memset(&bi, 0xcc, sizeof(bi));
		CHECK_RET(mxa_backend_info(i, &bi), 0);
		CHECK(memchr(bi.name, 0, sizeof(bi.name)) && *bi.name &&
		      memchr(bi.reason, 0, sizeof(bi.reason)),
		      "backend %u info not terminated", i);
		if (!strcmp(bi.name, "cpu"))
			CHECK(bi.available && bi.devices == 1,
			      "cpu backend: available %d devices %u",
			      bi.available, bi.devices);
		else if (!strcmp(bi.name, dinfo.backend))
			CHECK(bi.available && bi.devices >= 1,
			      "%s backend of the device under test: available %d devices %u (%s)",
			      bi.name, bi.available, bi.devices, bi.reason);
		else if (!bi.available)
			CHECK(*bi.reason, "backend %s absent without a reason",
			      bi.name);
	}
	CHECK_RET(mxa_backend_info(n, &bi), -EINVAL);
	CHECK_RET(mxa_backend_info(0, NULL), -EINVAL);

	/* Freeing NULL is a no-op everywhere. */
	mxa_device_close(NULL);
	mxa_buffer_free(NULL);
	mxa_fence_free(NULL);
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
	test_devices();
	mxa_device_close(dev);
	return test_finish();
}
