/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the mxaccel kselftests: find the device by its DRM
 * driver name, raw ioctl wrappers that return 0 or -errno, buffer objects
 * mapped into the test, queues, submits, waits with absolute
 * CLOCK_MONOTONIC deadlines, syncobjs, and the module parameters in sysfs.
 *
 * Including this header also installs a constructor: a program run where
 * no mxaccel device exists prints "1..0 # SKIP" and exits with KSFT_SKIP
 * (4) before any test starts, and a program that finds one restores the
 * module parameters the tests change (job_timeout_ms, max_queues,
 * test_hang) when it exits, whatever its tests left behind.
 */
#ifndef MXACCEL_TEST_H
#define MXACCEL_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "kselftest_harness.h"

#define MXT_DRIVER_NAME		"mxaccel"
#define MXT_PARAM_DIR		"/sys/module/mxaccel/parameters/"
#define MXT_NSEC_PER_MSEC	1000000LL
#define MXT_NSEC_PER_SEC	1000000000LL

/* Generous: the tests also run under full-system emulation. */
#define MXT_JOB_TIMEOUT_MS	20000

/* ---- ioctls ---------------------------------------------------------- */

static inline int mxt_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && errno == EINTR);
	return ret == -1 ? -errno : 0;
}

/* The DRM driver name behind fd, into name[size]; 0 or -errno. */
static inline int mxt_driver_name(int fd, char *name, size_t size)
{
	struct drm_version v;
	int ret;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = size - 1;
	ret = mxt_ioctl(fd, DRM_IOCTL_VERSION, &v);
	if (ret)
		return ret;
	name[v.name_len < size ? v.name_len : size - 1] = '\0';
	return 0;
}

static inline int mxt_open_if_mxaccel(const char *path)
{
	char name[64];
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (mxt_driver_name(fd, name, sizeof(name)) ||
	    strcmp(name, MXT_DRIVER_NAME)) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/*
 * The engine kind $MXACCEL_ENGINE asks for: "software" or "hardware"
 * (DRM_MXACCEL_ENGINE_*), or -1 for any.
 */
static inline int mxt_engine_wanted(void)
{
	const char *env = getenv("MXACCEL_ENGINE");

	if (!env || !*env)
		return -1;
	if (!strcmp(env, "software"))
		return DRM_MXACCEL_ENGINE_SOFTWARE;
	if (!strcmp(env, "hardware"))
		return DRM_MXACCEL_ENGINE_HARDWARE;
	fprintf(stderr, "MXACCEL_ENGINE=%s: not software or hardware\n", env);
	exit(1);
}

static inline int mxt_open_if_engine(const char *path, int kind)
{
	struct drm_mxaccel_get_param p = {
		.param = DRM_MXACCEL_PARAM_ENGINE_KIND,
	};
	int fd = mxt_open_if_mxaccel(path);

	if (fd < 0 || kind < 0)
		return fd;
	if (ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &p) || p.value != (__u64)kind) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/*
 * Open the first mxaccel node: /dev/accel/accel* (Linux 6.2 and later) or
 * /dev/dri/renderD* (before), chosen by the DRM driver name, never by the
 * node's number, and by the engine kind $MXACCEL_ENGINE names, if it does.
 * $MXACCEL_DEVICE names a node explicitly.  Returns the fd or -ENODEV.
 */
static inline int mxt_open(void)
{
	static const struct {
		const char *dir;
		const char *prefix;
	} where[] = {
		{ "/dev/accel", "accel" },
		{ "/dev/dri", "renderD" },
	};
	const char *env = getenv("MXACCEL_DEVICE");
	int kind = mxt_engine_wanted();
	unsigned int i;

	if (env && *env)
		return mxt_open_if_mxaccel(env);
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		DIR *dir = opendir(where[i].dir);
		struct dirent *de;
		int fd = -ENODEV;

		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			char path[300];

			if (strncmp(de->d_name, where[i].prefix,
				    strlen(where[i].prefix)))
				continue;
			snprintf(path, sizeof(path), "%s/%s", where[i].dir,
				 de->d_name);
			fd = mxt_open_if_engine(path, kind);
			if (fd >= 0)
				break;
		}
		closedir(dir);
		if (fd >= 0)
			return fd;
	}
	return -ENODEV;
}

static inline int mxt_get_param(int fd, __u32 param, __u64 *value)
{
	struct drm_mxaccel_get_param args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.param = param;
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &args);
	if (!ret)
		*value = args.value;
	return ret;
}

static inline int mxt_bo_create(int fd, __u64 size, __u32 *handle,
				__u64 *mmap_offset)
{
	struct drm_mxaccel_bo_create args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.size = size;
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, &args);
	if (ret)
		return ret;
	*handle = args.handle;
	if (mmap_offset)
		*mmap_offset = args.mmap_offset;
	return 0;
}

static inline int mxt_bo_info(int fd, __u32 handle, __u64 *size,
			      __u64 *mmap_offset)
{
	struct drm_mxaccel_bo_info args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.handle = handle;
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_BO_INFO, &args);
	if (ret)
		return ret;
	if (size)
		*size = args.size;
	if (mmap_offset)
		*mmap_offset = args.mmap_offset;
	return 0;
}

static inline int mxt_bo_wait(int fd, __u32 handle, __s64 abs_timeout_ns)
{
	struct drm_mxaccel_bo_wait args;

	memset(&args, 0, sizeof(args));
	args.handle = handle;
	args.timeout_ns = abs_timeout_ns;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_BO_WAIT, &args);
}

static inline int mxt_gem_close(int fd, __u32 handle)
{
	struct drm_gem_close args;

	memset(&args, 0, sizeof(args));
	args.handle = handle;
	return mxt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
}

static inline int mxt_queue_create(int fd, __u32 *queue_id, __u32 *syncobj)
{
	struct drm_mxaccel_queue_create args;
	int ret;

	memset(&args, 0, sizeof(args));
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &args);
	if (ret)
		return ret;
	*queue_id = args.queue_id;
	if (syncobj)
		*syncobj = args.syncobj;
	return 0;
}

static inline int mxt_queue_destroy(int fd, __u32 queue_id)
{
	struct drm_mxaccel_queue_destroy args;

	memset(&args, 0, sizeof(args));
	args.queue_id = queue_id;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_DESTROY, &args);
}

/* A SUBMIT of op_count ops, every optional field zero. */
static inline void mxt_submit_init(struct drm_mxaccel_submit *args,
				   __u32 queue_id,
				   const struct drm_mxaccel_op *ops,
				   __u32 op_count)
{
	memset(args, 0, sizeof(*args));
	args->queue_id = queue_id;
	args->ops = (uintptr_t)ops;
	args->op_count = op_count;
	args->op_size = sizeof(*ops);
	/* Output: pre-filled to prove the kernel writes it. */
	args->seqno = 0xccccccccccccccccull;
}

static inline int mxt_submit_args(int fd, struct drm_mxaccel_submit *args)
{
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_SUBMIT, args);
}

/*
 * A SUBMIT with flags (e.g. DRM_MXACCEL_SUBMIT_NO_INLINE: a job that must
 * be queued, not run in the ioctl) and no wait deadline.
 */
static inline int mxt_submit_flags(int fd, __u32 queue_id,
				   const struct drm_mxaccel_op *ops,
				   __u32 op_count, __u32 flags, __u64 *seqno)
{
	struct drm_mxaccel_submit args;
	int ret;

	mxt_submit_init(&args, queue_id, ops, op_count);
	args.flags = flags;
	ret = mxt_submit_args(fd, &args);
	if (!ret && seqno)
		*seqno = args.seqno;
	return ret;
}

static inline int mxt_submit(int fd, __u32 queue_id,
			     const struct drm_mxaccel_op *ops, __u32 op_count,
			     __u64 *seqno)
{
	struct drm_mxaccel_submit args;
	int ret;

	mxt_submit_init(&args, queue_id, ops, op_count);
	ret = mxt_submit_args(fd, &args);
	if (!ret && seqno)
		*seqno = args.seqno;
	return ret;
}

static inline __s64 mxt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * MXT_NSEC_PER_SEC + ts.tv_nsec;
}

/* An absolute CLOCK_MONOTONIC deadline ms milliseconds from now. */
static inline __s64 mxt_deadline_ms(__s64 ms)
{
	return mxt_now_ns() + ms * MXT_NSEC_PER_MSEC;
}

/* The deadline for a job that is expected to complete. */

/*
 * $MXACCEL_TIME_SCALE (an integer, default 1): slow kernels (KASAN, TCG)
 * set it, and waits for something that must happen "promptly" scale by it.
 */
static inline __s64 mxt_time_scale(void)
{
	const char *s = getenv("MXACCEL_TIME_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v >= 1 ? v : 1;
}

static inline __s64 mxt_scaled_ms(__s64 ms)
{
	return ms * mxt_time_scale();
}

/* How long a test waits for a job that must finish, scaled. */
static inline __s64 mxt_job_deadline(void)
{
	return mxt_deadline_ms(mxt_scaled_ms(MXT_JOB_TIMEOUT_MS));
}

/*
 * JOB_WAIT until abs_timeout_ns: the ioctl's result, and the job's status
 * in *status when it returned 0.
 */
static inline int mxt_job_wait(int fd, __u32 queue_id, __u64 seqno,
			       __s64 abs_timeout_ns, int *status)
{
	struct drm_mxaccel_job_wait args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.queue_id = queue_id;
	args.seqno = seqno;
	args.timeout_ns = abs_timeout_ns;
	args.status = (__s32)0xcccccccc;
	ret = mxt_ioctl(fd, DRM_IOCTL_MXACCEL_JOB_WAIT, &args);
	if (!ret && status)
		*status = args.status;
	return ret;
}

/* Submit ops as one job and wait for it: its status, or the -errno. */
static inline int mxt_run(int fd, __u32 queue_id,
			  const struct drm_mxaccel_op *ops, __u32 op_count)
{
	__u64 seqno;
	int ret, status;

	ret = mxt_submit(fd, queue_id, ops, op_count, &seqno);
	if (ret)
		return ret;
	ret = mxt_job_wait(fd, queue_id, seqno, mxt_job_deadline(), &status);
	/* JOB_WAIT's own timeout must not pass for a job's -ETIMEDOUT. */
	return ret ? (ret == -ETIMEDOUT ? -ETIME : ret) : status;
}

/* ---- buffer objects mapped into the test ----------------------------- */

struct mxt_bo {
	__u32 handle;
	__u64 size;		/* as BO_INFO reports it */
	__u64 mmap_offset;
	void *map;
};

static inline int mxt_bo_new(int fd, __u64 size, struct mxt_bo *bo)
{
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = mxt_bo_create(fd, size, &bo->handle, &bo->mmap_offset);
	if (ret)
		return ret;
	ret = mxt_bo_info(fd, bo->handle, &bo->size, NULL);
	if (ret)
		return ret;
	bo->map = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, bo->mmap_offset);
	if (bo->map == MAP_FAILED) {
		ret = -errno;
		bo->map = NULL;
		mxt_gem_close(fd, bo->handle);
		return ret;
	}
	return 0;
}

static inline void mxt_bo_free(int fd, struct mxt_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle)
		mxt_gem_close(fd, bo->handle);
	memset(bo, 0, sizeof(*bo));
}

static inline __u8 *mxt_bo_at(const struct mxt_bo *bo, __u64 offset)
{
	return (__u8 *)bo->map + offset;
}

/* ---- syncobjs -------------------------------------------------------- */

static inline int mxt_syncobj_create(int fd, __u32 flags, __u32 *handle)
{
	struct drm_syncobj_create args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.flags = flags;
	ret = mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &args);
	if (!ret)
		*handle = args.handle;
	return ret;
}

static inline int mxt_syncobj_destroy(int fd, __u32 handle)
{
	struct drm_syncobj_destroy args;

	memset(&args, 0, sizeof(args));
	args.handle = handle;
	return mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &args);
}

/* Wait for a binary syncobj; -ETIME when the deadline passes first. */
static inline int mxt_syncobj_wait(int fd, __u32 handle, __s64 abs_ns)
{
	struct drm_syncobj_wait args;

	memset(&args, 0, sizeof(args));
	args.handles = (uintptr_t)&handle;
	args.count_handles = 1;
	args.timeout_nsec = abs_ns;
	return mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &args);
}

/* Wait for a timeline point; -ETIME when the deadline passes first. */
static inline int mxt_syncobj_timeline_wait(int fd, __u32 handle,
					    __u64 point, __s64 abs_ns,
					    __u32 flags)
{
	struct drm_syncobj_timeline_wait args;

	memset(&args, 0, sizeof(args));
	args.handles = (uintptr_t)&handle;
	args.points = (uintptr_t)&point;
	args.count_handles = 1;
	args.timeout_nsec = abs_ns;
	args.flags = flags;
	return mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &args);
}

/* The last signalled point of a timeline syncobj. */
static inline int mxt_syncobj_query(int fd, __u32 handle, __u64 *point)
{
	struct drm_syncobj_timeline_array args;

	memset(&args, 0, sizeof(args));
	*point = 0xccccccccccccccccull;
	args.handles = (uintptr_t)&handle;
	args.points = (uintptr_t)point;
	args.count_handles = 1;
	return mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &args);
}

/*
 * Export timeline point `point` of syncobj (or its fence, for point 0 of a
 * binary syncobj) as a sync_file: transferred to a temporary binary
 * syncobj, exported from there.  Returns the sync_file fd or -errno.
 */
static inline int mxt_export_sync_file(int fd, __u32 syncobj, __u64 point)
{
	struct drm_syncobj_transfer t;
	struct drm_syncobj_handle h;
	__u32 binary;
	int ret;

	ret = mxt_syncobj_create(fd, 0, &binary);
	if (ret)
		return ret;
	memset(&t, 0, sizeof(t));
	t.src_handle = syncobj;
	t.src_point = point;
	t.dst_handle = binary;
	t.dst_point = 0;
	ret = mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
	if (!ret) {
		memset(&h, 0, sizeof(h));
		h.handle = binary;
		h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
		h.fd = -1;
		ret = mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	}
	mxt_syncobj_destroy(fd, binary);
	return ret ? ret : h.fd;
}

/* ---- module parameters ----------------------------------------------- */

static inline int mxt_param_read(const char *name, unsigned int *value)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), MXT_PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	*value = strtoul(buf, NULL, 0);
	return 0;
}

static inline int mxt_param_write(const char *name, unsigned int value)
{
	char path[128], buf[32];
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), MXT_PARAM_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", value);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * What the program found at start; put back by mxt_params_restore().
 * The optional ones (version 2 of the uapi) are restored when they existed.
 */
static struct {
	bool valid;
	unsigned int job_timeout_ms;
	unsigned int max_queues;
	bool have_queue_depth, have_max_device_queues, have_inline_max_work;
	unsigned int queue_depth;
	unsigned int max_device_queues;
	unsigned int inline_max_work;
} mxt_saved_params;

/*
 * Put the parameters the tests change back as the program found them;
 * test_hang always goes back to 0 (a hanging engine is never a state to
 * return to).  Called from setup and teardown of the tests, and at exit.
 */
static inline void mxt_params_restore(void)
{
	if (!mxt_saved_params.valid)
		return;
	if (!access(MXT_PARAM_DIR "test_hang", W_OK))
		mxt_param_write("test_hang", 0);
	if (!access(MXT_PARAM_DIR "job_timeout_ms", W_OK))
		mxt_param_write("job_timeout_ms",
				mxt_saved_params.job_timeout_ms);
	if (!access(MXT_PARAM_DIR "max_queues", W_OK))
		mxt_param_write("max_queues", mxt_saved_params.max_queues);
	if (mxt_saved_params.have_queue_depth &&
	    !access(MXT_PARAM_DIR "queue_depth", W_OK))
		mxt_param_write("queue_depth", mxt_saved_params.queue_depth);
	if (mxt_saved_params.have_max_device_queues &&
	    !access(MXT_PARAM_DIR "max_device_queues", W_OK))
		mxt_param_write("max_device_queues",
				mxt_saved_params.max_device_queues);
	if (mxt_saved_params.have_inline_max_work &&
	    !access(MXT_PARAM_DIR "inline_max_work", W_OK))
		mxt_param_write("inline_max_work",
				mxt_saved_params.inline_max_work);
}

/* Whether one more (optional) parameter exists and may be written. */
static inline bool mxt_param_writable(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), MXT_PARAM_DIR "%s", name);
	return mxt_saved_params.valid && !access(path, W_OK);
}

/* Whether the tests may change parameters: root, and sysfs writable. */
static inline bool mxt_params_writable(void)
{
	return mxt_saved_params.valid &&
	       !access(MXT_PARAM_DIR "test_hang", W_OK) &&
	       !access(MXT_PARAM_DIR "job_timeout_ms", W_OK) &&
	       !access(MXT_PARAM_DIR "max_queues", W_OK);
}

static void __attribute__((constructor)) mxt_program_init(void)
{
	int fd = mxt_open();

	if (fd < 0)
		ksft_exit_skip("no %s device in /dev/accel or /dev/dri\n",
			       MXT_DRIVER_NAME);
	close(fd);
	if (!mxt_param_read("job_timeout_ms",
			    &mxt_saved_params.job_timeout_ms) &&
	    !mxt_param_read("max_queues", &mxt_saved_params.max_queues)) {
		mxt_saved_params.valid = true;
		mxt_saved_params.have_queue_depth =
			!mxt_param_read("queue_depth",
					&mxt_saved_params.queue_depth);
		mxt_saved_params.have_max_device_queues =
			!mxt_param_read("max_device_queues",
					&mxt_saved_params.max_device_queues);
		mxt_saved_params.have_inline_max_work =
			!mxt_param_read("inline_max_work",
					&mxt_saved_params.inline_max_work);
		/* Tests run in children that _exit(): only we get here. */
		atexit(mxt_params_restore);
	}
}

/* ---- operations ------------------------------------------------------ */

/* Bytes of one row of cols elements of an MX element type. */
static inline __u64 mxt_row_bytes(__u32 elem, __u64 cols)
{
	return elem == DRM_MXACCEL_ELEM_E2M1 ? cols / 2 : cols;
}

/*
 * Byte index of scale (row, block) in the swizzled layout (128x4 tiles,
 * Documentation/formats.rst), and the bytes such a buffer needs.
 */
static inline __u64 mxt_swizzle_index(__u64 blocks, __u64 row, __u64 block)
{
	__u64 cp = (blocks + 3) / 4 * 4;

	return ((row / 128) * (cp / 4) + block / 4) * 512 + (row % 32) * 16 +
	       ((row % 128) / 32) * 4 + block % 4;
}

static inline __u64 mxt_swizzle_bytes(__u64 rows, __u64 blocks)
{
	return (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
}

/* A plain-layout MX operand with data and scales in one buffer object. */
static inline void mxt_mx(struct drm_mxaccel_mx_operand *mx, __u32 handle,
			  __u64 data_offset, __u64 scale_offset, __u32 elem)
{
	memset(mx, 0, sizeof(*mx));
	mx->data_handle = handle;
	mx->scale_handle = handle;
	mx->data_offset = data_offset;
	mx->scale_offset = scale_offset;
	mx->elem = elem;
	mx->scale_layout = DRM_MXACCEL_LAYOUT_PLAIN;
}

static inline void mxt_dense(struct drm_mxaccel_dense_operand *d,
			     __u32 handle, __u64 offset, __u32 dtype)
{
	memset(d, 0, sizeof(*d));
	d->handle = handle;
	d->offset = offset;
	d->dtype = dtype;
}

/*
 * A GEMM asking for the exact result: the tests compare with exact values,
 * and a hardware engine is exact only when asked (DRM_MXACCEL_OP_EXACT).
 */
static inline void mxt_gemm(struct drm_mxaccel_op *op, __u32 m, __u32 n,
			    __u32 k)
{
	memset(op, 0, sizeof(*op));
	op->kind = DRM_MXACCEL_OP_GEMM;
	op->flags = DRM_MXACCEL_OP_EXACT;
	op->m = m;
	op->n = n;
	op->k = k;
}

static inline void mxt_quantize(struct drm_mxaccel_op *op, __u32 m, __u32 k,
				__u32 scale_mode)
{
	memset(op, 0, sizeof(*op));
	op->kind = DRM_MXACCEL_OP_QUANTIZE;
	op->m = m;
	op->k = k;
	op->scale_mode = scale_mode;
}

static inline __u32 mxt_f32_bits(float f)
{
	__u32 u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline __u32 mxt_get_u32(const void *p)
{
	__u32 u;

	memcpy(&u, p, sizeof(u));
	return u;
}

static inline void mxt_put_u32(void *p, __u32 u)
{
	memcpy(p, &u, sizeof(u));
}

static inline __u16 mxt_get_u16(const void *p)
{
	__u16 u;

	memcpy(&u, p, sizeof(u));
	return u;
}

static inline void mxt_put_u16(void *p, __u16 u)
{
	memcpy(p, &u, sizeof(u));
}

/* True if len bytes at p all equal c. */
static inline bool mxt_all(const void *p, int c, size_t len)
{
	const __u8 *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (__u8)c)
			return false;
	return true;
}

/*
 * A 32x32x32 e4m3 GEMM with every operand in one MXT_ONES_BO_SIZE buffer
 * object: A and B all 1.0 (code 0x38, scale 2^0), so every fp32 element of
 * C, at MXT_ONES_C, is 32.0.
 */
#define MXT_ONES_BO_SIZE	8192
#define MXT_ONES_C		4096
#define MXT_ONES_C32		0x42000000u	/* 32.0f */

static inline void mxt_ones_gemm(struct drm_mxaccel_op *op,
				 const struct mxt_bo *bo)
{
	memset(bo->map, 0x38, 1024);
	memset(mxt_bo_at(bo, 1024), 127, 32);
	memset(mxt_bo_at(bo, 2048), 0x38, 1024);
	memset(mxt_bo_at(bo, 3072), 127, 32);
	mxt_gemm(op, 32, 32, 32);
	mxt_mx(&op->a, bo->handle, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op->b, bo->handle, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op->c, bo->handle, MXT_ONES_C, DRM_MXACCEL_DTYPE_F32);
}

/* How many elements of mxt_ones_gemm()'s C are not 32.0 (0: all are). */
static inline unsigned int mxt_ones_wrong(const struct mxt_bo *bo)
{
	unsigned int i, wrong = 0;

	for (i = 0; i < 32 * 32; i++)
		wrong += mxt_get_u32(mxt_bo_at(bo, MXT_ONES_C + 4 * i)) !=
			 MXT_ONES_C32;
	return wrong;
}

#endif /* MXACCEL_TEST_H */
