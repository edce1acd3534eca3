// SPDX-License-Identifier: GPL-2.0
/*
 * Buffers and fences from elsewhere:
 *
 * - a vgem buffer imported through PRIME is a GEMM input; a vgem write
 *   fence on it holds the job back until vgem signals it (implicit sync
 *   through the shared reservation object);
 * - a udmabuf import (its exporter needs CPU-access brackets, which the
 *   engine cannot take on its fence-signalling path) is refused at SUBMIT
 *   with -EINVAL;
 * - with two mxaccel devices: a queue syncobj of device 0, exported and
 *   imported into a file of device 1, orders a job there (in_sync).
 *
 * Each part skips when what it needs is absent (the VM runner loads vgem
 * with --modules; two devices need num_devices=2).
 */
#include <sys/syscall.h>
#include <linux/memfd.h>
#include <linux/udmabuf.h>

#include "mxaccel_test.h"

/* vgem's uapi (include/uapi/drm/vgem_drm.h), not in libdrm's headers. */
struct mxt_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
#define MXT_VGEM_FENCE_WRITE	0x1
	__u32 out_fence;
	__u32 pad;
};

struct mxt_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define MXT_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct mxt_vgem_fence_attach)
#define MXT_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct mxt_vgem_fence_signal)

FIXTURE(import) {
	int fd;
};

FIXTURE_SETUP(import)
{
	mxt_params_restore();
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(import)
{
	mxt_params_restore();
	if (self->fd >= 0)
		close(self->fd);
}

/* A vgem primary node (dumb buffers need one), or -ENODEV. */
static int open_vgem(void)
{
	char path[64], name[64];
	int i, fd;

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!mxt_driver_name(fd, name, sizeof(name)) &&
		    !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

struct vgem_bo {
	__u32 handle;
	__u64 size;
	void *map;
};

static int vgem_bo_new(int vfd, __u64 size, struct vgem_bo *bo)
{
	struct drm_mode_create_dumb c;
	struct drm_mode_map_dumb m;
	int ret;

	memset(&c, 0, sizeof(c));
	c.width = 1024;
	c.height = (size + 1023) / 1024;
	c.bpp = 8;
	ret = mxt_ioctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->size = c.size;
	memset(&m, 0, sizeof(m));
	m.handle = c.handle;
	ret = mxt_ioctl(vfd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	if (ret)
		return ret;
	bo->map = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       vfd, m.offset);
	if (bo->map == MAP_FAILED) {
		bo->map = NULL;
		return -errno;
	}
	return 0;
}

static int prime_export(int fd, __u32 handle)
{
	struct drm_prime_handle p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.handle = handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	p.fd = -1;
	ret = mxt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	return ret ? ret : p.fd;
}

static int prime_import(int fd, int dmabuf, __u32 *handle)
{
	struct drm_prime_handle p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.fd = dmabuf;
	ret = mxt_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	if (!ret)
		*handle = p.handle;
	return ret;
}

/* A and B (ones, e4m3) in one 4096-byte layout at the start of map. */
static void fill_ones_inputs(void *map)
{
	__u8 *p = map;

	memset(p, 0x38, 1024);
	memset(p + 1024, 127, 32);
	memset(p + 2048, 0x38, 1024);
	memset(p + 3072, 127, 32);
}

/* C (fp32) in c at 0 = A * B^T with A and B in `in` as above. */
static void gemm_from(struct drm_mxaccel_op *op, __u32 in, __u32 c)
{
	mxt_gemm(op, 32, 32, 32);
	mxt_mx(&op->a, in, 0, 1024, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op->b, in, 2048, 3072, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op->c, c, 0, DRM_MXACCEL_DTYPE_F32);
}

static unsigned int c_wrong(const struct mxt_bo *c)
{
	unsigned int i, wrong = 0;

	for (i = 0; i < 32 * 32; i++)
		wrong += mxt_get_u32(mxt_bo_at(c, 4 * i)) != MXT_ONES_C32;
	return wrong;
}

/*
 * Whether the device reads only its own memory (a PCI engine without
 * DMA): imported buffers, system memory all, are refused at SUBMIT.
 */
static bool reads_only_device_memory(int fd)
{
	__u64 kind = 0, vram = 0;

	mxt_get_param(fd, DRM_MXACCEL_PARAM_ENGINE_KIND, &kind);
	mxt_get_param(fd, DRM_MXACCEL_PARAM_DEVICE_MEMORY, &vram);
	return kind == DRM_MXACCEL_ENGINE_HARDWARE && vram;
}

/*
 * A vgem buffer, written through vgem's mapping, read by a GEMM here; a
 * vgem write fence on it holds the job until vgem signals it.  A device
 * that reads only its own memory refuses the job with -EINVAL.
 */
TEST_F(import, vgem_input_and_fence)
{
	struct mxt_vgem_fence_attach fa;
	struct mxt_vgem_fence_signal fs;
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op;
	struct vgem_bo vbo;
	struct mxt_bo c;
	int vfd, dmabuf, status;
	__u32 h, q;

	vfd = open_vgem();
	if (vfd < 0)
		SKIP(return, "no vgem device (load the vgem module)");
	ASSERT_EQ(0, vgem_bo_new(vfd, 8192, &vbo));
	fill_ones_inputs(vbo.map);
	dmabuf = prime_export(vfd, vbo.handle);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h));
	ASSERT_EQ(0, mxt_bo_new(self->fd, 4096, &c));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	gemm_from(&op, h, c.handle);

	memset(c.map, 0xcc, 4096);
	if (reads_only_device_memory(self->fd)) {
		EXPECT_EQ(-EINVAL, mxt_run(self->fd, q, &op, 1));
		EXPECT_TRUE(mxt_all(c.map, 0xcc, 4096));
		goto out;
	}
	EXPECT_EQ(0, mxt_run(self->fd, q, &op, 1));
	EXPECT_EQ(0, c_wrong(&c));

	/* vgem "writes" the buffer: a write fence in its reservation. */
	memset(&fa, 0, sizeof(fa));
	fa.handle = vbo.handle;
	fa.flags = MXT_VGEM_FENCE_WRITE;
	ASSERT_EQ(0, mxt_ioctl(vfd, MXT_IOCTL_VGEM_FENCE_ATTACH, &fa));
	memset(c.map, 0xcc, 4096);
	mxt_submit_init(&args, q, &op, 1);
	ASSERT_EQ(0, mxt_submit_args(self->fd, &args));
	EXPECT_FALSE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(self->fd, q, args.seqno,
					   mxt_deadline_ms(300), &status));
	EXPECT_TRUE(mxt_all(c.map, 0xcc, 4096));

	memset(&fs, 0, sizeof(fs));
	fs.fence = fa.out_fence;
	ASSERT_EQ(0, mxt_ioctl(vfd, MXT_IOCTL_VGEM_FENCE_SIGNAL, &fs));
	ASSERT_EQ(0, mxt_job_wait(self->fd, q, args.seqno, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, c_wrong(&c));

out:
	EXPECT_EQ(0, mxt_gem_close(self->fd, h));
	close(dmabuf);
	mxt_bo_free(self->fd, &c);
	munmap(vbo.map, vbo.size);
	close(vfd);
}

/* The dma-buf of a memfd's pages, from /dev/udmabuf. */
static int udmabuf_new(__u64 size)
{
	struct udmabuf_create uc;
	int dev, memfd, buf;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -ENODEV;
	memfd = syscall(SYS_memfd_create, "mxaccel-udmabuf",
			MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		close(dev);
		return -errno;
	}
	memset(&uc, 0, sizeof(uc));
	uc.memfd = memfd;
	uc.flags = UDMABUF_FLAGS_CLOEXEC;
	uc.offset = 0;
	uc.size = size;
	buf = ioctl(dev, UDMABUF_CREATE, &uc);
	if (buf < 0)
		buf = -errno;
	close(memfd);
	close(dev);
	return buf;
}

/*
 * udmabuf's dma-buf ops have begin/end_cpu_access: the engine cannot
 * bracket its CPU access from the fence-signalling path, so SUBMIT
 * refuses such a buffer with -EINVAL and queues nothing.
 */
TEST_F(import, udmabuf_refused_at_submit)
{
	struct drm_mxaccel_op op;
	struct mxt_bo c;
	int buf, ret;
	__u32 h, q;

	buf = udmabuf_new(8192);
	if (buf == -ENODEV)
		SKIP(return, "no /dev/udmabuf");
	ASSERT_LE(0, buf) TH_LOG("UDMABUF_CREATE: %d", buf);
	ret = prime_import(self->fd, buf, &h);
	if (ret) {
		/* Refusing it at import is fine too. */
		TH_LOG("import refused: %d", ret);
		EXPECT_TRUE(ret == -EINVAL || ret == -EOPNOTSUPP);
		close(buf);
		return;
	}
	ASSERT_EQ(0, mxt_bo_new(self->fd, 4096, &c));
	ASSERT_EQ(0, mxt_queue_create(self->fd, &q, NULL));
	gemm_from(&op, h, c.handle);
	EXPECT_EQ(-EINVAL, mxt_submit(self->fd, q, &op, 1, NULL));
	EXPECT_EQ(-EINVAL, mxt_submit_flags(self->fd, q, &op, 1,
					    DRM_MXACCEL_SUBMIT_NO_INLINE, NULL));
	/* As output too. */
	mxt_ones_gemm(&op, &c);
	op.c.handle = h;
	op.c.offset = 0;
	EXPECT_EQ(-EINVAL, mxt_submit(self->fd, q, &op, 1, NULL));
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, q, 1, 0, NULL));
	EXPECT_EQ(0, mxt_gem_close(self->fd, h));
	close(buf);
	mxt_bo_free(self->fd, &c);
}

/* Every mxaccel node, up to max; returns how many were opened. */
static int open_all(int *fds, int max)
{
	static const char * const dirs[] = { "/dev/accel", "/dev/dri" };
	static const char * const prefixes[] = { "accel", "renderD" };
	unsigned int d;
	int n = 0;

	for (d = 0; d < 2 && !n; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		if (!dir)
			continue;
		while ((de = readdir(dir)) && n < max) {
			char path[300];
			int fd;

			if (strncmp(de->d_name, prefixes[d],
				    strlen(prefixes[d])))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d],
				 de->d_name);
			fd = mxt_open_if_mxaccel(path);
			if (fd >= 0)
				fds[n++] = fd;
		}
		closedir(dir);
	}
	return n;
}

/*
 * Device 0's queue timeline, exported as a syncobj fd and imported on
 * device 1, is an in_sync there: the job on device 1 waits for the one
 * held on device 0, then runs.
 */
TEST_F(import, cross_device_in_sync)
{
	struct drm_syncobj_handle exp, imp;
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync in;
	struct drm_mxaccel_op op0, op1;
	struct mxt_bo b0, b1;
	__u32 q0, s0, q1;
	__u64 j0;
	int fds[4], n, i, status;

	n = open_all(fds, 4);
	if (n < 2) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		SKIP(return, "needs two mxaccel devices (num_devices=2)");
	}
	if (!mxt_params_writable()) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		SKIP(return, "needs writable test_hang and job_timeout_ms");
	}
	ASSERT_EQ(0, mxt_param_write("job_timeout_ms", 600000));
	ASSERT_EQ(0, mxt_queue_create(fds[0], &q0, &s0));
	ASSERT_EQ(0, mxt_queue_create(fds[1], &q1, NULL));
	ASSERT_EQ(0, mxt_bo_new(fds[0], MXT_ONES_BO_SIZE, &b0));
	ASSERT_EQ(0, mxt_bo_new(fds[1], MXT_ONES_BO_SIZE, &b1));
	mxt_ones_gemm(&op0, &b0);
	mxt_ones_gemm(&op1, &b1);
	memset(mxt_bo_at(&b1, MXT_ONES_C), 0xcc, 4096);

	ASSERT_EQ(0, mxt_param_write("test_hang", 1));
	ASSERT_EQ(0, mxt_submit(fds[0], q0, &op0, 1, &j0));

	memset(&exp, 0, sizeof(exp));
	exp.handle = s0;
	exp.fd = -1;
	ASSERT_EQ(0, mxt_ioctl(fds[0], DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &exp));
	memset(&imp, 0, sizeof(imp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, mxt_ioctl(fds[1], DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp));
	close(exp.fd);

	memset(&in, 0, sizeof(in));
	in.handle = imp.handle;
	in.point = j0;
	mxt_submit_init(&args, q1, &op1, 1);
	args.in_syncs = (uintptr_t)&in;
	args.in_sync_count = 1;
	args.sync_size = sizeof(in);
	ASSERT_EQ(0, mxt_submit_args(fds[1], &args));
	EXPECT_FALSE(args.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE);
	EXPECT_EQ(-ETIMEDOUT, mxt_job_wait(fds[1], q1, args.seqno,
					   mxt_deadline_ms(300), &status));

	ASSERT_EQ(0, mxt_param_write("test_hang", 0));
	ASSERT_EQ(0, mxt_job_wait(fds[1], q1, args.seqno, mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	/* It ran after the job it waited for, which is done. */
	ASSERT_EQ(0, mxt_job_wait(fds[0], q0, j0, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, mxt_ones_wrong(&b1));
	mxt_bo_free(fds[0], &b0);
	mxt_bo_free(fds[1], &b1);
	for (i = 0; i < n; i++)
		close(fds[i]);
}

TEST_HARNESS_MAIN
