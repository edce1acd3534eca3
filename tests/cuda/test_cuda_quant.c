// SPDX-License-Identifier: MIT
/*
 * The CUDA backend quantizes and dequantizes bit-exactly:
 *
 * - torchao's golden vectors (tests/data/mx_golden, and the full set in
 *   ../shared/testdata/mx_golden or $MXACCEL_GOLDEN_DIR when present) for
 *   all 5 element types x 4 scale modes: codes and scales bit for bit,
 *   dequantized values bit for bit (NaN as "is NaN");
 * - the same on the CPU, byte for byte over whole buffers (padding too),
 *   for fp32 and bf16 inputs, plain and swizzled scales, offsets and
 *   strides, and random bit patterns (NaN, Inf, subnormals, every binade);
 * - dequantization to fp32 and bf16, identical to the CPU's.
 *
 * Skips (77) where no CUDA device is found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"

static struct mxa_device *cuda, *cpu;
static unsigned int n_quant, n_deq;

/* Where a quantization's source and destination live. */
struct qplace {
	size_t src_off, src_pad;	/* bytes */
	struct test_mx_place dst;
};

struct qresult {
	struct mxa_dense src;
	struct mxa_matrix dst;
};

static size_t row_bytes(enum mxa_elem e, uint32_t cols)
{
	return e == MXA_ELEM_E2M1 ? cols / 2 : cols;
}

/*
 * Quantize rows x cols values (fp32 bits, or bf16 bits in the low half) on
 * dev; the destination buffers start zeroed and keep their padding.
 */
static int quantize(struct mxa_device *dev, enum mxa_elem elem,
		    enum mxa_scale_mode mode, enum mxa_dtype dtype,
		    const uint32_t *in, uint32_t rows, uint32_t cols,
		    const struct qplace *pl, struct qresult *r)
{
	size_t dstride = row_bytes(elem, cols) + pl->dst.data_pad;
	size_t blocks = cols / 32, sstride = blocks + pl->dst.scale_pad;
	size_t ssize;
	int ret;

	memset(r, 0, sizeof(*r));
	if (pl->dst.layout == MXA_LAYOUT_SWIZZLED)
		mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, rows, cols, &ssize);
	else
		ssize = rows * sstride;
	ret = test_dense_upload(dev, dtype, rows, cols, in, pl->src_off,
				pl->src_pad, &r->src);
	if (!ret)
		ret = mxa_buffer_alloc(dev, pl->dst.data_offset + rows * dstride,
				       &r->dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, pl->dst.scale_offset + ssize,
				       &r->dst.scale);
	if (ret)
		return ret;
	r->dst.data_offset = pl->dst.data_offset;
	r->dst.data_stride = dstride;
	r->dst.scale_offset = pl->dst.scale_offset;
	r->dst.scale_stride = pl->dst.layout == MXA_LAYOUT_PLAIN ? sstride : 0;
	r->dst.elem = elem;
	r->dst.scale_layout = pl->dst.layout;
	r->dst.rows = rows;
	r->dst.cols = cols;
	return mxa_quantize(dev, &r->src, &r->dst, mode, MXA_PREF_AUTO);
}

static void release(struct qresult *r)
{
	test_dense_release(&r->src);
	mxa_buffer_free(r->dst.data);
	mxa_buffer_free(r->dst.scale);
}

/* The same quantization on cuda and cpu gives identical buffers. */
static void quant_vs_cpu(const char *what, enum mxa_elem elem,
			 enum mxa_scale_mode mode, enum mxa_dtype dtype,
			 const uint32_t *in, uint32_t rows, uint32_t cols,
			 const struct qplace *pl)
{
	struct qresult g, c;
	int rg = quantize(cuda, elem, mode, dtype, in, rows, cols, pl, &g);
	int rc = quantize(cpu, elem, mode, dtype, in, rows, cols, pl, &c);
	size_t first, bad;

	n_quant++;
	CHECK(rg == 0 && rc == 0, "%s %s/%s: quantize cuda %d cpu %d", what,
	      test_elem(elem)->name, test_mode_names[mode], rg, rc);
	if (!rg && !rc) {
		bad = cudatest_diff(g.dst.data, c.dst.data, &first);
		CHECK(!bad, "%s %s/%s %s %ux%u %s: %zu data bytes differ from the cpu, first at %zu",
		      what, test_elem(elem)->name, test_mode_names[mode],
		      dtype == MXA_DTYPE_BF16 ? "bf16" : "f32", rows, cols,
		      pl->dst.layout ? "swizzled" : "plain", bad, first);
		bad = cudatest_diff(g.dst.scale, c.dst.scale, &first);
		CHECK(!bad, "%s %s/%s %s %ux%u %s: %zu scale bytes differ from the cpu, first at %zu",
		      what, test_elem(elem)->name, test_mode_names[mode],
		      dtype == MXA_DTYPE_BF16 ? "bf16" : "f32", rows, cols,
		      pl->dst.layout ? "swizzled" : "plain", bad, first);
	}
	release(&g);
	release(&c);
}

/* --- golden vectors ---------------------------------------------------------- */

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

/* Golden codes of one combination against the device, and dequantized. */
static void golden_combo(const char *dir, const uint32_t *input, uint32_t n,
			 unsigned int e, unsigned int m)
{
	enum mxa_elem elem = test_elems[e];
	const char *en = test_elem(elem)->name, *mn = test_mode_names[m];
	size_t bb = elem == MXA_ELEM_E2M1 ? 16 : 32, i;
	uint8_t *gscale, *gdata, *got;
	uint32_t *gdeq, *deq;
	struct qplace pl = { 0 };
	struct qresult r;
	struct mxa_dense d;
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "%s_%s_scale.bin", en, mn);
	gscale = load(dir, name, n);
	snprintf(name, sizeof(name), "%s_%s_data.bin", en, mn);
	gdata = load(dir, name, n * bb);
	snprintf(name, sizeof(name), "%s_%s_deq_f32.bin", en, mn);
	gdeq = load(dir, name, (size_t)n * 128);
	if (!gscale || !gdata || !gdeq)
		goto out;

	/* One block a row: the buffers are the golden files themselves. */
	ret = quantize(cuda, elem, test_modes[m], MXA_DTYPE_F32, input, n, 32,
		       &pl, &r);
	CHECK(ret == 0, "golden %s/%s: quantize %d", en, mn, ret);
	if (!ret) {
		size_t bad = 0, first = 0;

		got = cudatest_read(r.dst.data);
		for (i = 0; i < n * bb; i++)
			if (got[i] != gdata[i] && !bad++)
				first = i;
		CHECK(!bad, "%s golden %s/%s: %zu code bytes differ (first: block %zu byte %zu, want 0x%02x got 0x%02x)",
		      dir, en, mn, bad, first / bb, first % bb, gdata[first],
		      got[first]);
		free(got);
		got = cudatest_read(r.dst.scale);
		for (bad = 0, i = 0; i < n; i++)
			if (got[i] != gscale[i] && !bad++)
				first = i;
		CHECK(!bad, "%s golden %s/%s: %zu scales differ (first: block %zu, want %u got %u)",
		      dir, en, mn, bad, first, gscale[first], got[first]);
		free(got);

		/* Dequantize what was just written. */
		deq = calloc((size_t)n * 32, 4);
		ret = test_dense_upload(cuda, MXA_DTYPE_F32, n, 32, NULL, 0, 0,
					&d);
		if (!ret)
			ret = mxa_dequantize(cuda, &r.dst, &d, MXA_PREF_AUTO);
		if (!ret)
			ret = test_dense_download(&d, deq);
		CHECK(ret == 0, "golden %s/%s: dequantize %d", en, mn, ret);
		for (bad = 0, i = 0; !ret && i < (size_t)n * 32; i++) {
			bool ok = test_isnan_bits(gdeq[i], 23) ?
				  test_isnan_bits(deq[i], 23) : deq[i] == gdeq[i];

			if (!ok && !bad++)
				first = i;
		}
		CHECK(!bad, "%s golden %s/%s: %zu dequantized values differ (first %zu: want 0x%08x got 0x%08x)",
		      dir, en, mn, bad, first, gdeq[first], deq[first]);
		test_dense_release(&d);
		free(deq);
		release(&r);
		n_deq++;
	}
	n_quant++;
out:
	free(gscale);
	free(gdata);
	free(gdeq);
}

static void check_golden(void)
{
	const char *dirs[2];
	int nd = test_golden_dirs(dirs), d;
	unsigned int e, m;

	CHECK(nd > 0, "no golden vectors found");
	for (d = 0; d < nd; d++) {
		uint32_t *input, n, i, *bf;
		size_t size;
		char path[512];
		struct qplace pl = { 0 };

		snprintf(path, sizeof(path), "%s/input_f32.bin", dirs[d]);
		input = test_read_file(path, &size);
		if (!input || !size || size % 128) {
			CHECK(0, "%s: missing or malformed", path);
			free(input);
			continue;
		}
		n = (uint32_t)(size / 128);
		printf("%s: %u blocks\n", dirs[d], n);
		bf = calloc((size_t)n * 32, 4);
		for (i = 0; i < n * 32; i++)
			bf[i] = input[i] >> 16;
		for (e = 0; e < 5; e++) {
			for (m = 0; m < 4; m++) {
				golden_combo(dirs[d], input, n, e, m);
				/* Eight blocks a row, swizzled, and bf16. */
				pl.dst.layout = MXA_LAYOUT_SWIZZLED;
				quant_vs_cpu("golden", test_elems[e], test_modes[m],
					     MXA_DTYPE_F32, input, n / 8, 256, &pl);
				pl.dst.layout = MXA_LAYOUT_PLAIN;
				quant_vs_cpu("golden", test_elems[e], test_modes[m],
					     MXA_DTYPE_BF16, bf, n, 32, &pl);
			}
		}
		free(bf);
		free(input);
	}
}

/* --- random bit patterns --------------------------------------------------------- */

/* An fp32 bit pattern from anywhere: every binade, subnormals, specials. */
static uint32_t rand_f32(uint32_t binade)
{
	uint32_t sign = test_rand_below(2) << 31;
	uint32_t mant = (uint32_t)test_rand() & 0x7fffff;

	switch (test_rand_below(64)) {
	case 0:
		return sign | 0x7f800000;		/* Inf */
	case 1:
		return sign | 0x7fc00000 | mant;	/* NaN */
	case 2:
		return sign;				/* 0 */
	case 3:
		return sign | mant;			/* subnormal */
	default:
		break;
	}
	/* Within a few binades of the block's own, so that blocks vary. */
	binade += test_rand_below(12);
	if (binade > 254)
		binade = 254;
	return sign | binade << 23 | mant;
}

static void random_inputs(void)
{
	static const uint32_t shapes[][2] = {
		{ 1, 32 }, { 3, 64 }, { 17, 96 }, { 129, 256 }, { 257, 160 },
		{ 64, 1024 }, { 5, 4096 },
	};
	unsigned int s, e, m;

	for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++) {
		uint32_t rows = shapes[s][0], cols = shapes[s][1], i;
		uint32_t *f = calloc((size_t)rows * cols, 4);
		uint32_t *h = calloc((size_t)rows * cols, 4);

		for (i = 0; i < rows * cols; i++) {
			uint32_t binade = test_rand_below(250);

			/* One binade per block of 32, mostly. */
			if (i % 32 && test_rand_below(8))
				binade = (f[i - 1] >> 23) & 0xff;
			f[i] = rand_f32(binade ? binade : 1);
			h[i] = (uint32_t)test_rand() & 0xffff;
		}
		for (e = 0; e < 5; e++) {
			for (m = 0; m < 4; m++) {
				struct qplace pl;

				memset(&pl, 0, sizeof(pl));
				pl.dst.layout = (s + e + m) % 2 ?
						MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
				if ((s + m) % 3) {
					pl.src_off = 4 * test_rand_below(5);
					pl.src_pad = 4 * test_rand_below(9);
					pl.dst.data_offset = test_rand_below(19);
					pl.dst.data_pad = test_rand_below(23);
					pl.dst.scale_offset = test_rand_below(7);
					if (pl.dst.layout == MXA_LAYOUT_PLAIN)
						pl.dst.scale_pad = test_rand_below(5);
				}
				quant_vs_cpu("random", test_elems[e], test_modes[m],
					     MXA_DTYPE_F32, f, rows, cols, &pl);
				quant_vs_cpu("random", test_elems[e], test_modes[m],
					     MXA_DTYPE_BF16, h, rows, cols, &pl);
			}
		}
		free(f);
		free(h);
	}
}

/* --- dequantization of every code under every scale ------------------------------ */

static void dequantize_all(void)
{
	unsigned int e, t;

	for (e = 0; e < 5; e++) {
		enum mxa_elem elem = test_elems[e];
		uint32_t ncodes = test_elem_ncodes(elem);
		/* Rows of 256 elements: every code under 8 scales per row. */
		uint32_t rows = 256 * ncodes / 256, r, c;
		struct test_mx mx;

		test_mx_alloc(&mx, elem, rows, 256);
		for (r = 0; r < rows; r++) {
			for (c = 0; c < 256; c++)
				mx.code[r * 256 + c] = (uint8_t)((r * 256 + c) % ncodes);
			for (c = 0; c < 8; c++)
				mx.scale[r * 8 + c] = (uint8_t)((r * 8 + c) * 37);
		}
		for (t = 0; t < 4; t++) {
			enum mxa_dtype dt = t % 2 ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
			struct test_mx_place pl = { 0 };
			struct mxa_matrix sg, sc;
			struct mxa_dense dg, dc;
			size_t pad = t / 2 ? 4 * 3 : 0, off = t / 2 ? 8 : 0, first;
			int ret;

			pl.layout = t / 2 ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
			pl.data_offset = t / 2 ? 5 : 0;
			pl.data_pad = t / 2 ? 7 : 0;
			ret = test_mx_upload(cuda, &mx, &pl, &sg);
			if (!ret)
				ret = test_mx_upload(cpu, &mx, &pl, &sc);
			if (!ret)
				ret = test_dense_upload(cuda, dt, rows, 256, NULL, off,
							pad, &dg);
			if (!ret)
				ret = test_dense_upload(cpu, dt, rows, 256, NULL, off,
							pad, &dc);
			if (!ret)
				ret = mxa_dequantize(cuda, &sg, &dg, MXA_PREF_AUTO);
			if (!ret)
				ret = mxa_dequantize(cpu, &sc, &dc, MXA_PREF_AUTO);
			CHECK(ret == 0, "dequantize %s: %d", test_elem(elem)->name,
			      ret);
			if (!ret) {
				size_t bad = cudatest_diff(dg.buf, dc.buf, &first);

				CHECK(!bad, "dequantize %s to %s: %zu bytes differ from the cpu, first at %zu",
				      test_elem(elem)->name,
				      dt == MXA_DTYPE_BF16 ? "bf16" : "f32", bad,
				      first);
			}
			n_deq++;
			test_mx_release(&sg);
			test_mx_release(&sc);
			test_dense_release(&dg);
			test_dense_release(&dc);
		}
		test_mx_free(&mx);
	}
}

static void check_plans(void)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_QUANTIZE, .a_elem = MXA_ELEM_E2M1,
		.dtype = MXA_DTYPE_BF16, .mode = MXA_SCALE_RCEIL, .m = 16, .k = 64,
	};
	struct mxa_plan p;
	void *map;
	struct mxa_buffer *b = NULL;

	CHECK_RET(mxa_plan(cuda, &d, MXA_PREF_NATIVE, &p), 0);
	CHECK(!strcmp(p.kernel, "cuda-quantize") && p.exact,
	      "quantize plans %s (exact %d)", p.kernel, p.exact);
	d.op = MXA_OP_DEQUANTIZE;
	CHECK_RET(mxa_plan(cuda, &d, MXA_PREF_EMULATED, &p), 0);
	CHECK(!strcmp(p.kernel, "cuda-dequantize"), "dequantize plans %s",
	      p.kernel);
	/* Device memory: no host mapping, no wrapping of host memory (-EINVAL). */
	CHECK_RET(mxa_buffer_alloc(cuda, 64, &b), 0);
	CHECK_RET(mxa_buffer_map(b, &map), -EOPNOTSUPP);
	mxa_buffer_free(b);
	CHECK_RET(mxa_buffer_wrap(cuda, &d, sizeof(d), &b), -EINVAL);
}

int main(void)
{
	test_seed(0x63756461717561ull);
	cuda = cudatest_open();
	cpu = test_open_cpu();
	check_plans();
	check_golden();
	random_inputs();
	dequantize_all();
	printf("%u quantizations and %u dequantizations compared\n", n_quant,
	       n_deq);
	mxa_device_close(cuda);
	mxa_device_close(cpu);
	return test_finish();
}
