// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI engine against a device that misbehaves on purpose: every fault
 * of the device model's test page (hw/mxaccel_pci.h, struct mxhw_test,
 * reached through the device's sysfs resource2), the exact status each
 * gives the job, that other queues and later jobs are not affected, and
 * removal (sysfs remove and rescan) with a job on the device.  The last
 * tests lose the device for good: this program runs last.
 *
 * Skips without a hardware-engine device, or without a test page (a real
 * device).  The guest must boot with iomem=relaxed: the driver claims the
 * BAR, and Debian's kernels (IO_STRICT_DEVMEM) refuse to map it again
 * without.
 *
 * Jobs of one queue on an idle device run on ring 0 (new queues start
 * there and an idle queue stays where it is when every ring is idle); a
 * second queue's job, submitted while ring 0 is busy, goes to ring 1.
 */

#include "kselftest_harness.h"
#include "mxaccel_test.h"
#include "mxaccel_pci_test.h"

#define M 4
#define N 4
#define K 32
#define A_DATA 0
#define A_SCALE 4096
#define B_DATA 8192
#define B_SCALE 12288
#define C_OFF 16384
#define BO_SIZE 65536
#define E4M3_ONE 0x38
#define SCALE_ONE 127

struct gemm_bufs {
	struct mxt_bo bo;
	struct drm_mxaccel_op op;
};

/* C[4x4] = A * B^T with every element 1.0: every C is 32. */
static int gemm_setup(int fd, struct gemm_bufs *g)
{
	int ret = mxt_bo_new(fd, BO_SIZE, &g->bo);

	if (ret)
		return ret;
	memset(mxt_bo_at(&g->bo, A_DATA), E4M3_ONE, M * K);
	memset(mxt_bo_at(&g->bo, A_SCALE), SCALE_ONE, M);
	memset(mxt_bo_at(&g->bo, B_DATA), E4M3_ONE, N * K);
	memset(mxt_bo_at(&g->bo, B_SCALE), SCALE_ONE, N);
	mxt_gemm(&g->op, M, N, K);
	mxt_mx(&g->op.a, g->bo.handle, A_DATA, A_SCALE, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&g->op.b, g->bo.handle, B_DATA, B_SCALE, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&g->op.c, g->bo.handle, C_OFF, DRM_MXACCEL_DTYPE_F32);
	return 0;
}

static bool gemm_result_ok(struct gemm_bufs *g)
{
	float c[M * N];
	unsigned int i;

	memcpy(c, mxt_bo_at(&g->bo, C_OFF), sizeof(c));
	for (i = 0; i < M * N; i++)
		if (c[i] != 32.0f)
			return false;
	return true;
}

static int new_queue(int fd, __u32 *q)
{
	__u32 syncobj;

	return mxt_queue_create(fd, q, &syncobj);
}

/* Wait until an mxaccel hardware node opens again (after a rescan). */
static int wait_for_device(int ms)
{
	__s64 end = mxt_deadline_ms(ms);
	int fd;

	while ((fd = mxt_open()) < 0) {
		if (mxt_now_ns() > end)
			return fd;
		usleep(20000);
	}
	return fd;
}

/* The device is back (rescan, rebind): open it and run the GEMM there. */
static int back_and_gemm(int *fdp, struct gemm_bufs *g)
{
	int fd = wait_for_device(10000), ret;
	__u32 q;

	if (fd < 0)
		return fd;
	*fdp = fd;
	ret = gemm_setup(fd, g);
	if (!ret)
		ret = new_queue(fd, &q);
	return ret ? ret : mxt_run(fd, q, &g->op, 1);
}

static int sysfs_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(pci) {
	bool ready;		/* setup did not skip */
	int fd;
	struct mxt_pci pd;
	struct gemm_bufs g;
	__u32 q;
};

FIXTURE_SETUP(pci)
{
	int ret;

	const char *engine = getenv("MXACCEL_ENGINE");

	memset(&self->pd, 0, sizeof(self->pd));
	self->ready = false;
	self->fd = -1;
	/* The software engine's pass must not lose the PCI device. */
	if (engine && *engine && strcmp(engine, "hardware"))
		SKIP(return, "MXACCEL_ENGINE=%s", engine);
	self->fd = mxt_pci_open(&self->pd);
	if (self->fd == -ENODEV)
		SKIP(return, "no mxaccel device with a hardware engine");
	ASSERT_LE(0, self->fd);
	ret = mxt_pci_map(&self->pd);
	if (ret == -EINVAL)
		SKIP(return, "%s/resource2 cannot be mapped: boot with iomem=relaxed",
		     self->pd.sysfs);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(MXHW_MAGIC, self->pd.hdr->magic);
	if (!self->pd.test)
		SKIP(return, "the device has no test page (not a device model)");
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_CLEAR, 0, 0, 0));
	ASSERT_EQ(0, gemm_setup(self->fd, &self->g));
	ASSERT_EQ(0, new_queue(self->fd, &self->q));
	mxt_params_restore();
	self->ready = true;
}

/* Older harnesses run the test after a SKIP in setup: each skips again. */

FIXTURE_TEARDOWN(pci)
{
	if (self->pd.test)
		mxt_pci_fault(&self->pd, MXHW_FAULT_CLEAR, 0, 0, 0);
	mxt_params_restore();
	mxt_pci_unmap(&self->pd);
	if (self->fd >= 0)
		close(self->fd);
}

/* What the device's header says is what GET_PARAM reports. */
TEST_F(pci, header_matches_params)
{
	__u64 v;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	EXPECT_EQ(MXHW_VERSION_MAJOR, self->pd.hdr->version_major);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &v));
	EXPECT_EQ(self->pd.hdr->n_rings, v);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_DEVICE_MEMORY,
				   &v));
	EXPECT_EQ(self->pd.hdr->heap_size, v);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_ELEM_MASK, &v));
	EXPECT_EQ(self->pd.hdr->elem_mask, v);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_ENGINE_KIND,
				   &v));
	EXPECT_EQ(DRM_MXACCEL_ENGINE_HARDWARE, v);
}

TEST_F(pci, gemm_exact)
{
	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* The device reads only its own memory: system-memory operands fail. */
TEST_F(pci, system_memory_rejected)
{
	struct drm_mxaccel_bo_create c;
	struct drm_mxaccel_op op = self->g.op;
	__u64 seqno;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	memset(&c, 0, sizeof(c));
	c.size = BO_SIZE;
	c.flags = DRM_MXACCEL_BO_SYSTEM;
	ASSERT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_BO_CREATE, &c));
	op.c.handle = c.handle;
	EXPECT_EQ(-EINVAL, mxt_submit(self->fd, self->q, &op, 1, &seqno));
	op = self->g.op;
	op.a.data_handle = c.handle;
	EXPECT_EQ(-EINVAL, mxt_submit(self->fd, self->q, &op, 1, &seqno));
	/* The queue is fine. */
	EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
}

TEST_F(pci, device_error_is_eio)
{
	static const __u32 errs[] = { EIO, EINVAL, EFAULT };
	unsigned int i;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_ERROR, 0, errs[i], 1));
		EXPECT_EQ(-EIO, mxt_run(self->fd, self->q, &self->g.op, 1));
		/* One job only; not guilty: the next one runs. */
		EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
	}
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

TEST_F(pci, slow_job_completes)
{
	__s64 t0 = mxt_now_ns();

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_SLOW, 0, 300, 1));
	EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
	EXPECT_LE(300 * MXT_NSEC_PER_MSEC, mxt_now_ns() - t0);
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* A completion whose interrupt never comes is found by the fallback scan. */
TEST_F(pci, dropped_interrupt_is_recovered)
{
	unsigned int i;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_DROP_IRQ, 0, 0, 3));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
	EXPECT_LE(3, __atomic_load_n(&self->pd.test->jobs_faulted,
				     __ATOMIC_RELAXED));
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* A garbage completion record fails its job and resets only the ring. */
TEST_F(pci, corrupt_record_fails_job)
{
	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_CORRUPT, 0, 0, 1));
	EXPECT_EQ(-EIO, mxt_run(self->fd, self->q, &self->g.op, 1));
	EXPECT_EQ(0, mxt_run(self->fd, self->q, &self->g.op, 1));
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* The driver's and the device's indices of ring 0 (BAR2). */
static void ring0_sq(struct mxt_pci *pd, __u32 *tail, __u32 *head)
{
	struct mxhw_ring_regs *r = (void *)(pd->bar + pd->hdr->ring_offset);

	*tail = __atomic_load_n(&r->sq_tail, __ATOMIC_ACQUIRE);
	*head = __atomic_load_n(&r->sq_head, __ATOMIC_ACQUIRE);
}

/*
 * Several jobs of a queue are on the device at once (the ring's credit is
 * more than one job); when the oldest one's completion record is bad, it
 * fails with -EIO and the ring is reset, and the jobs behind it are given
 * to the device again and complete.
 */
TEST_F(pci, pipelined_jobs_survive_a_ring_reset)
{
	struct drm_mxaccel_submit args;
	__u64 seqno[3], ring_jobs, max_ops, depth;
	__u32 tail, head;
	unsigned int i;
	int status;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_OPS,
				   &max_ops));
	depth = self->pd.hdr->ring_depth;
	ring_jobs = depth / max_ops;
	ASSERT_LE(3, ring_jobs);
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_SLOW, 0, 500, 1));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_CORRUPT, 0, 0, 1));
	for (i = 0; i < 3; i++) {
		mxt_submit_init(&args, self->q, &self->g.op, 1);
		ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
		seqno[i] = args.seqno;
	}
	usleep(200000);
	/* The first is on the device, the others wait there behind it. */
	ring0_sq(&self->pd, &tail, &head);
	EXPECT_EQ(2, tail - head) TH_LOG("sq_tail %u, sq_head %u", tail, head);
	ASSERT_EQ(0, mxt_job_wait(self->fd, self->q, seqno[0],
				  mxt_job_deadline(), &status));
	EXPECT_EQ(-EIO, status);
	for (i = 1; i < 3; i++) {
		ASSERT_EQ(0, mxt_job_wait(self->fd, self->q, seqno[i],
					  mxt_job_deadline(), &status));
		EXPECT_EQ(0, status) TH_LOG("job %u", i);
	}
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* SUBMIT_WAIT polling the ring (poll_us) gets the same results. */
TEST_F(pci, polled_submit_wait)
{
	struct drm_mxaccel_submit args;
	unsigned int i;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	if (!mxt_param_writable("poll_us"))
		SKIP(return, "no writable poll_us parameter");
	ASSERT_EQ(0, mxt_param_write("poll_us", 2000));
	for (i = 0; i < 20; i++) {
		memset(mxt_bo_at(&self->g.bo, C_OFF), 0xcc, M * N * 4);
		mxt_submit_init(&args, self->q, &self->g.op, 1);
		args.flags = DRM_MXACCEL_SUBMIT_WAIT;
		args.wait_timeout_ns = mxt_job_deadline();
		ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
		EXPECT_TRUE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE);
		EXPECT_EQ(0, args.status);
		EXPECT_TRUE(gemm_result_ok(&self->g));
	}
	EXPECT_EQ(0, mxt_param_write("poll_us", 0));
}

/* A job past its timeout is aborted, and the device stops it. */
TEST_F(pci, timeout_aborts_on_device)
{
	__u32 q2, q3;
	__s64 t0;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", mxt_scaled_ms(1000)));
	ASSERT_EQ(0, new_queue(self->fd, &q2));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_SLOW, 0, 600000, 1));
	t0 = mxt_now_ns();
	EXPECT_EQ(-ETIMEDOUT, mxt_run(self->fd, q2, &self->g.op, 1));
	/* Well before the 5 s the driver gives an abort before a reset. */
	EXPECT_GT(mxt_scaled_ms(1000) * MXT_NSEC_PER_MSEC +
		  4000 * MXT_NSEC_PER_MSEC, mxt_now_ns() - t0);
	/* The queue is guilty; others are not. */
	EXPECT_EQ(-ECANCELED, mxt_run(self->fd, q2, &self->g.op, 1));
	ASSERT_EQ(0, new_queue(self->fd, &q3));
	EXPECT_EQ(0, mxt_run(self->fd, q3, &self->g.op, 1));
}

/*
 * A hung ring (aborts ignored) is reset: its job fails with -ETIMEDOUT,
 * its queue is guilty, a queue on another ring finishes meanwhile, and
 * the ring works again afterwards.
 */
TEST_F(pci, hung_ring_reset_only_guilty_queue)
{
	struct drm_mxaccel_submit args;
	struct gemm_bufs other;
	__u32 qa, qb, qc;
	__u64 seqno;
	int status;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", mxt_scaled_ms(1000)));
	ASSERT_EQ(0, new_queue(self->fd, &qa));
	ASSERT_EQ(0, new_queue(self->fd, &qb));
	/* Its own buffers: no dependency on the hung job. */
	ASSERT_EQ(0, gemm_setup(self->fd, &other));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_HANG, 0, 0, 0));
	mxt_submit_init(&args, qa, &self->g.op, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	seqno = args.seqno;
	/* Ring 0 is busy: this one goes to ring 1 and is not held up. */
	EXPECT_EQ(0, mxt_run(self->fd, qb, &other.op, 1));
	EXPECT_TRUE(gemm_result_ok(&other));
	ASSERT_EQ(0, mxt_job_wait(self->fd, qa, seqno,
				  mxt_deadline_ms(mxt_scaled_ms(30000)),
				  &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_EQ(-ECANCELED, mxt_run(self->fd, qa, &self->g.op, 1));
	/* The reset healed ring 0. */
	ASSERT_EQ(0, new_queue(self->fd, &qc));
	EXPECT_EQ(0, mxt_run(self->fd, qc, &self->g.op, 1));
	EXPECT_EQ(0, mxt_run(self->fd, qb, &other.op, 1));
	EXPECT_TRUE(gemm_result_ok(&self->g));
	mxt_bo_free(self->fd, &other.bo);
}

/*
 * Removal with a job on the device, a mapping and open files: the job's
 * fence ends with -ENODEV, ioctls fail with -ENODEV, the mapping is gone
 * (SIGBUS); a rescan brings the device back.
 */
TEST_F(pci, remove_and_rescan)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_get_param p;
	char path[PATH_MAX + 16];
	__u8 *map = mxt_bo_at(&self->g.bo, 0);
	__u32 syncobj, q;
	int sfd;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &syncobj));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_SLOW, 0, 600000, 1));
	mxt_submit_init(&args, q, &self->g.op, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	sfd = mxt_export_sync_file(self->fd, syncobj, args.seqno);
	ASSERT_LE(0, sfd);
	usleep(100000);

	mxt_pci_unmap(&self->pd);
	snprintf(path, sizeof(path), "%s/remove", self->pd.sysfs);
	ASSERT_EQ(0, sysfs_write(path, "1"));

	EXPECT_EQ(-ENODEV, mxt_sync_file_status(sfd, 10000));
	close(sfd);
	memset(&p, 0, sizeof(p));
	p.param = DRM_MXACCEL_PARAM_UAPI_VERSION;
	EXPECT_EQ(-ENODEV, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_GET_PARAM,
				     &p));
	EXPECT_TRUE(mxt_read_faults(map))
		TH_LOG("the removed device's memory is still mapped");
	mxt_bo_free(self->fd, &self->g.bo);
	close(self->fd);
	self->fd = -1;

	ASSERT_EQ(0, sysfs_write("/sys/bus/pci/rescan", "1"));
	ASSERT_EQ(0, back_and_gemm(&self->fd, &self->g));
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/*
 * A ring that ignores even its reset: the device is lost, every ioctl
 * fails with -ENODEV.  Rebinding says hello again, which heals it.
 */
TEST_F(pci, unresetable_ring_loses_device)
{
	char path[PATH_MAX + 32];
	__u32 q;
	int ret;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", mxt_scaled_ms(1000)));
	ASSERT_EQ(0, new_queue(self->fd, &q));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_HANG_HARD, 0, 0, 0));
	ret = mxt_run(self->fd, q, &self->g.op, 1);
	EXPECT_TRUE(ret == -ETIMEDOUT || ret == -ENODEV) TH_LOG("%d", ret);
	/* Unplugged once the reset was not answered. */
	usleep(100000);
	EXPECT_EQ(-ENODEV, mxt_run(self->fd, self->q, &self->g.op, 1));
	mxt_bo_free(self->fd, &self->g.bo);
	close(self->fd);
	self->fd = -1;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/mxaccel/unbind");
	ASSERT_EQ(0, sysfs_write(path, self->pd.bdf));
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/mxaccel/bind");
	ASSERT_EQ(0, sysfs_write(path, self->pd.bdf));
	ASSERT_EQ(0, back_and_gemm(&self->fd, &self->g));
	EXPECT_TRUE(gemm_result_ok(&self->g));
}

/* Last: a lost device stays lost. */
TEST_F(pci, device_lost)
{
	struct drm_mxaccel_submit args;
	__u32 q2, syncobj;
	int sfd;

	if (!self->ready)
		SKIP(return, "no PCI device model to test");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &syncobj));
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_SLOW, 0, 600000, 1));
	mxt_submit_init(&args, q2, &self->g.op, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	sfd = mxt_export_sync_file(self->fd, syncobj, args.seqno);
	ASSERT_LE(0, sfd);
	usleep(100000);
	ASSERT_EQ(0, mxt_pci_fault(&self->pd, MXHW_FAULT_LOST, 0, 0, 0));
	EXPECT_EQ(-ENODEV, mxt_sync_file_status(sfd, 10000));
	close(sfd);
	usleep(100000);
	EXPECT_EQ(-ENODEV, mxt_run(self->fd, self->q, &self->g.op, 1));
}

TEST_HARNESS_MAIN
