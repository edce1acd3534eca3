// SPDX-License-Identifier: MIT
/*
 * failnth_sweep: make every allocation of an ioctl fail in turn and check
 * that the driver fails cleanly.  For n = 1, 2, ... the n-th injectable
 * allocation of this thread fails (/proc/thread-self/fail-nth, kernels
 * with CONFIG_FAULT_INJECTION: the debug kernel); the sweep of an ioctl
 * ends when the n-th allocation is never reached and the call succeeds.
 *
 *   SUBMIT         a GEMM with an in_sync and a timeline out_sync, run
 *                  inline and (NO_INLINE) through a ring
 *   QUEUE_CREATE   then destroyed
 *   BO_CREATE      then closed
 *   PRIME import   of a vgem buffer (when vgem is loaded)
 *
 * Each injected failure must come back as -ENOMEM (BO_CREATE: or -ENOSPC,
 * which shmem reports when it cannot allocate the object's file; never a
 * WARN, a crash or another errno), leave nothing behind (the VM runner's kmemleak scan
 * and KASAN see the rest), and a failed SUBMIT must not have queued
 * anything: the next successful job gets the next sequence number and
 * computes the right result.  Injection is restricted to call chains
 * through the driver's own code (failslab's stack filter set to mxaccel's
 * text) except for the import, whose allocations are the DRM core's on
 * our behalf.  Runs on $MXACCEL_E2E_DEVICE (accel:0 by default; on a PCI
 * device its buffer objects are in device memory).  Exits 4 (skip)
 * without fault injection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "e2e.h"

#define DBG "/sys/kernel/debug/"
#define MAX_N 100000

static int nth_fd = -1;

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -errno : 0;
}

static unsigned long read_ulong(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtoul(buf, NULL, 0) : 0;
}

static void set_nth(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(nth_fd, b, len, 0) != len) {
		printf("Bail out! fail-nth write: %s\n", strerror(errno));
		exit(1);
	}
}

/* Non-zero: the armed failure was not reached. */
static unsigned int get_nth(void)
{
	char b[16] = "";

	if (pread(nth_fd, b, sizeof(b) - 1, 0) <= 0) {
		printf("Bail out! fail-nth read: %s\n", strerror(errno));
		exit(1);
	}
	return strtoul(b, NULL, 10);
}

/* Inject only into call chains through mxaccel.ko, or anywhere. */
static void stack_filter(bool driver_only)
{
	unsigned long start = read_ulong("/sys/module/mxaccel/sections/.text");
	unsigned long size = read_ulong("/sys/module/mxaccel/coresize");
	char b[32];

	if (driver_only && start && size) {
		snprintf(b, sizeof(b), "%lu", start);
		write_file(DBG "failslab/require-start", b);
		write_file(DBG "fail_page_alloc/require-start", b);
		snprintf(b, sizeof(b), "%lu", start + size);
		write_file(DBG "failslab/require-end", b);
		write_file(DBG "fail_page_alloc/require-end", b);
	} else {
		write_file(DBG "failslab/require-start", "0");
		write_file(DBG "fail_page_alloc/require-start", "0");
		write_file(DBG "failslab/require-end", "18446744073709551615");
		write_file(DBG "fail_page_alloc/require-end",
			   "18446744073709551615");
	}
}

/* Every allocation may fail: sleeping ones and single pages too. */
static int setup_injection(void)
{
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0)
		return -errno;
	write_file(DBG "failslab/ignore-gfp-wait", "N");
	write_file(DBG "failslab/verbose", "0");
	write_file(DBG "fail_page_alloc/ignore-gfp-wait", "N");
	write_file(DBG "fail_page_alloc/ignore-gfp-highmem", "N");
	write_file(DBG "fail_page_alloc/min-order", "0");
	write_file(DBG "fail_page_alloc/verbose", "0");
	return 0;
}

struct sweep {
	const char *name;
	int also;		/* an errno accepted besides ENOMEM */
	unsigned int points;	/* allocations failed in turn */
	unsigned int odd;	/* successes despite an injection */
	bool ok;
};

/*
 * Run call(arg) with the n-th allocation failing, n = 1, 2, ..., until it
 * is not reached.  call returns 0 or -errno; undo(arg) cleans up after a
 * success.  Failures must be -ENOMEM.
 */
static void sweep(struct sweep *s, int (*call)(void *), void (*undo)(void *),
		  void *arg)
{
	unsigned int n, left;
	int ret;

	s->ok = true;
	for (n = 1; n < MAX_N; n++) {
		set_nth(n);
		ret = call(arg);
		left = get_nth();
		set_nth(0);
		if (!ret)
			undo(arg);
		if (left) {	/* not reached: this must be the clean run */
			if (ret) {
				e2e_fail(__LINE__, "%s: uninjected call failed: %s",
					 s->name, strerror(-ret));
				s->ok = false;
			}
			break;
		}
		s->points++;
		if (!ret) {
			s->odd++;
		} else if (ret != -ENOMEM && (!s->also || ret != s->also)) {
			e2e_fail(__LINE__, "%s: allocation %u failed: %s, want ENOMEM",
				 s->name, n, strerror(-ret));
			s->ok = false;
		}
	}
	if (n == MAX_N) {
		e2e_fail(__LINE__, "%s: more than %u allocations?", s->name,
			 MAX_N);
		s->ok = false;
	}
}

struct ctx {
	int fd;
	uint32_t queue, syncobj, out_syncobj;
	uint32_t a, c;			/* buffer objects */
	uint8_t *amap;
	float *cmap;
	uint64_t seqno;			/* of the last job that queued */
	uint64_t out_point;
	uint32_t flags;
	uint32_t handle;		/* BO_CREATE / import result */
	int prime_fd;
	uint32_t made_queue;
};

static uint32_t bo_new(int fd, uint64_t size, void **map)
{
	struct drm_mxaccel_bo_create c = { .size = size };
	int ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, &c);

	if (ret) {
		printf("Bail out! BO_CREATE: %s\n", strerror(-ret));
		exit(1);
	}
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)c.mmap_offset);
	if (*map == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	return c.handle;
}

/* C (4 x 4 f32) = A * A^T, A 4 x 64 e4m3 ones, scale 1: every entry 64. */
static int submit(void *arg)
{
	struct ctx *x = arg;
	struct drm_mxaccel_sync in = { .handle = x->syncobj,
				       .point = x->seqno };
	struct drm_mxaccel_op op = {
		.kind = DRM_MXACCEL_OP_GEMM, .m = 4, .n = 4, .k = 64,
		.a = { .data_handle = x->a, .scale_handle = x->a,
		       .scale_offset = 256, .elem = DRM_MXACCEL_ELEM_E4M3 },
		.c = { .handle = x->c, .dtype = DRM_MXACCEL_DTYPE_F32 },
	};
	struct drm_mxaccel_submit s = {
		.queue_id = x->queue, .flags = DRM_MXACCEL_SUBMIT_WAIT | x->flags,
		.ops = (uintptr_t)&op, .op_count = 1, .op_size = sizeof(op),
		.in_syncs = (uintptr_t)&in, .in_sync_count = x->seqno ? 1 : 0,
		.sync_size = sizeof(in),
		.out_sync = { .handle = x->out_syncobj,
			      .point = x->out_point + 1 },
		.wait_timeout_ns = e2e_now_ns() + 60000000000ll,
	};
	int ret;

	op.b = op.a;
	memset(x->cmap, 0, 64);
	ret = e2e_ioctl(x->fd, DRM_IOCTL_MXACCEL_SUBMIT, &s);
	if (ret)
		return ret;
	/* Queued: the next sequence number, done, and right. */
	E2E_CHECK(s.seqno == x->seqno + 1, "SUBMIT: seqno %llu after %llu",
		  (unsigned long long)s.seqno, (unsigned long long)x->seqno);
	E2E_CHECK(s.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE,
		  "SUBMIT_WAIT did not wait");
	E2E_CHECK(s.status == 0, "job status %d", s.status);
	E2E_CHECK(x->cmap[0] == 64.0f && x->cmap[15] == 64.0f,
		  "C = %g, %g, want 64", x->cmap[0], x->cmap[15]);
	x->seqno = s.seqno;
	x->out_point++;
	return 0;
}

static void nothing(void *arg __attribute__((unused)))
{
}

static int queue_create(void *arg)
{
	struct ctx *x = arg;
	struct drm_mxaccel_queue_create q = { 0 };
	int ret = e2e_ioctl(x->fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &q);

	x->made_queue = q.queue_id;
	return ret;
}

static void queue_undo(void *arg)
{
	struct ctx *x = arg;
	struct drm_mxaccel_queue_destroy d = { .queue_id = x->made_queue };

	e2e_ioctl(x->fd, DRM_IOCTL_MXACCEL_QUEUE_DESTROY, &d);
}

static int bo_create(void *arg)
{
	struct ctx *x = arg;
	struct drm_mxaccel_bo_create c = { .size = 3 * 4096 };
	int ret = e2e_ioctl(x->fd, DRM_IOCTL_MXACCEL_BO_CREATE, &c);

	x->handle = c.handle;
	return ret;
}

static void gem_close(void *arg)
{
	struct ctx *x = arg;
	struct drm_gem_close g = { .handle = x->handle };

	e2e_ioctl(x->fd, DRM_IOCTL_GEM_CLOSE, &g);
}

static int prime_import(void *arg)
{
	struct ctx *x = arg;
	struct drm_prime_handle p = { .fd = x->prime_fd };
	int ret = e2e_ioctl(x->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	x->handle = p.handle;
	return ret;
}

/* A vgem buffer exported as a dma-buf, or -1 without vgem. */
static int vgem_dmabuf(void)
{
	char path[32], name[16];
	int i;

	for (i = 0; i < 16; i++) {
		struct drm_version v = { .name = name,
					 .name_len = sizeof(name) - 1 };
		struct drm_mode_create_dumb d = { .width = 1024, .height = 1,
						  .bpp = 32 };
		struct drm_prime_handle p = { 0 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!e2e_ioctl(fd, DRM_IOCTL_VERSION, &v) &&
		    !strcmp(name, "vgem") &&
		    !e2e_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &d)) {
			p.handle = d.handle;
			p.flags = DRM_CLOEXEC | DRM_RDWR;
			if (!e2e_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
				return p.fd;	/* the dma-buf keeps the BO */
		}
		close(fd);
	}
	return -1;
}

static void report(const struct sweep *s)
{
	e2e_subtest("%s: %u allocations failed in turn, each cleanly%s",
		    s->name, s->points, s->odd ? " (some recovered)" : "");
}

int main(void)
{
	struct drm_mxaccel_queue_create q = { 0 };
	struct sweep s;
	struct ctx x = { 0 };
	void *map;
	int ret;

	if (access("/proc/self/fail-nth", F_OK)) {
		printf("1..0 # SKIP no fault injection (CONFIG_FAULT_INJECTION)\n");
		return E2E_SKIP;
	}
	x.fd = e2e_device_node_open();
	if (x.fd < 0) {
		printf("1..0 # SKIP no mxaccel device\n");
		return E2E_SKIP;
	}
	ret = setup_injection();
	if (ret) {
		printf("Bail out! fail-nth: %s\n", strerror(-ret));
		return 1;
	}
	e2e_plan(6);
	if (e2e_ioctl(x.fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &q) ||
	    drmSyncobjCreate(x.fd, 0, &x.out_syncobj)) {
		printf("Bail out! queue or syncobj\n");
		return 1;
	}
	x.queue = q.queue_id;
	x.syncobj = q.syncobj;
	x.a = bo_new(x.fd, 4096, &map);
	x.amap = map;
	memset(x.amap, 0x38, 256);		/* e4m3 1.0 */
	memset(x.amap + 256, 127, 8);		/* scales 2^0 */
	x.c = bo_new(x.fd, 4096, &map);
	x.cmap = map;

	stack_filter(true);
	s = (struct sweep){ .name = "SUBMIT (inline)" };
	sweep(&s, submit, nothing, &x);
	report(&s);
	x.flags = DRM_MXACCEL_SUBMIT_NO_INLINE;
	s = (struct sweep){ .name = "SUBMIT (ring)" };
	sweep(&s, submit, nothing, &x);
	report(&s);
	s = (struct sweep){ .name = "QUEUE_CREATE" };
	sweep(&s, queue_create, queue_undo, &x);
	report(&s);
	s = (struct sweep){ .name = "BO_CREATE", .also = -ENOSPC };
	sweep(&s, bo_create, gem_close, &x);
	report(&s);

	x.prime_fd = vgem_dmabuf();
	if (x.prime_fd >= 0) {
		stack_filter(false);
		s = (struct sweep){ .name = "PRIME import of a vgem buffer" };
		sweep(&s, prime_import, gem_close, &x);
		report(&s);
		close(x.prime_fd);
	} else {
		e2e_subtest("PRIME import # SKIP no vgem device");
	}
	stack_filter(false);

	/* After all that, the device still computes. */
	x.flags = 0;
	E2E_CHECK_RET(submit(&x), 0);
	e2e_subtest("the device works after the sweeps");
	close(x.fd);
	return e2e_exit_status();
}
