// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: BO_CREATE, BO_INFO, mmap, GEM_CLOSE and BO_WAIT, with
 * every invalid argument and the exact errno it must give.
 */
#include "mxaccel_test.h"

FIXTURE(bo) {
	int fd;
	long page;
};

FIXTURE_SETUP(bo)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	self->page = sysconf(_SC_PAGESIZE);
	mxt_params_restore();
}

FIXTURE_TEARDOWN(bo)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/* BO_CREATE with the outputs pre-filled with 0xcc. */
static int bo_create(int fd, __u64 size, __u32 flags,
		     struct drm_mxaccel_bo_create *args)
{
	memset(args, 0xcc, sizeof(*args));
	args->size = size;
	args->flags = flags;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, args);
}

static int bo_info(int fd, __u32 handle, __u32 pad,
		   struct drm_mxaccel_bo_info *args)
{
	memset(args, 0xcc, sizeof(*args));
	args->handle = handle;
	args->pad = pad;
	return mxt_ioctl(fd, DRM_IOCTL_MXACCEL_BO_INFO, args);
}

static __u64 page_round(__u64 size, long page)
{
	return (size + page - 1) / page * page;
}

TEST_F(bo, create_info_mmap_close)
{
	struct drm_mxaccel_bo_create c;
	struct drm_mxaccel_bo_info i;
	__u8 *map, *map2;
	__u64 n, size;

	ASSERT_EQ(0, bo_create(self->fd, 5000, 0, &c));
	EXPECT_EQ(5000, c.size);
	EXPECT_NE(0, c.handle);
	EXPECT_NE(0xcccccccc, c.handle);
	EXPECT_NE(0xccccccccccccccccull, c.mmap_offset);
	EXPECT_NE(0, c.mmap_offset);
	EXPECT_EQ(0, c.mmap_offset % self->page);

	ASSERT_EQ(0, bo_info(self->fd, c.handle, 0, &i));
	EXPECT_EQ(c.handle, i.handle);
	EXPECT_EQ(0, i.pad);
	/* Rounded up to whole pages. */
	size = page_round(5000, self->page);
	EXPECT_EQ(size, i.size);
	EXPECT_EQ(c.mmap_offset, i.mmap_offset);

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		   c.mmap_offset);
	ASSERT_NE(MAP_FAILED, map);
	/* New buffer objects are zero-filled. */
	EXPECT_TRUE(mxt_all(map, 0, size));
	for (n = 0; n < size; n++)
		map[n] = (__u8)(n * 7 + 3);

	/* A second mapping sees the same pages. */
	map2 = mmap(NULL, size, PROT_READ, MAP_SHARED, self->fd,
		    c.mmap_offset);
	ASSERT_NE(MAP_FAILED, map2);
	for (n = 0; n < size; n++)
		if (map2[n] != (__u8)(n * 7 + 3))
			break;
	EXPECT_EQ(size, n);
	munmap(map2, size);

	/* Closing the handle leaves existing mappings valid. */
	ASSERT_EQ(0, mxt_gem_close(self->fd, c.handle));
	EXPECT_EQ(-ENOENT, bo_info(self->fd, c.handle, 0, &i));
	map[0] = 0x5a;
	EXPECT_EQ(0x5a, map[0]);
	EXPECT_EQ((__u8)(1 * 7 + 3), map[1]);
	munmap(map, size);
	/* The handle is gone: a second close fails (DRM core: -EINVAL). */
	EXPECT_EQ(-EINVAL, mxt_gem_close(self->fd, c.handle));
}

TEST_F(bo, size_rounding)
{
	const __u64 page = self->page;
	const __u64 sizes[][2] = {
		{ 1, page }, { page - 1, page }, { page, page },
		{ page + 1, 2 * page }, { 3 * page, 3 * page },
	};
	unsigned int n;

	for (n = 0; n < ARRAY_SIZE(sizes); n++) {
		struct drm_mxaccel_bo_create c;
		struct drm_mxaccel_bo_info i;

		ASSERT_EQ(0, bo_create(self->fd, sizes[n][0], 0, &c));
		ASSERT_EQ(0, bo_info(self->fd, c.handle, 0, &i));
		EXPECT_EQ(sizes[n][1], i.size);
		EXPECT_EQ(0, mxt_gem_close(self->fd, c.handle));
	}
}

TEST_F(bo, size_zero)
{
	struct drm_mxaccel_bo_create c;

	EXPECT_EQ(-EINVAL, bo_create(self->fd, 0, 0, &c));
	/* Nothing written on failure. */
	EXPECT_EQ(0xcccccccc, c.handle);
	EXPECT_EQ(0xccccccccccccccccull, c.mmap_offset);
}

TEST_F(bo, flags)
{
	/* Unknown bits, and both placements at once. */
	static const __u32 bad[] = { 4, 3, 0x80000000u, 0xffffffffu };
	struct drm_mxaccel_bo_create c;
	unsigned int n;

	for (n = 0; n < ARRAY_SIZE(bad); n++) {
		EXPECT_EQ(-EINVAL, bo_create(self->fd, 4096, bad[n], &c));
		EXPECT_EQ(0xcccccccc, c.handle);
	}
}

/*
 * System memory exists everywhere; device memory where DEVICE_MEMORY says
 * (-EINVAL elsewhere), and then it is the default placement.
 */
TEST_F(bo, placement)
{
	struct drm_mxaccel_bo_create c, c2;
	__u64 vram;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_DEVICE_MEMORY,
				   &vram));
	ASSERT_EQ(0, bo_create(self->fd, 4096, DRM_MXACCEL_BO_SYSTEM, &c));
	EXPECT_EQ(0, mxt_gem_close(self->fd, c.handle));
	if (!vram) {
		EXPECT_EQ(-EINVAL, bo_create(self->fd, 4096,
					     DRM_MXACCEL_BO_DEVICE, &c));
		EXPECT_EQ(0xcccccccc, c.handle);
		return;
	}
	ASSERT_EQ(0, bo_create(self->fd, 4096, DRM_MXACCEL_BO_DEVICE, &c));
	EXPECT_EQ(0, mxt_gem_close(self->fd, c.handle));
	/* More than the device has, and what does not fit any more. */
	EXPECT_EQ(-E2BIG, bo_create(self->fd, vram + 4096,
				    DRM_MXACCEL_BO_DEVICE, &c));
	ASSERT_EQ(0, bo_create(self->fd, vram, DRM_MXACCEL_BO_DEVICE, &c));
	EXPECT_EQ(-ENOSPC, bo_create(self->fd, 4096, 0, &c2));
	EXPECT_EQ(0xcccccccc, c2.handle);
	EXPECT_EQ(0, mxt_gem_close(self->fd, c.handle));
}

TEST_F(bo, too_big)
{
	struct drm_mxaccel_bo_create c;
	__u64 max;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_BO_SIZE,
				   &max));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, max + 1, 0, &c));
	EXPECT_EQ(0xcccccccc, c.handle);
	EXPECT_EQ(-E2BIG, bo_create(self->fd, max + self->page, 0, &c));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, 1ull << 63, 0, &c));
	EXPECT_EQ(-E2BIG, bo_create(self->fd, ~0ull, 0, &c));
}

/* The largest size is accepted; shmem pages are only allocated on use. */
TEST_F(bo, max_size)
{
	struct drm_mxaccel_bo_create c;
	struct drm_mxaccel_bo_info i;
	__u64 max;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_BO_SIZE,
				   &max));
	ASSERT_EQ(0, bo_create(self->fd, max, 0, &c));
	ASSERT_EQ(0, bo_info(self->fd, c.handle, 0, &i));
	EXPECT_EQ(page_round(max, self->page), i.size);
	EXPECT_EQ(0, mxt_gem_close(self->fd, c.handle));
}

TEST_F(bo, info_bad_handle)
{
	static const __u32 bad[] = { 0, 1, 2, 1000, 0x7fffffffu, 0xffffffffu };
	struct drm_mxaccel_bo_info i;
	unsigned int n;

	/* This file has no buffer objects at all. */
	for (n = 0; n < ARRAY_SIZE(bad); n++) {
		EXPECT_EQ(-ENOENT, bo_info(self->fd, bad[n], 0, &i));
		EXPECT_EQ(0xccccccccccccccccull, i.size);
		EXPECT_EQ(0xccccccccccccccccull, i.mmap_offset);
	}
}

TEST_F(bo, info_pad)
{
	struct drm_mxaccel_bo_info i;
	__u32 handle;

	ASSERT_EQ(0, mxt_bo_create(self->fd, 4096, &handle, NULL));
	EXPECT_EQ(-EINVAL, bo_info(self->fd, handle, 1, &i));
	EXPECT_EQ(0xccccccccccccccccull, i.size);
	EXPECT_EQ(-EINVAL, bo_info(self->fd, handle, 0x80000000u, &i));
	/* pad is checked before the handle. */
	EXPECT_EQ(-EINVAL, bo_info(self->fd, handle + 100, 1, &i));
	EXPECT_EQ(0, bo_info(self->fd, handle, 0, &i));
}

TEST_F(bo, handle_of_another_fd)
{
	struct drm_mxaccel_bo_info i;
	__u32 handle;
	int fd2;

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mxt_bo_create(fd2, 4096, &handle, NULL));
	ASSERT_EQ(0, bo_info(fd2, handle, 0, &i));
	/* self->fd has no buffer objects: the number means nothing there. */
	EXPECT_EQ(-ENOENT, bo_info(self->fd, handle, 0, &i));
	EXPECT_EQ(-ENOENT, mxt_bo_wait(self->fd, handle, 0));
	EXPECT_EQ(-EINVAL, mxt_gem_close(self->fd, handle));
	/* ... and it is still alive in its own file. */
	EXPECT_EQ(0, bo_info(fd2, handle, 0, &i));
	close(fd2);
}

TEST_F(bo, handles_are_unique)
{
	__u32 h[64];
	unsigned int a, b;

	for (a = 0; a < ARRAY_SIZE(h); a++)
		ASSERT_EQ(0, mxt_bo_create(self->fd, 4096 * (a % 3 + 1), &h[a],
					   NULL));
	for (a = 0; a < ARRAY_SIZE(h); a++) {
		EXPECT_NE(0, h[a]);
		for (b = a + 1; b < ARRAY_SIZE(h); b++)
			EXPECT_NE(h[a], h[b]);
	}
	for (a = 0; a < ARRAY_SIZE(h); a++)
		EXPECT_EQ(0, mxt_gem_close(self->fd, h[a]));
}

TEST_F(bo, mmap_past_end)
{
	__u64 offset;
	__u32 handle;
	void *map;

	ASSERT_EQ(0, mxt_bo_create(self->fd, 2 * self->page, &handle,
				   &offset));
	map = mmap(NULL, 3 * self->page, PROT_READ, MAP_SHARED, self->fd,
		   offset);
	EXPECT_EQ(MAP_FAILED, map);
	if (map != MAP_FAILED)
		munmap(map, 3 * self->page);
	/* Less than all of it, from the start, is fine. */
	map = mmap(NULL, self->page, PROT_READ, MAP_SHARED, self->fd, offset);
	EXPECT_NE(MAP_FAILED, map);
	if (map != MAP_FAILED)
		munmap(map, self->page);
	/* An offset nobody was given maps nothing. */
	map = mmap(NULL, self->page, PROT_READ, MAP_SHARED, self->fd,
		   offset + 64 * self->page);
	EXPECT_EQ(MAP_FAILED, map);
	if (map != MAP_FAILED)
		munmap(map, self->page);
}

TEST_F(bo, wait_idle)
{
	struct drm_mxaccel_bo_wait w;
	__u32 handle;

	ASSERT_EQ(0, mxt_bo_create(self->fd, 4096, &handle, NULL));
	/* 0 polls; a deadline in the past polls too. */
	EXPECT_EQ(0, mxt_bo_wait(self->fd, handle, 0));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, handle, 1));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, handle, -1));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, handle, mxt_deadline_ms(1000)));

	memset(&w, 0, sizeof(w));
	w.handle = handle;
	w.pad = 1;
	EXPECT_EQ(-EINVAL, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_BO_WAIT, &w));
	w.pad = 0;
	w.handle = handle + 1;
	EXPECT_EQ(-ENOENT, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_BO_WAIT, &w));
	w.handle = 0;
	EXPECT_EQ(-ENOENT, mxt_ioctl(self->fd, DRM_IOCTL_MXACCEL_BO_WAIT, &w));
}

/* A job that uses the buffer object keeps BO_WAIT waiting. */
TEST_F(bo, wait_busy)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 queue;
	__u64 seqno;
	int status;

	if (!mxt_params_writable())
		SKIP(return, "needs the writable test_hang module parameter");
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 60000));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &queue, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);

	/* The engine holds the job until test_hang goes back to 0. */
	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(self->fd, queue, &op, 1, &seqno));
	EXPECT_EQ(-ETIMEDOUT, mxt_bo_wait(self->fd, bo.handle, 0));
	EXPECT_EQ(-ETIMEDOUT, mxt_bo_wait(self->fd, bo.handle,
					  mxt_deadline_ms(100)));
	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	EXPECT_EQ(0, mxt_bo_wait(self->fd, bo.handle,
				 mxt_job_deadline()));
	/* Done by then: the status is final and the result is there. */
	ASSERT_EQ(0, mxt_job_wait(self->fd, queue, seqno, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

/* A buffer object closed while a job uses it lives until the job ends. */
TEST_F(bo, close_while_job_queued)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 queue;
	__u64 seqno;
	int status;

	ASSERT_EQ(0, mxt_queue_create(self->fd, &queue, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	/* Queued, not run in the ioctl: the close may come first. */
	ASSERT_EQ(0, mxt_submit_flags(self->fd, queue, &op, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &seqno));
	ASSERT_EQ(0, mxt_gem_close(self->fd, bo.handle));
	bo.handle = 0;
	ASSERT_EQ(0, mxt_job_wait(self->fd, queue, seqno,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	/* The mapping kept the pages: the result landed in them. */
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(self->fd, &bo);
}

TEST_HARNESS_MAIN
