// SPDX-License-Identifier: MIT
/*
 * Column-wise quantization (mxa_quantize_colwise(), torchao's dim1 cast)
 * equals mxa_quantize() of the explicitly transposed matrix byte for byte
 * (codes, scales and swizzled padding), which test_golden / test_nvfp4
 * prove bit-exact with torchao: every element type with the floor and
 * rceil modes, NVFP4 single and two level, fp32 and bf16 sources (strided
 * and packed), plain and swizzled scales, on random ragged shapes whose
 * inputs include NaN, Inf, zeros, subnormals and extreme exponents.  Then
 * the shape and format errors.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu); a device without a
 * column-wise kernel must refuse with -EOPNOTSUPP, which is then tested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_buffer *buffer(struct mxa_device *dev, size_t size)
{
	struct mxa_buffer *b = NULL;

	if (mxa_buffer_alloc(dev, size ? size : 1, &b)) {
		printf("cannot allocate %zu bytes\n", size);
		exit(1);
	}
	return b;
}

/* A random fp32 with the special values the quantizers care about. */
static uint32_t random_value(void)
{
	switch (test_rand_below(40)) {
	case 0:
		return 0x7fc00000;			/* NaN */
	case 1:
		return 0x7f800000 | (test_rand_below(2) << 31); /* +-Inf */
	case 2:
		return test_rand_below(2) << 31;	/* +-0 */
	case 3:
		return test_rand_below(0x800000);	/* subnormal */
	case 4:
		return 0x7f7fffff;			/* fp32 max */
	default:
		return test_f32_bits(test_rand_float(1.0f)) +
		       ((test_rand_below(60) - 30) << 23);
	}
}

struct fmt {
	const char *name;
	enum mxa_elem elem;
	enum mxa_scale_mode mode;
	enum mxa_scale_type st;
	float ts;
};

static unsigned int runs;

/* One random R x C source, quantized both ways in format f. */
static void run_case(struct mxa_device *dev, const struct fmt *f,
		     uint32_t rows, uint32_t cols, bool bf16, bool strided,
		     enum mxa_scale_layout layout)
{
	size_t es = bf16 ? 2 : 4, stride = ((size_t)cols + (strided ? 3 : 0)) * es;
	size_t tstride = (size_t)rows * es, db, sb;
	struct mxa_matrix m = {
		.elem = f->elem, .scale_type = f->st, .tensor_scale = f->ts,
		.scale_layout = layout, .rows = cols, .cols = rows,
	};
	struct mxa_buffer *src, *tsrc, *d1, *s1, *d2, *s2;
	struct mxa_matrix m1, m2;
	struct mxa_dense d, t;
	uint8_t *x, *tx, *a, *b;
	uint32_t r, c;
	int ret;

	if (mxa_matrix_bytes(&m, &db, &sb)) {
		CHECK(0, "%s: matrix_bytes of %ux%u", f->name, cols, rows);
		return;
	}
	x = calloc(rows, stride);
	tx = calloc(cols, tstride);
	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++) {
			uint32_t v = random_value();

			if (bf16) {
				uint16_t h = (uint16_t)(v >> 16);

				memcpy(x + r * stride + c * 2, &h, 2);
				memcpy(tx + c * tstride + r * 2, &h, 2);
			} else {
				memcpy(x + r * stride + c * 4, &v, 4);
				memcpy(tx + c * tstride + r * 4, &v, 4);
			}
		}
	src = buffer(dev, rows * stride);
	tsrc = buffer(dev, cols * tstride);
	mxa_buffer_write(src, 0, x, rows * stride);
	mxa_buffer_write(tsrc, 0, tx, cols * tstride);
	d1 = buffer(dev, db);
	s1 = buffer(dev, sb);
	d2 = buffer(dev, db);
	s2 = buffer(dev, sb);
	d = (struct mxa_dense){ .buf = src, .dtype = bf16 ? MXA_DTYPE_BF16 :
				MXA_DTYPE_F32, .stride = stride, .rows = rows,
				.cols = cols };
	t = (struct mxa_dense){ .buf = tsrc, .dtype = d.dtype, .rows = cols,
				.cols = rows };
	m1 = m;
	m1.data = d1;
	m1.scale = s1;
	m2 = m;
	m2.data = d2;
	m2.scale = s2;
	ret = mxa_quantize_colwise(dev, &d, &m1, f->mode, MXA_PREF_AUTO);
	CHECK(!ret, "%s %ux%u: quantize_colwise = %d (%s)", f->name, rows,
	      cols, ret, mxa_strerror(ret));
	CHECK_RET(mxa_quantize(dev, &t, &m2, f->mode, MXA_PREF_EMULATED), 0);
	a = malloc(db > sb ? db : sb);
	b = malloc(db > sb ? db : sb);
	mxa_buffer_read(d1, 0, a, db);
	mxa_buffer_read(d2, 0, b, db);
	CHECK(!memcmp(a, b, db), "%s %ux%u %s%s %s: codes differ from the transpose's",
	      f->name, rows, cols, bf16 ? "bf16" : "f32",
	      strided ? " strided" : "", mxa_layout_name(layout));
	mxa_buffer_read(s1, 0, a, sb);
	mxa_buffer_read(s2, 0, b, sb);
	CHECK(!memcmp(a, b, sb), "%s %ux%u %s%s %s: scales differ from the transpose's",
	      f->name, rows, cols, bf16 ? "bf16" : "f32",
	      strided ? " strided" : "", mxa_layout_name(layout));
	runs++;
	free(a);
	free(b);
	free(x);
	free(tx);
	mxa_buffer_free(src);
	mxa_buffer_free(tsrc);
	mxa_buffer_free(d1);
	mxa_buffer_free(s1);
	mxa_buffer_free(d2);
	mxa_buffer_free(s2);
}

static const struct fmt fmts[] = {
	{ "mxfp8", MXA_ELEM_E4M3, MXA_SCALE_FLOOR, MXA_SCALE_E8M0, 0 },
	{ "mxfp8_rceil", MXA_ELEM_E4M3, MXA_SCALE_RCEIL, MXA_SCALE_E8M0, 0 },
	{ "mxfp8_e5m2", MXA_ELEM_E5M2, MXA_SCALE_FLOOR, MXA_SCALE_E8M0, 0 },
	{ "mxfp6_e2m3", MXA_ELEM_E2M3, MXA_SCALE_FLOOR, MXA_SCALE_E8M0, 0 },
	{ "mxfp6_e3m2_rceil", MXA_ELEM_E3M2, MXA_SCALE_RCEIL, MXA_SCALE_E8M0,
	  0 },
	{ "mxfp4", MXA_ELEM_E2M1, MXA_SCALE_FLOOR, MXA_SCALE_E8M0, 0 },
	{ "mxfp4_rceil", MXA_ELEM_E2M1, MXA_SCALE_RCEIL, MXA_SCALE_E8M0, 0 },
	{ "nvfp4", MXA_ELEM_E2M1, MXA_SCALE_NVFP4, MXA_SCALE_UE4M3, 0 },
	{ "nvfp4 two-level", MXA_ELEM_E2M1, MXA_SCALE_NVFP4, MXA_SCALE_UE4M3,
	  0x1.5p-9f },
};

static void test_random(struct mxa_device *dev)
{
	unsigned int i, n;

	for (i = 0; i < TEST_ARRAY_SIZE(fmts); i++) {
		uint32_t block = fmts[i].st == MXA_SCALE_UE4M3 ? 16 : 32;

		for (n = 0; n < 6; n++) {
			/* src rows are dst cols: a multiple of the block. */
			uint32_t rows = block * (1 + test_rand_below(5));
			uint32_t cols = 2 * (1 + test_rand_below(70));

			run_case(dev, &fmts[i], rows, cols, n & 1, n & 2,
				 n & 4 ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN);
		}
		run_case(dev, &fmts[i], block, 130, false, false,
			 MXA_LAYOUT_SWIZZLED);
	}
}

static void test_errors(struct mxa_device *dev)
{
	struct mxa_buffer *src = buffer(dev, 64 * 32 * 4);
	struct mxa_buffer *data = buffer(dev, 64 * 32);
	struct mxa_buffer *scale = buffer(dev, 4096);
	struct mxa_dense d = { .buf = src, .rows = 64, .cols = 32 };
	struct mxa_matrix m = { .data = data, .scale = scale,
				.elem = MXA_ELEM_E4M3, .rows = 32, .cols = 64 };
	struct mxa_matrix bad = m;

	CHECK_RET(mxa_quantize_colwise(dev, &d, &m, MXA_SCALE_FLOOR,
				       MXA_PREF_AUTO), 0);
	bad.rows = 64;
	bad.cols = 32;	/* not the transpose */
	CHECK_RET(mxa_quantize_colwise(dev, &d, &bad, MXA_SCALE_FLOOR,
				       MXA_PREF_AUTO), -EINVAL);
	d.rows = 48;	/* dst cols 48: not a multiple of 32 */
	bad = m;
	bad.cols = 48;
	CHECK_RET(mxa_quantize_colwise(dev, &d, &bad, MXA_SCALE_FLOOR,
				       MXA_PREF_AUTO), -EINVAL);
	d.rows = 64;
	CHECK_RET(mxa_quantize_colwise(dev, &d, &m, MXA_SCALE_NVFP4,
				       MXA_PREF_AUTO), -EINVAL);
	CHECK_RET(mxa_quantize_colwise(NULL, &d, &m, MXA_SCALE_FLOOR,
				       MXA_PREF_AUTO), -EINVAL);
	bad = m;
	bad.data = src;	/* dst data overlapping src */
	CHECK_RET(mxa_quantize_colwise(dev, &d, &bad, MXA_SCALE_FLOOR,
				       MXA_PREF_AUTO), -EINVAL);
	mxa_buffer_free(src);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
}

int main(void)
{
	struct mxa_device *dev = test_open_device();
	struct mxa_op_desc q = {
		.op = MXA_OP_QUANTIZE_COLWISE, .a_elem = MXA_ELEM_E4M3,
		.mode = MXA_SCALE_FLOOR, .m = 64, .k = 64,
	};
	struct mxa_capability cap;

	test_seed(0x636f6c77);
	CHECK_RET(mxa_query(dev, &q, MXA_PREF_AUTO, &cap), 0);
	printf("column-wise quantize on this device: %s%s%s\n",
	       mxa_support_name(cap.support), *cap.kernel ? ", kernel " : "",
	       cap.kernel);
	if (cap.support == MXA_SUPPORT_NONE) {
		struct mxa_buffer *src = buffer(dev, 64 * 64 * 4);
		struct mxa_buffer *data = buffer(dev, 64 * 64);
		struct mxa_buffer *scale = buffer(dev, 128);
		struct mxa_dense d = { .buf = src, .rows = 64, .cols = 64 };
		struct mxa_matrix m = { .data = data, .scale = scale,
					.elem = MXA_ELEM_E4M3, .rows = 64,
					.cols = 64 };

		CHECK(*cap.reason, "a refusal without a reason");
		CHECK_RET(mxa_quantize_colwise(dev, &d, &m, MXA_SCALE_FLOOR,
					       MXA_PREF_AUTO), -EOPNOTSUPP);
		mxa_buffer_free(src);
		mxa_buffer_free(data);
		mxa_buffer_free(scale);
	} else {
		test_random(dev);
		test_errors(dev);
		printf("%u shapes, each equal to quantizing the transpose\n",
		       runs);
	}
	mxa_device_close(dev);
	return test_finish();
}
