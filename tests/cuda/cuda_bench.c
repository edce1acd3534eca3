// SPDX-License-Identifier: MIT
/*
 * Timings of the CUDA backend through the public API, one JSON object per
 * line on stdout (tests/bench/cuda_bench.py runs it beside the PyTorch
 * baselines and prints the table; Documentation/bench-cuda.rst).
 *
 *   cuda_bench [--device cuda:0] [--gemm MxNxK ...] [--quant RxC ...]
 *              [--pref native|auto|emulated] [--seconds S]
 *              [--recipes mxfp8,mxfp6_e2m3,mxfp6_e3m2,mxfp4]
 *
 * GEMM: MXFP8 (e4m3 x e4m3) and MXFP4 (e2m1 x e2m1) by default, MXFP6
 * (e2m3 or e3m2, a code per byte) on request, random codes, scales
 * 2^-7 .. 2^7, bf16 C, plain scales.  A batch of n GEMMs of one shape goes
 * to the device on one fence (mxa_gemm_batch), so the time per GEMM is the
 * device's, not a host round trip; the median of three batches is kept.
 * The batch rotates through several operand sets, so that the operands
 * come from device memory, not from L2.
 * Quantize: bf16 and fp32 sources to e4m3 and e2m1 (floor), plain scales;
 * mxa_quantize() is synchronous, so the time of a 1 x 32 quantization (the
 * round trip) is measured too and subtracted.
 */
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
};

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
 * 0 when every name in the comma-separated list is a GEMM recipe;
 * otherwise one line naming the first that is not, and -1.
 */
static int check_recipes(const char *list)
{
	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL) {
		const size_t n = strcspn(p, ",");
		unsigned int r;

		for (r = 0; r < TEST_ARRAY_SIZE(gemm_recipes); r++)
			if (strlen(gemm_recipes[r].name) == n &&
			    !strncmp(p, gemm_recipes[r].name, n))
				break;
		if (r == TEST_ARRAY_SIZE(gemm_recipes)) {
			fprintf(stderr, "cuda_bench: --recipes: '%.*s' is not one of", (int)n, p);
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
 * 2 scales 2^-7 .. 2^7, 3 fp6 codes (six bits).
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

static void bench_gemm(struct mxa_device *dev, const char *recipe,
		       enum mxa_elem elem, uint32_t m, uint32_t n, uint32_t k)
{
	size_t ra = elem == MXA_ELEM_E2M1 ? k / 2 : k;
	size_t set_bytes = (ra + k / 32) * ((size_t)m + n);
	unsigned int sets = (unsigned int)(ROTATE_BYTES / set_bytes + 1);
	struct mxa_matrix a[MAX_SETS], b[MAX_SETS];
	struct mxa_dense c = { .dtype = MXA_DTYPE_BF16, .rows = m, .cols = n };
	struct mxa_gemm_op *ops;
	struct mxa_fence *f;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = elem, .b_elem = elem,
		.dtype = MXA_DTYPE_BF16, .m = m, .n = n, .k = k,
	};
	struct mxa_plan plan;
	double t, times[3];
	unsigned int iters, i, r;
	int ret;

	if (sets > MAX_SETS)
		sets = MAX_SETS;
	for (i = 0; i < sets; i++) {
		a[i] = (struct mxa_matrix){
			.data = upload(dev, ra * m, code_kind(elem)),
			.scale = upload(dev, (size_t)m * (k / 32), 2),
			.elem = elem, .rows = m, .cols = k,
		};
		b[i] = (struct mxa_matrix){
			.data = upload(dev, ra * n, code_kind(elem)),
			.scale = upload(dev, (size_t)n * (k / 32), 2),
			.elem = elem, .rows = n, .cols = k,
		};
	}
	ret = mxa_buffer_alloc(dev, (size_t)m * n * 2, &c.buf);
	if (ret)
		die("alloc C", ret);
	ret = mxa_plan(dev, &d, pref, &plan);
	if (ret)
		die("plan", ret);
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
	printf("{\"op\": \"gemm\", \"recipe\": \"%s\", \"m\": %u, \"n\": %u, \"k\": %u, \"kernel\": \"%s\", \"iters\": %u, \"sets\": %u, \"ms\": %.5f, \"tflops\": %.2f}\n",
	       recipe, m, n, k, plan.kernel, iters, sets, times[1] * 1e3,
	       2.0 * m * n * k / times[1] * 1e-12);
	fflush(stdout);
	free(ops);
	for (i = 0; i < sets; i++) {
		mxa_buffer_free(a[i].data);
		mxa_buffer_free(a[i].scale);
		mxa_buffer_free(b[i].data);
		mxa_buffer_free(b[i].scale);
	}
	mxa_buffer_free(c.buf);
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
	uint32_t gemms[16][3], quants[8][2];
	unsigned int ng = 0, nq = 0, i, r;
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
		} else if (!strcmp(argv[i], "--pref") && i + 1 < (unsigned int)argc &&
			   !mxa_pref_parse(argv[i + 1], &pref)) {
			i++;
		} else if (!strcmp(argv[i], "--recipes") && i + 1 < (unsigned int)argc) {
			recipes = argv[++i];
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < (unsigned int)argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: cuda_bench [--device D] [--gemm MxNxK]... [--quant RxC]... [--pref P] [--seconds S] [--recipes mxfp8,mxfp6_e2m3,mxfp6_e3m2,mxfp4]\n");
			return 2;
		}
	}
	if (check_recipes(recipes))
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
	for (i = 0; i < nq; i++) {
		bench_quant(dev, MXA_DTYPE_BF16, MXA_ELEM_E4M3, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_BF16, MXA_ELEM_E2M1, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_F32, MXA_ELEM_E4M3, quants[i][0], quants[i][1]);
		bench_quant(dev, MXA_DTYPE_F32, MXA_ELEM_E2M1, quants[i][0], quants[i][1]);
	}
	mxa_device_close(dev);
	return 0;
}
