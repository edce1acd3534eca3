/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the PCI-device kselftests (pci_test, pci_unplug_test): the
 * hardware node and its PCI function, BAR2 through sysfs resource2, the
 * device model's test page (hw/mxaccel_pci.h, struct mxhw_test), and the
 * status of a job's fence in a sync_file.  Include after mxaccel_test.h.
 */
#ifndef MXACCEL_PCI_TEST_H
#define MXACCEL_PCI_TEST_H

#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/sync_file.h>

#include "mxaccel_pci.h"

struct mxt_pci {
	char sysfs[PATH_MAX];		/* /sys/bus/pci/devices/<bdf> */
	char bdf[64];
	/* The device writes them: read and written with __atomic_* only. */
	__u8 *bar;
	size_t bar_size;
	struct mxhw_header *hdr;
	struct mxhw_test *test;		/* NULL: no test page */
};

/* Open the hardware node and find its PCI function; the fd or -errno. */
static inline int mxt_pci_open(struct mxt_pci *pd)
{
	char link[PATH_MAX];
	struct stat st;
	int fd;

	setenv("MXACCEL_ENGINE", "hardware", 1);
	fd = mxt_open();
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(link, pd->sysfs)) {
		close(fd);
		return -errno;
	}
	snprintf(pd->bdf, sizeof(pd->bdf), "%s", strrchr(pd->sysfs, '/') + 1);
	return fd;
}

/* Map BAR2; 0, or -errno (EINVAL: the guest lacks iomem=relaxed). */
static inline int mxt_pci_map(struct mxt_pci *pd)
{
	char path[PATH_MAX + 16];
	struct stat st;
	void *p;
	int bfd;

	snprintf(path, sizeof(path), "%s/resource2", pd->sysfs);
	bfd = open(path, O_RDWR | O_SYNC);
	if (bfd < 0)
		return -errno;
	if (fstat(bfd, &st)) {
		close(bfd);
		return -errno;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	close(bfd);
	if (p == MAP_FAILED)
		return -errno;
	pd->bar = p;
	pd->bar_size = st.st_size;
	pd->hdr = p;
	pd->test = pd->hdr->test_offset ?
		   (void *)(pd->bar + pd->hdr->test_offset) : NULL;
	return 0;
}

static inline void mxt_pci_unmap(struct mxt_pci *pd)
{
	if (pd->bar)
		munmap(pd->bar, pd->bar_size);
	pd->bar = NULL;
	pd->hdr = NULL;
	pd->test = NULL;
}

/* Arm a fault; the device acknowledges it within 10 ms (2 s here). */
static inline int mxt_pci_fault(struct mxt_pci *pd, __u32 cmd, __u32 ring,
				__u32 arg, __u32 count)
{
	__s64 end = mxt_deadline_ms(2000);
	__u32 seq = __atomic_load_n(&pd->test->cmd_seq, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&pd->test->cmd, cmd, __ATOMIC_RELAXED);
	__atomic_store_n(&pd->test->ring, ring, __ATOMIC_RELAXED);
	__atomic_store_n(&pd->test->arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&pd->test->count, count, __ATOMIC_RELAXED);
	/* The command's fields before the seq that makes it new. */
	__atomic_store_n(&pd->test->cmd_seq, seq, __ATOMIC_RELEASE);
	while (__atomic_load_n(&pd->test->ack_seq, __ATOMIC_ACQUIRE) != seq) {
		if (mxt_now_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/*
 * Wait for a sync_file and return its first fence's status (0 or
 * -errno): the file's own status is that of a timeline point's chain
 * link, which does not carry the job's error.
 */
static inline int mxt_sync_file_status(int sfd, int ms)
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

static sigjmp_buf mxt_bus_jmp;

static inline void mxt_on_sigbus(int sig)
{
	siglongjmp(mxt_bus_jmp, 1);
}

/*
 * Whether reading p raises SIGBUS (a mapping of a removed device's
 * memory must).  Not inlined: the caller's locals stay out of the jump.
 */
static __attribute__((noinline)) bool mxt_read_faults(const __u8 *p)
{
	bool faulted = true;

	signal(SIGBUS, mxt_on_sigbus);
	if (!sigsetjmp(mxt_bus_jmp, 1)) {
		(void)__atomic_load_n(p, __ATOMIC_RELAXED);
		faulted = false;
	}
	signal(SIGBUS, SIG_DFL);
	return faulted;
}

#endif /* MXACCEL_PCI_TEST_H */
