// SPDX-License-Identifier: MIT
/*
 * Two processes use one accel device at once (accel:0, or
 * $MXACCEL_E2E_DEVICE) and get correct, isolated results.
 *
 * Each child opens the device itself and, started together through a pipe,
 * runs its own random GEMMs (different seeds, shapes and element pairs),
 * singly and in batches, many times over with fresh buffers each time,
 * checking every C, EMULATED on the device (exact on every engine), against
 * the cpu's EMULATED result computed beforehand.
 *
 * Isolation, with raw ioctls on each child's own file, opened as an
 * ordinary client would (without CAP_SYS_ADMIN, which DRM treats as
 * "authenticated" on a primary or accel node and lets use global GEM
 * names): each child creates a buffer object holding its own pattern and
 * tells the other its handle and mmap offset.  Neither can map the other's
 * offset on its file, the other's handle number names nothing or the
 * child's own object (handles are per file), GEM flink/open (global names)
 * are refused with -EACCES, and the other's queue id does not reach the
 * other's queue.
 *
 * Exits 4 (skip) without an accel device.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "e2e.h"

#define PROBLEMS 12
#define ROUNDS 25

struct peer_info {
	uint32_t handle;
	uint32_t queue_id;
	uint64_t mmap_offset;
};

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n) {
		printf("# child: pipe write failed\n");
		_exit(3);
	}
}

static void xread(int fd, void *p, size_t n)
{
	if (read(fd, p, n) != (ssize_t)n) {
		printf("# child: pipe read failed\n");
		_exit(3);
	}
}

/* The library part: PROBLEMS gemms, ROUNDS times, against the cpu. */
static int run_gemms(int id)
{
	struct mxa_device *dev = e2e_open(e2e_device()), *cpu = e2e_open("cpu");
	struct e2e_gemm g[PROBLEMS];
	uint8_t *want[PROBLEMS], *got;
	unsigned int i, r, runs = 0, bad = 0;
	int ret;

	/* Child 0: small and many; child 1: fewer, larger. */
	e2e_seed(0x70726f63ull * (id + 1));
	for (i = 0; i < PROBLEMS; i++) {
		if (id)
			e2e_gemm_random(&g[i], 40, 24, 8);
		else
			e2e_gemm_random(&g[i], 6, 9, 3);
		want[i] = malloc(g[i].c_bytes);
		ret = e2e_gemm_run(cpu, &g[i], MXA_PREF_EMULATED, want[i]);
		E2E_CHECK(!ret, "child %d: cpu gemm %u: %s", id, i,
			  mxa_strerror(ret));
	}
	got = malloc(64 * 64 * 4);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < PROBLEMS; i++) {
			/* The other child's problems differ in every way. */
			unsigned int p = (i + r * (id ? 5 : 7)) % PROBLEMS;

			memset(got, 0xee, g[p].c_bytes);
			ret = e2e_gemm_run(dev, &g[p], MXA_PREF_EMULATED, got);
			runs++;
			if (ret || memcmp(got, want[p], g[p].c_bytes)) {
				if (bad++ < 5)
					e2e_fail(__LINE__, "child %d round %u problem %u: %s",
						 id, r, p,
						 ret ? mxa_strerror(ret) :
						 "C differs from cpu EMULATED");
			}
		}
	}
	printf("# child %d: %u gemms on %s, %u wrong\n", id, runs, e2e_device(), bad);
	for (i = 0; i < PROBLEMS; i++) {
		e2e_gemm_free(&g[i]);
		free(want[i]);
	}
	free(got);
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return bad ? 1 : 0;
}

/* Drop CAP_SYS_ADMIN from the effective set, as an ordinary client. */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* The raw part: each child's buffer object and queue stay its own. */
static int isolation(int id, int to_peer, int from_peer)
{
	struct drm_mxaccel_bo_create bc = { .size = 4096 };
	struct drm_mxaccel_queue_create qc = { 0 };
	struct drm_mxaccel_bo_info bi = { 0 };
	struct drm_mxaccel_job_wait jw = { 0 };
	struct drm_gem_flink fl = { 0 };
	struct drm_gem_open go = { 0 };
	struct peer_info me, peer;
	int fd, ret, fails = e2e_failures;
	uint8_t pattern = (uint8_t)(0xa0 + id);
	uint8_t *map;
	void *p;
	char done = 'd';

	ret = drop_sys_admin();
	E2E_CHECK(!ret, "child %d: cannot drop CAP_SYS_ADMIN: %s", id,
		  mxa_strerror(ret));
	fd = e2e_device_node_open();
	if (fd < 0) {
		e2e_fail(__LINE__, "child %d: cannot open the node", id);
		return 1;
	}
	E2E_CHECK_RET(e2e_ioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, &bc), 0);
	E2E_CHECK_RET(e2e_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &qc), 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)bc.mmap_offset);
	if (map == MAP_FAILED) {
		e2e_fail(__LINE__, "child %d: mmap of its own buffer failed", id);
		close(fd);
		return 1;
	}
	memset(map, pattern, 4096);
	me = (struct peer_info){ .handle = bc.handle, .queue_id = qc.queue_id,
				 .mmap_offset = bc.mmap_offset };
	xwrite(to_peer, &me, sizeof(me));
	xread(from_peer, &peer, sizeof(peer));

	/* The peer's mmap offset is not granted to this file. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		 (off_t)peer.mmap_offset);
	if (peer.mmap_offset != me.mmap_offset) {
		E2E_CHECK(p == MAP_FAILED,
			  "child %d mapped the other child's buffer", id);
	} else if (p != MAP_FAILED) {
		/* Same offset: it can only be this child's own object. */
		E2E_CHECK(((uint8_t *)p)[100] == pattern,
			  "child %d sees the other's bytes at its own offset",
			  id);
	}
	if (p != MAP_FAILED)
		munmap(p, 4096);

	/* The peer's handle number: nothing, or this child's own object. */
	bi.handle = peer.handle;
	ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_BO_INFO, &bi);
	E2E_CHECK(ret == -ENOENT ||
		  (!ret && peer.handle == me.handle &&
		   bi.mmap_offset == me.mmap_offset),
		  "child %d: the other's handle %u: %d, offset 0x%llx", id,
		  peer.handle, ret, (unsigned long long)bi.mmap_offset);
	bi = (struct drm_mxaccel_bo_info){ .handle = me.handle + 1000 };
	E2E_CHECK_RET(e2e_ioctl(fd, DRM_IOCTL_MXACCEL_BO_INFO, &bi), -ENOENT);

	/* No global names on the node: flink and open are refused. */
	fl.handle = me.handle;
	ret = e2e_ioctl(fd, DRM_IOCTL_GEM_FLINK, &fl);
	E2E_CHECK(ret == -EACCES, "child %d: GEM_FLINK: %d (name %u)", id, ret,
		  fl.name);
	go.name = 1;
	ret = e2e_ioctl(fd, DRM_IOCTL_GEM_OPEN, &go);
	E2E_CHECK(ret == -EACCES, "child %d: GEM_OPEN of name 1: %d", id, ret);

	/* The peer's queue id: unknown here, or this child's own queue. */
	jw = (struct drm_mxaccel_job_wait){ .queue_id = peer.queue_id,
					    .seqno = 1 };
	ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_JOB_WAIT, &jw);
	E2E_CHECK(ret == -ENOENT ||
		  (peer.queue_id == me.queue_id && ret == -EINVAL),
		  "child %d: JOB_WAIT on the other's queue %u: %d", id,
		  peer.queue_id, ret);

	/* Both stay alive until both have looked. */
	xwrite(to_peer, &done, 1);
	xread(from_peer, &done, 1);
	E2E_CHECK(map[4095] == pattern && map[0] == pattern,
		  "child %d: its buffer changed", id);
	munmap(map, 4096);
	close(fd);
	return e2e_failures != fails;
}

static int child(int id, int start, int to_peer, int from_peer)
{
	char go;
	int status = 0;

	xread(start, &go, 1);
	if (isolation(id, to_peer, from_peer))
		status |= 2;
	if (run_gemms(id))
		status |= 1;
	fflush(stdout);
	return status;
}

int main(void)
{
	struct mxa_device *probe = e2e_open(e2e_device());
	int start[2], ab[2], ba[2], status[2] = { -1, -1 };
	pid_t pid[2];
	int i;

	mxa_device_close(probe);
	e2e_plan(3);
	fflush(stdout);
	if (pipe(start) || pipe(ab) || pipe(ba)) {
		printf("Bail out! pipe\n");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			printf("Bail out! fork\n");
			return 1;
		}
		if (!pid[i]) {
			close(start[1]);
			_exit(child(i, start[0], i ? ba[1] : ab[1],
				    i ? ab[0] : ba[0]));
		}
	}
	/* Both go at once. */
	if (write(start[1], "gg", 2) != 2)
		printf("# cannot start the children\n");
	for (i = 0; i < 2; i++) {
		int st;

		if (waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st))
			status[i] = WEXITSTATUS(st);
		else
			printf("# child %d died\n", i);
	}
	for (i = 0; i < 2; i++) {
		if (status[i] < 0 || (status[i] & ~3))
			e2e_fail(__LINE__, "child %d exit status %d", i,
				 status[i]);
		else if (status[i] & 1)
			e2e_fail(__LINE__, "child %d got wrong results", i);
	}
	e2e_subtest("two processes, concurrent: every gemm of each equals its cpu EMULATED result");
	for (i = 0; i < 2; i++)
		if (status[i] >= 0 && (status[i] & 2))
			e2e_fail(__LINE__, "child %d saw the other's objects",
				 i);
	e2e_subtest("isolation: neither maps, names or opens the other's buffer objects or queues");
	/* After both are gone, a fresh handle still works. */
	{
		struct mxa_device *dev = e2e_open(e2e_device());
		struct mxa_device *cpu = e2e_open("cpu");
		struct e2e_gemm g;
		uint8_t want[64 * 4], got[64 * 4];

		e2e_seed(3);
		e2e_gemm_random(&g, 8, 8, 2);
		E2E_CHECK(!e2e_gemm_run(cpu, &g, MXA_PREF_EMULATED, want) &&
			  !e2e_gemm_run(dev, &g, MXA_PREF_EMULATED, got) &&
			  !memcmp(want, got, g.c_bytes),
			  "a gemm after the children exited");
		e2e_gemm_free(&g);
		mxa_device_close(cpu);
		mxa_device_close(dev);
	}
	e2e_subtest("the device works after both processes exited");
	return e2e_exit_status();
}
