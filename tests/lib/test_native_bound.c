// SPDX-License-Identifier: MIT
/*
 * NATIVE (and AUTO) GEMM against the EMULATED reference on random shapes:
 * M and N that fit no tile (1, 3, 17, 33, 65, 127, ...), K from 32 to
 * 4096, mixed element types, plain and swizzled scales, strided rows and
 * offsets, fp32 and bf16 C, with and without accumulation.
 *
 * The bound (design section 4, Documentation/numerics.rst).  Let x be the
 * exact result, S = sum_k |a_k * b_k| (plus |C| when accumulating) and
 * gamma = n * 2^-24, n stated per kernel: K (K + 1 when accumulating) for
 * the bf16-panel kernels, which sum each block's products in fp32, and
 * K / 32 + 1 (+ 1) for the int8-panel kernels (e2m1 and e2m3 pairs), whose
 * block sums are exact.  The amx level, which folds scales and sums up to
 * all K products in fp32 before scaling, states gamma_n =
 * n * 2^-24 / (1 - n * 2^-24) with n = K (K + 1) for every pair.  The
 * CUDA kernels state their own gamma (Documentation/numerics.rst, "CUDA
 * kernels"), looked up by the name mxa_plan() gives for the request:
 * cuda-mx-sm90-* 2^-9 + (K / 32 + 1) * 2^-24 (the fp8 tensor cores keep
 * about 13-14 bits of a block's sum, and every path but the skinny one
 * hands tiles to the fp8 kernel), cuda-dequant-cublas (K + 1) * 2^-23.
 * A kernel that makes fewer than n roundings on any
 * path has |v - x| <= gamma * S for its fp32 value v.  The reference c_ref
 * is x rounded once:
 *
 *   fp32 C: |c - c_ref| <= gamma * S + 2^-24 * |c_ref|
 *   bf16 C: |c - c_ref| <= gamma * S + 2^-8 * (|c| + |c_ref|)
 *
 * (for bf16 both c and c_ref are one bf16 rounding, each at most 2^-8 of
 * its result, away from v and x), plus (n + 2) * 2^-149 (fp32) or
 * (n + 2) * 2^-133 (bf16) for roundings in the subnormal range, which the
 * scales chosen here keep out of reach.  S is summed in double from the
 * dequantized values.  Special values must match exactly: NaN where the
 * reference is NaN, the same Inf where it is Inf, finite where finite.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  A device without a NATIVE
 * kernel (mxa_query() says so) must refuse NATIVE with -EOPNOTSUPP, and on
 * a device other than the cpu its EMULATED result must equal the cpu's
 * EMULATED result bit for bit (both are the exact semantics).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev, *cpu;
static unsigned int n_cases, n_checked, n_special, n_decode;
static double worst_ratio[2];	/* fp32, bf16 */

struct shape {
	uint32_t m, n, k;
};

static const struct shape shapes[] = {
	{ 1, 1, 32 }, { 3, 17, 32 }, { 17, 3, 64 }, { 33, 65, 96 },
	{ 65, 33, 256 }, { 127, 1, 128 }, { 1, 127, 160 }, { 127, 33, 64 },
	{ 4, 16, 32 }, { 64, 128, 256 }, { 65, 129, 32 }, { 5, 3, 4096 },
	{ 3, 5, 4096 }, { 1, 1, 4096 }, { 2, 7, 2048 }, { 129, 2, 96 },
	{ 17, 17, 1024 }, { 31, 15, 320 }, { 63, 17, 64 }, { 7, 130, 32 },
	/* several cache tiles of every kernel in M, N and K */
	{ 98, 260, 288 }, { 193, 33, 96 },
};

/* Scales that keep every product and sum well inside fp32's range. */
static uint8_t rand_scale(bool wide)
{
	return (uint8_t)(wide ? 100 + test_rand_below(55) :
			 117 + test_rand_below(21));
}

static uint8_t special_code(enum mxa_elem elem)
{
	static const uint8_t e5m2[] = { 0x7c, 0xfc, 0x7e };

	if (elem == MXA_ELEM_E4M3)
		return test_rand_below(2) ? 0x7f : 0xff;
	if (elem == MXA_ELEM_E5M2)
		return e5m2[test_rand_below(3)];
	return 0;
}

static void random_mx(struct test_mx *m, enum mxa_elem elem, uint32_t rows,
		      uint32_t cols, bool wide)
{
	size_t i;

	test_mx_alloc(m, elem, rows, cols);
	for (i = 0; i < (size_t)rows * cols; i++)
		m->code[i] = test_rand_code(elem, false);
	for (i = 0; i < (size_t)rows * (cols / 32); i++)
		m->scale[i] = rand_scale(wide);
}

static void random_place(struct test_mx_place *p)
{
	memset(p, 0, sizeof(*p));
	p->layout = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
	if (test_rand_below(2)) {
		p->data_offset = test_rand_below(14);
		p->data_pad = test_rand_below(10);
		p->scale_offset = test_rand_below(8);
		if (p->layout == MXA_LAYOUT_PLAIN)
			p->scale_pad = test_rand_below(6);
	}
}

static double value(const struct test_mx *m, uint32_t r, uint32_t k)
{
	return test_elem_value(m->elem, m->code[(size_t)r * m->cols + k]) *
	       test_scale_value(m->scale[(size_t)r * (m->cols / 32) + k / 32]);
}

static const char *pref_name(enum mxa_pref p)
{
	return p == MXA_PREF_AUTO ? "auto" : p == MXA_PREF_NATIVE ? "native" :
	       "emulated";
}

static int gemm_on(struct mxa_device *on, const struct test_mx *a,
		   const struct test_mx_place *pa, const struct test_mx *b,
		   const struct test_mx_place *pb, enum mxa_dtype dtype,
		   uint32_t flags, const uint32_t *cin, size_t c_off,
		   size_t c_pad, enum mxa_pref pref, uint32_t *out,
		   bool *pad_ok)
{
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	int ret = test_mx_upload(on, a, pa, &ma);

	if (ret)
		return ret;
	ret = test_mx_upload(on, b, pb, &mb);
	if (!ret) {
		ret = test_dense_upload(on, dtype, a->rows, b->rows, cin,
					c_off, c_pad, &c);
		if (!ret) {
			ret = mxa_gemm(on, &ma, &mb, &c, flags, pref);
			if (!ret)
				ret = test_dense_download(&c, out);
			*pad_ok = test_dense_pad_intact(&c);
			test_dense_release(&c);
		}
		test_mx_release(&mb);
	}
	test_mx_release(&ma);
	return ret;
}

static int gemm(const struct test_mx *a, const struct test_mx_place *pa,
		const struct test_mx *b, const struct test_mx_place *pb,
		enum mxa_dtype dtype, uint32_t flags, const uint32_t *cin,
		size_t c_off, size_t c_pad, enum mxa_pref pref, uint32_t *out,
		bool *pad_ok)
{
	return gemm_on(dev, a, pa, b, pb, dtype, flags, cin, c_off, c_pad,
		       pref, out, pad_ok);
}

/* NONE, NATIVE or EMULATED, as the device answers for this gemm. */
static enum mxa_support support(enum mxa_elem ea, enum mxa_elem eb,
				enum mxa_dtype dtype, enum mxa_pref pref)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = ea, .b_elem = eb,
		.dtype = dtype, .m = 1, .n = 1, .k = 32,
	};
	struct mxa_capability cap;

	if (mxa_query(dev, &d, pref, &cap))
		return MXA_SUPPORT_NONE;
	return cap.support;
}

/* The cpu device runs its amx level (AMX tiles for every pair). */
static bool cpu_amx_level(void)
{
	struct mxa_device_info info;

	return !mxa_device_info(dev, &info) && !strcmp(info.backend, "cpu") &&
	       strstr(info.description, "ISA amx ");
}

/* The kernel pref resolves this gemm to, or "". */
static void planned(const struct shape *sh, enum mxa_elem ea,
		    enum mxa_elem eb, enum mxa_dtype dtype, uint32_t flags,
		    enum mxa_pref pref, char *kernel)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = ea, .b_elem = eb,
		.dtype = dtype, .m = sh->m, .n = sh->n, .k = sh->k,
		.flags = flags,
	};
	struct mxa_plan plan;

	*kernel = '\0';
	if (!mxa_plan(dev, &d, pref, &plan))
		strcpy(kernel, plan.kernel);
}

/*
 * Pairs the cpu device runs on int8 panels (the blocked kernel), whose
 * block sums are exact: their bound is tighter.  The amx level runs them
 * on bf16 tiles, and the decode kernel (small M) sums in fp32 like the
 * bf16 panels, with the bound of every other pair.
 */
static bool cpu_int8_pair(enum mxa_elem a, enum mxa_elem b,
			  const char *kernel)
{
	struct mxa_device_info info;

	if (mxa_device_info(dev, &info) || strcmp(info.backend, "cpu") ||
	    cpu_amx_level() || strcmp(kernel, "cpu-blocked"))
		return false;
	return (a == MXA_ELEM_E2M1 || a == MXA_ELEM_E2M3) &&
	       (b == MXA_ELEM_E2M1 || b == MXA_ELEM_E2M3);
}

/*
 * gamma for the kernel that runs (see the top of this file): the CUDA
 * kernels' own, else the cpu's by level and pair.
 */
static double kernel_gamma(const char *kernel, const struct shape *sh,
			   enum mxa_elem ea, enum mxa_elem eb, bool accumulate)
{
	double n = (cpu_int8_pair(ea, eb, kernel) ? sh->k / 32 + 1 : sh->k) +
		   (accumulate ? 1 : 0);

	if (!strncmp(kernel, "cuda-mx-sm90", 12))
		return 0x1p-9 + (sh->k / 32 + 1) * 0x1p-24;
	if (!strcmp(kernel, "cuda-dequant-cublas"))
		return (sh->k + 1) * 0x1p-23;
	/*
	 * The amx level sums up to K products in fp32 tiles before
	 * scaling (Documentation/numerics.rst): gamma_n exactly.
	 */
	return cpu_amx_level() ? n * 0x1p-24 / (1 - n * 0x1p-24) : n * 0x1p-24;
}

static bool is_special(uint32_t bits, unsigned int mbits)
{
	return ((bits >> mbits) & 0xff) == 0xff;
}

static void one_case(const struct shape *sh, enum mxa_elem ea,
		     enum mxa_elem eb, bool specials)
{
	static const enum mxa_pref prefs[] = { MXA_PREF_NATIVE, MXA_PREF_AUTO };
	enum mxa_dtype dtype = test_rand_below(2) ? MXA_DTYPE_BF16 :
						    MXA_DTYPE_F32;
	unsigned int mbits = dtype == MXA_DTYPE_BF16 ? 7 : 23;
	size_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4;
	bool accumulate = test_rand_below(2), wide = test_rand_below(2);
	uint32_t flags = accumulate ? MXA_GEMM_ACCUMULATE : 0;
	size_t mn = (size_t)sh->m * sh->n, i;
	size_t c_off = es * test_rand_below(4), c_pad = es * test_rand_below(4);
	uint32_t *cin = calloc(mn, 4), *ref = calloc(mn, 4);
	uint32_t *got = calloc(mn, 4);
	double *sabs = calloc(mn, sizeof(double));
	struct test_mx a, b;
	struct test_mx_place pa, pb;
	bool pad_ok = true;
	unsigned int p, t;
	int ret;

	n_cases++;
	random_mx(&a, ea, sh->m, sh->k, wide);
	random_mx(&b, eb, sh->n, sh->k, wide);
	random_place(&pa);
	random_place(&pb);
	if (test_rand_below(3) == 0) {
		/*
		 * Mirrored scales: block k of A near 2^(base_k - 127), of B
		 * near 2^(127 - base_k).  Each scale may be extreme (0 or
		 * 254) while every product stays ordinary, so how a kernel
		 * combines two scales matters and nothing overflows.
		 */
		uint32_t k, r, blocks = sh->k / 32;

		for (k = 0; k < blocks; k++) {
			uint32_t base = 8 + test_rand_below(239);

			for (r = 0; r < sh->m; r++)
				a.scale[r * blocks + k] = (uint8_t)(base - 8 +
						test_rand_below(17));
			for (r = 0; r < sh->n; r++)
				b.scale[r * blocks + k] = (uint8_t)(254 - base -
						8 + test_rand_below(17));
		}
	}
	if (specials) {
		for (t = 0; t < 3; t++) {
			struct test_mx *x = test_rand_below(2) ? &a : &b;
			size_t at = test_rand_below(x->rows * x->cols);

			if (test_rand_below(3))
				x->code[at] = special_code(x->elem);
			else
				x->scale[at / 32] = 0xff;
		}
	}
	for (i = 0; i < mn; i++) {
		float v = test_rand_float(64.0f);

		cin[i] = dtype == MXA_DTYPE_BF16 ? test_f32_bits(v) >> 16 :
						   test_f32_bits(v);
		if (specials && test_rand_below(32) == 0)
			cin[i] = dtype == MXA_DTYPE_BF16 ? 0xff80 : 0xff800000;
	}

	/* S = sum |a_k b_k| (+ |C|), in double: every product is exact. */
	for (i = 0; i < mn; i++) {
		uint32_t r = (uint32_t)(i / sh->n), c = (uint32_t)(i % sh->n);
		double s = 0;
		uint32_t k;

		for (k = 0; k < sh->k; k++)
			s += fabs(value(&a, r, k) * value(&b, c, k));
		if (accumulate)
			s += fabs(test_float_value(cin[i], mbits));
		sabs[i] = s * (1 + 0x1p-40);
	}

	ret = gemm(&a, &pa, &b, &pb, dtype, flags, cin, c_off, c_pad,
		   MXA_PREF_EMULATED, ref, &pad_ok);
	CHECK(ret == 0, "emulated gemm %ux%ux%u: %d (%s)", sh->m, sh->n,
	      sh->k, ret, mxa_strerror(ret));
	if (ret)
		goto out;
	if (cpu) {
		/* The exact semantics are the same on every device. */
		ret = gemm_on(cpu, &a, &pa, &b, &pb, dtype, flags, cin, c_off,
			      c_pad, MXA_PREF_EMULATED, got, &pad_ok);
		CHECK(ret == 0, "cpu emulated gemm %ux%ux%u: %d (%s)", sh->m,
		      sh->n, sh->k, ret, mxa_strerror(ret));
		for (i = 0; !ret && i < mn; i++) {
			if (got[i] == ref[i])
				continue;
			CHECK(0, "emulated %s x %s %ux%ux%u: C[%zu] = 0x%08x on %s, 0x%08x on cpu",
			      test_elem(ea)->name, test_elem(eb)->name, sh->m,
			      sh->n, sh->k, i, ref[i], test_device_name(),
			      got[i]);
			break;
		}
	}

	for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
		char kernel[MXA_NAME_MAX];
		double n, gamma, tiny;
		unsigned int bad = 0;

		planned(sh, ea, eb, dtype, flags, prefs[p], kernel);
		n = (cpu_int8_pair(ea, eb, kernel) ? sh->k / 32 + 1 : sh->k) +
		    (accumulate ? 1 : 0);
		if (!strcmp(kernel, "cpu-decode"))
			n_decode++;
		gamma = kernel_gamma(kernel, sh, ea, eb, accumulate);
		tiny = (n + 2) * (mbits == 23 ? 0x1p-149 : 0x1p-133);
		if (support(ea, eb, dtype, prefs[p]) == MXA_SUPPORT_NONE) {
			CHECK(prefs[p] == MXA_PREF_NATIVE,
			      "AUTO cannot run %s x %s",
			      test_elem(ea)->name, test_elem(eb)->name);
			/* Refused, as the query said, before anything ran. */
			ret = gemm(&a, &pa, &b, &pb, dtype, flags, cin, c_off,
				   c_pad, prefs[p], got, &pad_ok);
			CHECK(ret == -EOPNOTSUPP,
			      "%s gemm %s x %s: %d, but the query said unsupported",
			      pref_name(prefs[p]), test_elem(ea)->name,
			      test_elem(eb)->name, ret);
			continue;
		}
		ret = gemm(&a, &pa, &b, &pb, dtype, flags, cin, c_off, c_pad,
			   prefs[p], got, &pad_ok);
		CHECK(ret == 0, "%s gemm %s x %s %ux%ux%u: %d (%s)",
		      pref_name(prefs[p]), test_elem(ea)->name,
		      test_elem(eb)->name, sh->m, sh->n, sh->k, ret,
		      mxa_strerror(ret));
		if (ret)
			continue;
		CHECK(pad_ok, "%s gemm %ux%ux%u wrote outside C's rows",
		      pref_name(prefs[p]), sh->m, sh->n, sh->k);
		for (i = 0; i < mn && bad < 3; i++) {
			double c = test_float_value(got[i], mbits);
			double cr = test_float_value(ref[i], mbits);
			double bound, err;
			bool ok;

			n_checked++;
			if (is_special(ref[i], mbits) || is_special(got[i], mbits)) {
				n_special++;
				ok = test_isnan_bits(ref[i], mbits) ?
				     test_isnan_bits(got[i], mbits) :
				     got[i] == ref[i];
				bound = err = 0;
			} else {
				err = fabs(c - cr);
				bound = gamma * sabs[i] + tiny +
					(mbits == 23 ? 0x1p-24 * fabs(cr) :
					 0x1p-8 * (fabs(c) + fabs(cr)));
				ok = err <= bound;
				if (bound > 0 &&
				    err / bound > worst_ratio[mbits == 7])
					worst_ratio[mbits == 7] = err / bound;
			}
			if (ok)
				continue;
			bad++;
			CHECK(0, "%s (%s) %s x %s %ux%ux%u %s%s%s: C[%zu][%zu] = 0x%08x (%a), reference 0x%08x (%a), |diff| %a > bound %a (sum|ab| %a)",
			      pref_name(prefs[p]), kernel, test_elem(ea)->name,
			      test_elem(eb)->name, sh->m, sh->n, sh->k,
			      mbits == 7 ? "bf16" : "f32",
			      accumulate ? " accumulate" : "",
			      pa.layout || pb.layout ? " swizzled" : "",
			      i / sh->n, i % sh->n, got[i], c, ref[i], cr, err,
			      bound, sabs[i]);
		}
	}
out:
	test_mx_free(&a);
	test_mx_free(&b);
	free(cin);
	free(ref);
	free(got);
	free(sabs);
}

int main(void)
{
	unsigned int s, pair = 0, i;

	test_seed(0x6e6174697665ull);
	dev = test_open_device();
	if (!test_is_cpu(dev))
		cpu = test_open_cpu();
	/* Every shape twice; element pairs cycle through all 25. */
	for (i = 0; i < 2; i++) {
		for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++, pair++) {
			one_case(&shapes[s], test_elems[pair % 25 / 5],
				 test_elems[pair % 5], i == 1 && s % 2);
		}
	}
	/* All pairs once more on small ragged shapes, half with specials. */
	for (pair = 0; pair < 25; pair++) {
		struct shape sh = {
			1 + test_rand_below(40), 1 + test_rand_below(40),
			32 * (1 + test_rand_below(6)),
		};

		one_case(&sh, test_elems[pair / 5], test_elems[pair % 5],
			 pair % 2);
	}
	printf("%u cases (%u on cpu-decode), %u results checked (%u special); worst error / bound: fp32 %.3g, bf16 %.3g\n",
	       n_cases, n_decode, n_checked, n_special, worst_ratio[0],
	       worst_ratio[1]);
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return test_finish();
}
