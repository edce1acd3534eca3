// SPDX-License-Identifier: MIT
/*
 * The native CPU GEMM framework (BLIS style): blocking, packing and
 * threads around the microkernels of lib/cpu/kernels/ (contract in
 * cpu_ukernel.h).
 *
 * A and B are packed once into micro-panels (MR rows of A, NR rows of B,
 * parallel over panels), then the output is cut into MC x NC tiles, one
 * task each: a task walks K in chunks of KCB blocks and calls the
 * microkernel on every MR x NR sub-tile, accumulating in fp32 memory it
 * owns, and finally stores its tile to C (adding C_in, rounding to bf16,
 * and writing NaN to rows and columns that met a NaN scale).  No task
 * writes another's output, so tasks need no synchronisation, and every
 * output is summed in the same order whatever the thread count.
 *
 * Packed panels are bounded by the device's pack budget (CPU_PACK_BUDGET
 * unless $MXACCEL_CPU_PACK_BUDGET says otherwise): larger problems are cut
 * into stripes of M and N and, when K alone is too long, of K, with fp32
 * accumulators that persist across the K stripes.
 *
 * Small M (all of A within one cache tile, decode): packing all of B and
 * reading it back would move several times B's bytes through memory for
 * little arithmetic.  There A is packed once and B streams: each task
 * packs one micro-panel of B into its worker's scratch (K x NR, in L2),
 * runs the microkernel over all of A and K at once, and stores its
 * columns, so B's MX bytes are read from memory once per call.  The
 * kernel calls, and so the results, are the same as on the other path.
 *
 * NVFP4 operands (UE4M3 scales per 16, either or both sides) run on bf16
 * panels with their block scales folded into the elements by the packer
 * (cpu_pack.h); each tensor scale's exponent rides in the panel's block
 * exponents, so block sums are scaled into the result's range as MX ones
 * are, and the store multiplies by the two significands (one product in
 * double, then rounded to fp32).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_fpenv.h"
#include "cpu_isa.h"
#include "cpu_pack.h"

struct gemm {
	const struct mxa_job *job;
	const struct cpu_ukernel *uk;
	unsigned int words_pb;		/* panel words per row per block */
	unsigned int mw_a;		/* meta floats per row per block of A */
	uint32_t kblocks;		/* K / 32, rounded up (NVFP4) */
	uint32_t ms, ns, kbs;		/* stripe sizes: rows, rows, blocks */
	bool k_split;			/* more than one K stripe */
	bool stream_b;			/* small M: B panels packed per task */
	double tscale;			/* tensor scales' significands, or 1 */

	/* The stripe being computed. */
	uint32_t i0, j0, kb0, mcur, ncur, kbcur;
	bool pack_a, first_k, last_k;
	uint32_t panels_a, panels_b, tiles_n;

	uint32_t *pa, *pb;		/* packed panels */
	float *ma, *mb;			/* their meta */
	size_t pa_words, pb_words;	/* per panel */
	size_t ma_floats, mb_floats;	/* per panel */
	uint8_t *nan_a, *nan_b;		/* rows of A, B with a NaN scale */
	bool any_nan_b;			/* some nan_b set (after packing) */
	float *ws;			/* accumulators of a stripe (k_split) */
	size_t ws_ld;
	float *tiles;			/* one MC x NC tile per worker */
};

static uint32_t round_up(uint32_t x, uint32_t m)
{
	return (x + m - 1) / m * m;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t clamp_rows(size_t rows, uint32_t unit, uint32_t all)
{
	rows = rows / unit * unit;
	if (rows < unit)
		rows = unit;
	return rows < all ? (uint32_t)rows : all;
}

/*
 * Stripe sizes: everything at once when the panels fit the budget, else
 * stripes of M and N (multiples of the cache tile) that do, else a few
 * cache tiles of each and as many K blocks as fit.
 */
static void plan_stripes(struct gemm *g, size_t budget)
{
	const struct cpu_ukernel *uk = g->uk;
	uint32_t m = g->job->a.rows, n = g->job->b.rows;
	size_t row_a = 4 * ((size_t)g->words_pb + g->mw_a) * g->kblocks;
	size_t row_b = 4 * ((size_t)g->words_pb + 1) * g->kblocks;
	size_t tile_a = round_up(min_u32(m, uk->mc), uk->mr) * row_a;
	size_t tile_b = round_up(min_u32(n, uk->nc), uk->nr) * row_b;
	size_t per_block = 0;
	uint32_t kbs, t;

	g->ms = m;
	g->ns = n;
	g->kbs = g->kblocks;
	if (round_up(m, uk->mr) * row_a + round_up(n, uk->nr) * row_b <= budget)
		return;
	if (tile_a + tile_b <= budget) {
		g->ms = clamp_rows(budget / 2 / row_a, uk->mc, m);
		g->ns = clamp_rows((budget - round_up(g->ms, uk->mr) * row_a) /
				   row_b, uk->nc, n);
		return;
	}
	/* K stripes: a few tiles per stripe if KCB blocks of them fit. */
	for (t = 4; t; t /= 2) {
		g->ms = min_u32(m, t * uk->mc);
		g->ns = min_u32(n, t * uk->nc);
		per_block = round_up(g->ms, uk->mr) * (row_a / g->kblocks) +
			    round_up(g->ns, uk->nr) * (row_b / g->kblocks);
		if (budget / per_block >= uk->kcb)
			break;
	}
	kbs = (uint32_t)(budget / per_block / uk->kcb * uk->kcb);
	if (kbs < uk->kcb)
		kbs = uk->kcb;
	g->kbs = kbs < g->kblocks ? kbs : g->kblocks;
}

static void *alloc_aligned(size_t bytes)
{
	void *p;

	if (!bytes)
		bytes = 64;
	if (posix_memalign(&p, 64, (bytes + 63) & ~(size_t)63))
		return NULL;
	return p;
}

static int gemm_alloc(struct gemm *g, unsigned int workers)
{
	const struct cpu_ukernel *uk = g->uk;
	size_t pan_a = (round_up(g->ms, uk->mr)) / uk->mr;
	size_t pan_b = (round_up(g->ns, uk->nr)) / uk->nr;

	g->pa_words = (size_t)g->kbs * g->words_pb * uk->mr;
	g->pb_words = (size_t)g->kbs * g->words_pb * uk->nr;
	g->ma_floats = (size_t)g->kbs * g->mw_a * uk->mr;
	g->mb_floats = (size_t)g->kbs * uk->nr;
	/* Streaming B: one panel of scratch per worker. */
	if (g->stream_b)
		pan_b = workers;
	g->pa = alloc_aligned(pan_a * g->pa_words * 4);
	g->pb = alloc_aligned(pan_b * g->pb_words * 4);
	g->ma = alloc_aligned(pan_a * g->ma_floats * 4);
	g->mb = alloc_aligned(pan_b * g->mb_floats * 4);
	g->nan_a = calloc(g->job->a.rows, 1);
	g->nan_b = calloc(g->job->b.rows, 1);
	g->tiles = alloc_aligned((size_t)workers * uk->mc * uk->nc * 4);
	if (g->k_split) {
		g->ws_ld = round_up(g->ns, uk->nr);
		g->ws = alloc_aligned(round_up(g->ms, uk->mr) * g->ws_ld * 4);
	}
	if (!g->pa || !g->pb || !g->ma || !g->mb || !g->nan_a || !g->nan_b ||
	    !g->tiles || (g->k_split && !g->ws))
		return -ENOMEM;
	return 0;
}

static void gemm_free(struct gemm *g)
{
	free(g->pa);
	free(g->pb);
	free(g->ma);
	free(g->mb);
	free(g->nan_a);
	free(g->nan_b);
	free(g->tiles);
	free(g->ws);
}

/* One panel of the stripe's K range, with the kernel's packer if it has one. */
static void pack(const struct gemm *g, const struct mxa_matrix *m,
		 bool b_side, uint32_t row0, unsigned int w, uint32_t *words,
		 float *meta, uint8_t *nan_rows)
{
	const struct cpu_ukernel *uk = g->uk;

	if (uk->pack)
		uk->pack(m, b_side, row0, w, g->kb0, g->kbcur, words, meta,
			 nan_rows);
	else
		cpu_pack_panel(m, uk->panel, b_side, row0, w, g->kb0,
			       g->kbcur, words, meta, nan_rows);
}

static void pack_task(void *arg, unsigned int task, unsigned int worker)
{
	struct gemm *g = arg;
	const struct cpu_ukernel *uk = g->uk;
	unsigned int saved = cpu_fpenv_enter();
	uint32_t p;

	(void)worker;
	if (g->pack_a && task < g->panels_a) {
		p = task;
		pack(g, &g->job->a, false, g->i0 + p * uk->mr, uk->mr,
		     g->pa + p * g->pa_words, g->ma + p * g->ma_floats,
		     g->nan_a + g->i0 + p * uk->mr);
	} else {
		p = task - (g->pack_a ? g->panels_a : 0);
		pack(g, &g->job->b, true, g->j0 + p * uk->nr, uk->nr,
		     g->pb + p * g->pb_words, g->mb + p * g->mb_floats,
		     g->nan_b + g->j0 + p * uk->nr);
	}
	cpu_fpenv_leave(saved);
}

static void store_nan(uint8_t *row, uint32_t j, bool bf16)
{
	static const uint32_t f32_nan = 0x7fc00000;
	static const uint16_t bf16_nan = 0x7fc0;

	if (bf16)
		memcpy(row + 2 * (size_t)j, &bf16_nan, 2);
	else
		memcpy(row + 4 * (size_t)j, &f32_nan, 4);
}

/* fp32 to bf16, round to nearest even, NaN stays (quiet) NaN. */
static uint16_t f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Rows of C may sit at any multiple of the element size: memcpy access. */
/* acc times the tensor scales' significands (NVFP4), rounded to fp32. */
static float tensor_scaled(float acc, double tscale)
{
	return (float)((double)acc * tscale);
}

static void store_row_f32(uint8_t *out, const float *acc, uint32_t nc,
			  bool accumulate, double tscale)
{
	uint32_t j;

	if (tscale != 1.0) {
		for (j = 0; j < nc; j++) {
			float v = tensor_scaled(acc[j], tscale), cin;

			if (accumulate) {
				memcpy(&cin, out + 4 * (size_t)j, 4);
				v += cin;
			}
			memcpy(out + 4 * (size_t)j, &v, 4);
		}
		return;
	}
	if (!accumulate) {
		memcpy(out, acc, (size_t)nc * 4);
		return;
	}
	for (j = 0; j < nc; j++) {
		float cin;

		memcpy(&cin, out + 4 * (size_t)j, 4);
		cin += acc[j];
		memcpy(out + 4 * (size_t)j, &cin, 4);
	}
}

static void store_row_bf16(uint8_t *out, const float *acc, uint32_t nc,
			   bool accumulate, double tscale)
{
	uint32_t j;

	for (j = 0; j < nc; j++) {
		float v = tscale != 1.0 ? tensor_scaled(acc[j], tscale) :
			  acc[j];
		uint16_t h;

		if (accumulate) {
			uint32_t w;
			float cin;

			memcpy(&h, out + 2 * (size_t)j, 2);
			w = (uint32_t)h << 16;
			memcpy(&cin, &w, 4);
			v += cin;
		}
		h = f32_to_bf16(v);
		memcpy(out + 2 * (size_t)j, &h, 2);
	}
}

/*
 * Rows [i0, i0 + mc) x columns [j0, j0 + nc) of C from acc: times the
 * tensor scales' significands (NVFP4), C_in added in fp32, then rounded to bf16 if C is bf16; NaN where a row of A or of B
 * met a NaN scale.
 */
static void store_tile(const struct gemm *g, uint32_t i0, uint32_t j0,
		       uint32_t mc, uint32_t nc, const float *acc, size_t ld,
		       bool nan_cols)
{
	const struct mxa_dense *c = &g->job->dense;
	bool accumulate = g->job->flags & MXA_GEMM_ACCUMULATE;
	bool bf16 = c->dtype == MXA_DTYPE_BF16;
	size_t es = bf16 ? 2 : 4;
	uint32_t i, j;

	for (i = 0; i < mc; i++) {
		uint8_t *row = cpu_dense_row(c, i0 + i) + (size_t)j0 * es;

		if (g->nan_a[i0 + i]) {
			for (j = 0; j < nc; j++)
				store_nan(row, j, bf16);
			continue;
		}
		if (bf16)
			store_row_bf16(row, acc + i * ld, nc, accumulate,
				       g->tscale);
		else
			store_row_f32(row, acc + i * ld, nc, accumulate,
				      g->tscale);
		if (!nan_cols)
			continue;
		for (j = 0; j < nc; j++)
			if (g->nan_b[j0 + j])
				store_nan(row, j, bf16);
	}
}

static void tile_task(void *arg, unsigned int task, unsigned int worker)
{
	struct gemm *g = arg;
	const struct cpu_ukernel *uk = g->uk;
	unsigned int saved = cpu_fpenv_enter();
	uint32_t ti = task / g->tiles_n, tj = task % g->tiles_n;
	uint32_t r0 = ti * uk->mc, c0 = tj * uk->nc;
	uint32_t mc = min_u32(uk->mc, g->mcur - r0);
	uint32_t nc = min_u32(uk->nc, g->ncur - c0);
	size_t wa = (size_t)g->words_pb * uk->mr, wb = (size_t)g->words_pb * uk->nr;
	size_t fa = (size_t)g->mw_a * uk->mr;
	uint32_t kc, ir, jr;
	float *acc;
	size_t ld;

	if (g->k_split) {
		acc = g->ws + r0 * g->ws_ld + c0;
		ld = g->ws_ld;
	} else {
		acc = g->tiles + (size_t)worker * uk->mc * uk->nc;
		ld = uk->nc;
	}
	if (uk->task_begin)
		uk->task_begin();
	for (kc = 0; kc < g->kbcur; kc += uk->kcb) {
		unsigned int n = min_u32(uk->kcb, g->kbcur - kc);
		bool add = kc > 0 || !g->first_k;

		for (jr = 0; jr < nc; jr += uk->nr) {
			uint32_t pb = (c0 + jr) / uk->nr;
			const uint32_t *b = g->pb + pb * g->pb_words + kc * wb;
			const float *eb = g->mb + pb * g->mb_floats +
					  (size_t)kc * uk->nr;

			for (ir = 0; ir < mc; ir += uk->mr) {
				uint32_t pa = (r0 + ir) / uk->mr;

				uk->run(n, g->pa + pa * g->pa_words + kc * wa,
					g->ma + pa * g->ma_floats + kc * fa,
					b, eb, acc + ir * ld + jr, ld, add);
			}
		}
	}
	if (uk->task_end)
		uk->task_end();
	if (g->last_k)
		store_tile(g, g->i0 + r0, g->j0 + c0, mc, nc, acc, ld,
			   g->any_nan_b);
	cpu_fpenv_leave(saved);
}

/* Small M: pack B's panel task into scratch, all of A and K, store. */
static void stream_task(void *arg, unsigned int task, unsigned int worker)
{
	struct gemm *g = arg;
	const struct cpu_ukernel *uk = g->uk;
	unsigned int saved = cpu_fpenv_enter();
	uint32_t c0 = task * uk->nr, nc = min_u32(uk->nr, g->ncur - c0);
	size_t wa = (size_t)g->words_pb * uk->mr, wb = (size_t)g->words_pb * uk->nr;
	size_t fa = (size_t)g->mw_a * uk->mr;
	uint32_t *pb = g->pb + worker * g->pb_words;
	float *mb = g->mb + worker * g->mb_floats;
	float *acc = g->tiles + (size_t)worker * uk->mc * uk->nc;
	uint8_t *nan_b = g->nan_b + g->j0 + c0;
	bool nan_cols = false;
	uint32_t kc, ir, j;

	pack(g, &g->job->b, true, g->j0 + c0, uk->nr, pb, mb, nan_b);
	for (j = 0; j < nc; j++)
		nan_cols |= nan_b[j];
	if (uk->task_begin)
		uk->task_begin();
	for (kc = 0; kc < g->kbcur; kc += uk->kcb) {
		unsigned int n = min_u32(uk->kcb, g->kbcur - kc);

		for (ir = 0; ir < g->mcur; ir += uk->mr)
			uk->run(n, g->pa + ir / uk->mr * g->pa_words + kc * wa,
				g->ma + ir / uk->mr * g->ma_floats + kc * fa,
				pb + kc * wb, mb + (size_t)kc * uk->nr,
				acc + ir * uk->nr, uk->nr, kc > 0);
	}
	if (uk->task_end)
		uk->task_end();
	store_tile(g, g->i0, g->j0 + c0, g->mcur, nc, acc, uk->nr, nan_cols);
	cpu_fpenv_leave(saved);
}

static void run_stripe(struct gemm *g, struct cpu_pool *pool)
{
	const struct cpu_ukernel *uk = g->uk;

	g->panels_a = round_up(g->mcur, uk->mr) / uk->mr;
	g->panels_b = round_up(g->ncur, uk->nr) / uk->nr;
	g->tiles_n = round_up(g->ncur, uk->nc) / uk->nc;
	uint32_t j;

	if (g->stream_b) {
		if (g->pack_a)
			cpu_parallel(pool, g->panels_a, pack_task, g);
		cpu_parallel(pool, g->panels_b, stream_task, g);
		return;
	}
	cpu_parallel(pool, (g->pack_a ? g->panels_a : 0) + g->panels_b,
		     pack_task, g);
	for (j = 0; j < g->ncur && !g->any_nan_b; j++)
		g->any_nan_b = g->nan_b[g->j0 + j];
	cpu_parallel(pool, round_up(g->mcur, uk->mc) / uk->mc * g->tiles_n,
		     tile_task, g);
}

int cpu_gemm_blocked(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_device *cd = cpu_dev(dev);
	struct gemm g = {
		.job = job,
		.uk = cpu_isa_ukernel(cd->isa, (enum mxcore_elem)job->a.elem,
				      job->a.scale_type == MXA_SCALE_UE4M3,
				      (enum mxcore_elem)job->b.elem,
				      job->b.scale_type == MXA_SCALE_UE4M3),
		.kblocks = (job->a.cols + MXCORE_BLOCK - 1) / MXCORE_BLOCK,
	};
	uint32_t m = job->a.rows, n = job->b.rows;
	int ret, ea, eb;

	g.tscale = cpu_pack_tensor_scale(&job->a, &ea) *
		   cpu_pack_tensor_scale(&job->b, &eb);

	g.words_pb = CPU_PANEL_WORDS(g.uk->panel);
	g.mw_a = cpu_meta_per_row(g.uk->panel, false);
	plan_stripes(&g, cd->pack_budget);
	g.k_split = g.kbs < g.kblocks;
	g.stream_b = !g.k_split && m <= g.uk->mc;
	ret = gemm_alloc(&g, cpu_pool_threads(cd->pool));
	if (ret) {
		gemm_free(&g);
		return mxa__err(ret, "gemm: no memory for packed panels (%u x %u x %u)",
				m, n, job->a.cols);
	}
	for (g.i0 = 0; g.i0 < m; g.i0 += g.ms) {
		g.mcur = min_u32(g.ms, m - g.i0);
		for (g.j0 = 0; g.j0 < n; g.j0 += g.ns) {
			g.ncur = min_u32(g.ns, n - g.j0);
			for (g.kb0 = 0; g.kb0 < g.kblocks; g.kb0 += g.kbs) {
				g.kbcur = min_u32(g.kbs, g.kblocks - g.kb0);
				/* A's panels stay valid across N stripes. */
				g.pack_a = g.k_split || g.j0 == 0;
				g.first_k = g.kb0 == 0;
				g.last_k = g.kb0 + g.kbcur == g.kblocks;
				run_stripe(&g, cd->pool);
			}
		}
	}
	gemm_free(&g);
	return 0;
}
