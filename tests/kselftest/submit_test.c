// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT validation: one subtest per rejected field, each changing one
 * field of an op (or of the SUBMIT) that is otherwise accepted, and
 * asserting the exact errno; limits at MAX and MAX + 1; struct growth
 * through op_size and sync_size; and that a failed SUBMIT writes nothing
 * and queues nothing.
 */
#include "mxaccel_test.h"

/* The base GEMM: C[4 x 4] = A[4 x 64] * B[4 x 64]^T, e4m3, all 1.0. */
#define M	4
#define N	4
#define K	64
#define BLOCKS	(K / 32)
#define BO_SIZE	4096

enum { A_DATA, A_SCALE, B_DATA, B_SCALE, C_BUF, NR_BOS };

#define SEQNO_UNWRITTEN	0xccccccccccccccccull

FIXTURE(submit) {
	int fd;
	__u32 queue;
	__u32 syncobj;
	struct mxt_bo bo[NR_BOS];
	struct drm_mxaccel_op gemm;	/* accepted as it is */
	struct drm_mxaccel_op quant;	/* accepted as it is */
	__u64 max_ops;
	__u64 max_dim;
};

FIXTURE_SETUP(submit)
{
	int i;

	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &self->queue,
				      &self->syncobj));
	for (i = 0; i < NR_BOS; i++)
		ASSERT_EQ(0, mxt_bo_new(self->fd, BO_SIZE, &self->bo[i]));
	memset(self->bo[A_DATA].map, 0x38, BO_SIZE);
	memset(self->bo[B_DATA].map, 0x38, BO_SIZE);
	memset(self->bo[A_SCALE].map, 127, BO_SIZE);
	memset(self->bo[B_SCALE].map, 127, BO_SIZE);

	/* Every operand in a buffer object of its own, at offset 0. */
	mxt_gemm(&self->gemm, M, N, K);
	mxt_mx(&self->gemm.a, self->bo[A_DATA].handle, 0, 0,
	       DRM_MXACCEL_ELEM_E4M3);
	self->gemm.a.scale_handle = self->bo[A_SCALE].handle;
	mxt_mx(&self->gemm.b, self->bo[B_DATA].handle, 0, 0,
	       DRM_MXACCEL_ELEM_E4M3);
	self->gemm.b.scale_handle = self->bo[B_SCALE].handle;
	mxt_dense(&self->gemm.c, self->bo[C_BUF].handle, 0,
		  DRM_MXACCEL_DTYPE_F32);

	/* A[4 x 64] (MX, written) = quantize(C[4 x 64] fp32, read). */
	mxt_quantize(&self->quant, M, K, DRM_MXACCEL_SCALE_FLOOR);
	self->quant.a = self->gemm.a;
	self->quant.c = self->gemm.c;

	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_OPS,
				   &self->max_ops));
	ASSERT_EQ(0, mxt_get_param(self->fd, DRM_MXACCEL_PARAM_MAX_DIM,
				   &self->max_dim));
}

FIXTURE_TEARDOWN(submit)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Submit a prepared SUBMIT.  On failure, the kernel must not have written
 * seqno; on success, wait for the job, which must succeed.
 */
static int do_submit(struct __test_metadata *_metadata, int fd,
		     struct drm_mxaccel_submit *args)
{
	int ret, status = 0;

	args->seqno = SEQNO_UNWRITTEN;
	ret = mxt_submit_args(fd, args);
	if (ret) {
		EXPECT_EQ(SEQNO_UNWRITTEN, args->seqno);
		return ret;
	}
	EXPECT_NE(SEQNO_UNWRITTEN, args->seqno);
	EXPECT_EQ(0, mxt_job_wait(fd, args->queue_id, args->seqno,
				  mxt_job_deadline(),
				  &status));
	EXPECT_EQ(0, status);
	return 0;
}

/* SUBMIT one op on a queue. */
static int submit_op(struct __test_metadata *_metadata, int fd, __u32 queue,
		     const struct drm_mxaccel_op *op)
{
	struct drm_mxaccel_submit args;

	mxt_submit_init(&args, queue, op, 1);
	return do_submit(_metadata, fd, &args);
}

/* The op, with one change, gives err. */
#define EXPECT_OP(err, base, change) do {				\
	struct drm_mxaccel_op _op = (base);				\
	change;								\
	EXPECT_EQ(err, submit_op(_metadata, self->fd, self->queue,	\
				 &_op));					\
} while (0)

TEST_F(submit, base_ops_accepted)
{
	const float *c = (const float *)self->bo[C_BUF].map;
	int i;

	ASSERT_EQ(0, submit_op(_metadata, self->fd, self->queue, &self->gemm));
	for (i = 0; i < M * N; i++)
		EXPECT_EQ(mxt_f32_bits(64.0f), mxt_get_u32(&c[i]));
	ASSERT_EQ(0, submit_op(_metadata, self->fd, self->queue, &self->quant));
}

/* ---- struct drm_mxaccel_submit --------------------------------------- */

TEST_F(submit, flags)
{
	/* Bits 0 (WAIT) and 1 (NO_INLINE) are defined; the rest are not. */
	static const __u32 bad[] = { 4, 8, 0x80000000u, 0xfffffffcu,
				     0xffffffffu };
	struct drm_mxaccel_submit args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mxt_submit_init(&args, self->queue, &self->gemm, 1);
		args.flags = bad[i];
		EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	}
}

TEST_F(submit, reserved)
{
	struct drm_mxaccel_submit args;

	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.reserved = 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	args.reserved = 1ull << 63;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, out_sync_pad)
{
	struct drm_mxaccel_submit args;
	__u32 syncobj;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &syncobj));
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.out_sync.handle = syncobj;
	args.out_sync.pad = 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	args.out_sync.pad = 0;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, unknown_queue)
{
	static const __u32 bad[] = { 0, 1000, 0xffffffffu };
	struct drm_mxaccel_submit args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mxt_submit_init(&args, bad[i], &self->gemm, 1);
		EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	}
	/* A destroyed queue. */
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	ASSERT_EQ(0, mxt_queue_destroy(self->fd, self->queue));
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, queue_of_another_fd)
{
	struct drm_mxaccel_submit args;
	__u32 q2;
	int fd2;

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	/* Make the other file's queue id one this file does not have. */
	ASSERT_EQ(0, mxt_queue_create(fd2, &q2, NULL));
	ASSERT_EQ(0, mxt_queue_create(fd2, &q2, NULL));
	ASSERT_NE(self->queue, q2);
	mxt_submit_init(&args, q2, &self->gemm, 1);
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	close(fd2);
}

TEST_F(submit, op_count_zero)
{
	struct drm_mxaccel_submit args;

	mxt_submit_init(&args, self->queue, &self->gemm, 0);
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
}

/* MAX_OPS ops are accepted, MAX_OPS + 1 are -E2BIG. */
TEST_F(submit, op_count_max)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op *ops;
	__u64 i;

	ASSERT_GE(4096, self->max_ops);
	ops = calloc(self->max_ops + 1, sizeof(*ops));
	ASSERT_NE(NULL, ops);
	for (i = 0; i <= self->max_ops; i++)
		ops[i] = self->gemm;

	mxt_submit_init(&args, self->queue, ops, self->max_ops);
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	mxt_submit_init(&args, self->queue, ops, self->max_ops + 1);
	EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
	mxt_submit_init(&args, self->queue, ops, 0xffffffffu);
	EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
	free(ops);
}

/* Below the first version's op (DRM_MXACCEL_OP_SIZE_V1): -EINVAL. */
TEST_F(submit, op_size_too_small)
{
	static const __u32 bad[] = {
		0, 8, DRM_MXACCEL_OP_SIZE_V1 - 8, DRM_MXACCEL_OP_SIZE_V1 - 1,
	};
	struct drm_mxaccel_submit args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mxt_submit_init(&args, self->queue, &self->gemm, 1);
		args.op_size = bad[i];
		EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	}
}

/*
 * An older, smaller op (version 1 to 3, or any size from there up to the
 * driver's): accepted, the fields past it zero-filled.  Ops are op_size
 * apart.
 */
TEST_F(submit, op_size_older)
{
	const size_t base = sizeof(struct drm_mxaccel_op);
	const size_t sizes[] = {
		DRM_MXACCEL_OP_SIZE_V1, DRM_MXACCEL_OP_SIZE_V1 + 8, base - 8,
	};
	struct drm_mxaccel_submit args;
	unsigned int i;
	__u8 *buf;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		buf = calloc(2, sizes[i]);
		ASSERT_NE(NULL, buf);
		memcpy(buf, &self->gemm, sizes[i]);
		memcpy(buf + sizes[i], &self->gemm, sizes[i]);
		mxt_submit_init(&args, self->queue, NULL, 2);
		args.ops = (uintptr_t)buf;
		args.op_size = sizes[i];
		EXPECT_EQ(0, do_submit(_metadata, self->fd, &args))
			TH_LOG("op_size %zu", sizes[i]);
		free(buf);
	}
}

/*
 * A newer, larger op: accepted when the bytes the driver does not know
 * are zero (the struct grew), -E2BIG otherwise.  Ops are op_size apart.
 */
TEST_F(submit, op_size_larger)
{
	const size_t base = sizeof(struct drm_mxaccel_op);
	/* Up to DRM_MXACCEL_MAX_ELEM_SIZE (beyond it: -E2BIG, limits_test). */
	const size_t extra[] = { 1, 8, 64, DRM_MXACCEL_MAX_ELEM_SIZE - base };
	struct drm_mxaccel_submit args;
	unsigned int i;
	__u8 *buf;

	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		size_t size = base + extra[i];

		buf = calloc(2, size);
		ASSERT_NE(NULL, buf);
		memcpy(buf, &self->gemm, base);
		memcpy(buf + size, &self->gemm, base);

		mxt_submit_init(&args, self->queue, NULL, 2);
		args.ops = (uintptr_t)buf;
		args.op_size = size;
		EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));

		/* Non-zero tail of the second op, first and last byte. */
		buf[2 * size - extra[i]] = 1;
		EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
		buf[2 * size - extra[i]] = 0;
		buf[2 * size - 1] = 0x80;
		EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
		free(buf);
	}
}

TEST_F(submit, ops_bad_pointer)
{
	struct drm_mxaccel_submit args;
	void *map;

	mxt_submit_init(&args, self->queue, NULL, 1);
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));
	args.ops = 8;
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));
	args.ops = ~0ull - 7;
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));

	/* The second op runs into an unmapped page. */
	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap((char *)map + 4096, 4096));
	memcpy((char *)map + 4096 - sizeof(self->gemm), &self->gemm,
	       sizeof(self->gemm));
	mxt_submit_init(&args, self->queue, NULL, 2);
	args.ops = (uintptr_t)map + 4096 - sizeof(self->gemm);
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));
	args.op_count = 1;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	munmap(map, 4096);
}

/* ---- in_syncs and out_sync ------------------------------------------- */

/* 64 in_syncs (the uapi's limit) are accepted, 65 are -E2BIG. */
TEST_F(submit, in_sync_count_max)
{
	struct drm_mxaccel_sync syncs[66];
	struct drm_mxaccel_submit args;
	__u32 signalled;
	unsigned int i;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&signalled));
	memset(syncs, 0, sizeof(syncs));
	for (i = 0; i < ARRAY_SIZE(syncs); i++)
		syncs[i].handle = signalled;

	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = (uintptr_t)syncs;
	args.sync_size = sizeof(syncs[0]);
	args.in_sync_count = 64;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	args.in_sync_count = 65;
	EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
	args.in_sync_count = 0xffffffffu;
	EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, sync_size)
{
	struct drm_mxaccel_submit args;
	__u8 buf[2 * sizeof(struct drm_mxaccel_sync) + 16];
	struct drm_mxaccel_sync sync;
	__u32 signalled;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&signalled));
	memset(&sync, 0, sizeof(sync));
	sync.handle = signalled;
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = (uintptr_t)&sync;
	args.in_sync_count = 1;

	/* Smaller than the first version's struct. */
	args.sync_size = 0;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	args.sync_size = sizeof(sync) - 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	args.sync_size = sizeof(sync);
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));

	/* Larger: the tail must be zero. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &sync, sizeof(sync));
	memcpy(buf + sizeof(sync) + 8, &sync, sizeof(sync));
	args.in_syncs = (uintptr_t)buf;
	args.sync_size = sizeof(sync) + 8;
	args.in_sync_count = 2;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	buf[2 * sizeof(sync) + 8 + 7] = 1;
	EXPECT_EQ(-E2BIG, do_submit(_metadata, self->fd, &args));

	/* Without in_syncs, sync_size is not looked at. */
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.sync_size = 3;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, in_sync_bad_handle)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync sync[2];
	__u32 signalled, fd2_syncobj;
	int fd2;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&signalled));
	memset(sync, 0, sizeof(sync));
	sync[0].handle = signalled;
	sync[1].handle = signalled + 100;
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = (uintptr_t)sync;
	args.sync_size = sizeof(sync[0]);
	args.in_sync_count = 2;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	sync[1].handle = 0;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));

	/* A syncobj of another file. */
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	do {
		ASSERT_EQ(0, mxt_syncobj_create(fd2,
						DRM_SYNCOBJ_CREATE_SIGNALED,
						&fd2_syncobj));
	} while (fd2_syncobj <= signalled);
	sync[1].handle = fd2_syncobj;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	close(fd2);
}

/* No wait-for-submit: an in_sync point must have a fence already. */
TEST_F(submit, in_sync_without_fence)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync sync;
	__u32 empty;
	__u64 seqno;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &empty));
	memset(&sync, 0, sizeof(sync));
	sync.handle = empty;
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = (uintptr_t)&sync;
	args.sync_size = sizeof(sync);
	args.in_sync_count = 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));

	/* A queue's timeline: a point it reached, then one past it. */
	ASSERT_EQ(0, mxt_submit(self->fd, self->queue, &self->gemm, 1,
				&seqno));
	sync.handle = self->syncobj;
	sync.point = seqno;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	sync.point = args.seqno + 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, in_sync_pad)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_sync sync;
	__u32 signalled;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&signalled));
	memset(&sync, 0, sizeof(sync));
	sync.handle = signalled;
	sync.pad = 1;
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = (uintptr_t)&sync;
	args.sync_size = sizeof(sync);
	args.in_sync_count = 1;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, in_syncs_bad_pointer)
{
	struct drm_mxaccel_submit args;

	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.in_syncs = 0;
	args.sync_size = sizeof(struct drm_mxaccel_sync);
	args.in_sync_count = 1;
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));
	args.in_syncs = 16;
	EXPECT_EQ(-EFAULT, do_submit(_metadata, self->fd, &args));
}

TEST_F(submit, out_sync_bad_handle)
{
	struct drm_mxaccel_submit args;
	__u32 syncobj;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, 0, &syncobj));
	mxt_submit_init(&args, self->queue, &self->gemm, 1);
	args.out_sync.handle = syncobj + 100;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	args.out_sync.point = 5;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	args.out_sync.handle = 0xffffffffu;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
}

/* ---- struct drm_mxaccel_op: common fields ------------------------------ */

TEST_F(submit, op_reserved)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.reserved[0] = 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.reserved[1] = 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.reserved[1] = 1ull << 63);
	EXPECT_OP(-EINVAL, self->quant, _op.reserved[0] = 1);
}

TEST_F(submit, op_kind)
{
	static const __u32 bad[] = { 0, 3, 4, 63, 64, 65, 0x80000000u,
				     0xffffffffu };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_OP(-EINVAL, self->gemm, _op.kind = bad[i]);
}

TEST_F(submit, dim_zero)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.m = 0);
	EXPECT_OP(-EINVAL, self->gemm, _op.n = 0);
	EXPECT_OP(-EINVAL, self->gemm, _op.k = 0);
	EXPECT_OP(-EINVAL, self->quant, _op.m = 0);
	EXPECT_OP(-EINVAL, self->quant, _op.k = 0);
}

TEST_F(submit, k_not_multiple_of_32)
{
	static const __u32 bad[] = { 1, 16, 31, 33, 48, 63, 65 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_OP(-EINVAL, self->gemm, _op.k = bad[i]);
		EXPECT_OP(-EINVAL, self->quant, _op.k = bad[i]);
	}
	/* Smaller multiples of 32 fit in the same buffers. */
	EXPECT_OP(0, self->gemm, _op.k = 32);
}

/*
 * MAX_DIM + 1 is -EINVAL; MAX_DIM passes the limit and the validation
 * goes on to the data buffer object's handle, made invalid on purpose
 * (-ENOENT) so that nothing this large runs here.
 */
TEST_F(submit, dim_above_max)
{
	const __u32 max = self->max_dim;
	const __u32 bad = self->bo[C_BUF].handle + 100;

	EXPECT_OP(-EINVAL, self->gemm, _op.m = max + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.n = max + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.k = max + 32);
	EXPECT_OP(-EINVAL, self->gemm, _op.m = 0xffffffffu);
	EXPECT_OP(-EINVAL, self->quant, _op.m = max + 1);
	EXPECT_OP(-EINVAL, self->quant, _op.k = max + 32);

	EXPECT_OP(-ENOENT, self->gemm,
		  { _op.m = max; _op.a.data_handle = bad; });
	EXPECT_OP(-ENOENT, self->gemm,
		  { _op.n = max; _op.a.data_handle = bad; });
	EXPECT_OP(-ENOENT, self->gemm,
		  { _op.k = max; _op.a.data_handle = bad; });
	EXPECT_OP(-EINVAL, self->gemm,
		  { _op.m = max + 1; _op.a.data_handle = bad; });
	EXPECT_OP(-ENOENT, self->quant,
		  { _op.m = max; _op.a.data_handle = bad; });
	EXPECT_OP(-ENOENT, self->quant,
		  { _op.k = max; _op.a.data_handle = bad; });
}

/* ---- GEMM ------------------------------------------------------------- */

TEST_F(submit, gemm_flags)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.flags = 4);
	EXPECT_OP(-EINVAL, self->gemm, _op.flags = 0x80000000u);
	EXPECT_OP(-EINVAL, self->gemm,
		  _op.flags = DRM_MXACCEL_OP_ACCUMULATE | 4);
	EXPECT_OP(0, self->gemm, _op.flags = DRM_MXACCEL_OP_ACCUMULATE);
	EXPECT_OP(0, self->gemm, _op.flags = DRM_MXACCEL_OP_EXACT);
	EXPECT_OP(0, self->gemm, _op.flags = 0);
}

TEST_F(submit, gemm_scale_mode)
{
	EXPECT_OP(-EINVAL, self->gemm,
		  _op.scale_mode = DRM_MXACCEL_SCALE_RCEIL);
	EXPECT_OP(-EINVAL, self->gemm, _op.scale_mode = 0xffffffffu);
}

TEST_F(submit, elem)
{
	static const __u32 bad[] = { 0, DRM_MXACCEL_ELEM_E2M1 + 1, 63, 64,
				     0xffffffffu };
	unsigned int i;
	__u32 e;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_OP(-EINVAL, self->gemm, _op.a.elem = bad[i]);
		EXPECT_OP(-EINVAL, self->gemm, _op.b.elem = bad[i]);
		EXPECT_OP(-EINVAL, self->quant, _op.a.elem = bad[i]);
	}
	/* Every element type, on either side. */
	for (e = DRM_MXACCEL_ELEM_E4M3; e <= DRM_MXACCEL_ELEM_E2M1; e++) {
		EXPECT_OP(0, self->gemm, _op.a.elem = e);
		EXPECT_OP(0, self->gemm, _op.b.elem = e);
		EXPECT_OP(0, self->quant, _op.a.elem = e);
	}
}

TEST_F(submit, scale_layout)
{
	static const __u32 bad[] = { 2, 3, 0x80000000u, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_OP(-EINVAL, self->gemm, _op.a.scale_layout = bad[i]);
		EXPECT_OP(-EINVAL, self->gemm, _op.b.scale_layout = bad[i]);
		EXPECT_OP(-EINVAL, self->quant, _op.a.scale_layout = bad[i]);
	}
	EXPECT_OP(0, self->gemm,
		  _op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED);
	EXPECT_OP(0, self->gemm,
		  _op.b.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED);
}

TEST_F(submit, dtype)
{
	static const __u32 bad[] = { 2, 3, 0x80000000u, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_OP(-EINVAL, self->gemm, _op.c.dtype = bad[i]);
		EXPECT_OP(-EINVAL, self->quant, _op.c.dtype = bad[i]);
	}
	EXPECT_OP(0, self->gemm, _op.c.dtype = DRM_MXACCEL_DTYPE_BF16);
	EXPECT_OP(0, self->quant, _op.c.dtype = DRM_MXACCEL_DTYPE_BF16);
}

TEST_F(submit, bad_handles)
{
	const __u32 bad = self->bo[C_BUF].handle + 100;

	EXPECT_OP(-ENOENT, self->gemm, _op.a.data_handle = bad);
	EXPECT_OP(-ENOENT, self->gemm, _op.a.scale_handle = bad);
	EXPECT_OP(-ENOENT, self->gemm, _op.b.data_handle = bad);
	EXPECT_OP(-ENOENT, self->gemm, _op.b.scale_handle = bad);
	EXPECT_OP(-ENOENT, self->gemm, _op.c.handle = bad);
	EXPECT_OP(-ENOENT, self->gemm, _op.c.handle = 0);
	EXPECT_OP(-ENOENT, self->gemm, _op.a.data_handle = 0xffffffffu);
	EXPECT_OP(-ENOENT, self->quant, _op.a.data_handle = bad);
	EXPECT_OP(-ENOENT, self->quant, _op.a.scale_handle = bad);
	EXPECT_OP(-ENOENT, self->quant, _op.c.handle = bad);
}

TEST_F(submit, handle_of_another_fd)
{
	struct mxt_bo other;
	__u32 h = 0;
	int fd2;

	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	/* A handle in fd2 that this file does not have. */
	while (h <= self->bo[C_BUF].handle)
		ASSERT_EQ(0, mxt_bo_create(fd2, BO_SIZE, &h, NULL));
	EXPECT_OP(-ENOENT, self->gemm, _op.a.data_handle = h);
	EXPECT_OP(-ENOENT, self->gemm, _op.b.scale_handle = h);
	EXPECT_OP(-ENOENT, self->gemm, _op.c.handle = h);
	/* Nor does one of its buffer objects mapped into this process. */
	ASSERT_EQ(0, mxt_bo_new(fd2, BO_SIZE, &other));
	EXPECT_OP(-ENOENT, self->gemm, _op.c.handle = other.handle);
	mxt_bo_free(fd2, &other);
	close(fd2);
}

/* ---- extents ------------------------------------------------------------ */

/* An operand that ends exactly at the end of its buffer object fits. */
TEST_F(submit, extent_at_end)
{
	const __u64 ad = M * K, as = M * BLOCKS, bd = N * K, bs = N * BLOCKS;
	const __u64 c = M * N * 4;

	EXPECT_OP(0, self->gemm, _op.a.data_offset = BO_SIZE - ad);
	EXPECT_OP(0, self->gemm, _op.a.scale_offset = BO_SIZE - as);
	EXPECT_OP(0, self->gemm, _op.b.data_offset = BO_SIZE - bd);
	EXPECT_OP(0, self->gemm, _op.b.scale_offset = BO_SIZE - bs);
	EXPECT_OP(0, self->gemm, _op.c.offset = BO_SIZE - c);
	EXPECT_OP(0, self->quant, _op.c.offset = BO_SIZE - M * K * 4);
	EXPECT_OP(0, self->quant, _op.a.data_offset = BO_SIZE - ad);
}

TEST_F(submit, extent_past_end)
{
	const __u64 ad = M * K, as = M * BLOCKS, bd = N * K, bs = N * BLOCKS;
	const __u64 c = M * N * 4;

	EXPECT_OP(-EINVAL, self->gemm, _op.a.data_offset = BO_SIZE - ad + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.a.scale_offset = BO_SIZE - as + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.b.data_offset = BO_SIZE - bd + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.b.scale_offset = BO_SIZE - bs + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.offset = BO_SIZE - c + 4);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.offset = BO_SIZE);
	EXPECT_OP(-EINVAL, self->gemm, _op.a.data_offset = 1ull << 40);
	EXPECT_OP(-EINVAL, self->quant,
		  _op.c.offset = BO_SIZE - M * K * 4 + 4);
	EXPECT_OP(-EINVAL, self->quant, _op.a.data_offset = BO_SIZE - ad + 1);
	/* Too many rows for the buffer object. */
	EXPECT_OP(-EINVAL, self->gemm, _op.m = BO_SIZE / K + 1);
	/* Strides that push the last row out. */
	EXPECT_OP(0, self->gemm, _op.a.data_stride = (BO_SIZE - K) / (M - 1));
	EXPECT_OP(-EINVAL, self->gemm,
		  _op.a.data_stride = (BO_SIZE - K) / (M - 1) + 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.b.scale_stride = BO_SIZE);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.stride = BO_SIZE);
	/* Swizzled scales need whole 128 x 4 tiles: 512 bytes here. */
	EXPECT_OP(0, self->gemm, {
		_op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.a.scale_offset = BO_SIZE - 512;
	});
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.a.scale_offset = BO_SIZE - 511;
	});
}

TEST_F(submit, extent_overflow)
{
	const __u64 big = 1ull << 63;

	EXPECT_OP(-EOVERFLOW, self->gemm, _op.a.data_offset = ~0ull);
	EXPECT_OP(-EOVERFLOW, self->gemm,
		  _op.a.data_offset = ~0ull - M * K + 2);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.a.data_stride = big);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.a.data_stride = ~0ull);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.a.scale_offset = ~0ull);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.a.scale_stride = big);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.b.data_offset = ~0ull);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.b.data_stride = big);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.b.scale_offset = ~0ull - 1);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.b.scale_stride = ~0ull);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.c.offset = ~0ull - 3);
	EXPECT_OP(-EOVERFLOW, self->gemm, _op.c.stride = big);
	EXPECT_OP(-EOVERFLOW, self->gemm, {
		_op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.a.scale_offset = ~0ull - 100;
	});
	EXPECT_OP(-EOVERFLOW, self->quant, _op.c.offset = ~0ull - 3);
	EXPECT_OP(-EOVERFLOW, self->quant, _op.a.data_stride = big);
	/* Checked before the handle is looked up. */
	EXPECT_OP(-EOVERFLOW, self->gemm, {
		_op.a.data_offset = ~0ull;
		_op.a.data_handle = self->bo[C_BUF].handle + 100;
	});
	/* One row: the stride never multiplies anything. */
	EXPECT_OP(0, self->gemm, { _op.m = 1; _op.a.data_stride = big; });
	EXPECT_OP(0, self->gemm, { _op.n = 1; _op.b.scale_stride = ~0ull; });
	EXPECT_OP(0, self->gemm, { _op.m = 1; _op.c.stride = big; });
}

TEST_F(submit, data_stride_below_row)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.a.data_stride = K - 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.a.data_stride = 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.b.data_stride = K - 1);
	EXPECT_OP(0, self->gemm, _op.a.data_stride = K);
	EXPECT_OP(0, self->gemm, _op.a.data_stride = K + 1);
	/* e2m1: a row is K / 2 bytes. */
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.a.elem = DRM_MXACCEL_ELEM_E2M1;
		_op.a.data_stride = K / 2 - 1;
	});
	EXPECT_OP(0, self->gemm, {
		_op.a.elem = DRM_MXACCEL_ELEM_E2M1;
		_op.a.data_stride = K / 2;
	});
	EXPECT_OP(-EINVAL, self->quant, _op.a.data_stride = K - 1);
}

TEST_F(submit, scale_stride_below_row)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.a.scale_stride = BLOCKS - 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.b.scale_stride = BLOCKS - 1);
	EXPECT_OP(-EINVAL, self->quant, _op.a.scale_stride = BLOCKS - 1);
	EXPECT_OP(0, self->gemm, _op.a.scale_stride = BLOCKS);
	EXPECT_OP(0, self->gemm, _op.a.scale_stride = BLOCKS + 3);
}

TEST_F(submit, swizzled_with_scale_stride)
{
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.a.scale_stride = BLOCKS;
	});
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.b.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.b.scale_stride = 1;
	});
	EXPECT_OP(-EINVAL, self->quant, {
		_op.a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
		_op.a.scale_stride = 4;
	});
}

TEST_F(submit, dense_alignment)
{
	EXPECT_OP(-EINVAL, self->gemm, _op.c.offset = 1);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.offset = 2);
	EXPECT_OP(0, self->gemm, _op.c.offset = 4);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.stride = N * 4 + 2);
	EXPECT_OP(0, self->gemm, _op.c.stride = N * 4 + 4);
	/* Below a row. */
	EXPECT_OP(-EINVAL, self->gemm, _op.c.stride = N * 4 - 4);
	EXPECT_OP(-EINVAL, self->gemm, _op.c.stride = 4);
	/* bf16 elements are two bytes. */
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.c.dtype = DRM_MXACCEL_DTYPE_BF16;
		_op.c.offset = 1;
	});
	EXPECT_OP(0, self->gemm, {
		_op.c.dtype = DRM_MXACCEL_DTYPE_BF16;
		_op.c.offset = 2;
		_op.c.stride = N * 2 + 2;
	});
	EXPECT_OP(-EINVAL, self->gemm, {
		_op.c.dtype = DRM_MXACCEL_DTYPE_BF16;
		_op.c.stride = N * 2 - 2;
	});
	EXPECT_OP(-EINVAL, self->quant, _op.c.offset = 2);
	EXPECT_OP(-EINVAL, self->quant, _op.c.stride = K * 4 - 4);
}

/* ---- QUANTIZE -------------------------------------------------------- */

TEST_F(submit, quantize_fields)
{
	__u32 mode;

	EXPECT_OP(-EINVAL, self->quant, _op.flags = DRM_MXACCEL_OP_ACCUMULATE);
	EXPECT_OP(-EINVAL, self->quant, _op.flags = 0x80000000u);
	EXPECT_OP(-EINVAL, self->quant, _op.n = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.n = N);
	/* b must be all zero, every field of it. */
	EXPECT_OP(-EINVAL, self->quant,
		  _op.b.data_handle = self->bo[B_DATA].handle);
	EXPECT_OP(-EINVAL, self->quant, _op.b.scale_handle = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.b.data_offset = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.b.data_stride = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.b.scale_offset = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.b.scale_stride = 1);
	EXPECT_OP(-EINVAL, self->quant, _op.b.elem = DRM_MXACCEL_ELEM_E4M3);
	EXPECT_OP(-EINVAL, self->quant,
		  _op.b.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED);
	EXPECT_OP(-EINVAL, self->quant, _op.b = self->gemm.b);
	/* Scale modes. */
	EXPECT_OP(-EINVAL, self->quant,
		  _op.scale_mode = DRM_MXACCEL_SCALE_EVEN + 1);
	EXPECT_OP(-EINVAL, self->quant, _op.scale_mode = 64);
	EXPECT_OP(-EINVAL, self->quant, _op.scale_mode = 0xffffffffu);
	for (mode = DRM_MXACCEL_SCALE_FLOOR; mode <= DRM_MXACCEL_SCALE_EVEN;
	     mode++)
		EXPECT_OP(0, self->quant, _op.scale_mode = mode);
}

/* ---- aliasing ----------------------------------------------------------- */

/* Outputs must not overlap an input of their op in the same BO. */
TEST_F(submit, overlapping_output)
{
	const __u32 h = self->bo[A_DATA].handle;
	struct drm_mxaccel_op g, q;

	/* Everything in A_DATA: A at 0, A scales at 256, B at 512,
	 * B scales at 768, C at 1024 (64 bytes).
	 */
	g = self->gemm;
	mxt_mx(&g.a, h, 0, 256, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&g.b, h, 512, 768, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&g.c, h, 1024, DRM_MXACCEL_DTYPE_F32);
	memset(mxt_bo_at(&self->bo[A_DATA], 256), 127, 8);
	memset(mxt_bo_at(&self->bo[A_DATA], 768), 127, 8);
	EXPECT_OP(0, g, (void)0);

	/* C over A's data, A's scales, B's data, B's scales. */
	EXPECT_OP(-EINVAL, g, _op.c.offset = 0);
	EXPECT_OP(-EINVAL, g, _op.c.offset = M * K - 4);
	EXPECT_OP(-EINVAL, g, _op.c.offset = 256 - 60);
	EXPECT_OP(-EINVAL, g, _op.c.offset = 512 + N * K - 4);
	EXPECT_OP(-EINVAL, g, _op.c.offset = 768 + 4);
	/* Adjacent is not overlapping: C right after B's scales. */
	EXPECT_OP(0, g, _op.c.offset = 768 + 8);
	/* Inputs may overlap each other: A and B the same bytes. */
	EXPECT_OP(0, g, _op.b = _op.a);
	/* Data and scales of an input may share bytes too. */
	EXPECT_OP(0, g, _op.a.scale_offset = 0);

	/* QUANTIZE writes A's data and scales, reads C. */
	q = self->quant;
	mxt_mx(&q.a, h, 0, 256, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&q.c, h, 1024, DRM_MXACCEL_DTYPE_F32);
	EXPECT_OP(0, q, (void)0);
	EXPECT_OP(-EINVAL, q, _op.a.scale_offset = M * K - 1);
	EXPECT_OP(-EINVAL, q, _op.a.scale_offset = 0);
	EXPECT_OP(-EINVAL, q, _op.c.offset = 256 - 4);
	EXPECT_OP(-EINVAL, q, _op.c.offset = 0);
	EXPECT_OP(0, q, _op.a.scale_offset = M * K);
}

/* ---- multi-op jobs ------------------------------------------------------ */

/* The first failing op decides the error; earlier good ops change nothing. */
TEST_F(submit, first_bad_op)
{
	struct drm_mxaccel_op ops[3] = { self->gemm, self->gemm, self->gemm };
	struct drm_mxaccel_submit args;

	mxt_submit_init(&args, self->queue, ops, 3);
	ops[1].kind = 0;
	ops[2].a.data_handle = 0;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	ops[1].kind = DRM_MXACCEL_OP_GEMM;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	ops[1].c.offset = ~0ull - 3;
	EXPECT_EQ(-EOVERFLOW, do_submit(_metadata, self->fd, &args));
	ops[1] = self->gemm;
	ops[2] = self->gemm;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
}

/*
 * A failed SUBMIT queues nothing: no sequence number is used, the queue's
 * timeline does not move, no buffer object gets a fence, and the output
 * is never written, whichever stage rejected it (arguments, an op, an
 * in_sync, the out_sync).
 */
TEST_F(submit, failure_queues_nothing)
{
	struct drm_mxaccel_op ops[2] = { self->gemm, self->gemm };
	struct drm_mxaccel_sync sync;
	struct drm_mxaccel_submit args;
	__u32 signalled;
	__u64 point;
	int i, status;

	ASSERT_EQ(0, mxt_syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&signalled));
	memset(self->bo[C_BUF].map, 0x5a, BO_SIZE);

	/* Arguments. */
	mxt_submit_init(&args, self->queue, ops, 2);
	args.flags = 1u << 2;	/* not a defined flag */
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	/* The second op. */
	mxt_submit_init(&args, self->queue, ops, 2);
	ops[1].m = 0;
	EXPECT_EQ(-EINVAL, do_submit(_metadata, self->fd, &args));
	ops[1].m = M;
	/* An in_sync: after every op and buffer object was accepted. */
	memset(&sync, 0, sizeof(sync));
	sync.handle = signalled + 50;
	args.in_syncs = (uintptr_t)&sync;
	args.in_sync_count = 1;
	args.sync_size = sizeof(sync);
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));
	/* The out_sync: after the in_syncs were collected. */
	sync.handle = signalled;
	args.out_sync.handle = signalled + 50;
	EXPECT_EQ(-ENOENT, do_submit(_metadata, self->fd, &args));

	/* Nothing moved. */
	EXPECT_EQ(-EINVAL, mxt_job_wait(self->fd, self->queue, 1, 0, &status));
	ASSERT_EQ(0, mxt_syncobj_query(self->fd, self->syncobj, &point));
	EXPECT_EQ(0, point);
	for (i = 0; i < NR_BOS; i++)
		EXPECT_EQ(0, mxt_bo_wait(self->fd, self->bo[i].handle, 0));
	usleep(100 * 1000);
	EXPECT_TRUE(mxt_all(self->bo[C_BUF].map, 0x5a, BO_SIZE));

	/* The next good SUBMIT is the queue's first job. */
	args.out_sync.handle = 0;
	EXPECT_EQ(0, do_submit(_metadata, self->fd, &args));
	EXPECT_EQ(1, args.seqno);
	EXPECT_EQ(mxt_f32_bits(64.0f), mxt_get_u32(self->bo[C_BUF].map));
}

/*
 * Two handles of one buffer object (a second handle from GEM_OPEN of a
 * flink name, which the DRM core allows only to privileged clients of
 * accel nodes): the driver must treat them as the same buffer object, for
 * locking and for the overlap rule alike.
 */
TEST_F(submit, two_handles_one_object)
{
	struct drm_gem_flink flink;
	struct drm_gem_open gopen;
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 h2;

	ASSERT_EQ(0, mxt_bo_new(self->fd, MXT_ONES_BO_SIZE, &bo));
	memset(&flink, 0, sizeof(flink));
	flink.handle = bo.handle;
	if (mxt_ioctl(self->fd, DRM_IOCTL_GEM_FLINK, &flink))
		SKIP(return, "no GEM_FLINK here: one handle per object");
	memset(&gopen, 0, sizeof(gopen));
	gopen.name = flink.name;
	ASSERT_EQ(0, mxt_ioctl(self->fd, DRM_IOCTL_GEM_OPEN, &gopen));
	h2 = gopen.handle;
	ASSERT_NE(bo.handle, h2);

	/* C through the second handle, apart from A and B: valid. */
	mxt_ones_gemm(&op, &bo);
	op.c.handle = h2;
	EXPECT_EQ(0, submit_op(_metadata, self->fd, self->queue, &op));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	/* C over A's codes through the second handle: overlapping output. */
	op.c.offset = 0;
	EXPECT_EQ(-EINVAL, submit_op(_metadata, self->fd, self->queue, &op));
	mxt_gem_close(self->fd, h2);
	mxt_bo_free(self->fd, &bo);
}

/* ---- dimensions at their limit, for real ------------------------------ */

/*
 * M, N and K at MAX_DIM, each with the smallest other dimensions, for
 * real: e2m1 ones (code 0x2 = 1.0, two per byte) with scales 2^0.  The A
 * and B buffer objects hold MAX_DIM rows of 32 (MAX_DIM * 16 bytes of
 * codes, then MAX_DIM scales), which is also one row of MAX_DIM.
 */
TEST_F_TIMEOUT(submit, dims_at_max_run, 300)
{
	const __u64 max = self->max_dim;
	const __u64 scales = max * 16;
	struct drm_mxaccel_op op;
	struct mxt_bo a, b, c;
	__u64 i;

	if (max > (1u << 20))
		SKIP(return, "MAX_DIM %llu: too large to run here",
		     (unsigned long long)max);
	ASSERT_EQ(0, mxt_bo_new(self->fd, scales + max, &a));
	ASSERT_EQ(0, mxt_bo_new(self->fd, scales + max, &b));
	ASSERT_EQ(0, mxt_bo_new(self->fd, max * 4, &c));
	memset(a.map, 0x22, scales);
	memset(mxt_bo_at(&a, scales), 127, max);
	memset(b.map, 0x22, scales);
	memset(mxt_bo_at(&b, scales), 127, max);

	/* K = MAX_DIM: C[1 x 1] = MAX_DIM. */
	mxt_gemm(&op, 1, 1, max);
	mxt_mx(&op.a, a.handle, 0, scales, DRM_MXACCEL_ELEM_E2M1);
	mxt_mx(&op.b, b.handle, 0, scales, DRM_MXACCEL_ELEM_E2M1);
	mxt_dense(&op.c, c.handle, 0, DRM_MXACCEL_DTYPE_F32);
	ASSERT_EQ(0, submit_op(_metadata, self->fd, self->queue, &op));
	EXPECT_EQ(mxt_f32_bits((float)max), mxt_get_u32(c.map));

	/* M = MAX_DIM, N = 1, K = 32: every C is 32. */
	op.m = max;
	op.k = 32;
	ASSERT_EQ(0, submit_op(_metadata, self->fd, self->queue, &op));
	for (i = 0; i < max; i++)
		if (mxt_get_u32(mxt_bo_at(&c, 4 * i)) != MXT_ONES_C32)
			break;
	EXPECT_EQ(max, i);

	/* N = MAX_DIM, M = 1, K = 32. */
	memset(c.map, 0, max * 4);
	op.m = 1;
	op.n = max;
	ASSERT_EQ(0, submit_op(_metadata, self->fd, self->queue, &op));
	for (i = 0; i < max; i++)
		if (mxt_get_u32(mxt_bo_at(&c, 4 * i)) != MXT_ONES_C32)
			break;
	EXPECT_EQ(max, i);
	mxt_bo_free(self->fd, &a);
	mxt_bo_free(self->fd, &b);
	mxt_bo_free(self->fd, &c);
}

TEST_HARNESS_MAIN
