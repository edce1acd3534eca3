// SPDX-License-Identifier: GPL-2.0
/*
 * mxa_gemm_weight_only(): C (+)= A * B^T with a dense fp32 / bf16 A and an
 * MX or NVFP4 B.
 *
 * EMULATED is checked bit for bit against a reference of this file that
 * shares nothing with the library: every product a * code * scale (*
 * tensor scale) is an integer times a power of two, so on shapes and value
 * ranges chosen to fit, all of them (and C) are summed exactly in an
 * __int128 at the smallest exponent, and the sum is rounded once (RNE) to
 * fp32 or bf16 here.  Zero results compare as values (either sign).
 *
 * NATIVE (and AUTO) is checked against EMULATED on random ragged shapes,
 * fp32 and bf16 A and C, with and without accumulation, strided and offset
 * operands, plain and swizzled scales, NVFP4 with and without a tensor
 * scale, on every cpu ISA level this machine runs ($MXACCEL_CPU_ISA), with
 * the bound of Documentation/numerics.rst: n = K + 2 (+ 1 accumulating),
 * gamma = n * 2^-24, |c - c_ref| <= gamma * S + 2^-24 |c_ref| (fp32) or
 * + 2^-8 (|c| + |c_ref|) (bf16), S = sum |a_k b_k| (+ |C|), plus
 * (n + 2) * 2^-126 for sums near the bottom of fp32's range, which the
 * bf16-dot row kernel flushes to zero (the values here stay far above
 * it).  Special
 * values (NaN and Inf in A, NaN scales in B, Inf * 0) must match exactly,
 * and the cpu's NATIVE result must be the same bits on one thread.
 * Then every error path by errno, with C left alone; and plans/queries:
 * the cpu names its kernels, other devices answer for themselves.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/*
 * dev: the device under test; ref_dev: where EMULATED runs (dev when it
 * has an exact weight-only kernel, else the cpu, on copies of the data).
 */
static struct mxa_device *dev, *ref_dev;
static unsigned int n_exact, n_native, n_special, n_levels, n_thread_checks;
static unsigned int n_repeat;
static double worst_ratio;
static unsigned int n_wgmma_cases;
static double worst_wgmma;
static char worst_wgmma_case[128];
/* A's dtype for one_case(), where a case forces it; else random. */
static int forced_a_dtype = -1;

/* Host copy of B: one code per byte, rows x cols; scales rows x blocks. */
struct wb {
	enum mxa_elem elem;
	bool nvfp4;
	float tensor_scale;		/* NVFP4 only, 0 = none */
	uint32_t rows, cols, bs;
	uint8_t *code, *scale;
};

struct place {
	enum mxa_scale_layout layout;
	size_t data_offset, data_pad, scale_offset, scale_pad;
	size_t a_offset, a_pad, c_offset, c_pad;	/* in elements */
};

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

static int k_exp(enum mxa_elem e)
{
	static const int kexp[] = { 0, -9, -16, -3, -4, -1 };

	return kexp[e];
}

/* value of a code = k * 2^k_exp(elem) */
static int64_t code_k(enum mxa_elem e, uint8_t code)
{
	return (int64_t)ldexp(test_elem_value(e, code), -k_exp(e));
}

static double scale_value(const struct wb *b, uint8_t s)
{
	if (!b->nvfp4)
		return test_scale_value(s);
	if ((s & 0x7f) == 0x7f)
		return NAN;
	return test_elem_value(MXA_ELEM_E4M3, s);
}

static double b_value(const struct wb *b, uint32_t r, uint32_t k)
{
	double v = test_elem_value(b->elem, b->code[(size_t)r * b->cols + k]) *
		   scale_value(b, b->scale[(size_t)r * (b->cols / b->bs) +
					   k / b->bs]);

	return b->tensor_scale != 0 ? v * b->tensor_scale : v;
}

static void wb_alloc(struct wb *b, enum mxa_elem elem, bool nvfp4,
		     uint32_t rows, uint32_t cols)
{
	memset(b, 0, sizeof(*b));
	b->elem = nvfp4 ? MXA_ELEM_E2M1 : elem;
	b->nvfp4 = nvfp4;
	b->rows = rows;
	b->cols = cols;
	b->bs = nvfp4 ? 16 : 32;
	b->code = xmalloc((size_t)rows * cols);
	b->scale = xmalloc((size_t)rows * (cols / b->bs));
}

static void wb_free(struct wb *b)
{
	free(b->code);
	free(b->scale);
}

/* B into buffers of device `on` as p says. */
static int upload_b(struct mxa_device *on, const struct wb *b,
		    const struct place *p, struct mxa_matrix *m)
{
	uint32_t blocks = b->cols / b->bs, r, c;
	bool fp4 = b->elem == MXA_ELEM_E2M1;
	size_t row_bytes = fp4 ? b->cols / 2 : b->cols;
	size_t dstride = row_bytes + p->data_pad, sstride = blocks + p->scale_pad;
	size_t dsize = p->data_offset + b->rows * dstride, ssize;
	uint8_t *d, *s;
	int ret;

	if (p->layout == MXA_LAYOUT_SWIZZLED)
		ssize = p->scale_offset + (size_t)(b->rows + 127) / 128 * 128 *
			((blocks + 3) / 4 * 4);
	else
		ssize = p->scale_offset + (size_t)b->rows * sstride;
	d = xmalloc(dsize);
	s = xmalloc(ssize);
	memset(d, 0xa5, dsize);
	memset(s, 0xa5, ssize);
	for (r = 0; r < b->rows; r++) {
		uint8_t *row = d + p->data_offset + r * dstride;
		const uint8_t *codes = b->code + (size_t)r * b->cols;

		if (fp4)
			for (c = 0; c < b->cols / 2; c++)
				row[c] = (uint8_t)((codes[2 * c] & 0xf) |
						   (codes[2 * c + 1] << 4));
		else
			memcpy(row, codes, b->cols);
		for (c = 0; c < blocks; c++) {
			size_t at = p->layout == MXA_LAYOUT_SWIZZLED ?
				    mxa_swizzle_index(b->rows, blocks, r, c) :
				    r * sstride + c;

			s[p->scale_offset + at] = b->scale[(size_t)r * blocks + c];
		}
	}
	memset(m, 0, sizeof(*m));
	ret = mxa_buffer_alloc(on, dsize, &m->data);
	if (!ret)
		ret = mxa_buffer_alloc(on, ssize, &m->scale);
	if (!ret)
		ret = mxa_buffer_write(m->data, 0, d, dsize);
	if (!ret)
		ret = mxa_buffer_write(m->scale, 0, s, ssize);
	m->data_offset = p->data_offset;
	m->data_stride = p->data_pad ? dstride : 0;
	m->scale_offset = p->scale_offset;
	m->scale_stride = p->layout == MXA_LAYOUT_PLAIN && p->scale_pad ?
			  sstride : 0;
	m->elem = b->elem;
	m->scale_layout = p->layout;
	m->rows = b->rows;
	m->cols = b->cols;
	m->scale_type = b->nvfp4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0;
	m->tensor_scale = b->tensor_scale;
	free(d);
	free(s);
	return ret;
}

/* --- the independent exact reference --------------------------------- */

struct term {
	__int128 v;	/* signed integer */
	int e;		/* times 2^e */
};

static struct term f32_term(uint32_t bits)
{
	int ex = (bits >> 23) & 0xff;
	int64_t sig = bits & 0x7fffff;
	struct term t;

	if (ex)
		sig |= 0x800000;
	else
		ex = 1;
	t.v = bits >> 31 ? -sig : sig;
	t.e = ex - 150;
	return t;
}

static struct term b_term(const struct wb *b, uint32_t r, uint32_t k)
{
	uint8_t s = b->scale[(size_t)r * (b->cols / b->bs) + k / b->bs];
	struct term t = { code_k(b->elem, b->code[(size_t)r * b->cols + k]),
			  k_exp(b->elem) };

	if (b->nvfp4) {
		t.v *= code_k(MXA_ELEM_E4M3, s);
		t.e += k_exp(MXA_ELEM_E4M3);
	} else {
		t.e += s - 127;
	}
	if (b->tensor_scale != 0) {
		struct term ts = f32_term(test_f32_bits(b->tensor_scale));

		t.v *= ts.v;
		t.e += ts.e;
	}
	return t;
}

/* sum * 2^e rounded once to nearest even with mbits: fp32 / bf16 bits. */
static uint32_t round_exact(__int128 sum, int e, unsigned int mbits)
{
	bool neg = sum < 0;
	__uint128_t mag = neg ? -(__uint128_t)sum :
					 (__uint128_t)sum;
	unsigned int width = 0, keep = mbits + 1, drop;
	double v;

	if (!mag)
		return 0;
	while (width < 128 && (mag >> width))
		width++;
	if (width > keep) {
		__uint128_t half, rest;

		drop = width - keep;
		half = (__uint128_t)1 << (drop - 1);
		rest = mag & (((__uint128_t)1 << drop) - 1);
		mag >>= drop;
		e += (int)drop;
		if (rest > half || (rest == half && (mag & 1)))
			mag++;
	}
	v = ldexp((double)mag, e);	/* exact: at most 25 bits */
	return test_round_float(neg ? -v : v, mbits);
}

/* Exact C[i][j]; false if the terms do not fit 120 bits (test design). */
static bool exact_ref(const uint32_t *a, uint32_t k, const struct wb *b,
		      uint32_t j, const uint32_t *cin, unsigned int mbits,
		      uint32_t *out)
{
	struct term t[4097];
	unsigned int n = 0, q;
	int emin = 1 << 20, emax = -(1 << 20);
	__int128 sum = 0;

	for (q = 0; q < k; q++) {
		struct term x = f32_term(a[q]), y = b_term(b, j, q);

		t[n].v = x.v * y.v;
		t[n].e = x.e + y.e;
		if (t[n].v)
			n++;
	}
	if (cin)
		t[n++] = f32_term(*cin);
	for (q = 0; q < n; q++) {
		__uint128_t mag = t[q].v < 0 ? -(__uint128_t)t[q].v :
					(__uint128_t)t[q].v;
		int top = t[q].e;

		while (mag) {
			mag >>= 1;
			top++;
		}
		if (t[q].e < emin)
			emin = t[q].e;
		if (top > emax)
			emax = top;
	}
	if (!n) {
		*out = 0;
		return true;
	}
	/* 4097 terms add at most 13 bits: the sum stays below 2^126. */
	if (emax - emin > 112)
		return false;
	for (q = 0; q < n; q++)
		sum += (__int128)((__uint128_t)t[q].v << (t[q].e - emin));
	*out = round_exact(sum, emin, mbits);
	return true;
}

/*
 * The exact reference and S of every result of one case, on every online
 * CPU: on the large prefill shapes the single-threaded loop took minutes.
 */
struct ref_job {
	const uint32_t *abits, *cin;
	const struct wb *b;
	uint32_t *ref;
	double *sabs;
	uint32_t n, k;
	size_t mn, next;
	bool bf16_c, accumulate, specials, too_wide;
	unsigned int mbits;
	pthread_mutex_t lock;
};

static void *reference_worker(void *arg)
{
	struct ref_job *j = arg;
	const size_t chunk = 4096;

	for (;;) {
		size_t i, end;
		bool bad;

		pthread_mutex_lock(&j->lock);
		i = j->next;
		j->next = i + chunk < j->mn ? i + chunk : j->mn;
		end = j->next;
		bad = j->too_wide;
		pthread_mutex_unlock(&j->lock);
		if (i >= end || bad)
			return NULL;
		for (; i < end; i++) {
			uint32_t row = (uint32_t)(i / j->n), col = (uint32_t)(i % j->n);
			uint32_t cf = j->bf16_c ? j->cin[i] << 16 : j->cin[i];
			const uint32_t *a = j->abits + (size_t)row * j->k;
			double s = 0;
			uint32_t q;

			for (q = 0; q < j->k; q++)
				s += fabs((double)test_f32(a[q]) * b_value(j->b, col, q));
			if (j->accumulate)
				s += fabs((double)test_f32(cf));
			j->sabs[i] = s * (1 + 0x1p-40);
			if (j->specials ||
			    exact_ref(a, j->k, j->b, col, j->accumulate ? &cf : NULL,
				      j->mbits, &j->ref[i]))
				continue;
			pthread_mutex_lock(&j->lock);
			j->too_wide = true;
			pthread_mutex_unlock(&j->lock);
			return NULL;
		}
	}
}

/* false if some result's terms do not fit exact_ref() (test design). */
static bool reference_all(struct ref_job *j)
{
	pthread_t tid[16];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int t, started = 0;

	pthread_mutex_init(&j->lock, NULL);
	for (t = 1; t < (cpus > 16 ? 16 : cpus); t++)
		if (!pthread_create(&tid[started], NULL, reference_worker, j))
			started++;
	reference_worker(j);
	for (t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&j->lock);
	return !j->too_wide;
}

/*
 * MXACCEL_TEST_DUMP=path: the terms of the worst cuda-weight-only-wgmma
 * result so far (k, a_k, b_k per line, then got, exact and S), to fit the
 * tensor cores' accumulation model offline.
 */
static void dump_worst(const uint32_t *a, const struct wb *b, uint32_t col,
		       uint32_t k, double got, double exact, double s)
{
	const char *path = getenv("MXACCEL_TEST_DUMP");
	FILE *f;
	uint32_t q;

	if (!path || !*path)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	for (q = 0; q < k; q++)
		fprintf(f, "%u %a %a\n", q, (double)test_f32(a[q]), b_value(b, col, q));
	fprintf(f, "got %a exact %a S %a\n", got, exact, s);
	fclose(f);
}

/* --- one case ---------------------------------------------------------- */

static uint32_t rand_a_bits(bool bf16, int spread)
{
	uint32_t sig = test_rand_below(1u << 23);
	int e = 127 - spread + (int)test_rand_below(2 * spread + 1);
	uint32_t bits = (test_rand_below(2) << 31) | ((uint32_t)e << 23) | sig;

	return bf16 ? bits & 0xffff0000u : bits;
}

struct run {
	struct mxa_dense a, c;
	struct mxa_matrix b;
};

static int upload_all(struct mxa_device *on, const uint32_t *abits,
		      uint32_t m, uint32_t k,
		      enum mxa_dtype adt, const struct wb *b,
		      const uint32_t *cin, enum mxa_dtype cdt,
		      const struct place *p, struct run *r)
{
	uint32_t *a16 = NULL;
	const uint32_t *asrc = abits;
	size_t i;
	int ret;

	if (adt == MXA_DTYPE_BF16) {
		a16 = xmalloc((size_t)m * k * 4);
		for (i = 0; i < (size_t)m * k; i++)
			a16[i] = abits[i] >> 16;
		asrc = a16;
	}
	ret = test_dense_upload(on, adt, m, k, asrc,
				p->a_offset * (adt ? 2 : 4),
				p->a_pad * (adt ? 2 : 4), &r->a);
	free(a16);
	if (ret)
		return ret;
	ret = upload_b(on, b, p, &r->b);
	if (ret)
		return ret;
	return test_dense_upload(on, cdt, m, b->rows, cin,
				 p->c_offset * (cdt ? 2 : 4),
				 p->c_pad * (cdt ? 2 : 4), &r->c);
}

static void release_all(struct run *r)
{
	test_dense_release(&r->a);
	test_mx_release(&r->b);
	test_dense_release(&r->c);
}

static void random_place(struct place *p, bool nvfp4)
{
	memset(p, 0, sizeof(*p));
	p->layout = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
	if (test_rand_below(2)) {
		p->data_offset = test_rand_below(14);
		p->data_pad = test_rand_below(10);
		p->scale_offset = test_rand_below(8);
		p->scale_pad = p->layout == MXA_LAYOUT_PLAIN ?
			       test_rand_below(6) : 0;
		p->a_offset = test_rand_below(5);
		p->a_pad = test_rand_below(5);
		p->c_offset = test_rand_below(5);
		p->c_pad = test_rand_below(5);
	}
	(void)nvfp4;
}

/*
 * The cpu's NATIVE result must not depend on its thread count: run again
 * on one thread and compare bit for bit with got, then restore the count.
 */
static void check_one_thread(struct run *r, uint32_t flags,
			     const uint32_t *cin, enum mxa_dtype cdt,
			     const struct place *pl, const uint32_t *got,
			     size_t mn)
{
	struct mxa_device_info info = test_device_info(dev);
	uint32_t *one = xmalloc(mn * 4);
	size_t es = cdt ? 2 : 4;
	int ret;

	n_thread_checks++;
	test_dense_release(&r->c);
	ret = mxa_device_set_threads(dev, 1);
	if (!ret)
		ret = test_dense_upload(dev, cdt, r->a.rows, r->b.rows, cin,
					pl->c_offset * es, pl->c_pad * es,
					&r->c);
	if (!ret)
		ret = mxa_gemm_weight_only(dev, &r->a, &r->b, &r->c, flags,
					   MXA_PREF_NATIVE);
	if (!ret)
		ret = test_dense_download(&r->c, one);
	CHECK(ret == 0, "one thread: %d (%s)", ret, mxa_strerror(ret));
	CHECK(ret || !memcmp(one, got, mn * 4),
	      "native weight-only differs between %u threads and one",
	      info.threads);
	CHECK_RET(mxa_device_set_threads(dev, info.threads), 0);
	free(one);
}

/*
 * A device's NATIVE result must not depend on timing (the CUDA kernel's
 * split K adds its partials in a fixed order): run again, compare bits.
 */
static void check_repeat(struct run *r, uint32_t flags, const uint32_t *cin,
			 enum mxa_dtype cdt, const struct place *pl,
			 const uint32_t *got, size_t mn)
{
	uint32_t *again = xmalloc(mn * 4);
	size_t es = cdt ? 2 : 4, i;
	int ret;

	n_repeat++;
	test_dense_release(&r->c);
	ret = test_dense_upload(dev, cdt, r->a.rows, r->b.rows, cin,
				pl->c_offset * es, pl->c_pad * es, &r->c);
	if (!ret)
		ret = mxa_gemm_weight_only(dev, &r->a, &r->b, &r->c, flags,
					   MXA_PREF_NATIVE);
	if (!ret)
		ret = test_dense_download(&r->c, again);
	CHECK(ret == 0, "repeat: %d (%s)", ret, mxa_strerror(ret));
	for (i = 0; !ret && i < mn; i++) {
		if (again[i] == got[i])
			continue;
		CHECK(0, "native weight-only %ux%ux%u not reproducible: C[%zu] = 0x%08x, then 0x%08x",
		      r->a.rows, r->b.rows, r->a.cols, i, got[i], again[i]);
		break;
	}
	free(again);
}

/*
 * The bound of the kernel that runs the request under pref (its name from
 * mxa_plan(), as test_native_bound.c looks it up): gamma (times S) and an
 * absolute term for sums near fp32's underflow.  false (a failure) when
 * the kernel states none.
 *
 * cpu-weight-only: n = K + 2 (+ 1 accumulating), gamma = n * 2^-24; bf16
 *   A through vdpbf16ps flushes sums below 2^-126: (n + 2) * 2^-126.
 * cuda-weight-only: P = 3 bf16 pieces of fp32 A (1 for bf16 A), nb = K /
 *   block scale blocks: gamma = (72 P + 2 nb + 5) * 2^-24
 *   (Documentation/numerics.rst: the tensor cores' sums of each block's
 *   chain of mmas, one fused multiply-add per block, split-K and tensor
 *   scale and C_in one rounding each).
 * cuda-weight-only-wgmma: one chain of 4 ceil(K / 64) wgmma k16 steps per
 *   result, each within 18 * 2^-23 of its addends' magnitudes (17 addends
 *   aligned to the largest and truncated, the sum truncated to fp32), the
 *   epilogue's scale and C_in one rounding each: gamma = (36 steps + 3) *
 *   2^-24, which also covers the stripes cuda-weight-only redoes.
 */
static bool kernel_bound(enum mxa_pref pref, enum mxa_dtype adt, bool nvfp4,
			 uint32_t m, uint32_t n, uint32_t k, enum mxa_dtype cdt,
			 bool accumulate,
			 char kernel[MXA_NAME_MAX], double *gamma, double *tiny)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .a_dtype = adt,
		.b_elem = MXA_ELEM_E2M1, .dtype = cdt, .m = m, .n = n, .k = k,
		.flags = accumulate ? MXA_GEMM_ACCUMULATE : 0,
		.b_scale_type = nvfp4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
	};
	struct mxa_plan plan;
	int ret = mxa_plan(dev, &d, pref, &plan);

	CHECK(ret == 0, "plan for pref %d: %d (%s)", pref, ret, mxa_strerror(ret));
	if (ret)
		return false;
	snprintf(kernel, MXA_NAME_MAX, "%s", plan.kernel);
	if (!strcmp(kernel, "cuda-weight-only")) {
		double pieces = adt == MXA_DTYPE_F32 ? 3 : 1;
		double nb = k / (nvfp4 ? 16 : 32);

		*gamma = (72 * pieces + 2 * nb + 5) * 0x1p-24;
		*tiny = 0;
		return true;
	}
	if (!strcmp(kernel, "cuda-weight-only-wgmma")) {
		double steps = 4.0 * ((k + 63) / 64);

		n_wgmma_cases++;
		*gamma = (36 * steps + 3) * 0x1p-24;
		*tiny = 0;
		return true;
	}
	if (!strncmp(kernel, "cpu-", 4)) {
		double nr = k + 2 + (accumulate ? 1 : 0);

		*gamma = nr * 0x1p-24;
		/* vdpbf16ps (bf16 A) flushes sums below 2^-126 to zero. */
		*tiny = (nr + 2) * 0x1p-126;
		return true;
	}
	CHECK(0, "no stated weight-only bound for kernel %s", kernel);
	return false;
}

/*
 * One random problem: EMULATED against the exact reference, then NATIVE
 * and AUTO within the bound.  specials plants NaN / Inf in A and NaN
 * scales in B (then only the special-value rules are compared exactly).
 */
static void one_case(uint32_t m, uint32_t n, uint32_t k, enum mxa_elem eb,
		     bool nvfp4, bool specials)
{
	static const enum mxa_pref prefs[] = { MXA_PREF_NATIVE, MXA_PREF_AUTO };
	enum mxa_dtype adt = test_rand_below(2), cdt = test_rand_below(2);
	unsigned int mbits = cdt == MXA_DTYPE_BF16 ? 7 : 23;
	/* See the scales below. */
	bool wide = !nvfp4 && test_rand_below(4) == 0;
	bool accumulate = !wide && test_rand_below(2);
	uint32_t flags = accumulate ? MXA_GEMM_ACCUMULATE : 0;
	size_t mn = (size_t)m * n, i;
	uint32_t *abits = xmalloc((size_t)m * k * 4), *cin = xmalloc(mn * 4);
	uint32_t *ref = xmalloc(mn * 4), *got = xmalloc(mn * 4);
	double *sabs = xmalloc(mn * sizeof(double));
	struct place pl;
	struct wb b;
	struct run r = { 0 }, rr = { 0 };
	struct run *rp = ref_dev == dev ? &r : &rr;
	unsigned int p, bad = 0, base = 120;
	int ret;

	if (forced_a_dtype >= 0)
		adt = (enum mxa_dtype)forced_a_dtype;
	wb_alloc(&b, eb, nvfp4, n, k);
	random_place(&pl, nvfp4);
	for (i = 0; i < (size_t)m * k; i++)
		abits[i] = rand_a_bits(adt == MXA_DTYPE_BF16, 8);
	for (i = 0; i < (size_t)n * k; i++)
		b.code[i] = test_rand_code(b.elem, false);
	/*
	 * MX scales near 1, or (a quarter of the MX cases, not accumulating)
	 * wide: each row of B draws its blocks' scales from 24 values (e5m2,
	 * whose codes span 31 binades: 12) starting anywhere in 2^-97 .. 2^3,
	 * so that rows whose blocks differ by up to 2^23 and rows far from 1
	 * meet every kernel.  Bounded so that every term stays within
	 * exact_ref()'s 112 bits (24 + 4 significant bits, A's 17 binades,
	 * the codes' and the scales') and every result an fp32 and bf16
	 * normal.
	 */
	for (i = 0; i < (size_t)n * (k / b.bs); i++) {
		if (i % (k / b.bs) == 0)
			base = wide ? 30 + test_rand_below(101) : 120;
		b.scale[i] = nvfp4 ? (uint8_t)(1 + test_rand_below(0x7e)) :
			     (uint8_t)(base + test_rand_below(!wide ? 15 :
							      eb == MXA_ELEM_E5M2 ? 12 : 24));
	}
	if (nvfp4 && test_rand_below(2))
		b.tensor_scale = test_f32(rand_a_bits(false, 3) & 0x7fffffffu);
	for (i = 0; i < mn; i++) {
		uint32_t v = rand_a_bits(false, 6);

		cin[i] = cdt == MXA_DTYPE_BF16 ? v >> 16 : v;
	}
	if (specials) {
		unsigned int t;

		for (t = 0; t < 3; t++) {
			size_t at = test_rand_below(m * k);

			switch (test_rand_below(4)) {
			case 0:
				abits[at] = 0x7fc00000;
				break;
			case 1:
				abits[at] = test_rand_below(2) ? 0x7f800000 :
								 0xff800000;
				break;
			case 2:
				/* Inf times a zero code: NaN */
				abits[at] = 0x7f800000;
				b.code[(size_t)test_rand_below(n) * k + at % k] = 0;
				break;
			default:
				b.scale[test_rand_below(n * (k / b.bs))] =
					nvfp4 ? 0x7f : 0xff;
				break;
			}
		}
	}

	/* Exact reference and S. */
	{
		struct ref_job job = {
			.abits = abits, .b = &b, .cin = cin, .ref = ref,
			.sabs = sabs, .n = n, .k = k, .mn = mn,
			.bf16_c = cdt == MXA_DTYPE_BF16, .accumulate = accumulate,
			.specials = specials, .mbits = mbits,
		};

		if (!reference_all(&job)) {
			CHECK(0, "test design: terms of %ux%ux%u too wide", m, n, k);
			goto out;
		}
	}

	ret = upload_all(dev, abits, m, k, adt, &b, cin, cdt, &pl, &r);
	CHECK(ret == 0, "upload: %d", ret);
	if (ret)
		goto out;
	/* EMULATED on ref_dev: dev itself, or the cpu on copies. */
	ret = ref_dev == dev ? 0 :
	      upload_all(ref_dev, abits, m, k, adt, &b, cin, cdt, &pl, &rr);
	CHECK(ret == 0, "upload to %s: %d", test_device_info(ref_dev).name, ret);
	if (ret)
		goto out_release;
	ret = mxa_gemm_weight_only(ref_dev, &rp->a, &rp->b, &rp->c, flags,
				   MXA_PREF_EMULATED);
	CHECK(ret == 0, "emulated %ux%ux%u on %s: %d (%s)", m, n, k,
	      test_device_info(ref_dev).name, ret, mxa_strerror(ret));
	if (!ret && !specials) {
		ret = test_dense_download(&rp->c, got);
		for (i = 0; !ret && i < mn; i++) {
			n_exact++;
			if (got[i] == ref[i] ||
			    (test_float_value(got[i], mbits) == 0 &&
			     test_float_value(ref[i], mbits) == 0))
				continue;
			CHECK(0, "emulated %s%s x %s %ux%ux%u %s%s: C[%zu] = 0x%08x, exact 0x%08x",
			      mxa_dtype_name(adt), "", nvfp4 ? "nvfp4" :
			      test_elem(eb)->name, m, n, k, mxa_dtype_name(cdt),
			      accumulate ? " accumulate" : "", i, got[i], ref[i]);
			break;
		}
	} else if (!ret) {
		ret = test_dense_download(&rp->c, ref);
	}
	CHECK(test_dense_pad_intact(&rp->c), "emulated wrote outside C");
	if (ret)
		goto out_release;

	for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
		char kernel[MXA_NAME_MAX];
		double gamma, tiny, *worst;

		if (!kernel_bound(prefs[p], adt, nvfp4, m, n, k, cdt, accumulate,
				  kernel, &gamma, &tiny))
			break;
		worst = strcmp(kernel, "cuda-weight-only-wgmma") ? &worst_ratio : &worst_wgmma;

		/* A fresh C_in for each run. */
		test_dense_release(&r.c);
		ret = test_dense_upload(dev, cdt, m, n, cin,
					pl.c_offset * (cdt ? 2 : 4),
					pl.c_pad * (cdt ? 2 : 4), &r.c);
		if (!ret)
			ret = mxa_gemm_weight_only(dev, &r.a, &r.b, &r.c, flags,
						   prefs[p]);
		CHECK(ret == 0, "pref %d %ux%ux%u: %d (%s)", prefs[p], m, n, k,
		      ret, mxa_strerror(ret));
		if (!ret)
			ret = test_dense_download(&r.c, got);
		CHECK(test_dense_pad_intact(&r.c), "native wrote outside C");
		if (!ret && prefs[p] == MXA_PREF_NATIVE && test_is_cpu(dev))
			check_one_thread(&r, flags, cin, cdt, &pl, got, mn);
		if (!ret && prefs[p] == MXA_PREF_NATIVE && !test_is_cpu(dev))
			check_repeat(&r, flags, cin, cdt, &pl, got, mn);
		for (i = 0; !ret && i < mn && bad < 3; i++) {
			double c = test_float_value(got[i], mbits);
			double cr = test_float_value(ref[i], mbits);
			double bound, err;
			bool ok;

			n_native++;
			if (test_isnan_bits(ref[i], mbits) || isinf(cr) ||
			    test_isnan_bits(got[i], mbits) || isinf(c)) {
				n_special++;
				ok = test_isnan_bits(ref[i], mbits) ?
				     test_isnan_bits(got[i], mbits) : c == cr;
			} else {
				err = fabs(c - cr);
				bound = gamma * sabs[i] + tiny +
					(mbits == 23 ? 0x1p-24 * fabs(cr) :
					 0x1p-8 * (fabs(c) + fabs(cr)));
				ok = err <= bound;
				if (bound > 0 && err / bound > *worst) {
					*worst = err / bound;
					if (worst == &worst_wgmma) {
						dump_worst(abits + (i / n) * k, &b,
							   (uint32_t)(i % n), k, c, cr,
							   sabs[i]);
						snprintf(worst_wgmma_case, sizeof(worst_wgmma_case),
							 "%s x %s %ux%ux%u%s%s",
							 mxa_dtype_name(adt),
							 nvfp4 ? "nvfp4" : test_elem(eb)->name,
							 m, n, k, wide ? " wide scales" : "",
							 accumulate ? " accumulate" : "");
					}
				}
			}
			if (ok)
				continue;
			bad++;
			CHECK(0, "pref %d (%s) %s x %s%s %ux%ux%u %s%s%s: C[%zu][%zu] = %a, reference %a, |diff| %a > bound %a (sum|ab| %a)",
			      prefs[p], kernel, mxa_dtype_name(adt),
			      nvfp4 ? "nvfp4" : test_elem(eb)->name,
			      b.tensor_scale != 0 ? " (tensor scale)" : "", m, n, k,
			      mxa_dtype_name(cdt), accumulate ? " accumulate" : "",
			      pl.layout ? " swizzled" : "", i / n, i % n, c, cr,
			      fabs(c - cr), gamma * sabs[i] + tiny +
			      (mbits == 23 ? 0x1p-24 * fabs(cr) :
			       0x1p-8 * (fabs(c) + fabs(cr))), sabs[i]);
		}
	}
out_release:
	release_all(&r);
	if (ref_dev != dev)
		release_all(&rr);
out:
	wb_free(&b);
	free(abits);
	free(cin);
	free(ref);
	free(got);
	free(sabs);
}

static void random_cases(unsigned int count, bool small)
{
	static const enum mxa_elem elems[] = { MXA_ELEM_E4M3, MXA_ELEM_E5M2,
					       MXA_ELEM_E2M3, MXA_ELEM_E3M2,
					       MXA_ELEM_E2M1 };
	unsigned int c;

	for (c = 0; c < count; c++) {
		bool nvfp4 = c % 6 == 5;
		uint32_t unit = nvfp4 ? 16 : 32;
		uint32_t m = small ? 1 + test_rand_below(9) :
				     1 + test_rand_below(80);
		uint32_t n = 1 + test_rand_below(small ? 40 : 70);
		uint32_t k = unit * (1 + test_rand_below(small ? 8 : 24));

		one_case(m, n, k, elems[c % 5], nvfp4, c % 4 == 3);
	}
}

/*
 * A device other than the cpu with a native kernel (cuda:0): the random
 * cases, then decode shapes that split K over CTAs, span several tiles of
 * B and groups of A, all formats.  EMULATED runs on the device if it has
 * an exact kernel, else on the cpu.
 */
static bool has_native_weight_only(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .a_dtype = MXA_DTYPE_BF16,
		.b_elem = MXA_ELEM_E2M1, .dtype = MXA_DTYPE_F32,
		.m = 1, .n = 1, .k = 32,
	};
	struct mxa_capability cap;

	return !mxa_query(dev, &d, MXA_PREF_NATIVE, &cap) &&
	       cap.support == MXA_SUPPORT_NATIVE;
}

/*
 * The tile kernel's range on the cpu (cpu_decode.h: 16 B rows at a time;
 * on avx512bf16 from 7 rows of A on, in stripes of 16, the last one of 6
 * rows on the row kernel; on amx for any): bf16 A, B rows in whole groups
 * of 16 and past them, K in several of its chunks.
 */
static void tile_cases(void)
{
	static const enum mxa_elem elems[] = { MXA_ELEM_E2M1, MXA_ELEM_E4M3,
					       MXA_ELEM_E5M2, MXA_ELEM_E2M3,
					       MXA_ELEM_E3M2 };
	static const uint32_t shapes[][3] = {
		{ 16, 140, 1568 }, { 7, 40, 1056 }, { 13, 33, 4096 },
		{ 38, 20, 512 },
	};
	unsigned int i, c;

	forced_a_dtype = MXA_DTYPE_BF16;
	for (i = 0; i < TEST_ARRAY_SIZE(shapes); i++) {
		for (c = 0; c < 6; c++) {
			bool nvfp4 = c == 5;

			one_case(shapes[i][0], shapes[i][1],
				 shapes[i][2] - (nvfp4 && i % 2 ? 16 : 0),
				 elems[c % 5], nvfp4, false);
		}
	}
	forced_a_dtype = -1;
}

/* Progress on stderr: the device suite takes minutes. */
static void progress(const char *what)
{
	static struct timespec t0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!t0.tv_sec && !t0.tv_nsec)
		t0 = t;
	fprintf(stderr, "[%6.1f s] %s\n", (double)(t.tv_sec - t0.tv_sec) +
		(t.tv_nsec - t0.tv_nsec) * 1e-9, what);
}

static void device_cases(void)
{
	static const enum mxa_elem elems[] = { MXA_ELEM_E4M3, MXA_ELEM_E5M2,
					       MXA_ELEM_E2M3, MXA_ELEM_E3M2,
					       MXA_ELEM_E2M1 };
	static const uint32_t decode[][3] = {
		{ 1, 300, 4096 }, { 16, 257, 2048 }, { 64, 130, 1024 },
		{ 33, 129, 512 }, { 7, 1000, 256 }, { 130, 40, 384 },
	};
	/*
	 * cuda-weight-only's ring of A's fragments (bf16 A: M <= 8 for
	 * e2m1, M <= 16 for the others; fp32 A: M <= 8, not e2m1) and the
	 * plain loads, on both sides of those limits, both A dtypes, K split
	 * and a number of spans that is not a multiple of a step's.
	 */
	static const uint32_t ring[][3] = {
		{ 1, 300, 4096 }, { 8, 97, 1056 }, { 9, 64, 2080 },
		{ 16, 140, 1568 }, { 17, 33, 640 },
	};
	/*
	 * cuda-weight-only-wgmma (bf16 A, M > 64 MX, > 128 NVFP4): ragged tiles on both
	 * sides (128 rows of B by 256 of A), K not a multiple of its chunks
	 * of 64, and (specials) the stripes it leaves to cuda-weight-only.
	 */
	static const uint32_t prefill[][3] = {
		{ 192, 130, 320 }, { 300, 257, 1056 }, { 513, 129, 96 },
		{ 200, 384, 2048 },
	};
	static const enum mxa_dtype adts[] = { MXA_DTYPE_BF16, MXA_DTYPE_F32 };
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .a_dtype = MXA_DTYPE_F32,
		.b_elem = MXA_ELEM_E2M1, .dtype = MXA_DTYPE_F32,
		.m = 1, .n = 1, .k = 32,
	};
	const char *q = getenv("MXACCEL_TEST_QUICK");
	bool quick = q && *q && strcmp(q, "0");
	struct mxa_capability cap;
	unsigned int i, c, a;

	if (mxa_query(dev, &d, MXA_PREF_EMULATED, &cap) ||
	    cap.support == MXA_SUPPORT_NONE) {
		if (mxa_device_open("cpu", &ref_dev)) {
			CHECK(0, "no cpu device for the EMULATED reference");
			ref_dev = dev;
			return;
		}
	}
	printf("%s: EMULATED reference on %s\n", test_device_info(dev).name,
	       test_device_info(ref_dev).name);
	/* MXACCEL_TEST_QUICK: few and small cases (compute-sanitizer runs). */
	progress("random cases");
	random_cases(quick ? 6 : 36, quick);
	progress("decode shapes");
	for (i = 0; i < (quick ? 2 : TEST_ARRAY_SIZE(decode)); i++) {
		for (c = 0; c < 6; c++) {
			bool nvfp4 = c == 5;
			/* NVFP4 on every other shape: K = 16 mod 32. */
			uint32_t k = decode[i][2] / (quick ? 8 : 1) -
				     (nvfp4 && i % 2 ? 16 : 0);

			one_case(decode[i][0], decode[i][1], k, elems[c % 5],
				 nvfp4, (i + c) % 4 == 3);
		}
	}
	progress("A's ring limits");
	for (i = 0; i < (quick ? 2 : TEST_ARRAY_SIZE(ring)); i++) {
		for (a = 0; a < TEST_ARRAY_SIZE(adts); a++) {
			forced_a_dtype = adts[a];
			for (c = 0; c < 6; c++) {
				bool nvfp4 = c == 5;
				uint32_t k = (quick ? ring[i][2] / 256 * 32 : ring[i][2]) -
					     (nvfp4 && i % 2 ? 16 : 0);

				one_case(ring[i][0], ring[i][1], k, elems[c % 5], nvfp4,
					 (i + a + c) % 4 == 3);
			}
		}
	}
	forced_a_dtype = MXA_DTYPE_BF16;
	progress("prefill shapes");
	for (i = 0; i < (quick ? 2 : TEST_ARRAY_SIZE(prefill)); i++) {
		for (c = 0; c < 6; c++) {
			bool nvfp4 = c == 5;
			uint32_t k = (quick ? (prefill[i][2] + 255) / 256 * 32 : prefill[i][2]) -
				     (nvfp4 && i % 2 ? 16 : 0);

			one_case(prefill[i][0], prefill[i][1], k, elems[c % 5], nvfp4,
				 (i + c) % 3 == 2);
		}
	}
	/*
	 * Two waves of its tiles and more: fp6/fp4 MX B goes to bf16 by the
	 * pre-pass (below, its consumers convert it; fp8 always).
	 */
	for (c = 2; !quick && c < 5; c++) {
		progress("prefill, two waves of tiles");
		one_case(2100, 4200, 64, elems[c], false, c == 4);
	}
	progress("device cases done");
	forced_a_dtype = -1;
}

/* --- errors ------------------------------------------------------------ */

struct req {
	struct mxa_dense a, c;
	struct mxa_matrix b;
	struct mxa_buffer *buf;		/* one buffer holding A, B and C */
};

/* A 2 x 64 fp32 at 0, B 3 x 64 e2m1 at 1024 (scales at 2048), C at 4096. */
static void req_init(struct req *q)
{
	static const uint8_t ones[96] = { [0 ... 95] = 0x22 };	/* 1.0 */
	static const uint8_t unit[6] = { 127, 127, 127, 127, 127, 127 };
	float a[128];
	int i;

	for (i = 0; i < 128; i++)
		a[i] = 1.0f;
	memset(q, 0, sizeof(*q));
	if (mxa_buffer_alloc(dev, 8192, &q->buf)) {
		fprintf(stderr, "cannot allocate\n");
		exit(1);
	}
	mxa_buffer_write(q->buf, 0, a, sizeof(a));
	mxa_buffer_write(q->buf, 1024, ones, sizeof(ones));
	mxa_buffer_write(q->buf, 2048, unit, sizeof(unit));
	q->a = (struct mxa_dense){ .buf = q->buf, .offset = 0,
				   .dtype = MXA_DTYPE_F32, .rows = 2,
				   .cols = 64 };
	q->b = (struct mxa_matrix){ .data = q->buf, .data_offset = 1024,
				    .scale = q->buf, .scale_offset = 2048,
				    .elem = MXA_ELEM_E2M1, .rows = 3,
				    .cols = 64 };
	q->c = (struct mxa_dense){ .buf = q->buf, .offset = 4096,
				   .dtype = MXA_DTYPE_F32, .rows = 2,
				   .cols = 3 };
}

static bool c_is(const struct req *q, uint8_t pat)
{
	uint8_t got[24];
	size_t i;

	mxa_buffer_read(q->buf, 4096, got, sizeof(got));
	for (i = 0; i < sizeof(got); i++)
		if (got[i] != pat)
			return false;
	return true;
}

static void expect(const struct req *base, const struct req *q,
		   uint32_t flags, int want, const char *what)
{
	uint8_t pat[24];
	int ret;

	memset(pat, 0x5a, sizeof(pat));
	mxa_buffer_write(base->buf, 4096, pat, sizeof(pat));
	ret = mxa_gemm_weight_only(dev, q ? &q->a : NULL, q ? &q->b : NULL,
				   q ? &q->c : NULL, flags, MXA_PREF_AUTO);
	CHECK(ret == want, "%s: %d (%s), want %d", what, ret,
	      mxa_strerror(ret), want);
	if (want)
		CHECK(c_is(base, 0x5a), "%s: C written on failure", what);
}

/* Whether dev has any kernel for the requests errors() makes. */
static bool has_weight_only(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .a_dtype = MXA_DTYPE_F32,
		.b_elem = MXA_ELEM_E2M1, .dtype = MXA_DTYPE_F32,
		.m = 2, .n = 3, .k = 64,
	};
	struct mxa_capability cap;

	return !mxa_query(dev, &d, MXA_PREF_AUTO, &cap) &&
	       cap.support != MXA_SUPPORT_NONE;
}

static void errors(void)
{
	struct mxa_device *other;
	struct mxa_buffer *small;
	struct req base, q;
	float c[6];
	int ret, i, valid;

	req_init(&base);
	q = base;
	/*
	 * A device with no weight-only kernel (plans() checked that it says
	 * so) refuses the valid request, after the same validation.
	 */
	valid = has_weight_only() ? 0 : -EOPNOTSUPP;
	expect(&base, &q, 0, valid, "valid");
	mxa_buffer_read(base.buf, 4096, c, sizeof(c));
	for (i = 0; !valid && i < 6; i++)
		CHECK(c[i] == 64.0f, "valid: C[%d] = %g, want 64", i, c[i]);

	CHECK_RET(mxa_gemm_weight_only(NULL, &q.a, &q.b, &q.c, 0,
				       MXA_PREF_AUTO), -EINVAL);
	ret = mxa_gemm_weight_only(dev, NULL, &q.b, &q.c, 0, MXA_PREF_AUTO);
	CHECK(ret == -EINVAL, "a NULL: %d", ret);
	ret = mxa_gemm_weight_only(dev, &q.a, NULL, &q.c, 0, MXA_PREF_AUTO);
	CHECK(ret == -EINVAL, "b NULL: %d", ret);
	ret = mxa_gemm_weight_only(dev, &q.a, &q.b, NULL, 0, MXA_PREF_AUTO);
	CHECK(ret == -EINVAL, "c NULL: %d", ret);
	ret = mxa_gemm_weight_only(dev, &q.a, &q.b, &q.c, 0, (enum mxa_pref)7);
	CHECK(ret == -EINVAL, "pref 7: %d", ret);

	expect(&base, &q, 0x2, -EINVAL, "unknown flag");
	q = base; q.a.dtype = (enum mxa_dtype)5;
	expect(&base, &q, 0, -EINVAL, "a dtype 5");
	q = base; q.a.rows = 0;
	expect(&base, &q, 0, -EINVAL, "a rows 0");
	q = base; q.a.stride = 100;
	expect(&base, &q, 0, -EINVAL, "a stride below a row");
	q = base; q.a.offset = 2;
	expect(&base, &q, 0, -EINVAL, "a offset not a multiple of 4");
	q = base; q.a.stride = 258;
	expect(&base, &q, 0, -EINVAL, "a stride not a multiple of 4");
	q = base; q.a.cols = 32;
	expect(&base, &q, 0, -EINVAL, "K of a != K of b");
	q = base; q.b.cols = 48;
	expect(&base, &q, 0, -EINVAL, "b K not a multiple of 32");
	q = base; q.b.elem = (enum mxa_elem)9;
	expect(&base, &q, 0, -EINVAL, "b elem 9");
	q = base; q.b.reserved[1] = 1;
	expect(&base, &q, 0, -EINVAL, "b reserved");
	q = base; q.b.tensor_scale = 2.0f;
	expect(&base, &q, 0, -EINVAL, "tensor scale on E8M0");
	q = base; q.c.rows = 3;
	expect(&base, &q, 0, -EINVAL, "c rows != a rows");
	q = base; q.c.cols = 2;
	expect(&base, &q, 0, -EINVAL, "c cols != b rows");
	q = base; q.c.dtype = (enum mxa_dtype)3;
	expect(&base, &q, 0, -EINVAL, "c dtype 3");
	q = base; q.c.offset = 0;
	expect(&base, &q, 0, -EINVAL, "c overlaps a");
	q = base; q.c.offset = 1024;
	expect(&base, &q, 0, -EINVAL, "c overlaps b data");
	q = base; q.c.offset = 2048;
	expect(&base, &q, 0, -EINVAL, "c overlaps b scale");
	q = base; q.a.offset = 8192 - 256;
	expect(&base, &q, 0, -EOVERFLOW, "a past its buffer");
	q = base; q.b.data_offset = 8192 - 40;
	expect(&base, &q, 0, -EOVERFLOW, "b data past its buffer");
	q = base; q.c.stride = (size_t)1 << 62;
	expect(&base, &q, 0, -EOVERFLOW, "c stride wraps");

	if (!mxa_device_open("cpu", &other)) {
		if (!mxa_buffer_alloc(other, 8192, &small)) {
			q = base; q.b.scale = small;
			expect(&base, &q, 0, -EXDEV, "b scale of another device");
			mxa_buffer_free(small);
		}
		mxa_device_close(other);
	}
	mxa_buffer_free(base.buf);
}

/* --- plans and queries ------------------------------------------------- */

static void plans(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM_WEIGHT_ONLY, .b_elem = MXA_ELEM_E2M1,
		.a_dtype = MXA_DTYPE_BF16, .m = 1, .n = 14336, .k = 4096,
	};
	struct mxa_capability cap;
	struct mxa_plan plan;
	bool cpu = test_is_cpu(dev);
	int ret;

	CHECK_RET(mxa_query(dev, &d, MXA_PREF_EMULATED, &cap), 0);
	if (cpu) {
		CHECK(cap.support == MXA_SUPPORT_EMULATED &&
		      !strcmp(cap.kernel, "cpu-weight-only-exact"),
		      "cpu emulated weight-only: %d %s", cap.support, cap.kernel);
		CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), 0);
		CHECK(!strcmp(plan.kernel, "cpu-weight-only") && !plan.exact,
		      "cpu native weight-only: %s", plan.kernel);
		CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), 0);
		CHECK(!strcmp(plan.kernel, "cpu-weight-only"),
		      "cpu auto weight-only: %s", plan.kernel);
		d.b_scale_type = MXA_SCALE_UE4M3;
		CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), 0);
		d.b_scale_type = MXA_SCALE_E8M0;
	} else {
		/* Whatever the device says, it says it with a reason. */
		CHECK(cap.support != MXA_SUPPORT_NONE || cap.reason[0],
		      "weight-only query without a reason");
		/* A native kernel, if any, is AUTO's choice for every format. */
		for (ret = 0; ret < 4; ret++) {
			struct mxa_plan native;

			d.a_dtype = ret & 1 ? MXA_DTYPE_F32 : MXA_DTYPE_BF16;
			d.b_scale_type = ret & 2 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0;
			if (mxa_plan(dev, &d, MXA_PREF_NATIVE, &native))
				continue;
			CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), 0);
			CHECK(!strcmp(plan.kernel, native.kernel),
			      "%s: auto weight-only %s, native %s",
			      test_device_info(dev).name, plan.kernel, native.kernel);
		}
		d.a_dtype = MXA_DTYPE_BF16;
		d.b_scale_type = MXA_SCALE_E8M0;
	}
	d.a_elem = MXA_ELEM_E4M3;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	d.a_elem = 0;
	d.a_dtype = (enum mxa_dtype)4;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	d.a_dtype = MXA_DTYPE_F32;
	d.k = 48;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	d.k = 64;
	d.flags = 4;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	d.flags = 0;
	d.reserved[4] = 1;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	/* a_dtype belongs to weight-only: other ops must leave it 0. */
	d = (struct mxa_op_desc){ .op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
				  .b_elem = MXA_ELEM_E4M3, .m = 1, .n = 1,
				  .k = 32, .a_dtype = MXA_DTYPE_BF16 };
	ret = mxa_plan(dev, &d, MXA_PREF_AUTO, &plan);
	CHECK(ret == -EINVAL, "gemm with a_dtype: %d", ret);
}

int main(void)
{
	static const char *const levels[] = { "ref", "avx2", "avx512vnni",
					      "avx512bf16", "amx" };
	const char *forced = getenv("MXACCEL_CPU_ISA");
	unsigned int l;

	test_seed(0x776f6e6c79ull);
	dev = test_open_device();
	ref_dev = dev;
	plans();
	errors();
	if (!test_is_cpu(dev)) {
		/* Devices without a native kernel answered in plans(). */
		if (has_native_weight_only()) {
			device_cases();
			printf("%u exact results, %u native results (%u special), %u repeat checks; worst error / bound %.3g, cuda-weight-only-wgmma %.3g (%u cases; worst: %s)\n",
			       n_exact, n_native, n_special, n_repeat, worst_ratio,
			       worst_wgmma, n_wgmma_cases, worst_wgmma_case);
			/* The prefill shapes must have reached it. */
			CHECK(strcmp(test_device_info(dev).backend, "cuda") || n_wgmma_cases > 0,
			      "no case ran cuda-weight-only-wgmma");
		}
		if (ref_dev != dev)
			mxa_device_close(ref_dev);
		mxa_device_close(dev);
		return test_finish();
	}
	random_cases(36, false);
	mxa_device_close(dev);
	/* Every ISA level this machine runs, on smaller shapes. */
	for (l = 0; !forced && l < TEST_ARRAY_SIZE(levels); l++) {
		setenv("MXACCEL_CPU_ISA", levels[l], 1);
		if (mxa_device_open("cpu", &dev))
			continue;
		ref_dev = dev;		/* the closed one must not be used */
		n_levels++;
		random_cases(12, true);
		if (l >= 3)	/* avx512bf16, amx: the tile kernel */
			tile_cases();
		mxa_device_close(dev);
	}
	unsetenv("MXACCEL_CPU_ISA");
	printf("%u exact results, %u native results (%u special) on %u ISA levels, %u thread-count checks; worst error / bound %.3g\n",
	       n_exact, n_native, n_special, n_levels, n_thread_checks,
	       worst_ratio);
	return test_finish();
}
