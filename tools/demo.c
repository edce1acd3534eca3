// SPDX-License-Identifier: MIT
/*
 * mxaccel-demo: libmxaccel end to end, in the order a user meets it.
 *
 * Two random fp32 matrices are quantized with two recipes (mxfp8, mxfp4)
 * and multiplied with the AUTO preference on the automatically chosen
 * device.  The result is compared with two fp64 references, which separate
 * the two sources of error:
 *   - from the original fp32 inputs: what MX quantization costs;
 *   - from the dequantized MX inputs: what the GEMM kernel itself adds
 *     (fp32 accumulation: about 1e-7 relative).
 * Finally an EMULATED GEMM shows the exact kernel: its result is the exact
 * sum rounded once, so within fp32 rounding of the fp64 reference (and in
 * practice bit-identical to fp32(fp64 reference)) in every entry.
 *
 * The device is --device NAME, else $MXACCEL_DEVICE, else auto (make
 * vm-demo runs it on accel:0).
 *
 * Uses only the public API, and is kept short (a few seconds even in a
 * sanitizer build on two slow cores): the fp64 references cover the first
 * DEMO_REF_ROWS rows of C, which is plenty for error statistics.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxaccel.h"

#define DEMO_M 512
#define DEMO_N 384
#define DEMO_K 1024
#define DEMO_REF_ROWS 128	/* rows of C checked against fp64 */
#define DEMO_EXACT_DIM 128	/* rows of A and B the exact GEMM uses */
#define DEMO_RUNS 3		/* timed runs, unless they are slow */
#define DEMO_TIME_BUDGET 0.3	/* seconds; sanitizer builds are slow */
#define DEMO_SEED 20250101ull

_Static_assert(DEMO_EXACT_DIM <= DEMO_REF_ROWS && DEMO_EXACT_DIM <= DEMO_N,
	       "the exact check reads the fp64 reference's corner");

struct demo {
	struct mxa_device *dev;
	float *a, *b;		/* original inputs */
	double *ref;		/* fp64 A * B^T of the originals, first rows */
	uint64_t rng;
};

/* One quantized operand: device storage plus its dequantized copy. */
struct operand {
	struct mxa_matrix mx;
	float *deq;
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "mxaccel-demo: %s: %s\n", what, mxa_strerror(err));
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t demo_rand(struct demo *d)
{
	uint64_t z = (d->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Values in (-1, 1) whose magnitude also varies between blocks of 32, so
 * that the per-block scales actually differ.
 */
static void fill_random(struct demo *d, float *x, size_t rows, size_t cols)
{
	size_t i, j;
	float block_scale = 1;

	for (i = 0; i < rows; i++) {
		for (j = 0; j < cols; j++) {
			if (j % MXA_BLOCK_SIZE == 0)
				block_scale = ldexpf(1, -(int)(demo_rand(d) % 8));
			x[i * cols + j] = block_scale *
				((float)(int32_t)(demo_rand(d) >> 40) -
				 (float)(1 << 23)) / (float)(1 << 23);
		}
	}
}

/* c[i][j] = sum_k a[i][k] * b[j][k] in fp64 (four partial sums for speed). */
static void ref_gemm(const float *a, const float *b, double *c, size_t m,
		     size_t n, size_t k)
{
	size_t i, j, l;
	double s0, s1, s2, s3;

	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			const float *x = a + i * k, *y = b + j * k;

			s0 = s1 = s2 = s3 = 0;
			for (l = 0; l < k; l += 4) {
				s0 += (double)x[l] * y[l];
				s1 += (double)x[l + 1] * y[l + 1];
				s2 += (double)x[l + 2] * y[l + 2];
				s3 += (double)x[l + 3] * y[l + 3];
			}
			c[i * n + j] = (s0 + s1) + (s2 + s3);
		}
	}
}

/* Max absolute error and RMS error relative to the RMS of the reference. */
static void report_error(const char *label, const float *c, const double *ref,
			 size_t count)
{
	double max = 0, err2 = 0, ref2 = 0, e;
	size_t i;

	for (i = 0; i < count; i++) {
		e = fabs(c[i] - ref[i]);
		if (e > max || isnan(e))
			max = e;
		err2 += e * e;
		ref2 += ref[i] * ref[i];
	}
	printf("  vs fp64 of the %s: max |err| %.3g, relative RMS %.3g\n",
	       label, max, sqrt(err2 / ref2));
}

static int alloc_buffer(struct demo *d, size_t size, struct mxa_buffer **buf)
{
	int ret = mxa_buffer_alloc(d->dev, size, buf);

	return ret ? fail("mxa_buffer_alloc", ret) : 0;
}

static void free_buffer(struct mxa_buffer *buf)
{
	if (buf)
		mxa_buffer_free(buf);
}

static void free_operand(struct operand *op)
{
	free_buffer(op->mx.data);
	free_buffer(op->mx.scale);
	free(op->deq);
}

/* Quantize a host fp32 matrix on the device and dequantize it back. */
static int make_operand(struct demo *d, const float *x, uint32_t rows,
			const struct mxa_recipe *r, struct operand *op)
{
	size_t bytes = (size_t)rows * DEMO_K * sizeof(float), data, scale;
	struct mxa_dense dense = {
		.dtype = MXA_DTYPE_F32, .rows = rows, .cols = DEMO_K,
	};
	int ret = -1;

	memset(op, 0, sizeof(*op));
	op->mx = (struct mxa_matrix) {
		.elem = r->elem, .scale_layout = MXA_LAYOUT_PLAIN,
		.rows = rows, .cols = DEMO_K,
	};
	if (mxa_data_row_bytes(r->elem, DEMO_K, &data) ||
	    mxa_scale_bytes(MXA_LAYOUT_PLAIN, rows, DEMO_K, &scale))
		return fail("MX storage size", -EINVAL);
	op->deq = malloc(bytes);
	if (!op->deq)
		return fail("malloc", -ENOMEM);
	if (alloc_buffer(d, bytes, &dense.buf) ||
	    alloc_buffer(d, data * rows, &op->mx.data) ||
	    alloc_buffer(d, scale, &op->mx.scale))
		goto out;
	ret = mxa_buffer_write(dense.buf, 0, x, bytes);
	if (ret) {
		fail("mxa_buffer_write", ret);
		goto out;
	}
	ret = mxa_quantize(d->dev, &dense, &op->mx, r->mode, MXA_PREF_AUTO);
	if (ret) {
		fail("mxa_quantize", ret);
		goto out;
	}
	ret = mxa_dequantize(d->dev, &op->mx, &dense, MXA_PREF_AUTO);
	if (ret) {
		fail("mxa_dequantize", ret);
		goto out;
	}
	ret = mxa_buffer_read(dense.buf, 0, op->deq, bytes);
	if (ret)
		fail("mxa_buffer_read", ret);
out:
	free_buffer(dense.buf);
	return ret ? -1 : 0;
}

static int show_plan(struct demo *d, const struct mxa_op_desc *desc,
		     enum mxa_pref pref)
{
	struct mxa_plan plan;
	int ret;

	memset(&plan, 0, sizeof(plan));
	ret = mxa_plan(d->dev, desc, pref, &plan);
	if (ret)
		return fail("mxa_plan", ret);
	printf("  plan (%s): device %s, kernel %s, %s%s\n    why: %s\n",
	       mxa_pref_name(pref), plan.device, plan.kernel,
	       mxa_support_name(plan.support),
	       plan.exact ? ", bit-exact" : "", plan.reason);
	return 0;
}

/*
 * Run C = A * B^T, keeping the best of up to `runs` runs (fewer once they have taken
 * DEMO_TIME_BUDGET), and fetch C.
 */
static int run_gemm(struct demo *d, const struct operand *a,
		    const struct operand *b, uint32_t m, uint32_t n,
		    enum mxa_pref pref, int *runs, float *c, double *secs)
{
	struct mxa_matrix ma = a->mx, mb = b->mx;
	struct mxa_dense dc = {
		.dtype = MXA_DTYPE_F32, .rows = m, .cols = n,
	};
	double t, total = 0;
	int i, ret;

	/* A leading block of rows is the same storage with fewer rows. */
	ma.rows = m;
	mb.rows = n;
	if (alloc_buffer(d, (size_t)m * n * sizeof(float), &dc.buf))
		return -1;
	*secs = INFINITY;
	for (i = 0; i < *runs && total < DEMO_TIME_BUDGET; i++) {
		t = now();
		ret = mxa_gemm(d->dev, &ma, &mb, &dc, 0, pref);
		t = now() - t;
		if (ret) {
			fail("mxa_gemm", ret);
			goto out;
		}
		if (t < *secs)
			*secs = t;
		total += t;
	}
	*runs = i;
	ret = mxa_buffer_read(dc.buf, 0, c, (size_t)m * n * sizeof(float));
	if (ret)
		fail("mxa_buffer_read", ret);
out:
	free_buffer(dc.buf);
	return ret ? -1 : 0;
}

/* Spacing of fp32 values at |x| (the subnormal spacing below 2^-126). */
static double f32_ulp(float x)
{
	int e = x == 0 ? -126 : ilogbf(x);

	return ldexp(1, (e < -126 ? -126 : e) - 23);
}

/*
 * The exact kernel rounds the exact sum once, so it must lie within half an
 * fp32 ulp of the fp64 reference (which itself is off by far less than
 * that), and usually equals fp32(reference) bit for bit.
 */
static int check_exact(const float *c, const double *ref_deq)
{
	size_t i, j, same = 0, total = 0;
	double ulps, max_ulps = 0;
	float want, got;

	for (i = 0; i < DEMO_EXACT_DIM; i++) {
		for (j = 0; j < DEMO_EXACT_DIM; j++) {
			got = c[i * DEMO_EXACT_DIM + j];
			want = (float)ref_deq[i * DEMO_N + j];
			same += !memcmp(&want, &got, sizeof(want));
			total++;
			ulps = fabs(got - ref_deq[i * DEMO_N + j]) / f32_ulp(got);
			if (ulps > max_ulps || isnan(ulps))
				max_ulps = ulps;
		}
	}
	printf("  max |c - fp64 reference of the dequantized inputs| = %.4f fp32 ulp (rounding alone: <= 0.5)\n",
	       max_ulps);
	printf("  bit-identical to fp32(fp64 reference) in %zu of %zu entries\n",
	       same, total);
	if (!(max_ulps <= 0.5 + 1e-6)) {
		fprintf(stderr, "mxaccel-demo: the exact kernel is off by more than fp32 rounding\n");
		return -1;
	}
	return 0;
}

static int demo_recipe(struct demo *d, const char *name, float *c,
		       double *ref_deq)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_GEMM, .dtype = MXA_DTYPE_F32,
		.m = DEMO_M, .n = DEMO_N, .k = DEMO_K,
	};
	struct operand a, b;
	struct mxa_recipe r;
	int runs = DEMO_RUNS;
	double secs;
	int ret;

	ret = mxa_recipe_parse(name, &r);
	if (ret)
		return fail(name, ret);
	printf("\n%s (%s, scale mode %s):\n", name, mxa_elem_name(r.elem),
	       mxa_scale_mode_name(r.mode));
	desc.a_elem = r.elem;
	desc.b_elem = r.elem;
	ret = -1;
	if (make_operand(d, d->a, DEMO_M, &r, &a))
		goto out_a;
	if (make_operand(d, d->b, DEMO_N, &r, &b))
		goto out_b;
	if (show_plan(d, &desc, MXA_PREF_AUTO) ||
	    run_gemm(d, &a, &b, DEMO_M, DEMO_N, MXA_PREF_AUTO, &runs, c,
		     &secs))
		goto out_b;
	printf("  gemm %ux%ux%u: %.3f ms (best of %d), %.1f GFLOP/s\n",
	       DEMO_M, DEMO_N, DEMO_K, secs * 1e3, runs,
	       2.0 * DEMO_M * DEMO_N * DEMO_K / secs * 1e-9);
	ref_gemm(a.deq, b.deq, ref_deq, DEMO_REF_ROWS, DEMO_N, DEMO_K);
	printf("  errors over the first %u rows of C (%u entries):\n",
	       DEMO_REF_ROWS, DEMO_REF_ROWS * DEMO_N);
	report_error("fp32 inputs (quantization error)", c, d->ref,
		     (size_t)DEMO_REF_ROWS * DEMO_N);
	report_error("dequantized inputs (kernel error)", c, ref_deq,
		     (size_t)DEMO_REF_ROWS * DEMO_N);
	ret = 0;
	if (strcmp(name, "mxfp8"))
		goto out_b;

	/*
	 * The exact kernel on a corner of the same matrices: every entry
	 * must be within fp32 rounding of the fp64 sum (fp64 holds these sums
	 * of short-mantissa products exactly or within far less than half an
	 * fp32 ulp).
	 */
	desc.m = DEMO_EXACT_DIM;
	desc.n = DEMO_EXACT_DIM;
	printf("\n%s with the EMULATED (exact) preference, %ux%ux%u:\n", name,
	       DEMO_EXACT_DIM, DEMO_EXACT_DIM, DEMO_K);
	ret = -1;
	runs = 1;
	if (show_plan(d, &desc, MXA_PREF_EMULATED) ||
	    run_gemm(d, &a, &b, DEMO_EXACT_DIM, DEMO_EXACT_DIM,
		     MXA_PREF_EMULATED, &runs, c, &secs))
		goto out_b;
	ret = check_exact(c, ref_deq);
out_b:
	free_operand(&b);
out_a:
	free_operand(&a);
	return ret;
}

int main(int argc, char **argv)
{
	struct demo d = { .rng = DEMO_SEED };
	struct mxa_device_info info;
	const char *name = getenv("MXACCEL_DEVICE");
	double *ref_deq = NULL;
	float *c = NULL;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--device")) {
		name = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: mxaccel-demo [--device NAME]\n");
		return 2;
	}
	if (!name || !*name)
		name = "auto";
	ret = mxa_device_open(name, &d.dev);
	if (ret) {
		fprintf(stderr, "mxaccel-demo: mxa_device_open(%s): %s\n", name,
			mxa_strerror(ret));
		return 1;
	}
	memset(&info, 0, sizeof(info));
	ret = mxa_device_info(d.dev, &info);
	if (ret) {
		fail("mxa_device_info", ret);
		goto out;
	}
	printf("libmxaccel %s; device %s -> %s: %s\n", mxa_version(), name,
	       info.name, info.description);
	printf("A %ux%u and B %ux%u fp32, random, block magnitudes 2^-7..1\n",
	       DEMO_M, DEMO_K, DEMO_N, DEMO_K);

	ret = -1;
	d.a = malloc((size_t)DEMO_M * DEMO_K * sizeof(float));
	d.b = malloc((size_t)DEMO_N * DEMO_K * sizeof(float));
	d.ref = malloc((size_t)DEMO_REF_ROWS * DEMO_N * sizeof(double));
	ref_deq = malloc((size_t)DEMO_REF_ROWS * DEMO_N * sizeof(double));
	c = malloc((size_t)DEMO_M * DEMO_N * sizeof(float));
	if (!d.a || !d.b || !d.ref || !ref_deq || !c) {
		fail("malloc", -ENOMEM);
		goto out;
	}
	fill_random(&d, d.a, DEMO_M, DEMO_K);
	fill_random(&d, d.b, DEMO_N, DEMO_K);
	ref_gemm(d.a, d.b, d.ref, DEMO_REF_ROWS, DEMO_N, DEMO_K);

	if (demo_recipe(&d, "mxfp8", c, ref_deq) ||
	    demo_recipe(&d, "mxfp4", c, ref_deq))
		goto out;
	ret = 0;
out:
	free(c);
	free(ref_deq);
	free(d.ref);
	free(d.b);
	free(d.a);
	mxa_device_close(d.dev);
	return ret ? 1 : 0;
}
