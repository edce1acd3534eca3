// SPDX-License-Identifier: GPL-2.0
/*
 * The driver core of uapi version 2: lifetimes and statuses.
 *
 * - a sync_file of a job outlives its queue and its file: its fences keep
 *   readable driver and timeline names and signal with -ECANCELED;
 * - JOB_WAIT reports the status of jobs the scheduler has freed, within
 *   the status window (-ENODATA before it);
 * - a job whose producer failed (in_sync or implicit) is canceled and
 *   writes nothing;
 * - SUBMIT_WAIT and the inline path;
 * - threads racing SUBMIT, JOB_WAIT, QUEUE_DESTROY on one file;
 * - a buffer object closed and unmapped while its job waits;
 * - SIGKILL of a process whose job runs: its fence signals, canceled;
 * - a long software job neither stalls other queues nor pins a CPU, and
 *   stops promptly when its queue goes;
 * - priorities, rings and the debugfs files.
 *
 * Jobs are held with test_hang (every job the engine starts hangs while
 * it is set; such jobs are never run inline); parameters are put back
 * after each test.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/sync_file.h>

#include "mxaccel_test.h"

FIXTURE(core) {
	int fd;
};

FIXTURE_SETUP(core)
{
	mxt_params_restore();
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(core)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

#define NEED_PARAMS "needs writable test_hang and job_timeout_ms parameters"

/* A deadline for something that must happen promptly, scaled. */
static __s64 prompt_deadline(void)
{
	return mxt_deadline_ms(mxt_scaled_ms(5000));
}

/*
 * Nothing signals when the scheduler has freed a finished job (free_job
 * runs on its workqueue after the fence signalled) or when a queue's
 * release work has run: give them time.
 */
static void let_frees_happen(void)
{
	usleep(mxt_scaled_ms(200) * 1000);
}

/* The job's status, waiting up to MXT_JOB_TIMEOUT_MS, or JOB_WAIT's error. */
static int job_status(int fd, __u32 queue, __u64 seqno)
{
	int ret, status;

	ret = mxt_job_wait(fd, queue, seqno, mxt_job_deadline(), &status);
	/* JOB_WAIT's own timeout must not pass for a job's -ETIMEDOUT. */
	return ret ? (ret == -ETIMEDOUT ? -ETIME : ret) : status;
}

/* The smallest GEMM: C[0][0] = A row 0 . B row 0 (one block). */
static void tiny_gemm(struct drm_mxaccel_op *op, const struct mxt_bo *bo)
{
	mxt_ones_gemm(op, bo);
	op->m = 1;
	op->n = 1;
}

/* ---- sync_files ---------------------------------------------------------- */

#define MAX_FENCES	8

struct sf_info {
	struct sync_file_info file;
	struct sync_fence_info fence[MAX_FENCES];
};

/* SYNC_IOC_FILE_INFO with the info of every fence; 0 or -errno. */
static int sync_info(int sfd, struct sf_info *si)
{
	__u32 n;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		memset(si, 0, sizeof(*si));
		if (ioctl(sfd, SYNC_IOC_FILE_INFO, &si->file))
			return -errno;
		n = si->file.num_fences;
		if (n > MAX_FENCES)
			return -E2BIG;
		memset(&si->file, 0, sizeof(si->file));
		memset(si->fence, 0xcc, sizeof(si->fence));
		si->file.num_fences = n;
		si->file.sync_fence_info = (uintptr_t)si->fence;
		if (!ioctl(sfd, SYNC_IOC_FILE_INFO, &si->file))
			return 0;
		/* The number changed under us: again. */
		if (errno != EINVAL)
			return -errno;
	}
	return -EINVAL;
}

/* A NUL-terminated, non-empty, printable name of at most 31 chars. */
static bool sane_name(const char *s, size_t size)
{
	size_t i;

	for (i = 0; i < size && s[i]; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return i > 0 && i < size;
}

/*
 * Every fence of the sync_file names a driver of ours ("drm_sched" for the
 * scheduler's fences, "mxaccel" for inline jobs) and a ring of ours as its
 * timeline; returns how many of them have status `status` (all must have
 * a status other than 0 if `status` is not 0).
 */
static int check_fences(struct __test_metadata *_metadata, int sfd,
			int status)
{
	struct sf_info si;
	unsigned int i;
	int matching = 0;

	EXPECT_EQ(0, sync_info(sfd, &si));
	EXPECT_LE(1, si.file.num_fences);
	EXPECT_TRUE(sane_name(si.file.name, sizeof(si.file.name)));
	for (i = 0; i < si.file.num_fences && i < MAX_FENCES; i++) {
		struct sync_fence_info *f = &si.fence[i];

		EXPECT_TRUE(sane_name(f->driver_name, sizeof(f->driver_name)));
		EXPECT_TRUE(sane_name(f->obj_name, sizeof(f->obj_name)));
		if (!sane_name(f->driver_name, sizeof(f->driver_name)) ||
		    !sane_name(f->obj_name, sizeof(f->obj_name)))
			continue;
		TH_LOG("fence %u: driver '%s' timeline '%s' status %d", i,
		       f->driver_name, f->obj_name, f->status);
		EXPECT_TRUE(!strcmp(f->driver_name, "drm_sched") ||
			    !strcmp(f->driver_name, "mxaccel"));
		EXPECT_EQ(0, strncmp(f->obj_name, "mxaccel", 7));
		EXPECT_NE(NULL, strstr(f->obj_name, "-ring"));
		if (status)
			EXPECT_NE(0, f->status);
		matching += f->status == status;
	}
	return matching;
}

static int sync_file_wait(int sfd, __s64 ms)
{
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };

	return poll(&pfd, 1, ms);
}

/* The status of the sync_file itself: 1, 0 or a negative errno. */
static int sync_file_status(int sfd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
}

/* Create and destroy queues with jobs: reuse the memory of freed ones. */
static void churn(struct __test_metadata *_metadata, int fd)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q;
	int i;

	ASSERT_EQ(0, mxt_bo_new(fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, mxt_queue_create(fd, &q, NULL));
		EXPECT_EQ(0, mxt_run(fd, q, &op, 1));
		EXPECT_EQ(0, mxt_queue_destroy(fd, q));
	}
	mxt_bo_free(fd, &bo);
}

/*
 * A hung job exported as a sync_file, then its queue destroyed (or its
 * file closed): the fence signals with -ECANCELED, and its names read
 * right before and long after the queue and the job are gone.
 */
static void sync_file_outlives(struct __test_metadata *_metadata, int fd,
			       bool close_file, bool hang)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q, s;
	__u64 seqno;
	int fd2, sfd, st;

	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	fd2 = close_file ? mxt_open() : fd;
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mxt_queue_create(fd2, &q, &s));
	ASSERT_EQ(0, mxt_bo_new(fd2, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	if (close_file) {
		/* A mapping would keep the file open past close(). */
		munmap(bo.map, bo.size);
		bo.map = NULL;
	}
	if (hang)
		ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit_flags(fd2, q, &op, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &seqno));
	sfd = mxt_export_sync_file(fd2, s, seqno);
	ASSERT_LE(0, sfd);
	if (hang) {
		EXPECT_EQ(0, sync_file_status(sfd));
		check_fences(_metadata, sfd, 0);
	}

	ASSERT_EQ(0, close_file ? close(fd2) : mxt_queue_destroy(fd2, q));
	EXPECT_EQ(1, sync_file_wait(sfd, mxt_scaled_ms(5000)));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	let_frees_happen();
	churn(_metadata, fd);

	st = sync_file_status(sfd);
	TH_LOG("sync_file status %d", st);
	if (hang) {
		/* The job was stopped: canceled, never "done". */
		EXPECT_TRUE(st == -ECANCELED || st == 1);
		EXPECT_LE(1, check_fences(_metadata, sfd, -ECANCELED));
	} else {
		EXPECT_TRUE(st == -ECANCELED || st == 1);
		check_fences(_metadata, sfd, 1);
	}
	EXPECT_EQ(0, close(sfd));
	if (!close_file)
		mxt_bo_free(fd, &bo);
}

TEST_F(core, sync_file_after_queue_destroy)
{
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	sync_file_outlives(_metadata, self->fd, false, true);
}

TEST_F(core, sync_file_after_close)
{
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	sync_file_outlives(_metadata, self->fd, true, true);
}

/* A job that is not held: done or canceled, either way readable. */
TEST_F(core, sync_file_of_running_job_after_close)
{
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	sync_file_outlives(_metadata, self->fd, true, false);
}

/* An inline job's fence (the driver's own) after its queue is gone. */
TEST_F(core, sync_file_of_inline_job)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 work;
	__u32 q, s;
	int sfd;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_INLINE_MAX_WORK,
				   &work));
	if (!work)
		SKIP(return, "the device never runs jobs inline");
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	tiny_gemm(&op, &bo);
	mxt_submit_init(&args, q, &op, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	if (work)
		EXPECT_TRUE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);
	sfd = mxt_export_sync_file(self->fd, s, args.seqno);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, q));
	EXPECT_EQ(1, sync_file_wait(sfd, mxt_scaled_ms(5000)));
	let_frees_happen();
	churn(_metadata, self->fd);
	EXPECT_EQ(1, sync_file_status(sfd));
	EXPECT_LE(1, check_fences(_metadata, sfd, 1));
	close(sfd);
	mxt_bo_free(self->fd, &bo);
}

/* ---- statuses ------------------------------------------------------------ */

/*
 * Statuses stay after the scheduler freed the jobs: a timed-out job
 * -ETIMEDOUT, the next job of its (guilty) queue -ECANCELED, a job of
 * another queue 0.  The jobs are waited for through the timeline, not
 * JOB_WAIT, so that nothing of the job is looked at before it is freed.
 */
TEST_F(core, status_after_job_freed)
{
	struct drm_mxaccel_op op, op2;
	struct mxt_bo bo, bo2;
	__u32 q1, s1, q2, s2;
	__u64 j1, j2, j3;
	int status;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 500));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &j1));
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s1, j1,
					       mxt_job_deadline(), 0));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &j2));
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s1, j2,
					       mxt_job_deadline(), 0));
	/* On a buffer object of its own: no dependency on the failed jobs. */
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo2));
	mxt_ones_gemm(&op2, &bo2);
	ASSERT_EQ(0, mxt_submit_flags(self->fd, q2, &op2, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &j3));
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s2, j3,
					       mxt_job_deadline(), 0));
	let_frees_happen();

	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, j1, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, j2, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	ASSERT_EQ(0, mxt_job_wait(self->fd, q2, j3, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&bo2));
	mxt_bo_free(self->fd, &bo2);
	/* And with a deadline: the same, at once. */
	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, j1, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	mxt_bo_free(self->fd, &bo);
}

/*
 * STATUS_WINDOW + 2 jobs on one queue: the two oldest are -ENODATA, the
 * oldest in the window and the newest report 0.
 */
TEST_F(core, status_window)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 window, i, last = 0;
	__u32 q;
	int status, not_done = 0;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_STATUS_WINDOW,
				   &window));
	ASSERT_LE(2, window);
	if (window > 100000)
		SKIP(return, "status window %llu: too many jobs",
		     (unsigned long long)window);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	tiny_gemm(&op, &bo);
	/* Waited for in SUBMIT: never more than one unfinished. */
	for (i = 0; i < window + 2; i++) {
		mxt_submit_init(&args, q, &op, 1);
		args.flags = DRM_MXACCEL_SUBMIT_WAIT;
		args.wait_timeout_ns = mxt_job_deadline();
		ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
		ASSERT_EQ(last + 1, args.seqno);
		last = args.seqno;
		not_done += !(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE);
	}
	EXPECT_EQ(0, not_done);
	EXPECT_EQ(-ENODATA, mxt_job_wait(self->fd, q, 1, 0, &status));
	EXPECT_EQ(-ENODATA, mxt_job_wait(self->fd, q, last - window, 0,
					 &status));
	EXPECT_EQ(-ENODATA, mxt_job_wait(self->fd, q, 1, mxt_job_deadline(),
					 &status));
	status = 1;
	EXPECT_EQ(0, mxt_job_wait(self->fd, q, last - window + 1, 0, &status));
	EXPECT_EQ(0, status);
	status = 1;
	EXPECT_EQ(0, mxt_job_wait(self->fd, q, last, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, q, last + 1, 0, &status));
	mxt_bo_free(self->fd, &bo);
}

/* ---- failed producers ---------------------------------------------------- */

/*
 * Producer: quantize 32 x 32 fp32 ones at x + 4096 into e4m3 codes at x + 0
 * and scales at x + 1024.
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

/* Consumer: y's C (y + 4096, prefilled 0xcc) = x's A * ones^T. */
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

/*
 * The producer on queue A hangs and times out; the consumer on queue B
 * waits for it, explicitly (in_sync on A's point) or implicitly (it reads
 * what the producer writes), and must be canceled without running: its
 * output stays as it was.  test_hang is cleared as soon as the producer
 * timed out; a consumer that ran anyway while it was still set would
 * hang and time out after B's own timeout: -ETIMEDOUT, a failure too.
 */
static void failed_producer(struct __test_metadata *_metadata, int fd,
			    bool explicit)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op pa, cb;
	struct mxt_bo x, y, z;
	__u32 qa, sa, qb, sb;
	__u64 ja, jb;

	ASSERT_EQ(0, mxt_bo_new(fd, 8192, &x));
	ASSERT_EQ(0, mxt_bo_new(fd, 8192, &y));
	ASSERT_EQ(0, mxt_bo_new(fd, 8192, &z));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 500));
	ASSERT_EQ(0, mxt_queue_create(fd, &qa, &sa));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 2000));
	ASSERT_EQ(0, mxt_queue_create(fd, &qb, &sb));
	op_quantize_x(&x, &pa);
	if (explicit) {
		/* The consumer shares no buffer object with the producer. */
		memset(z.map, 0x38, 1024);
		memset(mxt_bo_at(&z, 1024), 127, 32);
		op_gemm_x(&z, &y, &cb);
	} else {
		op_gemm_x(&x, &y, &cb);
	}

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(fd, qa, &pa, 1, &ja));
	mxt_submit_init(&args, qb, &cb, 1);
	if (explicit) {
		memset(&in, 0, sizeof(in));
		in.handle = sa;
		in.point = ja;
		args.in_syncs = (uintptr_t)&in;
		args.in_sync_count = 1;
		args.sync_size = sizeof(in);
	}
	ASSERT_EQ(0, mxt_submit_args(fd, &args));
	jb = args.seqno;
	/* It waits, so it cannot have run inline. */
	EXPECT_FALSE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);

	ASSERT_EQ(0, mxt_syncobj_timeline_wait(fd, sa, ja, mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(-ETIMEDOUT, job_status(fd, qa, ja));
	EXPECT_EQ(-ECANCELED, job_status(fd, qb, jb));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&y, 4096), 0xcc, 4096));

	/* B is not guilty: its next job runs (z holds ones). */
	if (explicit) {
		EXPECT_EQ(0, mxt_run(fd, qb, &cb, 1));
		EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&y, 4096)));
	}
	mxt_bo_free(fd, &x);
	mxt_bo_free(fd, &y);
	mxt_bo_free(fd, &z);
}

TEST_F(core, consumer_of_failed_producer_in_sync)
{
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	failed_producer(_metadata, self->fd, true);
}

TEST_F(core, consumer_of_failed_producer_implicit)
{
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	failed_producer(_metadata, self->fd, false);
}

/* ---- SUBMIT_WAIT and inline jobs ----------------------------------------- */

TEST_F(core, submit_wait)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 work;
	__u32 q;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_INLINE_MAX_WORK,
				   &work));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);

	/* 32 x 32 x 32: 1024 block operations. */
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = mxt_job_deadline();
	args.status = (__s32)0xcccccccc;
	args.out_flags = 0xcccccccc;
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(1, args.seqno);
	EXPECT_TRUE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE);
	EXPECT_EQ(work >= 1024, !!(args.out_flags &
				   DRM_MXACCEL_SUBMIT_OUT_INLINE));
	EXPECT_EQ(0, args.out_flags & ~(DRM_MXACCEL_SUBMIT_OUT_DONE |
					DRM_MXACCEL_SUBMIT_OUT_INLINE));
	EXPECT_EQ(0, args.status);
	EXPECT_EQ(0, mxt_ones_wrong(&bo));

	/* Queued, then waited for. */
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT | DRM_MXACCEL_SUBMIT_NO_INLINE;
	args.wait_timeout_ns = mxt_job_deadline();
	args.status = (__s32)0xcccccccc;
	args.out_flags = 0xcccccccc;
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(2, args.seqno);
	EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE, args.out_flags);
	EXPECT_EQ(0, args.status);
	EXPECT_EQ(0, mxt_ones_wrong(&bo));

	/* Neither: nothing reported, even for a job that ran inline. */
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_NO_INLINE;
	args.status = (__s32)0xcccccccc;
	args.out_flags = 0xcccccccc;
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(0, args.out_flags);
	EXPECT_EQ(0, args.status);
	EXPECT_EQ(0, job_status(self->fd, q, args.seqno));
	mxt_bo_free(self->fd, &bo);
}

/*
 * SUBMIT_WAIT on a held job: the ioctl succeeds at its deadline without
 * OUT_DONE, the job stays queued (its seqno is valid) and times out
 * later; on the then guilty queue, a waited-for job reports -ECANCELED.
 */
TEST_F(core, submit_wait_deadline)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__s64 t0, deadline, t1;
	__u32 q;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 1000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));

	t0 = mxt_now_ns();
	deadline = t0 + 200 * MXT_NSEC_PER_MSEC;
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = deadline;
	args.status = (__s32)0xcccccccc;
	args.out_flags = 0xcccccccc;
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	t1 = mxt_now_ns();
	EXPECT_EQ(1, args.seqno);
	EXPECT_EQ(0, args.out_flags);
	EXPECT_EQ(0, args.status);
	/* The kernel waits in jiffies: allow one tick early at most. */
	EXPECT_LE(deadline - 20 * MXT_NSEC_PER_MSEC, t1);
	EXPECT_GT(t0 + 900 * MXT_NSEC_PER_MSEC * mxt_time_scale(), t1);

	/* A wait deadline of 0 does not wait. */
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = 0;
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(2, args.seqno);
	EXPECT_EQ(0, args.out_flags);

	EXPECT_EQ(-ETIMEDOUT, job_status(self->fd, q, 1));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(-ECANCELED, job_status(self->fd, q, 2));

	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = mxt_job_deadline();
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(3, args.seqno);
	EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE, args.out_flags);
	EXPECT_EQ(-ECANCELED, args.status);
	mxt_bo_free(self->fd, &bo);
}

/* inline_max_work 0: nothing runs inline, everything still completes. */
TEST_F(core, inline_off)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 v;
	__u32 q;

	if (!mxt_param_writable("inline_max_work"))
		SKIP(return, "needs the writable inline_max_work parameter");
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_INLINE_MAX_WORK,
				   &v));
	if (!v)
		SKIP(return, "the device never runs jobs inline");
	ASSERT_EQ(0, mxt_param_write("inline_max_work", 0));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_INLINE_MAX_WORK,
				   &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	tiny_gemm(&op, &bo);
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = mxt_job_deadline();
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE, args.out_flags);
	EXPECT_EQ(0, args.status);
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&bo, MXT_ONES_C)));

	/* One block operation allowed: the 1-block GEMM runs inline. */
	ASSERT_EQ(0, mxt_param_write("inline_max_work", 1));
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = mxt_job_deadline();
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE | DRM_MXACCEL_SUBMIT_OUT_INLINE,
		  args.out_flags);
	/* Two are too many. */
	op.n = 2;
	mxt_submit_init(&args, q, &op, 1);
	args.flags = DRM_MXACCEL_SUBMIT_WAIT;
	args.wait_timeout_ns = mxt_job_deadline();
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE, args.out_flags);
	mxt_bo_free(self->fd, &bo);
}

/* ---- threads on one file ------------------------------------------------- */

#define RACE_QUEUES	4
#define RACE_THREADS	6

struct race {
	int fd;
	int stop;			/* atomic: __atomic_load_n */
	__u32 queue[RACE_QUEUES];	/* read and replaced racily */
	struct drm_mxaccel_op op[RACE_THREADS];
	struct mxt_bo bo[RACE_THREADS];
	int unexpected;
	int last_err, last_ioctl;
	unsigned long ioctls;
};

static void race_bad(struct race *r, int which, int err)
{
	__atomic_add_fetch(&r->unexpected, 1, __ATOMIC_RELAXED);
	r->last_err = err;
	r->last_ioctl = which;
}

struct race_arg {
	struct race *r;
	unsigned int t;
};

static void *race_thread(void *arg)
{
	struct race *r = ((struct race_arg *)arg)->r;
	unsigned int t = ((struct race_arg *)arg)->t;
	unsigned int seed = 12345 + t;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		unsigned int slot = rand_r(&seed) % RACE_QUEUES;
		__u32 q = __atomic_load_n(&r->queue[slot], __ATOMIC_RELAXED);
		struct drm_mxaccel_submit args;
		int ret, status;
		__u32 nq;

		__atomic_add_fetch(&r->ioctls, 1, __ATOMIC_RELAXED);
		switch (rand_r(&seed) % 8) {
		case 0: case 1: case 2:
			mxt_submit_init(&args, q, &r->op[t], 1);
			args.flags = rand_r(&seed) % 4;
			if (args.flags & DRM_MXACCEL_SUBMIT_WAIT)
				args.wait_timeout_ns = mxt_deadline_ms(5);
			ret = mxt_submit_args(r->fd, &args);
			if (ret && ret != -ENOENT && ret != -EBUSY)
				race_bad(r, 0, ret);
			if (!ret && (args.out_flags &
				     DRM_MXACCEL_SUBMIT_OUT_DONE) &&
			    args.status && args.status != -ECANCELED)
				race_bad(r, 10, args.status);
			break;
		case 3: case 4: case 5:
			ret = mxt_job_wait(r->fd, q, 1 + rand_r(&seed) % 64,
					   mxt_deadline_ms(rand_r(&seed) % 3),
					   &status);
			if (ret && ret != -ENOENT && ret != -EINVAL &&
			    ret != -ETIMEDOUT && ret != -ENODATA)
				race_bad(r, 1, ret);
			if (!ret && status && status != -ECANCELED)
				race_bad(r, 11, status);
			break;
		case 6:
			ret = mxt_queue_destroy(r->fd, q);
			if (ret && ret != -ENOENT)
				race_bad(r, 2, ret);
			break;
		default:
			ret = mxt_queue_create(r->fd, &nq, NULL);
			if (ret == -EBUSY)
				break;
			if (ret) {
				race_bad(r, 3, ret);
				break;
			}
			/* Replace a slot; the queue it held is destroyed. */
			q = __atomic_exchange_n(&r->queue[slot], nq,
						__ATOMIC_RELAXED);
			ret = mxt_queue_destroy(r->fd, q);
			if (ret && ret != -ENOENT)
				race_bad(r, 4, ret);
			break;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(core, threads_race_submit_wait_destroy, 120)
{
	static struct race r;
	struct race_arg slots[RACE_THREADS];
	pthread_t th[RACE_THREADS];
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int i;
	__u32 q;

	memset(&r, 0, sizeof(r));
	r.fd = self->fd;
	for (i = 0; i < RACE_QUEUES; i++)
		ASSERT_EQ(0, mxt_queue_create(self->fd, &r.queue[i], NULL));
	for (i = 0; i < RACE_THREADS; i++) {
		/* A buffer object per thread: jobs need not order. */
		ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &r.bo[i]));
		mxt_ones_gemm(&r.op[i], &r.bo[i]);
		if (i % 2)
			r.op[i].m = 4;
	}
	for (i = 0; i < RACE_THREADS; i++) {
		slots[i].r = &r;
		slots[i].t = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, race_thread,
					    &slots[i]));
	}
	usleep(3 * 1000 * 1000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%lu ioctls, %d unexpected results (last: ioctl %d: %d)",
	       r.ioctls, r.unexpected, r.last_ioctl, r.last_err);
	EXPECT_EQ(0, r.unexpected);

	/* The file and the device are fine. */
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/* ---- buffer objects of waiting jobs -------------------------------------- */

/*
 * A job whose inputs are in a buffer object z waits (in_sync) for a job
 * held on another queue; z is closed and unmapped meanwhile.  Once the
 * holder goes on, the job runs on z's pages all the same and writes the
 * right result into y.
 */
TEST_F(core, bo_closed_while_job_waits)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op hop, op;
	struct mxt_bo h, z, y;
	__u32 qh, sh, qw;
	__u64 jh, jw;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &qh, &sh));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &qw, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &h));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &z));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &y));
	mxt_ones_gemm(&hop, &h);
	/* A and B in z (ones), C in y. */
	memset(z.map, 0x38, 1024);
	memset(mxt_bo_at(&z, 1024), 127, 32);
	memset(mxt_bo_at(&z, 2048), 0x38, 1024);
	memset(mxt_bo_at(&z, 3072), 127, 32);
	memset(mxt_bo_at(&y, 4096), 0xcc, 4096);
	mxt_gemm(&op, 32, 32, 32);
	mxt_mx(&op.a, z.handle, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, z.handle, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, y.handle, 4096, DRM_MXACCEL_DTYPE_F32);

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(self->fd, qh, &hop, 1, &jh));
	memset(&in, 0, sizeof(in));
	in.handle = sh;
	in.point = jh;
	mxt_submit_init(&args, qw, &op, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	jw = args.seqno;

	/* z goes entirely, as far as this process can tell. */
	ASSERT_EQ(0, munmap(z.map, z.size));
	z.map = NULL;
	ASSERT_EQ(0, mxt_gem_close(self->fd, z.handle));
	z.handle = 0;
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, qw, jw, 0, NULL));

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, job_status(self->fd, qh, jh));
	EXPECT_EQ(0, job_status(self->fd, qw, jw));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&y, 4096)));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&y, 8188)));
	mxt_bo_free(self->fd, &h);
	mxt_bo_free(self->fd, &y);
}

/* ---- sw_sync (debug kernels): a fence nobody but us signals -------------- */

struct sw_sync_create_fence_data {
	__u32 value;
	char name[32];
	__s32 fence;
};

#define SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct sw_sync_create_fence_data)
#define SW_SYNC_IOC_INC		 _IOW('W', 1, __u32)

/* The same with the in_sync a sw_sync fence imported into a syncobj. */
TEST_F(core, bo_closed_while_job_waits_sw_sync)
{
	struct sw_sync_create_fence_data cf;
	struct drm_syncobj_handle imp;
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op op;
	struct mxt_bo z, y;
	__u32 qw, syncobj, one = 1;
	__u64 jw;
	int tl;

	tl = open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC);
	if (tl < 0)
		SKIP(return, "no /sys/kernel/debug/sync/sw_sync (CONFIG_SW_SYNC)");
	memset(&cf, 0, sizeof(cf));
	cf.value = 1;
	strcpy(cf.name, "mxaccel-test");
	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &cf));
	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &syncobj));
	memset(&imp, 0, sizeof(imp));
	imp.handle = syncobj;
	imp.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
	imp.fd = cf.fence;
	ASSERT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp));
	close(cf.fence);

	ASSERT_EQ(0, mxt_queue_create(self->fd, &qw, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &z));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 8192, &y));
	memset(z.map, 0x38, 1024);
	memset(mxt_bo_at(&z, 1024), 127, 32);
	memset(mxt_bo_at(&z, 2048), 0x38, 1024);
	memset(mxt_bo_at(&z, 3072), 127, 32);
	memset(mxt_bo_at(&y, 4096), 0xcc, 4096);
	mxt_gemm(&op, 32, 32, 32);
	mxt_mx(&op.a, z.handle, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, z.handle, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, y.handle, 4096, DRM_MXACCEL_DTYPE_F32);

	memset(&in, 0, sizeof(in));
	in.handle = syncobj;
	mxt_submit_init(&args, qw, &op, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	jw = args.seqno;
	EXPECT_FALSE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);

	ASSERT_EQ(0, munmap(z.map, z.size));
	z.map = NULL;
	ASSERT_EQ(0, mxt_gem_close(self->fd, z.handle));
	z.handle = 0;
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, qw, jw,
					   mxt_deadline_ms(200), NULL));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&y, 4096), 0xcc, 4096));

	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_INC, &one));
	EXPECT_EQ(0, job_status(self->fd, qw, jw));
	EXPECT_EQ(MXT_ONES_C32, mxt_get_u32(mxt_bo_at(&y, 4096)));
	close(tl);
	mxt_bo_free(self->fd, &y);
}

/* ---- SIGKILL while a job runs -------------------------------------------- */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	char c = 'f';

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	int fd;
	char c;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * A child submits a job that the engine holds, sends its fence (as a
 * sync_file) to us and is killed: the fence signals, canceled, within a
 * few seconds, though the job's timeout is ten minutes away.
 */
TEST_F(core, sigkill_mid_job_fence_signals)
{
	int sv[2], sfd, status;
	__s64 t0, ms;
	pid_t pid;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct drm_mxaccel_op op;
		struct mxt_bo bo;
		__u32 q, s;
		__u64 seqno;
		int fd, f;

		close(sv[0]);
		fd = mxt_open();
		if (fd < 0 || mxt_bo_new(fd, MXT_ONES_BO_SIZE, &bo) ||
		    mxt_queue_create(fd, &q, &s))
			_exit(1);
		mxt_ones_gemm(&op, &bo);
		if (mxt_submit(fd, q, &op, 1, &seqno))
			_exit(2);
		/* Its next job, queued behind. */
		if (mxt_submit(fd, q, &op, 1, NULL))
			_exit(3);
		f = mxt_export_sync_file(fd, s, seqno);
		if (f < 0 || send_fd(sv[1], f))
			_exit(4);
		for (;;)
			pause();
	}
	close(sv[1]);
	sfd = recv_fd(sv[0]);
	close(sv[0]);
	ASSERT_LE(0, sfd);
	EXPECT_EQ(0, sync_file_status(sfd));
	/* Let the job reach the engine. */
	usleep(100 * 1000);

	t0 = mxt_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(1, sync_file_wait(sfd, mxt_scaled_ms(5000)));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	TH_LOG("fence signalled %lld ms after SIGKILL", (long long)ms);
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	let_frees_happen();
	EXPECT_LE(1, check_fences(_metadata, sfd, -ECANCELED));
	close(sfd);
}

/* ---- a long software job -------------------------------------------------- */

/*
 * A GEMM of M = 256, N = 4096, K = 8192: 268 M block operations, seconds
 * of work spread over every CPU on every engine (the PCI device model
 * computes on the host, where a sixteenth of this once ended within the
 * half second this test waits).  While it runs, another file's small job on
 * another ring completes promptly; destroying its queue stops it within
 * moments, canceled.  A software engine that pinned the CPUs would also
 * trip the soft lockup detector (the VM runner fails on it).
 */
TEST_F_TIMEOUT(core, long_job_no_starvation, 300)
{
	const __u32 M = 256, N = 4096, K = 8192;
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op big, small;
	struct mxt_bo a, b, c, sbo;
	__u64 rings, seqno;
	__u32 qa, sa, qb;
	__s64 t0, ms;
	int fd2, sfd, status;

	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &rings));
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_bo_new(self->fd, (__u64)M * K + M * K / 32, &a));
	ASSERT_EQ(0, mxt_bo_new(self->fd, (__u64)N * K + N * K / 32, &b));
	ASSERT_EQ(0, mxt_bo_new(self->fd, (__u64)M * N * 4, &c));
	memset(a.map, 0x38, (size_t)M * K);
	memset(mxt_bo_at(&a, (__u64)M * K), 127, M * K / 32);
	memset(b.map, 0x38, (size_t)N * K);
	memset(mxt_bo_at(&b, (__u64)N * K), 127, N * K / 32);
	memset(c.map, 0xcc, (size_t)M * N * 4);
	mxt_gemm(&big, M, N, K);
	mxt_mx(&big.a, a.handle, 0, (__u64)M * K, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&big.b, b.handle, 0, (__u64)N * K, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&big.c, c.handle, 0, DRM_MXACCEL_DTYPE_F32);

	ASSERT_EQ(0, mxt_queue_create(self->fd, &qa, &sa));
	t0 = mxt_now_ns();
	mxt_submit_init(&args, qa, &big, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	seqno = args.seqno;
	EXPECT_FALSE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);
	sfd = mxt_export_sync_file(self->fd, sa, seqno);
	ASSERT_LE(0, sfd);

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	/* On another ring than qa: queues go to the least used ring. */
	ASSERT_EQ(0, mxt_queue_create(fd2, &qb, NULL));
	ASSERT_EQ(0, mxt_bo_new(fd2, MXT_ONES_BO_SIZE, &sbo));
	mxt_ones_gemm(&small, &sbo);
	if (rings >= 2) {
		__s64 t1 = mxt_now_ns();

		mxt_submit_init(&args, qb, &small, 1);
		args.flags = DRM_MXACCEL_SUBMIT_NO_INLINE |
			     DRM_MXACCEL_SUBMIT_WAIT;
		args.wait_timeout_ns = mxt_deadline_ms(mxt_scaled_ms(5000));
		ASSERT_EQ(0, mxt_submit_args(fd2, &args));
		ms = (mxt_now_ns() - t1) / MXT_NSEC_PER_MSEC;
		TH_LOG("small job beside the big one: %lld ms", (long long)ms);
		EXPECT_EQ(DRM_MXACCEL_SUBMIT_OUT_DONE, args.out_flags);
		EXPECT_EQ(0, args.status);
		EXPECT_EQ(0, mxt_ones_wrong(&sbo));
	} else {
		TH_LOG("one ring: the small job would wait behind the big one");
	}
	/* Still running: the test shows something only if it is long. */
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, qa, seqno, 0, &status))
		TH_LOG("the big job took only %lld ms",
		       (long long)((mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC));
	usleep(500 * 1000);

	t0 = mxt_now_ns();
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, qa));
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, sa, seqno,
					       prompt_deadline(), 0));
	ms = (mxt_now_ns() - t0) / MXT_NSEC_PER_MSEC;
	TH_LOG("the big job stopped %lld ms after QUEUE_DESTROY",
	       (long long)ms);
	EXPECT_GT(mxt_scaled_ms(2000), ms);
	EXPECT_EQ(1, sync_file_wait(sfd, 0));
	EXPECT_LE(1, check_fences(_metadata, sfd, -ECANCELED));
	close(sfd);
	close(fd2);
	mxt_bo_free(self->fd, &a);
	mxt_bo_free(self->fd, &b);
	mxt_bo_free(self->fd, &c);
}

/* ---- priorities, rings ----------------------------------------------------- */

TEST_F(core, priorities_and_rings)
{
	struct drm_mxaccel_queue_create c;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	unsigned int sysfs = 0;
	__u64 rings;
	__u32 prio;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &rings));
	EXPECT_LE(1, rings);
	EXPECT_TRUE(mxt_param_read("rings", &sysfs) || sysfs == rings);
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	for (prio = 0; prio <= DRM_MXACCEL_PRIORITY_HIGH; prio++) {
		memset(&c, 0, sizeof(c));
		c.priority = prio;
		if (prio == DRM_MXACCEL_PRIORITY_HIGH && geteuid())
			continue;
		ASSERT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE,
				       &c));
		memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
		/* Queued, so that it goes through the ring's scheduler. */
		ASSERT_EQ(0, mxt_submit_flags(self->fd, c.queue_id, &op, 1,
					      DRM_MXACCEL_SUBMIT_NO_INLINE,
					      NULL));
		EXPECT_EQ(0, job_status(self->fd, c.queue_id, 1));
		EXPECT_EQ(0, mxt_ones_wrong(&bo));
	}
	mxt_bo_free(self->fd, &bo);
}

/* ---- debugfs ---------------------------------------------------------------- */

/* The contents of a file (at most size - 1 bytes), or NULL. */
static char *slurp(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = '\0';
	return buf;
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	while (s && *s) {
		if (!strncmp(s, prefix, strlen(prefix)))
			n++;
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return n;
}

/*
 * debugfs: rings lists every ring (one running a held job shows it),
 * queues lists a queue we create (with our pid) and a dying one.
 */
/*
 * The debugfs directory of this file's device: the one whose queues list
 * this process.  Its number is the device's (ring names "mxaccel<N>-").
 */
static int find_debugfs_dir(char *buf, size_t size, const char *pid)
{
	char path[128];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/mxaccel/%d/queues",
			 i);
		if (slurp(path, buf, size) && strstr(buf, pid))
			return i;
	}
	return -1;
}

TEST_F(core, debugfs)
{
	static char buf[65536];
	char path[128], pid[32], prefix[32], *line;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u64 rings, seqno;
	int ours = 0, dev;
	__u32 q;

	if (access("/sys/kernel/debug/mxaccel", R_OK))
		SKIP(return, "no /sys/kernel/debug/mxaccel (debugfs not mounted?)");
	if (!mxt_params_writable())
		SKIP(return, NEED_PARAMS);
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &rings));

	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, &seqno));
	usleep(100 * 1000);

	snprintf(pid, sizeof(pid), " %d ", getpid());
	dev = find_debugfs_dir(buf, sizeof(buf), pid);
	ASSERT_LE(0, dev);
	TH_LOG("queues:\n%s", buf);
	for (line = buf; line && *line; line = strchr(line, '\n') ?
					   strchr(line, '\n') + 1 : NULL) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char one[256];

		snprintf(one, sizeof(one), "%.*s", (int)len, line);
		if (strstr(one, pid)) {
			ours++;
			EXPECT_NE(NULL, strstr(one, "normal"));
			EXPECT_NE(NULL, strstr(one, " ok "));
		}
	}
	EXPECT_EQ(1, ours);

	snprintf(path, sizeof(path), "/sys/kernel/debug/mxaccel/%d/rings", dev);
	ASSERT_NE(NULL, slurp(path, buf, sizeof(buf)));
	TH_LOG("rings:\n%s", buf);
	snprintf(prefix, sizeof(prefix), "mxaccel%d-ring", dev);
	EXPECT_EQ(rings, count_lines(buf, prefix));
	/* The held job shows as running, as "<queue>/<seqno>/<ms>". */
	EXPECT_NE(NULL, strstr(buf, "/1/"));

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, job_status(self->fd, q, seqno));
	mxt_bo_free(self->fd, &bo);
}

/* Sum of this file's drm-engine-ring<N> fdinfo keys; *keys counts them. */
static long long engine_ns(int fd, unsigned int *keys, char *buf, size_t size)
{
	char path[64], *line;
	long long sum = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	*keys = 0;
	if (!slurp(path, buf, size))
		return -1;
	for (line = buf; line; line = strchr(line, '\n') ?
				strchr(line, '\n') + 1 : NULL) {
		unsigned long long ns;
		unsigned int ring;

		if (sscanf(line, "drm-engine-ring%u: %llu ns", &ring, &ns) == 2) {
			sum += ns;
			(*keys)++;
		}
	}
	return sum;
}

/*
 * fdinfo (drm-usage-stats.rst): the driver name, a client id, and one
 * drm-engine-ring<N> key per ring whose sum grows by the engine time of
 * this file's jobs, including a job whose queue was destroyed.
 */
TEST_F(core, fdinfo)
{
	static char buf[16384];
	struct drm_mxaccel_op op;
	long long before, after;
	unsigned int keys;
	struct mxt_bo bo;
	__u64 rings, seqno;
	__u32 q;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_RINGS, &rings));
	before = engine_ns(self->fd, &keys, buf, sizeof(buf));
	ASSERT_LE(0, before);
	EXPECT_NE(NULL, strstr(buf, "drm-driver:\tmxaccel\n"));
	EXPECT_NE(NULL, strstr(buf, "drm-client-id:\t"));
	EXPECT_EQ(rings, keys);

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	ASSERT_EQ(0, mxt_submit_flags(self->fd, q, &op, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &seqno));
	EXPECT_EQ(0, job_status(self->fd, q, seqno));
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, q));
	after = engine_ns(self->fd, &keys, buf, sizeof(buf));
	TH_LOG("fdinfo:\n%s", buf);
	EXPECT_LT(before, after);
	mxt_bo_free(self->fd, &bo);
}

TEST_HARNESS_MAIN
