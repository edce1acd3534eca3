// SPDX-License-Identifier: MIT
/*
 * Special values through quantize, dequantize and GEMM: zeros of both
 * signs, NaN and Inf inputs, saturation, fp32 subnormals, every code of
 * every element type under ordinary and extreme scales, and the GEMM rules
 * of design section 4 (NaN scales and codes, Inf * 0, +Inf + -Inf, signed
 * Inf, overflow and ties at the top of fp32 and bf16, exact zero = +0,
 * gradual underflow).  Expected values come from this file's own reading
 * of the OCP MX specification, never from lib/core.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu); a preference the device
 * refuses (mxa_query() says so) must fail with -EOPNOTSUPP.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define F32_QNAN 0x7fc00000u
#define F32_PINF 0x7f800000u
#define F32_NINF 0xff800000u
#define F32_MAX 0x7f7fffffu
#define F32_NZERO 0x80000000u

static struct mxa_device *dev;
static unsigned int n_quantize, n_dequantize, n_gemm;

static const char *pref_name(enum mxa_pref p)
{
	return p == MXA_PREF_AUTO ? "auto" :
	       p == MXA_PREF_NATIVE ? "native" : "emulated";
}

static bool pref_supported(enum mxa_op op, enum mxa_elem ea,
			   enum mxa_elem eb, enum mxa_dtype dtype,
			   enum mxa_pref pref)
{
	struct mxa_op_desc d = {
		.op = op, .a_elem = ea, .b_elem = eb, .dtype = dtype,
		.m = 1, .n = 1, .k = 32,
	};
	struct mxa_capability cap;

	if (mxa_query(dev, &d, pref, &cap))
		return false;
	return cap.support != MXA_SUPPORT_NONE;
}

/* --- a reference FLOOR quantizer (torchao to_mx semantics) ------------- */

/* Nearest code to y >= 0 among finite values, ties to the even code. */
static uint8_t nearest_code(enum mxa_elem elem, double y)
{
	uint8_t top = test_elem_max_code(elem), c;
	double lo, hi;

	if (y >= test_elem(elem)->max)
		return top;	/* torchao clamps: saturation, never Inf */
	/* Non-negative codes 0..max_code are ordered by value. */
	for (c = 0; c < top && test_elem_value(elem, c + 1) <= y; c++)
		;
	lo = test_elem_value(elem, c);
	if (lo == y || c == top)
		return c;
	hi = test_elem_value(elem, c + 1);
	if (y - lo < hi - y)
		return c;
	if (y - lo > hi - y)
		return c + 1;
	return c & 1 ? c + 1 : c;
}

/*
 * FLOOR scale and codes of one block; 0xff (codes unspecified) when the
 * block holds NaN or Inf.  x * 2^(127 - s) is exact in a double.
 */
static uint8_t ref_floor(enum mxa_elem elem, const uint32_t x[32],
			 uint8_t codes[32])
{
	const struct test_elem_info *f = test_elem(elem);
	int emax = ilogb(f->max), e, i;
	double amax = 0;

	for (i = 0; i < 32; i++) {
		double v = fabs((double)test_f32(x[i]));

		if (!isfinite(v))
			return 0xff;
		if (v > amax)
			amax = v;
	}
	e = amax == 0 ? -127 : ilogb(amax);
	e -= emax;
	if (e < -127)
		e = -127;
	for (i = 0; i < 32; i++) {
		double y = fabs((double)test_f32(x[i])) * ldexp(1.0, -e);
		uint8_t c = nearest_code(elem, y);

		codes[i] = x[i] >> 31 ? c | test_elem_sign(elem) : c;
	}
	return (uint8_t)(e + 127);
}

/* --- quantize / dequantize through the API ------------------------------- */

/* Quantize rows blocks of 32 fp32 values; codes come back unpacked. */
static int quantize(enum mxa_elem elem, enum mxa_scale_mode mode,
		    enum mxa_pref pref, const uint32_t *in, uint32_t rows,
		    uint8_t *codes, uint8_t *scales)
{
	bool fp4 = elem == MXA_ELEM_E2M1;
	size_t rb = fp4 ? 16 : 32, i;
	struct mxa_matrix dst = {
		.elem = elem, .rows = rows, .cols = 32,
	};
	struct mxa_dense src;
	uint8_t *raw = calloc(rows, rb);
	int ret = test_dense_upload(dev, MXA_DTYPE_F32, rows, 32, in, 0, 0,
				    &src);

	n_quantize++;

	if (!ret)
		ret = mxa_buffer_alloc(dev, rows * rb, &dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, rows, &dst.scale);
	if (!ret)
		ret = mxa_quantize(dev, &src, &dst, mode, pref);
	if (!ret)
		ret = mxa_buffer_read(dst.data, 0, raw, rows * rb);
	if (!ret)
		ret = mxa_buffer_read(dst.scale, 0, scales, rows);
	for (i = 0; !ret && i < (size_t)rows * 32; i++)
		codes[i] = fp4 ? (raw[i / 2] >> (i % 2 * 4)) & 0xf : raw[i];
	mxa_buffer_free(dst.data);
	mxa_buffer_free(dst.scale);
	test_dense_release(&src);
	free(raw);
	return ret;
}

/* Dequantize a host MX matrix to dtype; out gets rows x cols bits. */
static int dequantize(const struct test_mx *m, enum mxa_dtype dtype,
		      enum mxa_pref pref, uint32_t *out)
{
	struct mxa_matrix src;
	struct mxa_dense dst;
	int ret = test_mx_upload(dev, m, NULL, &src);

	n_dequantize++;
	if (ret)
		return ret;
	ret = test_dense_upload(dev, dtype, m->rows, m->cols, NULL, 0, 0,
				&dst);
	if (!ret) {
		ret = mxa_dequantize(dev, &src, &dst, pref);
		if (!ret)
			ret = test_dense_download(&dst, out);
		test_dense_release(&dst);
	}
	test_mx_release(&src);
	return ret;
}

/* The expected dequantized bits of one code under one scale. */
static uint32_t expect_deq(enum mxa_elem elem, uint8_t code, uint8_t scale,
			   unsigned int mbits)
{
	double v = test_elem_value(elem, code);

	if (scale == 0xff || isnan(v))
		return mbits == 23 ? F32_QNAN : 0x7fc0;
	return test_round_float(v * test_scale_value(scale), mbits);
}

static bool same_bits(uint32_t want, uint32_t got, unsigned int mbits)
{
	if (test_isnan_bits(want, mbits))
		return test_isnan_bits(got, mbits);
	return want == got;
}

/* --- quantization of special inputs ----------------------------------- */

#define NSPECIAL 12

/* Blocks of special inputs, one a row. */
static void special_blocks(enum mxa_elem elem, uint32_t x[NSPECIAL][32])
{
	const struct test_elem_info *f = test_elem(elem);
	uint32_t vmax = test_f32_bits((float)f->max);
	/* The largest fp32 below the next binade: FLOOR scale 127 for it. */
	uint32_t below = test_f32_bits(ldexpf(2.0f - 0x1p-23f, ilogb(f->max)));
	int i;

	memset(x, 0, sizeof(uint32_t) * NSPECIAL * 32);
	/* 0: all +0.  1: all -0. */
	for (i = 0; i < 32; i++)
		x[1][i] = F32_NZERO;
	/* 2: ordinary values with a -0 and a +0 among them. */
	for (i = 0; i < 32; i++)
		x[2][i] = test_f32_bits((float)(i - 16) * 0.375f);
	x[2][5] = F32_NZERO;
	x[2][16] = 0;
	/* 3, 4: a NaN (quiet, then negative signalling) in finite values. */
	for (i = 0; i < 32; i++)
		x[3][i] = x[4][i] = test_f32_bits(1.0f + (float)i);
	x[3][7] = F32_QNAN;
	x[4][31] = 0xff800001u;
	/* 5, 6: +Inf, -Inf among finite values. */
	for (i = 0; i < 32; i++)
		x[5][i] = x[6][i] = test_f32_bits(-2.5f * (float)i);
	x[5][0] = F32_PINF;
	x[6][17] = F32_NINF;
	/* 7: saturation: values above max after the FLOOR scale. */
	x[7][0] = below;
	x[7][1] = below | F32_NZERO;
	x[7][2] = vmax;
	x[7][3] = vmax + 1;			/* one ulp above max */
	x[7][4] = (vmax + 1) | F32_NZERO;
	for (i = 5; i < 32; i++)
		x[7][i] = test_f32_bits((float)f->max * (float)i / 32.0f);
	/* 8: fp32 subnormals only (the scale clamps at 2^-127). */
	for (i = 0; i < 32; i++)
		x[8][i] = ((uint32_t)i * 0x0003ffffu + 1) & 0x007fffffu;
	x[8][3] = 0x00400000u;			/* 2^-127 exactly */
	x[8][4] = 0x007fffffu | F32_NZERO;	/* largest subnormal */
	x[8][9] = 1;				/* 2^-149 */
	/* 9: subnormals beside a normal value: they flush to signed zero. */
	for (i = 0; i < 32; i++)
		x[9][i] = (0x00012345u * (uint32_t)i) & 0x007fffffu;
	x[9][0] = test_f32_bits(1.0f);
	x[9][10] |= F32_NZERO;
	/* 10: fp32 max, the largest possible amax. */
	for (i = 0; i < 32; i++)
		x[10][i] = test_f32_bits(-(float)i * 1e37f);
	x[10][1] = F32_MAX;
	/* 11: the smallest normal fp32 with subnormals beside it. */
	for (i = 0; i < 32; i++)
		x[11][i] = (uint32_t)i * 0x00040000u;
	x[11][0] = 0x00800000u;
}

static void check_block(enum mxa_elem elem, const char *mode,
			const char *pref, int row, const uint32_t *x,
			const uint8_t *codes, uint8_t scale,
			const uint8_t *want_codes, int want_scale)
{
	int i;

	if (want_scale >= 0)
		CHECK(scale == want_scale,
		      "quantize %s/%s (%s) special block %d: scale %u, want %d",
		      test_elem(elem)->name, mode, pref, row, scale, want_scale);
	if (!want_codes)
		return;
	for (i = 0; i < 32; i++)
		CHECK(codes[i] == want_codes[i],
		      "quantize %s/%s (%s) special block %d elem %d (x 0x%08x): code 0x%02x, want 0x%02x",
		      test_elem(elem)->name, mode, pref, row, i, x[i],
		      codes[i], want_codes[i]);
}

static void test_quantize_special(void)
{
	static const enum mxa_pref prefs[] = {
		MXA_PREF_EMULATED, MXA_PREF_NATIVE, MXA_PREF_AUTO,
	};
	uint32_t x[NSPECIAL][32];
	uint8_t codes[NSPECIAL * 32], scales[NSPECIAL], want[32];
	unsigned int e, m, p;
	int r, i;

	for (e = 0; e < 5; e++) {
		enum mxa_elem elem = test_elems[e];
		uint8_t sign = test_elem_sign(elem);
		uint8_t top = test_elem_max_code(elem);

		special_blocks(elem, x);
		for (m = 0; m < 4; m++) {
			for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
				const char *mn = test_mode_names[m];
				const char *pn = pref_name(prefs[p]);
				int ret;

				ret = quantize(elem, test_modes[m], prefs[p],
					       &x[0][0], NSPECIAL, codes,
					       scales);
				if (!pref_supported(MXA_OP_QUANTIZE, elem, 0,
						    MXA_DTYPE_F32, prefs[p])) {
					CHECK(ret == -EOPNOTSUPP,
					      "quantize %s/%s %s: %d, but the query said unsupported",
					      test_elem(elem)->name, mn, pn, ret);
					continue;
				}
				CHECK(ret == 0, "quantize %s/%s %s: %d",
				      test_elem(elem)->name, mn, pn, ret);
				if (ret)
					continue;

				/* Zeros: scale 0 in every mode, signs kept. */
				memset(want, 0, 32);
				check_block(elem, mn, pn, 0, x[0], codes,
					    scales[0], want, 0);
				memset(want, sign, 32);
				check_block(elem, mn, pn, 1, x[1], codes + 32,
					    scales[1], want, 0);
				CHECK(codes[2 * 32 + 5] == sign,
				      "%s/%s: -0 beside finite values gave code 0x%02x",
				      test_elem(elem)->name, mn,
				      codes[2 * 32 + 5]);
				CHECK(codes[2 * 32 + 16] == 0,
				      "%s/%s: +0 beside finite values gave code 0x%02x",
				      test_elem(elem)->name, mn,
				      codes[2 * 32 + 16]);
				/* NaN or Inf anywhere: NaN scale, any mode. */
				for (r = 3; r <= 6; r++)
					check_block(elem, mn, pn, r, x[r],
						    codes + r * 32, scales[r],
						    NULL, 0xff);
				/* Every row against the FLOOR reference. */
				if (test_modes[m] != MXA_SCALE_FLOOR)
					continue;
				for (r = 0; r < NSPECIAL; r++) {
					int s = ref_floor(elem, x[r], want);

					check_block(elem, mn, pn, r, x[r],
						    codes + r * 32, scales[r],
						    s == 0xff ? NULL : want, s);
				}
				/* Saturation, spelled out. */
				CHECK(scales[7] == 127 &&
				      codes[7 * 32] == top &&
				      codes[7 * 32 + 1] == (top | sign) &&
				      codes[7 * 32 + 3] == top &&
				      codes[7 * 32 + 4] == (top | sign),
				      "%s floor: saturation gave scale %u codes 0x%02x 0x%02x 0x%02x 0x%02x",
				      test_elem(elem)->name, scales[7],
				      codes[7 * 32], codes[7 * 32 + 1],
				      codes[7 * 32 + 3], codes[7 * 32 + 4]);
				CHECK(scales[8] == 0,
				      "%s floor: all-subnormal block scale %u, want 0",
				      test_elem(elem)->name, scales[8]);
				CHECK(codes[9 * 32 + 10] == sign,
				      "%s floor: tiny negative subnormal gave 0x%02x, want -0",
				      test_elem(elem)->name, codes[9 * 32 + 10]);
			}
		}
		/* Round trip of the FLOOR codes: dequantize what we got. */
		if (!quantize(elem, MXA_SCALE_FLOOR, MXA_PREF_EMULATED,
			      &x[0][0], NSPECIAL, codes, scales)) {
			struct test_mx mx;
			uint32_t out[NSPECIAL * 32];

			test_mx_alloc(&mx, elem, NSPECIAL, 32);
			memcpy(mx.code, codes, sizeof(codes));
			memcpy(mx.scale, scales, sizeof(scales));
			for (i = 0; i < 2; i++) {
				unsigned int mbits = i ? 7 : 23;
				int j, ret = dequantize(&mx, i ? MXA_DTYPE_BF16 :
						      MXA_DTYPE_F32,
						      MXA_PREF_EMULATED, out);

				CHECK(ret == 0, "dequantize: %d", ret);
				for (j = 0; !ret && j < NSPECIAL * 32; j++) {
					uint32_t w = expect_deq(elem, codes[j],
								scales[j / 32],
								mbits);

					CHECK(same_bits(w, out[j], mbits),
					      "%s dequantize of special block %d elem %d (code 0x%02x scale %u) to %s: 0x%08x, want 0x%08x",
					      test_elem(elem)->name, j / 32,
					      j % 32, codes[j], scales[j / 32],
					      i ? "bf16" : "f32", out[j], w);
				}
				/* -0 must come back as -0. */
				if (!ret)
					CHECK(out[32] == (i ? 0x8000u : F32_NZERO),
					      "%s: -0 dequantized to 0x%08x",
					      test_elem(elem)->name, out[32]);
			}
			test_mx_free(&mx);
		}
	}
}

/* --- dequantization of every code --------------------------------------- */

/*
 * The design's table (section 3), checked against this file's decoder so
 * that a mistake in either shows: max normal, min subnormal, Inf, NaN.
 */
static void test_decoder_table(void)
{
	static const struct {
		enum mxa_elem elem;
		double max, min_sub;
		int nans, infs;
	} table[] = {
		{ MXA_ELEM_E4M3, 448, 0x1p-9, 2, 0 },
		{ MXA_ELEM_E5M2, 57344, 0x1p-16, 6, 2 },
		{ MXA_ELEM_E2M3, 7.5, 0x1p-3, 0, 0 },
		{ MXA_ELEM_E3M2, 28, 0x1p-4, 0, 0 },
		{ MXA_ELEM_E2M1, 6, 0x1p-1, 0, 0 },
	};
	unsigned int i, c;

	for (i = 0; i < TEST_ARRAY_SIZE(table); i++) {
		enum mxa_elem elem = table[i].elem;
		double max = 0, min = INFINITY;
		int nans = 0, infs = 0;

		for (c = 0; c < test_elem_ncodes(elem); c++) {
			double v = test_elem_value(elem, (uint8_t)c);

			if (isnan(v))
				nans++;
			else if (isinf(v))
				infs++;
			else if (v > max)
				max = v;
			if (v > 0 && v < min)
				min = v;
		}
		CHECK(max == table[i].max && min == table[i].min_sub &&
		      nans == table[i].nans && infs == table[i].infs,
		      "test decoder disagrees with design table for %s",
		      test_elem(elem)->name);
		CHECK(test_elem_value(elem, test_elem_max_code(elem)) == max,
		      "max code of %s", test_elem(elem)->name);
	}
}

static void test_dequantize_codes(void)
{
	/* Ordinary, NaN, and the extremes (2^-127, 2^127) with neighbours. */
	static const uint8_t scales[] = { 127, 255, 0, 254, 1, 253, 100, 160 };
	const unsigned int ns = TEST_ARRAY_SIZE(scales);
	static const enum mxa_pref prefs[] = {
		MXA_PREF_EMULATED, MXA_PREF_NATIVE, MXA_PREF_AUTO,
	};
	unsigned int e, t, p, r, i;

	for (e = 0; e < 5; e++) {
		enum mxa_elem elem = test_elems[e];
		unsigned int nc = test_elem_ncodes(elem);
		uint32_t cols = nc < 32 ? 32 : nc;
		uint32_t *out = calloc((size_t)ns * cols, 4);
		struct test_mx mx;

		/* One row per scale, every code in it (fp4 twice). */
		test_mx_alloc(&mx, elem, ns, cols);
		for (r = 0; r < ns; r++) {
			for (i = 0; i < cols; i++)
				mx.code[r * cols + i] = (uint8_t)(i % nc);
			for (i = 0; i < cols / 32; i++)
				mx.scale[r * (cols / 32) + i] = scales[r];
		}
		for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
			if (!pref_supported(MXA_OP_DEQUANTIZE, elem, 0,
					    MXA_DTYPE_F32, prefs[p])) {
				int ret = dequantize(&mx, MXA_DTYPE_F32,
						     prefs[p], out);

				CHECK(ret == -EOPNOTSUPP,
				      "dequantize %s (%s): %d, but the query said unsupported",
				      test_elem(elem)->name,
				      pref_name(prefs[p]), ret);
				continue;
			}
			for (t = 0; t < 2; t++) {
				unsigned int mbits = t ? 7 : 23;
				int ret = dequantize(&mx, t ? MXA_DTYPE_BF16 :
						     MXA_DTYPE_F32, prefs[p],
						     out);

				CHECK(ret == 0, "dequantize %s: %d",
				      test_elem(elem)->name, ret);
				if (ret)
					continue;
				for (i = 0; i < ns * cols; i++) {
					uint8_t c = mx.code[i];
					uint8_t s = scales[i / cols];
					uint32_t w = expect_deq(elem, c, s,
								mbits);

					CHECK(same_bits(w, out[i], mbits),
					      "dequantize %s code 0x%02x scale %u to %s (%s): 0x%08x, want 0x%08x (%a * 2^%d)",
					      test_elem(elem)->name, c, s,
					      t ? "bf16" : "f32",
					      pref_name(prefs[p]), out[i], w,
					      test_elem_value(elem, c),
					      (int)s - 127);
				}
			}
		}
		test_mx_free(&mx);
		free(out);
	}
}

/* --- GEMM special rules ------------------------------------------------- */

/*
 * C (1 x 1 or more) = A * B^T through the API.  c_in seeds C when
 * accumulating.  Returns the library's error; out gets C's bits.
 */
static int gemm(const struct test_mx *a, const struct test_mx *b,
		enum mxa_dtype dtype, uint32_t flags, const uint32_t *c_in,
		enum mxa_pref pref, uint32_t *out)
{
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	int ret = test_mx_upload(dev, a, NULL, &ma);

	n_gemm++;
	if (ret)
		return ret;
	ret = test_mx_upload(dev, b, NULL, &mb);
	if (ret) {
		test_mx_release(&ma);
		return ret;
	}
	ret = test_dense_upload(dev, dtype, a->rows, b->rows, c_in, 0, 0, &c);
	if (!ret) {
		ret = mxa_gemm(dev, &ma, &mb, &c, flags, pref);
		if (!ret)
			ret = test_dense_download(&c, out);
		test_dense_release(&c);
	}
	test_mx_release(&ma);
	test_mx_release(&mb);
	return ret;
}

/* Code of an exactly representable value v (or die: a test bug). */
static uint8_t code_of(enum mxa_elem elem, double v)
{
	unsigned int c;

	for (c = 0; c < test_elem_ncodes(elem); c++)
		if (test_elem_value(elem, (uint8_t)c) == v &&
		    !!signbit(test_elem_value(elem, (uint8_t)c)) ==
		    !!signbit(v))
			return (uint8_t)c;
	fprintf(stderr, "test bug: %a is no %s value\n", v,
		test_elem(elem)->name);
	abort();
}

/* A 1 x K operand of zeros under scale 127, to be filled in. */
static void operand(struct test_mx *m, enum mxa_elem elem, uint32_t k)
{
	test_mx_alloc(m, elem, 1, k);
	memset(m->scale, 127, k / 32);
}

struct gemm_case {
	const char *name;
	struct test_mx a, b;
	bool strict_only;	/* only EMULATED promises this */
	uint32_t want_f32, want_bf16;
	bool accumulate;
	uint32_t c_f32, c_bf16;	/* C before, when accumulating */
};

static void run_case(struct gemm_case *gc)
{
	static const enum mxa_pref prefs[] = {
		MXA_PREF_EMULATED, MXA_PREF_NATIVE, MXA_PREF_AUTO,
	};
	unsigned int p, t;

	for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
		if (gc->strict_only && prefs[p] != MXA_PREF_EMULATED)
			continue;
		for (t = 0; t < 2; t++) {
			enum mxa_dtype dt = t ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
			unsigned int mbits = t ? 7 : 23;
			uint32_t want = t ? gc->want_bf16 : gc->want_f32;
			uint32_t cin = t ? gc->c_bf16 : gc->c_f32, got = 0;
			int ret;

			ret = gemm(&gc->a, &gc->b, dt,
				   gc->accumulate ? MXA_GEMM_ACCUMULATE : 0,
				   &cin, prefs[p], &got);
			if (!pref_supported(MXA_OP_GEMM, gc->a.elem,
					    gc->b.elem, dt, prefs[p])) {
				CHECK(ret == -EOPNOTSUPP,
				      "gemm '%s' (%s, %s): %d, but the query said unsupported",
				      gc->name, pref_name(prefs[p]),
				      t ? "bf16" : "f32", ret);
				continue;
			}
			CHECK(ret == 0, "gemm '%s' (%s, %s): %d", gc->name,
			      pref_name(prefs[p]), t ? "bf16" : "f32", ret);
			if (ret)
				continue;
			CHECK(same_bits(want, got, mbits),
			      "gemm '%s' (%s, %s): got 0x%08x, want 0x%08x",
			      gc->name, pref_name(prefs[p]),
			      t ? "bf16" : "f32", got, want);
		}
	}
	test_mx_free(&gc->a);
	test_mx_free(&gc->b);
}

/* want_f32 and want_bf16 from one exact double. */
static void want_value(struct gemm_case *gc, double v)
{
	gc->want_f32 = test_round_float(v, 23);
	gc->want_bf16 = test_round_float(v, 7);
}

static void test_gemm_special(void)
{
	const enum mxa_elem e4 = MXA_ELEM_E4M3, e5 = MXA_ELEM_E5M2;
	const enum mxa_elem e2m1 = MXA_ELEM_E2M1, e2m3 = MXA_ELEM_E2M3;
	struct gemm_case gc;
	int i, sign;

	/* NaN scale on A, then on B, over all-zero codes: NaN. */
	for (i = 0; i < 2; i++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = i ? "NaN scale in B" : "NaN scale in A";
		operand(&gc.a, e4, 64);
		operand(&gc.b, e2m1, 64);
		(i ? gc.b.scale : gc.a.scale)[1] = 0xff;
		want_value(&gc, NAN);
		run_case(&gc);
	}

	/* e4m3 NaN codes (both signs) times zero: NaN. */
	for (sign = 0; sign < 2; sign++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = sign ? "e4m3 -NaN code * 0" : "e4m3 NaN code * 0";
		operand(&gc.a, e4, 32);
		operand(&gc.b, e4, 32);
		gc.a.code[3] = sign ? 0xff : 0x7f;
		gc.a.code[4] = code_of(e4, 2.0);
		gc.b.code[4] = code_of(e4, 3.0);
		want_value(&gc, NAN);
		run_case(&gc);
	}

	/* e5m2 Inf * 0: NaN, whichever side the Inf is on. */
	for (i = 0; i < 2; i++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = i ? "0 * e5m2 -Inf" : "e5m2 +Inf * 0";
		operand(&gc.a, i ? e2m3 : e5, 32);
		operand(&gc.b, i ? e5 : e2m3, 32);
		(i ? gc.b.code : gc.a.code)[9] = i ? 0xfc : 0x7c;
		gc.a.code[0] = code_of(gc.a.elem, 1.0);
		gc.b.code[0] = code_of(gc.b.elem, 1.0);
		want_value(&gc, NAN);
		run_case(&gc);
	}

	/* e5m2 NaN codes: NaN. */
	memset(&gc, 0, sizeof(gc));
	gc.name = "e5m2 NaN code";
	operand(&gc.a, e5, 32);
	operand(&gc.b, e5, 32);
	gc.a.code[0] = 0x7d;
	gc.b.code[0] = code_of(e5, 1.0);
	want_value(&gc, NAN);
	run_case(&gc);

	/* +Inf + -Inf: NaN, within one block and across blocks. */
	for (i = 0; i < 2; i++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = i ? "+Inf + -Inf across blocks" :
			      "+Inf + -Inf in a block";
		operand(&gc.a, e5, 64);
		operand(&gc.b, e4, 64);
		gc.a.code[0] = 0x7c;
		gc.b.code[0] = code_of(e4, 2.0);
		gc.a.code[i ? 40 : 1] = 0x7c;
		gc.b.code[i ? 40 : 1] = code_of(e4, -0.5);
		want_value(&gc, NAN);
		run_case(&gc);
	}

	/* Inf * finite: Inf with the product's sign, finite terms aside. */
	for (sign = 0; sign < 4; sign++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = "Inf * finite";
		operand(&gc.a, e5, 64);
		operand(&gc.b, e2m1, 64);
		gc.a.code[5] = sign & 1 ? 0xfc : 0x7c;
		gc.b.code[5] = code_of(e2m1, sign & 2 ? -1.5 : 0.5);
		gc.a.code[33] = code_of(e5, -57344.0);
		gc.b.code[33] = code_of(e2m1, 6.0);
		gc.a.scale[1] = gc.b.scale[1] = 130;
		want_value(&gc, (sign == 0 || sign == 3) ? INFINITY : -INFINITY);
		run_case(&gc);
	}

	/* Two Infs of the same sign stay Inf. */
	memset(&gc, 0, sizeof(gc));
	gc.name = "+Inf + +Inf";
	operand(&gc.a, e5, 32);
	operand(&gc.b, e5, 32);
	gc.a.code[0] = gc.a.code[1] = 0xfc;
	gc.b.code[0] = gc.b.code[1] = code_of(e5, -1.0);
	want_value(&gc, INFINITY);
	run_case(&gc);

	/* Overflow far past the top: +-Inf in fp32 and bf16. */
	for (sign = 0; sign < 2; sign++) {
		memset(&gc, 0, sizeof(gc));
		gc.name = "overflow";
		operand(&gc.a, e4, 32);
		operand(&gc.b, e4, 32);
		gc.a.code[0] = code_of(e4, sign ? -448.0 : 448.0);
		gc.b.code[0] = code_of(e4, 448.0);
		gc.a.scale[0] = 200;
		gc.b.scale[0] = 200;
		want_value(&gc, sign ? -INFINITY : INFINITY);
		run_case(&gc);
	}

	/*
	 * Ties at the top.  sum_{i=0..24} 2^(127-i) = 2^128 - 2^103 lies
	 * halfway between fp32 max (odd mantissa) and 2^128: to even = Inf.
	 * Minus 2^87 it rounds to fp32 max.  Each e4m3 block holds eight
	 * powers of two under its own A scale.
	 */
	for (i = 0; i < 2; i++) {
		int j;

		memset(&gc, 0, sizeof(gc));
		gc.name = i ? "just below the fp32 overflow tie" :
			      "fp32 overflow tie";
		gc.strict_only = true;
		operand(&gc.a, e4, 128);
		operand(&gc.b, e4, 128);
		for (j = 0; j <= 24; j++) {
			gc.a.code[j / 8 * 32 + j % 8] = code_of(e4, 1.0);
			gc.b.code[j / 8 * 32 + j % 8] =
				code_of(e4, ldexp(1.0, -(j % 8)));
		}
		for (j = 0; j < 4; j++)
			gc.a.scale[j] = (uint8_t)(254 - 8 * j);
		if (i) {
			/* block 3 is scaled by 2^103: -2^-16 * 2^103 */
			gc.a.code[3 * 32 + 20] = code_of(e4, -0x1p-8);
			gc.b.code[3 * 32 + 20] = code_of(e4, 0x1p-8);
		}
		gc.want_f32 = i ? F32_MAX : F32_PINF;
		gc.want_bf16 = 0x7f80;
		run_case(&gc);
	}

	/*
	 * bf16: 2^128 - 2^119 is exact in fp32 and the bf16 overflow tie
	 * (to even = Inf); minus 2^111 it rounds to bf16 max.
	 */
	for (i = 0; i < 2; i++) {
		int j;

		memset(&gc, 0, sizeof(gc));
		gc.name = i ? "just below the bf16 overflow tie" :
			      "bf16 overflow tie";
		gc.strict_only = true;
		operand(&gc.a, e4, 32);
		operand(&gc.b, e4, 32);
		for (j = 0; j <= 8; j++) {
			gc.a.code[j] = code_of(e4, 1.0);
			gc.b.code[j] = code_of(e4, ldexp(1.0, -j));
		}
		gc.a.scale[0] = 254;
		if (i) {
			gc.a.code[20] = code_of(e4, -0x1p-8);
			gc.b.code[20] = code_of(e4, 0x1p-8);
		}
		want_value(&gc, i ? 0x1p128 - 0x1p119 - 0x1p111 :
				    0x1p128 - 0x1p119);
		CHECK(gc.want_bf16 == (i ? 0x7f7fu : 0x7f80u) &&
		      !isinf(test_f32(gc.want_f32)),
		      "test bug: bf16 tie constants");
		run_case(&gc);
	}

	/* Exact cancellation is +0, never -0. */
	memset(&gc, 0, sizeof(gc));
	gc.name = "x - x = +0";
	operand(&gc.a, e4, 64);
	operand(&gc.b, e5, 64);
	gc.a.code[0] = code_of(e4, 3.0);
	gc.b.code[0] = code_of(e5, -2.0);
	gc.a.code[32] = code_of(e4, 1.5);
	gc.b.code[32] = code_of(e5, 4.0);
	gc.want_f32 = 0;
	gc.want_bf16 = 0;
	run_case(&gc);

	memset(&gc, 0, sizeof(gc));
	gc.name = "sum of -0 products = +0";
	operand(&gc.a, e2m1, 32);
	operand(&gc.b, e4, 32);
	memset(gc.a.code, test_elem_sign(e2m1), 32);
	for (i = 0; i < 32; i++)
		gc.b.code[i] = code_of(e4, 1.0 + (i % 8) / 8.0);
	gc.want_f32 = 0;
	gc.want_bf16 = 0;
	run_case(&gc);

	memset(&gc, 0, sizeof(gc));
	gc.name = "-0 + (-0 products) accumulated = +0";
	/* IEEE addition (-0 + -0 = -0) would be within NATIVE's rights. */
	gc.strict_only = true;
	operand(&gc.a, e4, 32);
	operand(&gc.b, e4, 32);
	gc.a.code[0] = 0x80;
	gc.b.code[0] = code_of(e4, 1.0);
	gc.accumulate = true;
	gc.c_f32 = F32_NZERO;
	gc.c_bf16 = 0x8000;
	gc.want_f32 = 0;
	gc.want_bf16 = 0;
	run_case(&gc);

	/* A zero block under scales whose product leaves fp32: still 0. */
	memset(&gc, 0, sizeof(gc));
	gc.name = "zero block, scales 254 and 254";
	operand(&gc.a, e4, 64);
	operand(&gc.b, e4, 64);
	gc.a.scale[0] = gc.b.scale[0] = 254;
	gc.a.code[32] = code_of(e4, 1.0);
	gc.b.code[32] = code_of(e4, 2.0);
	want_value(&gc, 2.0);
	run_case(&gc);

	/* Inf under scales whose product underflows fp32: still Inf. */
	memset(&gc, 0, sizeof(gc));
	gc.name = "e5m2 Inf, scales 0 and 0";
	operand(&gc.a, e5, 32);
	operand(&gc.b, e4, 32);
	gc.a.scale[0] = gc.b.scale[0] = 0;
	gc.a.code[0] = 0x7c;
	gc.b.code[0] = code_of(e4, 0x1p-9);
	want_value(&gc, INFINITY);
	run_case(&gc);

	/*
	 * Gradual underflow, rounded once: 2^-150 ties to +0, 3 * 2^-150 to
	 * 2^-148 (even), -2^-254 to -0, 2^-140 exact.
	 */
	{
		static const struct {
			double e4_a, e4_b;
			int sa, sb;
			const char *name;
		} uf[] = {
			{ 1.0, 1.0, 127 - 75, 127 - 75, "2^-150 tie" },
			{ 1.5, 1.0, 127 - 75, 127 - 74, "3*2^-150 tie" },
			{ -1.0, 1.0, 0, 0, "-2^-254" },
			{ 1.0, 1.0, 127 - 70, 127 - 70, "2^-140" },
			{ 1.75, 1.0, 127 - 67, 127 - 67, "1.75*2^-134 (bf16 sub)" },
		};

		for (i = 0; i < (int)TEST_ARRAY_SIZE(uf); i++) {
			memset(&gc, 0, sizeof(gc));
			gc.name = uf[i].name;
			gc.strict_only = true;
			operand(&gc.a, e4, 32);
			operand(&gc.b, e4, 32);
			gc.a.code[7] = code_of(e4, uf[i].e4_a);
			gc.b.code[7] = code_of(e4, uf[i].e4_b);
			gc.a.scale[0] = (uint8_t)uf[i].sa;
			gc.b.scale[0] = (uint8_t)uf[i].sb;
			want_value(&gc, uf[i].e4_a * uf[i].e4_b *
				   ldexp(1.0, uf[i].sa - 127) *
				   ldexp(1.0, uf[i].sb - 127));
			run_case(&gc);
		}
	}

	/* Accumulating into NaN, Inf, and Inf of the other sign. */
	{
		static const struct {
			uint32_t c32, c16, want32, want16;
			double prod;
			const char *name;
		} acc[] = {
			{ F32_QNAN, 0x7fc0, F32_QNAN, 0x7fc0, 1.0, "C NaN" },
			{ F32_PINF, 0x7f80, F32_PINF, 0x7f80, -448.0, "C +Inf" },
			{ F32_NINF, 0xff80, F32_QNAN, 0x7fc0, INFINITY,
			  "C -Inf + Inf" },
			{ F32_NINF, 0xff80, F32_NINF, 0xff80, -INFINITY,
			  "C -Inf - Inf" },
		};

		for (i = 0; i < (int)TEST_ARRAY_SIZE(acc); i++) {
			memset(&gc, 0, sizeof(gc));
			gc.name = acc[i].name;
			operand(&gc.a, e5, 32);
			operand(&gc.b, e4, 32);
			if (isinf(acc[i].prod))
				gc.a.code[0] = acc[i].prod > 0 ? 0x7c : 0xfc;
			else
				gc.a.code[0] = code_of(e5, acc[i].prod);
			gc.b.code[0] = code_of(e4, 1.0);
			gc.accumulate = true;
			gc.c_f32 = acc[i].c32;
			gc.c_bf16 = acc[i].c16;
			gc.want_f32 = acc[i].want32;
			gc.want_bf16 = acc[i].want16;
			run_case(&gc);
		}
	}
}

/*
 * MXFP6 codes live in the low 6 bits of a byte; the bits above are not
 * part of the code.  Setting them changes neither dequantize nor gemm.
 */
static void test_fp6_high_bits(void)
{
	static const enum mxa_pref prefs[] = {
		MXA_PREF_EMULATED, MXA_PREF_NATIVE, MXA_PREF_AUTO,
	};
	static const enum mxa_elem fp6[] = { MXA_ELEM_E2M3, MXA_ELEM_E3M2 };
	unsigned int e, p, i;

	for (e = 0; e < 2; e++) {
		struct test_mx clean, dirty, b;
		uint32_t want[4 * 64], got[4 * 64], cw[4 * 2], cg[4 * 2];

		test_mx_alloc(&clean, fp6[e], 4, 64);
		test_mx_alloc(&dirty, fp6[e], 4, 64);
		test_mx_alloc(&b, MXA_ELEM_E4M3, 2, 64);
		for (i = 0; i < 4 * 64; i++) {
			clean.code[i] = (uint8_t)(i % 64);
			dirty.code[i] = clean.code[i] |
					(uint8_t)((i * 0x40) & 0xc0);
		}
		for (i = 0; i < 2 * 64; i++)
			b.code[i] = test_rand_code(MXA_ELEM_E4M3, false);
		memset(clean.scale, 120, 8);
		memset(dirty.scale, 120, 8);
		memset(b.scale, 130, 4);
		for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
			const char *en = test_elem(fp6[e])->name;
			const char *pn = pref_name(prefs[p]);

			if (pref_supported(MXA_OP_DEQUANTIZE, fp6[e], 0,
					   MXA_DTYPE_F32, prefs[p])) {
				CHECK(!dequantize(&clean, MXA_DTYPE_F32,
						  prefs[p], want) &&
				      !dequantize(&dirty, MXA_DTYPE_F32,
						  prefs[p], got) &&
				      !memcmp(want, got, sizeof(want)),
				      "%s dequantize (%s) reads bits 6-7 of a code",
				      en, pn);
			}
			if (pref_supported(MXA_OP_GEMM, fp6[e], MXA_ELEM_E4M3,
					   MXA_DTYPE_F32, prefs[p])) {
				CHECK(!gemm(&clean, &b, MXA_DTYPE_F32, 0, NULL,
					    prefs[p], cw) &&
				      !gemm(&dirty, &b, MXA_DTYPE_F32, 0, NULL,
					    prefs[p], cg) &&
				      !memcmp(cw, cg, sizeof(cw)),
				      "%s gemm (%s) reads bits 6-7 of a code",
				      en, pn);
			}
		}
		test_mx_free(&clean);
		test_mx_free(&dirty);
		test_mx_free(&b);
	}
}

int main(void)
{
	dev = test_open_device();
	test_decoder_table();
	test_quantize_special();
	test_dequantize_codes();
	test_gemm_special();
	test_fp6_high_bits();
	printf("%u quantize, %u dequantize, %u gemm calls\n", n_quantize,
	       n_dequantize, n_gemm);
	mxa_device_close(dev);
	return test_finish();
}
