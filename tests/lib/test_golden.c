// SPDX-License-Identifier: MIT
/*
 * Quantization and dequantization through the public API are bit-exact
 * with torchao's to_mx() / to_dtype(): the golden vectors of every element
 * type and scale mode, fp32 and bf16 inputs, under every preference the
 * device supports, with plain and swizzled scale layouts.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu); a preference the device
 * refuses (mxa_query() says so) must fail with -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define NELEM 5
#define NMODE 4

struct golden_combo {
	uint8_t *scale;		/* n */
	uint8_t *data;		/* n x 32 (e2m1: n x 16, packed) */
	uint32_t *deq;		/* n x 32 fp32 bits */
};

struct golden {
	const char *dir;
	uint32_t n;		/* blocks */
	uint32_t *input;	/* n x 32 fp32 bits */
	struct golden_combo c[NELEM][NMODE];
};

static const enum mxa_pref prefs[] = {
	MXA_PREF_EMULATED, MXA_PREF_NATIVE, MXA_PREF_AUTO,
};

static const char *const pref_names[] = {
	[MXA_PREF_AUTO] = "auto",
	[MXA_PREF_NATIVE] = "native",
	[MXA_PREF_EMULATED] = "emulated",
};

static size_t block_bytes(enum mxa_elem elem)
{
	return elem == MXA_ELEM_E2M1 ? 16 : 32;
}

static void *load(const char *dir, const char *name, size_t want)
{
	char path[512];
	size_t size;
	void *p;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	p = test_read_file(path, &size);
	if (!p || size != want) {
		CHECK(0, "%s: %s (%zu bytes, want %zu)", path,
		      p ? "wrong size" : "cannot read", size, want);
		free(p);
		return NULL;
	}
	return p;
}

static int golden_load(struct golden *g, const char *dir)
{
	char path[512];
	size_t size;
	int e, m;

	memset(g, 0, sizeof(*g));
	g->dir = dir;
	snprintf(path, sizeof(path), "%s/input_f32.bin", dir);
	g->input = test_read_file(path, &size);
	if (!g->input || !size || size % 128) {
		CHECK(0, "%s: missing or malformed", path);
		return -1;
	}
	g->n = (uint32_t)(size / 128);
	for (e = 0; e < NELEM; e++) {
		for (m = 0; m < NMODE; m++) {
			const char *en = test_elem(test_elems[e])->name;
			struct golden_combo *c = &g->c[e][m];
			char name[64];

			snprintf(name, sizeof(name), "%s_%s_scale.bin", en,
				 test_mode_names[m]);
			c->scale = load(dir, name, g->n);
			snprintf(name, sizeof(name), "%s_%s_data.bin", en,
				 test_mode_names[m]);
			c->data = load(dir, name,
				       g->n * block_bytes(test_elems[e]));
			snprintf(name, sizeof(name), "%s_%s_deq_f32.bin", en,
				 test_mode_names[m]);
			c->deq = load(dir, name, (size_t)g->n * 32 * 4);
			if (!c->scale || !c->data || !c->deq)
				return -1;
		}
	}
	printf("%s: %u blocks\n", dir, g->n);
	return 0;
}

static void golden_free(struct golden *g)
{
	int e, m;

	for (e = 0; e < NELEM; e++) {
		for (m = 0; m < NMODE; m++) {
			free(g->c[e][m].scale);
			free(g->c[e][m].data);
			free(g->c[e][m].deq);
		}
	}
	free(g->input);
}

/* Unpack n blocks of golden codes starting at block b0 into m->code. */
static void unpack_codes(enum mxa_elem elem, const uint8_t *data,
			 uint32_t nblocks, uint8_t *codes)
{
	size_t i;

	for (i = 0; i < (size_t)nblocks * 32; i++) {
		if (elem == MXA_ELEM_E2M1)
			codes[i] = (data[i / 2] >> ((i & 1) * 4)) & 0xf;
		else
			codes[i] = data[i];
	}
}

/*
 * Quantize rows x (bpr * 32) values (fp32 bits, or bf16 bits in the low
 * half) with plain packed scales; read back codes (packed as stored) and
 * scales.  Returns the library's error.
 */
static int quantize(struct mxa_device *dev, enum mxa_elem elem,
		    enum mxa_scale_mode mode, enum mxa_pref pref,
		    enum mxa_dtype dtype, const uint32_t *in, uint32_t rows,
		    uint32_t bpr, uint8_t *data, uint8_t *scale)
{
	uint32_t nblocks = rows * bpr;
	size_t dbytes = nblocks * block_bytes(elem);
	struct mxa_matrix dst = {
		.elem = elem, .scale_layout = MXA_LAYOUT_PLAIN,
		.rows = rows, .cols = bpr * 32,
	};
	struct mxa_dense src;
	int ret;

	ret = test_dense_upload(dev, dtype, rows, bpr * 32, in, 0, 0, &src);
	if (ret)
		return ret;
	ret = mxa_buffer_alloc(dev, dbytes, &dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, nblocks, &dst.scale);
	if (!ret)
		ret = mxa_quantize(dev, &src, &dst, mode, pref);
	if (!ret)
		ret = mxa_buffer_read(dst.data, 0, data, dbytes);
	if (!ret)
		ret = mxa_buffer_read(dst.scale, 0, scale, nblocks);
	mxa_buffer_free(dst.data);
	mxa_buffer_free(dst.scale);
	test_dense_release(&src);
	return ret;
}

/* Does dev claim to run this op under pref?  (-1: the query failed.) */
static int supported(struct mxa_device *dev, enum mxa_op op,
		     enum mxa_elem elem, enum mxa_scale_mode mode,
		     enum mxa_dtype dtype, uint32_t rows, uint32_t cols,
		     enum mxa_pref pref)
{
	struct mxa_op_desc d = {
		.op = op, .a_elem = elem, .dtype = dtype, .mode = mode,
		.m = rows, .k = cols,
	};
	struct mxa_capability cap;
	int ret = mxa_query(dev, &d, pref, &cap);

	CHECK(ret == 0, "mxa_query(op %d, %s, pref %s) = %d", (int)op,
	      test_elem(elem)->name, pref_names[pref], ret);
	if (ret)
		return -1;
	if (pref != MXA_PREF_NATIVE)
		CHECK(cap.support != MXA_SUPPORT_NONE,
		      "op %d %s under %s unsupported: %s", (int)op,
		      test_elem(elem)->name, pref_names[pref], cap.reason);
	return cap.support != MXA_SUPPORT_NONE;
}

static void compare_bytes(const char *what, const struct golden *g,
			  int e, int m, const uint8_t *want,
			  const uint8_t *got, size_t n, size_t per_block)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		if (want[i] == got[i])
			continue;
		if (!bad++) {
			size_t b = i / per_block;

			CHECK(0, "%s %s/%s: %s of block %zu (input[0] 0x%08x) byte %zu: want 0x%02x got 0x%02x",
			      g->dir, test_elem(test_elems[e])->name,
			      test_mode_names[m], what, b,
			      b < g->n ? g->input[b * 32] : 0, i % per_block,
			      want[i], got[i]);
		}
	}
	if (bad > 1)
		CHECK(0, "%s %s/%s: %s: %zu mismatching bytes in all", g->dir,
		      test_elem(test_elems[e])->name, test_mode_names[m],
		      what, bad);
}

/* fp32 -> bf16 round to nearest even; NaN stays NaN. */
static uint32_t f32_to_bf16(uint32_t x)
{
	if (test_isnan_bits(x, 23))
		return 0x7fc0;
	return (x + 0x7fff + ((x >> 16) & 1)) >> 16;
}

static void test_quantize(struct mxa_device *dev, const struct golden *g)
{
	/* Blocks per row: one block a row, and eight (K = 256). */
	static const uint32_t bprs[] = { 1, 8 };
	size_t nmax = (size_t)g->n * 32;
	uint8_t *data = calloc(nmax, 1), *scale = calloc(g->n, 1);
	unsigned int e, m, p, s;
	char what[64];

	for (e = 0; e < NELEM; e++) {
		enum mxa_elem elem = test_elems[e];

		for (m = 0; m < NMODE; m++) {
			const struct golden_combo *c = &g->c[e][m];

			for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
				for (s = 0; s < TEST_ARRAY_SIZE(bprs); s++) {
					uint32_t bpr = bprs[s];
					uint32_t rows = g->n / bpr;
					int sup = supported(dev, MXA_OP_QUANTIZE,
							    elem, test_modes[m],
							    MXA_DTYPE_F32, rows,
							    bpr * 32, prefs[p]);
					int ret;

					if (!rows || sup < 0)
						continue;
					ret = quantize(dev, elem, test_modes[m],
						       prefs[p], MXA_DTYPE_F32,
						       g->input, rows, bpr,
						       data, scale);
					if (!sup) {
						CHECK(ret == -EOPNOTSUPP,
						      "quantize %s under %s: %d, but query said unsupported",
						      test_elem(elem)->name,
						      pref_names[prefs[p]], ret);
						continue;
					}
					CHECK(ret == 0,
					      "quantize %s/%s %s %ux%u: %d (%s)",
					      test_elem(elem)->name,
					      test_mode_names[m],
					      pref_names[prefs[p]], rows,
					      bpr * 32, ret, mxa_strerror(ret));
					if (ret)
						continue;
					snprintf(what, sizeof(what),
						 "%s %ux%u scale",
						 pref_names[prefs[p]], rows,
						 bpr * 32);
					compare_bytes(what, g, e, m, c->scale,
						      scale, rows * bpr, 1);
					snprintf(what, sizeof(what),
						 "%s %ux%u data",
						 pref_names[prefs[p]], rows,
						 bpr * 32);
					compare_bytes(what, g, e, m, c->data,
						      data, rows * bpr *
						      block_bytes(elem),
						      block_bytes(elem));
				}
			}
		}
	}
	free(data);
	free(scale);
}

/*
 * A bf16 input is the same path after an exact widening to fp32: quantizing
 * bf16 x and fp32 (x << 16) must agree bit for bit.
 */
static void test_bf16(struct mxa_device *dev, const struct golden *g)
{
	size_t n = (size_t)g->n * 32, i;
	uint32_t *h = calloc(n, 4), *w = calloc(n, 4);
	uint8_t *d1 = calloc(n, 1), *d2 = calloc(n, 1);
	uint8_t *s1 = calloc(g->n, 1), *s2 = calloc(g->n, 1);
	unsigned int e, m, p;

	for (i = 0; i < n; i++) {
		h[i] = g->input[i] >> 16;
		w[i] = h[i] << 16;
	}
	for (e = 0; e < NELEM; e++) {
		enum mxa_elem elem = test_elems[e];

		for (m = 0; m < NMODE; m++) {
			for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
				int r1, r2, sup;

				sup = supported(dev, MXA_OP_QUANTIZE, elem,
						test_modes[m], MXA_DTYPE_BF16,
						g->n, 32, prefs[p]);
				if (sup <= 0)
					continue;
				r1 = quantize(dev, elem, test_modes[m],
					      prefs[p], MXA_DTYPE_BF16, h,
					      g->n, 1, d1, s1);
				r2 = quantize(dev, elem, test_modes[m],
					      prefs[p], MXA_DTYPE_F32, w,
					      g->n, 1, d2, s2);
				CHECK(r1 == 0 && r2 == 0,
				      "quantize bf16/widened %s/%s %s: %d %d",
				      test_elem(elem)->name, test_mode_names[m],
				      pref_names[prefs[p]], r1, r2);
				if (r1 || r2)
					continue;
				compare_bytes("bf16 scale vs widened", g, e, m,
					      s2, s1, g->n, 1);
				compare_bytes("bf16 data vs widened", g, e, m,
					      d2, d1, g->n * block_bytes(elem),
					      block_bytes(elem));
			}
		}
	}
	free(h);
	free(w);
	free(d1);
	free(d2);
	free(s1);
	free(s2);
}

/* got must equal want bit for bit, NaN matching any NaN. */
static void compare_deq(const struct golden *g, int e, int m,
			const char *what, const uint32_t *want,
			const uint32_t *got, size_t n, unsigned int mbits)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		bool ok = test_isnan_bits(want[i], mbits) ?
			  test_isnan_bits(got[i], mbits) : want[i] == got[i];

		if (ok)
			continue;
		if (!bad++)
			CHECK(0, "%s %s/%s: %s element %zu (block %zu, scale %u): want 0x%08x got 0x%08x",
			      g->dir, test_elem(test_elems[e])->name,
			      test_mode_names[m], what, i, i / 32 % g->n,
			      g->c[e][m].scale[i / 32 % g->n], want[i],
			      got[i]);
	}
	if (bad > 1)
		CHECK(0, "%s %s/%s: %s: %zu mismatches in all", g->dir,
		      test_elem(test_elems[e])->name, test_mode_names[m], what,
		      bad);
}

/*
 * Dequantize the golden codes and scales (placed as place says, the
 * matrix being rows x (bpr*32) built from blocks b % n) to fp32 and bf16.
 */
static void dequantize_combo(struct mxa_device *dev, const struct golden *g,
			     int e, int m, uint32_t rows, uint32_t bpr,
			     const struct test_mx_place *place,
			     enum mxa_pref pref)
{
	enum mxa_elem elem = test_elems[e];
	const struct golden_combo *c = &g->c[e][m];
	size_t n = (size_t)rows * bpr * 32, i;
	uint32_t *want = calloc(n, 4), *got = calloc(n, 4);
	uint8_t *codes = calloc(g->n * 32, 1);
	struct test_mx mx;
	struct mxa_matrix src;
	struct mxa_dense dst;
	unsigned int t;
	char what[96];
	int ret;

	test_mx_alloc(&mx, elem, rows, bpr * 32);
	unpack_codes(elem, c->data, g->n, codes);
	for (i = 0; i < (size_t)rows * bpr; i++) {
		size_t b = i % g->n;

		memcpy(mx.code + i * 32, codes + b * 32, 32);
		mx.scale[i] = c->scale[b];
	}
	ret = test_mx_upload(dev, &mx, place, &src);
	CHECK(ret == 0, "upload: %d", ret);
	for (t = 0; !ret && t < 2; t++) {
		enum mxa_dtype dtype = t ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
		unsigned int mbits = t ? 7 : 23;
		int r;

		for (i = 0; i < n; i++) {
			uint32_t v = c->deq[((i / 32) % g->n) * 32 + i % 32];

			/*
			 * torchao's fp32 results are exact or, below 2^-145,
			 * far under bf16's smallest subnormal, so one more
			 * rounding to bf16 is the single rounding the
			 * library does.
			 */
			want[i] = t ? f32_to_bf16(v) : v;
		}
		r = test_dense_upload(dev, dtype, rows, bpr * 32, NULL, 0, 0,
				      &dst);
		CHECK(r == 0, "dense upload: %d", r);
		if (r)
			break;
		r = mxa_dequantize(dev, &src, &dst, pref);
		CHECK(r == 0, "dequantize %s/%s to %s, %s, %s layout: %d (%s)",
		      test_elem(elem)->name, test_mode_names[m],
		      t ? "bf16" : "f32", pref_names[pref],
		      place && place->layout ? "swizzled" : "plain", r,
		      mxa_strerror(r));
		snprintf(what, sizeof(what), "%s %s %ux%u deq %s",
			 pref_names[pref],
			 place && place->layout ? "swizzled" : "plain", rows,
			 bpr * 32, t ? "bf16" : "f32");
		if (!r && !test_dense_download(&dst, got))
			compare_deq(g, e, m, what, want, got, n, mbits);
		test_dense_release(&dst);
	}
	if (!ret)
		test_mx_release(&src);
	test_mx_free(&mx);
	free(codes);
	free(want);
	free(got);
}

/* A preference the device refuses fails with -EOPNOTSUPP, writing nothing. */
static void refused_dequantize(struct mxa_device *dev, enum mxa_elem elem,
			       enum mxa_pref pref)
{
	static const uint32_t sentinel[32] = { 0x12345678 };
	struct test_mx mx;
	struct mxa_matrix src;
	struct mxa_dense dst;
	uint32_t got[32];
	int ret;

	test_mx_alloc(&mx, elem, 1, 32);
	ret = test_mx_upload(dev, &mx, NULL, &src);
	if (!ret) {
		ret = test_dense_upload(dev, MXA_DTYPE_F32, 1, 32, sentinel, 0,
					0, &dst);
		if (!ret) {
			ret = mxa_dequantize(dev, &src, &dst, pref);
			CHECK(ret == -EOPNOTSUPP,
			      "dequantize %s under %s: %d, but query said unsupported",
			      test_elem(elem)->name, pref_names[pref], ret);
			CHECK(!test_dense_download(&dst, got) &&
			      !memcmp(got, sentinel, sizeof(got)),
			      "a refused dequantize wrote its output");
			test_dense_release(&dst);
		}
		test_mx_release(&src);
	}
	test_mx_free(&mx);
}

static void test_dequantize(struct mxa_device *dev, const struct golden *g)
{
	/* Strided rows and scales, the data not at offset 0. */
	static const struct test_mx_place strided = {
		.layout = MXA_LAYOUT_PLAIN, .data_offset = 3, .data_pad = 5,
		.scale_offset = 7, .scale_pad = 2,
	};
	unsigned int e, m, p;

	for (e = 0; e < NELEM; e++) {
		for (m = 0; m < NMODE; m++) {
			for (p = 0; p < TEST_ARRAY_SIZE(prefs); p++) {
				int sup = supported(dev, MXA_OP_DEQUANTIZE,
						    test_elems[e], 0,
						    MXA_DTYPE_F32, g->n, 32,
						    prefs[p]);

				if (!sup)
					refused_dequantize(dev, test_elems[e],
							   prefs[p]);
				if (sup <= 0)
					continue;
				dequantize_combo(dev, g, e, m, g->n, 1, NULL,
						 prefs[p]);
			}
			if (g->n >= 4)
				dequantize_combo(dev, g, e, m, g->n / 4, 4,
						 &strided, MXA_PREF_AUTO);
		}
	}
}

/* The design's formula for the swizzled (to_blocked) index. */
static size_t swizzle_ref(uint32_t blocks, uint32_t r, uint32_t c)
{
	size_t cp = (blocks + 3) / 4 * 4;

	return ((size_t)(r / 128) * (cp / 4) + c / 4) * 512 +
	       (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
}

/*
 * Quantize into swizzled scales: a rows x (bpr*32) matrix whose blocks are
 * the golden blocks taken cyclically.  Each scale must land at
 * mxa_swizzle_index(); the padding of the 128 x 4 tiles is written as 0
 * (the header says so, as torchao's to_blocked); bytes around the scale
 * area are untouched.
 */
static void swizzle_case(struct mxa_device *dev, const struct golden *g,
			 int e, int m, uint32_t rows, uint32_t bpr)
{
	enum mxa_elem elem = test_elems[e];
	const struct golden_combo *c = &g->c[e][m];
	const size_t off = 8, tail = 8;
	size_t rp = (rows + 127) / 128 * 128, cp = (bpr + 3) / 4 * 4;
	size_t sbytes = rp * cp, want_bytes = 0, i, bad = 0;
	size_t bb = block_bytes(elem), nblk = (size_t)rows * bpr;
	size_t total = off + sbytes + tail;
	uint32_t *in = calloc(nblk * 32, 4);
	uint8_t *want_data = calloc(nblk * bb, 1);
	uint8_t *sc = calloc(total, 1), *data = calloc(nblk * bb, 1);
	bool *used = calloc(sbytes, sizeof(bool));
	struct mxa_matrix dst = {
		.elem = elem, .scale_layout = MXA_LAYOUT_SWIZZLED,
		.rows = rows, .cols = bpr * 32, .scale_offset = off,
	};
	struct mxa_dense src;
	uint32_t r, k;
	int ret;

	for (i = 0; i < nblk; i++) {
		memcpy(in + i * 32, g->input + (i % g->n) * 32, 128);
		memcpy(want_data + i * bb, c->data + (i % g->n) * bb, bb);
	}
	ret = mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, rows, bpr * 32,
			      &want_bytes);
	CHECK(ret == 0 && want_bytes == sbytes,
	      "mxa_scale_bytes(swizzled, %u, %u) = %d, %zu; want %zu", rows,
	      bpr * 32, ret, want_bytes, sbytes);

	memset(sc, 0xa5, total);
	ret = test_dense_upload(dev, MXA_DTYPE_F32, rows, bpr * 32, in, 0, 0,
				&src);
	if (!ret)
		ret = mxa_buffer_alloc(dev, nblk * bb, &dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, total, &dst.scale);
	if (!ret)
		ret = mxa_buffer_write(dst.scale, 0, sc, total);
	if (!ret)
		ret = mxa_quantize(dev, &src, &dst, test_modes[m],
				   MXA_PREF_AUTO);
	CHECK(ret == 0, "swizzled quantize %s/%s %ux%u: %d (%s)",
	      test_elem(elem)->name, test_mode_names[m], rows, bpr * 32, ret,
	      mxa_strerror(ret));
	if (!ret)
		ret = mxa_buffer_read(dst.scale, 0, sc, total);
	if (!ret)
		ret = mxa_buffer_read(dst.data, 0, data, nblk * bb);
	if (ret)
		goto out;

	compare_bytes("swizzled-quantize data", g, e, m, want_data, data,
		      nblk * bb, bb);
	for (r = 0; r < rows; r++) {
		for (k = 0; k < bpr; k++) {
			size_t at = swizzle_ref(bpr, r, k);
			size_t lib = mxa_swizzle_index(rows, bpr, r, k);
			uint8_t want = c->scale[(r * bpr + k) % g->n];

			CHECK(lib == at,
			      "mxa_swizzle_index(%u, %u, %u, %u) = %zu, want %zu",
			      rows, bpr, r, k, lib, at);
			used[at] = true;
			if (sc[off + at] != want && !bad++)
				CHECK(0, "%s/%s %ux%u swizzled: scale (%u, %u) at %zu: want 0x%02x got 0x%02x",
				      test_elem(elem)->name, test_mode_names[m],
				      rows, bpr * 32, r, k, at, want,
				      sc[off + at]);
		}
	}
	for (i = 0; i < sbytes; i++) {
		if (used[i])
			continue;
		CHECK(sc[off + i] == 0,
		      "%ux%u swizzled: padding byte %zu is 0x%02x, want 0",
		      rows, bpr * 32, i, sc[off + i]);
	}
	for (i = 0; i < off; i++)
		CHECK(sc[i] == 0xa5, "swizzled quantize wrote byte %zu before the scales",
		      i);
	for (i = off + sbytes; i < total; i++)
		CHECK(sc[i] == 0xa5, "swizzled quantize wrote byte %zu past the scales",
		      i);
out:
	mxa_buffer_free(dst.data);
	mxa_buffer_free(dst.scale);
	test_dense_release(&src);
	free(in);
	free(want_data);
	free(sc);
	free(data);
	free(used);
}

static void test_swizzled(struct mxa_device *dev, const struct golden *g)
{
	/* Ragged against the 128-row and 4-block tiles, and exact fits. */
	static const uint32_t shapes[][2] = {
		{ 131, 5 }, { 128, 4 }, { 1, 1 }, { 257, 3 }, { 33, 6 },
	};
	static const struct test_mx_place swz = {
		.layout = MXA_LAYOUT_SWIZZLED, .scale_offset = 4,
	};
	unsigned int e, m, s;

	for (e = 0; e < NELEM; e++)
		for (m = 0; m < NMODE; m++)
			for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++)
				swizzle_case(dev, g, e, m, shapes[s][0],
					     shapes[s][1]);
	/* Dequantize reads swizzled scales from the same places. */
	for (e = 0; e < NELEM; e++)
		for (m = 0; m < NMODE; m++)
			dequantize_combo(dev, g, e, m, 131, 5, &swz,
					 MXA_PREF_AUTO);
}

int main(void)
{
	const char *dirs[2];
	struct mxa_device *dev;
	int n, i;

	n = test_golden_dirs(dirs);
	/* The compact set is part of the repository: never skip it. */
	CHECK(n > 0 && !strcmp(dirs[0], "tests/data/mx_golden"),
	      "tests/data/mx_golden is missing (run from the repository root)");
	if (!n)
		return test_finish();
	dev = test_open_device();
	for (i = 0; i < n; i++) {
		struct golden g;

		if (!golden_load(&g, dirs[i])) {
			test_quantize(dev, &g);
			test_bf16(dev, &g);
			test_dequantize(dev, &g);
			test_swizzled(dev, &g);
		}
		golden_free(&g);
	}
	mxa_device_close(dev);
	return test_finish();
}
