// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation: buffer objects, queues and syncobjs belong to the open file
 * that created them.  Their numbers mean nothing in another open file,
 * whether in the same process or another one (-ENOENT), the same numbers
 * name different objects there, another file's mmap offsets cannot be
 * mapped (-EACCES), and global GEM names (flink) are not available on the
 * node.  A file shared through fork() is one file: its handles work in
 * both processes.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mxaccel_test.h"

FIXTURE(iso) {
	int fd;
};

FIXTURE_SETUP(iso)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(iso)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* What one file created, for another to try. */
struct objs {
	__u32 bo;
	__u64 mmap_offset;
	__u32 queue;
	__u32 queue_syncobj;
	__u32 syncobj;
	__u64 seqno;
};

/* Create objects in fd and run one job (C = 32 everywhere). */
static int make_objs(int fd, struct objs *o, struct mxt_bo *bo)
{
	struct drm_mxaccel_op op;
	int ret;

	ret = mxt_bo_new(fd, MXT_ONES_BO_SIZE, bo);
	if (!ret)
		ret = mxt_queue_create(fd, &o->queue, &o->queue_syncobj);
	if (!ret)
		ret = mxt_syncobj_create(fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					 &o->syncobj);
	if (ret)
		return ret;
	o->bo = bo->handle;
	o->mmap_offset = bo->mmap_offset;
	mxt_ones_gemm(&op, bo);
	ret = mxt_submit(fd, o->queue, &op, 1, &o->seqno);
	if (!ret)
		ret = mxt_job_wait(fd, o->queue, o->seqno,
				   mxt_job_deadline(), NULL);
	return ret;
}

/*
 * Everything fd may try with another file's objects, none of which it has
 * (it must have created no object at all): every use is -ENOENT, mapping
 * is -EACCES.
 */
static void try_foreign(struct __test_metadata *_metadata, int fd,
			const struct objs *o)
{
	struct drm_mxaccel_op op;
	__u64 size, point;
	void *map;

	EXPECT_EQ(-ENOENT, mxt_bo_info(fd, o->bo, &size, NULL));
	EXPECT_EQ(-ENOENT, mxt_bo_wait(fd, o->bo, 0));
	EXPECT_EQ(-EINVAL, mxt_gem_close(fd, o->bo));
	map = mmap(NULL, MXT_ONES_BO_SIZE, PROT_READ, MAP_SHARED, fd,
		   o->mmap_offset);
	EXPECT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EACCES, errno);
	if (map != MAP_FAILED)
		munmap(map, MXT_ONES_BO_SIZE);

	EXPECT_EQ(-ENOENT, mxt_job_wait(fd, o->queue, o->seqno, 0, NULL));
	EXPECT_EQ(-ENOENT, mxt_queue_destroy(fd, o->queue));
	EXPECT_EQ(-ENOENT, mxt_syncobj_query(fd, o->queue_syncobj, &point));
	EXPECT_EQ(-EINVAL, mxt_syncobj_destroy(fd, o->syncobj));

	/* A SUBMIT naming the other file's queue and buffer object. */
	mxt_gemm(&op, 32, 32, 32);
	mxt_mx(&op.a, o->bo, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, o->bo, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, o->bo, MXT_ONES_C, DRM_MXACCEL_DTYPE_F32);
	EXPECT_EQ(-ENOENT, mxt_submit(fd, o->queue, &op, 1, NULL));
}

/*
 * The same through a queue of fd's own: the other file's buffer object
 * (before fd has any), then its syncobjs as in_sync and out_sync, skipping
 * numbers that fd's own syncobjs took meanwhile.  Leaves fd a buffer
 * object of its own in *own.
 */
static void try_foreign_submit(struct __test_metadata *_metadata, int fd,
			       const struct objs *o, struct mxt_bo *own)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op op;
	__u32 q, qs;

	ASSERT_EQ(0, mxt_queue_create(fd, &q, &qs));
	mxt_gemm(&op, 32, 32, 32);
	mxt_mx(&op.a, o->bo, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, o->bo, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, o->bo, MXT_ONES_C, DRM_MXACCEL_DTYPE_F32);
	EXPECT_EQ(-ENOENT, mxt_submit(fd, q, &op, 1, NULL));

	ASSERT_EQ(0, mxt_bo_new(fd, 3 * MXT_ONES_BO_SIZE, own));
	mxt_ones_gemm(&op, own);
	memset(&in, 0, sizeof(in));
	mxt_submit_init(&args, q, &op, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	if (o->syncobj != qs) {
		in.handle = o->syncobj;
		EXPECT_EQ(-ENOENT, mxt_submit_args(fd, &args));
	}
	if (o->queue_syncobj != qs) {
		in.handle = o->queue_syncobj;
		in.point = o->seqno;
		EXPECT_EQ(-ENOENT, mxt_submit_args(fd, &args));
	}
	if (o->syncobj != qs) {
		mxt_submit_init(&args, q, &op, 1);
		args.out_sync.handle = o->syncobj;
		EXPECT_EQ(-ENOENT, mxt_submit_args(fd, &args));
	}
	/* What fd has is its own, and works. */
	EXPECT_EQ(0, mxt_run(fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(own));
}

TEST_F(iso, two_files_one_process)
{
	struct mxt_bo bo, own;
	struct objs o;
	__u64 size;
	int fd2;

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, make_objs(fd2, &o, &bo));
	try_foreign(_metadata, self->fd, &o);

	/* Objects of its own take the same numbers: different objects. */
	try_foreign_submit(_metadata, self->fd, &o, &own);
	if (own.handle == o.bo) {
		ASSERT_EQ(0, mxt_bo_info(self->fd, own.handle, &size, NULL));
		EXPECT_EQ(own.size, size);
		ASSERT_EQ(0, mxt_bo_info(fd2, o.bo, &size, NULL));
		EXPECT_EQ(bo.size, size);
	}
	/* Nothing the first file did touched the second's objects. */
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	EXPECT_EQ(0, mxt_bo_info(fd2, o.bo, NULL, NULL));
	EXPECT_EQ(0, mxt_job_wait(fd2, o.queue, o.seqno, 0, NULL));
	mxt_bo_free(fd2, &bo);
	mxt_bo_free(self->fd, &own);
	close(fd2);
}

TEST_F(iso, two_processes)
{
	int to_parent[2], to_child[2], status;
	struct mxt_bo own;
	struct objs o;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct mxt_bo bo;
		struct objs co;
		int fd, ret = 0;

		close(to_parent[0]);
		close(to_child[1]);
		fd = mxt_open();
		if (fd < 0 || make_objs(fd, &co, &bo))
			_exit(1);
		/* A secret the parent must not be able to read. */
		memset(bo.map, 0x5e, 1024);
		if (write(to_parent[1], &co, sizeof(co)) != sizeof(co))
			_exit(2);
		/* Wait until the parent has tried everything. */
		if (read(to_child[0], &c, 1) != 1)
			_exit(3);
		/* Still intact, still ours. */
		if (mxt_ones_wrong(&bo) || !mxt_all(bo.map, 0x5e, 1024))
			ret = 4;
		if (mxt_bo_info(fd, co.bo, NULL, NULL) ||
		    mxt_job_wait(fd, co.queue, co.seqno, 0, NULL))
			ret = 5;
		_exit(ret);
	}
	close(to_parent[1]);
	close(to_child[0]);
	ASSERT_EQ(sizeof(o), read(to_parent[0], &o, sizeof(o)));

	try_foreign(_metadata, self->fd, &o);
	try_foreign_submit(_metadata, self->fd, &o, &own);
	/* The parent's buffer with the child's numbers holds no secret. */
	EXPECT_FALSE(mxt_all(own.map, 0x5e, 1024));
	mxt_bo_free(self->fd, &own);

	ASSERT_EQ(1, write(to_child[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(to_parent[0]);
	close(to_child[1]);
}

/* Another file cannot destroy, wait on or submit to this file's queue. */
TEST_F(iso, queues_survive_other_files)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q, q2;
	int fd2, i;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(-ENOENT, mxt_queue_destroy(fd2, q + i));
	/* fd2's own queue gets the same id, yet is another queue. */
	ASSERT_EQ(0, mxt_queue_create(fd2, &q2, NULL));
	EXPECT_EQ(-ENOENT, mxt_submit(fd2, q2, &op, 1, NULL));
	EXPECT_EQ(0, mxt_queue_destroy(fd2, q2));
	close(fd2);
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

static int try_flink(int fd, __u32 handle)
{
	struct drm_gem_flink flink;

	memset(&flink, 0, sizeof(flink));
	flink.handle = handle;
	return mxt_ioctl(fd, DRM_IOCTL_GEM_FLINK, &flink);
}

static int try_gem_open(int fd, __u32 name)
{
	struct drm_gem_open args;

	memset(&args, 0, sizeof(args));
	args.name = name;
	return mxt_ioctl(fd, DRM_IOCTL_GEM_OPEN, &args);
}

/*
 * No global names: GEM_FLINK and GEM_OPEN (DRM_AUTH ioctls) are refused to
 * render-node clients and to unprivileged accel-node clients.  (The DRM
 * core counts a file opened with CAP_SYS_ADMIN as authenticated, and the
 * accel node has no render-node rule to refuse it; that is the core's
 * policy, not the driver's, and is not asserted here.)
 */
TEST_F(iso, no_flink)
{
	bool render, checked = false;
	int status, fd;
	struct stat st;
	__u32 handle;
	pid_t pid;

	ASSERT_EQ(0, fstat(self->fd, &st));
	render = major(st.st_rdev) == 226;	/* DRM_MAJOR; accel is 261 */
	ASSERT_EQ(0, mxt_bo_create(self->fd, 4096, &handle, NULL));
	if (render || geteuid()) {
		EXPECT_EQ(-EACCES, try_flink(self->fd, handle));
		EXPECT_EQ(-EACCES, try_gem_open(self->fd, 1));
		checked = true;
	}

	/* An unprivileged opener, if it may open the node at all. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(4);
		fd = mxt_open();
		if (fd < 0)
			_exit(4);
		if (mxt_bo_create(fd, 4096, &handle, NULL))
			_exit(3);
		if (try_flink(fd, handle) != -EACCES ||
		    try_gem_open(fd, 1) != -EACCES)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) != 4) {
		EXPECT_EQ(0, WEXITSTATUS(status));
		checked = true;
	}
	if (!checked)
		SKIP(return, "root on an accel node, and no unprivileged access to it");
}

/* A file shared with a child by fork() is the same file. */
TEST_F(iso, fork_shares_the_file)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	int status;
	__u32 q;
	pid_t pid;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(mxt_run(self->fd, q, &op, 1) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's job ran on our queue, into our buffer. */
	EXPECT_EQ(0, mxt_job_wait(self->fd, q, 1, 0, NULL));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

TEST_HARNESS_MAIN
