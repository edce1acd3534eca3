// SPDX-License-Identifier: MIT
/*
 * Batches, fences and dma-bufs on an accel device ($MXACCEL_E2E_DEVICE,
 * accel:0 by default), through the library (exact kernels: AUTO on a
 * conformance device, EMULATED on hardware):
 *
 *   - mxa_gemm_batch() of 1000 tiny random GEMMs (every element pair,
 *     plain and swizzled scales, fp32 and bf16 C, half accumulating, all
 *     packed at offsets into five shared buffers) equals 1000 single
 *     EMULATED GEMMs on the cpu byte for byte, and travels in
 *     ceil(1000 / MAX_OPS) SUBMITs; a batch of MAX_OPS GEMMs is exactly
 *     one SUBMIT carrying one op array (SUBMITs are counted by the ioctl()
 *     wrapper of tests/e2e/common);
 *   - batch ops run in order, across SUBMIT boundaries: a chain of
 *     accumulating GEMMs into one C equals the same chain on the cpu;
 *   - async: a batch and several GEMMs in flight at once, fences polled,
 *     waited out of order and freed while running;
 *   - dma-buf: a buffer of one handle of accel:0 exported and imported by
 *     a second handle (mxa_device_open() twice) shows the same bytes both
 *     ways and serves as a GEMM operand and output there; the cpu refuses
 *     dma-bufs with -EOPNOTSUPP.  Buffers in device memory (a PCI device,
 *     DRM_MXACCEL_PARAM_DEVICE_MEMORY) are never exported: there the
 *     export is refused with -EOPNOTSUPP and the buffer stays usable.
 *
 * Exits 4 (skip) without an accel device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "e2e.h"

#define BATCH 1000

static struct mxa_device *dev, *cpu;
static unsigned int max_ops;
static bool device_memory;
/*
 * Every result is compared byte for byte with the cpu's EMULATED one: AUTO
 * on a conformance device (whose kernels are exact), EMULATED on hardware
 * (whose AUTO picks its native kernels, within a bound, not exact).
 */
static enum mxa_pref pref = MXA_PREF_AUTO;

/* A parameter of the device under test, asked directly; -1 if unknown. */
static long long device_param(uint32_t param)
{
	struct drm_mxaccel_get_param gp = { .param = param };
	int fd = e2e_device_node_open(), ret;

	if (fd < 0)
		return -1;
	ret = e2e_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp);
	close(fd);
	return ret ? -1 : (long long)gp.value;
}

/* --- many problems packed into shared buffers ------------------------------ */

struct packed {
	unsigned int count;
	struct e2e_gemm *g;
	struct mxa_matrix *a, *b;
	struct mxa_dense *c;
	struct mxa_gemm_op *ops;
	struct mxa_buffer *buf[5];	/* a data, a scale, b data, b scale, c */
	size_t *c_off;
};

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

/* Lay out count random problems and upload them to dev. */
static int pack(struct packed *p, unsigned int count, uint32_t max_m,
		uint32_t max_n, uint32_t max_kb)
{
	size_t size[5] = { 0 }, at[5] = { 0 };
	unsigned int i, j;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->count = count;
	p->g = xcalloc(count, sizeof(*p->g));
	p->a = xcalloc(count, sizeof(*p->a));
	p->b = xcalloc(count, sizeof(*p->b));
	p->c = xcalloc(count, sizeof(*p->c));
	p->ops = xcalloc(count, sizeof(*p->ops));
	p->c_off = xcalloc(count, sizeof(*p->c_off));
	for (i = 0; i < count; i++) {
		struct e2e_gemm *g = &p->g[i];

		e2e_gemm_random(g, max_m, max_n, max_kb);
		/* Odd offsets for codes and scales; C aligned to its type. */
		size[0] += g->a_bytes + 3;
		size[1] += g->as_bytes + 1;
		size[2] += g->b_bytes + 5;
		size[3] += g->bs_bytes + 1;
		size[4] = align_up(size[4], 4) + g->c_bytes;
	}
	for (j = 0; j < 5; j++) {
		p->buf[j] = e2e_buffer(dev, NULL, size[j]);
		if (!p->buf[j])
			return -ENOMEM;
	}
	for (i = 0; i < count && !ret; i++) {
		struct e2e_gemm *g = &p->g[i];

		at[0] += 3;
		at[2] += 5;
		at[1]++;
		at[3]++;
		at[4] = align_up(at[4], 4);
		p->a[i] = (struct mxa_matrix){
			.data = p->buf[0], .data_offset = at[0],
			.scale = p->buf[1], .scale_offset = at[1],
			.elem = g->ea, .scale_layout = g->layout,
			.rows = g->m, .cols = g->k,
		};
		p->b[i] = (struct mxa_matrix){
			.data = p->buf[2], .data_offset = at[2],
			.scale = p->buf[3], .scale_offset = at[3],
			.elem = g->eb, .scale_layout = g->layout,
			.rows = g->n, .cols = g->k,
		};
		p->c[i] = (struct mxa_dense){
			.buf = p->buf[4], .offset = at[4], .dtype = g->dtype,
			.rows = g->m, .cols = g->n,
		};
		p->c_off[i] = at[4];
		p->ops[i] = (struct mxa_gemm_op){
			.a = &p->a[i], .b = &p->b[i], .c = &p->c[i],
			.flags = g->flags,
		};
		ret = mxa_buffer_write(p->buf[0], at[0], g->a, g->a_bytes);
		if (!ret)
			ret = mxa_buffer_write(p->buf[1], at[1], g->as,
					       g->as_bytes);
		if (!ret)
			ret = mxa_buffer_write(p->buf[2], at[2], g->b,
					       g->b_bytes);
		if (!ret)
			ret = mxa_buffer_write(p->buf[3], at[3], g->bs,
					       g->bs_bytes);
		if (!ret)
			ret = mxa_buffer_write(p->buf[4], at[4], g->c_in,
					       g->c_bytes);
		at[0] += g->a_bytes;
		at[1] += g->as_bytes;
		at[2] += g->b_bytes;
		at[3] += g->bs_bytes;
		at[4] += g->c_bytes;
	}
	return ret;
}

static void unpack(struct packed *p)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		mxa_buffer_free(p->buf[i]);
	for (i = 0; i < p->count; i++)
		e2e_gemm_free(&p->g[i]);
	free(p->g);
	free(p->a);
	free(p->b);
	free(p->c);
	free(p->ops);
	free(p->c_off);
}

/* Every op's C against its own EMULATED gemm on the cpu. */
static unsigned int compare_with_cpu(const struct packed *p)
{
	unsigned int i, bad = 0;

	for (i = 0; i < p->count; i++) {
		const struct e2e_gemm *g = &p->g[i];
		uint8_t *want = xcalloc(1, g->c_bytes);
		uint8_t *got = xcalloc(1, g->c_bytes);
		int ret = e2e_gemm_run(cpu, g, MXA_PREF_EMULATED, want);

		E2E_CHECK(!ret, "cpu gemm %u: %s", i, mxa_strerror(ret));
		ret = mxa_buffer_read(p->buf[4], p->c_off[i], got, g->c_bytes);
		if (!ret && memcmp(want, got, g->c_bytes) && bad++ < 5)
			e2e_fail(__LINE__, "op %u: %s x %s %ux%ux%u %s %s%s differs from cpu EMULATED",
				 i, mxa_elem_name(g->ea), mxa_elem_name(g->eb),
				 g->m, g->n, g->k, mxa_layout_name(g->layout),
				 mxa_dtype_name(g->dtype),
				 g->flags ? " accumulate" : "");
		free(want);
		free(got);
	}
	E2E_CHECK(!bad, "%u of %u ops differ", bad, p->count);
	return bad;
}

static void test_batch(unsigned int count, bool exact_submits)
{
	unsigned int want_submits = (count + max_ops - 1) / max_ops;
	uint64_t s0, o0;
	struct packed p;
	int64_t t0;
	int ret;

	e2e_seed(0x6261746368ull + count);
	ret = pack(&p, count, 4, 4, 4);
	E2E_CHECK(!ret, "cannot set up %u gemms: %s", count, mxa_strerror(ret));
	if (!ret) {
		s0 = e2e_submits();
		o0 = e2e_submitted_ops();
		t0 = e2e_now_ns();
		ret = mxa_gemm_batch(dev, p.ops, count, pref, NULL);
		E2E_CHECK(!ret, "mxa_gemm_batch(%u): %s", count,
			  mxa_strerror(ret));
		e2e_note("batch of %u: %.2f ms, %llu SUBMIT(s) carrying %llu ops (MAX_OPS %u)",
			 count, (double)(e2e_now_ns() - t0) * 1e-6,
			 (unsigned long long)(e2e_submits() - s0),
			 (unsigned long long)(e2e_submitted_ops() - o0),
			 max_ops);
		E2E_CHECK(e2e_submits() - s0 == want_submits &&
			  e2e_submitted_ops() - o0 == count,
			  "%u ops took %llu SUBMITs with %llu ops, want %u",
			  count, (unsigned long long)(e2e_submits() - s0),
			  (unsigned long long)(e2e_submitted_ops() - o0),
			  want_submits);
		if (!ret)
			compare_with_cpu(&p);
	}
	unpack(&p);
	if (exact_submits)
		e2e_subtest("a batch of %u (MAX_OPS) gemms is one SUBMIT; results equal cpu EMULATED",
			    count);
	else
		e2e_subtest("a batch of %u tiny gemms: %u SUBMITs, every C equals its cpu EMULATED gemm byte for byte",
			    count, want_submits);
}

/* A chain C += A_i * B_i^T in one batch, longer than one SUBMIT. */
static void test_order(void)
{
	const unsigned int count = max_ops + max_ops / 2;
	struct mxa_gemm_op *ops = xcalloc(count, sizeof(*ops));
	struct e2e_gemm *g = xcalloc(count, sizeof(*g));
	struct mxa_matrix *a = xcalloc(count, sizeof(*a));
	struct mxa_matrix *b = xcalloc(count, sizeof(*b));
	struct mxa_dense c;
	uint8_t want[4 * 3 * 4], got[sizeof(want)];
	unsigned int i;
	int ret = 0;

	e2e_seed(0x6f72646572ull);
	for (i = 0; i < count; i++) {
		/* Same shape and C for all; elements and layouts vary. */
		do {
			e2e_gemm_free(&g[i]);
			e2e_gemm_random(&g[i], 4, 3, 2);
		} while (g[i].m != 4 || g[i].n != 3 ||
			 g[i].dtype != MXA_DTYPE_F32);
		g[i].flags = MXA_GEMM_ACCUMULATE;
	}
	/* The cpu, one GEMM at a time, C carried from each to the next. */
	memset(want, 0, sizeof(want));
	for (i = 0; i < count && !ret; i++) {
		memcpy(g[i].c_in, want, sizeof(want));
		ret = e2e_gemm_run(cpu, &g[i], MXA_PREF_EMULATED, want);
	}
	E2E_CHECK(!ret, "cpu chain: %s", mxa_strerror(ret));

	c = (struct mxa_dense){
		.buf = e2e_buffer(dev, NULL, sizeof(want)),
		.dtype = MXA_DTYPE_F32, .rows = 4, .cols = 3,
	};
	for (i = 0; i < count; i++) {
		a[i] = (struct mxa_matrix){
			.data = e2e_buffer(dev, g[i].a, g[i].a_bytes),
			.scale = e2e_buffer(dev, g[i].as, g[i].as_bytes),
			.elem = g[i].ea, .scale_layout = g[i].layout,
			.rows = 4, .cols = g[i].k,
		};
		b[i] = (struct mxa_matrix){
			.data = e2e_buffer(dev, g[i].b, g[i].b_bytes),
			.scale = e2e_buffer(dev, g[i].bs, g[i].bs_bytes),
			.elem = g[i].eb, .scale_layout = g[i].layout,
			.rows = 3, .cols = g[i].k,
		};
		ops[i] = (struct mxa_gemm_op){ .a = &a[i], .b = &b[i], .c = &c,
					       .flags = MXA_GEMM_ACCUMULATE };
	}
	E2E_CHECK_RET(mxa_gemm_batch(dev, ops, count, pref, NULL), 0);
	E2E_CHECK(!mxa_buffer_read(c.buf, 0, got, sizeof(got)) &&
		  !memcmp(want, got, sizeof(want)),
		  "a chain of %u accumulating gemms differs from the cpu's",
		  count);
	for (i = 0; i < count; i++) {
		mxa_buffer_free(a[i].data);
		mxa_buffer_free(a[i].scale);
		mxa_buffer_free(b[i].data);
		mxa_buffer_free(b[i].scale);
		e2e_gemm_free(&g[i]);
	}
	mxa_buffer_free(c.buf);
	free(ops);
	free(g);
	free(a);
	free(b);
	e2e_subtest("ops of a batch run in order: %u accumulating gemms into one C (2 SUBMITs) equal the cpu's chain",
		    count);
}

static void test_async(void)
{
	enum { N = 8 };
	struct mxa_fence *f[N] = { NULL }, *fb = NULL;
	struct packed p;
	unsigned int i, busy = 0;
	int ret;

	e2e_seed(0x6173796e63ull);
	ret = pack(&p, 64, 16, 16, 8);
	E2E_CHECK(!ret, "setup: %s", mxa_strerror(ret));
	if (ret)
		goto out;
	/* The batch in flight, and nothing written until it signals. */
	E2E_CHECK_RET(mxa_gemm_batch(dev, p.ops, 64, pref, &fb), 0);
	if (fb) {
		ret = mxa_fence_wait(fb, 0);
		E2E_CHECK(ret == 0 || ret == -ETIME, "poll: %d", ret);
		busy += ret == -ETIME;
		E2E_CHECK_RET(mxa_fence_wait(fb, -1), 0);
		E2E_CHECK_RET(mxa_fence_wait(fb, 0), 0);
		mxa_fence_free(fb);
	}
	compare_with_cpu(&p);
	unpack(&p);

	/* Eight single gemms in flight, waited for last to first. */
	e2e_seed(0x6173796e64ull);
	ret = pack(&p, N, 64, 64, 16);
	E2E_CHECK(!ret, "setup: %s", mxa_strerror(ret));
	if (ret)
		goto out;
	for (i = 0; i < N; i++)
		E2E_CHECK_RET(mxa_gemm_async(dev, p.ops[i].a, p.ops[i].b,
					     p.ops[i].c, p.ops[i].flags,
					     pref, &f[i]), 0);
	for (i = N; i-- > 0;) {
		if (!f[i])
			continue;
		ret = mxa_fence_wait(f[i], 0);
		E2E_CHECK(ret == 0 || ret == -ETIME, "poll %u: %d", i, ret);
		busy += ret == -ETIME;
		E2E_CHECK_RET(mxa_fence_wait(f[i], 10000000000ll), 0);
		mxa_fence_free(f[i]);
	}
	compare_with_cpu(&p);
	/* Freeing a fence of a running job waits for it. */
	for (i = 0; i < N; i++) {
		f[0] = NULL;
		E2E_CHECK_RET(mxa_gemm_async(dev, p.ops[i].a, p.ops[i].b,
					     p.ops[i].c, 0, pref,
					     &f[0]), 0);
		mxa_fence_free(f[0]);
	}
	e2e_note("%u polls found a job still running", busy);
out:
	unpack(&p);
	e2e_subtest("async: a batch and 8 gemms in flight, polled, waited out of order, freed while running");
}

/*
 * Device memory is not exported (Documentation/driver.rst): the export is
 * refused with -EOPNOTSUPP, the buffer keeps its bytes and still serves as
 * a GEMM operand.
 */
static void test_dmabuf_refused(void)
{
	struct mxa_buffer *orig;
	struct e2e_gemm g;
	uint8_t *want, *got;
	int fd = -1;

	e2e_seed(0x646d61627566ull);
	e2e_gemm_random(&g, 8, 8, 4);
	g.flags = 0;
	want = xcalloc(1, g.c_bytes);
	got = xcalloc(1, g.c_bytes);
	E2E_CHECK_RET(e2e_gemm_run(cpu, &g, MXA_PREF_EMULATED, want), 0);
	orig = e2e_buffer(dev, g.a, g.a_bytes);
	if (orig) {
		E2E_CHECK_RET(mxa_buffer_export_dmabuf(orig, &fd), -EOPNOTSUPP);
		E2E_CHECK(fd < 0, "a refused export returned fd %d", fd);
		if (fd >= 0)
			close(fd);
		{
			struct mxa_matrix a = {
				.data = orig,
				.scale = e2e_buffer(dev, g.as, g.as_bytes),
				.elem = g.ea, .scale_layout = g.layout,
				.rows = g.m, .cols = g.k,
			};
			struct mxa_matrix b = {
				.data = e2e_buffer(dev, g.b, g.b_bytes),
				.scale = e2e_buffer(dev, g.bs, g.bs_bytes),
				.elem = g.eb, .scale_layout = g.layout,
				.rows = g.n, .cols = g.k,
			};
			struct mxa_dense c = {
				.buf = e2e_buffer(dev, NULL, g.c_bytes),
				.dtype = g.dtype, .rows = g.m, .cols = g.n,
			};

			E2E_CHECK_RET(mxa_gemm(dev, &a, &b, &c, 0,
					       pref), 0);
			E2E_CHECK(!mxa_buffer_read(c.buf, 0, got, g.c_bytes) &&
				  !memcmp(want, got, g.c_bytes),
				  "a buffer whose export was refused gives another C");
			mxa_buffer_free(a.scale);
			mxa_buffer_free(b.data);
			mxa_buffer_free(b.scale);
			mxa_buffer_free(c.buf);
		}
	}
	mxa_buffer_free(orig);
	e2e_gemm_free(&g);
	free(want);
	free(got);
	e2e_subtest("dma-buf: device memory is not exported (-EOPNOTSUPP); the buffer stays usable");
}

static void test_dmabuf(void)
{
	struct mxa_device *dev2 = NULL;
	struct mxa_buffer *orig = NULL, *imp = NULL, *c1 = NULL, *c2 = NULL;
	struct mxa_buffer *hbuf = NULL;
	struct e2e_gemm g;
	uint8_t *want, *got, *bytes;
	size_t size;
	int fd = -1, nul;

	e2e_seed(0x646d61627566ull);
	e2e_gemm_random(&g, 8, 8, 4);
	g.flags = 0;
	want = xcalloc(1, g.c_bytes);
	got = xcalloc(1, g.c_bytes);
	E2E_CHECK_RET(e2e_gemm_run(cpu, &g, MXA_PREF_EMULATED, want), 0);

	/* A's codes and scales in one buffer object of the first handle. */
	size = g.a_bytes + g.as_bytes;
	bytes = xcalloc(1, size);
	memcpy(bytes, g.a, g.a_bytes);
	memcpy(bytes + g.a_bytes, g.as, g.as_bytes);
	orig = e2e_buffer(dev, bytes, size);
	E2E_CHECK_RET(mxa_device_open(e2e_device(), &dev2), 0);
	if (!orig || !dev2)
		goto out;
	E2E_CHECK_RET(mxa_buffer_export_dmabuf(orig, &fd), 0);
	if (fd < 0)
		goto out;
	E2E_CHECK_RET(mxa_buffer_import_dmabuf(dev2, fd, &imp), 0);
	close(fd);
	if (!imp)
		goto out;
	E2E_CHECK(mxa_buffer_size(imp) >= size, "imported %zu bytes of %zu",
		  mxa_buffer_size(imp), size);
	{
		uint8_t *back = xcalloc(1, size);

		E2E_CHECK(!mxa_buffer_read(imp, 0, back, size) &&
			  !memcmp(back, bytes, size),
			  "the import shows other bytes");
		free(back);
	}

	/* The import as A on the second handle; C exported back. */
	{
		struct mxa_matrix a = {
			.data = imp, .scale = imp, .scale_offset = g.a_bytes,
			.elem = g.ea, .scale_layout = g.layout,
			.rows = g.m, .cols = g.k,
		};
		struct mxa_matrix b = {
			.data = e2e_buffer(dev2, g.b, g.b_bytes),
			.scale = e2e_buffer(dev2, g.bs, g.bs_bytes),
			.elem = g.eb, .scale_layout = g.layout,
			.rows = g.n, .cols = g.k,
		};
		struct mxa_dense c = {
			.dtype = g.dtype, .rows = g.m, .cols = g.n,
		};

		/* C lives on the first handle, shared with the second. */
		c1 = e2e_buffer(dev, NULL, g.c_bytes);
		if (c1 && !mxa_buffer_export_dmabuf(c1, &fd)) {
			E2E_CHECK_RET(mxa_buffer_import_dmabuf(dev2, fd, &c2),
				      0);
			close(fd);
		}
		c.buf = c2;
		E2E_CHECK(b.data && b.scale && c2, "setup on the second handle");
		if (b.data && b.scale && c2) {
			E2E_CHECK_RET(mxa_gemm(dev2, &a, &b, &c, 0,
					       pref), 0);
			/* Buffers of the other handle are not this one's. */
			E2E_CHECK_RET(mxa_gemm(dev, &a, &b, &c, 0,
					       pref), -EXDEV);
		}
		E2E_CHECK(!mxa_buffer_read(c1, 0, got, g.c_bytes) &&
			  !memcmp(want, got, g.c_bytes),
			  "C computed through the imports differs from cpu EMULATED");
		mxa_buffer_free(b.data);
		mxa_buffer_free(b.scale);
	}
	/* The originals outlive their imports, as operands too. */
	mxa_buffer_free(imp);
	mxa_buffer_free(c2);
	imp = c2 = NULL;
	{
		struct mxa_matrix a = {
			.data = orig, .scale = orig, .scale_offset = g.a_bytes,
			.elem = g.ea, .scale_layout = g.layout,
			.rows = g.m, .cols = g.k,
		};
		struct mxa_matrix b = {
			.data = e2e_buffer(dev, g.b, g.b_bytes),
			.scale = e2e_buffer(dev, g.bs, g.bs_bytes),
			.elem = g.eb, .scale_layout = g.layout,
			.rows = g.n, .cols = g.k,
		};
		struct mxa_dense c = {
			.buf = c1, .dtype = g.dtype, .rows = g.m, .cols = g.n,
		};

		memset(got, 0, g.c_bytes);
		mxa_buffer_write(c1, 0, got, g.c_bytes);
		E2E_CHECK_RET(mxa_gemm(dev, &a, &b, &c, 0, pref), 0);
		E2E_CHECK(!mxa_buffer_read(c1, 0, got, g.c_bytes) &&
			  !memcmp(want, got, g.c_bytes),
			  "the first handle after the imports are gone");
		mxa_buffer_free(b.data);
		mxa_buffer_free(b.scale);
	}
	{
		uint8_t *back = xcalloc(1, size);

		E2E_CHECK(!mxa_buffer_read(orig, 0, back, size) &&
			  !memcmp(back, bytes, size),
			  "the original changed");
		free(back);
	}

	/* The cpu has no dma-bufs. */
	hbuf = e2e_buffer(cpu, NULL, 64);
	fd = -1;
	if (hbuf)
		E2E_CHECK_RET(mxa_buffer_export_dmabuf(hbuf, &fd), -EOPNOTSUPP);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	imp = (struct mxa_buffer *)&imp;
	E2E_CHECK_RET(mxa_buffer_import_dmabuf(cpu, nul, &imp), -EOPNOTSUPP);
	E2E_CHECK(!imp, "a refused import left a buffer");
	imp = NULL;
	close(nul);
out:
	mxa_buffer_free(hbuf);
	mxa_buffer_free(imp);
	mxa_buffer_free(c2);
	mxa_buffer_free(c1);
	mxa_buffer_free(orig);
	mxa_device_close(dev2);
	e2e_gemm_free(&g);
	free(bytes);
	free(want);
	free(got);
	e2e_subtest("dma-buf: exported by one handle of %s, imported by a second; same bytes, GEMM operands and output",
		    e2e_device());
}

/*
 * Importing a dma-buf into the handle that exported it gives the same GEM
 * handle (PRIME deduplicates per file).  Freeing the import must not close
 * that handle under the original: the next buffer object created would
 * reuse the number and a GEMM on the original would silently read it.
 */
static void test_self_import(void)
{
	struct mxa_buffer *orig, *imp = NULL;
	struct e2e_gemm g;
	uint8_t *want, *got;
	int fd = -1, ret = -1;

	e2e_seed(0x73656c66ull);
	e2e_gemm_random(&g, 2, 2, 1);
	g.flags = 0;
	want = xcalloc(1, g.c_bytes);
	got = xcalloc(1, g.c_bytes);
	E2E_CHECK_RET(e2e_gemm_run(cpu, &g, MXA_PREF_EMULATED, want), 0);
	orig = e2e_buffer(dev, g.a, g.a_bytes);
	if (orig && !mxa_buffer_export_dmabuf(orig, &fd)) {
		if (!mxa_buffer_import_dmabuf(dev, fd, &imp))
			mxa_buffer_free(imp);
		close(fd);
		{
			struct mxa_matrix a = {
				.data = orig,
				.scale = e2e_buffer(dev, g.as, g.as_bytes),
				.elem = g.ea, .scale_layout = g.layout,
				.rows = g.m, .cols = g.k,
			};
			struct mxa_matrix b = {
				.data = e2e_buffer(dev, g.b, g.b_bytes),
				.scale = e2e_buffer(dev, g.bs, g.bs_bytes),
				.elem = g.eb, .scale_layout = g.layout,
				.rows = g.n, .cols = g.k,
			};
			struct mxa_dense c = {
				.buf = e2e_buffer(dev, NULL, g.c_bytes),
				.dtype = g.dtype, .rows = g.m, .cols = g.n,
			};

			ret = mxa_gemm(dev, &a, &b, &c, 0, pref);
			if (!ret)
				ret = mxa_buffer_read(c.buf, 0, got, g.c_bytes);
			mxa_buffer_free(a.scale);
			mxa_buffer_free(b.data);
			mxa_buffer_free(b.scale);
			mxa_buffer_free(c.buf);
		}
	}
	mxa_buffer_free(orig);
	E2E_CHECK(!ret, "mxa_gemm with a buffer whose self-import was freed: %s",
		  mxa_strerror(ret));
	E2E_CHECK(ret || !memcmp(want, got, g.c_bytes),
		  "mxa_gemm with a buffer whose self-import was freed read other memory");
	e2e_gemm_free(&g);
	free(want);
	free(got);
	e2e_subtest("a buffer stays usable after freeing its import into the same handle");
}

int main(void)
{
	long long v;

	dev = e2e_open(e2e_device());
	cpu = e2e_open("cpu");
	v = device_param(DRM_MXACCEL_PARAM_MAX_OPS);
	if (v <= 0) {
		printf("Bail out! cannot read DRM_MXACCEL_PARAM_MAX_OPS\n");
		return 1;
	}
	max_ops = (unsigned int)v;
	{
		struct mxa_device_info info = { .name = "?" };

		if (!mxa_device_info(dev, &info) && !info.conformance)
			pref = MXA_PREF_EMULATED;
		e2e_note("%s (%s): GEMMs with preference %s", info.name,
			 info.description, mxa_pref_name(pref));
	}
	/* Before version 3 there is no device memory (and no parameter). */
	device_memory = device_param(DRM_MXACCEL_PARAM_DEVICE_MEMORY) > 0;
	e2e_plan(6);
	test_batch(BATCH, false);
	test_batch(max_ops, true);
	test_order();
	test_async();
	if (device_memory) {
		test_dmabuf_refused();
		e2e_subtest_skip("device memory has no dma-bufs",
				 "a buffer stays usable after freeing its import into the same handle");
	} else {
		test_dmabuf();
		test_self_import();
	}
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return e2e_exit_status();
}
