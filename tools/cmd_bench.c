// SPDX-License-Identifier: MIT
/*
 * mxaccel bench: time GEMM or quantization on random data (fixed seed, so
 * runs are comparable).  One warm-up run, then repeated runs until at least
 * BENCH_MIN_SECONDS have passed; the best and the median are reported,
 * the best being the least disturbed by the rest of the machine.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel bench --op gemm|quantize [options]\n"
"\n"
"  --op OP             gemm (C = A * B^T, fp32 C) or quantize (fp32 -> MX)\n"
"  --recipe NAME       mxfp8 (default), mxfp8_e5m2, mxfp6_e2m3, mxfp4, ...\n"
"  --m M --n N --k K   gemm shape (default 1024 each); quantize uses\n"
"                      --m rows and --k columns (default 4096 each)\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated\n"
"  --threads T         worker threads of a cpu device\n"
"  --json              one JSON object per measurement\n";

#define BENCH_SEED 0x6d786163636c0001ull
#define BENCH_MIN_SECONDS 0.5
#define BENCH_MIN_RUNS 3
#define BENCH_MAX_RUNS 100000

struct bench_ctx {
	struct mxa_device *dev;
	const char *recipe_name;
	struct mxa_recipe recipe;
	enum mxa_pref pref;
	uint32_t m, n, k;
	unsigned int threads;
	char device[MXA_NAME_MAX];
	bool json;
	uint64_t rng;
};

/* One line of the report: a measured kernel (or, later, a peer). */
struct bench_result {
	const char *op;
	char kernel[MXA_NAME_MAX];
	double best, median;	/* seconds */
	unsigned int runs;
	double work;		/* flops (gemm) or bytes moved (quantize) */
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

/* Fills r->best, r->median and r->runs; a failing run ends it. */
static int bench_time(int (*fn)(void *arg), void *arg, const char *what,
		      struct bench_result *r)
{
	double *t, start, end, total = 0;
	unsigned int n = 0;
	int ret;

	t = malloc(BENCH_MAX_RUNS * sizeof(*t));
	if (!t) {
		cli_error("out of memory");
		return -1;
	}
	ret = fn(arg);
	while (!ret && n < BENCH_MAX_RUNS &&
	       (total < BENCH_MIN_SECONDS || n < BENCH_MIN_RUNS)) {
		start = now();
		ret = fn(arg);
		end = now();
		t[n++] = end - start;
		total += end - start;
	}
	if (ret) {
		cli_error("%s: %s", what, mxa_strerror(ret));
		free(t);
		return -1;
	}
	qsort(t, n, sizeof(*t), cmp_double);
	r->best = t[0];
	r->median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	r->runs = n;
	free(t);
	return 0;
}

static void bench_report(struct bench_ctx *ctx, const struct bench_result *r)
{
	bool gemm = !strcmp(r->op, "gemm");
	const char *unit = gemm ? "GFLOP/s" : "GB/s";
	double best = r->work / r->best * 1e-9;
	double median = r->work / r->median * 1e-9;
	struct cli_json j;

	if (ctx->json) {
		cli_json_init(&j, stdout);
		cli_json_object(&j, NULL);
		cli_json_str(&j, "op", r->op);
		cli_json_str(&j, "recipe", ctx->recipe_name);
		cli_json_str(&j, "device", ctx->device);
		cli_json_str(&j, "kernel", r->kernel);
		cli_json_uint(&j, "m", ctx->m);
		cli_json_uint(&j, "n", gemm ? ctx->n : 0);
		cli_json_uint(&j, "k", ctx->k);
		cli_json_uint(&j, "threads", ctx->threads);
		cli_json_double(&j, "seconds", r->best);
		cli_json_double(&j, "median_seconds", r->median);
		cli_json_uint(&j, "runs", r->runs);
		cli_json_double(&j, gemm ? "gflops" : "gbps", best);
		cli_json_double(&j, gemm ? "median_gflops" : "median_gbps",
				median);
		cli_json_end(&j);
		return;
	}
	if (gemm)
		printf("gemm %s %ux%ux%u", ctx->recipe_name, ctx->m, ctx->n,
		       ctx->k);
	else
		printf("quantize %s %ux%u", ctx->recipe_name, ctx->m, ctx->k);
	printf(" on %s, kernel %s, %u thread%s: best %.3f ms %.1f %s, median %.3f ms %.1f %s (%u runs)\n",
	       ctx->device, r->kernel, ctx->threads,
	       ctx->threads == 1 ? "" : "s", r->best * 1e3, best, unit,
	       r->median * 1e3, median, unit, r->runs);
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

/* A device buffer of rows x cols fp32 values uniform in [-1, 1). */
static int random_dense(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
			struct mxa_dense *d)
{
	size_t i, count = (size_t)rows * cols, bytes;
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
	d->dtype = MXA_DTYPE_F32;
	d->rows = rows;
	d->cols = cols;
	return ret;
}

/* Empty MX storage for rows x cols in the bench recipe. */
static int new_matrix(struct bench_ctx *ctx, uint32_t rows, uint32_t cols,
		      struct mxa_matrix *mat)
{
	size_t data_bytes, scale_bytes;

	memset(mat, 0, sizeof(*mat));
	if (cli_data_bytes(ctx->recipe.elem, rows, cols, &data_bytes) ||
	    cli_scale_bytes(MXA_LAYOUT_PLAIN, rows, cols, &scale_bytes) ||
	    cli_buffer_new(ctx->dev, data_bytes, &mat->data) ||
	    cli_buffer_new(ctx->dev, scale_bytes, &mat->scale))
		return -1;
	mat->elem = ctx->recipe.elem;
	mat->scale_layout = MXA_LAYOUT_PLAIN;
	mat->rows = rows;
	mat->cols = cols;
	return 0;
}

static void free_matrix(struct mxa_matrix *mat)
{
	cli_buffer_free(mat->data);
	cli_buffer_free(mat->scale);
}

static int plan_kernel(struct bench_ctx *ctx, const struct mxa_op_desc *desc,
		       struct bench_result *r)
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
	snprintf(r->kernel, sizeof(r->kernel), "%s", plan.kernel);
	return 0;
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
static int random_matrix(struct bench_ctx *ctx, uint32_t rows,
			 struct mxa_matrix *mat)
{
	struct mxa_dense src;
	int ret;

	if (random_dense(ctx, rows, ctx->k, &src))
		return -1;
	ret = new_matrix(ctx, rows, ctx->k, mat);
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

static int bench_gemm(struct bench_ctx *ctx)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_GEMM, .a_elem = ctx->recipe.elem,
		.b_elem = ctx->recipe.elem, .dtype = MXA_DTYPE_F32,
		.m = ctx->m, .n = ctx->n, .k = ctx->k,
	};
	struct gemm_run g = { .dev = ctx->dev, .pref = ctx->pref };
	struct bench_result r = { .op = "gemm" };
	size_t c_bytes;
	int ret = -1;

	if (plan_kernel(ctx, &desc, &r))
		return -1;
	if (random_matrix(ctx, ctx->m, &g.a) ||
	    random_matrix(ctx, ctx->n, &g.b) ||
	    cli_dense_bytes(MXA_DTYPE_F32, ctx->m, ctx->n, &c_bytes) ||
	    cli_buffer_new(ctx->dev, c_bytes, &g.c.buf))
		goto out;
	g.c.dtype = MXA_DTYPE_F32;
	g.c.rows = ctx->m;
	g.c.cols = ctx->n;
	r.work = 2.0 * ctx->m * ctx->n * ctx->k;
	if (bench_time(gemm_once, &g, "mxa_gemm", &r))
		goto out;
	bench_report(ctx, &r);
	/*
	 * Peers measured in the same run (OpenBLAS SGEMM on the dequantized
	 * data) belong here: each fills its own bench_result from the same
	 * g.a / g.b and goes through bench_report().
	 */
	ret = 0;
out:
	cli_buffer_free(g.c.buf);
	free_matrix(&g.b);
	free_matrix(&g.a);
	return ret;
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

static int bench_quantize(struct bench_ctx *ctx)
{
	struct mxa_op_desc desc = {
		.op = MXA_OP_QUANTIZE, .a_elem = ctx->recipe.elem,
		.b_elem = ctx->recipe.elem, .dtype = MXA_DTYPE_F32,
		.mode = ctx->recipe.mode, .m = ctx->m, .k = ctx->k,
	};
	struct quantize_run q = {
		.dev = ctx->dev, .mode = ctx->recipe.mode, .pref = ctx->pref,
	};
	struct bench_result r = { .op = "quantize" };
	int ret = -1;

	if (plan_kernel(ctx, &desc, &r))
		return -1;
	if (random_dense(ctx, ctx->m, ctx->k, &q.src) ||
	    new_matrix(ctx, ctx->m, ctx->k, &q.dst))
		goto out;
	/* Memory traffic: the fp32 input read, codes and scales written. */
	r.work = (double)mxa_buffer_size(q.src.buf) +
		 mxa_buffer_size(q.dst.data) + mxa_buffer_size(q.dst.scale);
	if (bench_time(quantize_once, &q, "mxa_quantize", &r))
		goto out;
	bench_report(ctx, &r);
	ret = 0;
out:
	free_matrix(&q.dst);
	cli_buffer_free(q.src.buf);
	return ret;
}

/* --- command -------------------------------------------------------------- */

struct bench_op {
	const char *name;
	int (*run)(struct bench_ctx *ctx);
	uint32_t dflt;		/* default for every dimension */
	bool uses_n;
};

static const struct bench_op bench_ops[] = {
	{ "gemm", bench_gemm, 1024, true },
	{ "quantize", bench_quantize, 4096, false },
};

int cmd_bench(int argc, char **argv)
{
	struct bench_ctx ctx = { .pref = MXA_PREF_AUTO, .rng = BENCH_SEED };
	const char *op_name = NULL, *device = NULL;
	const struct bench_op *op = NULL;
	struct mxa_device_info di;
	uint32_t threads = 0;
	struct cli_opt opts[] = {
		CLI_REQUIRED("op", CLI_STR, &op_name),
		CLI_OPTION("recipe", CLI_RECIPE, &ctx.recipe),
		CLI_OPTION("m", CLI_U32, &ctx.m),
		CLI_OPTION("n", CLI_U32, &ctx.n),
		CLI_OPTION("k", CLI_U32, &ctx.k),
		CLI_OPTION("device", CLI_STR, &device),
		CLI_OPTION("kernel", CLI_PREF, &ctx.pref),
		CLI_OPTION("threads", CLI_U32, &threads),
		CLI_OPTION("json", CLI_FLAG, &ctx.json),
		CLI_END,
	};
	struct cli_opt *recipe = cli_opt_get(opts, "recipe");
	size_t i;
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	for (i = 0; i < ARRAY_SIZE(bench_ops); i++)
		if (!strcmp(op_name, bench_ops[i].name))
			op = &bench_ops[i];
	if (!op) {
		cli_error("--op '%s': unknown operation (expected one of: gemm, quantize)",
			  op_name);
		return CLI_EXIT_ERROR;
	}
	if (!op->uses_n && cli_opt_get(opts, "n")->seen) {
		cli_error("--n: not used by --op %s (it takes --m rows and --k columns)",
			  op->name);
		return CLI_EXIT_ERROR;
	}
	if (!recipe->seen &&
	    mxa_recipe_parse("mxfp8", &ctx.recipe)) {
		cli_error("the library does not know the recipe mxfp8");
		return CLI_EXIT_ERROR;
	}
	ctx.recipe_name = mxa_recipe_name(&ctx.recipe);
	if (!ctx.recipe_name)
		ctx.recipe_name = recipe->arg;
	ctx.m = ctx.m ? ctx.m : op->dflt;
	ctx.n = ctx.n ? ctx.n : (op->uses_n ? op->dflt : 0);
	ctx.k = ctx.k ? ctx.k : op->dflt;
	if (cli_check_k("k", ctx.k))
		return CLI_EXIT_ERROR;

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
	ctx.threads = di.threads;
	ret = op->run(&ctx) ? CLI_EXIT_ERROR : CLI_EXIT_OK;
out:
	cli_device_close(ctx.dev);
	return ret;
}
