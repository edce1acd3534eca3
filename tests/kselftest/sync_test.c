// SPDX-License-Identifier: GPL-2.0
/*
 * Explicit synchronisation: a job on one queue waiting, through in_syncs,
 * for a point of another queue's timeline and consuming its output; waits
 * on the queue's timeline syncobj with DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT;
 * out_sync to a binary syncobj and to a timeline point; JOB_WAIT and the
 * syncobj waits timing out while a job is held.
 *
 * Jobs are held deterministically with the test_hang module parameter and
 * a long job_timeout_ms: while test_hang is set the engine does not finish
 * a job it started, and it goes on as soon as test_hang is cleared.
 */
#include "mxaccel_test.h"

#define WAIT_AVAILABLE	DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE

FIXTURE(sync) {
	int fd;
	struct mxt_bo x, y;
};

FIXTURE_SETUP(sync)
{
	mxt_params_restore();
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &self->x));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &self->y));
}

FIXTURE_TEARDOWN(sync)
{
	/* Release any held job before the file goes. */
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Job A: quantize 32 x 32 fp32 ones at x + 4096 into e4m3 codes at x + 0
 * and scales at x + 1024 (FLOOR: scale 2^-8, codes 2^8 = 0x78).
 */
static void op_quantize_x(const struct mxt_bo *x, struct drm_mxaccel_op *op)
{
	int i;

	for (i = 0; i < 32 * 32; i++)
		mxt_put_u32(mxt_bo_at(x, 4096 + 4 * i), mxt_f32_bits(1.0f));
	memset(x->map, 0, 2048);
	mxt_quantize(op, 32, 32, DRM_MXACCEL_SCALE_FLOOR);
	mxt_mx(&op->a, x->handle, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op->c, x->handle, 4096, DRM_MXACCEL_DTYPE_F32);
}

/*
 * Job B: C (y + 4096) = A (what job A wrote in x) * ones (y + 2048, scales
 * at y + 3072)^T: 32 everywhere, but 0 if A were still all zero.
 */
static void op_gemm_x(const struct mxt_bo *x, const struct mxt_bo *y,
		      struct drm_mxaccel_op *op)
{
	memset(mxt_bo_at(y, 2048), 0x38, 1024);
	memset(mxt_bo_at(y, 3072), 127, 32);
	memset(mxt_bo_at(y, 4096), 0xcc, 4096);
	mxt_gemm(op, 32, 32, 32);
	mxt_mx(&op->a, x->handle, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op->b, y->handle, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op->c, y->handle, 4096, DRM_MXACCEL_DTYPE_F32);
}

static int submit_waiting(int fd, __u32 queue, const struct drm_mxaccel_op *op,
			  __u32 wait_syncobj, __u64 wait_point, __u64 *seqno)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	int ret;

	memset(&in, 0, sizeof(in));
	in.handle = wait_syncobj;
	in.point = wait_point;
	mxt_submit_init(&args, queue, op, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	ret = mxt_submit_args(fd, &args);
	if (!ret)
		*seqno = args.seqno;
	return ret;
}

static int submit_signalling(int fd, __u32 queue,
			     const struct drm_mxaccel_op *op, __u32 syncobj,
			     __u64 point, __u64 *seqno)
{
	struct drm_mxaccel_submit args;
	int ret;

	mxt_submit_init(&args, queue, op, 1);
	args.out_sync.handle = syncobj;
	args.out_sync.point = point;
	ret = mxt_submit_args(fd, &args);
	if (!ret && seqno)
		*seqno = args.seqno;
	return ret;
}

/* Hold the engine; queues created after this never time out here. */
static bool hold_jobs(struct __test_metadata *_metadata)
{
	if (!mxt_params_writable())
		return false;
	EXPECT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	EXPECT_EQ(0, mxt_param_write("test_hang", 1));
	return true;
}

static void release_jobs(struct __test_metadata *_metadata)
{
	EXPECT_EQ(0, mxt_param_write("test_hang", 0));
}

/* B on queue 2 consumes A's output from queue 1, ordered by in_syncs. */
TEST_F(sync, cross_queue_consumer)
{
	struct drm_mxaccel_op a, b;
	__u32 q1, s1, q2, s2;
	__u64 sa, sb, point;
	int status;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	op_quantize_x(&self->x, &a);
	op_gemm_x(&self->x, &self->y, &b);
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &a, 1, &sa));
	ASSERT_EQ(0, submit_waiting(self->fd, q2, &b, s1, sa, &sb));
	EXPECT_EQ(1, sb);

	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s2, sb,
					       mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s2, &point));
	EXPECT_EQ(sb, point);
	/* B waited for A: A is complete. */
	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, sa, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q2, sb, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(119, *mxt_bo_at(&self->x, 1024));
	EXPECT_EQ(0x78, *mxt_bo_at(&self->x, 0));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&self->y, 4096)));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&self->y, 8188)));
}

/*
 * The in_sync alone orders the jobs: B shares no buffer object with A
 * (no implicit dependency), yet does not run while A is held.
 */
TEST_F(sync, in_sync_orders_unrelated_jobs)
{
	struct drm_mxaccel_op a, b;
	__u32 q1, s1, q2, s2;
	__u64 sa, sb;
	int status;

	if (!hold_jobs(_metadata))
		SKIP(return, "needs the writable test_hang module parameter");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	op_quantize_x(&self->x, &a);
	mxt_ones_gemm(&b, &self->y);
	memset(mxt_bo_at(&self->y, MXT_ONES_C), 0xcc, 4096);

	ASSERT_EQ(0, mxt_submit(self->fd, q1, &a, 1, &sa));
	ASSERT_EQ(0, submit_waiting(self->fd, q2, &b, s1, sa, &sb));
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q2, sb,
					   mxt_deadline_ms(300), &status));
	EXPECT_EQ(-ETIME, mxt_syncobj_timeline_wait(self->fd, s2, sb, 0, 0));
	EXPECT_EQ(-ETIMEDOUT, mxt_bo_wait(self->fd, self->y.handle, 0));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->y, MXT_ONES_C), 0xcc, 4096));

	release_jobs(_metadata);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q2, sb,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, sa, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));
}

/* The same, with the consumer reading the producer's output. */
TEST_F(sync, held_producer_holds_consumer)
{
	struct drm_mxaccel_op a, b;
	__u32 q1, s1, q2, s2;
	__u64 sa, sb, point;
	int status;

	if (!hold_jobs(_metadata))
		SKIP(return, "needs the writable test_hang module parameter");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	op_quantize_x(&self->x, &a);
	op_gemm_x(&self->x, &self->y, &b);
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &a, 1, &sa));
	ASSERT_EQ(0, submit_waiting(self->fd, q2, &b, s1, sa, &sb));

	usleep(200 * 1000);
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q1, sa, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q2, sb, 0, &status));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s1, &point));
	EXPECT_EQ(0, point);
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->y, 4096), 0xcc, 4096));

	release_jobs(_metadata);
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s2, sb,
					       mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s1, &point));
	EXPECT_EQ(sa, point);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q2, sb, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&self->y, 4096)));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&self->y, 8188)));
}

/* JOB_WAIT honours its absolute deadline and says -ETIMEDOUT. */
TEST_F(sync, job_wait_timeout)
{
	struct drm_mxaccel_op op;
	struct drm_mxaccel_job_wait w;
	__s64 t0, deadline, t1;
	__u32 q, s;
	__u64 seqno;
	int status;

	if (!hold_jobs(_metadata))
		SKIP(return, "needs the writable test_hang module parameter");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	mxt_ones_gemm(&op, &self->y);
	ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, &seqno));

	/* Polling: at once. */
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q, seqno, 0, &status));
	/* A deadline in the past: at once. */
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q, seqno,
					   mxt_now_ns() - MXT_NSEC_PER_SEC,
					   &status));
	/* 300 ms from now: not before. */
	t0 = mxt_now_ns();
	deadline = t0 + 300 * MXT_NSEC_PER_MSEC;
	memset(&w, 0, sizeof(w));
	w.queue_id = q;
	w.seqno = seqno;
	w.timeout_ns = deadline;
	w.status = 0x5a5a5a5a;
	EXPECT_EQ(-ETIMEDOUT, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_JOB_WAIT,
					&w));
	t1 = mxt_now_ns();
	/* The kernel waits in jiffies: allow one tick early at most. */
	EXPECT_LE(deadline - 20 * MXT_NSEC_PER_MSEC, t1);
	EXPECT_GT(t0 + 10 * MXT_NSEC_PER_SEC, t1);
	/* The queue's timeline and the buffer objects agree. */
	EXPECT_EQ(-ETIME, mxt_syncobj_timeline_wait(self->fd, s, seqno,
						    mxt_deadline_ms(100), 0));
	EXPECT_EQ(-ETIMEDOUT, mxt_bo_wait(self->fd, self->y.handle,
					  mxt_deadline_ms(100)));

	release_jobs(_metadata);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q, seqno,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));
}

/* out_sync to a binary syncobj: it signals with the job. */
TEST_F(sync, out_sync_binary)
{
	struct drm_mxaccel_op op;
	__u32 q, binary;
	bool held;

	held = hold_jobs(_metadata);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &binary));
	mxt_ones_gemm(&op, &self->y);
	ASSERT_EQ(0, submit_signalling(self->fd, q, &op, binary, 0, NULL));
	if (held) {
		EXPECT_EQ(-ETIME, mxt_syncobj_wait(self->fd, binary,
						   mxt_deadline_ms(100)));
		release_jobs(_metadata);
	}
	ASSERT_EQ(0, mxt_syncobj_wait(self->fd, binary,
				      mxt_job_deadline()));
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));

	/* Replaced by the next job's fence. */
	memset(mxt_bo_at(&self->y, MXT_ONES_C), 0, 4096);
	ASSERT_EQ(0, submit_signalling(self->fd, q, &op, binary, 0, NULL));
	ASSERT_EQ(0, mxt_syncobj_wait(self->fd, binary,
				      mxt_job_deadline()));
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));
}

/* out_sync to a timeline point: the point appears and signals. */
TEST_F(sync, out_sync_timeline)
{
	struct drm_mxaccel_op op;
	__u32 q, timeline;
	__u64 point;
	bool held;

	held = hold_jobs(_metadata);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &timeline));
	mxt_ones_gemm(&op, &self->y);
	ASSERT_EQ(0, submit_signalling(self->fd, q, &op, timeline, 5, NULL));
	if (held) {
		EXPECT_EQ(-ETIME,
			  mxt_syncobj_timeline_wait(self->fd, timeline, 5,
						    mxt_deadline_ms(100), 0));
		/* Submitted, not signalled: the point is available. */
		EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, timeline, 5,
						       mxt_deadline_ms(100),
						       WAIT_AVAILABLE));
		ASSERT_EQ(0, mxt_syncobj_query(self->fd, timeline, &point));
		EXPECT_EQ(0, point);
		release_jobs(_metadata);
	}
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, timeline, 5,
					       mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, timeline, &point));
	EXPECT_EQ(5, point);
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));

	/* A later point on the same timeline. */
	ASSERT_EQ(0, submit_signalling(self->fd, q, &op, timeline, 9, NULL));
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, timeline, 9,
					       mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, timeline, &point));
	EXPECT_EQ(9, point);
}

/* A job may wait for an out_sync another queue's job signals. */
TEST_F(sync, in_sync_from_out_sync)
{
	struct drm_mxaccel_op a, b;
	__u32 q1, q2, binary;
	__u64 sb;
	int status;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, NULL));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, NULL));
	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &binary));
	op_quantize_x(&self->x, &a);
	op_gemm_x(&self->x, &self->y, &b);
	ASSERT_EQ(0, submit_signalling(self->fd, q1, &a, binary, 0, NULL));
	ASSERT_EQ(0, submit_waiting(self->fd, q2, &b, binary, 0, &sb));
	ASSERT_EQ(0, mxt_job_wait(self->fd, q2, sb,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&self->y, 4096)));
}

/*
 * A chain across three queues, many links: each job waits for the
 * previous one's timeline point; the last one done means all are.
 */
TEST_F(sync, chain_across_queues)
{
	struct drm_mxaccel_op op;
	__u32 q[3], s[3];
	__u64 seq[30];
	int i, status;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mxt_queue_create(self->fd, &q[i], &s[i]));
	mxt_ones_gemm(&op, &self->y);
	ASSERT_EQ(0, mxt_submit(self->fd, q[0], &op, 1, &seq[0]));
	for (i = 1; i < 30; i++)
		ASSERT_EQ(0, submit_waiting(self->fd, q[i % 3], &op,
					    s[(i - 1) % 3], seq[i - 1],
					    &seq[i]));
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s[29 % 3], seq[29],
					       mxt_job_deadline(),
					       0));
	for (i = 0; i < 30; i++) {
		ASSERT_EQ(0, mxt_job_wait(self->fd, q[i % 3], seq[i], 0,
					  &status));
		EXPECT_EQ(0, status);
	}
	EXPECT_EQ(0, mxt_ones_wrong(&self->y));
}

TEST_HARNESS_MAIN
