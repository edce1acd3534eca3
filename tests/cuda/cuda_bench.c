// SPDX-License-Identifier: MIT
/*
 * Timings of the CUDA backend through the public API, one JSON object per
 * line on stdout (tests/bench/cuda_bench.py runs it beside the PyTorch
 * baselines and prints the table; Documentation/bench-cuda.rst).
 *
 *   cuda_bench [--device cuda:0] [--gemm MxNxK ...] [--quant RxC ...]
 *              [--weight-only MxNxK ...] [--grouped GxMxNxK ...]
 *              [--grouped-k GxMxNxK ...]
 *              [--pref native|auto|emulated] [--seconds S]
 *              [--recipes mxfp8,mxfp6_e2m3,mxfp6_e3m2,mxfp4,nvfp4,nvfp4xmxfp8,mxfp8xnvfp4]
 *              [--wo-recipes mxfp4,nvfp4,mxfp8]
 *              [--grouped-recipes mxfp8,nvfp4]
 *
 * GEMM: MXFP8 (e4m3 x e4m3) and MXFP4 (e2m1 x e2m1) by default, MXFP6
 * (e2m3 or e3m2, a code per byte) and NVFP4 (e2m1, UE4M3 scales 2^-3 ..
 * 2^3 per 16, tensor scales 0.5 and 0.25) on request, random codes, MX
 * scales 2^-7 .. 2^7, bf16 C, plain scales.
 * Weight-only (mxa_gemm_weight_only): bf16 A [M x K] of random values,
 * B [N x K] of each --wo-recipes recipe, bf16 C; the bytes read (B's codes
 * and scales, A) give GB/s.
 * Grouped (mxa_gemm_grouped, each --grouped-recipes recipe, MXFP8 and
 * NVFP4 by default): --grouped is MXA_GROUP_2D_3D, M
 * tokens in G groups of ragged sizes against G weights [N x K];
 * --grouped-k is MXA_GROUP_2D_2D, K split into G ragged groups (multiples
 * of 32), G results [M x N].  Each is followed by the dense GEMM of the
 * same total work (M x N x K) in the same run, and the ratio.
 * Weight-only and grouped calls have no batch form: they run in stream
 * mode (mxa_device_set_stream() with the legacy default stream), where a
 * call returns once queued, and n calls and one read-back are timed; so a
 * time per call is the device's unless queueing a call takes the host
 * longer (then it is an upper bound).  A batch of n GEMMs of one shape goes
 * to the device on one fence (mxa_gemm_batch), so the time per GEMM is the
 * device's, not a host round trip; the median of three batches is kept.
 * The batch rotates through several operand sets, so that the operands
 * come from device memory, not from L2.
 * Quantize: bf16 and fp32 sources to e4m3 and e2m1 (floor), plain scales;
 * mxa_quantize() is synchronous, so the time of a 1 x 32 quantization (the
 * round trip) is measured too and subtracted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mxaccel.h>

#include "testlib.h"

static double seconds = 0.3;
static const char *recipes = "mxfp8,mxfp4";

/* The GEMM recipes --recipes may name: both operands of one element type. */
static const struct {
	const char *name;
	enum mxa_elem elem;
} gemm_recipes[] = {
	{ "mxfp8", MXA_ELEM_E4M3 },
	{ "mxfp6_e2m3", MXA_ELEM_E2M3 },
	{ "mxfp6_e3m2", MXA_ELEM_E3M2 },
	{ "mxfp4", MXA_ELEM_E2M1 },
	{ "nvfp4", MXA_ELEM_E2M1 },
	/* Mixed (--recipes only): NVFP4 A x MXFP8 B, and the other way. */
	{ "nvfp4xmxfp8", MXA_ELEM_E4M3 },
	{ "mxfp8xnvfp4", MXA_ELEM_E4M3 },
};

/* NVFP4 is e2m1 with UE4M3 scales per 16 and a tensor scale. */
static bool is_nvfp4(const char *recipe)
{
	return !strcmp(recipe, "nvfp4");
}

/* A mixed recipe's NVFP4 side: 'a', 'b', or 0 (not mixed). */
static char mixed_side(const char *recipe)
{
	return !strcmp(recipe, "nvfp4xmxfp8") ? 'a' : !strcmp(recipe, "mxfp8xnvfp4") ? 'b' : 0;
}

/* Whether the comma-separated list names name exactly. */
static bool lists(const char *list, const char *name)
{
	const size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/*
 * 0 when every name in the comma-separated list is a GEMM recipe (mixed
 * ones only where `mixed`); otherwise one line naming the first that is
 * not, and -1.
 */
static int check_recipes(const char *opt, const char *list, bool mixed)
{
	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL) {
		const size_t n = strcspn(p, ",");
		unsigned int r;

		for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
			if (strlen(gemm_recipes[r].name) == n &&
			    !strncmp(p, gemm_recipes[r].name, n))
				break;
		if (r < TEST_ARRAY_SIZE(gemm_recipes) && !mixed &&
		    mixed_side(gemm_recipes[r].name)) {
			fprintf(stderr, "cuda_bench: %s: '%.*s' is mixed: --recipes only\n",
				opt, (int)n, p);
			return -1;
		}
		if (r == TEST_ARRAY_SIZE(gemm_recipes)) {
			fprintf(stderr, "cuda_bench: %s: '%.*s' is not one of", opt, (int)n, p);
			for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
				fprintf(stderr, " %s%s", gemm_recipes[r].name,
					r + 1 < TEST_ARRAY_SIZE(gemm_recipes) ? "," : "\n");
			return -1;
		}
	}
	return 0;
}

static enum mxa_pref pref = MXA_PREF_NATIVE;
static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "cuda_bench: %s: %s\n", what, mxa_strerror(ret));
	exit(1);
}

/*
 * size random bytes in a new buffer: kind 0 any, 1 e4m3 codes without NaN,
 * 2 scales 2^-7 .. 2^7, 3 fp6 codes (six bits), 4 UE4M3 scales 2^-3 ..
 * 2^3 (0x20 .. 0x4f), 5 bf16 values of magnitude 2^-4 .. 2^4 (pairs of
 * bytes, little endian).
 */
static struct mxa_buffer *upload(struct mxa_device *dev, size_t size,
				 int kind)
{
	unsigned char *h = malloc(size);
	struct mxa_buffer *b;
	size_t i;
	int ret;

	for (i = 0; i < size; i++) {
		unsigned char v = (unsigned char)next();

		if (kind == 1 && (v & 0x7f) == 0x7f)
			v ^= 1;				/* no e4m3 NaN */
		if (kind == 3)
			v &= 0x3f;			/* fp6: a code per byte */
		if (kind == 2)
			v = (unsigned char)(120 + v % 15);	/* scales */
		if (kind == 4)
			v = (unsigned char)(0x20 + v % 0x30);	/* UE4M3 */
		if (kind == 5 && i % 2)				/* bf16 high byte */
			v = (unsigned char)((v & 0x80) | (0x3b + v % 9));
		h[i] = v;
	}
	ret = mxa_buffer_alloc(dev, size, &b);
	if (!ret)
		ret = mxa_buffer_write(b, 0, h, size);
	if (ret)
		die("upload", ret);
	free(h);
	return b;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Operand sets a batch rotates through: enough that together they exceed
 * ROTATE_BYTES, so that no GEMM finds its operands in L2 from the one
 * before (the H200 has 60 MB of L2; triton's do_bench, which times the
 * PyTorch peers, clears the cache with a 256 MB write between runs).
 */
#define ROTATE_BYTES (256u << 20)
#define MAX_SETS 16

/* upload()'s kind for random codes of elem. */
static int code_kind(enum mxa_elem elem)
{
	return elem == MXA_ELEM_E4M3 ? 1 :
	       elem == MXA_ELEM_E2M3 || elem == MXA_ELEM_E3M2 ? 3 : 0;
}

/* A random operand of rows x cols: codes of elem, MX or NVFP4 scales. */
static struct mxa_matrix operand(struct mxa_device *dev, enum mxa_elem elem,
				 bool nvfp4, uint32_t rows, uint32_t cols,
				 float tensor_scale)
{
	size_t rb = elem == MXA_ELEM_E2M1 ? cols / 2 : cols;
	uint32_t bs = nvfp4 ? 16 : 32;

	return (struct mxa_matrix){
		.data = upload(dev, rb * rows, code_kind(elem)),
		.scale = upload(dev, (size_t)rows * (cols / bs), nvfp4 ? 4 : 2),
		.elem = elem, .rows = rows, .cols = cols,
		.scale_type = nvfp4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.tensor_scale = nvfp4 ? tensor_scale : 0.0f,
	};
}

static void free_operand(struct mxa_matrix *m)
{
	mxa_buffer_free(m->data);
	mxa_buffer_free(m->scale);
}

/* Bytes of an operand's codes and scales. */
static double operand_bytes(enum mxa_elem elem, bool nvfp4, uint32_t rows,
			    uint32_t cols)
{
	double per = elem == MXA_ELEM_E2M1 ? 0.5 : 1.0;

	return (double)rows * cols * (per + 1.0 / (nvfp4 ? 16 : 32));
}

/* One line saying why a measurement could not be made. */
static void not_measured(const char *op, const char *recipe, uint32_t m, uint32_t n,
			 uint32_t k, const char *why)
{
	printf("{\"op\": \"%s\", \"recipe\": \"%s\", \"m\": %u, \"n\": %u, \"k\": %u, \"skipped\": \"%s\"}\n",
	       op, recipe, m, n, k, why);
	fflush(stdout);
}

static void bench_gemm(struct mxa_device *dev, const char *recipe,
		       enum mxa_elem elem, uint32_t m, uint32_t n, uint32_t k)
{
	const bool nva = is_nvfp4(recipe) || mixed_side(recipe) == 'a';
	const bool nvb = is_nvfp4(recipe) || mixed_side(recipe) == 'b';
	const enum mxa_elem ea = nva ? MXA_ELEM_E2M1 : elem, eb = nvb ? MXA_ELEM_E2M1 : elem;
	double set_bytes = operand_bytes(ea, nva, m, k) + operand_bytes(eb, nvb, n, k);
	unsigned int sets = (unsigned int)(ROTATE_BYTES / set_bytes + 1);
	struct mxa_matrix a[MAX_SETS], b[MAX_SETS];
	struct mxa_dense c = { .dtype = MXA_DTYPE_BF16, .rows = m, .cols = n };
	struct mxa_gemm_op *ops;
	struct mxa_fence *f;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = ea, .b_elem = eb,
		.dtype = MXA_DTYPE_BF16, .m = m, .n = n, .k = k,
		.a_scale_type = nva ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.b_scale_type = nvb ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
	};
	struct mxa_plan plan;
	double t, times[3];
	unsigned int iters, i, r;
	int ret;

	ret = mxa_plan(dev, &d, pref, &plan);
	if (ret) {
		not_measured("gemm", recipe, m, n, k, plan.reason);
		return;
	}
	if (sets > MAX_SETS)
		sets = MAX_SETS;
	for (i = 0; i < sets; i++) {
		a[i] = operand(dev, ea, nva, m, k, 0.5f);
		b[i] = operand(dev, eb, nvb, n, k, 0.25f);
	}
	ret = mxa_buffer_alloc(dev, (size_t)m * n * 2, &c.buf);
	if (ret)
		die("alloc C", ret);
	for (i = 0; i < 2; i++) {
		t = now();
		ret = mxa_gemm(dev, &a[i % sets], &b[i % sets], &c, 0, pref);
		if (ret)
			die("gemm", ret);
		t = now() - t;
	}
	iters = (unsigned int)(seconds / 3 / t);
	iters = iters < 3 ? 3 : iters > 2000 ? 2000 : iters;
	ops = calloc(iters, sizeof(*ops));
	for (i = 0; i < iters; i++)
		ops[i] = (struct mxa_gemm_op){ .a = &a[i % sets], .b = &b[i % sets], .c = &c };
	for (r = 0; r < 3; r++) {
		t = now();
		ret = mxa_gemm_batch(dev, ops, iters, pref, &f);
		if (!ret)
			ret = mxa_fence_wait(f, -1);
		if (ret)
			die("gemm batch", ret);
		mxa_fence_free(f);
		times[r] = (now() - t) / iters;
	}
	qsort(times, 3, sizeof(times[0]), cmp_double);
	printf("{\"op\": \"gemm\", \"recipe\": \"%s\", \"m\": %u, \"n\": %u, \"k\": %u, \"kernel\": \"%s\", \"iters\": %u, \"sets\": %u, \"ms\": %.5f, \"spread_ms\": %.5f, \"tflops\": %.2f}\n",
	       recipe, m, n, k, plan.kernel, iters, sets, times[1] * 1e3,
	       (times[2] - times[0]) * 1e3, 2.0 * m * n * k / times[1] * 1e-12);
	fflush(stdout);
	free(ops);
	for (i = 0; i < sets; i++) {
		free_operand(&a[i]);
		free_operand(&b[i]);
	}
	mxa_buffer_free(c.buf);
}

/*
 * Stream-mode timing: one call of op(ctx, i) queues work on the legacy
 * default stream and returns; n calls and a read-back of one byte of out
 * (which waits for them) are timed, three times; the median and the
 * spread per call in *spread.
 */
static double time_queued(struct mxa_device *dev, int (*op)(void *ctx, unsigned int i),
			  void *ctx, struct mxa_buffer *out, double *spread)
{
	double t, times[3];
	unsigned int n, i, r;
	unsigned char byte;
	bool stream;
	int ret;

	/* cudaStreamLegacy; a device without streams runs every call at once. */
	ret = mxa_device_set_stream(dev, (void *)1);
	if (ret && ret != -EOPNOTSUPP)
		die("set_stream", ret);
	stream = !ret;
	for (i = 0; i < 3; i++) {
		t = now();
		ret = op(ctx, i);
		if (!ret)
			ret = mxa_buffer_read(out, 0, &byte, 1);
		if (ret)
			die("queued op", ret);
		t = now() - t;
	}
	n = (unsigned int)(seconds / 3 / t);
	n = n < 5 ? 5 : n > 4000 ? 4000 : n;
	for (r = 0; r < 3; r++) {
		t = now();
		for (i = 0; i < n; i++) {
			ret = op(ctx, i);
			if (ret)
				die("queued op", ret);
		}
		ret = mxa_buffer_read(out, 0, &byte, 1);
		if (ret)
			die("read back", ret);
		times[r] = (now() - t) / n;
	}
	ret = stream ? mxa_device_set_stream(dev, NULL) : 0;
	if (ret)
		die("set_stream", ret);
	qsort(times, 3, sizeof(times[0]), cmp_double);
	*spread = times[2] - times[0];
	return times[1];
}

struct wo_ctx {
	struct mxa_device *dev;
	struct mxa_dense a;
	struct mxa_matrix b[MAX_SETS];
	unsigned int sets;
	struct mxa_dense c;
};

static int wo_op(void *p, unsigned int i)
{
	struct wo_ctx *x = p;

	return mxa_gemm_weight_only(x->dev, &x->a, &x->b[i % x->sets], &x->c, 0, pref);
}

static void bench_weight_only(struct mxa_device *dev, const char *recipe,
			      enum mxa_elem elem, uint32_t m, uint32_t n, uint32_t k)
{
	bool nv = is_nvfp4(recipe);
	double b_bytes = operand_bytes(elem, nv, n, k);
	double bytes = b_bytes + 2.0 * m * k;
	struct wo_ctx x = {
		.dev = dev,
		.a = { .dtype = MXA_DTYPE_BF16, .rows = m, .cols = k },
		.c = { .dtype = MXA_DTYPE_BF16, .rows = m, .cols = n },
	};
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .b_elem = elem,
		.dtype = MXA_DTYPE_BF16, .m = m, .n = n, .k = k,
		.b_scale_type = nv ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.a_dtype = MXA_DTYPE_BF16,
	};
	struct mxa_plan plan;
	double t, spread;
	unsigned int i;
	int ret;

	ret = mxa_plan(dev, &d, pref, &plan);
	if (ret) {
		not_measured("weight_only", recipe, m, n, k, plan.reason);
		return;
	}
	x.sets = (unsigned int)(ROTATE_BYTES / b_bytes + 1);
	if (x.sets > MAX_SETS)
		x.sets = MAX_SETS;
	for (i = 0; i < x.sets; i++)
		x.b[i] = operand(dev, elem, nv, n, k, 0.25f);
	x.a.buf = upload(dev, (size_t)m * k * 2, 5);
	ret = mxa_buffer_alloc(dev, (size_t)m * n * 2, &x.c.buf);
	if (ret)
		die("alloc C", ret);
	t = time_queued(dev, wo_op, &x, x.c.buf, &spread);
	printf("{\"op\": \"weight_only\", \"recipe\": \"%s\", \"m\": %u, \"n\": %u, \"k\": %u, \"kernel\": \"%s\", \"sets\": %u, \"ms\": %.5f, \"spread_ms\": %.5f, \"bytes_read\": %.0f, \"gbps\": %.1f}\n",
	       recipe, m, n, k, plan.kernel, x.sets, t * 1e3, spread * 1e3,
	       bytes, bytes / t * 1e-9);
	fflush(stdout);
	for (i = 0; i < x.sets; i++)
		free_operand(&x.b[i]);
	mxa_buffer_free(x.a.buf);
	mxa_buffer_free(x.c.buf);
}

struct grouped_ctx {
	struct mxa_device *dev;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_grouped g;
};

static int grouped_op(void *p, unsigned int i)
{
	struct grouped_ctx *x = p;

	(void)i;
	return mxa_gemm_grouped(x->dev, &x->a, &x->b, &x->c, &x->g, 0, pref);
}

struct dense_ctx {
	struct mxa_device *dev;
	struct mxa_matrix a, b;
	struct mxa_dense c;
};

static int dense_op(void *p, unsigned int i)
{
	struct dense_ctx *x = p;

	(void)i;
	return mxa_gemm(x->dev, &x->a, &x->b, &x->c, 0, pref);
}

/*
 * Ragged group ends over extent in units of unit: group sizes drawn
 * between half and one and a half of the mean (so some are not multiples
 * of any tile), the last end = extent.
 */
static void ragged_ends(int32_t *ends, uint32_t groups, uint32_t extent,
			uint32_t unit)
{
	uint32_t units = extent / unit, at = 0, g;

	for (g = 0; g + 1 < groups; g++) {
		uint32_t mean = (units - at) / (groups - g);
		uint32_t size = mean / 2 + (uint32_t)(next() % (mean + 1));

		if (at + size > units)
			size = units - at;
		at += size;
		ends[g] = (int32_t)(at * unit);
	}
	ends[groups - 1] = (int32_t)extent;
}

/*
 * Grouped GEMM of one recipe, kind 2D_3D (groups of M against G weights)
 * or 2D_2D (groups of K, G results), then the dense GEMM of the same
 * M x N x K.
 */
static void bench_grouped(struct mxa_device *dev, const char *recipe,
			  enum mxa_elem e, enum mxa_group_kind kind,
			  uint32_t groups, uint32_t m, uint32_t n, uint32_t k)
{
	const bool nv = is_nvfp4(recipe);
	const char *name = kind == MXA_GROUP_2D_3D ? "grouped_2d_3d" : "grouped_2d_2d";
	struct grouped_ctx x = { .dev = dev };
	struct dense_ctx dn = { .dev = dev };
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_GROUPED, .a_elem = e, .b_elem = e,
		.dtype = MXA_DTYPE_BF16, .m = m, .n = n, .k = k,
		.a_scale_type = nv ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.b_scale_type = nv ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
	};
	struct mxa_plan plan, dplan;
	int32_t *ends = calloc(groups, sizeof(*ends));
	double t, spread, td, dspread;
	int ret;

	ret = mxa_plan(dev, &d, pref, &plan);
	if (ret) {
		not_measured(name, recipe, m, n, k, plan.reason);
		free(ends);
		return;
	}
	ragged_ends(ends, groups, kind == MXA_GROUP_2D_3D ? m : k,
		    kind == MXA_GROUP_2D_3D ? 1 : 32);
	x.a = operand(dev, e, nv, m, k, 0.5f);
	if (kind == MXA_GROUP_2D_3D) {
		/* G weights [N x K] stacked: one operand of G * N rows. */
		x.b = operand(dev, e, nv, groups * n, k, 0.25f);
		x.b.rows = n;
		x.c = (struct mxa_dense){ .dtype = MXA_DTYPE_BF16, .rows = m, .cols = n };
	} else {
		x.b = operand(dev, e, nv, n, k, 0.25f);
		x.c = (struct mxa_dense){ .dtype = MXA_DTYPE_BF16, .rows = groups * m, .cols = n };
	}
	ret = mxa_buffer_alloc(dev, (size_t)x.c.rows * n * 2, &x.c.buf);
	if (!ret)
		ret = mxa_buffer_alloc(dev, (size_t)groups * 4, &x.g.offsets);
	if (!ret)
		ret = mxa_buffer_write(x.g.offsets, 0, ends, (size_t)groups * 4);
	if (ret)
		die("grouped buffers", ret);
	x.g.kind = kind;
	x.g.count = groups;
	/* Once on the device's own stream: a failure is reported, not timed. */
	ret = grouped_op(&x, 0);
	if (ret) {
		not_measured(name, recipe, m, n, k, mxa_strerror(ret));
		goto out;
	}
	t = time_queued(dev, grouped_op, &x, x.c.buf, &spread);

	/* The dense GEMM of the same work, on the same A. */
	dn.a = x.a;
	dn.b = x.b;
	dn.b.rows = n;
	dn.c = (struct mxa_dense){ .dtype = MXA_DTYPE_BF16, .buf = x.c.buf,
				   .rows = m, .cols = n };
	d.op = MXA_OP_GEMM;
	ret = mxa_plan(dev, &d, pref, &dplan);
	if (ret)
		die("dense plan", ret);
	td = time_queued(dev, dense_op, &dn, x.c.buf, &dspread);
	printf("{\"op\": \"%s\", \"recipe\": \"%s\", \"groups\": %u, \"m\": %u, \"n\": %u, \"k\": %u, \"kernel\": \"%s\", \"ms\": %.5f, \"spread_ms\": %.5f, \"tflops\": %.2f, \"dense_kernel\": \"%s\", \"dense_ms\": %.5f, \"dense_spread_ms\": %.5f, \"grouped_vs_dense\": %.3f}\n",
	       name, recipe, groups, m, n, k, plan.kernel, t * 1e3, spread * 1e3,
	       2.0 * m * n * k / t * 1e-12, dplan.kernel, td * 1e3,
	       dspread * 1e3, td / t);
	fflush(stdout);
out:
	free_operand(&x.a);
	free_operand(&x.b);
	mxa_buffer_free(x.c.buf);
	mxa_buffer_free(x.g.offsets);
	free(ends);
}

/* Median seconds per mxa_quantize() of src into dst. */
static double time_quant(struct mxa_device *dev, const struct mxa_dense *src,
			 const struct mxa_matrix *dst, unsigned int n)
{
	double times[64];
	unsigned int i;
	int ret;

	for (i = 0; i < n && i < 64; i++) {
		double t = now();

		ret = mxa_quantize(dev, src, dst, MXA_SCALE_FLOOR, pref);
		if (ret)
			die("quantize", ret);
		times[i] = now() - t;
	}
	qsort(times, i, sizeof(times[0]), cmp_double);
	return times[i / 2];
}

static void bench_quant(struct mxa_device *dev, enum mxa_dtype dtype,
			enum mxa_elem elem, uint32_t rows, uint32_t cols)
{
	size_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4;
	size_t rb = elem == MXA_ELEM_E2M1 ? cols / 2 : cols;
	struct mxa_dense src = { .dtype = dtype, .rows = rows, .cols = cols };
	struct mxa_dense tiny_src = { .dtype = dtype, .rows = 1, .cols = 32 };
	struct mxa_matrix dst = { .elem = elem, .rows = rows, .cols = cols };
	struct mxa_matrix tiny = { .elem = elem, .rows = 1, .cols = 32 };
	float *h = malloc((size_t)cols * 4);
	unsigned char *row = malloc((size_t)cols * es);
	double t, t0, bytes;
	uint32_t r, i;
	int ret;

	ret = mxa_buffer_alloc(dev, (size_t)rows * cols * es, &src.buf);
	if (!ret)
		ret = mxa_buffer_alloc(dev, rb * rows, &dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, (size_t)rows * (cols / 32), &dst.scale);
	if (!ret)
		ret = mxa_buffer_alloc(dev, 128, &tiny_src.buf);
	if (!ret)
		ret = mxa_buffer_alloc(dev, 32, &tiny.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, 1, &tiny.scale);
	if (ret)
		die("alloc", ret);
	/* Rows of normal-looking values with a per-row magnitude. */
	for (r = 0; r < rows; r += 64) {
		float mag = (float)(1u << (next() % 16)) / 256.0f;

		for (i = 0; i < cols; i++) {
			h[i] = ((float)(next() % 20001) / 10000.0f - 1.0f) * mag;
			if (es == 2) {
				uint32_t u;

				memcpy(&u, &h[i], 4);
				row[2 * i] = (unsigned char)(u >> 16);
				row[2 * i + 1] = (unsigned char)(u >> 24);
			} else {
				memcpy(row + 4 * i, &h[i], 4);
			}
		}
		for (i = r; i < rows && i < r + 64; i++) {
			ret = mxa_buffer_write(src.buf, (size_t)i * cols * es, row,
					       (size_t)cols * es);
			if (ret)
				die("write", ret);
		}
	}
	time_quant(dev, &src, &dst, 3);
	t = time_quant(dev, &src, &dst, 21);
	t0 = time_quant(dev, &tiny_src, &tiny, 21);
	bytes = (double)rows * cols * es + (double)rb * rows + (double)rows * cols / 32;
	printf("{\"op\": \"quantize\", \"elem\": \"%s\", \"dtype\": \"%s\", \"rows\": %u, \"cols\": %u, \"ms\": %.5f, \"round_trip_ms\": %.5f, \"bytes\": %.0f, \"gbps\": %.1f, \"gbps_device\": %.1f}\n",
	       mxa_elem_name(elem), mxa_dtype_name(dtype), rows, cols, t * 1e3,
	       t0 * 1e3, bytes, bytes / t * 1e-9,
	       t > t0 ? bytes / (t - t0) * 1e-9 : 0.0);
	fflush(stdout);
	free(h);
	free(row);
	mxa_buffer_free(src.buf);
	mxa_buffer_free(dst.data);
	mxa_buffer_free(dst.scale);
	mxa_buffer_free(tiny_src.buf);
	mxa_buffer_free(tiny.data);
	mxa_buffer_free(tiny.scale);
}

int main(int argc, char **argv)
{
	const char *devname = "cuda:0";
	uint32_t gemms[16][3], quants[8][2], wos[16][3], grp[16][5];
	unsigned int ng = 0, nq = 0, nw = 0, ngr = 0, i, r;
	const char *wo_recipes = "mxfp4,nvfp4,mxfp8";
	const char *gr_recipes = "mxfp8,nvfp4";
	struct mxa_device *dev;
	int ret;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < (unsigned int)argc) {
			devname = argv[++i];
		} else if (!strcmp(argv[i], "--gemm") && i + 1 < (unsigned int)argc &&
			   ng < 16 &&
			   sscanf(argv[i + 1], "%ux%ux%u", &gemms[ng][0],
				  &gemms[ng][1], &gemms[ng][2]) == 3) {
			ng++;
			i++;
		} else if (!strcmp(argv[i], "--quant") && i + 1 < (unsigned int)argc &&
			   nq < 8 &&
			   sscanf(argv[i + 1], "%ux%u", &quants[nq][0],
				  &quants[nq][1]) == 2) {
			nq++;
			i++;
		} else if (!strcmp(argv[i], "--weight-only") && i + 1 < (unsigned int)argc &&
			   nw < 16 &&
			   sscanf(argv[i + 1], "%ux%ux%u", &wos[nw][0],
				  &wos[nw][1], &wos[nw][2]) == 3) {
			nw++;
			i++;
		} else if ((!strcmp(argv[i], "--grouped") || !strcmp(argv[i], "--grouped-k")) &&
			   i + 1 < (unsigned int)argc && ngr < 16 &&
			   sscanf(argv[i + 1], "%ux%ux%ux%u", &grp[ngr][1], &grp[ngr][2],
				  &grp[ngr][3], &grp[ngr][4]) == 4 && grp[ngr][1] > 0) {
			grp[ngr][0] = strcmp(argv[i], "--grouped") ? MXA_GROUP_2D_2D :
								    MXA_GROUP_2D_3D;
			ngr++;
			i++;
		} else if (!strcmp(argv[i], "--wo-recipes") && i + 1 < (unsigned int)argc) {
			wo_recipes = argv[++i];
		} else if (!strcmp(argv[i], "--grouped-recipes") && i + 1 < (unsigned int)argc) {
			gr_recipes = argv[++i];
		} else if (!strcmp(argv[i], "--pref") && i + 1 < (unsigned int)argc &&
			   !mxa_pref_parse(argv[i + 1], &pref)) {
			i++;
		} else if (!strcmp(argv[i], "--recipes") && i + 1 < (unsigned int)argc) {
			recipes = argv[++i];
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < (unsigned int)argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: cuda_bench [--device D] [--gemm MxNxK]... [--quant RxC]... [--weight-only MxNxK]... [--grouped GxMxNxK]... [--grouped-k GxMxNxK]... [--pref P] [--seconds S] [--recipes mxfp8,mxfp6_e2m3,mxfp6_e3m2,mxfp4,nvfp4,nvfp4xmxfp8,mxfp8xnvfp4] [--wo-recipes mxfp4,nvfp4,mxfp8] [--grouped-recipes mxfp8,nvfp4]\n");
			return 2;
		}
	}
	if (check_recipes("--recipes", recipes, true) ||
	    check_recipes("--wo-recipes", wo_recipes, false) ||
	    check_recipes("--grouped-recipes", gr_recipes, false))
		return 2;
	ret = mxa_device_open(devname, &dev);
	if (ret)
		die(devname, ret);
	for (i = 0; i < ng; i++) {
		for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
			if (lists(recipes, gemm_recipes[r].name))
				bench_gemm(dev, gemm_recipes[r].name, gemm_recipes[r].elem,
					   gemms[i][0], gemms[i][1], gemms[i][2]);
	}
	for (i = 0; i < nw; i++) {
		for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
			if (lists(wo_recipes, gemm_recipes[r].name))
				bench_weight_only(dev, gemm_recipes[r].name,
						  gemm_recipes[r].elem, wos[i][0],
						  wos[i][1], wos[i][2]);
	}
	for (i = 0; i < nq; i++) {
		bench_quant(dev, MXA_DTYPE_BF16, MXA_ELEM_E4M3, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_BF16, MXA_ELEM_E2M1, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_F32, MXA_ELEM_E4M3, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_F32, MXA_ELEM_E2M1, quants[i][0], quants[i][1]);
	}
	for (i = 0; i < ngr; i++) {
		for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
			if (lists(gr_recipes, gemm_recipes[r].name))
				bench_grouped(dev, gemm_recipes[r].name,
					      gemm_recipes[r].elem,
					      (enum mxa_group_kind)grp[i][0], grp[i][1],
					      grp[i][2], grp[i][3], grp[i][4]);
	}
	mxa_device_close(dev);
	return 0;
}
