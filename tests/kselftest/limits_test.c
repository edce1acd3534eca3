// SPDX-License-Identifier: GPL-2.0
/*
 * Limits of uapi version 2:
 *
 * - queue_depth: a queue holds at most QUEUE_DEPTH unfinished jobs, SUBMIT
 *   beyond it is -EBUSY (never -EAGAIN), and a job whose fence signalled
 *   no longer counts;
 * - max_queues per file and max_device_queues per device: -EBUSY at the
 *   limit, across files;
 * - op_size and sync_size above DRM_MXACCEL_MAX_ELEM_SIZE are -E2BIG at
 *   once, whatever user memory they would cover;
 * - SUBMIT's argument rules: out_sync.point without a handle,
 *   wait_timeout_ns without DRM_MXACCEL_SUBMIT_WAIT, unknown flags.
 *
 * Jobs are held with test_hang; parameters are put back after each test.
 */
#include "mxaccel_test.h"

FIXTURE(limits) {
	int fd;
	struct mxt_bo bo;
	struct drm_mxaccel_op op;
	__u32 queue;
};

FIXTURE_SETUP(limits)
{
	mxt_params_restore();
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &self->bo));
	mxt_ones_gemm(&self->op, &self->bo);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &self->queue, NULL));
}

FIXTURE_TEARDOWN(limits)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

#define NEED_PARAMS "needs writable test_hang, job_timeout_ms, queue_depth and max_device_queues"

static bool params_ok(void)
{
	return mxt_params_writable() && mxt_param_writable("queue_depth") &&
	       mxt_param_writable("max_device_queues");
}

/* SUBMIT with the outputs pre-filled; the ioctl's result. */
static int submit(int fd, struct drm_mxaccel_submit *args)
{
	args->status = (__s32)0xcccccccc;
	args->out_flags = 0xcccccccc;
	return mxt_submit_args(fd, args);
}

/* ---- queue depth ------------------------------------------------------ */

/*
 * queue_depth 4 with the engine held: four queued jobs fit, the fifth is
 * -EBUSY with nothing queued (the seqno is not used up), another queue is
 * not affected, and once the full queue is destroyed and its jobs have
 * stopped a new queue takes jobs again.
 */
TEST_F(limits, queue_depth)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op2;
	struct mxt_bo bo2;
	__u32 q, s, q2, s2, q3;
	__u64 v, seqno, point;
	int i, status;

	if (!params_ok())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("queue_depth", 4));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_QUEUE_DEPTH,
				   &v));
	EXPECT_EQ(4, v);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));

	for (i = 1; i <= 4; i++) {
		ASSERT_EQ(0, mxt_submit_flags(self->fd, q, &self->op, 1,
					      DRM_MXACCEL_SUBMIT_NO_INLINE,
					      &seqno));
		EXPECT_EQ(i, seqno);
	}
	for (i = 0; i < 3; i++) {
		mxt_submit_init(&args, q, &self->op, 1);
		args.flags = DRM_MXACCEL_SUBMIT_NO_INLINE;
		EXPECT_EQ(-EBUSY, submit(self->fd, &args));
		EXPECT_EQ(0xccccccccccccccccull, args.seqno);
		/* Inline or not makes no difference. */
		mxt_submit_init(&args, q, &self->op, 1);
		EXPECT_EQ(-EBUSY, submit(self->fd, &args));
	}
	/* Nothing was queued: seqno 5 was never issued. */
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, q, 5, 0, &status));
	/*
	 * The limit is per queue.  A buffer object of its own: the canceled
	 * jobs below must not be its dependencies.
	 */
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo2));
	mxt_ones_gemm(&op2, &bo2);
	ASSERT_EQ(0, mxt_submit_flags(self->fd, q2, &op2, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &seqno));
	EXPECT_EQ(1, seqno);

	ASSERT_EQ(0, mxt_queue_destroy(self->fd, q));
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s, 4,
					       mxt_deadline_ms(mxt_scaled_ms(5000)),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s, &point));
	EXPECT_EQ(4, point);
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, mxt_job_wait(self->fd, q2, 1, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q3, NULL));
	memset(mxt_bo_at(&bo2, MXT_ONES_C), 0, 4096);
	for (i = 1; i <= 4; i++)
		ASSERT_EQ(0, mxt_submit_flags(self->fd, q3, &op2, 1,
					      DRM_MXACCEL_SUBMIT_NO_INLINE,
					      &seqno));
	EXPECT_EQ(0, mxt_job_wait(self->fd, q3, seqno, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&bo2));
	mxt_bo_free(self->fd, &bo2);
}

/*
 * A job whose fence has signalled is finished: waiting for it (JOB_WAIT
 * or the timeline) and submitting the next job right away must never be
 * -EBUSY, even at queue_depth 1.  Queued jobs, so that their end is
 * signalled by the scheduler, not inside the SUBMIT ioctl.
 */
TEST_F(limits, finished_job_leaves_queue_depth)
{
	__u64 seqno;
	__u32 q, s;
	int i, status, busy = 0;

	if (!params_ok())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("queue_depth", 1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	for (i = 0; i < 200; i++) {
		int ret = mxt_submit_flags(self->fd, q, &self->op, 1,
					   DRM_MXACCEL_SUBMIT_NO_INLINE,
					   &seqno);

		if (ret == -EBUSY) {
			if (busy++ < 3)
				TH_LOG("round %d: -EBUSY after job %llu signalled",
				       i, (unsigned long long)seqno);
			/* Let it drain, then go on. */
			usleep(10000);
			continue;
		}
		ASSERT_EQ(0, ret);
		if (i % 2) {
			ASSERT_EQ(0, mxt_job_wait(self->fd, q, seqno,
						  mxt_job_deadline(), &status));
		} else {
			ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s,
							       seqno,
							       mxt_job_deadline(),
							       0));
		}
	}
	EXPECT_EQ(0, busy);
}

/* ---- queue limits ----------------------------------------------------- */

/*
 * max_device_queues 3 over two files: 2 + 1 queues, then -EBUSY in
 * either file; GET_PARAM reports the limit; a destroyed idle queue and a
 * closed file give their places back.
 */
TEST_F(limits, max_device_queues)
{
	struct drm_mxaccel_queue_create c;
	__u32 a2, b1, b2;
	__u64 v;
	int fd2, i;

	if (!params_ok())
		SKIP(return, NEED_PARAMS);
	/* The fixture's queue is the first of the three. */
	ASSERT_EQ(0, mxt_param_write("max_device_queues", 3));
	ASSERT_EQ(0, mxt_get_param(self->fd,
				   DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES, &v));
	EXPECT_EQ(3, v);
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	/* Queues of the tests before may still be on their way out. */
	for (i = 0; i < 100; i++) {
		if (!mxt_queue_create(self->fd, &a2, NULL))
			break;
		usleep(10000);
	}
	ASSERT_GT(100, i);
	ASSERT_EQ(0, mxt_queue_create(fd2, &b1, NULL));
	memset(&c, 0xcc, sizeof(c));
	c.flags = 0;
	c.priority = 0;
	EXPECT_EQ(-EBUSY, mxt_ioctl(fd2, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &c));
	EXPECT_EQ(0xcccccccc, c.queue_id);
	EXPECT_EQ(0xcccccccc, c.syncobj);
	EXPECT_EQ(-EBUSY, mxt_queue_create(self->fd, &b2, NULL));

	/*
	 * A destroyed queue without jobs has no job left to finish: its
	 * place is free when QUEUE_DESTROY returns.  Several times, for a
	 * release that would lag behind.
	 */
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, mxt_queue_destroy(fd2, b1));
		ASSERT_EQ(0, mxt_queue_create(fd2, &b1, NULL))
			TH_LOG("round %d: the destroyed queue still counts", i);
	}
	EXPECT_EQ(-EBUSY, mxt_queue_create(fd2, &b2, NULL));

	/* Raised: room at once. */
	ASSERT_EQ(0, mxt_param_write("max_device_queues", 4));
	EXPECT_EQ(0, mxt_queue_create(fd2, &b2, NULL));
	EXPECT_EQ(-EBUSY, mxt_queue_create(self->fd, &a2, NULL));

	/* A closed file's queues go with it (their release may lag). */
	ASSERT_EQ(0, close(fd2));
	for (i = 0; i < 100; i++) {
		if (!mxt_queue_create(self->fd, &a2, NULL))
			break;
		usleep(10000);
	}
	EXPECT_GT(100, i);
}

/* max_queues 2 per file alongside the device limit: each file its own. */
TEST_F(limits, max_queues_per_file)
{
	__u32 q;
	int fd2;

	if (!params_ok())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("max_queues", 2));
	ASSERT_EQ(0, mxt_param_write("max_device_queues", 256));
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	EXPECT_EQ(-EBUSY, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_queue_create(fd2, &q, NULL));
	ASSERT_EQ(0, mxt_queue_create(fd2, &q, NULL));
	EXPECT_EQ(-EBUSY, mxt_queue_create(fd2, &q, NULL));
	/* The stricter of the two limits applies. */
	ASSERT_EQ(0, mxt_param_write("max_queues", 16));
	ASSERT_EQ(0, mxt_param_write("max_device_queues", 5));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	EXPECT_EQ(-EBUSY, mxt_queue_create(self->fd, &q, NULL));
	EXPECT_EQ(-EBUSY, mxt_queue_create(fd2, &q, NULL));
	close(fd2);
}

/* ---- element sizes ------------------------------------------------------ */

TEST_F(limits, op_size_max)
{
	struct drm_mxaccel_submit args;
	__u8 *buf;
	__s64 t0, us;

	buf = calloc(1, DRM_MXACCEL_MAX_ELEM_SIZE + 64);
	ASSERT_NE(NULL, buf);
	memcpy(buf, &self->op, sizeof(self->op));

	/* The largest accepted: the op, then zeros. */
	mxt_submit_init(&args, self->queue, NULL, 1);
	args.ops = (uintptr_t)buf;
	args.op_size = DRM_MXACCEL_MAX_ELEM_SIZE;
	EXPECT_EQ(0, submit(self->fd, &args));
	EXPECT_EQ(1, args.seqno);

	args.op_size = DRM_MXACCEL_MAX_ELEM_SIZE + 1;
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));
	args.op_size = DRM_MXACCEL_MAX_ELEM_SIZE + 8;
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));

	/*
	 * Huge: refused before any user memory is read, so at once, even
	 * with the largest op_count (4 GiB per op of mostly unmapped user
	 * memory would take long to scan, or fault).
	 */
	args.op_size = 0xffffffffu;
	t0 = mxt_now_ns();
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));
	args.op_size = 0x80000000u;
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));
	us = (mxt_now_ns() - t0) / 1000;
	TH_LOG("two huge op_size SUBMITs took %lld us", (long long)us);
	EXPECT_GT(mxt_scaled_ms(100) * 1000, us);
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, self->queue, 2, 0, NULL));
	free(buf);
}

TEST_F(limits, sync_size_max)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync *sync;
	__u32 s;
	__u8 *buf;
	__s64 t0, us;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd,
					DRM_SYNCOBJ_CREATE_SIGNALED, &s));
	buf = calloc(1, DRM_MXACCEL_MAX_ELEM_SIZE + 64);
	ASSERT_NE(NULL, buf);
	sync = (struct drm_mxaccel_sync *)buf;
	sync->handle = s;

	mxt_submit_init(&args, self->queue, &self->op, 1);
	args.in_syncs = (uintptr_t)buf;
	args.in_sync_count = 1;
	args.sync_size = DRM_MXACCEL_MAX_ELEM_SIZE;
	EXPECT_EQ(0, submit(self->fd, &args));

	args.sync_size = DRM_MXACCEL_MAX_ELEM_SIZE + 1;
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));
	t0 = mxt_now_ns();
	args.sync_size = 0xffffffffu;
	args.in_sync_count = 64;
	EXPECT_EQ(-E2BIG, submit(self->fd, &args));
	us = (mxt_now_ns() - t0) / 1000;
	EXPECT_GT(mxt_scaled_ms(100) * 1000, us);
	/* Ignored without in_syncs. */
	args.in_sync_count = 0;
	EXPECT_EQ(0, submit(self->fd, &args));
	free(buf);
}

/* ---- SUBMIT's argument rules -------------------------------------------- */

TEST_F(limits, out_sync_point_without_handle)
{
	static const __u64 bad[] = { 1, 2, 1ull << 63, ~0ull };
	struct drm_mxaccel_submit args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mxt_submit_init(&args, self->queue, &self->op, 1);
		args.out_sync.handle = 0;
		args.out_sync.point = bad[i];
		EXPECT_EQ(-EINVAL, submit(self->fd, &args));
		EXPECT_EQ(0xccccccccccccccccull, args.seqno);
	}
	/* Nothing queued by any of them. */
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, self->queue, 1, 0, NULL));
	mxt_submit_init(&args, self->queue, &self->op, 1);
	EXPECT_EQ(0, submit(self->fd, &args));
	EXPECT_EQ(1, args.seqno);
}

TEST_F(limits, wait_timeout_without_wait_flag)
{
	static const __s64 bad[] = { 1, -1, 1ll << 62 };
	struct drm_mxaccel_submit args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mxt_submit_init(&args, self->queue, &self->op, 1);
		args.wait_timeout_ns = bad[i];
		EXPECT_EQ(-EINVAL, submit(self->fd, &args));
		args.flags = DRM_MXACCEL_SUBMIT_NO_INLINE;
		EXPECT_EQ(-EINVAL, submit(self->fd, &args));
	}
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, self->queue, 1, 0, NULL));
	/* With the flag, a deadline in the past is fine (a poll). */
	mxt_submit_init(&args, self->queue, &self->op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = 1;
	EXPECT_EQ(0, submit(self->fd, &args));
}

TEST_F(limits, unknown_submit_flags)
{
	struct drm_mxaccel_submit args;
	unsigned int bit;

	for (bit = 2; bit < 32; bit++) {
		mxt_submit_init(&args, self->queue, &self->op, 1);
		args.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, submit(self->fd, &args)) TH_LOG("bit %u", bit);
		/* Alongside the defined ones too. */
		args.flags |= DRM_MXACCEL_SUBMIT_WAIT |
			      DRM_MXACCEL_SUBMIT_NO_INLINE;
		EXPECT_EQ(-EINVAL, submit(self->fd, &args)) TH_LOG("bit %u", bit);
	}
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, self->queue, 1, 0, NULL));
}

TEST_HARNESS_MAIN
