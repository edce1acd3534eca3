// SPDX-License-Identifier: MIT
/*
 * NVFP4 (e2m1, UE4M3 scales per 16, optional fp32 per-tensor scale)
 * through the public API, bit-exact with torchao's nvfp4_quantize() and
 * NVFP4Tensor.dequantize(): tests/data/nvfp4_golden (and the full set
 * when ../shared/testdata/nvfp4_golden or $MXACCEL_NVFP4_GOLDEN_DIR
 * exists), single and two level, each golden tensor as one 8 x 64 matrix,
 * with plain and swizzled scales (the swizzled bytes are torchao's
 * to_blocked() of the plain ones: checked against the plain result through
 * mxa_swizzle_index()), dequantized to fp32 (golden) and bf16 (the fp32
 * result rounded to nearest even, the rule of Documentation/formats.rst).
 * Then every way to get an NVFP4 request wrong, each naming its field.
 * On the cpu device, all of it again on every ISA level this machine runs
 * ($MXACCEL_CPU_ISA picks one instead), and random tensors quantized at
 * each vector level compared bit for bit with level ref (the core):
 * every exponent range, ties, NaN, Inf, zeros, subnormals, tensor scales
 * down to the subnormal ones; then dequantized back (also with random
 * scale bytes), fp32 and bf16, against the core the same way.  Last, on
 * the cpu device, NATIVE NVFP4 x NVFP4 and mixed NVFP4 / MX GEMMs
 * (cpu-blocked, cpu-decode) against the exact reference within their
 * stated bound, on every ISA level (test_native).
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  A device whose kernels
 * take no UE4M3 scales (today: the PCI device's accel engine) must say
 * so in mxa_query() and refuse with -EOPNOTSUPP, which is then what is
 * tested.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testlib.h"

#define ROWS 8
#define COLS 64
#define TBLOCKS (ROWS * COLS / 16)	/* blocks per tensor */

struct nv_golden {
	uint32_t tensors;
	uint32_t *input, *tscale;
	uint8_t *data[2], *scale[2];
	uint32_t *deq[2];
};

static void *load(const char *dir, const char *name, size_t *size)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return test_read_file(path, size);
}

static bool golden_load(const char *dir, struct nv_golden *g)
{
	static const char *const lv[2] = { "single", "two" };
	size_t size, want;
	char name[64];
	unsigned int l;

	memset(g, 0, sizeof(*g));
	g->tscale = load(dir, "tensor_scale_f32.bin", &size);
	if (!g->tscale)
		return false;
	g->tensors = (uint32_t)(size / 4);
	want = (size_t)g->tensors * TBLOCKS;
	g->input = load(dir, "input_f32.bin", &size);
	CHECK(g->input && size == want * 64, "%s: input_f32.bin", dir);
	for (l = 0; l < 2; l++) {
		snprintf(name, sizeof(name), "%s_data.bin", lv[l]);
		g->data[l] = load(dir, name, &size);
		CHECK(g->data[l] && size == want * 8, "%s: %s", dir, name);
		snprintf(name, sizeof(name), "%s_scale.bin", lv[l]);
		g->scale[l] = load(dir, name, &size);
		CHECK(g->scale[l] && size == want, "%s: %s", dir, name);
		snprintf(name, sizeof(name), "%s_deq_f32.bin", lv[l]);
		g->deq[l] = load(dir, name, &size);
		CHECK(g->deq[l] && size == want * 64, "%s: %s", dir, name);
	}
	return g->input && g->data[0] && g->data[1] && g->scale[0] &&
	       g->scale[1] && g->deq[0] && g->deq[1];
}

static void golden_free(struct nv_golden *g)
{
	unsigned int l;

	free(g->input);
	free(g->tscale);
	for (l = 0; l < 2; l++) {
		free(g->data[l]);
		free(g->scale[l]);
		free(g->deq[l]);
	}
}

static struct mxa_buffer *buffer(struct mxa_device *dev, size_t size)
{
	struct mxa_buffer *b = NULL;

	if (mxa_buffer_alloc(dev, size, &b)) {
		printf("cannot allocate %zu bytes\n", size);
		exit(1);
	}
	return b;
}

static bool f32_same(uint32_t a, uint32_t b)
{
	bool na = (a & 0x7fffffff) > 0x7f800000;
	bool nb = (b & 0x7fffffff) > 0x7f800000;

	return na || nb ? na && nb : a == b;
}

static uint16_t bf16_of(uint32_t f)
{
	if ((f & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	return (uint16_t)((f + 0x7fff + ((f >> 16) & 1)) >> 16);
}

static struct mxa_matrix nv_matrix(struct mxa_buffer *data,
				   struct mxa_buffer *scale,
				   enum mxa_scale_layout layout, float ts)
{
	return (struct mxa_matrix){
		.data = data, .scale = scale, .elem = MXA_ELEM_E2M1,
		.scale_type = MXA_SCALE_UE4M3, .scale_layout = layout,
		.rows = ROWS, .cols = COLS, .tensor_scale = ts,
	};
}

static unsigned int checked_tensors;

/* One tensor, one level, one layout, one source dtype. */
static void run_tensor(struct mxa_device *dev, const struct nv_golden *g,
		       uint32_t t, unsigned int level,
		       enum mxa_scale_layout layout, bool bf16_src)
{
	size_t sbytes = layout == MXA_LAYOUT_SWIZZLED ? 128 * 4 : TBLOCKS;
	struct mxa_buffer *src = buffer(dev, ROWS * COLS * 4);
	struct mxa_buffer *data = buffer(dev, ROWS * COLS / 2);
	struct mxa_buffer *scale = buffer(dev, sbytes);
	struct mxa_buffer *out = buffer(dev, ROWS * COLS * 4);
	const uint32_t *in = g->input + (size_t)t * TBLOCKS * 16;
	const uint8_t *wd = g->data[level] + (size_t)t * TBLOCKS * 8;
	const uint8_t *ws = g->scale[level] + (size_t)t * TBLOCKS;
	const uint32_t *wq = g->deq[level] + (size_t)t * TBLOCKS * 16;
	float ts = 0;
	struct mxa_matrix m;
	struct mxa_dense d = { .buf = src, .rows = ROWS, .cols = COLS };
	struct mxa_dense o = { .buf = out, .rows = ROWS, .cols = COLS };
	uint8_t got_d[ROWS * COLS / 2], got_s[128 * 4];
	uint32_t got_q[ROWS * COLS];
	uint16_t got_h[ROWS * COLS];
	const char *what = level ? "two-level" : "single-level";
	uint32_t r, b, i;

	if (level)
		memcpy(&ts, &g->tscale[t], 4);
	m = nv_matrix(data, scale, layout, ts);
	if (bf16_src) {
		uint16_t h[ROWS * COLS];

		for (i = 0; i < ROWS * COLS; i++)
			h[i] = (uint16_t)(in[i] >> 16);
		d.dtype = MXA_DTYPE_BF16;
		mxa_buffer_write(src, 0, h, sizeof(h));
	} else {
		mxa_buffer_write(src, 0, in, ROWS * COLS * 4);
	}
	CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_NVFP4, MXA_PREF_AUTO), 0);
	mxa_buffer_read(data, 0, got_d, sizeof(got_d));
	mxa_buffer_read(scale, 0, got_s, sbytes);
	if (bf16_src) {
		/* torchao widens bf16 to fp32 first: the same as fp32 of it. */
		uint8_t w_d[ROWS * COLS / 2], w_s[128 * 4];
		uint32_t wide[ROWS * COLS];

		for (i = 0; i < ROWS * COLS; i++)
			wide[i] = in[i] & 0xffff0000u;
		d.dtype = MXA_DTYPE_F32;
		mxa_buffer_write(src, 0, wide, sizeof(wide));
		CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_NVFP4,
				       MXA_PREF_AUTO), 0);
		mxa_buffer_read(data, 0, w_d, sizeof(w_d));
		mxa_buffer_read(scale, 0, w_s, sbytes);
		CHECK(!memcmp(got_d, w_d, sizeof(w_d)) &&
		      !memcmp(got_s, w_s, sbytes),
		      "tensor %u %s: bf16 input quantizes unlike its fp32 widening",
		      t, what);
	} else {
		CHECK(!memcmp(got_d, wd, sizeof(got_d)),
		      "tensor %u %s %s: codes differ from torchao", t, what,
		      mxa_layout_name(layout));
		for (r = 0; r < ROWS; r++)
			for (b = 0; b < COLS / 16; b++)
				CHECK(got_s[layout == MXA_LAYOUT_SWIZZLED ?
					    mxa_swizzle_index(ROWS, COLS / 16,
							      r, b) :
					    r * (COLS / 16) + b] ==
				      ws[r * (COLS / 16) + b],
				      "tensor %u %s %s: scale (%u, %u) differs from torchao",
				      t, what, mxa_layout_name(layout), r, b);
	}
	/* Dequantize torchao's own codes and scales. */
	mxa_buffer_write(data, 0, wd, ROWS * COLS / 2);
	for (r = 0; r < ROWS; r++)
		for (b = 0; b < COLS / 16; b++)
			got_s[layout == MXA_LAYOUT_SWIZZLED ?
			      mxa_swizzle_index(ROWS, COLS / 16, r, b) :
			      r * (COLS / 16) + b] = ws[r * (COLS / 16) + b];
	mxa_buffer_write(scale, 0, got_s, sbytes);
	CHECK_RET(mxa_dequantize(dev, &m, &o, MXA_PREF_AUTO), 0);
	mxa_buffer_read(out, 0, got_q, sizeof(got_q));
	for (i = 0; i < ROWS * COLS; i++)
		if (!f32_same(got_q[i], wq[i])) {
			CHECK(0, "tensor %u %s %s: element %u dequantizes to 0x%08x, torchao 0x%08x",
			      t, what, mxa_layout_name(layout), i, got_q[i],
			      wq[i]);
			break;
		}
	o.dtype = MXA_DTYPE_BF16;
	CHECK_RET(mxa_dequantize(dev, &m, &o, MXA_PREF_AUTO), 0);
	mxa_buffer_read(out, 0, got_h, sizeof(got_h));
	for (i = 0; i < ROWS * COLS; i++)
		if (got_h[i] != bf16_of(wq[i]) &&
		    !((got_h[i] & 0x7fff) > 0x7f80 && (wq[i] & 0x7fffffff) > 0x7f800000)) {
			CHECK(0, "tensor %u %s: bf16 element %u is 0x%04x, want 0x%04x",
			      t, what, i, got_h[i], bf16_of(wq[i]));
			break;
		}
	checked_tensors++;
	mxa_buffer_free(src);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
	mxa_buffer_free(out);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The repository's subset (must be there), then the full set if any. */
static void test_golden(struct mxa_device *dev)
{
	const char *full = getenv("MXACCEL_NVFP4_GOLDEN_DIR");
	const char *dirs[2] = { "tests/data/nvfp4_golden", NULL };
	unsigned int n = 1, i, level, bf;
	struct nv_golden g;
	uint32_t t;

	if (!full)
		full = "../shared/testdata/nvfp4_golden";
	if (is_dir(full))
		dirs[n++] = full;
	for (i = 0; i < n; i++) {
		if (!golden_load(dirs[i], &g)) {
			CHECK(0, "%s: cannot read the golden set", dirs[i]);
			golden_free(&g);
			continue;
		}
		for (t = 0; t < g.tensors; t++)
			for (level = 0; level < 2; level++)
				for (bf = 0; bf < 2; bf++) {
					run_tensor(dev, &g, t, level,
						   MXA_LAYOUT_PLAIN, bf);
					if (!bf)
						run_tensor(dev, &g, t, level,
							   MXA_LAYOUT_SWIZZLED,
							   false);
				}
		printf("%s: %u tensors (%u blocks), single and two level\n",
		       dirs[i], g.tensors, g.tensors * TBLOCKS);
		golden_free(&g);
	}
}

/* --- the vector rows against the core ----------------------------------- */

static uint32_t f32_of(uint32_t sign, uint32_t biased_exp, uint32_t mant)
{
	return sign << 31 | (biased_exp & 0xff) << 23 | (mant & 0x7fffff);
}

/*
 * Block b of a random tensor: every exponent range, subnormals, ties at
 * e2m1's and UE4M3's rounding boundaries, NaN, Inf and signed zeros.
 */
static void random_block(uint32_t x[16])
{
	uint32_t kind = test_rand_below(7), base, i, k;

	base = 1 + test_rand_below(254);
	if (kind == 1)
		base = test_rand_below(32);	/* subnormals and tiny normals */
	for (i = 0; i < 16; i++) {
		int e = (int)base - 8 + (int)test_rand_below(9);

		if (e < 0)
			e = 0;
		if (e > 254)
			e = 254;
		x[i] = f32_of(test_rand_below(2), (uint32_t)e,
			      (uint32_t)test_rand());
	}
	switch (kind) {
	case 2:	/* amax 6 * 2^k: a scale 2^k, elements on e2m1's ties */
	case 3:
		k = 127 - 30 + test_rand_below(60);
		for (i = 0; i < 16; i++) {
			/* multiples of 1/4 up to 7 (6 in a kind 3 block) */
			float v = (float)test_rand_below(kind == 3 ? 25 : 29) / 4;
			uint32_t bits;

			memcpy(&bits, &v, 4);
			x[i] = bits ? bits + ((k - 127) << 23) : 0;
			x[i] |= test_rand_below(2) << 31;
		}
		x[test_rand_below(16)] = f32_of(test_rand_below(2), k + 2,
						0x400000);	/* 6 * 2^k */
		if (kind == 3) {
			/* amax / 6 halfway between two UE4M3 values */
			float v = 6.0f * (float)(17 + 2 * test_rand_below(8)) / 16;
			uint32_t bits;

			memcpy(&bits, &v, 4);
			/*
			 * or an ulp or two either side: amax * fp32(1 / 6)
			 * instead of amax / 6 lands on the tie from below
			 */
			x[0] = bits + ((k - 127) << 23) +
			       test_rand_below(5) - 2;
		}
		break;
	case 4:	/* specials in an ordinary block */
		for (k = 1 + test_rand_below(3); k; k--) {
			static const uint32_t sp[] = {
				0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345,
				0x7f800000, 0xff800000, 0, 0x80000000,
				0x00000001, 0x807fffff,
			};

			x[test_rand_below(16)] =
				sp[test_rand_below(TEST_ARRAY_SIZE(sp))];
		}
		break;
	case 5:	/* zeros */
		for (i = 0; i < 16; i++)
			x[i] = test_rand_below(2) << 31;
		break;
	case 6:	/* one large element: the others round to zero */
		for (i = 0; i < 16; i++)
			x[i] &= 0x83ffffff;
		x[test_rand_below(16)] = f32_of(test_rand_below(2),
						120 + test_rand_below(20),
						(uint32_t)test_rand());
		break;
	}
}

/* A per-tensor scale: none, ordinary, subnormal, extreme. */
static float random_tensor_scale(void)
{
	static const uint32_t fixed[] = {
		0, 0x3f800000, 0x00000001, 0x00400000, 0x007fffff, 0x00800000,
		0x7f7fffff, 0x3b924925,
	};
	uint32_t bits;
	float ts;

	if (test_rand_below(2))
		bits = fixed[test_rand_below(TEST_ARRAY_SIZE(fixed))];
	else if (test_rand_below(4))
		bits = f32_of(0, 100 + test_rand_below(50),
			      (uint32_t)test_rand());
	else
		bits = f32_of(0, 0, (uint32_t)test_rand() | 1);
	memcpy(&ts, &bits, 4);
	return ts;
}

struct nv_run {
	size_t sbytes;
	uint8_t *data, *scale;
};

/* Quantize src (rows x cols fp32, or its bf16 halves) on dev. */
static void quantize_on(struct mxa_device *dev, const uint32_t *src,
			uint32_t rows, uint32_t cols, bool bf16,
			enum mxa_scale_layout layout, float ts,
			struct nv_run *out)
{
	uint32_t blocks = cols / 16;
	size_t n = (size_t)rows * cols;
	struct mxa_buffer *in = buffer(dev, n * 4);
	struct mxa_buffer *data = buffer(dev, n / 2);
	struct mxa_buffer *scale;
	struct mxa_dense d = { .buf = in, .rows = rows, .cols = cols,
			       .dtype = bf16 ? MXA_DTYPE_BF16 : MXA_DTYPE_F32 };
	struct mxa_matrix m = {
		.data = data, .elem = MXA_ELEM_E2M1,
		.scale_type = MXA_SCALE_UE4M3, .scale_layout = layout,
		.rows = rows, .cols = cols, .tensor_scale = ts,
	};
	size_t i;

	out->sbytes = layout == MXA_LAYOUT_SWIZZLED ?
		      (size_t)(rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4) :
		      (size_t)rows * blocks;
	scale = buffer(dev, out->sbytes);
	m.scale = scale;
	if (bf16) {
		uint16_t *h = malloc(n * 2);

		for (i = 0; i < n; i++)
			h[i] = (uint16_t)(src[i] >> 16);
		mxa_buffer_write(in, 0, h, n * 2);
		free(h);
	} else {
		mxa_buffer_write(in, 0, src, n * 4);
	}
	out->data = malloc(n / 2);
	out->scale = malloc(out->sbytes);
	CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_NVFP4, MXA_PREF_AUTO), 0);
	mxa_buffer_read(data, 0, out->data, n / 2);
	mxa_buffer_read(scale, 0, out->scale, out->sbytes);
	mxa_buffer_free(in);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
}

/* Dequantize codes and scales (rows x cols, layout) on dev to fp32 or bf16. */
static void *dequantize_on(struct mxa_device *dev, uint32_t rows,
			   uint32_t cols, enum mxa_scale_layout layout,
			   float ts, const struct nv_run *in, bool bf16)
{
	size_t n = (size_t)rows * cols, es = bf16 ? 2 : 4;
	struct mxa_buffer *data = buffer(dev, n / 2);
	struct mxa_buffer *scale = buffer(dev, in->sbytes);
	struct mxa_buffer *out = buffer(dev, n * es);
	struct mxa_matrix m = {
		.data = data, .scale = scale, .elem = MXA_ELEM_E2M1,
		.scale_type = MXA_SCALE_UE4M3, .scale_layout = layout,
		.rows = rows, .cols = cols, .tensor_scale = ts,
	};
	struct mxa_dense d = { .buf = out, .rows = rows, .cols = cols,
			       .dtype = bf16 ? MXA_DTYPE_BF16 : MXA_DTYPE_F32 };
	void *host = malloc(n * es);

	mxa_buffer_write(data, 0, in->data, n / 2);
	mxa_buffer_write(scale, 0, in->scale, in->sbytes);
	CHECK_RET(mxa_dequantize(dev, &m, &d, MXA_PREF_AUTO), 0);
	mxa_buffer_read(out, 0, host, n * es);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
	mxa_buffer_free(out);
	return host;
}

static unsigned int random_blocks;

/*
 * Random tensors quantized at level isa and at "ref" (the core, block by
 * block): codes and scales bit for bit, plain and swizzled, fp32 and bf16;
 * and dequantized.
 */
static void test_random(struct mxa_device *ref, struct mxa_device *dev,
			const char *isa, unsigned int rounds)
{
	unsigned int n;

	for (n = 0; n < rounds; n++) {
		/* a full group of 16 blocks and a partial one; > 256 blocks */
		uint32_t rows = n % 8 == 7 ? 2 : 1 + test_rand_below(9);
		uint32_t cols = 16 * (n % 8 == 7 ? 300 : 1 + test_rand_below(40));
		bool bf16 = n & 1;
		enum mxa_scale_layout layout = n & 2 ? MXA_LAYOUT_SWIZZLED :
					       MXA_LAYOUT_PLAIN;
		float ts = random_tensor_scale();
		uint32_t *src = malloc((size_t)rows * cols * 4), tsb, i;
		struct nv_run want, got;

		for (i = 0; i < rows * cols / 16; i++)
			random_block(src + (size_t)i * 16);
		quantize_on(ref, src, rows, cols, bf16, layout, ts, &want);
		quantize_on(dev, src, rows, cols, bf16, layout, ts, &got);
		memcpy(&tsb, &ts, 4);
		for (i = 0; i < rows * cols / 2; i++)
			if (got.data[i] != want.data[i]) {
				CHECK(0, "%s: %ux%u %s %s tensor scale 0x%08x: byte %u of the codes is 0x%02x, the core's 0x%02x (block 0x%08x ...)",
				      isa, rows, cols, bf16 ? "bf16" : "fp32",
				      mxa_layout_name(layout), tsb, i,
				      got.data[i], want.data[i], src[i / 8 * 16]);
				break;
			}
		for (i = 0; i < want.sbytes; i++)
			if (got.scale[i] != want.scale[i]) {
				CHECK(0, "%s: %ux%u %s %s tensor scale 0x%08x: scale byte %u is 0x%02x, the core's 0x%02x",
				      isa, rows, cols, bf16 ? "bf16" : "fp32",
				      mxa_layout_name(layout), tsb, i,
				      got.scale[i], want.scale[i]);
				break;
			}
		/*
		 * Dequantize the core's result back, or random scale bytes
		 * (NaN, subnormal and negative UE4M3 codes among them).
		 */
		if (n & 4)
			for (i = 0; i < want.sbytes; i++)
				want.scale[i] = (uint8_t)test_rand();
		for (i = 0; i < 2; i++) {
			size_t bytes = (size_t)rows * cols * (i ? 2 : 4);
			void *a = dequantize_on(ref, rows, cols, layout, ts,
						&want, i);
			void *b = dequantize_on(dev, rows, cols, layout, ts,
						&want, i);

			CHECK(!memcmp(a, b, bytes),
			      "%s: %ux%u %s tensor scale 0x%08x: dequantized to %s unlike the core",
			      isa, rows, cols, mxa_layout_name(layout), tsb,
			      i ? "bf16" : "fp32");
			free(a);
			free(b);
		}
		random_blocks += rows * cols / 16;
		free(src);
		free(want.data);
		free(want.scale);
		free(got.data);
		free(got.scale);
	}
}

/*
 * The golden set and the random comparison on every cpu ISA level this
 * machine runs, unless $MXACCEL_CPU_ISA picks one (then the default
 * device is already that level).
 */
static void test_levels(void)
{
	static const char *const levels[] = { "ref", "avx2", "avx512vnni",
					      "avx512bf16" };
	struct mxa_device *ref, *dev;
	unsigned int l, n = 0;

	setenv("MXACCEL_CPU_ISA", "ref", 1);
	if (mxa_device_open("cpu", &ref)) {
		CHECK(0, "MXACCEL_CPU_ISA=ref: no cpu device");
		unsetenv("MXACCEL_CPU_ISA");
		return;
	}
	for (l = 0; l < TEST_ARRAY_SIZE(levels); l++) {
		setenv("MXACCEL_CPU_ISA", levels[l], 1);
		if (mxa_device_open("cpu", &dev))
			continue;	/* not on this machine */
		test_golden(dev);
		if (l)
			test_random(ref, dev, levels[l], 256);
		mxa_device_close(dev);
		n++;
	}
	unsetenv("MXACCEL_CPU_ISA");
	mxa_device_close(ref);
	printf("%u ISA levels; %u random blocks bit-exact with the core\n",
	       n, random_blocks);
}

/* --- NATIVE NVFP4 and mixed GEMM against the exact reference ----------- */

/*
 * A host operand: NVFP4 (e2m1, UE4M3 per 16, tensor scale) or MX (E8M0
 * per 32), one code per element and plain scales.
 */
struct gop {
	bool nv;
	enum mxa_elem elem;
	uint32_t rows, cols, bs;
	float ts;			/* NVFP4: 0 = single level */
	uint8_t *code, *scale;
};

/* A tensor scale: none, ordinary, tiny, subnormal or huge (not if other). */
static float gemm_tensor_scale(bool allow_huge)
{
	uint32_t kind = test_rand_below(allow_huge ? 5 : 4);
	uint32_t mant = (uint32_t)test_rand() & 0x7fffff;

	switch (kind) {
	case 0:
		return 0;
	case 1:
		return test_f32(f32_of(0, 119 + test_rand_below(17), mant));
	case 2:
		return test_f32(f32_of(0, 27 + test_rand_below(40), mant));
	case 3:
		return test_f32(f32_of(0, 0, mant | 1));
	}
	/* 2^60 .. 2^75: even times the largest MX values, no sum overflows. */
	return test_f32(f32_of(0, 187 + test_rand_below(16), mant));
}

static void gop_init(struct gop *o, bool nv, enum mxa_elem elem,
		     uint32_t rows, uint32_t cols, float ts)
{
	uint32_t i, nb;

	o->nv = nv;
	o->elem = nv ? MXA_ELEM_E2M1 : elem;
	o->rows = rows;
	o->cols = cols;
	o->bs = nv ? 16 : 32;
	o->ts = nv ? ts : 0;
	nb = rows * (cols / o->bs);
	o->code = malloc((size_t)rows * cols);
	o->scale = malloc(nb);
	for (i = 0; i < rows * cols; i++)
		o->code[i] = test_rand_code(o->elem, false);
	for (i = 0; i < nb; i++) {
		uint32_t r = test_rand_below(16);

		if (!nv)
			o->scale[i] = (uint8_t)(117 + test_rand_below(21));
		else if (r == 0)	/* subnormal or zero */
			o->scale[i] = (uint8_t)test_rand_below(8);
		else if (r == 1)	/* negative (torch reads the sign) */
			o->scale[i] = (uint8_t)(0x80 | (0x08 + test_rand_below(0x70)));
		else			/* 2^-6 .. 448 */
			o->scale[i] = (uint8_t)(0x08 + test_rand_below(0x77));
	}
}

static void gop_free(struct gop *o)
{
	free(o->code);
	free(o->scale);
}

/* Element (r, k) of o as a double: code * scale * tensor scale. */
static double gop_value(const struct gop *o, uint32_t r, uint32_t k)
{
	uint8_t s = o->scale[(size_t)r * (o->cols / o->bs) + k / o->bs];
	double v = test_elem_value(o->elem, o->code[(size_t)r * o->cols + k]);

	if (!o->nv)
		return v * test_scale_value(s);
	v *= test_elem_value(MXA_ELEM_E4M3, s);
	return o->ts != 0 ? v * o->ts : v;
}

/* o on dev as an mxa_matrix, plain or swizzled scales. */
static struct mxa_matrix gop_upload(struct mxa_device *dev,
				    const struct gop *o,
				    enum mxa_scale_layout layout)
{
	uint32_t nb = o->cols / o->bs, r, b, i;
	size_t rb = o->elem == MXA_ELEM_E2M1 ? o->cols / 2 : o->cols;
	size_t sbytes = layout == MXA_LAYOUT_SWIZZLED ?
			(size_t)(o->rows + 127) / 128 * 128 * ((nb + 3) / 4 * 4) :
			(size_t)o->rows * nb;
	uint8_t *d = calloc(rb * o->rows, 1), *sc = calloc(sbytes, 1);
	struct mxa_matrix m = {
		.data = buffer(dev, rb * o->rows), .scale = buffer(dev, sbytes),
		.elem = o->elem, .scale_layout = layout, .rows = o->rows,
		.cols = o->cols, .tensor_scale = o->ts,
		.scale_type = o->nv ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
	};

	for (r = 0; r < o->rows; r++) {
		const uint8_t *c = o->code + (size_t)r * o->cols;

		for (i = 0; i < o->cols; i++) {
			if (o->elem == MXA_ELEM_E2M1)
				d[r * rb + i / 2] |= (uint8_t)(c[i] << (i & 1 ? 4 : 0));
			else
				d[r * rb + i] = c[i];
		}
		for (b = 0; b < nb; b++)
			sc[layout == MXA_LAYOUT_SWIZZLED ?
			   mxa_swizzle_index(o->rows, nb, r, b) :
			   (size_t)r * nb + b] = o->scale[(size_t)r * nb + b];
	}
	mxa_buffer_write(m.data, 0, d, rb * o->rows);
	mxa_buffer_write(m.scale, 0, sc, sbytes);
	free(d);
	free(sc);
	return m;
}

static unsigned int native_cases, native_checked, native_special;
static double native_worst[2];	/* fp32, bf16: worst error / bound */

/* The kernel NATIVE must name for an M-row request on dev. */
static const char *native_kernel(struct mxa_device *dev, uint32_t m, bool mixed)
{
	if (!test_is_cpu(dev) && mixed)
		return "cuda-mixed-sm90";
	return m <= 8 ? "cpu-decode" : "cpu-blocked";
}

/*
 * gamma of that kernel (Documentation/numerics.rst): cpu-decode and
 * cpu-blocked (K + 3) * 2^-24, one more accumulating; cuda-mixed-sm90 the
 * bound of cuda-weight-only-wgmma, (36 * 4 ceil(K / 64) + 3) * 2^-24
 * (it exceeds cuda-weight-only's, which runs the smaller shapes), plus a
 * rounding each for the tensor scale and C_in.
 */
static double native_gamma(const char *kernel, uint32_t k, bool acc)
{
	if (!strcmp(kernel, "cuda-mixed-sm90"))
		return (144.0 * ((k + 63) / 64) + 3 + 1 + (acc ? 1 : 0)) * 0x1p-24;
	return (k + 3 + (acc ? 1 : 0)) * 0x1p-24;
}

/*
 * One GEMM: A (m x k) and B (n x k), at least one NVFP4, on dev under
 * NATIVE and EMULATED; every result within the bound of
 * Documentation/numerics.rst (cpu-blocked, NVFP4 or mixed):
 *   |c - c_ref| <= gamma * S + 2^-24 |c_ref| (fp32), 2^-8 (|c| + |c_ref|)
 *   (bf16), + (n + 2) * 2^-149 (2^-133 bf16) for subnormal roundings,
 * gamma = (K + 3) * 2^-24, (K + 4) * 2^-24 accumulating; special values
 * exactly as the reference.
 */
/* native_case()'s options. */
enum {
	NATIVE_NAN_SCALES = 1,	/* one NaN scale, some -Inf in C_in */
	/*
	 * MX A only: half its rows with a first block of zero codes at a
	 * scale of 2^103 .. 2^123 and the others 2^-87 .. 2^-47, so that the
	 * row's value lies in blocks 2^150 and more below its largest scale
	 * (cuda-mixed-sm90's band 1).
	 */
	NATIVE_WIDE_MX_A = 2,
};

static void native_case(struct mxa_device *dev, const char *isa, uint32_t m,
			uint32_t n, uint32_t k, bool nva, bool nvb,
			unsigned int opts)
{
	const bool nan_scales = opts & NATIVE_NAN_SCALES;
	enum mxa_elem ea = test_elems[test_rand_below(5)];
	enum mxa_elem eb = test_elems[test_rand_below(5)];
	enum mxa_dtype dt = test_rand_below(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	unsigned int mbits = dt == MXA_DTYPE_BF16 ? 7 : 23, bad = 0;
	size_t es = dt == MXA_DTYPE_BF16 ? 2 : 4, mn = (size_t)m * n, i;
	bool acc = test_rand_below(2);
	enum mxa_scale_layout la = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED :
					MXA_LAYOUT_PLAIN;
	enum mxa_scale_layout lb = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED :
					MXA_LAYOUT_PLAIN;
	float ta = gemm_tensor_scale(true);
	float tb = gemm_tensor_scale(ta < 0x1p40f);
	double gamma;
	double tiny = (k + 5) * (mbits == 23 ? 0x1p-149 : 0x1p-133);
	uint32_t *cin = malloc(mn * 4), *ref = malloc(mn * 4);
	uint32_t *got = malloc(mn * 4);
	uint8_t *cbuf = malloc(mn * es);
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .m = m, .n = n, .k = k, .dtype = dt,
		.flags = acc ? MXA_GEMM_ACCUMULATE : 0,
	};
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	struct mxa_plan plan;
	struct gop a, b;
	unsigned int pass;

	native_cases++;
	gop_init(&a, nva, ea, m, k, ta);
	gop_init(&b, nvb, eb, n, k, tb);
	if ((opts & NATIVE_WIDE_MX_A) && !nva) {
		uint32_t r, j, nb = k / 32;

		for (r = 0; r < m; r++) {
			if (test_rand_below(2))
				continue;
			memset(a.code + (size_t)r * k, 0, 32);
			a.scale[(size_t)r * nb] = (uint8_t)(230 + test_rand_below(21));
			for (j = 1; j < nb; j++)
				a.scale[(size_t)r * nb + j] = (uint8_t)(40 + test_rand_below(41));
		}
	}
	if (nan_scales) {
		struct gop *o = test_rand_below(2) ? &a : &b;
		size_t at = test_rand_below(o->rows * (o->cols / o->bs));

		o->scale[at] = o->nv ? (test_rand_below(2) ? 0x7f : 0xff) : 0xff;
	}
	ma = gop_upload(dev, &a, la);
	mb = gop_upload(dev, &b, lb);
	d.a_elem = a.elem;
	d.b_elem = b.elem;
	d.a_scale_type = ma.scale_type;
	d.b_scale_type = mb.scale_type;
	for (i = 0; i < mn; i++) {
		uint32_t v = test_f32_bits(test_rand_float(64.0f));

		if (nan_scales && test_rand_below(32) == 0)
			v = 0xff800000;
		cin[i] = dt == MXA_DTYPE_BF16 ? v >> 16 : v;
		memcpy(cbuf + i * es, &cin[i], es);
	}
	c = (struct mxa_dense){ .buf = buffer(dev, mn * es), .dtype = dt,
				.rows = m, .cols = n };
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), 0);
	CHECK(!strcmp(plan.kernel, native_kernel(dev, m, nva != nvb)) &&
	      plan.support == MXA_SUPPORT_NATIVE,
	      "%s: NATIVE %s x %s %ux%ux%u plans %s (%s)", isa,
	      nva ? "nvfp4" : test_elem(ea)->name,
	      nvb ? "nvfp4" : test_elem(eb)->name, m, n, k, plan.kernel,
	      plan.reason);
	gamma = native_gamma(plan.kernel, k, acc);
	for (pass = 0; pass < 2; pass++) {
		enum mxa_pref pref = pass ? MXA_PREF_NATIVE : MXA_PREF_EMULATED;
		uint32_t *out = pass ? got : ref;
		int ret;

		mxa_buffer_write(c.buf, 0, cbuf, mn * es);
		ret = mxa_gemm(dev, &ma, &mb, &c, d.flags, pref);
		CHECK(ret == 0, "%s: %s gemm %ux%ux%u: %d", isa,
		      mxa_pref_name(pref), m, n, k, ret);
		mxa_buffer_read(c.buf, 0, cbuf, mn * es);
		for (i = 0; i < mn; i++) {
			out[i] = 0;
			memcpy(&out[i], cbuf + i * es, es);
		}
		for (i = 0; i < mn; i++)
			memcpy(cbuf + i * es, &cin[i], es);
	}
	for (i = 0; i < mn && bad < 3; i++) {
		uint32_t r = (uint32_t)(i / n), col = (uint32_t)(i % n), kk;
		double v = test_float_value(got[i], mbits);
		double x = test_float_value(ref[i], mbits);
		double sabs = 0, bound, err;
		bool ok;

		native_checked++;
		if (test_isnan_bits(ref[i], mbits) ||
		    test_isnan_bits(got[i], mbits) || isinf(v) || isinf(x)) {
			native_special++;
			ok = test_isnan_bits(ref[i], mbits) ?
			     test_isnan_bits(got[i], mbits) : got[i] == ref[i];
			err = bound = 0;
		} else {
			for (kk = 0; kk < k; kk++)
				sabs += fabs(gop_value(&a, r, kk) *
					     gop_value(&b, col, kk));
			if (acc)
				sabs += fabs(test_float_value(cin[i], mbits));
			sabs *= 1 + 0x1p-40;
			err = fabs(v - x);
			bound = gamma * sabs + tiny +
				(mbits == 23 ? 0x1p-24 * fabs(x) :
				 0x1p-8 * (fabs(v) + fabs(x)));
			ok = err <= bound;
			if (bound > 0 && err / bound > native_worst[mbits == 7])
				native_worst[mbits == 7] = err / bound;
		}
		if (ok)
			continue;
		bad++;
		CHECK(0, "%s: NATIVE %s x %s %ux%ux%u %s%s ts %a, %a: C[%u][%u] = 0x%08x (%a), exact 0x%08x (%a), |diff| %a > bound %a (sum|ab| %a)",
		      isa, nva ? "nvfp4" : test_elem(ea)->name,
		      nvb ? "nvfp4" : test_elem(eb)->name, m, n, k,
		      mbits == 7 ? "bf16" : "f32", acc ? " accumulate" : "",
		      (double)ta, (double)tb, r, col, got[i], v, ref[i], x,
		      err, bound, sabs);
	}
	gop_free(&a);
	gop_free(&b);
	mxa_buffer_free(ma.data);
	mxa_buffer_free(ma.scale);
	mxa_buffer_free(mb.data);
	mxa_buffer_free(mb.scale);
	mxa_buffer_free(c.buf);
	free(cin);
	free(ref);
	free(got);
	free(cbuf);
}

/*
 * Ragged shapes, K from 16 (NVFP4 x NVFP4: odd multiples of 16 too) to
 * 2080; NVFP4 x NVFP4, NVFP4 x MX and MX x NVFP4 each, and several cache
 * tiles of every kernel in M, N and K (NVFP4 x NVFP4 only: the framework's
 * tiling does not depend on the operands' types).
 */
static void native_cases_on(struct mxa_device *dev, const char *isa)
{
	static const uint32_t shapes[][3] = {
		{ 1, 1, 16 }, { 3, 17, 48 }, { 17, 3, 64 }, { 33, 65, 96 },
		{ 7, 130, 16 }, { 1, 127, 160 }, { 127, 1, 208 },
		{ 5, 3, 2080 }, { 65, 33, 256 }, { 98, 260, 288 },
		{ 193, 33, 96 }, { 2, 7, 1040 },
	};
	unsigned int s, v;

	for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++) {
		for (v = 0; v < 3; v++) {
			uint32_t k = shapes[s][2];

			/* The largest shape (most of the time) once. */
			if (v && shapes[s][1] > 256)
				continue;

			/* Mixed pairs need K on MX's blocks of 32. */
			if (v && k % 32)
				k += 16;
			native_case(dev, isa, shapes[s][0], shapes[s][1], k,
				    v != 2, v != 1, (s + v) % 3 == 0 ? NATIVE_NAN_SCALES : 0);
		}
	}
}

/*
 * NATIVE NVFP4 and mixed GEMM on the cpu: what mxa_query() says, then the
 * cases above on every ISA level this machine runs (or the one
 * $MXACCEL_CPU_ISA picks).
 */
static void test_native(struct mxa_device *dflt)
{
	static const char *const levels[] = { "ref", "avx2", "avx512vnni",
					      "avx512bf16", "amx" };
	struct mxa_device *dev;
	unsigned int l, n = 0;

	if (getenv("MXACCEL_CPU_ISA")) {
		native_cases_on(dflt, getenv("MXACCEL_CPU_ISA"));
		n = 1;
	} else {
		for (l = 0; l < TEST_ARRAY_SIZE(levels); l++) {
			setenv("MXACCEL_CPU_ISA", levels[l], 1);
			if (mxa_device_open("cpu", &dev))
				continue;	/* not on this machine */
			native_cases_on(dev, levels[l]);
			mxa_device_close(dev);
			n++;
		}
		unsetenv("MXACCEL_CPU_ISA");
	}
	/*
	 * Panels striped in M, N and K (a 4 KiB pack budget), where each
	 * stripe packs from its own first block of K.
	 */
	setenv("MXACCEL_CPU_PACK_BUDGET", "4096", 1);
	if (!mxa_device_open("cpu", &dev)) {
		native_case(dev, "striped", 40, 70, 288, true, true, 0);
		native_case(dev, "striped", 17, 40, 2080, true, false, 0);
		native_case(dev, "striped", 33, 9, 1056, false, true, NATIVE_NAN_SCALES);
		native_case(dev, "striped", 20, 30, 1072, true, true, 0);
		mxa_device_close(dev);
	} else {
		CHECK(0, "MXACCEL_CPU_PACK_BUDGET=4096: no cpu device");
	}
	unsetenv("MXACCEL_CPU_PACK_BUDGET");
	printf("NATIVE NVFP4 / mixed gemm: %u ISA levels, %u cases, %u results (%u special) within (K + 3) * 2^-24 * sum|a*b|; worst error / bound: fp32 %.3g, bf16 %.3g\n",
	       n, native_cases, native_checked, native_special,
	       native_worst[0], native_worst[1]);
}

/*
 * NATIVE mixed NVFP4 x MX and MX x NVFP4 on a device other than the cpu,
 * where it says it has a kernel (NVFP4 x NVFP4 there: test_nvfp4_native):
 * ragged shapes on both sides of the weight-only kernels' ranges (A's
 * rows are their M: up to 64, above 128), both orders (cuda-mixed-sm90's
 * two routes) and MX A with rows of scales too wide for one bf16 band;
 * the reference the device's EMULATED GEMM (bit-identical to the cpu's,
 * test_cuda_exact).
 */
static void test_native_device(struct mxa_device *dev)
{
	static const uint32_t shapes[][3] = {
		{ 1, 300, 512 }, { 7, 130, 1056 }, { 33, 65, 96 },
		{ 64, 129, 2048 }, { 130, 257, 320 }, { 300, 129, 2048 },
		{ 200, 1000, 64 }, { 513, 40, 1024 },
	};
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E2M1, .b_elem = MXA_ELEM_E4M3,
		.a_scale_type = MXA_SCALE_UE4M3, .b_scale_type = MXA_SCALE_E8M0,
		.m = 4, .n = 4, .k = 64, .dtype = MXA_DTYPE_F32,
	};
	struct mxa_capability cap;
	unsigned int s, v;

	CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);
	printf("NATIVE NVFP4 x MX on this device: %s (%s)\n",
	       mxa_support_name(cap.support), cap.reason);
	if (cap.support != MXA_SUPPORT_NATIVE)
		return;
	/* v: NVFP4 x MX, MX x NVFP4, MX x NVFP4 with wide rows of A. */
	for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++)
		for (v = 0; v < 3; v++)
			native_case(dev, test_device_name(), shapes[s][0], shapes[s][1],
				    shapes[s][2], v == 0, v != 0,
				    ((s + v) % 3 == 0 ? NATIVE_NAN_SCALES : 0) |
				    (v == 2 ? NATIVE_WIDE_MX_A : 0));
	printf("NATIVE mixed gemm: %u cases, %u results (%u special); worst error / bound: fp32 %.3g, bf16 %.3g\n",
	       native_cases, native_checked, native_special, native_worst[0],
	       native_worst[1]);
}

/* Every malformed NVFP4 request fails with -EINVAL before anything runs. */
static void test_errors(struct mxa_device *dev)
{
	struct mxa_buffer *src = buffer(dev, ROWS * COLS * 4);
	struct mxa_buffer *data = buffer(dev, ROWS * COLS);
	struct mxa_buffer *scale = buffer(dev, 4096);
	struct mxa_dense d = { .buf = src, .rows = ROWS, .cols = COLS };
	struct mxa_matrix m = nv_matrix(data, scale, MXA_LAYOUT_PLAIN, 0);
	struct mxa_matrix bad;
	struct mxa_recipe rec;
	uint32_t nan = 0x7fc00000, inf = 0x7f800000;

	bad = m;
	CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_FLOOR, MXA_PREF_AUTO),
		  -EINVAL);	/* E8M0 mode with UE4M3 scales */
	m.scale_type = MXA_SCALE_E8M0;
	m.cols = COLS;
	CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);	/* NVFP4 mode with E8M0 scales */
	m = bad;
	bad.elem = MXA_ELEM_E4M3;
	CHECK_RET(mxa_quantize(dev, &d, &bad, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);	/* UE4M3 scales on e4m3 elements */
	bad = m;
	bad.block_size = 32;
	CHECK_RET(mxa_quantize(dev, &d, &bad, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);	/* UE4M3 blocks are 16 */
	bad = m;
	bad.cols = d.cols = 40;
	CHECK_RET(mxa_quantize(dev, &d, &bad, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);	/* K not a multiple of 16 */
	d.cols = COLS;
	bad = m;
	bad.tensor_scale = -1.0f;
	CHECK_RET(mxa_quantize(dev, &d, &bad, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);
	memcpy(&bad.tensor_scale, &nan, 4);
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EINVAL);
	memcpy(&bad.tensor_scale, &inf, 4);
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EINVAL);
	bad = m;
	bad.scale_type = MXA_SCALE_E8M0;
	bad.tensor_scale = 2.0f;
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EINVAL);
	bad = m;
	bad.scale_type = (enum mxa_scale_type)7;
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EINVAL);
	bad = m;
	bad.reserved[3] = 1;
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EINVAL);
	/* The scale buffer must hold rows x cols / 16 scales. */
	bad = m;
	bad.scale_offset = 4096 - ROWS * COLS / 16 + 1;
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), -EOVERFLOW);
	bad.scale_offset--;
	CHECK_RET(mxa_dequantize(dev, &bad, &d, MXA_PREF_AUTO), 0);

	CHECK_RET(mxa_recipe_parse("nvfp4", &rec), 0);
	CHECK(rec.elem == MXA_ELEM_E2M1 && rec.scale_type == MXA_SCALE_UE4M3 &&
	      rec.block_size == 16 && rec.mode == MXA_SCALE_NVFP4,
	      "recipe nvfp4 is %d/%d/%u/%d", rec.elem, rec.scale_type,
	      rec.block_size, rec.mode);
	CHECK(mxa_recipe_name(&rec) && !strcmp(mxa_recipe_name(&rec), "nvfp4"),
	      "recipe_name of nvfp4");
	rec.block_size = 0;
	CHECK(mxa_recipe_name(&rec) && !strcmp(mxa_recipe_name(&rec), "nvfp4"),
	      "block_size 0 is the scale type's");
	{
		size_t db = 0, sb = 0;
		struct mxa_matrix sw = nv_matrix(data, scale,
						 MXA_LAYOUT_SWIZZLED, 0);

		CHECK_RET(mxa_matrix_bytes(&m, &db, &sb), 0);
		CHECK(db == ROWS * COLS / 2 && sb == ROWS * COLS / 16,
		      "matrix_bytes plain: %zu, %zu", db, sb);
		CHECK_RET(mxa_matrix_bytes(&sw, &db, &sb), 0);
		CHECK(sb == 128 * 4, "matrix_bytes swizzled: %zu", sb);
		sw.cols = 40;
		CHECK_RET(mxa_matrix_bytes(&sw, &db, &sb), -EINVAL);
	}
	mxa_buffer_free(src);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
}

/* What the device says about NVFP4 quantization and GEMM. */
static bool nvfp4_supported(struct mxa_device *dev)
{
	struct mxa_op_desc q = {
		.op = MXA_OP_QUANTIZE, .a_elem = MXA_ELEM_E2M1,
		.a_scale_type = MXA_SCALE_UE4M3, .mode = MXA_SCALE_NVFP4,
		.m = ROWS, .k = COLS,
	};
	struct mxa_op_desc gd = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E2M1,
		.b_elem = MXA_ELEM_E2M1, .a_scale_type = MXA_SCALE_UE4M3,
		.b_scale_type = MXA_SCALE_UE4M3, .m = 4, .n = 4, .k = 64,
	};
	struct mxa_device_info info;
	struct mxa_capability cap;

	/*
	 * GEMM: a kernel where the device has one for UE4M3 (the cpu's
	 * native cpu-blocked and cpu-decode, test_native; cuda's bf16-ss and
	 * decode, test_nvfp4_native), else a
	 * refusal that says why.
	 */
	CHECK_RET(mxa_query(dev, &gd, MXA_PREF_AUTO, &cap), 0);
	CHECK(cap.support != MXA_SUPPORT_NONE || strstr(cap.reason, "E8M0"),
	      "NVFP4 gemm: support %d (%s): want a kernel or a refusal naming E8M0",
	      cap.support, cap.reason);
	CHECK_RET(mxa_device_info(dev, &info), 0);
	CHECK(strcmp(info.backend, "cpu") ||
	      (cap.support == MXA_SUPPORT_NATIVE &&
	       !strcmp(cap.kernel, "cpu-decode")),
	      "NVFP4 gemm on cpu (M = 4): support %d %s (%s), want native cpu-decode",
	      cap.support, cap.kernel, cap.reason);
	printf("NVFP4 gemm on this device: %s (%s)\n",
	       mxa_support_name(cap.support), cap.reason);
	q.mode = MXA_SCALE_FLOOR;
	CHECK_RET(mxa_query(dev, &q, MXA_PREF_AUTO, &cap), -EINVAL);
	q.mode = MXA_SCALE_NVFP4;
	CHECK_RET(mxa_query(dev, &q, MXA_PREF_AUTO, &cap), 0);
	printf("NVFP4 quantize on this device: %s%s%s\n",
	       mxa_support_name(cap.support), *cap.kernel ? ", kernel " : "",
	       cap.kernel);
	return cap.support != MXA_SUPPORT_NONE;
}

/* A device without NVFP4 kernels refuses them, before running anything. */
static void test_refused(struct mxa_device *dev)
{
	struct mxa_buffer *src = buffer(dev, ROWS * COLS * 4);
	struct mxa_buffer *data = buffer(dev, ROWS * COLS / 2);
	struct mxa_buffer *scale = buffer(dev, TBLOCKS);
	struct mxa_dense d = { .buf = src, .rows = ROWS, .cols = COLS };
	struct mxa_matrix m = nv_matrix(data, scale, MXA_LAYOUT_PLAIN, 0);

	CHECK_RET(mxa_quantize(dev, &d, &m, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EOPNOTSUPP);
	CHECK_RET(mxa_dequantize(dev, &m, &d, MXA_PREF_AUTO), -EOPNOTSUPP);
	printf("no NVFP4 kernel on this device: refused with -EOPNOTSUPP\n");
	mxa_buffer_free(src);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
}

int main(void)
{
	struct mxa_device *dev = test_open_device();

	test_seed(0x6e766670ull);
	if (nvfp4_supported(dev)) {
		test_golden(dev);
		test_errors(dev);
		if (test_is_cpu(dev) && !getenv("MXACCEL_CPU_ISA"))
			test_levels();
		if (test_is_cpu(dev))
			test_native(dev);
		else
			test_native_device(dev);
		printf("%u tensor runs bit-exact\n", checked_tensors);
	} else {
		test_refused(dev);
	}
	mxa_device_close(dev);
	return test_finish();
}
