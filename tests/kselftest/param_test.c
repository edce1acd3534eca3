// SPDX-License-Identifier: GPL-2.0
/*
 * GET_PARAM: every parameter, the values the module parameters and the
 * uapi imply, unknown parameters and non-zero padding; the DRM version the
 * driver reports; unknown driver ioctls.
 */
#include "mxaccel_test.h"

FIXTURE(param) {
	int fd;
};

FIXTURE_SETUP(param)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	mxt_params_restore();
}

FIXTURE_TEARDOWN(param)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/* GET_PARAM with value pre-filled with 0xcc: the kernel must write it. */
static int get_param(int fd, __u32 param, __u64 *value)
{
	struct drm_mxaccel_get_param args;
	int ret;

	memset(&args, 0xcc, sizeof(args));
	args.param = param;
	args.pad = 0;
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &args);
	*value = args.value;
	return ret;
}

TEST_F(param, version)
{
	char name[64], date[64], desc[128];
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name);
	v.date = date;
	v.date_len = sizeof(date);
	v.desc = desc;
	v.desc_len = sizeof(desc);
	ASSERT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	ASSERT_EQ(strlen(MXT_DRIVER_NAME), v.name_len);
	ASSERT_EQ(0, memcmp(name, MXT_DRIVER_NAME, v.name_len));
	EXPECT_EQ(0, v.version_major);
	EXPECT_EQ(DRM_MXACCEL_UAPI_VERSION, v.version_minor);
}

TEST_F(param, uapi_version)
{
	__u64 v;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_UAPI_VERSION, &v));
	EXPECT_EQ(DRM_MXACCEL_UAPI_VERSION, v);
}

TEST_F(param, engine_kind)
{
	__u64 v;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_ENGINE_KIND, &v));
	EXPECT_TRUE(v == DRM_MXACCEL_ENGINE_SOFTWARE ||
		    v == DRM_MXACCEL_ENGINE_HARDWARE);
}

TEST_F(param, masks)
{
	const __u64 all_elems = (1ull << DRM_MXACCEL_ELEM_E4M3) |
				(1ull << DRM_MXACCEL_ELEM_E5M2) |
				(1ull << DRM_MXACCEL_ELEM_E2M3) |
				(1ull << DRM_MXACCEL_ELEM_E3M2) |
				(1ull << DRM_MXACCEL_ELEM_E2M1);
	const __u64 all_ops = (1ull << DRM_MXACCEL_OP_GEMM) |
			      (1ull << DRM_MXACCEL_OP_QUANTIZE);
	const __u64 all_modes = (1ull << DRM_MXACCEL_SCALE_FLOOR) |
				(1ull << DRM_MXACCEL_SCALE_RCEIL) |
				(1ull << DRM_MXACCEL_SCALE_CEIL) |
				(1ull << DRM_MXACCEL_SCALE_EVEN) |
				(1ull << DRM_MXACCEL_SCALE_NVFP4);
	__u64 kind, elems, ops, modes;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_ENGINE_KIND,
			       &kind));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_ELEM_MASK, &elems));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_OP_MASK, &ops));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_SCALE_MODE_MASK,
			       &modes));
	/* Nothing outside the uapi's enums is ever reported. */
	EXPECT_EQ(0, elems & ~all_elems);
	EXPECT_EQ(0, ops & ~all_ops);
	EXPECT_EQ(0, modes & ~all_modes);
	/* The software engine implements all of it. */
	if (kind == DRM_MXACCEL_ENGINE_SOFTWARE) {
		EXPECT_EQ(all_elems, elems);
		EXPECT_EQ(all_ops, ops);
		EXPECT_EQ(all_modes, modes);
	}
}

TEST_F(param, limits)
{
	__u64 ops, dim, bo, op_size;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_OPS, &ops));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_DIM, &dim));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_BO_SIZE, &bo));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_OP_SIZE, &op_size));
	EXPECT_LE(1, ops);
	EXPECT_GT(1ull << 32, ops);
	/* K is a multiple of 32, so the largest K must be one too. */
	EXPECT_LE(32, dim);
	EXPECT_EQ(0, dim % 32);
	EXPECT_GT(1ull << 32, dim);
	EXPECT_LE(4096, bo);
	/* The driver knows exactly this header's op. */
	EXPECT_EQ(sizeof(struct drm_mxaccel_op), op_size);
	EXPECT_EQ(0, op_size % 8);
}

TEST_F(param, max_queues_follows_module_param)
{
	unsigned int sysfs;
	__u64 v;

	if (mxt_param_read("max_queues", &sysfs))
		SKIP(return, "no readable max_queues module parameter");
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_QUEUES, &v));
	EXPECT_EQ(sysfs, v);
	if (!mxt_params_writable())
		SKIP(return, "module parameters are not writable");
	ASSERT_EQ(0, mxt_param_write("max_queues", sysfs + 3));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_QUEUES, &v));
	EXPECT_EQ(sysfs + 3, v);
}

TEST_F(param, job_timeout_follows_module_param)
{
	unsigned int sysfs;
	__u64 v;

	if (mxt_param_read("job_timeout_ms", &sysfs))
		SKIP(return, "no readable job_timeout_ms module parameter");
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS,
			       &v));
	EXPECT_EQ(sysfs, v);
	EXPECT_LT(0, v);
	if (!mxt_params_writable())
		SKIP(return, "module parameters are not writable");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 1234));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS,
			       &v));
	EXPECT_EQ(1234, v);
}

/* job_timeout_ms takes 1 .. 3600000 ms; 0 would fail every job at once. */
TEST_F(param, job_timeout_bounds)
{
	__u64 v;

	if (!mxt_params_writable())
		SKIP(return, "module parameters are not writable");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 1));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 3600000));
	EXPECT_EQ(-EINVAL, mxt_param_write("job_timeout_ms", 0));
	EXPECT_EQ(-EINVAL, mxt_param_write("job_timeout_ms", 3600001));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS,
			       &v));
	EXPECT_EQ(3600000, v);
}

/*
 * The parameters of version 2 report their module parameters, and follow
 * the writable ones at once; STATUS_WINDOW covers a full queue.
 */
TEST_F(param, v2_params_follow_module_params)
{
	static const struct {
		__u32 param;
		const char *name;
		bool writable;
	} p[] = {
		{ DRM_MXACCEL_PARAM_RINGS, "rings", false },
		{ DRM_MXACCEL_PARAM_QUEUE_DEPTH, "queue_depth", true },
		{ DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES, "max_device_queues",
		  true },
		{ DRM_MXACCEL_PARAM_INLINE_MAX_WORK, "inline_max_work", true },
	};
	unsigned int i, sysfs;
	__u64 v, window, depth, kind;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_ENGINE_KIND, &kind));
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		ASSERT_EQ(0, get_param(self->fd, p[i].param, &v));
		/* A hardware engine never runs jobs in the submitter. */
		if (p[i].param == DRM_MXACCEL_PARAM_INLINE_MAX_WORK &&
		    kind == DRM_MXACCEL_ENGINE_HARDWARE) {
			EXPECT_EQ(0, v);
			continue;
		}
		/* The rings of a hardware engine are the device's. */
		if (p[i].param == DRM_MXACCEL_PARAM_RINGS &&
		    kind == DRM_MXACCEL_ENGINE_HARDWARE)
			continue;
		if (mxt_param_read(p[i].name, &sysfs)) {
			TH_LOG("no readable %s module parameter", p[i].name);
			continue;
		}
		EXPECT_EQ(sysfs, v) TH_LOG("%s", p[i].name);
		if (!p[i].writable || !mxt_param_writable(p[i].name))
			continue;
		ASSERT_EQ(0, mxt_param_write(p[i].name, sysfs + 1));
		ASSERT_EQ(0, get_param(self->fd, p[i].param, &v));
		EXPECT_EQ(sysfs + 1, v) TH_LOG("%s", p[i].name);
		ASSERT_EQ(0, mxt_param_write(p[i].name, sysfs));
	}
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &v));
	EXPECT_LE(1, v);
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_STATUS_WINDOW,
			       &window));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_QUEUE_DEPTH,
			       &depth));
	EXPECT_LE(1, depth);
	/* Every unfinished job of a full queue can be waited for. */
	EXPECT_LE(depth, window);
	if (mxt_param_writable("queue_depth")) {
		/* No depth beyond the window is accepted. */
		EXPECT_NE(0, mxt_param_write("queue_depth", window + 1));
		EXPECT_EQ(-EINVAL, mxt_param_write("queue_depth", 0));
		ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_QUEUE_DEPTH,
				       &v));
		EXPECT_EQ(depth, v);
	}
}

/* Version 3: device memory, on hardware engines only, in whole pages. */
TEST_F(param, device_memory)
{
	__u64 kind, vram, max_bo;

	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_ENGINE_KIND, &kind));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_DEVICE_MEMORY,
			       &vram));
	ASSERT_EQ(0, get_param(self->fd, DRM_MXACCEL_PARAM_MAX_BO_SIZE,
			       &max_bo));
	if (kind == DRM_MXACCEL_ENGINE_SOFTWARE) {
		EXPECT_EQ(0, vram);
		return;
	}
	EXPECT_LT(0, vram);
	EXPECT_EQ(0, vram % 4096);
	/* Objects come from device memory: none is larger. */
	EXPECT_EQ(vram, max_bo);
}

TEST_F(param, unknown_param)
{
	static const __u32 bad[] = {
		DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES + 1, 64, 0x80000000u,
		0xffffffffu,
	};
	unsigned int i;
	__u64 v;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, get_param(self->fd, bad[i], &v));
		/* Nothing written on failure. */
		EXPECT_EQ(0xccccccccccccccccull, v);
	}
}

TEST_F(param, pad)
{
	struct drm_mxaccel_get_param args;

	memset(&args, 0, sizeof(args));
	args.param = DRM_MXACCEL_PARAM_UAPI_VERSION;
	args.pad = 1;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_GET_PARAM,
				     &args));
	args.pad = 0x80000000u;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_GET_PARAM,
				     &args));
	args.pad = 0;
	EXPECT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_GET_PARAM, &args));
	EXPECT_EQ(DRM_MXACCEL_UAPI_VERSION, args.value);
}

TEST_F(param, every_param_twice_is_stable)
{
	__u32 p;

	for (p = 0; p <= DRM_MXACCEL_PARAM_DEVICE_MEMORY; p++) {
		__u64 a, b;

		ASSERT_EQ(0, get_param(self->fd, p, &a));
		ASSERT_EQ(0, get_param(self->fd, p, &b));
		EXPECT_EQ(a, b);
	}
}

TEST_F(param, unknown_driver_ioctl)
{
	/* The first number past the driver's table, and the last one. */
	static const unsigned int nrs[] = { DRM_MXACCEL_JOB_WAIT + 1, 0x5f };
	__u64 buf[8];
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < ARRAY_SIZE(nrs); i++)
		EXPECT_EQ(-EINVAL,
			  mxt_ioctl(self->fd,
				    DRM_IOWR(DRM_COMMAND_BASE + nrs[i], buf),
				    buf));
}

TEST_HARNESS_MAIN
