// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: every fence of the driver holds a reference on the
 * module, so it cannot be removed while a fence exists anywhere, e.g. in
 * a sync_file that outlived the file it came from, and that fence's
 * driver and timeline names stay readable; once the last one is gone,
 * rmmod succeeds.
 *
 * This test removes the module and loads it again, from $MXACCEL_KO
 * (default /payload/mxaccel.ko, where the VM runner puts it) with the
 * num_devices and rings it had.  It skips when that file does not exist,
 * and must run last.
 */
#include <poll.h>
#include <sys/syscall.h>
#include <linux/sync_file.h>

#include "mxaccel_test.h"

static const char *ko_path(void)
{
	const char *p = getenv("MXACCEL_KO");

	return p && *p ? p : "/payload/mxaccel.ko";
}

static int delete_module(const char *name, unsigned int flags)
{
	return syscall(SYS_delete_module, name, flags) ? -errno : 0;
}

static int finit_module(int fd, const char *params)
{
	return syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
}

/* Whether errno e means "the module is in use". */
static bool in_use(int e)
{
	return e == -EWOULDBLOCK || e == -EAGAIN || e == -EBUSY;
}

FIXTURE(module) {
	char params[128];
	bool removed;
};

FIXTURE_SETUP(module)
{
	unsigned int devs = 1, rings = 4;

	mxt_params_restore();
	mxt_param_read("num_devices", &devs);
	mxt_param_read("rings", &rings);
	snprintf(self->params, sizeof(self->params),
		 "num_devices=%u rings=%u", devs, rings);
	self->removed = false;
}

/* Load the module again if the test removed it and did not reload it. */
FIXTURE_TEARDOWN(module)
{
	int fd;

	if (!self->removed || !access(MXT_PARAM_DIR, F_OK))
		return;
	fd = open(ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		finit_module(fd, self->params);
		close(fd);
	}
}

/* The DRM node of a freshly loaded module appears (devtmpfs). */
static int open_after_load(void)
{
	int i, fd = -ENODEV;

	for (i = 0; i < 100; i++) {
		fd = mxt_open();
		if (fd >= 0)
			break;
		usleep(20000);
	}
	return fd;
}

TEST_F_TIMEOUT(module, rmmod_waits_for_last_fence, 120)
{
	struct sync_file_info info;
	struct sync_fence_info fi[4];
	struct drm_mxaccel_op op;
	struct pollfd pfd;
	struct mxt_bo bo;
	__u32 q, s;
	__u64 seqno;
	int fd, sfd, kfd, ret, i;

	if (access(ko_path(), R_OK))
		SKIP(return, "no module file %s (set MXACCEL_KO)", ko_path());
	if (getenv("MXACCEL_VM") == NULL && getenv("MXACCEL_KO") == NULL)
		SKIP(return, "removes the module: only in the test VM or with MXACCEL_KO");

	fd = mxt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mxt_queue_create(fd, &q, &s));
	ASSERT_EQ(0, mxt_bo_new(fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	/* Queued: a scheduler fence, whose name the ring owns. */
	ASSERT_EQ(0, mxt_submit_flags(fd, q, &op, 1,
				      DRM_MXACCEL_SUBMIT_NO_INLINE, &seqno));
	sfd = mxt_export_sync_file(fd, s, seqno);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, mxt_job_wait(fd, q, seqno, mxt_job_deadline(), NULL));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));

	/* The open file holds the module. */
	ret = delete_module("mxaccel", O_NONBLOCK);
	EXPECT_TRUE(in_use(ret)) TH_LOG("delete_module with the file open: %d", ret);

	mxt_bo_free(fd, &bo);
	ASSERT_EQ(0, close(fd));
	/* Let the file's release and the jobs' frees finish. */
	usleep(mxt_scaled_ms(300) * 1000);

	/* Only the sync_file is left, and it holds the module. */
	ret = delete_module("mxaccel", O_NONBLOCK);
	EXPECT_TRUE(in_use(ret)) TH_LOG("delete_module with a sync_file: %d", ret);
	if (!ret) {
		/* Removed under a live fence: what follows reads freed text. */
		self->removed = true;
		TH_LOG("module removed while one of its fences exists");
	}
	ASSERT_EQ(0, access(MXT_PARAM_DIR, F_OK));

	memset(&info, 0, sizeof(info));
	memset(fi, 0, sizeof(fi));
	ASSERT_EQ(0, ioctl(sfd, SYNC_IOC_FILE_INFO, &info));
	ASSERT_LE(1, info.num_fences);
	ASSERT_GE(4, info.num_fences);
	i = info.num_fences;
	memset(&info, 0, sizeof(info));
	info.num_fences = i;
	info.sync_fence_info = (uintptr_t)fi;
	ASSERT_EQ(0, ioctl(sfd, SYNC_IOC_FILE_INFO, &info));
	EXPECT_EQ(1, info.status);
	for (i = 0; i < (int)info.num_fences; i++) {
		fi[i].driver_name[sizeof(fi[i].driver_name) - 1] = '\0';
		fi[i].obj_name[sizeof(fi[i].obj_name) - 1] = '\0';
		TH_LOG("fence %d: driver '%s' timeline '%s' status %d", i,
		       fi[i].driver_name, fi[i].obj_name, fi[i].status);
		EXPECT_TRUE(!strcmp(fi[i].driver_name, "drm_sched") ||
			    !strcmp(fi[i].driver_name, "mxaccel"));
		EXPECT_EQ(0, strncmp(fi[i].obj_name, "mxaccel", 7));
		EXPECT_EQ(1, fi[i].status);
	}
	pfd.fd = sfd;
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 0));

	/* The last fence goes: the module can go (references drop via RCU). */
	ASSERT_EQ(0, close(sfd));
	for (i = 0; i < 200; i++) {
		ret = delete_module("mxaccel", O_NONBLOCK);
		if (!in_use(ret))
			break;
		usleep(mxt_scaled_ms(25) * 1000);
	}
	ASSERT_EQ(0, ret) TH_LOG("delete_module after the last fence: %d", ret);
	self->removed = true;
	EXPECT_NE(0, access(MXT_PARAM_DIR, F_OK));

	/* Back, as it was, for whatever runs after. */
	kfd = open(ko_path(), O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, kfd);
	ret = finit_module(kfd, self->params);
	close(kfd);
	ASSERT_EQ(0, ret) TH_LOG("finit_module(%s, \"%s\")", ko_path(),
				 self->params);
	self->removed = false;

	fd = open_after_load();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mxt_queue_create(fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(fd, &bo);
	close(fd);
}

TEST_HARNESS_MAIN
