// SPDX-License-Identifier: GPL-2.0
/*
 * Hung jobs and teardown under load, driven by the test_hang module
 * parameter (while it is set, every job the engine starts hangs) and
 * job_timeout_ms (read when a queue is created):
 *
 * - a job that hangs past the timeout fails with -ETIMEDOUT and makes its
 *   queue guilty: its later jobs fail with -ECANCELED, while other queues
 *   and new queues go on working;
 * - the timeout is per queue, fixed when the queue is created;
 * - destroying a queue, closing a file, or killing a process while jobs
 *   hang returns promptly, signals every fence, and leaves the device
 *   working.
 *
 * The parameters are put back after each test.
 */
#include <poll.h>
#include <signal.h>
#include <linux/sync_file.h>

#include "mxaccel_test.h"

FIXTURE(hang) {
	int fd;
};

FIXTURE_SETUP(hang)
{
	mxt_params_restore();
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(hang)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Each test checks this itself: a SKIP in a fixture's setup does not stop
 * the test in every version of the harness.
 */
#define NEED_PARAMS "needs writable test_hang and job_timeout_ms parameters"

/* The job's status, waiting up to MXT_JOB_TIMEOUT_MS, or JOB_WAIT's error. */
static int job_status(int fd, __u32 queue, __u64 seqno)
{
	int ret, status;

	ret = mxt_job_wait(fd, queue, seqno,
			   mxt_job_deadline(), &status);
	/* JOB_WAIT's own timeout must not pass for a job's -ETIMEDOUT. */
	return ret ? (ret == -ETIMEDOUT ? -ETIME : ret) : status;
}

TEST_F(hang, timeout_makes_queue_guilty)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q1, s1, q2, q3;
	__u64 j1, j2, j3, v, point;
	__s64 t0;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 500));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS,
				   &v));
	EXPECT_EQ(500, v);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0xcc, 4096);

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	t0 = mxt_now_ns();
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &j1));
	EXPECT_EQ(-ETIMEDOUT, job_status(self->fd, q1, j1));
	/* Not before the timeout. */
	EXPECT_LE(t0 + 450 * MXT_NSEC_PER_MSEC, mxt_now_ns());
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	/* The hung job wrote nothing. */
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, MXT_ONES_C), 0xcc, 4096));
	/* Its timeline point signalled (with the error). */
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s1, j1,
					       mxt_deadline_ms(1000), 0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s1, &point));
	EXPECT_EQ(j1, point);
	EXPECT_EQ(0, mxt_bo_wait(self->fd, bo.handle, mxt_deadline_ms(1000)));

	/* The guilty queue still takes jobs, and cancels them. */
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &j2));
	EXPECT_EQ(j1 + 1, j2);
	EXPECT_EQ(-ECANCELED, job_status(self->fd, q1, j2));
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &j2));
	EXPECT_EQ(-ECANCELED, job_status(self->fd, q1, j2));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&bo, MXT_ONES_C), 0xcc, 4096));
	/* The status of a finished job stays. */
	EXPECT_EQ(-ETIMEDOUT, job_status(self->fd, q1, j1));

	/* Another queue, and a new one, are fine. */
	ASSERT_EQ(0, mxt_submit(self->fd, q2, &op, 1, &j3));
	EXPECT_EQ(0, job_status(self->fd, q2, j3));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q3, NULL));
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
	ASSERT_EQ(0, mxt_submit(self->fd, q3, &op, 1, &j3));
	EXPECT_EQ(0, job_status(self->fd, q3, j3));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));

	EXPECT_EQ(0, mxt_queue_destroy(self->fd, q1));
	mxt_bo_free(self->fd, &bo);
}

/*
 * Several queues time out at once (each job on a buffer object of its own,
 * so that no implicit dependency orders them); each queue alone is guilty
 * afterwards.
 */
TEST_F(hang, many_queues_time_out)
{
	struct drm_mxaccel_op op[4];
	struct mxt_bo bo[4];
	__u32 q[4], fresh;
	__u64 j[4], seqno;
	__s64 t0, ms;
	int i;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 500));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mxt_queue_create(self->fd, &q[i], NULL));
		ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo[i]));
		mxt_ones_gemm(&op[i], &bo[i]);
	}

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	t0 = mxt_now_ns();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, mxt_submit(self->fd, q[i], &op[i], 1, &j[i]));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(-ETIMEDOUT, job_status(self->fd, q[i], j[i]));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	/* Side by side, not one after the other. */
	TH_LOG("4 queues timed out in %lld ms", (long long)ms);
	EXPECT_GT(4 * 500, ms);
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mxt_submit(self->fd, q[i], &op[i], 1, &seqno));
		EXPECT_EQ(-ECANCELED, job_status(self->fd, q[i], seqno));
	}
	ASSERT_EQ(0, mxt_queue_create(self->fd, &fresh, NULL));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, mxt_run(self->fd, fresh, &op[i], 1));
		EXPECT_EQ(0, mxt_ones_wrong(&bo[i]));
		mxt_bo_free(self->fd, &bo[i]);
	}
}

/* job_timeout_ms applies to queues created after it changed. */
TEST_F(hang, timeout_is_per_queue)
{
	struct drm_mxaccel_op op, op_new;
	struct mxt_bo bo, bo_new;
	__u32 q_old, q_new;
	__u64 j_old, j_new;
	int status = 0;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q_old, NULL));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 500));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q_new, NULL));
	/*
	 * A buffer object each: on a shared one, the new queue's job would
	 * wait for the old one's (implicit sync) instead of timing out, and
	 * JOB_WAIT's own -ETIMEDOUT would pass for the job's.
	 */
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo_new));
	mxt_ones_gemm(&op, &bo);
	mxt_ones_gemm(&op_new, &bo_new);

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(self->fd, q_old, &op, 1, &j_old));
	ASSERT_EQ(0, mxt_submit(self->fd, q_new, &op_new, 1, &j_new));
	EXPECT_EQ(0, mxt_job_wait(self->fd, q_new, j_new, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	/* Well past 500 ms, the old queue's job is still held, not failed. */
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q_old, j_old,
					   mxt_deadline_ms(1000), &status));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, job_status(self->fd, q_old, j_old));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
	mxt_bo_free(self->fd, &bo_new);
}

/* Destroying a queue whose job hangs returns at once; fences signal. */
TEST_F(hang, destroy_queue_with_hung_job)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q, s, q2;
	__u64 seqno = 0;
	__s64 t0;
	int i;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, &seqno));
	usleep(100 * 1000);

	t0 = mxt_now_ns();
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, q));
	EXPECT_GT(t0 + 10 * MXT_NSEC_PER_SEC, mxt_now_ns());
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s, seqno,
					       mxt_deadline_ms(1000), 0));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, bo.handle, mxt_deadline_ms(1000)));
	EXPECT_EQ(-ENOENT, mxt_job_wait(self->fd, q, seqno, 0, NULL));

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, NULL));
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
	EXPECT_EQ(0, mxt_run(self->fd, q2, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/* Export a binary syncobj's fence as a sync_file. */
static int export_sync_file(int fd, __u32 syncobj)
{
	struct drm_syncobj_handle args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.handle = syncobj;
	args.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	args.fd = -1;
	ret = mxt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args);
	return ret ? ret : args.fd;
}

/* A sync_file's status: 1 signalled, 0 active, < 0 signalled with error. */
static int sync_file_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
}

/*
 * Closing a file whose queue has a hung job and more behind it: close()
 * returns promptly, every job's fence signals, the device goes on.
 */
TEST_F(hang, close_with_pending_jobs)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct pollfd pfd;
	struct mxt_bo bo;
	__u32 q, binary;
	int fd2, sync_fd, status, i;
	__s64 t0;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mxt_queue_create(fd2, &q, NULL));
	ASSERT_EQ(0, mxt_syncobj_create(fd2, 0, &binary));
	ASSERT_EQ(0, mxt_bo_new(fd2, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	/* A mapping would keep the file open past close(). */
	munmap(bo.map, bo.size);
	bo.map = NULL;

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	for (i = 0; i < 4; i++) {
		mxt_submit_init(&args, q, &op, 1);
		if (i == 3)
			args.out_sync.handle = binary;
		ASSERT_EQ(0, mxt_submit_args(fd2, &args));
	}
	sync_fd = export_sync_file(fd2, binary);
	ASSERT_LE(0, sync_fd);
	EXPECT_EQ(0, sync_file_status(sync_fd));
	usleep(100 * 1000);

	t0 = mxt_now_ns();
	EXPECT_EQ(0, close(fd2));
	EXPECT_GT(t0 + 10 * MXT_NSEC_PER_SEC, mxt_now_ns());
	/* The last job's fence outlives the file and signals. */
	pfd.fd = sync_fd;
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, MXT_JOB_TIMEOUT_MS));
	status = sync_file_status(sync_fd);
	TH_LOG("last job's fence: status %d", status);
	EXPECT_TRUE(status == 1 || (status < 0 && status > -1000));
	close(sync_fd);

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/* A child with hung jobs is killed: it goes away, the parent goes on. */
TEST_F(hang, sigkill_with_pending_jobs)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int pipefd[2], status;
	__u32 q;
	__u64 seqno;
	pid_t pid;
	__s64 t0;
	char c;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	/* The parent's own queue, with a job before and after. */
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));

	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct drm_mxaccel_op cop;
		struct mxt_bo cbo;
		__u32 cq[3];
		int fd, i;

		close(pipefd[0]);
		fd = mxt_open();
		if (fd < 0 || mxt_bo_new(fd, MXT_ONES_BO_SIZE, &cbo))
			_exit(1);
		mxt_ones_gemm(&cop, &cbo);
		for (i = 0; i < 3; i++) {
			if (mxt_queue_create(fd, &cq[i], NULL))
				_exit(2);
			if (mxt_submit(fd, cq[i], &cop, 1, NULL) ||
			    mxt_submit(fd, cq[i], &cop, 1, NULL))
				_exit(3);
		}
		if (write(pipefd[1], "x", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	usleep(200 * 1000);

	t0 = mxt_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	EXPECT_GT(t0 + 20 * MXT_NSEC_PER_SEC, mxt_now_ns());

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
	ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, &seqno));
	EXPECT_EQ(0, job_status(self->fd, q, seqno));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/*
 * Teardown must not wait for another queue's job.  Queue "waiter" has a
 * job that waits (in_sync) for a job of queue "holder", which the engine
 * holds; holder's jobs time out after HOLD_TIMEOUT_MS.  Destroying the
 * waiter, closing the file, or killing the process must return well
 * before that timeout: the waiting job is canceled, as the driver does
 * for the jobs of a queue it tears down.  The waiter is created first, so
 * that a file torn down queue by queue in creation order reaches it while
 * the holder is still held.
 */
#define HOLD_TIMEOUT_MS	4000
#define PROMPT_MS	(HOLD_TIMEOUT_MS / 2)

struct cross {
	__u32 waiter, holder, waiter_sync, holder_sync;
	__u64 held, waiting;
	struct mxt_bo bo;
};

/* In fd: the two queues, the held job and the job waiting for it. */
static int cross_setup(int fd, struct cross *x, bool keep_map)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op op;
	int ret;

	ret = mxt_param_write("job_timeout_ms", HOLD_TIMEOUT_MS);
	if (!ret)
		ret = mxt_queue_create(fd, &x->waiter, &x->waiter_sync);
	if (!ret)
		ret = mxt_queue_create(fd, &x->holder, &x->holder_sync);
	if (!ret)
		ret = mxt_bo_new(fd, MXT_ONES_BO_SIZE, &x->bo);
	if (ret)
		return ret;
	mxt_ones_gemm(&op, &x->bo);
	if (!keep_map) {
		/* A mapping would keep the file open past close(). */
		munmap(x->bo.map, x->bo.size);
		x->bo.map = NULL;
	}
	ret = mxt_param_write("test_hang", 1);
	if (!ret)
		ret = mxt_submit(fd, x->holder, &op, 1, &x->held);
	if (ret)
		return ret;
	memset(&in, 0, sizeof(in));
	in.handle = x->holder_sync;
	in.point = x->held;
	mxt_submit_init(&args, x->waiter, &op, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	ret = mxt_submit_args(fd, &args);
	x->waiting = args.seqno;
	/* Let the holder's job reach the engine. */
	usleep(100 * 1000);
	return ret;
}

/*
 * QUEUE_DESTROY of the waiter alone returns at once (it never waits for
 * jobs).  The waiter's job still waits for its dependency, the holder's
 * job, and is canceled when it reaches the ring: its point signals once
 * the holder's job is over (by its timeout at the latest).
 */
TEST_F(hang, destroy_queue_waiting_on_other_queue)
{
	struct cross x;
	__s64 t0, ms;
	int status = 1;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, cross_setup(self->fd, &x, true));

	t0 = mxt_now_ns();
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, x.waiter));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	TH_LOG("QUEUE_DESTROY took %lld ms (holder's timeout %d ms)",
	       (long long)ms, HOLD_TIMEOUT_MS);
	EXPECT_GT(PROMPT_MS, ms);
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, x.waiter_sync,
					       x.waiting,
					       mxt_deadline_ms(HOLD_TIMEOUT_MS +
							       mxt_scaled_ms(5000)),
					       0));
	/* Done by its timeout, or going on now. */
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, mxt_job_wait(self->fd, x.holder, x.held,
				  mxt_job_deadline(),
				  &status));
	EXPECT_TRUE(status == 0 || status == -ETIMEDOUT);
	mxt_bo_free(self->fd, &x.bo);
}

TEST_F(hang, close_with_cross_queue_dependency)
{
	struct cross x;
	__s64 t0, ms;
	int fd2;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, cross_setup(fd2, &x, false));

	t0 = mxt_now_ns();
	EXPECT_EQ(0, close(fd2));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	TH_LOG("close() took %lld ms (holder's timeout %d ms)",
	       (long long)ms, HOLD_TIMEOUT_MS);
	EXPECT_GT(PROMPT_MS, ms);
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
}

TEST_F(hang, sigkill_with_cross_queue_dependency)
{
	int pipefd[2], status;
	__s64 t0, ms;
	pid_t pid;
	char c;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cross x;
		int fd = mxt_open();

		close(pipefd[0]);
		if (fd < 0 || cross_setup(fd, &x, true))
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);

	t0 = mxt_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	TH_LOG("exit of the killed process took %lld ms (holder's timeout %d ms)",
	       (long long)ms, HOLD_TIMEOUT_MS);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(PROMPT_MS, ms);
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
}

/*
 * Guilty queues with the shortest timeout: their later jobs never reach
 * the engine, and must all fail with -ECANCELED, however often the
 * scheduler's timeout fires around them (a timeout handler must not touch
 * a job that is already over).  The race is narrow: many rounds of many
 * jobs.
 */
static int guilty_round(struct __test_metadata *_metadata, int fd,
			const struct drm_mxaccel_op *op, int jobs)
{
	__u64 first, seqno = 0, depth, s;
	int i, n, wrong = 0, status;
	__u32 q;

	ASSERT_EQ(0, mxt_queue_create(fd, &q, NULL));
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(fd, q, op, 1, &first));
	EXPECT_EQ(-ETIMEDOUT, job_status(fd, q, first));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));

	/*
	 * In batches of at most the queue depth (-EBUSY beyond it), each
	 * waited for and checked while its statuses are in the window.
	 */
	ASSERT_EQ(0, mxt_get_param(fd, DRM_MXACCEL_PARAM_QUEUE_DEPTH, &depth));
	seqno = first;
	for (i = 0; i < jobs; i += n) {
		int busy = 0, ret;

		for (n = 0; n < (int)depth && i + n < jobs; n++) {
			ret = mxt_submit(fd, q, op, 1, &seqno);
			if (ret == -EBUSY && n == 0 && busy++ < 1000) {
				/* Finished jobs are still being freed. */
				usleep(1000);
				n--;
				continue;
			}
			if (ret == -EBUSY)
				break;
			ASSERT_EQ(0, ret);
		}
		ASSERT_LT(0, n);
		ASSERT_EQ(0, mxt_job_wait(fd, q, seqno, mxt_job_deadline(),
					  &status));
		for (s = seqno - n + 1; s <= seqno; s++) {
			ASSERT_EQ(0, mxt_job_wait(fd, q, s, 0, &status));
			if (status != -ECANCELED && wrong++ < 4)
				TH_LOG("job %llu: status %d",
				       (unsigned long long)s, status);
		}
	}
	EXPECT_EQ(first + jobs, seqno);
	EXPECT_EQ(0, mxt_queue_destroy(fd, q));
	return wrong;
}

TEST_F_TIMEOUT(hang, guilty_queue_short_timeout, 120)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int round, wrong = 0;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 1));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	/* Fewer jobs per round where every job is slower (debug kernels). */
	for (round = 0; round < 6; round++)
		wrong += guilty_round(_metadata, self->fd, &op,
				      4000 / mxt_time_scale());
	EXPECT_EQ(0, wrong);
	mxt_bo_free(self->fd, &bo);
}

/*
 * job_timeout_ms = 0: either the module parameter refuses it, or a queue
 * created then still runs ordinary jobs; whatever 0 means, it cannot mean
 * "every job has timed out before it started".
 */
TEST_F(hang, zero_timeout)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 v, seqno;
	__u32 q;
	int i;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	if (mxt_param_write("job_timeout_ms", 0) == -EINVAL)
		return;
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS,
				   &v));
	ASSERT_EQ(0, v);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, &seqno));
		EXPECT_EQ(0, job_status(self->fd, q, seqno))
			TH_LOG("job %d", i);
	}
	mxt_bo_free(self->fd, &bo);
}

/* A child killed while its jobs run normally: nothing is left behind. */
TEST_F(hang, sigkill_while_busy)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int round, status;
	__u32 q;
	pid_t pid;

	for (round = 0; round < 5; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct drm_mxaccel_op cop;
			struct mxt_bo cbo;
			__u32 cq;
			int fd;

			fd = mxt_open();
			if (fd < 0 || mxt_bo_new(fd, MXT_ONES_BO_SIZE, &cbo) ||
			    mxt_queue_create(fd, &cq, NULL))
				_exit(1);
			mxt_ones_gemm(&cop, &cbo);
			for (;;)
				mxt_submit(fd, cq, &cop, 1, NULL);
		}
		usleep((20 + 40 * round) * 1000);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

TEST_HARNESS_MAIN
