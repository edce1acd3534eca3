// SPDX-License-Identifier: GPL-2.0
/*
 * Queues: QUEUE_CREATE (flags, priority and CAP_SYS_NICE) and
 * QUEUE_DESTROY, the per-file max_queues limit (-EBUSY) at its boundary
 * and through the module parameter, sequence numbers and the queue's
 * timeline syncobj, and JOB_WAIT's arguments.  QUEUE_DESTROY does not wait
 * for the queue's jobs: they are canceled and their fences signal after.
 */
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "mxaccel_test.h"

FIXTURE(queue) {
	int fd;
};

FIXTURE_SETUP(queue)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	mxt_params_restore();
}

FIXTURE_TEARDOWN(queue)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * QUEUE_CREATE with the outputs pre-filled with 0xcc (priority is an
 * input: normal).
 */
static int queue_create(int fd, __u32 flags,
			struct drm_mxaccel_queue_create *args)
{
	memset(args, 0xcc, sizeof(*args));
	args->flags = flags;
	args->priority = DRM_MXACCEL_PRIORITY_NORMAL;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, args);
}

static int queue_create_prio(int fd, __u32 priority,
			     struct drm_mxaccel_queue_create *args)
{
	memset(args, 0xcc, sizeof(*args));
	args->flags = 0;
	args->priority = priority;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, args);
}

static int queue_destroy(int fd, __u32 id, __u32 pad)
{
	struct drm_mxaccel_queue_destroy args = { .queue_id = id, .pad = pad };

	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_DESTROY, &args);
}

static int job_wait(int fd, struct drm_mxaccel_job_wait *args, __u32 queue,
		    __u64 seqno, __s64 timeout_ns)
{
	memset(args, 0, sizeof(*args));
	args->queue_id = queue;
	args->seqno = seqno;
	args->timeout_ns = timeout_ns;
	args->status = (__s32)0xcccccccc;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_JOB_WAIT, args);
}

TEST_F(queue, create_destroy)
{
	struct drm_mxaccel_queue_create c;
	__u64 point;

	ASSERT_EQ(0, queue_create(self->fd, 0, &c));
	EXPECT_NE(0, c.queue_id);
	EXPECT_NE(0xcccccccc, c.queue_id);
	EXPECT_NE(0, c.syncobj);
	EXPECT_NE(0xcccccccc, c.syncobj);
	/* Inputs are not written back. */
	EXPECT_EQ(0, c.priority);
	EXPECT_EQ(0, c.flags);

	/* A fresh timeline: nothing signalled yet. */
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, c.syncobj, &point));
	EXPECT_EQ(0, point);

	ASSERT_EQ(0, queue_destroy(self->fd, c.queue_id, 0));
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, c.queue_id, 0));
	/* The syncobj belongs to the file and outlives the queue. */
	EXPECT_EQ(0, mxt_syncobj_query(self->fd, c.syncobj, &point));
	EXPECT_EQ(0, mxt_syncobj_destroy(self->fd, c.syncobj));
}

TEST_F(queue, create_flags)
{
	static const __u32 bad[] = { 1, 2, 0x80000000u, 0xffffffffu };
	struct drm_mxaccel_queue_create c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, queue_create(self->fd, bad[i], &c));
		/* Nothing written on failure. */
		EXPECT_EQ(0xcccccccc, c.queue_id);
		EXPECT_EQ(0xcccccccc, c.syncobj);
	}
}

/*
 * priority (padding in version 1): normal and low for anyone, high with
 * CAP_SYS_NICE (the tests run as root), anything else -EINVAL with
 * nothing written.  Each queue runs a job.
 */
TEST_F(queue, create_priority)
{
	static const __u32 good[] = {
		DRM_MXACCEL_PRIORITY_NORMAL, DRM_MXACCEL_PRIORITY_LOW,
		DRM_MXACCEL_PRIORITY_HIGH,
	};
	static const __u32 bad[] = { 3, 4, 0x80000000u, 0xffffffffu };
	struct drm_mxaccel_queue_create c;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	unsigned int i;
	int ret;

	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, queue_create_prio(self->fd, bad[i], &c));
		EXPECT_EQ(0xcccccccc, c.queue_id);
		EXPECT_EQ(0xcccccccc, c.syncobj);
	}
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ret = queue_create_prio(self->fd, good[i], &c);
		if (good[i] == DRM_MXACCEL_PRIORITY_HIGH && ret == -EPERM &&
		    geteuid() != 0) {
			TH_LOG("not root: high priority refused, as it must");
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("priority %u", good[i]);
		EXPECT_NE(0xcccccccc, c.queue_id);
		memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
		EXPECT_EQ(0, mxt_run(self->fd, c.queue_id, &op, 1))
			TH_LOG("priority %u", good[i]);
		EXPECT_EQ(0, mxt_ones_wrong(&bo));
		EXPECT_EQ(0, queue_destroy(self->fd, c.queue_id, 0));
	}
	mxt_bo_free(self->fd, &bo);
}

/* Drop CAP_SYS_NICE from this (child) process's effective set. */
static int drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
	data[CAP_SYS_NICE / 32].permitted &= ~(1u << (CAP_SYS_NICE % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * Without CAP_SYS_NICE (dropped in a child, on a file opened with it),
 * high priority is -EPERM, normal and low still work.
 */
TEST_F(queue, high_priority_needs_cap_sys_nice)
{
	struct drm_mxaccel_queue_create c;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to hold CAP_SYS_NICE first");
	ASSERT_EQ(0, queue_create_prio(self->fd, DRM_MXACCEL_PRIORITY_HIGH,
				       &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_cap_sys_nice())
			_exit(10);
		if (queue_create_prio(self->fd, DRM_MXACCEL_PRIORITY_HIGH,
				      &c) != -EPERM)
			_exit(1);
		if (c.queue_id != 0xcccccccc)
			_exit(2);
		if (queue_create_prio(self->fd, DRM_MXACCEL_PRIORITY_NORMAL,
				      &c))
			_exit(3);
		if (queue_create_prio(self->fd, DRM_MXACCEL_PRIORITY_LOW, &c))
			_exit(4);
		/* An unknown priority is -EINVAL, not -EPERM. */
		if (queue_create_prio(self->fd, 3, &c) != -EINVAL)
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10)
		SKIP(return, "capset() failed");
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(queue, ids_and_syncobjs_are_unique)
{
	struct drm_mxaccel_queue_create c[6];
	unsigned int a, b;

	for (a = 0; a < ARRAY_SIZE(c); a++)
		ASSERT_EQ(0, queue_create(self->fd, 0, &c[a]));
	for (a = 0; a < ARRAY_SIZE(c); a++)
		for (b = a + 1; b < ARRAY_SIZE(c); b++) {
			EXPECT_NE(c[a].queue_id, c[b].queue_id);
			EXPECT_NE(c[a].syncobj, c[b].syncobj);
		}
	/* Destroy out of order. */
	for (a = 0; a < ARRAY_SIZE(c); a += 2)
		EXPECT_EQ(0, queue_destroy(self->fd, c[a].queue_id, 0));
	for (a = 1; a < ARRAY_SIZE(c); a += 2)
		EXPECT_EQ(0, queue_destroy(self->fd, c[a].queue_id, 0));
}

/* A queue id is never handed out again by the same file. */
TEST_F(queue, ids_never_reused)
{
	__u32 first, q, seen[40];
	int i, j;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &first, NULL));
	ASSERT_EQ(0, queue_destroy(self->fd, first, 0));
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
		EXPECT_NE(first, q);
		for (j = 0; j < i; j++)
			EXPECT_NE(seen[j], q);
		seen[i] = q;
		ASSERT_EQ(0, queue_destroy(self->fd, q, 0));
	}
	/* The stale ids stay unknown. */
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, first, 0));
	EXPECT_EQ(-ENOENT, mxt_job_wait(self->fd, first, 1, 0, NULL));
	EXPECT_EQ(-ENOENT, mxt_job_wait(self->fd, seen[39], 1, 0, NULL));
}

TEST_F(queue, destroy_unknown)
{
	static const __u32 bad[] = { 0, 1, 2, 1000, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(-ENOENT, queue_destroy(self->fd, bad[i], 0));
}

TEST_F(queue, destroy_pad)
{
	__u32 q;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	EXPECT_EQ(-EINVAL, queue_destroy(self->fd, q, 1));
	EXPECT_EQ(-EINVAL, queue_destroy(self->fd, q, 0x80000000u));
	/* Still there. */
	EXPECT_EQ(0, queue_destroy(self->fd, q, 0));
}

/* MAX_QUEUES queues fit in one file; one more is -EBUSY. */
TEST_F(queue, max_queues_boundary)
{
	struct drm_mxaccel_queue_create c;
	__u32 *ids, q2;
	__u64 max, i;
	int fd2;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_QUEUES,
				   &max));
	if (max > 256)
		SKIP(return, "max_queues %llu: too many to create here",
		     (unsigned long long)max);
	ids = calloc(max + 1, sizeof(*ids));
	ASSERT_NE(NULL, ids);
	for (i = 0; i < max; i++) {
		ASSERT_EQ(0, queue_create(self->fd, 0, &c));
		ids[i] = c.queue_id;
	}
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));
	EXPECT_EQ(0xcccccccc, c.queue_id);
	EXPECT_EQ(0xcccccccc, c.syncobj);
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));

	/* The limit is per file. */
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, mxt_queue_create(fd2, &q2, NULL));
	close(fd2);

	/* Destroying one makes room for exactly one. */
	if (max) {
		ASSERT_EQ(0, queue_destroy(self->fd, ids[max / 2], 0));
		EXPECT_EQ(0, queue_create(self->fd, 0, &c));
		EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));
	}
	free(ids);
}

/* max_queues is read at QUEUE_CREATE: changing it applies at once. */
TEST_F(queue, max_queues_module_param)
{
	struct drm_mxaccel_queue_create c;
	__u32 q[3];
	__u64 v;

	if (!mxt_params_writable())
		SKIP(return, "module parameters are not writable");
	ASSERT_EQ(0, mxt_param_write("max_queues", 2));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_QUEUES,
				   &v));
	EXPECT_EQ(2, v);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q[0], NULL));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q[1], NULL));
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));

	ASSERT_EQ(0, mxt_param_write("max_queues", 3));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q[2], NULL));
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));

	/* Lowered below what the file holds: its queues stay, none added. */
	ASSERT_EQ(0, mxt_param_write("max_queues", 1));
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));
	EXPECT_EQ(0, queue_destroy(self->fd, q[0], 0));
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));
	EXPECT_EQ(0, queue_destroy(self->fd, q[1], 0));
	EXPECT_EQ(-EBUSY, queue_create(self->fd, 0, &c));
	EXPECT_EQ(0, queue_destroy(self->fd, q[2], 0));
	EXPECT_EQ(0, queue_create(self->fd, 0, &c));

	/* 0 would leave no queue at all: the parameter refuses it. */
	EXPECT_EQ(-EINVAL, mxt_param_write("max_queues", 0));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_QUEUES,
				   &v));
	EXPECT_EQ(1, v);
}

TEST_F(queue, seqnos_and_timeline)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q1, q2, s1, s2;
	__u64 seqno, point;
	int status, i;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q1, &s1));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, &s2));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);

	/* Each queue counts its own jobs from 1. */
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, mxt_submit(self->fd, q1, &op, 1, &seqno));
		EXPECT_EQ(i, seqno);
	}
	ASSERT_EQ(0, mxt_submit(self->fd, q2, &op, 1, &seqno));
	EXPECT_EQ(1, seqno);

	ASSERT_EQ(0, mxt_job_wait(self->fd, q1, 3,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	/* Jobs of a queue complete in order: 1 and 2 are done too. */
	for (i = 1; i <= 2; i++) {
		ASSERT_EQ(0, mxt_job_wait(self->fd, q1, i, 0, &status));
		EXPECT_EQ(0, status);
	}
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s1, &point));
	EXPECT_EQ(3, point);
	ASSERT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s2, 1,
					       mxt_job_deadline(),
					       0));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, s2, &point));
	EXPECT_EQ(1, point);
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

TEST_F(queue, job_wait_args)
{
	struct drm_mxaccel_job_wait w;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q, q2;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	/* Nothing issued yet: no seqno is valid. */
	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, 0, 0));
	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, 1, 0));
	EXPECT_EQ((__s32)0xcccccccc, w.status);

	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	ASSERT_EQ(0, mxt_submit(self->fd, q, &op, 1, NULL));

	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, 0, 0));
	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, 2, 0));
	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, ~0ull, 0));
	EXPECT_EQ(-EINVAL, job_wait(self->fd, &w, q, 1ull << 63, 0));
	EXPECT_EQ((__s32)0xcccccccc, w.status);

	/* Unknown queues, including one of another file. */
	EXPECT_EQ(-ENOENT, job_wait(self->fd, &w, q + 1, 1, 0));
	EXPECT_EQ(-ENOENT, job_wait(self->fd, &w, 0, 1, 0));
	EXPECT_EQ(-ENOENT, job_wait(self->fd, &w, 0xffffffffu, 1, 0));

	/* flags, then pad, must be zero. */
	memset(&w, 0, sizeof(w));
	w.queue_id = q;
	w.seqno = 1;
	w.flags = 1;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_JOB_WAIT,
				     &w));
	w.flags = 0x80000000u;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_JOB_WAIT,
				     &w));
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_JOB_WAIT,
				     &w));

	/* The real one: status written (was 0xcc), twice. */
	ASSERT_EQ(0, job_wait(self->fd, &w, q, 1,
			      mxt_job_deadline()));
	EXPECT_EQ(0, w.status);
	ASSERT_EQ(0, job_wait(self->fd, &w, q, 1, 0));
	EXPECT_EQ(0, w.status);
	/* A deadline in the past polls a finished job successfully. */
	ASSERT_EQ(0, job_wait(self->fd, &w, q, 1, 1));
	EXPECT_EQ(0, w.status);

	/* A destroyed queue is unknown. */
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q2, NULL));
	ASSERT_EQ(0, queue_destroy(self->fd, q, 0));
	EXPECT_EQ(-ENOENT, job_wait(self->fd, &w, q, 1, 0));
	mxt_bo_free(self->fd, &bo);
}

/*
 * Destroying a queue with jobs queued in it: the ioctl does not wait for
 * them, they are canceled or finish, and every one of their timeline
 * points signals soon after (the timeline is waited on: JOB_WAIT of a
 * destroyed queue is -ENOENT).
 */
TEST_F(queue, destroy_with_jobs)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q, s;
	__u64 seqno = 0;
	int i;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, &s));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, mxt_submit_flags(self->fd, q, &op, 1,
					      DRM_MXACCEL_SUBMIT_NO_INLINE,
					      &seqno));
	ASSERT_EQ(0, queue_destroy(self->fd, q, 0));
	EXPECT_EQ(-ENOENT, mxt_job_wait(self->fd, q, seqno, 0, NULL));
	EXPECT_EQ(0, mxt_syncobj_timeline_wait(self->fd, s, seqno,
					       mxt_deadline_ms(mxt_scaled_ms(5000)),
					       0));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, bo.handle,
				 mxt_deadline_ms(mxt_scaled_ms(5000))));
	/* The buffer object is fine and usable on another queue. */
	memset(mxt_bo_at(&bo, MXT_ONES_C), 0, 4096);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/* Queues left behind are torn down with the file. */
TEST_F(queue, close_with_queues)
{
	__u32 q;
	int fd2, i;

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, mxt_queue_create(fd2, &q, NULL));
	EXPECT_EQ(0, close(fd2));
	/* Over and over, to catch leaks of the per-queue scheduler. */
	for (i = 0; i < 20; i++) {
		fd2 = mxt_open();
		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, mxt_queue_create(fd2, &q, NULL));
		EXPECT_EQ(0, close(fd2));
	}
}

TEST_HARNESS_MAIN
