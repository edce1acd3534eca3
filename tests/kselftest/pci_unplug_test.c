// SPDX-License-Identifier: GPL-2.0
/*
 * Hot-unplug of the MX PCI device by qemu (device_del), with a job on the
 * device, a mapping of its memory and the file open: the job's fence ends
 * with -ENODEV, every ioctl fails with -ENODEV, the mapping is gone
 * (SIGBUS), closing is clean.  The VM runner does the unplug when the
 * test prints MXACCEL-VM-DEVICE-DEL on the console (tests/vm/run.sh);
 * without MXACCEL_VM_DEVICE_DEL=1 in the environment (no runner to ask)
 * the test skips.  The device is gone for good afterwards, so this program
 * runs alone (tests/vm/test_vm_pci_unplug.sh), not in run.sh's list.
 */
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "mxaccel_test.h"
#include "mxaccel_pci.h"

#define E4M3_ONE 0x38
#define SCALE_ONE 127

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/* The first fence's status of a sync_file (0 or -errno), once signalled. */
static int sync_file_status(int sfd, int ms)
{
	struct sync_fence_info fence;
	struct sync_file_info info;
	struct pollfd p = { .fd = sfd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -ETIME;
	memset(&info, 0, sizeof(info));
	memset(&fence, 0, sizeof(fence));
	info.num_fences = 1;
	info.sync_fence_info = (uintptr_t)&fence;
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	return fence.status == 1 ? 0 : fence.status;
}

/* The PCI function behind fd: /sys/bus/pci/devices/<bdf>. */
static int pci_dir(int fd, char *dir)
{
	char link[PATH_MAX];
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	return realpath(link, dir) ? 0 : -errno;
}

/* Arm a fault through the device's test page (sysfs resource2). */
static int slow_ring0(const char *dir, __u32 ms)
{
	char path[PATH_MAX + 16];
	struct mxhw_header *hdr;
	struct mxhw_test *t;
	struct stat st;
	__u32 seq;
	void *bar;
	int bfd, i;

	snprintf(path, sizeof(path), "%s/resource2", dir);
	bfd = open(path, O_RDWR | O_SYNC);
	if (bfd < 0)
		return -errno;
	if (fstat(bfd, &st)) {
		close(bfd);
		return -errno;
	}
	bar = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	close(bfd);
	if (bar == MAP_FAILED)
		return -errno;
	hdr = bar;
	if (!hdr->test_offset) {
		munmap(bar, st.st_size);
		return -ENOTSUP;
	}
	t = (void *)((__u8 *)bar + hdr->test_offset);
	seq = __atomic_load_n(&t->cmd_seq, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&t->cmd, MXHW_FAULT_SLOW, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->arg, ms, __ATOMIC_RELAXED);
	__atomic_store_n(&t->count, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->cmd_seq, seq, __ATOMIC_RELEASE);
	for (i = 0; i < 2000; i++) {
		if (__atomic_load_n(&t->ack_seq, __ATOMIC_ACQUIRE) == seq)
			break;
		usleep(1000);
	}
	munmap(bar, st.st_size);
	return i < 2000 ? 0 : -ETIMEDOUT;
}

TEST(device_del_with_job_mapping_and_file)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_get_param p;
	struct drm_mxaccel_op op;
	char dir[PATH_MAX];
	struct mxt_bo bo;
	__u32 q, syncobj;
	int fd, sfd, con, i, ret;
	__u8 *map;

	if (!getenv("MXACCEL_VM_DEVICE_DEL"))
		SKIP(return, "no VM runner to hot-unplug the device (MXACCEL_VM_DEVICE_DEL)");
	setenv("MXACCEL_ENGINE", "hardware", 1);
	fd = mxt_open();
	if (fd < 0)
		SKIP(return, "no mxaccel device with a hardware engine");
	ASSERT_EQ(0, pci_dir(fd, dir));
	ret = slow_ring0(dir, 600000);
	if (ret == -EINVAL || ret == -ENOTSUP)
		SKIP(return, "no test page to slow the device (%d)", ret);
	ASSERT_EQ(0, ret);

	/* C = A * B^T of ones, 4x4x32, in one device-memory object. */
	ASSERT_EQ(0, mxt_bo_new(fd, 65536, &bo));
	map = mxt_bo_at(&bo, 0);
	memset(map, E4M3_ONE, 4 * 32);
	memset(map + 4096, SCALE_ONE, 4);
	memset(map + 8192, E4M3_ONE, 4 * 32);
	memset(map + 12288, SCALE_ONE, 4);
	mxt_gemm(&op, 4, 4, 32);
	mxt_mx(&op.a, bo.handle, 0, 4096, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, bo.handle, 8192, 12288, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, bo.handle, 16384, DRM_MXACCEL_DTYPE_F32);
	ASSERT_EQ(0, mxt_queue_create(fd, &q, &syncobj));
	mxt_submit_init(&args, q, &op, 1);
	ASSERT_EQ(0, mxt_submit_args(fd, &args));
	sfd = mxt_export_sync_file(fd, syncobj, args.seqno);
	ASSERT_LE(0, sfd);
	usleep(200000);

	/* Ask the runner, then wait for the function to go. */
	con = open("/dev/console", O_WRONLY);
	ASSERT_LE(0, con);
	ASSERT_LT(0, write(con, "MXACCEL-VM-DEVICE-DEL\n", 22));
	close(con);
	for (i = 0; i < 300 && !access(dir, F_OK); i++)
		usleep(100000);
	if (!access(dir, F_OK))
		SKIP(return, "%.200s still there 30 s after device_del (no ACPI PCI hotplug in this kernel?)",
		     dir);

	EXPECT_EQ(-ENODEV, sync_file_status(sfd, 10000));
	close(sfd);
	memset(&p, 0, sizeof(p));
	p.param = DRM_MXACCEL_PARAM_UAPI_VERSION;
	EXPECT_EQ(-ENODEV, mxt_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &p));
	signal(SIGBUS, on_sigbus);
	if (!sigsetjmp(bus_jmp, 1)) {
		(void)__atomic_load_n(map, __ATOMIC_RELAXED);
		EXPECT_TRUE(0) TH_LOG("the unplugged device's memory is still mapped");
	}
	signal(SIGBUS, SIG_DFL);
	mxt_bo_free(fd, &bo);
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
