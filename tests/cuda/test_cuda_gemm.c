// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's GEMMs against the CPU's exact reference:
 *
 * - cuda-exact (EMULATED) is bit-identical to cpu-exact over whole C
 *   buffers, padding included: random and ragged shapes, all 25 element
 *   pairs, scales over the whole E8M0 range (0xff included), NaN and Inf
 *   codes, offsets, strides, swizzled scales, fp32 and bf16 C, with and
 *   without accumulation, and batches on one fence;
 * - the native paths cuda-mx-sm90-* (NATIVE, where the device is sm_90:
 *   whichever the kernel table picks per shape, then each forced by
 *   MXACCEL_KERNEL on the shapes it runs) and
 *   cuda-dequant-cublas stay within their stated bounds
 *   (Documentation/cuda.rst):
 *
 *     |c - c_ref| <= gamma * S + r(c, c_ref)
 *
 *   with S = sum_k |a_k b_k| (+ |C_in|), r the output rounding
 *   (2^-24 |c_ref| for fp32, 2^-8 (|c| + |c_ref|) for bf16), and
 *   special values exactly: NaN where the reference is NaN, the same
 *   infinity, finite where finite.  The worst error / S is printed.
 *
 * Skips (77) where no CUDA device is found.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"

static struct mxa_device *cuda, *cpu;
static bool have_native, have_cublas;

/* The bounds the kernels state (Documentation/cuda.rst). */
static double gamma_of(const char *kernel, uint32_t k)
{
	if (!strcmp(kernel, "native") || !strncmp(kernel, "cuda-mx-sm90", 12))
		return 0x1p-9 + (k / 32 + 1) * 0x1p-24;
	return (k + 1) * 0x1p-23;	/* cuda-dequant-cublas */
}

struct stats {
	unsigned int cases, checked, special;
	double worst[2];	/* (err - output rounding) / S, f32 and bf16 C */
	char where[2][160];	/* the case of each */
};

static struct stats st_native, st_cublas, st_probe;
static unsigned int n_exact;

enum scales { NARROW, WIDE, MIRRORED, FULL };

struct gcase {
	uint32_t m, n, k;
	enum mxa_elem ea, eb;
	enum mxa_dtype dtype;
	bool accumulate;
	enum scales scales;
	bool specials;
	struct test_mx_place pa, pb;
	size_t c_off, c_pad;
};

static uint8_t special_code(enum mxa_elem elem)
{
	static const uint8_t e5m2[] = { 0x7c, 0xfc, 0x7e };

	if (elem == MXA_ELEM_E4M3)
		return test_rand_below(2) ? 0x7f : 0xff;
	if (elem == MXA_ELEM_E5M2)
		return e5m2[test_rand_below(3)];
	return 0;
}

static void make_inputs(const struct gcase *g, struct test_mx *a,
			struct test_mx *b, uint32_t *cin)
{
	uint32_t blocks = g->k / 32, r, kb;
	size_t i, mn = (size_t)g->m * g->n;

	test_mx_alloc(a, g->ea, g->m, g->k);
	test_mx_alloc(b, g->eb, g->n, g->k);
	for (i = 0; i < (size_t)g->m * g->k; i++)
		a->code[i] = test_rand_code(g->ea, false);
	for (i = 0; i < (size_t)g->n * g->k; i++)
		b->code[i] = test_rand_code(g->eb, false);
	for (kb = 0; kb < blocks; kb++) {
		/* Mirrored: A near 2^(base-127), B near 2^(127-base). */
		uint32_t base = 8 + test_rand_below(239);

		for (r = 0; r < g->m; r++) {
			uint8_t *s = &a->scale[r * blocks + kb];

			switch (g->scales) {
			case NARROW:
				*s = (uint8_t)(117 + test_rand_below(21));
				break;
			case WIDE:
				*s = (uint8_t)(100 + test_rand_below(55));
				break;
			case MIRRORED:
				*s = (uint8_t)(base - 8 + test_rand_below(17));
				break;
			case FULL:
				*s = (uint8_t)test_rand_below(256);
				break;
			}
		}
		for (r = 0; r < g->n; r++) {
			uint8_t *s = &b->scale[r * blocks + kb];

			switch (g->scales) {
			case NARROW:
				*s = (uint8_t)(117 + test_rand_below(21));
				break;
			case WIDE:
				*s = (uint8_t)(100 + test_rand_below(55));
				break;
			case MIRRORED:
				*s = (uint8_t)(254 - base - 8 + test_rand_below(17));
				break;
			case FULL:
				*s = (uint8_t)test_rand_below(256);
				break;
			}
		}
	}
	if (g->specials) {
		unsigned int t;

		for (t = 0; t < 4; t++) {
			struct test_mx *x = test_rand_below(2) ? a : b;
			size_t at = test_rand_below(x->rows * x->cols);

			if (test_rand_below(3))
				x->code[at] = special_code(x->elem);
			else
				x->scale[at / 32] = 0xff;
		}
	}
	for (i = 0; i < mn; i++) {
		uint32_t v = test_f32_bits(test_rand_float(64.0f));

		cin[i] = g->dtype == MXA_DTYPE_BF16 ? v >> 16 : v;
		if (g->specials && test_rand_below(64) == 0)
			cin[i] = g->dtype == MXA_DTYPE_BF16 ? 0xff80 : 0xff800000;
	}
}

/*
 * C (+)= A B^T on dev; kernel forces a kernel through MXACCEL_KERNEL (NULL:
 * pref decides).  *c keeps the output buffer for comparisons (release with
 * test_dense_release()).
 */
static int gemm(struct mxa_device *dev, const struct gcase *g,
		const struct test_mx *a, const struct test_mx *b,
		const uint32_t *cin, enum mxa_pref pref, const char *kernel,
		struct mxa_dense *c)
{
	struct mxa_matrix ma, mb;
	int ret = test_mx_upload(dev, a, &g->pa, &ma);

	if (ret)
		return ret;
	ret = test_mx_upload(dev, b, &g->pb, &mb);
	if (!ret) {
		ret = test_dense_upload(dev, g->dtype, g->m, g->n, cin, g->c_off,
					g->c_pad, c);
		if (!ret) {
			if (kernel)
				setenv("MXACCEL_KERNEL", kernel, 1);
			ret = mxa_gemm(dev, &ma, &mb, c,
				       g->accumulate ? MXA_GEMM_ACCUMULATE : 0, pref);
			unsetenv("MXACCEL_KERNEL");
		}
		test_mx_release(&mb);
	}
	test_mx_release(&ma);
	return ret;
}

static const char *describe(const struct gcase *g)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s x %s %ux%ux%u %s%s%s%s scales %d", test_elem(g->ea)->name,
		 test_elem(g->eb)->name, g->m, g->n, g->k,
		 g->dtype == MXA_DTYPE_BF16 ? "bf16" : "f32",
		 g->accumulate ? " acc" : "", g->pa.layout || g->pb.layout ? " swz" : "",
		 g->specials ? " specials" : "", (int)g->scales);
	return buf;
}

static double value(const struct test_mx *m, uint32_t r, uint32_t k)
{
	return test_elem_value(m->elem, m->code[(size_t)r * m->cols + k]) *
	       test_scale_value(m->scale[(size_t)r * (m->cols / 32) + k / 32]);
}

static bool is_special(uint32_t bits, unsigned int mbits)
{
	return ((bits >> mbits) & 0xff) == 0xff;
}

/* A fast kernel against cpu-exact, within its bound. */
static void bounded(const struct gcase *g, const char *kernel,
		    struct stats *st)
{
	unsigned int mbits = g->dtype == MXA_DTYPE_BF16 ? 7 : 23;
	size_t mn = (size_t)g->m * g->n, i;
	uint32_t *cin = calloc(mn, 4), *ref = calloc(mn, 4), *got = calloc(mn, 4);
	double gamma = gamma_of(kernel, g->k);
	double tiny = (g->k + 2) * (mbits == 23 ? 0x1p-149 : 0x1p-133);
	struct test_mx a, b;
	struct mxa_dense cr, cg;
	unsigned int bad = 0;
	double *av, *bv;
	int ret;

	st->cases++;
	make_inputs(g, &a, &b, cin);
	ret = gemm(cpu, g, &a, &b, cin, MXA_PREF_EMULATED, NULL, &cr);
	if (!ret)
		ret = test_dense_download(&cr, ref);
	CHECK(ret == 0, "cpu exact %s: %d", describe(g), ret);
	test_dense_release(&cr);
	ret = ret ? ret : gemm(cuda, g, &a, &b, cin, MXA_PREF_AUTO, kernel, &cg);
	if (!ret) {
		CHECK(test_dense_pad_intact(&cg), "%s %s wrote outside C", kernel,
		      describe(g));
		ret = test_dense_download(&cg, got);
		test_dense_release(&cg);
	}
	CHECK(ret == 0, "%s %s: %d (%s)", kernel, describe(g), ret,
	      mxa_strerror(ret));
	/* |a| and |b| dequantized once: S is a dot product of them. */
	av = calloc((size_t)g->m * g->k, sizeof(double));
	bv = calloc((size_t)g->n * g->k, sizeof(double));
	for (i = 0; i < (size_t)g->m * g->k; i++)
		av[i] = fabs(value(&a, (uint32_t)(i / g->k), (uint32_t)(i % g->k)));
	for (i = 0; i < (size_t)g->n * g->k; i++)
		bv[i] = fabs(value(&b, (uint32_t)(i / g->k), (uint32_t)(i % g->k)));
	for (i = 0; !ret && i < mn && bad < 3; i++) {
		uint32_t r = (uint32_t)(i / g->n), c = (uint32_t)(i % g->n), k;
		double vc = test_float_value(got[i], mbits);
		double vr = test_float_value(ref[i], mbits);
		double s = 0, err, round, bound;
		bool ok;

		st->checked++;
		if (is_special(ref[i], mbits) || is_special(got[i], mbits)) {
			st->special++;
			ok = test_isnan_bits(ref[i], mbits) ?
			     test_isnan_bits(got[i], mbits) : got[i] == ref[i];
			if (!ok) {
				bad++;
				CHECK(0, "%s %s: C[%u][%u] = 0x%08x, reference 0x%08x",
				      kernel, describe(g), r, c, got[i], ref[i]);
			}
			continue;
		}
		for (k = 0; k < g->k; k++)
			s += av[(size_t)r * g->k + k] * bv[(size_t)c * g->k + k];
		if (g->accumulate)
			s += fabs(test_float_value(cin[i], mbits));
		err = fabs(vc - vr);
		round = mbits == 23 ? 0x1p-24 * fabs(vr) :
			0x1p-8 * (fabs(vc) + fabs(vr));
		bound = gamma * s + round + tiny;
		ok = err <= bound;
		if (s > 0 && (err - round) / s > st->worst[mbits == 7]) {
			st->worst[mbits == 7] = (err - round) / s;
			snprintf(st->where[mbits == 7], sizeof(st->where[0]),
				 "%s at [%u][%u]", describe(g), r, c);
		}
		if (!ok) {
			bad++;
			CHECK(0, "%s %s: C[%u][%u] = %a, reference %a, |diff| %a > bound %a (S %a)",
			      kernel, describe(g), r, c, vc, vr, err, bound, s);
		}
	}
	test_mx_free(&a);
	test_mx_free(&b);
	free(av);
	free(bv);
	free(cin);
	free(ref);
	free(got);
}

/* cuda-exact against cpu-exact: identical C buffers. */
static void check_exact(const struct gcase *g)
{
	size_t mn = (size_t)g->m * g->n, first;
	uint32_t *cin = calloc(mn, 4);
	struct test_mx a, b;
	struct mxa_dense cr, cg;
	int r1, r2;

	n_exact++;
	make_inputs(g, &a, &b, cin);
	r1 = gemm(cpu, g, &a, &b, cin, MXA_PREF_EMULATED, NULL, &cr);
	r2 = gemm(cuda, g, &a, &b, cin, MXA_PREF_EMULATED, NULL, &cg);
	CHECK(r1 == 0 && r2 == 0, "exact %s: cpu %d cuda %d", describe(g), r1,
	      r2);
	if (!r1 && !r2) {
		size_t bad = cudatest_diff(cg.buf, cr.buf, &first);

		CHECK(!bad, "cuda-exact %s: %zu bytes of C differ from cpu-exact, first at %zu",
		      describe(g), bad, first);
	}
	if (!r1)
		test_dense_release(&cr);
	if (!r2)
		test_dense_release(&cg);
	test_mx_free(&a);
	test_mx_free(&b);
	free(cin);
}

static void random_place(struct test_mx_place *p, bool misalign)
{
	memset(p, 0, sizeof(*p));
	p->layout = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
	if (misalign) {
		p->data_offset = test_rand_below(14);
		p->data_pad = test_rand_below(10);
		p->scale_offset = test_rand_below(8);
		if (p->layout == MXA_LAYOUT_PLAIN)
			p->scale_pad = test_rand_below(6);
	}
}

static void random_case(struct gcase *g, uint32_t m, uint32_t n, uint32_t k,
			unsigned int pair, enum scales scales, bool specials)
{
	memset(g, 0, sizeof(*g));
	g->m = m;
	g->n = n;
	g->k = k;
	g->ea = test_elems[pair % 25 / 5];
	g->eb = test_elems[pair % 5];
	g->dtype = test_rand_below(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	g->accumulate = test_rand_below(2);
	g->scales = scales;
	g->specials = specials;
	random_place(&g->pa, test_rand_below(3) == 0);
	random_place(&g->pb, test_rand_below(3) == 0);
	if (test_rand_below(2)) {
		size_t es = g->dtype == MXA_DTYPE_BF16 ? 2 : 4;

		g->c_off = es * test_rand_below(4);
		g->c_pad = es * test_rand_below(4);
	}
}

static const uint32_t shapes[][3] = {
	{ 1, 1, 32 }, { 3, 17, 32 }, { 17, 3, 64 }, { 33, 65, 96 },
	{ 65, 33, 256 }, { 127, 1, 128 }, { 1, 127, 160 }, { 128, 128, 128 },
	{ 129, 130, 4128 }, { 256, 384, 2048 }, { 300, 200, 992 },
	{ 16, 1000, 512 }, { 40, 333, 96 }, { 64, 64, 64 }, { 65, 129, 32 },
	{ 5, 3, 4096 }, { 2, 7, 2048 }, { 200, 17, 1024 }, { 31, 15, 320 },
	{ 512, 512, 1024 }, { 8, 256, 4096 }, { 100, 1, 2048 },
	/* Decode: the skinny kernel's K split over CTAs, its range limit. */
	{ 16, 1500, 4096 }, { 24, 40, 14336 }, { 1, 129, 1024 },
	/* K (125 blocks) split over six to eleven ranges, the last ragged. */
	{ 3, 3800, 4000 }, { 20, 1100, 4000 },
};

static void report(const char *kernel, const struct stats *st)
{
	printf("%s: %u cases, %u results (%u special); worst (err - rounding) / S: f32 C %.3g (%s), bf16 C %.3g (%s)\n",
	       kernel, st->cases, st->checked, st->special, st->worst[0],
	       st->where[0], st->worst[1], st->where[1]);
}

/*
 * Accuracy of one MX block and of long K, fp32 C, no accumulation: how
 * the tensor cores sum 32 products, and how the blocks add up; at M = 256
 * (cuda-mx-sm90: the bf16 kernel) and M = 16 (its skinny kernel).
 */
static void accuracy_probe(const char *kernel)
{
	static const enum mxa_elem el[] = { MXA_ELEM_E4M3, MXA_ELEM_E2M1, MXA_ELEM_E5M2 };
	static const uint32_t ks[] = { 32, 4096 }, ms[] = { 256, 16 };
	unsigned int e, k, m;
	struct gcase g;

	for (m = 0; m < TEST_ARRAY_SIZE(ms) * TEST_ARRAY_SIZE(el); m++) {
		e = m % TEST_ARRAY_SIZE(el);
		for (k = 0; k < TEST_ARRAY_SIZE(ks); k++) {
			memset(&st_probe, 0, sizeof(st_probe));
			memset(&g, 0, sizeof(g));
			g.m = ms[m / TEST_ARRAY_SIZE(el)];
			g.n = 256;
			g.k = ks[k];
			g.ea = el[e];
			g.eb = el[e];
			g.dtype = MXA_DTYPE_F32;
			g.scales = NARROW;
			bounded(&g, kernel, &st_probe);
			printf("probe %s %s x %s M %u K %u f32: worst (err - rounding) / S = %.3g = 2^%.1f\n",
			       kernel, test_elem(el[e])->name, test_elem(el[e])->name,
			       g.m, ks[k], st_probe.worst[0],
			       st_probe.worst[0] > 0 ? log2(st_probe.worst[0]) : -999.0);
		}
	}
}

static void bounded_all(const char *kernel, struct stats *st)
{
	/* Dequantizing to bf16 needs scaled values within bf16's range. */
	unsigned int nscales = strcmp(kernel, "cuda-dequant-cublas") ? 3 : 2;
	unsigned int s, pair = 0, i;
	struct gcase g;

	for (i = 0; i < 2; i++) {
		for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++, pair++) {
			random_case(&g, shapes[s][0], shapes[s][1], shapes[s][2],
				    pair * 7, (enum scales)(pair % nscales),
				    i == 1 && s % 2);
			bounded(&g, kernel, st);
		}
	}
	for (pair = 0; pair < 25; pair++) {
		random_case(&g, 1 + test_rand_below(150), 1 + test_rand_below(150),
			    32 * (1 + test_rand_below(12)), pair,
			    (enum scales)(pair % nscales), pair % 2);
		bounded(&g, kernel, st);
	}
	report(kernel, st);
	accuracy_probe(kernel);
}

static void exact_all(void)
{
	unsigned int s, pair = 0;
	struct gcase g;

	for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++, pair++) {
		if ((uint64_t)shapes[s][0] * shapes[s][1] * shapes[s][2] > 40000000)
			continue;
		random_case(&g, shapes[s][0], shapes[s][1], shapes[s][2],
			    pair * 3, (enum scales)(pair % 4), s % 2);
		check_exact(&g);
	}
	for (pair = 0; pair < 25; pair++) {
		random_case(&g, 1 + test_rand_below(70), 1 + test_rand_below(70),
			    32 * (1 + test_rand_below(8)), pair,
			    (enum scales)(pair % 4), pair % 2);
		check_exact(&g);
	}
}

/* A batch on one fence: ops run in order and may read an earlier C. */
static void check_batch(void)
{
	enum { OPS = 4, M = 70, N = 90, K = 256 };
	struct test_mx a[OPS], b[OPS];
	struct mxa_matrix ma[2][OPS], mb[2][OPS];
	struct mxa_dense c[2];
	struct mxa_gemm_op ops[2][OPS];
	struct mxa_device *devs[2] = { cuda, cpu };
	struct mxa_fence *f = NULL;
	size_t first;
	int d, i, ret = 0;

	for (i = 0; i < OPS; i++) {
		struct gcase g;
		uint32_t *cin = calloc(M * N, 4);

		random_case(&g, M, N, K, (unsigned int)i * 6, WIDE, false);
		make_inputs(&g, &a[i], &b[i], cin);
		free(cin);
	}
	for (d = 0; d < 2; d++) {
		ret |= test_dense_upload(devs[d], MXA_DTYPE_F32, M, N, NULL, 0, 0,
					 &c[d]);
		for (i = 0; i < OPS; i++) {
			ret |= test_mx_upload(devs[d], &a[i], NULL, &ma[d][i]);
			ret |= test_mx_upload(devs[d], &b[i], NULL, &mb[d][i]);
			ops[d][i] = (struct mxa_gemm_op){
				.a = &ma[d][i], .b = &mb[d][i], .c = &c[d],
				.flags = i ? MXA_GEMM_ACCUMULATE : 0,
			};
		}
	}
	CHECK(ret == 0, "batch: upload");
	ret = mxa_gemm_batch(cuda, ops[0], OPS, MXA_PREF_EMULATED, &f);
	CHECK(ret == 0, "batch on cuda: %d", ret);
	if (!ret) {
		int w = mxa_fence_wait(f, 0);

		CHECK(w == 0 || w == -ETIME, "fence poll: %d", w);
		CHECK_RET(mxa_fence_wait(f, -1), 0);
		CHECK_RET(mxa_fence_wait(f, 1000), 0);
		mxa_fence_free(f);
	}
	CHECK_RET(mxa_gemm_batch(cpu, ops[1], OPS, MXA_PREF_EMULATED, NULL), 0);
	CHECK(!cudatest_diff(c[0].buf, c[1].buf, &first),
	      "batch: cuda-exact differs from cpu-exact at byte %zu", first);
	/* An async GEMM whose fence is freed without a wait. */
	if (have_native) {
		CHECK_RET(mxa_gemm_async(cuda, &ma[0][0], &mb[0][0], &c[0], 0,
					 MXA_PREF_NATIVE, &f), 0);
		mxa_fence_free(f);
	}
	/* A cpu buffer cannot be used on cuda. */
	ops[0][0].c = &c[1];
	CHECK_RET(mxa_gemm_batch(cuda, ops[0], 1, MXA_PREF_AUTO, NULL), -EXDEV);
	for (d = 0; d < 2; d++) {
		test_dense_release(&c[d]);
		for (i = 0; i < OPS; i++) {
			test_mx_release(&ma[d][i]);
			test_mx_release(&mb[d][i]);
		}
	}
	for (i = 0; i < OPS; i++) {
		test_mx_free(&a[i]);
		test_mx_free(&b[i]);
	}
}

/* Which path the kernel table picks per shape, and the forcing rules. */
static void check_paths(struct mxa_op_desc *d)
{
	static const struct {
		uint32_t m, n;
		enum mxa_elem a;
		const char *kernel;
	} want[] = {
		{ 1, 4096, MXA_ELEM_E4M3, "cuda-mx-sm90-skinny" },
		{ 32, 4096, MXA_ELEM_E4M3, "cuda-mx-sm90-skinny" },
		{ 33, 4096, MXA_ELEM_E4M3, "cuda-mx-sm90-decode" },
		{ 64, 4096, MXA_ELEM_E2M1, "cuda-mx-sm90-decode" },
		{ 65, 4096, MXA_ELEM_E4M3, "cuda-mx-sm90-bf16" },
		{ 8192, 8192, MXA_ELEM_E4M3, "cuda-mx-sm90-bf16" },
		/* fp4 A on a grid of two waves or more: A by the pre-pass. */
		{ 8192, 8192, MXA_ELEM_E2M1, "cuda-mx-sm90-bf16-ss" },
		{ 256, 256, MXA_ELEM_E2M1, "cuda-mx-sm90-bf16" },
	};
	struct mxa_plan p;
	unsigned int i;

	for (i = 0; i < TEST_ARRAY_SIZE(want); i++) {
		d->m = want[i].m;
		d->n = want[i].n;
		d->a_elem = want[i].a;
		d->b_elem = want[i].a;
		CHECK_RET(mxa_plan(cuda, d, MXA_PREF_AUTO, &p), 0);
		CHECK(!strcmp(p.kernel, want[i].kernel),
		      "AUTO plans %s for M %u N %u %s, want %s (%s)", p.kernel,
		      d->m, d->n, test_elem(d->a_elem)->name, want[i].kernel,
		      p.reason);
		CHECK_RET(mxa_plan(cuda, d, MXA_PREF_NATIVE, &p), 0);
		CHECK(!strcmp(p.kernel, want[i].kernel), "NATIVE plans %s",
		      p.kernel);
	}
	printf("plan M %u N %u %s: %s: %s\n", d->m, d->n, test_elem(d->a_elem)->name,
	       p.kernel, p.reason);
	/* Forced outside its range: refused, naming the range. */
	d->m = 100;
	setenv("MXACCEL_KERNEL", "cuda-mx-sm90-skinny", 1);
	CHECK_RET(mxa_plan(cuda, d, MXA_PREF_AUTO, &p), -EOPNOTSUPP);
	CHECK(strstr(p.reason, "M <= 32") != NULL, "forced skinny at M 100: %s",
	      p.reason);
	setenv("MXACCEL_KERNEL", "cuda-mx-sm90-fp8", 1);
	CHECK_RET(mxa_plan(cuda, d, MXA_PREF_AUTO, &p), 0);
	CHECK(!strcmp(p.kernel, "cuda-mx-sm90-fp8"), "forced fp8: %s", p.kernel);
	unsetenv("MXACCEL_KERNEL");
	d->m = 16;
	d->n = 4096;
	d->a_elem = MXA_ELEM_E5M2;
	d->b_elem = MXA_ELEM_E2M1;
}

/* The variables that chose kernels before the table did: errors now. */
static void check_old_env(void)
{
	static const char *const vars[] = { "MXACCEL_CUDA_TILE", "MXACCEL_CUDA_SKINNY" };
	struct gcase g;
	struct test_mx a, b;
	struct mxa_dense c;
	uint32_t *cin;
	unsigned int i;

	random_case(&g, 40, 40, 64, 3, NARROW, false);
	cin = calloc((size_t)g.m * g.n, 4);
	make_inputs(&g, &a, &b, cin);
	for (i = 0; i < TEST_ARRAY_SIZE(vars); i++) {
		setenv(vars[i], "dbuf", 1);
		CHECK_RET(gemm(cuda, &g, &a, &b, cin, MXA_PREF_NATIVE, NULL, &c),
			  -EINVAL);
		test_dense_release(&c);
		unsetenv(vars[i]);
	}
	test_mx_free(&a);
	test_mx_free(&b);
	free(cin);
}

static void check_plans(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E5M2,
		.b_elem = MXA_ELEM_E2M1, .dtype = MXA_DTYPE_BF16,
		.m = 16, .n = 4096, .k = 4096,
	};
	struct mxa_capability cap;
	struct mxa_plan p;

	CHECK_RET(mxa_plan(cuda, &d, MXA_PREF_EMULATED, &p), 0);
	CHECK(!strcmp(p.kernel, "cuda-exact") && p.exact,
	      "EMULATED plans %s", p.kernel);
	CHECK_RET(mxa_query(cuda, &d, MXA_PREF_NATIVE, &cap), 0);
	have_native = cap.support == MXA_SUPPORT_NATIVE;
	printf("NATIVE gemm on cuda:0: %s (%s)\n",
	       have_native ? cap.kernel : "none", cap.reason);
	if (have_native)
		check_paths(&d);
	setenv("MXACCEL_KERNEL", "cuda-dequant-cublas", 1);
	have_cublas = !mxa_plan(cuda, &d, MXA_PREF_AUTO, &p);
	unsetenv("MXACCEL_KERNEL");
	printf("cuda-dequant-cublas: %s\n", have_cublas ? "available" : p.reason);
}

int main(void)
{
	test_seed(0x6375646167656d6dull);
	cuda = cudatest_open();
	cpu = test_open_cpu();
	check_plans();
	if (getenv("MXACCEL_TEST_QUICK")) {
		/* A few small native GEMMs, for compute-sanitizer. */
		struct gcase g;
		unsigned int i;

		for (i = 0; have_native && i < 5; i++) {
			/*
			 * Skinny (M 16, K split in four), decode (M 40), bf16
			 * (M 130), the fp8 kernel alone (M 16), bf16 with A
			 * by the pre-pass (M 130).
			 */
			random_case(&g, i == 0 || i == 3 ? 16 : i == 1 ? 40 : 130,
				    i ? 70 : 200, i ? 160 + 128 * i : 1024, i * 8, WIDE,
				    false);
			bounded(&g, i == 3 ? "cuda-mx-sm90-fp8" :
				    i == 4 ? "cuda-mx-sm90-bf16-ss" : "native",
				&st_native);
		}
		mxa_device_close(cuda);
		mxa_device_close(cpu);
		return test_finish();
	}
	if (have_native)
		check_old_env();
	exact_all();
	printf("cuda-exact: %u cases bit-identical to cpu-exact\n", n_exact);
	check_batch();
	if (have_native) {
		/* The M each path runs (cuda_sm90_select.cu). */
		static const struct {
			const char *name;
			uint32_t min_m, max_m;
		} paths[] = {
			{ "cuda-mx-sm90-skinny", 1, 32 },
			{ "cuda-mx-sm90-decode", 1, 64 },
			{ "cuda-mx-sm90-bf16", 65, ~0u },
			{ "cuda-mx-sm90-bf16-ss", 65, ~0u },
			{ "cuda-mx-sm90-fp8", 1, ~0u },
			{ "cuda-mx-sm90-fp8-single", 65, ~0u },
			{ "cuda-mx-sm90-fp8-quad", 65, ~0u },
		};
		unsigned int t, sh;

		/* Each shape on the path the kernel table picks. */
		bounded_all("native", &st_native);
		/* Every path forced, on the shapes of its range. */
		for (t = 0; t < TEST_ARRAY_SIZE(paths); t++) {
			struct stats st;
			struct gcase g;

			memset(&st, 0, sizeof(st));
			for (sh = 0; sh < TEST_ARRAY_SIZE(shapes); sh++) {
				if (paths[t].max_m > 64) {
					random_case(&g, shapes[sh][0] + 64, shapes[sh][1],
						    shapes[sh][2], sh * 7 + t,
						    (enum scales)(sh % 3), sh % 2);
					bounded(&g, paths[t].name, &st);
				}
				if (paths[t].min_m > 64)
					continue;
				/* Small M (the fp8 kernel's swapped tiles). */
				random_case(&g, 1 + (sh * 29 + t * 7) % paths[t].max_m,
					    shapes[sh][1], shapes[sh][2], sh * 7 + t + 1,
					    (enum scales)(sh % 3), sh % 2);
				bounded(&g, paths[t].name, &st);
			}
			report(paths[t].name, &st);
		}
	}
	if (have_cublas)
		bounded_all("cuda-dequant-cublas", &st_cublas);
	mxa_device_close(cuda);
	mxa_device_close(cpu);
	return test_finish();
}
