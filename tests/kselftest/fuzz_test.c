// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded, seeded fuzzer of the driver's ioctls: random ioctl numbers in
 * the driver's range (and just past it), random sizes and directions now
 * and then, and argument structs that are mostly "almost valid": real
 * handles, queue ids and syncobjs mixed with stale and random ones, small
 * dimensions mixed with limits and extreme offsets.  Ops that pass
 * validation really run.
 *
 * The kernel must survive (the VM runner scans dmesg for WARN and BUG),
 * every ioctl must return 0 or an errno the uapi names (never -EAGAIN),
 * and at the end the device must still compute correctly.
 *
 * MXACCEL_FUZZ_SEED and MXACCEL_FUZZ_ITERS override the seed and the
 * number of iterations (default 20000).
 */
#include "mxaccel_test.h"

#define NR_BOS		24
#define NR_QUEUES	6
/* Each queue's timeline, then a signalled and an empty binary syncobj. */
#define NR_SYNCOBJS	(NR_QUEUES + 2)
#define SIGNALLED	NR_QUEUES
#define MAX_FUZZ_OPS	8
#define MAX_FUZZ_SYNCS	8
#define LIVE_BO_LIMIT	(1u << 20)	/* larger sizes: made to fail */

struct fuzz {
	__u64 rng;
	int fd;
	__u32 bo[NR_BOS];
	__u64 bo_size[NR_BOS];
	__u32 queue[NR_QUEUES];
	__u64 last_seqno[NR_QUEUES];
	__u32 syncobj[NR_SYNCOBJS];
	__u32 max_queue_id;	/* ids only grow */
	/* what came back */
	unsigned int ok, failed, submitted;
	unsigned int bad_errno;
	int last_bad_errno;
	unsigned int last_bad_nr;
};

static __u64 rnd(struct fuzz *f)
{
	/* xorshift64* */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dull;
}

/* True with probability 1 / n. */
static bool one_in(struct fuzz *f, unsigned int n)
{
	return rnd(f) % n == 0;
}

/* A value that is often interesting: small, a limit, or anything. */
static __u64 rnd_u64(struct fuzz *f)
{
	static const __u64 edge[] = {
		0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 63, 64, 4095, 4096, 4097,
		0x7fffffffull, 0x80000000ull, 0xffffffffull, 0x100000000ull,
		1ull << 20, (1ull << 20) + 1, 1ull << 32, (1ull << 32) + 1,
		1ull << 62, 1ull << 63, ~0ull - 4096, ~0ull - 1, ~0ull,
	};

	switch (rnd(f) % 4) {
	case 0:
		return edge[rnd(f) % ARRAY_SIZE(edge)];
	case 1:
		return rnd(f) % 256;
	case 2:
		return rnd(f) % 65536;
	default:
		return rnd(f);
	}
}

static __u32 rnd_u32(struct fuzz *f)
{
	return (__u32)rnd_u64(f);
}

static __u32 pick_bo(struct fuzz *f)
{
	if (one_in(f, 8))
		return rnd_u32(f);
	return f->bo[rnd(f) % NR_BOS];
}

static __u32 pick_queue(struct fuzz *f)
{
	if (one_in(f, 10))
		return rnd_u32(f);
	return f->queue[rnd(f) % NR_QUEUES];
}

static __u32 pick_syncobj(struct fuzz *f)
{
	if (one_in(f, 8))
		return rnd_u32(f);
	return f->syncobj[rnd(f) % NR_SYNCOBJS];
}

/* Mostly 32 or 64, a multiple of 32 up to 128, sometimes anything. */
static __u32 pick_k(struct fuzz *f)
{
	if (one_in(f, 10))
		return rnd_u32(f);
	return 32 * (1 + rnd(f) % 4);
}

static __u32 pick_dim(struct fuzz *f)
{
	if (one_in(f, 12))
		return rnd_u32(f);
	return 1 + rnd(f) % 48;
}

static __u64 pick_offset(struct fuzz *f)
{
	if (one_in(f, 6))
		return rnd_u64(f);
	return one_in(f, 2) ? 0 : (rnd(f) % 64) * 32;
}

static __u64 pick_stride(struct fuzz *f)
{
	if (one_in(f, 5))
		return rnd_u64(f);
	return 0;
}

static void fill_mx(struct fuzz *f, struct drm_mxaccel_mx_operand *mx)
{
	mx->data_handle = pick_bo(f);
	mx->scale_handle = one_in(f, 2) ? mx->data_handle : pick_bo(f);
	mx->data_offset = pick_offset(f);
	mx->data_stride = pick_stride(f);
	mx->scale_offset = pick_offset(f);
	mx->scale_stride = pick_stride(f);
	mx->elem = one_in(f, 10) ? rnd_u32(f) : 1 + rnd(f) % 5;
	mx->scale_layout = one_in(f, 10) ? rnd_u32(f) : rnd(f) % 2;
}

/* Anything goes, with plausible values more often than not. */
static void fill_op_loose(struct fuzz *f, struct drm_mxaccel_op *op)
{
	op->kind = one_in(f, 10) ? rnd_u32(f) : 1 + rnd(f) % 2;
	op->m = pick_dim(f);
	op->k = pick_k(f);
	fill_mx(f, &op->a);
	op->c.handle = pick_bo(f);
	op->c.dtype = one_in(f, 10) ? rnd_u32(f) : rnd(f) % 2;
	op->c.offset = pick_offset(f);
	op->c.stride = pick_stride(f);
	if (op->kind == DRM_MXACCEL_OP_QUANTIZE && !one_in(f, 8)) {
		op->scale_mode = one_in(f, 10) ? rnd_u32(f) : rnd(f) % 4;
	} else {
		op->n = pick_dim(f);
		op->flags = one_in(f, 10) ? rnd_u32(f) : rnd(f) % 2;
		fill_mx(f, &op->b);
	}
	if (one_in(f, 30))
		op->reserved[rnd(f) % 2] = rnd_u64(f);
}

/*
 * An op that is valid if the buffer objects are still the ones the fuzzer
 * made (at least 4 KiB each): small dimensions, every operand in a buffer
 * object of its own, packed or slightly padded rows.
 */
static void fill_op_valid(struct fuzz *f, struct drm_mxaccel_op *op)
{
	unsigned int bo[5], i, j;
	__u32 elem;

	for (i = 0; i < 5; i++) {
		do {
			bo[i] = rnd(f) % NR_BOS;
			for (j = 0; j < i && bo[j] != bo[i]; j++)
				;
		} while (j < i);
	}
	op->kind = 1 + rnd(f) % 2;
	op->m = 1 + rnd(f) % 16;
	op->k = 32 * (1 + rnd(f) % 2);
	elem = 1 + rnd(f) % 5;
	op->a.data_handle = f->bo[bo[0]];
	op->a.scale_handle = f->bo[bo[1]];
	op->a.elem = elem;
	op->a.scale_layout = rnd(f) % 2;
	op->a.data_stride = one_in(f, 4) ? op->k + 8 : 0;
	op->c.handle = f->bo[bo[4]];
	op->c.dtype = rnd(f) % 2;
	if (op->kind == DRM_MXACCEL_OP_QUANTIZE) {
		op->scale_mode = rnd(f) % 4;
		return;
	}
	op->n = 1 + rnd(f) % 16;
	op->flags = rnd(f) % 2;
	op->b.data_handle = f->bo[bo[2]];
	op->b.scale_handle = f->bo[bo[3]];
	op->b.elem = 1 + rnd(f) % 5;
	op->b.scale_layout = rnd(f) % 2;
	op->c.stride = one_in(f, 4) ? 4 * op->n + 4 : 0;
}

static void fill_op(struct fuzz *f, struct drm_mxaccel_op *op)
{
	__u8 *p = (__u8 *)op;
	size_t i;

	memset(op, 0, sizeof(*op));
	if (one_in(f, 20)) {
		for (i = 0; i < sizeof(*op); i++)
			p[i] = rnd(f);
		return;
	}
	if (one_in(f, 4)) {
		fill_op_loose(f, op);
		return;
	}
	fill_op_valid(f, op);
	/* Then, now and then, one field goes wrong. */
	if (one_in(f, 3)) {
		i = rnd(f) % (sizeof(*op) / 4);
		if (i % 2 || one_in(f, 2))
			mxt_put_u32(p + 4 * i, rnd_u32(f));
		else
			memcpy(p + 4 * i, &(__u64){ rnd_u64(f) }, 8);
	}
}

/* An argument buffer, big enough for any size an ioctl number can say. */
union fuzz_arg {
	struct drm_mxaccel_get_param get_param;
	struct drm_mxaccel_bo_create bo_create;
	struct drm_mxaccel_bo_info bo_info;
	struct drm_mxaccel_bo_wait bo_wait;
	struct drm_mxaccel_queue_create queue_create;
	struct drm_mxaccel_queue_destroy queue_destroy;
	struct drm_mxaccel_submit submit;
	struct drm_mxaccel_job_wait job_wait;
	__u8 bytes[1 << 14];	/* _IOC_SIZE is 14 bits */
};

static struct drm_mxaccel_op fuzz_ops[MAX_FUZZ_OPS + 1];
static __u8 fuzz_op_bytes[(MAX_FUZZ_OPS + 1) * 512];
static struct drm_mxaccel_sync fuzz_syncs[MAX_FUZZ_SYNCS + 1];

/* A deadline that never waits long: polls, the past, or a few ms ahead. */
static __s64 pick_deadline(struct fuzz *f)
{
	switch (rnd(f) % 4) {
	case 0:
		return 0;
	case 1:
		return -(__s64)(rnd(f) >> 1);
	case 2:
		return mxt_now_ns() - (__s64)(rnd(f) % MXT_NSEC_PER_SEC);
	default:
		return mxt_now_ns() + (__s64)(rnd(f) % (5 * MXT_NSEC_PER_MSEC));
	}
}

static void fill_submit(struct fuzz *f, struct drm_mxaccel_submit *s)
{
	unsigned int i, n;

	s->queue_id = pick_queue(f);
	s->flags = one_in(f, 20) ? rnd_u32(f) : 0;
	n = one_in(f, 4) ? MAX_FUZZ_OPS : 2;
	s->op_count = one_in(f, 10) ? rnd_u32(f) : 1 + rnd(f) % n;
	s->op_size = sizeof(struct drm_mxaccel_op);
	for (i = 0; i < MAX_FUZZ_OPS; i++)
		fill_op(f, &fuzz_ops[i]);
	s->ops = (uintptr_t)fuzz_ops;
	if (one_in(f, 10)) {
		/* A grown op: zero tail, or not. */
		s->op_size = sizeof(struct drm_mxaccel_op) + rnd(f) % 256;
		memset(fuzz_op_bytes, 0, sizeof(fuzz_op_bytes));
		for (i = 0; i < MAX_FUZZ_OPS; i++)
			memcpy(fuzz_op_bytes + i * s->op_size, &fuzz_ops[i],
			       sizeof(fuzz_ops[i]));
		if (one_in(f, 2))
			fuzz_op_bytes[rnd(f) % sizeof(fuzz_op_bytes)] = rnd(f);
		s->ops = (uintptr_t)fuzz_op_bytes;
	} else if (one_in(f, 20)) {
		s->op_size = rnd_u32(f);
	}
	if (one_in(f, 30))
		s->ops = rnd_u64(f);
	if (s->op_count > MAX_FUZZ_OPS && s->op_size <= 512 &&
	    s->ops == (uintptr_t)fuzz_ops)
		s->op_count = MAX_FUZZ_OPS;	/* stay in our buffer */

	if (one_in(f, 3)) {
		n = one_in(f, 10) ? rnd_u32(f) : rnd(f) % (MAX_FUZZ_SYNCS + 1);
		for (i = 0; i < MAX_FUZZ_SYNCS; i++) {
			unsigned int q = rnd(f) % NR_QUEUES;

			memset(&fuzz_syncs[i], 0, sizeof(fuzz_syncs[i]));
			if (one_in(f, 2) && f->last_seqno[q]) {
				/* A queue's timeline, at a point it reached. */
				fuzz_syncs[i].handle = f->syncobj[q];
				fuzz_syncs[i].point = f->last_seqno[q] -
						      rnd(f) % 2;
			} else if (one_in(f, 2)) {
				fuzz_syncs[i].handle = f->syncobj[SIGNALLED];
			} else {
				fuzz_syncs[i].handle = pick_syncobj(f);
				fuzz_syncs[i].point = one_in(f, 3) ?
						      rnd_u64(f) : 0;
			}
			if (one_in(f, 30))
				fuzz_syncs[i].pad = rnd_u32(f);
		}
		s->in_syncs = one_in(f, 30) ? rnd_u64(f) :
					      (uintptr_t)fuzz_syncs;
		s->in_sync_count = n > MAX_FUZZ_SYNCS && n <= 64 ?
				   MAX_FUZZ_SYNCS : n;
		s->sync_size = one_in(f, 10) ? rnd_u32(f) % 64 :
					       sizeof(struct drm_mxaccel_sync);
		if (s->sync_size > sizeof(struct drm_mxaccel_sync) &&
		    s->in_sync_count > 1)
			s->in_sync_count = 1;
	}
	if (one_in(f, 4)) {
		s->out_sync.handle = pick_syncobj(f);
		s->out_sync.point = one_in(f, 2) ? 0 : rnd(f) % 1000;
		if (one_in(f, 30))
			s->out_sync.pad = rnd_u32(f);
	}
	if (one_in(f, 30))
		s->reserved = rnd_u64(f);
	/* Waiting in SUBMIT (briefly), never inline, unknown bits. */
	if (one_in(f, 8))
		s->flags = rnd(f) % 4;
	else if (one_in(f, 50))
		s->flags = rnd_u32(f);
	if (s->flags & DRM_MXACCEL_SUBMIT_WAIT)
		s->wait_timeout_ns = pick_deadline(f);
	else if (one_in(f, 50))
		s->wait_timeout_ns = rnd_u64(f);
	s->status = (__s32)rnd_u32(f);
	s->out_flags = rnd_u32(f);
}

/* Fill the argument of driver ioctl nr, mostly sensibly. */
static void fill_arg(struct fuzz *f, unsigned int nr, union fuzz_arg *a,
		     size_t size)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	if (one_in(f, 10)) {
		for (i = 0; i < size; i++)
			a->bytes[i] = rnd(f);
		return;
	}
	switch (nr) {
	case DRM_MXACCEL_GET_PARAM:
		a->get_param.param = one_in(f, 4) ? rnd_u32(f) : rnd(f) % 12;
		a->get_param.pad = one_in(f, 20) ? rnd_u32(f) : 0;
		break;
	case DRM_MXACCEL_BO_CREATE:
		a->bo_create.size = one_in(f, 5) ? rnd_u64(f) :
				    1 + rnd(f) % 65536;
		a->bo_create.flags = one_in(f, 20) ? rnd_u32(f) : 0;
		break;
	case DRM_MXACCEL_BO_INFO:
		a->bo_info.handle = pick_bo(f);
		a->bo_info.pad = one_in(f, 20) ? rnd_u32(f) : 0;
		break;
	case DRM_MXACCEL_BO_WAIT:
		a->bo_wait.handle = pick_bo(f);
		a->bo_wait.pad = one_in(f, 20) ? rnd_u32(f) : 0;
		a->bo_wait.timeout_ns = pick_deadline(f);
		break;
	case DRM_MXACCEL_QUEUE_CREATE:
		a->queue_create.flags = one_in(f, 10) ? rnd_u32(f) : 0;
		a->queue_create.priority = one_in(f, 10) ? rnd_u32(f) :
					   rnd(f) % 3;
		break;
	case DRM_MXACCEL_QUEUE_DESTROY:
		/* Rarely: most destroys would hit no queue of ours. */
		a->queue_destroy.queue_id = one_in(f, 4) ? pick_queue(f) :
					    rnd_u32(f) | 0x10000;
		a->queue_destroy.pad = one_in(f, 10) ? rnd_u32(f) : 0;
		break;
	case DRM_MXACCEL_SUBMIT:
		fill_submit(f, &a->submit);
		break;
	case DRM_MXACCEL_JOB_WAIT: {
		unsigned int q = rnd(f) % NR_QUEUES;

		a->job_wait.queue_id = one_in(f, 10) ? rnd_u32(f) :
				       f->queue[q];
		a->job_wait.seqno = one_in(f, 4) ? rnd_u64(f) :
				    f->last_seqno[q] - rnd(f) % 3;
		a->job_wait.timeout_ns = pick_deadline(f);
		a->job_wait.flags = one_in(f, 20) ? rnd_u32(f) : 0;
		a->job_wait.pad = one_in(f, 20) ? rnd_u32(f) : 0;
		break;
	}
	default:
		for (i = 0; i < size; i++)
			a->bytes[i] = rnd(f);
		break;
	}
}

/* The ioctl numbers the driver defines, by nr. */
static const unsigned long driver_ioctls[] = {
	DRM_IOCTL_MXACCEL_GET_PARAM, DRM_IOCTL_MXACCEL_BO_CREATE,
	DRM_IOCTL_MXACCEL_BO_INFO, DRM_IOCTL_MXACCEL_BO_WAIT,
	DRM_IOCTL_MXACCEL_QUEUE_CREATE, DRM_IOCTL_MXACCEL_QUEUE_DESTROY,
	DRM_IOCTL_MXACCEL_SUBMIT, DRM_IOCTL_MXACCEL_JOB_WAIT,
};

/* Errors the uapi and the DRM core can give for a bad argument. */
static bool errno_expected(int err)
{
	switch (err) {
	case EINVAL:
	case ENOENT:
	case E2BIG:
	case EOVERFLOW:
	case EFAULT:
	case EBUSY:
	case ETIMEDOUT:
	case ENOMEM:
	case ENOTTY:
	case EACCES:
	case ENODATA:	/* JOB_WAIT of a seqno past the status window */
	case EPERM:	/* high priority without CAP_SYS_NICE */
		return true;
	}
	return false;
}

/* Keep the state the fuzzer draws handles from in step with the kernel. */
static void track(struct fuzz *f, unsigned int nr, union fuzz_arg *a)
{
	unsigned int i;

	switch (nr) {
	case DRM_MXACCEL_BO_CREATE:
		i = rnd(f) % NR_BOS;
		mxt_gem_close(f->fd, f->bo[i]);
		f->bo[i] = a->bo_create.handle;
		f->bo_size[i] = a->bo_create.size;
		break;
	case DRM_MXACCEL_QUEUE_CREATE:
		i = rnd(f) % NR_QUEUES;
		mxt_queue_destroy(f->fd, f->queue[i]);
		f->queue[i] = a->queue_create.queue_id;
		f->syncobj[i] = a->queue_create.syncobj;
		f->last_seqno[i] = 0;
		if (f->queue[i] > f->max_queue_id)
			f->max_queue_id = f->queue[i];
		break;
	case DRM_MXACCEL_QUEUE_DESTROY:
		/* Keep the pool full: a destroyed queue is replaced. */
		for (i = 0; i < NR_QUEUES; i++) {
			if (f->queue[i] != a->queue_destroy.queue_id)
				continue;
			f->queue[i] = 0;
			f->last_seqno[i] = 0;
			mxt_queue_create(f->fd, &f->queue[i], &f->syncobj[i]);
			if (f->queue[i] > f->max_queue_id)
				f->max_queue_id = f->queue[i];
		}
		break;
	case DRM_MXACCEL_SUBMIT:
		for (i = 0; i < NR_QUEUES; i++)
			if (f->queue[i] == a->submit.queue_id)
				f->last_seqno[i] = a->submit.seqno;
		break;
	}
}

static void fuzz_one(struct fuzz *f)
{
	static union fuzz_arg arg;
	unsigned long request;
	unsigned int nr;
	size_t size;
	int ret;

	if (one_in(f, 20)) {
		/* Anywhere in the driver range, or just past it. */
		nr = rnd(f) % 0x60;
		size = one_in(f, 2) ? rnd(f) % 256 : sizeof(arg.submit);
		request = _IOC(rnd(f) % 4, DRM_IOCTL_BASE,
			       DRM_COMMAND_BASE + nr, size);
	} else {
		nr = rnd(f) % ARRAY_SIZE(driver_ioctls);
		request = driver_ioctls[nr];
		size = _IOC_SIZE(request);
		if (one_in(f, 20)) {
			/* Older or newer struct sizes, other directions. */
			size = rnd(f) % 128;
			request = _IOC(rnd(f) % 4, DRM_IOCTL_BASE,
				       DRM_COMMAND_BASE + nr, size);
		}
	}
	fill_arg(f, nr, &arg, size);
	/*
	 * Large buffer objects are fine to create (their pages come on use)
	 * but not to leave lying around: a job using one would pin all of
	 * it.  The fuzzer cannot always see the handle of what it created,
	 * so it only asks for sizes that fail or that are small.
	 */
	if (nr == DRM_MXACCEL_BO_CREATE && arg.bo_create.size > LIVE_BO_LIMIT)
		arg.bo_create.size |= 1ull << 40;
	ret = mxt_ioctl(f->fd, request, &arg);
	if (!ret) {
		f->ok++;
		f->submitted += request == DRM_IOCTL_MXACCEL_SUBMIT;
		if (request == driver_ioctls[nr % ARRAY_SIZE(driver_ioctls)])
			track(f, nr, &arg);
		return;
	}
	f->failed++;
	if (!errno_expected(-ret)) {
		f->bad_errno++;
		f->last_bad_errno = ret;
		f->last_bad_nr = nr;
	}
}

static void fuzz_init(struct __test_metadata *_metadata, struct fuzz *f)
{
	unsigned int i;

	for (i = 0; i < NR_BOS; i++) {
		f->bo_size[i] = 4096 << (i % 5);
		ASSERT_EQ(0, mxt_bo_create(f->fd, f->bo_size[i], &f->bo[i],
					   NULL));
	}
	for (i = 0; i < NR_QUEUES; i++) {
		ASSERT_EQ(0, mxt_queue_create(f->fd, &f->queue[i],
					      &f->syncobj[i]));
		if (f->queue[i] > f->max_queue_id)
			f->max_queue_id = f->queue[i];
	}
	ASSERT_EQ(0, mxt_syncobj_create(f->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
					&f->syncobj[SIGNALLED]));
	ASSERT_EQ(0, mxt_syncobj_create(f->fd, 0, &f->syncobj[SIGNALLED + 1]));
}

static __u64 env_u64(const char *name, __u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

FIXTURE(fuzzer) {
	int fd;
};

FIXTURE_SETUP(fuzzer)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(fuzzer)
{
	if (self->fd >= 0)
		close(self->fd);
}

static void check_device_works(struct __test_metadata *_metadata, int fd)
{
	struct drm_mxaccel_op op;
	struct mxt_bo bo;
	__u32 q;

	ASSERT_EQ(0, mxt_queue_create(fd, &q, NULL));
	ASSERT_EQ(0, mxt_bo_new(fd, MXT_ONES_BO_SIZE, &bo));
	mxt_ones_gemm(&op, &bo);
	EXPECT_EQ(0, mxt_run(fd, q, &op, 1));
	EXPECT_EQ(0, mxt_ones_wrong(&bo));
	mxt_bo_free(fd, &bo);
	EXPECT_EQ(0, mxt_queue_destroy(fd, q));
}

static void run_fuzz(struct __test_metadata *_metadata, int fd, __u64 seed,
		     __u64 iters)
{
	static struct fuzz f;
	unsigned int i;
	__u64 n;

	memset(&f, 0, sizeof(f));
	f.fd = fd;
	/* splitmix64: any seed, even 0, gives a good non-zero state */
	f.rng = seed + 0x9e3779b97f4a7c15ull;
	f.rng = (f.rng ^ (f.rng >> 30)) * 0xbf58476d1ce4e5b9ull;
	f.rng = (f.rng ^ (f.rng >> 27)) * 0x94d049bb133111ebull;
	f.rng ^= f.rng >> 31;
	if (!f.rng)
		f.rng = 1;
	fuzz_init(_metadata, &f);
	for (n = 0; n < iters; n++)
		fuzz_one(&f);
	TH_LOG("seed 0x%llx, %llu ioctls: %u succeeded (%u jobs), %u failed",
	       (unsigned long long)seed, (unsigned long long)iters, f.ok,
	       f.submitted, f.failed);
	EXPECT_EQ(0, f.bad_errno)
		TH_LOG("%u unexpected errnos, last %d from nr 0x%x",
		       f.bad_errno, f.last_bad_errno, f.last_bad_nr);
	/* Some of it got through: the fuzzer reached the engine. */
	EXPECT_LT(0, f.submitted);
	/* Let every queue drain. */
	for (i = 0; i < NR_QUEUES; i++)
		if (f.last_seqno[i])
			mxt_job_wait(fd, f.queue[i], f.last_seqno[i],
				     mxt_deadline_ms(60000), NULL);
	/*
	 * Destroy every queue, including those created through odd ioctl
	 * sizes whose ids the fuzzer never saw: ids are handed out in
	 * increasing order, so they lie below the last id it saw, or a few
	 * past it.
	 */
	for (i = 1; i <= f.max_queue_id + 2 * NR_QUEUES + 64; i++)
		mxt_queue_destroy(fd, i);
}

TEST_F_TIMEOUT(fuzzer, ioctls, 3600)
{
	__u64 seed = env_u64("MXACCEL_FUZZ_SEED", 0x6d786163ull);
	__u64 iters = env_u64("MXACCEL_FUZZ_ITERS", 20000);
	int fd2;

	run_fuzz(_metadata, self->fd, seed, iters);
	check_device_works(_metadata, self->fd);
	/* A fresh file works too, and closing the fuzzed one is clean. */
	fd2 = mxt_open();
	ASSERT_LE(0, fd2);
	check_device_works(_metadata, fd2);
	close(self->fd);
	self->fd = -1;
	check_device_works(_metadata, fd2);
	close(fd2);
}

/* Two processes fuzzing at once, each its own file; one is killed. */
TEST_F_TIMEOUT(fuzzer, concurrent_and_killed, 3600)
{
	__u64 seed = env_u64("MXACCEL_FUZZ_SEED", 0x6d786163ull) + 1;
	__u64 iters = env_u64("MXACCEL_FUZZ_ITERS", 20000) / 4;
	int status;
	pid_t pid[2];
	int i;

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int fd = mxt_open();

			if (fd < 0)
				_exit(1);
			run_fuzz(_metadata, fd, seed + i, i ? ~0ull : iters);
			_exit(_metadata->passed ? 0 : 2);
		}
	}
	/* The first finishes its run; the second runs until killed. */
	ASSERT_EQ(pid[0], waitpid(pid[0], &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, kill(pid[1], SIGKILL));
	ASSERT_EQ(pid[1], waitpid(pid[1], &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	check_device_works(_metadata, self->fd);
}

TEST_HARNESS_MAIN
