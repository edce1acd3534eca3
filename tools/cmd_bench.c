// SPDX-License-Identifier: MIT
/*
 * mxaccel bench: time GEMM and quantization on random data (fixed seed, so
 * runs are comparable) against peers measured in the same run: OpenBLAS
 * SGEMM on the same matrices dequantized to fp32, oneDNN's bf16 and s8
 * matmul on them (AMX where the CPU has it), memcpy of the quantization
 * input (and of B for small-M GEMM, which streams B), and the machine's
 * peak FMA, BF16-dot, int8-dot and AMX tile rates (bench_machine.c,
 * bench_blas.c, bench_dnnl.c).
 *
 * A measurement and its peers (for GEMM, SGEMM and short runs of the
 * peak loops) are timed alternately, run by run, after one warm-up run
 * each, so all see the same machine (frequency, neighbours); rounds repeat
 * until BENCH_MIN_SECONDS per function and BENCH_MIN_RUNS have passed.
 * Best and median are reported; ratios use the best times, the least
 * disturbed by the rest of the machine, and the highest peaks seen.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"

static const char usage[] =
"usage: mxaccel bench [--op all|gemm|quantize|decode] [options]\n"
"\n"
"  --op OP             all (default): machine peaks, then gemm in mxfp8 and\n"
"                      mxfp4 beside OpenBLAS SGEMM and oneDNN bf16 / s8\n"
"                      matmul on the dequantized operands, then quantize in\n"
"                      mxfp8 beside memcpy; gemm: C = A * B^T with fp32 C only;\n"
"                      quantize: fp32 -> MX (or nvfp4) only; decode: weight-only\n"
"                      GEMM, bf16 A x MX B (default mxfp4), fp32 C, at\n"
"                      1x14336x4096 and 16x14336x4096 (or --m/--n/--k)\n"
"                      beside oneDNN bf16 matmul on bf16 weights and\n"
"                      memcpy of B (not part of all)\n"
"  --recipe NAME       only this recipe (mxfp8, mxfp8_e5m2, mxfp6_e2m3,\n"
"                      mxfp4, ...)\n"
"  --m M --n N --k K   gemm shape (default 2048 each); quantize uses --m\n"
"                      rows and --k columns (default 4096 each)\n"
"  --in-dtype T        quantize's input, f32 (default) or bf16\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated\n"
"  --threads T         worker threads of a cpu device (and of its peers)\n"
"  --json              one JSON object per measurement\n"
"\n"
"Peers run on the cpu device only.  OpenBLAS is forced to its AVX-512\n"
"kernel (OPENBLAS_CORETYPE=SkylakeX) on CPUs with AVX-512 unless\n"
"OPENBLAS_CORETYPE is set.\n";

#define BENCH_SEED 0x6d786163636c0001ull
#define BENCH_MIN_SECONDS 0.5
#define BENCH_MIN_RUNS 3
#define BENCH_MAX_RUNS 100000
#define BENCH_GEMM_DIM 2048
#define BENCH_QUANT_DIM 4096

struct bench_ctx {
	struct mxa_device *dev;
	const char *recipe_name;
	struct mxa_recipe recipe;
	enum mxa_pref pref;
	uint32_t m, n, k;		/* as given, 0 = the op's default */
	enum mxa_dtype in_dtype;	/* quantize's input */
	unsigned int threads;
	char device[MXA_NAME_MAX];
	bool peers;			/* cpu device: measure the peers */
	bool json;
	uint64_t rng;
	struct bench_peaks peaks;
	const char *blas_core;
	bool blas_forced;
	bool amx_isa;			/* the cpu device runs its amx level */
};

/* --- measuring ------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_fn {
	int (*fn)(void *arg);
	void *arg;
	const char *what;
	struct bench_times *t;
	double *samples;
};

static void summarize(struct bench_fn *f, unsigned int n)
{
	qsort(f->samples, n, sizeof(double), cmp_double);
	f->t->best = f->samples[0];
	f->t->median = n % 2 ? f->samples[n / 2] :
		       (f->samples[n / 2 - 1] + f->samples[n / 2]) / 2;
	f->t->q1 = f->samples[n / 4];
	f->t->q3 = f->samples[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
	f->t->runs = n;
}

/* Time fns[0..n) alternately (see the top of this file). */
static int bench_alternate(struct bench_fn *fns, unsigned int n)
{
	unsigned int i, runs = 0;
	double total = 0, start;
	int ret = 0;

	for (i = 0; i < n; i++) {
		fns[i].samples = malloc(BENCH_MAX_RUNS * sizeof(double));
		if (!fns[i].samples) {
			cli_error("out of memory");
			ret = -1;
			goto out;
		}
	}
	for (i = 0; i < n && !ret; i++) {
		ret = fns[i].fn(fns[i].arg);
		if (ret)
			cli_error("%s: %s", fns[i].what, mxa_strerror(ret));
	}
	while (!ret && runs < BENCH_MAX_RUNS &&
	       (total < BENCH_MIN_SECONDS * n || runs < BENCH_MIN_RUNS)) {
		for (i = 0; i < n && !ret; i++) {
			start = now();
			ret = fns[i].fn(fns[i].arg);
			fns[i].samples[runs] = now() - start;
			total += fns[i].samples[runs];
			if (ret)
				cli_error("%s: %s", fns[i].what,
					  mxa_strerror(ret));
		}
		runs++;
	}
	if (!ret)
		for (i = 0; i < n; i++)
			summarize(&fns[i], runs);
	ret = ret ? -1 : 0;
out:
	for (i = 0; i < n; i++)
		free(fns[i].samples);
	return ret;
}

/* --- data ----------------------------------------------------------------- */

/* splitmix64: tiny, seedable, good enough for test matrices. */
static uint64_t bench_rand(struct bench_ctx *ctx)
{
	uint64_t z = (ctx->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * A device buffer of rows x cols values uniform in [-1, 1), fp32 or bf16
 * (the fp32 values' top halves: the bench needs spread values, not a
 * particular rounding).
 */
static int random_dense(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
			enum mxa_dtype dtype, struct mxa_dense *d)
{
	size_t i, count = (size_t)rows * cols, bytes;
	uint16_t *half;
	float *host;
	int ret;

	if (cli_dense_bytes(MXA_DTYPE_F32, rows, cols, &bytes))
		return -1;
	host = malloc(bytes);
	if (!host) {
		cli_error("out of memory (%zu bytes)", bytes);
		return -1;
	}
	for (i = 0; i < count; i++)
		host[i] = (float)((int64_t)(bench_rand(ctx) >> 40) - (1 << 23)) /
			  (float)(1 << 23);
	if (dtype == MXA_DTYPE_BF16) {
		half = (uint16_t *)host;
		for (i = 0; i < count; i++) {
			uint32_t bits;

			memcpy(&bits, &host[i], 4);
			half[i] = (uint16_t)(bits >> 16);
		}
		bytes = count * 2;
	}
	memset(d, 0, sizeof(*d));
	ret = cli_buffer_new(ctx->dev, bytes, &d->buf);
	if (!ret) {
		ret = mxa_buffer_write(d->buf, 0, host, bytes);
		if (ret) {
			cli_error("cannot copy to the device: %s",
				  mxa_strerror(ret));
			cli_buffer_free(d->buf);
			d->buf = NULL;
			ret = -1;
		}
	}
	free(host);
	d->dtype = dtype;
	d->rows = rows;
	d->cols = cols;
	return ret;
}

/* Empty MX storage for rows x cols in the bench recipe. */
static int new_matrix(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
		      struct mxa_matrix *mat)
{
	size_t data_bytes, scale_bytes;

	int ret;

	memset(mat, 0, sizeof(*mat));
	mat->elem = ctx->recipe.elem;
	mat->scale_type = ctx->recipe.scale_type;	/* UE4M3 for nvfp4 */
	mat->scale_layout = MXA_LAYOUT_PLAIN;
	mat->rows = rows;
	mat->cols = cols;
	ret = mxa_matrix_bytes(mat, &data_bytes, &scale_bytes);
	if (ret) {
		cli_error("mxa_matrix_bytes(%ux%u): %s", rows, cols,
			  mxa_strerror(ret));
		return -1;
	}
	if (cli_buffer_new(ctx->dev, data_bytes, &mat->data) ||
	    cli_buffer_new(ctx->dev, scale_bytes, &mat->scale))
		return -1;
	return 0;
}

static void free_matrix(struct mxa_matrix *mat)
{
	cli_buffer_free(mat->data);
	cli_buffer_free(mat->scale);
}

static int plan_kernel(struct bench_ctx *ctx, const struct mxa_op_desc *desc,
		       char *kernel)
{
	struct mxa_plan plan;
	int ret;

	if (cli_check_support(ctx->dev, desc, ctx->pref))
		return -1;
	memset(&plan, 0, sizeof(plan));
	ret = mxa_plan(ctx->dev, desc, ctx->pref, &plan);
	if (ret) {
		cli_error("mxa_plan: %s", mxa_strerror(ret));
		return -1;
	}
	snprintf(kernel, MXA_NAME_MAX, "%s", plan.kernel);
	return 0;
}

/* --- reporting ------------------------------------------------------------ */

static double rate(double work, double seconds)
{
	return seconds > 0 ? work / seconds * 1e-9 : NAN;
}

/* The target ratio of design section 8 for this recipe, or NAN. */
static double gemm_target(const struct mxa_recipe *r)
{
	if (r->elem == MXA_ELEM_E4M3)
		return 1.2;
	if (r->elem == MXA_ELEM_E2M1 || r->elem == MXA_ELEM_E2M3)
		return 2.0;
	return NAN;
}

static double quantize_target(const struct mxa_recipe *r)
{
	return r->elem == MXA_ELEM_E4M3 ? 0.6 : NAN;
}

static const char *verdict(double ratio, double target)
{
	if (isnan(target) || isnan(ratio))
		return "";
	return ratio >= target ? " (target met)" : " (target MISSED)";
}

static void json_head(struct bench_ctx *ctx, struct cli_json *j,
		      const char *op, const char *kernel, uint32_t m,
		      uint32_t n, uint32_t k)
{
	cli_json_init(j, stdout);
	cli_json_object(j, NULL);
	cli_json_str(j, "op", op);
	cli_json_str(j, "recipe", ctx->recipe_name);
	cli_json_str(j, "device", ctx->device);
	cli_json_str(j, "kernel", kernel);
	cli_json_uint(j, "m", m);
	cli_json_uint(j, "n", n);
	cli_json_uint(j, "k", k);
	cli_json_uint(j, "threads", ctx->threads);
}

static void json_times(struct cli_json *j, const struct bench_times *t,
		       double work, const char *unit)
{
	char key[32];

	cli_json_double(j, "seconds", t->best);
	cli_json_double(j, "median_seconds", t->median);
	cli_json_double(j, "q1_seconds", t->q1);
	cli_json_double(j, "q3_seconds", t->q3);
	cli_json_uint(j, "runs", t->runs);
	cli_json_double(j, unit, rate(work, t->best));
	snprintf(key, sizeof(key), "median_%s", unit);
	cli_json_double(j, key, rate(work, t->median));
}

/*
 * The peak that bounds a recipe's kernel: AMX-BF16 tiles (the amx level
 * runs every pair on them), int8 dot, bf16 dot, or FMA.
 */
static double recipe_peak(const struct bench_ctx *ctx, const char **kind)
{
	enum mxa_elem e = ctx->recipe.elem;

	if (ctx->amx_isa && ctx->peaks.amx_bf16) {
		*kind = "amx-bf16";
		return ctx->peaks.amx_bf16;
	}
	if ((e == MXA_ELEM_E2M1 || e == MXA_ELEM_E2M3) && ctx->peaks.int8) {
		*kind = "int8-dot";
		return ctx->peaks.int8;
	}
	if (ctx->peaks.bf16) {
		*kind = "bf16-dot";
		return ctx->peaks.bf16;
	}
	*kind = "fp32-fma";
	return ctx->peaks.fma ? ctx->peaks.fma : NAN;
}

struct gemm_result {
	char kernel[MXA_NAME_MAX];
	struct bench_times ours, sgemm, dnnl[2], copy;
	struct bench_dnnl *dnnl_peer[2];	/* bf16, s8; NULL if none */
	char dnnl_why[2][128];
	double flops;
	double bytes, copy_bytes;	/* small M: MX bytes read, B copied */
	double max_rel_diff;		/* |ours - sgemm| / max |sgemm| */
};

static const char *const dnnl_names[2] = { "bf16", "s8" };

/* GFLOP/s of peer i (best or median), NAN where it did not run. */
static double dnnl_rate(const struct gemm_result *r, unsigned int i,
			bool median)
{
	if (!r->dnnl_peer[i])
		return NAN;
	return rate(r->flops, median ? r->dnnl[i].median : r->dnnl[i].best);
}

static void report_gemm(struct bench_ctx *ctx, const struct gemm_result *r,
			uint32_t m, uint32_t n, uint32_t k)
{
	double ours = rate(r->flops, r->ours.best);
	double peer = ctx->peers ? rate(r->flops, r->sgemm.best) : NAN;
	double peer_med = ctx->peers ? rate(r->flops, r->sgemm.median) : NAN;
	double ratio = ours / peer, target = gemm_target(&ctx->recipe);
	const char *kind = "none";
	double peak = ctx->peers ? recipe_peak(ctx, &kind) : NAN;
	struct cli_json j;
	unsigned int i;

	if (ctx->json) {
		json_head(ctx, &j, "gemm", r->kernel, m, n, k);
		json_times(&j, &r->ours, r->flops, "gflops");
		cli_json_double(&j, "sgemm_gflops", peer);
		cli_json_double(&j, "sgemm_median_gflops", peer_med);
		cli_json_str(&j, "sgemm_core", ctx->peers ? ctx->blas_core :
			     NULL);
		cli_json_double(&j, "ratio_vs_sgemm", ratio);
		cli_json_double(&j, "median_ratio_vs_sgemm",
				rate(r->flops, r->ours.median) / peer_med);
		cli_json_double(&j, "target_ratio", target);
		cli_json_double(&j, "peak_gflops", peak);
		cli_json_str(&j, "peak_kind", kind);
		cli_json_double(&j, "pct_of_peak", 100 * ours / peak);
		cli_json_double(&j, "fma_peak_gflops",
				ctx->peers ? ctx->peaks.fma : NAN);
		cli_json_double(&j, "sgemm_pct_of_fma_peak",
				100 * peer / ctx->peaks.fma);
		cli_json_double(&j, "max_rel_diff_vs_sgemm",
				ctx->peers ? r->max_rel_diff : NAN);
		cli_json_double(&j, "onednn_bf16_gflops", dnnl_rate(r, 0, false));
		cli_json_double(&j, "onednn_bf16_median_gflops",
				dnnl_rate(r, 0, true));
		cli_json_str(&j, "onednn_bf16_impl", r->dnnl_peer[0] ?
			     bench_dnnl_impl(r->dnnl_peer[0]) : NULL);
		cli_json_double(&j, "ratio_vs_onednn_bf16",
				ours / dnnl_rate(r, 0, false));
		cli_json_double(&j, "median_ratio_vs_onednn_bf16",
				rate(r->flops, r->ours.median) /
				dnnl_rate(r, 0, true));
		cli_json_double(&j, "onednn_s8_gops", dnnl_rate(r, 1, false));
		cli_json_double(&j, "onednn_s8_median_gops",
				dnnl_rate(r, 1, true));
		cli_json_str(&j, "onednn_s8_impl", r->dnnl_peer[1] ?
			     bench_dnnl_impl(r->dnnl_peer[1]) : NULL);
		cli_json_double(&j, "ratio_vs_onednn_s8",
				ours / dnnl_rate(r, 1, false));
		cli_json_double(&j, "median_pct_of_peak",
				100 * rate(r->flops, r->ours.median) / peak);
		if (r->copy_bytes) {
			cli_json_double(&j, "read_gbps",
					rate(r->bytes, r->ours.best));
			cli_json_double(&j, "median_read_gbps",
					rate(r->bytes, r->ours.median));
			cli_json_double(&j, "memcpy_read_gbps",
					rate(r->copy_bytes, r->copy.best));
			cli_json_double(&j, "pct_of_memcpy",
					100 * rate(r->bytes, r->ours.best) /
					rate(r->copy_bytes, r->copy.best));
		}
		cli_json_end(&j);
		return;
	}
	printf("gemm %s %ux%ux%u on %s, kernel %s, %u thread%s: best %.3f ms %.1f GFLOP/s, median %.3f ms %.1f GFLOP/s (%u runs)\n",
	       ctx->recipe_name, m, n, k, ctx->device, r->kernel,
	       ctx->threads, ctx->threads == 1 ? "" : "s", r->ours.best * 1e3,
	       ours, r->ours.median * 1e3, rate(r->flops, r->ours.median),
	       r->ours.runs);
	if (!ctx->peers)
		return;
	printf("  OpenBLAS SGEMM (%s) on the dequantized data: best %.3f ms %.1f GFLOP/s, median %.1f GFLOP/s (%.0f%% of FMA peak)\n",
	       ctx->blas_core, r->sgemm.best * 1e3, peer, peer_med,
	       100 * peer / ctx->peaks.fma);
	printf("  ratio %.2fx SGEMM%s, %.0f%% of the %s peak, %.0f%% of the FMA peak; max |ours - SGEMM| / max |C| = %.2g\n",
	       ratio, verdict(ratio, target), 100 * ours / peak, kind,
	       100 * ours / ctx->peaks.fma, r->max_rel_diff);
	for (i = 0; i < 2; i++) {
		if (!r->dnnl_peer[i]) {
			printf("  oneDNN %s matmul: %s\n", dnnl_names[i],
			       r->dnnl_why[i]);
			continue;
		}
		printf("  oneDNN %s matmul (%s) on the dequantized data: best %.3f ms %.1f GFLOP/s, median %.1f GFLOP/s; ratio %.2fx (median %.2fx)%s\n",
		       dnnl_names[i], bench_dnnl_impl(r->dnnl_peer[i]),
		       r->dnnl[i].best * 1e3, dnnl_rate(r, i, false),
		       dnnl_rate(r, i, true), ours / dnnl_rate(r, i, false),
		       rate(r->flops, r->ours.median) / dnnl_rate(r, i, true),
		       i == 0 && ctx->amx_isa ?
		       verdict(rate(r->flops, r->ours.median) /
			       dnnl_rate(r, i, true), m <= 64 ? 3.0 : 1.0) : "");
	}
	if (r->copy_bytes)
		printf("  MX bytes read: best %.1f GB/s, median %.1f GB/s; memcpy of B %.1f GB/s read; %.0f%% of memcpy%s\n",
		       rate(r->bytes, r->ours.best),
		       rate(r->bytes, r->ours.median),
		       rate(r->copy_bytes, r->copy.best),
		       100 * rate(r->bytes, r->ours.best) /
		       rate(r->copy_bytes, r->copy.best),
		       verdict(rate(r->bytes, r->ours.best) /
			       rate(r->copy_bytes, r->copy.best), 0.6));
}

/* --- gemm ----------------------------------------------------------------- */

struct gemm_run {
	struct mxa_device *dev;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	enum mxa_pref pref;
};

static int gemm_once(void *arg)
{
	struct gemm_run *g = arg;

	return mxa_gemm(g->dev, &g->a, &g->b, &g->c, 0, g->pref);
}

/* A and B are random fp32 data quantized by the library in the recipe. */
static int random_matrix(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
			 struct mxa_matrix *mat)
{
	struct mxa_dense src;
	int ret;

	if (random_dense(ctx, rows, cols, MXA_DTYPE_F32, &src))
		return -1;
	ret = new_matrix(ctx, rows, cols, mat);
	if (!ret) {
		ret = mxa_quantize(ctx->dev, &src, mat, ctx->recipe.mode,
				   MXA_PREF_AUTO);
		if (ret) {
			cli_error("mxa_quantize: %s", mxa_strerror(ret));
			ret = -1;
		}
	}
	cli_buffer_free(src.buf);
	return ret;
}

/* The MX matrix dequantized to fp32 in host memory (freed by the caller). */
static float *dequantized(struct bench_ctx *ctx, const struct mxa_matrix *mx)
{
	struct mxa_dense d = { .dtype = MXA_DTYPE_F32, .rows = mx->rows,
			       .cols = mx->cols };
	size_t bytes;
	float *host = NULL;
	int ret;

	if (cli_dense_bytes(MXA_DTYPE_F32, mx->rows, mx->cols, &bytes) ||
	    cli_buffer_new(ctx->dev, bytes, &d.buf))
		return NULL;
	ret = mxa_dequantize(ctx->dev, mx, &d, MXA_PREF_AUTO);
	if (!ret) {
		host = malloc(bytes);
		ret = host ? mxa_buffer_read(d.buf, 0, host, bytes) : -ENOMEM;
	}
	if (ret) {
		cli_error("dequantizing for SGEMM: %s", mxa_strerror(ret));
		free(host);
		host = NULL;
	}
	cli_buffer_free(d.buf);
	return host;
}

static double max_rel_diff(struct mxa_buffer *c, const float *ref,
			   size_t count)
{
	float *ours = malloc(count * sizeof(float));
	double big = 0, diff = 0;
	size_t i;

	if (!ours || mxa_buffer_read(c, 0, ours, count * sizeof(float))) {
		free(ours);
		return NAN;
	}
	for (i = 0; i < count; i++) {
		big = fmax(big, fabs(ref[i]));
		diff = fmax(diff, fabs((double)ours[i] - ref[i]));
	}
	free(ours);
	return big > 0 ? diff / big : diff;
}

static int bench_gemm(struct bench_ctx *ctx)
{
	uint32_t m = ctx->m ? ctx->m : BENCH_GEMM_DIM;
	uint32_t n = ctx->n ? ctx->n : BENCH_GEMM_DIM;
	uint32_t k = ctx->k ? ctx->k : BENCH_GEMM_DIM;
	struct mxa_op_desc desc = {
		.op = MXA_OP_GEMM, .a_elem = ctx->recipe.elem,
		.b_elem = ctx->recipe.elem, .dtype = MXA_DTYPE_F32,
		.m = m, .n = n, .k = k,
	};
	struct gemm_run g = { .dev = ctx->dev, .pref = ctx->pref };
	struct bench_sgemm s = { .m = m, .n = n, .k = k };
	struct gemm_result r = { .flops = 2.0 * m * n * k };
	struct bench_times peak_times;
	struct bench_fn fns[6] = {
		{ .fn = gemm_once, .arg = &g, .what = "mxa_gemm", .t = &r.ours },
		{ .fn = bench_sgemm_once, .arg = &s, .what = "cblas_sgemm",
		  .t = &r.sgemm },
		{ .fn = bench_peaks_once, .arg = &ctx->peaks, .what = "peaks",
		  .t = &peak_times },
	};
	struct bench_copy *copy = NULL;
	unsigned int nfn = 3, i;
	size_t c_bytes;
	int ret = -1;

	if (plan_kernel(ctx, &desc, r.kernel))
		return -1;
	if (random_matrix(ctx, m, k, &g.a) || random_matrix(ctx, n, k, &g.b) ||
	    cli_dense_bytes(MXA_DTYPE_F32, m, n, &c_bytes) ||
	    cli_buffer_new(ctx->dev, c_bytes, &g.c.buf))
		goto out;
	g.c.dtype = MXA_DTYPE_F32;
	g.c.rows = m;
	g.c.cols = n;
	if (ctx->peers) {
		s.a = dequantized(ctx, &g.a);
		s.b = dequantized(ctx, &g.b);
		s.c = malloc(c_bytes);
		if (!s.a || !s.b || !s.c) {
			cli_error("out of memory for the SGEMM peer");
			goto out;
		}
		for (i = 0; i < 2; i++) {
			r.dnnl_peer[i] = bench_dnnl_new(i == 1, s.a, s.b, m, n,
							k, ctx->threads,
							r.dnnl_why[i],
							sizeof(r.dnnl_why[i]));
			if (r.dnnl_peer[i])
				fns[nfn++] = (struct bench_fn){
					.fn = bench_dnnl_once,
					.arg = r.dnnl_peer[i],
					.what = "oneDNN matmul", .t = &r.dnnl[i],
				};
		}
		/* Small M streams B: measure against copying B's bytes. */
		if (m <= 64) {
			r.bytes = (double)mxa_buffer_size(g.a.data) +
				  mxa_buffer_size(g.a.scale) +
				  mxa_buffer_size(g.b.data) +
				  mxa_buffer_size(g.b.scale);
			copy = bench_copy_new(mxa_buffer_size(g.b.data) +
					      mxa_buffer_size(g.b.scale),
					      ctx->threads);
			if (!copy) {
				cli_error("out of memory for the memcpy peer");
				goto out;
			}
			/* Read bytes only: memcpy reads size, writes size. */
			r.copy_bytes = (double)mxa_buffer_size(g.b.data) +
				       mxa_buffer_size(g.b.scale);
			fns[nfn++] = (struct bench_fn){
				.fn = bench_copy_once, .arg = copy,
				.what = "memcpy", .t = &r.copy,
			};
		}
	}
	/* The peaks too run alternately: the best of the run is kept. */
	if (bench_alternate(fns, ctx->peers ? nfn : 1))
		goto out;
	if (ctx->peers)
		r.max_rel_diff = max_rel_diff(g.c.buf, s.c, (size_t)m * n);
	report_gemm(ctx, &r, m, n, k);
	ret = 0;
out:
	bench_copy_free(copy);
	bench_dnnl_free(r.dnnl_peer[0]);
	bench_dnnl_free(r.dnnl_peer[1]);
	free((void *)s.a);
	free((void *)s.b);
	free(s.c);
	cli_buffer_free(g.c.buf);
	free_matrix(&g.b);
	free_matrix(&g.a);
	return ret;
}

/* --- decode (weight-only GEMM) --------------------------------------------- */

/* Design section 8: decode with MXFP4 weights vs oneDNN bf16, and memcpy. */
#define DECODE_TARGET_RATIO 3.0
#define DECODE_TARGET_PCT 60.0

static const uint32_t decode_shapes[][3] = {
	{ 1, 14336, 4096 }, { 16, 14336, 4096 },
};

struct decode_run {
	struct mxa_device *dev;
	struct mxa_dense a, c;
	struct mxa_matrix b;
	enum mxa_pref pref;
};

static int decode_once(void *arg)
{
	struct decode_run *d = arg;

	return mxa_gemm_weight_only(d->dev, &d->a, &d->b, &d->c, 0, d->pref);
}

/* A as bf16 on the device; *host gets its values as fp32 for the peer. */
static int random_bf16(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
		       struct mxa_dense *d, float **host)
{
	size_t i, count = (size_t)rows * cols;
	uint16_t *h = malloc(count * 2);
	float *f = malloc(count * 4);
	int ret = -1;

	memset(d, 0, sizeof(*d));
	if (!h || !f) {
		cli_error("out of memory for A");
		goto out;
	}
	for (i = 0; i < count; i++) {
		float v = (float)((int64_t)(bench_rand(ctx) >> 40) - (1 << 23)) /
			  (float)(1 << 23);
		uint32_t w;

		memcpy(&w, &v, 4);
		h[i] = (uint16_t)(w >> 16);	/* truncated: any bf16 will do */
		w = (uint32_t)h[i] << 16;
		memcpy(&f[i], &w, 4);
	}
	if (cli_buffer_new(ctx->dev, count * 2, &d->buf))
		goto out;
	ret = mxa_buffer_write(d->buf, 0, h, count * 2);
	if (ret) {
		cli_error("cannot copy to the device: %s", mxa_strerror(ret));
		ret = -1;
		goto out;
	}
	d->dtype = MXA_DTYPE_BF16;
	d->rows = rows;
	d->cols = cols;
	*host = f;
	f = NULL;
out:
	free(h);
	free(f);
	return ret;
}

static void report_decode(struct bench_ctx *ctx, const struct gemm_result *r,
			  uint32_t m, uint32_t n, uint32_t k)
{
	double ours = rate(r->flops, r->ours.best);
	double ours_med = rate(r->flops, r->ours.median);
	double dnnl = dnnl_rate(r, 0, false), dnnl_med = dnnl_rate(r, 0, true);
	double gbps = rate(r->bytes, r->ours.best);
	double gbps_med = rate(r->bytes, r->ours.median);
	double copy = ctx->peers ? rate(r->copy_bytes, r->copy.best) : NAN;
	double copy_med = ctx->peers ? rate(r->copy_bytes, r->copy.median) :
			  NAN;
	struct cli_json j;

	if (ctx->json) {
		json_head(ctx, &j, "decode", r->kernel, m, n, k);
		cli_json_str(&j, "a_dtype", "bf16");
		json_times(&j, &r->ours, r->flops, "gflops");
		cli_json_double(&j, "bytes_read", r->bytes);
		cli_json_double(&j, "read_gbps", gbps);
		cli_json_double(&j, "median_read_gbps", gbps_med);
		cli_json_double(&j, "memcpy_read_gbps", copy);
		cli_json_double(&j, "memcpy_median_read_gbps", copy_med);
		cli_json_double(&j, "pct_of_memcpy", 100 * gbps / copy);
		cli_json_double(&j, "median_pct_of_memcpy",
				100 * gbps_med / copy_med);
		cli_json_double(&j, "target_pct_of_memcpy", DECODE_TARGET_PCT);
		cli_json_double(&j, "onednn_bf16_gflops", dnnl);
		cli_json_double(&j, "onednn_bf16_median_gflops", dnnl_med);
		cli_json_str(&j, "onednn_bf16_impl", r->dnnl_peer[0] ?
			     bench_dnnl_impl(r->dnnl_peer[0]) : NULL);
		cli_json_double(&j, "ratio_vs_onednn_bf16", ours / dnnl);
		cli_json_double(&j, "median_ratio_vs_onednn_bf16",
				ours_med / dnnl_med);
		cli_json_double(&j, "target_ratio", DECODE_TARGET_RATIO);
		cli_json_end(&j);
		return;
	}
	printf("decode (weight-only) bf16 x %s %ux%ux%u on %s, kernel %s, %u thread%s: best %.3f ms %.1f GFLOP/s, median %.3f ms (q1 %.3f, q3 %.3f; %u runs)\n",
	       ctx->recipe_name, m, n, k, ctx->device, r->kernel, ctx->threads,
	       ctx->threads == 1 ? "" : "s", r->ours.best * 1e3, ours,
	       r->ours.median * 1e3, r->ours.q1 * 1e3, r->ours.q3 * 1e3,
	       r->ours.runs);
	if (!ctx->peers)
		return;
	printf("  bytes read (A, B codes and scales): best %.1f GB/s, median %.1f GB/s; memcpy of B %.1f GB/s read (median %.1f); %.0f%% of memcpy (median %.0f%%)%s\n",
	       gbps, gbps_med, copy, copy_med, 100 * gbps / copy,
	       100 * gbps_med / copy_med,
	       verdict(gbps_med / copy_med, DECODE_TARGET_PCT / 100));
	if (!r->dnnl_peer[0]) {
		printf("  oneDNN bf16 matmul: %s\n", r->dnnl_why[0]);
		return;
	}
	printf("  oneDNN bf16 matmul (%s) on bf16 weights: best %.3f ms, median %.3f ms; ratio %.2fx (median %.2fx)%s\n",
	       bench_dnnl_impl(r->dnnl_peer[0]), r->dnnl[0].best * 1e3,
	       r->dnnl[0].median * 1e3, ours / dnnl, ours_med / dnnl_med,
	       verdict(ours_med / dnnl_med, DECODE_TARGET_RATIO));
}

static int bench_decode_shape(struct bench_ctx *ctx, uint32_t m, uint32_t n,
			      uint32_t k)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .b_elem = ctx->recipe.elem,
		.a_dtype = MXA_DTYPE_BF16, .dtype = MXA_DTYPE_F32,
		.m = m, .n = n, .k = k,
	};
	struct decode_run d = { .dev = ctx->dev, .pref = ctx->pref };
	struct gemm_result r = { .flops = 2.0 * m * n * k };
	struct bench_fn fns[3] = {
		{ .fn = decode_once, .arg = &d, .what = "mxa_gemm_weight_only",
		  .t = &r.ours },
	};
	struct bench_copy *copy = NULL;
	float *a_host = NULL, *b_host = NULL;
	unsigned int nfn = 1;
	size_t c_bytes;
	int ret = -1;

	if (plan_kernel(ctx, &desc, r.kernel))
		return -1;
	if (random_bf16(ctx, m, k, &d.a, &a_host) ||
	    random_matrix(ctx, n, k, &d.b) ||
	    cli_dense_bytes(MXA_DTYPE_F32, m, n, &c_bytes) ||
	    cli_buffer_new(ctx->dev, c_bytes, &d.c.buf))
		goto out;
	d.c.dtype = MXA_DTYPE_F32;
	d.c.rows = m;
	d.c.cols = n;
	/* What the kernel must read: A, then B's codes and scales once. */
	r.bytes = (double)m * k * 2 + mxa_buffer_size(d.b.data) +
		  mxa_buffer_size(d.b.scale);
	if (ctx->peers) {
		b_host = dequantized(ctx, &d.b);
		if (!b_host)
			goto out;
		r.dnnl_peer[0] = bench_dnnl_new(false, a_host, b_host, m, n, k,
						ctx->threads, r.dnnl_why[0],
						sizeof(r.dnnl_why[0]));
		free(b_host);
		b_host = NULL;
		if (r.dnnl_peer[0])
			fns[nfn++] = (struct bench_fn){
				.fn = bench_dnnl_once, .arg = r.dnnl_peer[0],
				.what = "oneDNN matmul", .t = &r.dnnl[0],
			};
		/* memcpy reads B's bytes once (and writes them). */
		r.copy_bytes = (double)mxa_buffer_size(d.b.data) +
			       mxa_buffer_size(d.b.scale);
		copy = bench_copy_new((size_t)r.copy_bytes, ctx->threads);
		if (!copy) {
			cli_error("out of memory for the memcpy peer");
			goto out;
		}
		fns[nfn++] = (struct bench_fn){
			.fn = bench_copy_once, .arg = copy, .what = "memcpy",
			.t = &r.copy,
		};
	}
	if (bench_alternate(fns, nfn))
		goto out;
	report_decode(ctx, &r, m, n, k);
	ret = 0;
out:
	bench_copy_free(copy);
	bench_dnnl_free(r.dnnl_peer[0]);
	free(a_host);
	cli_buffer_free(d.a.buf);
	cli_buffer_free(d.c.buf);
	free_matrix(&d.b);
	return ret;
}

static int bench_decode(struct bench_ctx *ctx)
{
	size_t i;

	if (ctx->recipe.scale_type != MXA_SCALE_E8M0) {
		cli_error("--op decode: recipe %s: only MX (E8M0) recipes are offered",
			  ctx->recipe_name);
		return -1;
	}
	if (ctx->m || ctx->n || ctx->k)
		return bench_decode_shape(ctx, ctx->m ? ctx->m : 1,
					  ctx->n ? ctx->n : 14336,
					  ctx->k ? ctx->k : 4096);
	for (i = 0; i < ARRAY_SIZE(decode_shapes); i++)
		if (bench_decode_shape(ctx, decode_shapes[i][0],
				       decode_shapes[i][1],
				       decode_shapes[i][2]))
			return -1;
	return 0;
}

/* --- quantize ------------------------------------------------------------- */

struct quantize_run {
	struct mxa_device *dev;
	struct mxa_dense src;
	struct mxa_matrix dst;
	enum mxa_scale_mode mode;
	enum mxa_pref pref;
};

static int quantize_once(void *arg)
{
	struct quantize_run *q = arg;

	return mxa_quantize(q->dev, &q->src, &q->dst, q->mode, q->pref);
}

static void report_quantize(struct bench_ctx *ctx, const char *kernel,
			    uint32_t m, uint32_t k, double bytes,
			    const struct bench_times *ours,
			    double copy_bytes, const struct bench_times *copy)
{
	double gbps = rate(bytes, ours->best);
	double peer = ctx->peers ? rate(copy_bytes, copy->best) : NAN;
	double ratio = gbps / peer, target = quantize_target(&ctx->recipe);
	struct cli_json j;

	if (ctx->json) {
		json_head(ctx, &j, "quantize", kernel, m, 0, k);
		cli_json_str(&j, "in_dtype", mxa_dtype_name(ctx->in_dtype));
		json_times(&j, ours, bytes, "gbps");
		cli_json_double(&j, "memcpy_gbps", peer);
		cli_json_double(&j, "memcpy_median_gbps",
				ctx->peers ? rate(copy_bytes, copy->median) :
				NAN);
		cli_json_double(&j, "ratio_vs_memcpy", ratio);
		cli_json_double(&j, "median_ratio_vs_memcpy",
				rate(bytes, ours->median) /
				rate(copy_bytes, copy->median));
		cli_json_double(&j, "target_ratio", target);
		cli_json_end(&j);
		return;
	}
	printf("quantize %s %ux%u %s on %s, kernel %s, %u thread%s: best %.3f ms %.1f GB/s, median %.3f ms %.1f GB/s (%u runs)\n",
	       ctx->recipe_name, m, k, mxa_dtype_name(ctx->in_dtype),
	       ctx->device, kernel, ctx->threads,
	       ctx->threads == 1 ? "" : "s", ours->best * 1e3, gbps,
	       ours->median * 1e3, rate(bytes, ours->median), ours->runs);
	if (!ctx->peers)
		return;
	printf("  memcpy of the %s input: best %.3f ms %.1f GB/s, median %.1f GB/s; ratio %.2f of memcpy%s\n",
	       mxa_dtype_name(ctx->in_dtype), copy->best * 1e3, peer,
	       rate(copy_bytes, copy->median), ratio, verdict(ratio, target));
}

static int bench_quantize(struct bench_ctx *ctx)
{
	uint32_t m = ctx->m ? ctx->m : BENCH_QUANT_DIM;
	uint32_t k = ctx->k ? ctx->k : BENCH_QUANT_DIM;
	struct mxa_op_desc desc = {
		.op = MXA_OP_QUANTIZE, .a_elem = ctx->recipe.elem,
		.b_elem = ctx->recipe.elem, .dtype = ctx->in_dtype,
		.mode = ctx->recipe.mode, .m = m, .k = k,
		.a_scale_type = ctx->recipe.scale_type,
	};
	struct quantize_run q = {
		.dev = ctx->dev, .mode = ctx->recipe.mode, .pref = ctx->pref,
	};
	struct bench_times ours = { 0 }, copy = { 0 };
	struct bench_fn fns[2] = {
		{ .fn = quantize_once, .arg = &q, .what = "mxa_quantize",
		  .t = &ours },
		{ .fn = bench_copy_once, .what = "memcpy", .t = &copy },
	};
	char kernel[MXA_NAME_MAX];
	double bytes, copy_bytes = 0;
	int ret = -1;

	if (plan_kernel(ctx, &desc, kernel))
		return -1;
	if (random_dense(ctx, m, k, ctx->in_dtype, &q.src) ||
	    new_matrix(ctx, m, k, &q.dst))
		goto out;
	/* Memory traffic: the input read, codes and scales written. */
	bytes = (double)mxa_buffer_size(q.src.buf) +
		mxa_buffer_size(q.dst.data) + mxa_buffer_size(q.dst.scale);
	if (ctx->peers) {
		/* The same input size copied: read once, written once. */
		fns[1].arg = bench_copy_new(mxa_buffer_size(q.src.buf),
					    ctx->threads);
		if (!fns[1].arg) {
			cli_error("out of memory for the memcpy peer");
			goto out;
		}
		copy_bytes = 2.0 * mxa_buffer_size(q.src.buf);
	}
	if (bench_alternate(fns, ctx->peers ? 2 : 1))
		goto out;
	report_quantize(ctx, kernel, m, k, bytes, &ours, copy_bytes, &copy);
	ret = 0;
out:
	bench_copy_free(fns[1].arg);
	free_matrix(&q.dst);
	cli_buffer_free(q.src.buf);
	return ret;
}

/* --- command -------------------------------------------------------------- */

static void report_machine(struct bench_ctx *ctx, const char *desc)
{
	struct cli_json j;

	if (ctx->json) {
		cli_json_init(&j, stdout);
		cli_json_object(&j, NULL);
		cli_json_str(&j, "op", "peak");
		cli_json_str(&j, "device", ctx->device);
		cli_json_uint(&j, "threads", ctx->threads);
		cli_json_double(&j, "fma_gflops", ctx->peaks.fma);
		cli_json_str(&j, "fma_insn", ctx->peaks.fma_insn);
		cli_json_double(&j, "bf16_dot_gflops",
				ctx->peaks.bf16 ? ctx->peaks.bf16 : NAN);
		cli_json_double(&j, "int8_dot_gops",
				ctx->peaks.int8 ? ctx->peaks.int8 : NAN);
		cli_json_double(&j, "amx_bf16_gflops",
				ctx->peaks.amx_bf16 ? ctx->peaks.amx_bf16 :
				NAN);
		cli_json_double(&j, "amx_int8_gops",
				ctx->peaks.amx_int8 ? ctx->peaks.amx_int8 :
				NAN);
		cli_json_str(&j, "sgemm_core", ctx->blas_core);
		cli_json_bool(&j, "sgemm_core_forced", ctx->blas_forced);
		cli_json_str(&j, "description", desc);
		cli_json_end(&j);
		return;
	}
	printf("device %s: %s\n", ctx->device, desc);
	printf("measured peaks, %u thread%s: fp32 FMA (%s) %.1f GFLOP/s",
	       ctx->threads, ctx->threads == 1 ? "" : "s",
	       ctx->peaks.fma_insn ? ctx->peaks.fma_insn : "none",
	       ctx->peaks.fma);
	if (ctx->peaks.bf16)
		printf(", bf16 dot (vdpbf16ps zmm) %.1f GFLOP/s",
		       ctx->peaks.bf16);
	else
		printf(", bf16 dot: none (no AVX512_BF16)");
	if (ctx->peaks.int8)
		printf(", int8 dot (vpdpbusd zmm) %.1f GOP/s",
		       ctx->peaks.int8);
	else
		printf(", int8 dot: none (no AVX512_VNNI)");
	if (ctx->peaks.amx_bf16)
		printf(", AMX tdpbf16ps %.1f GFLOP/s, tdpbssd %.1f GOP/s\n",
		       ctx->peaks.amx_bf16, ctx->peaks.amx_int8);
	else
		printf(", AMX: none\n");
	printf("OpenBLAS core %s%s\n", ctx->blas_core,
	       ctx->blas_forced ? " (set by OPENBLAS_CORETYPE)" : "");
}

enum bench_op_kind { BENCH_ALL, BENCH_GEMM, BENCH_QUANTIZE, BENCH_DECODE };

static int run_recipe(struct bench_ctx *ctx, const char *name,
		      int (*fn)(struct bench_ctx *ctx))
{
	if (mxa_recipe_parse(name, &ctx->recipe)) {
		cli_error("the library does not know the recipe %s", name);
		return -1;
	}
	ctx->recipe_name = name;
	return fn(ctx);
}

static int run_ops(struct bench_ctx *ctx, enum bench_op_kind op,
		   const char *recipe)
{
	static const char *const gemm_recipes[] = { "mxfp8", "mxfp4" };
	size_t i;

	if (op == BENCH_DECODE)
		return run_recipe(ctx, recipe ? recipe : "mxfp4", bench_decode);
	if (op != BENCH_QUANTIZE) {
		for (i = 0; i < ARRAY_SIZE(gemm_recipes); i++) {
			if (recipe && i)
				break;
			if (run_recipe(ctx, recipe ? recipe : gemm_recipes[i],
				       bench_gemm))
				return -1;
		}
	}
	if (op != BENCH_GEMM &&
	    run_recipe(ctx, recipe ? recipe : "mxfp8", bench_quantize))
		return -1;
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_ctx ctx = {
		.pref = MXA_PREF_AUTO, .rng = BENCH_SEED,
		.in_dtype = MXA_DTYPE_F32,
	};
	const char *op_name = "all", *device = NULL, *recipe = NULL;
	enum bench_op_kind op;
	struct mxa_device_info di;
	uint32_t threads = 0;
	struct cli_opt opts[] = {
		CLI_OPTION("op", CLI_STR, &op_name),
		CLI_OPTION("recipe", CLI_RECIPE, &ctx.recipe),
		CLI_OPTION("m", CLI_U32, &ctx.m),
		CLI_OPTION("n", CLI_U32, &ctx.n),
		CLI_OPTION("k", CLI_U32, &ctx.k),
		CLI_OPTION("in-dtype", CLI_DTYPE, &ctx.in_dtype),
		CLI_OPTION("device", CLI_STR, &device),
		CLI_OPTION("kernel", CLI_PREF, &ctx.pref),
		CLI_OPTION("threads", CLI_U32, &threads),
		CLI_OPTION("json", CLI_FLAG, &ctx.json),
		CLI_END,
	};
	struct cli_opt *ropt = cli_opt_get(opts, "recipe");
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	if (!strcmp(op_name, "all")) {
		op = BENCH_ALL;
	} else if (!strcmp(op_name, "gemm")) {
		op = BENCH_GEMM;
	} else if (!strcmp(op_name, "quantize")) {
		op = BENCH_QUANTIZE;
	} else if (!strcmp(op_name, "decode")) {
		op = BENCH_DECODE;
	} else {
		cli_error("--op '%s': unknown operation (expected one of: all, gemm, quantize, decode)",
			  op_name);
		return CLI_EXIT_ERROR;
	}
	if ((op == BENCH_GEMM || op == BENCH_DECODE) &&
	    cli_opt_get(opts, "in-dtype")->seen) {
		cli_error("--in-dtype: only --op quantize (or all) reads a dense input to quantize");
		return CLI_EXIT_ERROR;
	}
	if (op == BENCH_QUANTIZE && cli_opt_get(opts, "n")->seen) {
		cli_error("--n: not used by --op quantize (it takes --m rows and --k columns)");
		return CLI_EXIT_ERROR;
	}
	if (ropt->seen) {
		recipe = mxa_recipe_name(&ctx.recipe);
		if (!recipe)
			recipe = ropt->arg;
	}
	if (ctx.k && cli_check_k("k", ctx.k))
		return CLI_EXIT_ERROR;
	if (op != BENCH_QUANTIZE)
		bench_blas_force_avx512(argc, argv);

	if (cli_device_open(device, &ctx.dev))
		return CLI_EXIT_ERROR;
	ret = CLI_EXIT_ERROR;
	if (threads) {
		ret = mxa_device_set_threads(ctx.dev, threads);
		if (ret) {
			cli_error("--threads %u: %s", threads,
				  mxa_strerror(ret));
			ret = CLI_EXIT_ERROR;
			goto out;
		}
	}
	memset(&di, 0, sizeof(di));
	ret = mxa_device_info(ctx.dev, &di);
	if (ret) {
		cli_error("mxa_device_info: %s", mxa_strerror(ret));
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	snprintf(ctx.device, sizeof(ctx.device), "%s", di.name);
	ctx.threads = di.threads ? di.threads : 1;
	ctx.peers = !strcmp(di.backend, "cpu");
	ctx.amx_isa = ctx.peers && strstr(di.description, "ISA amx ");
	if (ctx.peers) {
		bench_sgemm_threads(ctx.threads);
		ctx.blas_core = bench_blas_core(&ctx.blas_forced);
		if (op != BENCH_QUANTIZE && op != BENCH_DECODE) {
			bench_peaks(ctx.threads, &ctx.peaks);
			report_machine(&ctx, di.description);
		}
	}
	ret = run_ops(&ctx, op, recipe) ? CLI_EXIT_ERROR : CLI_EXIT_OK;
out:
	cli_device_close(ctx.dev);
	return ret;
}
