// SPDX-License-Identifier: MIT
/*
 * accel_latency: what a tiny job costs on the mxaccel device, against a
 * null DRM ioctl round trip measured in the same run (design section 8:
 * submit+wait of a tiny job within 3x a null ioctl).
 *
 *   null ioctl     DRM_IOCTL_MXACCEL_GET_PARAM (the driver's cheapest
 *                  ioctl) and DRM_IOCTL_VERSION (DRM core), same fd
 *   raw            SUBMIT of one 1x1x32 GEMM, then JOB_WAIT or a wait on
 *                  the queue's timeline syncobj; the SUBMIT's own return
 *                  time separately; SUBMIT with DRM_MXACCEL_SUBMIT_WAIT
 *                  (submit and wait in one ioctl, what the library does),
 *                  with the share of jobs the driver ran inline, and with
 *                  DRM_MXACCEL_SUBMIT_NO_INLINE (through the ring); the
 *                  same for a 32x32x32 GEMM (the design's target job)
 *   library        mxa_gemm() of 1x1x32 on accel:0 (buffers allocated
 *                  once), and mxa_gemm_async() + mxa_fence_wait()
 *   batch          MAX_OPS tiny GEMMs as one SUBMIT (one op array), raw
 *                  and through mxa_gemm_batch(): cost per GEMM
 *   cpu            mxa_gemm() of 1x1x32 and 32x32x32 on the cpu,
 *                  EMULATED: the arithmetic alone, the same exact code as
 *                  the software engine's, for scale
 *
 * Medians (and 10th / 90th percentiles) of many runs, in microseconds,
 * and each median as a multiple of the GET_PARAM median.  Under qemu's TCG
 * every number is inflated (an ioctl is a full emulated syscall); the
 * ratios are what carries over.  Usage: accel_latency [--quick | --trace]
 * [--device accel:N] (default accel:0; accel:1 is the PCI device in the
 * test VMs).  --trace only runs ten one-ioctl submit+waits of each job
 * size, for tracing them (tests/bench/accel_trace.sh).  Exits 4 without
 * an accel device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "e2e.h"

static unsigned int iters_null = 20000, iters_job = 2000, iters_batch = 40;
/* engine32_us: the driver's cost of a 32x32x32 job, less the engine's. */
static double null_us, job_us, lib_us, wait32_us, cpu32_us, engine32_us = -1;

struct bo {
	uint32_t handle;
	void *map;
	size_t size;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Print one row from n samples (microseconds); returns the median. */
static double row(const char *what, double *us, unsigned int n, double per)
{
	double med, p10, p90;

	qsort(us, n, sizeof(*us), cmp_double);
	med = us[n / 2] / per;
	p10 = us[n / 10] / per;
	p90 = us[n * 9 / 10] / per;
	printf("%-48s %9.2f %9.2f %9.2f", what, med, p10, p90);
	if (null_us > 0)
		printf(" %8.1fx", med / null_us);
	putchar('\n');
	fflush(stdout);
	return med;
}

static double us_since(int64_t t0)
{
	return (double)(e2e_now_ns() - t0) * 1e-3;
}

static void die(const char *what, int err)
{
	printf("accel_latency: %s: %s\n", what, mxa_strerror(err));
	exit(1);
}

static void bo_new(int fd, size_t size, struct bo *bo)
{
	struct drm_mxaccel_bo_create c = { .size = size };
	int ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, &c);

	if (ret)
		die("BO_CREATE", ret);
	bo->handle = c.handle;
	bo->size = size;
	bo->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)c.mmap_offset);
	if (bo->map == MAP_FAILED)
		die("mmap", -errno);
}

/* A 1x1x32 e4m3 GEMM writing C at byte offset c_off. */
static void tiny_op(struct drm_mxaccel_op *op, const struct bo *a,
		    const struct bo *c, uint64_t c_off)
{
	memset(op, 0, sizeof(*op));
	op->kind = DRM_MXACCEL_OP_GEMM;
	op->m = 1;
	op->n = 1;
	op->k = 32;
	op->a = (struct drm_mxaccel_mx_operand){
		.data_handle = a->handle, .scale_handle = a->handle,
		.scale_offset = 32, .elem = DRM_MXACCEL_ELEM_E4M3,
	};
	op->b = op->a;
	op->c = (struct drm_mxaccel_dense_operand){
		.handle = c->handle, .dtype = DRM_MXACCEL_DTYPE_F32,
		.offset = c_off,
	};
}

/*
 * An e4m3 GEMM m x n x k (n <= m): A and B are the same rows of ones in
 * bo a (codes from 0, scales from 8192), C f32 in bo c.
 */
static void gemm_op(struct drm_mxaccel_op *op, const struct bo *a,
		    const struct bo *c, uint32_t m, uint32_t n, uint32_t k)
{
	memset(op, 0, sizeof(*op));
	op->kind = DRM_MXACCEL_OP_GEMM;
	op->m = m;
	op->n = n;
	op->k = k;
	op->a = (struct drm_mxaccel_mx_operand){
		.data_handle = a->handle, .scale_handle = a->handle,
		.scale_offset = 8192, .elem = DRM_MXACCEL_ELEM_E4M3,
	};
	op->b = op->a;
	op->c = (struct drm_mxaccel_dense_operand){
		.handle = c->handle, .dtype = DRM_MXACCEL_DTYPE_F32,
	};
}

/* SUBMIT with DRM_MXACCEL_SUBMIT_WAIT: the job's status, or an error. */
static int submit_wait(int fd, uint32_t queue, struct drm_mxaccel_op *ops,
		       uint32_t flags, bool *inlined)
{
	struct drm_mxaccel_submit s = {
		.queue_id = queue, .ops = (uintptr_t)ops, .op_count = 1,
		.op_size = sizeof(*ops),
		.flags = DRM_MXACCEL_SUBMIT_WAIT | flags,
		.wait_timeout_ns = e2e_now_ns() + 10000000000ll,
	};
	int ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_SUBMIT, &s);

	if (ret)
		return ret;
	if (!(s.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE))
		return -ETIME;
	*inlined = s.out_flags & DRM_MXACCEL_SUBMIT_OUT_INLINE;
	return s.status;
}

/*
 * Engine time of this file so far: the sum of fdinfo's drm-engine-ring<N>
 * keys (ns), or -1 if the driver does not report them.
 */
static double engine_ns(int fd)
{
	char path[64], line[128];
	double sum = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ns;
		unsigned int ring;

		if (sscanf(line, "drm-engine-ring%u: %llu ns", &ring, &ns) == 2)
			sum = (sum < 0 ? 0 : sum) + (double)ns;
	}
	fclose(f);
	return sum;
}

/*
 * One-ioctl submit+wait of ops[0], timed; returns the median and, in
 * *engine_us, the engine's own time per job (fdinfo), or -1.
 */
static double bench_submit_wait(int fd, uint32_t queue,
				struct drm_mxaccel_op *ops, uint32_t flags,
				double *us, const char *what,
				double *engine_us)
{
	unsigned int i, inlined = 0;
	double e0, e1, med, mean = 0;
	char label[96];
	bool in;
	int ret;

	for (i = 0; i < 20; i++)
		if (submit_wait(fd, queue, ops, flags, &in))
			die("warm-up SUBMIT_WAIT", -EIO);
	e0 = engine_ns(fd);
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		ret = submit_wait(fd, queue, ops, flags, &in);
		us[i] = us_since(t0);
		if (ret)
			die(what, ret);
		inlined += in;
		mean += us[i] / iters_job;
	}
	e1 = engine_ns(fd);
	snprintf(label, sizeof(label), "%s (%u%% inline)", what,
		 100 * inlined / iters_job);
	med = row(label, us, iters_job, 1);
	/* fdinfo gives totals: compare means, not medians. */
	*engine_us = e0 < 0 || e1 < 0 ? -1 : (e1 - e0) * 1e-3 / iters_job;
	if (*engine_us >= 0) {
		printf("%-48s %9.2f %9s %9s %8.1fx\n", "  mean", mean, "", "",
		       mean / null_us);
		printf("%-48s %9.2f %9s %9s %8.1fx\n",
		       "  mean engine time (fdinfo)", *engine_us, "", "",
		       *engine_us / null_us);
		printf("%-48s %9.2f %9s %9s %8.1fx\n",
		       "  mean less engine time: the driver's cost",
		       mean - *engine_us, "", "", (mean - *engine_us) / null_us);
		*engine_us = mean - *engine_us;
	}
	return med;
}

static int submit(int fd, uint32_t queue, struct drm_mxaccel_op *ops,
		  unsigned int count, uint64_t *seqno)
{
	struct drm_mxaccel_submit s = {
		.queue_id = queue, .ops = (uintptr_t)ops, .op_count = count,
		.op_size = sizeof(*ops),
	};
	int ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_SUBMIT, &s);

	*seqno = s.seqno;
	return ret;
}

static int job_wait(int fd, uint32_t queue, uint64_t seqno)
{
	struct drm_mxaccel_job_wait w = {
		.queue_id = queue, .seqno = seqno,
		.timeout_ns = e2e_now_ns() + 10000000000ll,
	};
	int ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_JOB_WAIT, &w);

	return ret ? ret : w.status;
}

static void bench_raw(int fd, unsigned int max_ops)
{
	struct drm_mxaccel_get_param gp = {
		.param = DRM_MXACCEL_PARAM_UAPI_VERSION,
	};
	struct drm_mxaccel_queue_create qc = { 0 };
	unsigned int n = iters_job > iters_null ? iters_job : iters_null, i;
	double *us = calloc(n, sizeof(*us)), *sub = calloc(n, sizeof(*us));
	struct drm_mxaccel_op *ops = calloc(max_ops, sizeof(*ops));
	struct bo a, c, big;
	double eng;
	char name[32];
	uint64_t seq;
	int ret;

	if (!us || !sub || !ops)
		die("calloc", -ENOMEM);
	bo_new(fd, 4096, &a);
	bo_new(fd, 4096, &c);
	memset(a.map, 0x38, 32);		/* e4m3 1.0 */
	((uint8_t *)a.map)[32] = 127;		/* scale 2^0 */
	bo_new(fd, 16384, &big);
	memset(big.map, 0x38, 8192);
	memset((uint8_t *)big.map + 8192, 127, 8192);
	ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &qc);
	if (ret)
		die("QUEUE_CREATE", ret);

	/* Warm up, then the null ioctls. */
	for (i = 0; i < 1000; i++)
		e2e_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp);
	for (i = 0; i < iters_null; i++) {
		int64_t t0 = e2e_now_ns();

		e2e_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp);
		us[i] = us_since(t0);
	}
	null_us = 0;
	null_us = row("null ioctl: GET_PARAM", us, iters_null, 1);
	for (i = 0; i < iters_null; i++) {
		struct drm_version v = { .name = name,
					 .name_len = sizeof(name) };
		int64_t t0 = e2e_now_ns();

		e2e_ioctl(fd, DRM_IOCTL_VERSION, &v);
		us[i] = us_since(t0);
	}
	row("null ioctl: DRM_IOCTL_VERSION", us, iters_null, 1);

	/* One tiny GEMM: SUBMIT + JOB_WAIT. */
	tiny_op(&ops[0], &a, &c, 0);
	for (i = 0; i < 100; i++)
		if (submit(fd, qc.queue_id, ops, 1, &seq) ||
		    job_wait(fd, qc.queue_id, seq))
			die("warm-up job", -EIO);
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		ret = submit(fd, qc.queue_id, ops, 1, &seq);
		sub[i] = us_since(t0);
		if (!ret)
			ret = job_wait(fd, qc.queue_id, seq);
		us[i] = us_since(t0);
		if (ret)
			die("SUBMIT + JOB_WAIT", ret);
	}
	row("raw SUBMIT of 1 GEMM 1x1x32 (returns)", sub, iters_job, 1);
	job_us = row("raw SUBMIT + JOB_WAIT, 1 GEMM 1x1x32", us, iters_job, 1);

	/* The same, waiting on the timeline syncobj like the library. */
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		ret = submit(fd, qc.queue_id, ops, 1, &seq);
		if (!ret && drmSyncobjTimelineWait(fd, &qc.syncobj, &seq, 1,
						   e2e_now_ns() + 10000000000ll,
						   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
						   NULL))
			ret = -errno;
		us[i] = us_since(t0);
		if (ret)
			die("SUBMIT + syncobj wait", ret);
	}
	row("raw SUBMIT + syncobj wait, 1 GEMM 1x1x32", us, iters_job, 1);

	/* Submit and wait in one ioctl, inline where the driver can. */
	job_us = bench_submit_wait(fd, qc.queue_id, ops, 0, us,
				   "raw SUBMIT_WAIT, 1x1x32", &eng);
	bench_submit_wait(fd, qc.queue_id, ops, DRM_MXACCEL_SUBMIT_NO_INLINE,
			  us, "raw SUBMIT_WAIT NO_INLINE, 1x1x32", &eng);
	gemm_op(&ops[0], &big, &c, 32, 32, 32);
	wait32_us = bench_submit_wait(fd, qc.queue_id, ops, 0, us,
				      "raw SUBMIT_WAIT, 32x32x32", &engine32_us);
	bench_submit_wait(fd, qc.queue_id, ops, DRM_MXACCEL_SUBMIT_NO_INLINE,
			  us, "raw SUBMIT_WAIT NO_INLINE, 32x32x32", &eng);

	/* MAX_OPS tiny GEMMs in one SUBMIT: cost per GEMM. */
	for (i = 0; i < max_ops; i++)
		tiny_op(&ops[i], &a, &c, 64 + 4 * (uint64_t)i);
	for (i = 0; i < iters_batch; i++) {
		int64_t t0 = e2e_now_ns();

		ret = submit(fd, qc.queue_id, ops, max_ops, &seq);
		if (!ret)
			ret = job_wait(fd, qc.queue_id, seq);
		us[i] = us_since(t0);
		if (ret)
			die("batch SUBMIT + JOB_WAIT", ret);
	}
	row("raw batch: one SUBMIT of MAX_OPS GEMMs + wait", us, iters_batch,
	    1);
	row("raw batch: per GEMM (of one SUBMIT)", us, iters_batch, max_ops);
	free(us);
	free(sub);
	free(ops);
}

struct tiny {
	struct mxa_matrix a;
	struct mxa_dense c;
};

static void tiny_make(struct mxa_device *dev, struct tiny *t, size_t c_size)
{
	uint8_t in[33];
	int ret;

	memset(in, 0x38, 32);
	in[32] = 127;
	t->a = (struct mxa_matrix){
		.data = e2e_buffer(dev, in, sizeof(in)), .elem = MXA_ELEM_E4M3,
		.scale_offset = 32, .rows = 1, .cols = 32,
	};
	t->a.scale = t->a.data;
	t->c = (struct mxa_dense){
		.buf = e2e_buffer(dev, NULL, c_size), .dtype = MXA_DTYPE_F32,
		.rows = 1, .cols = 1,
	};
	if (!t->a.data || !t->c.buf)
		die("buffers", -ENOMEM);
	ret = mxa_gemm(dev, &t->a, &t->a, &t->c, 0, MXA_PREF_AUTO);
	if (ret)
		die("mxa_gemm", ret);
}

/* A 32x32 e4m3 matrix of ones and a 32x32 f32 C: the 32x32x32 GEMM. */
static void square_make(struct mxa_device *dev, struct tiny *t)
{
	uint8_t in[32 * 32 + 32];
	int ret;

	memset(in, 0x38, 32 * 32);
	memset(in + 32 * 32, 127, 32);
	t->a = (struct mxa_matrix){
		.data = e2e_buffer(dev, in, sizeof(in)), .elem = MXA_ELEM_E4M3,
		.scale_offset = 32 * 32, .rows = 32, .cols = 32,
	};
	t->a.scale = t->a.data;
	t->c = (struct mxa_dense){
		.buf = e2e_buffer(dev, NULL, 4 * 32 * 32),
		.dtype = MXA_DTYPE_F32, .rows = 32, .cols = 32,
	};
	if (!t->a.data || !t->c.buf)
		die("buffers", -ENOMEM);
	ret = mxa_gemm(dev, &t->a, &t->a, &t->c, 0, MXA_PREF_AUTO);
	if (ret)
		die("mxa_gemm 32x32x32", ret);
}

/* mxa_gemm() of t on dev, timed; returns the median. */
static double bench_gemm(struct mxa_device *dev, struct tiny *t,
			 enum mxa_pref pref, double *us, const char *what)
{
	unsigned int i;
	int ret;

	for (i = 0; i < 20; i++)
		mxa_gemm(dev, &t->a, &t->a, &t->c, 0, pref);
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		ret = mxa_gemm(dev, &t->a, &t->a, &t->c, 0, pref);
		us[i] = us_since(t0);
		if (ret)
			die(what, ret);
	}
	return row(what, us, iters_job, 1);
}

static void tiny_free(struct tiny *t)
{
	mxa_buffer_free(t->a.data);
	mxa_buffer_free(t->c.buf);
}

static void bench_library(struct mxa_device *dev, struct mxa_device *cpu,
			  unsigned int max_ops)
{
	double *us = calloc(iters_job, sizeof(*us));
	struct mxa_gemm_op *ops = calloc(max_ops, sizeof(*ops));
	struct mxa_dense *cs = calloc(max_ops, sizeof(*cs));
	struct tiny t, h;
	unsigned int i;
	int ret;

	if (!us || !ops || !cs)
		die("calloc", -ENOMEM);
	tiny_make(dev, &t, 4 * (size_t)max_ops);
	for (i = 0; i < 100; i++)
		mxa_gemm(dev, &t.a, &t.a, &t.c, 0, MXA_PREF_AUTO);
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		ret = mxa_gemm(dev, &t.a, &t.a, &t.c, 0, MXA_PREF_AUTO);
		us[i] = us_since(t0);
		if (ret)
			die("mxa_gemm", ret);
	}
	lib_us = row("mxa_gemm 1x1x32 on the device", us, iters_job, 1);
	for (i = 0; i < iters_job; i++) {
		struct mxa_fence *f;
		int64_t t0 = e2e_now_ns();

		ret = mxa_gemm_async(dev, &t.a, &t.a, &t.c, 0, MXA_PREF_AUTO,
				     &f);
		if (!ret)
			ret = mxa_fence_wait(f, -1);
		mxa_fence_free(f);
		us[i] = us_since(t0);
		if (ret)
			die("mxa_gemm_async", ret);
	}
	row("mxa_gemm_async + mxa_fence_wait, 1x1x32", us, iters_job, 1);

	for (i = 0; i < max_ops; i++) {
		cs[i] = t.c;
		cs[i].offset = 4 * (size_t)i;
		ops[i] = (struct mxa_gemm_op){ .a = &t.a, .b = &t.a,
					       .c = &cs[i] };
	}
	for (i = 0; i < iters_batch; i++) {
		uint64_t s0 = e2e_submits();
		int64_t t0 = e2e_now_ns();

		ret = mxa_gemm_batch(dev, ops, max_ops, MXA_PREF_AUTO, NULL);
		us[i] = us_since(t0);
		if (ret)
			die("mxa_gemm_batch", ret);
		if (e2e_submits() - s0 != 1)
			die("mxa_gemm_batch took more than one SUBMIT", -EIO);
	}
	row("mxa_gemm_batch of MAX_OPS: per GEMM", us, iters_batch, max_ops);

	tiny_make(cpu, &h, 4);
	for (i = 0; i < iters_job; i++) {
		int64_t t0 = e2e_now_ns();

		mxa_gemm(cpu, &h.a, &h.a, &h.c, 0, MXA_PREF_EMULATED);
		us[i] = us_since(t0);
	}
	row("mxa_gemm 1x1x32 on cpu, EMULATED (no ioctl)", us, iters_job, 1);
	tiny_free(&h);
	tiny_free(&t);

	square_make(dev, &t);
	bench_gemm(dev, &t, MXA_PREF_AUTO, us, "mxa_gemm 32x32x32 on the device");
	tiny_free(&t);
	square_make(cpu, &h);
	cpu32_us = bench_gemm(cpu, &h, MXA_PREF_EMULATED, us,
			      "mxa_gemm 32x32x32 on cpu, EMULATED (no ioctl)");
	tiny_free(&h);
	free(us);
	free(ops);
	free(cs);
}

/* Ten SUBMIT_WAITs of 1x1x32 and of 32x32x32, for a tracer to watch. */
static int trace_jobs(void)
{
	struct drm_mxaccel_queue_create qc = { 0 };
	struct drm_mxaccel_op op;
	struct bo big, c;
	unsigned int i;
	bool in;
	int fd = e2e_node_open();

	if (fd < 0)
		return E2E_SKIP;
	bo_new(fd, 16384, &big);
	bo_new(fd, 4096, &c);
	memset(big.map, 0x38, 8192);
	memset((uint8_t *)big.map + 8192, 127, 8192);
	if (e2e_ioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &qc))
		die("QUEUE_CREATE", -EIO);
	gemm_op(&op, &big, &c, 1, 1, 32);
	for (i = 0; i < 10; i++)
		if (submit_wait(fd, qc.queue_id, &op, 0, &in))
			die("SUBMIT_WAIT 1x1x32", -EIO);
	gemm_op(&op, &big, &c, 32, 32, 32);
	for (i = 0; i < 10; i++)
		if (submit_wait(fd, qc.queue_id, &op, 0, &in))
			die("SUBMIT_WAIT 32x32x32", -EIO);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct drm_mxaccel_get_param gp = {
		.param = DRM_MXACCEL_PARAM_MAX_OPS,
	};
	struct mxa_device *dev, *cpu;
	struct mxa_device_info info;
	struct utsname u;
	int fd;

	const char *name = "accel:0";
	unsigned int nth = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trace")) {
			return trace_jobs();
		} else if (!strcmp(argv[i], "--quick")) {
			iters_null = 2000;
			iters_job = 200;
			iters_batch = 10;
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc &&
			   sscanf(argv[i + 1], "accel:%u", &nth) == 1) {
			name = argv[++i];
		} else {
			printf("usage: accel_latency [--quick | --trace] [--device accel:N]\n");
			return 2;
		}
	}
	dev = e2e_open(name);
	cpu = e2e_open("cpu");
	fd = e2e_node_open_nth(nth);
	if (fd < 0 || e2e_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp))
		die("the mxaccel node", -ENODEV);
	uname(&u);
	mxa_device_info(dev, &info);
	printf("# accel_latency: kernel %s, %ld CPUs, %s\n", u.release,
	       sysconf(_SC_NPROCESSORS_ONLN), info.description);
	printf("# %u null ioctls, %u jobs, %u batches of MAX_OPS = %u GEMMs\n",
	       iters_null, iters_job, iters_batch, (unsigned int)gp.value);
	printf("%-48s %9s %9s %9s %9s\n", "microseconds", "median", "p10",
	       "p90", "x null");
	bench_raw(fd, (unsigned int)gp.value);
	bench_library(dev, cpu, (unsigned int)gp.value);
	printf("# target (design section 8): submit+wait of a 32x32x32 GEMM <= 3x a null ioctl\n");
	printf("# measured: one-ioctl submit+wait 1x1x32 %.1fx, 32x32x32 %.1fx (through the library 1x1x32 %.1fx): %s\n",
	       job_us / null_us, wait32_us / null_us, lib_us / null_us,
	       wait32_us <= 3 * null_us ? "met" : "not met");
	printf("# 32x32x32: the arithmetic alone is %.1fx a null ioctl in the library (cpu EMULATED);\n",
	       cpu32_us / null_us);
	printf("# submit+wait less the engine's time (means): %.1fx a null ioctl (the driver's own cost)\n",
	       engine32_us / null_us);
	close(fd);
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return 0;
}
