// SPDX-License-Identifier: MIT
#include "testlib.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int test_failures;
static uint64_t rng_state;

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	test_failures++;
	if (test_failures > 50)
		return;
	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int test_finish(void)
{
	if (test_failures) {
		fprintf(stderr, "%d check(s) failed\n", test_failures);
		return 1;
	}
	return 0;
}

void test_seed(uint64_t dflt)
{
	const char *s = getenv("MXACCEL_TEST_SEED");

	rng_state = s ? strtoull(s, NULL, 0) : dflt;
	printf("seed %llu\n", (unsigned long long)rng_state);
}

uint64_t test_rand(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t test_rand_below(uint32_t n)
{
	return (uint32_t)((test_rand() >> 32) * n >> 32);
}

float test_rand_float(float scale)
{
	double u = (double)(test_rand() >> 11) / (double)(1ull << 53);

	return (float)((2.0 * u - 1.0) * scale);
}

void *test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END))
		goto out;
	n = ftell(f);
	if (n < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	*size = (size_t)n;
out:
	fclose(f);
	return buf;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int test_golden_dirs(const char *dirs[2])
{
	const char *full = getenv("MXACCEL_GOLDEN_DIR");
	int n = 0;

	if (is_dir("tests/data/mx_golden"))
		dirs[n++] = "tests/data/mx_golden";
	if (!full)
		full = "../shared/testdata/mx_golden";
	if (is_dir(full))
		dirs[n++] = full;
	return n;
}

/* --- fp32 / bf16 ---------------------------------------------------------- */

uint32_t test_round_float(double v, unsigned int mbits)
{
	uint32_t sign = signbit(v) ? 1u << (8 + mbits) : 0;
	uint32_t inf = 0xffu << mbits, bits;
	double a = fabs(v), q;
	int e;

	if (isnan(v))
		return mbits == 23 ? 0x7fc00000 : 0x7fc0;
	if (isinf(v))
		return sign | inf;
	if (a == 0)
		return sign;
	/*
	 * Below 2^-126 the quantum stays 2^(-126 - mbits) (gradual
	 * underflow).  q is the significand in units of the quantum; adding
	 * it to the exponent field lets a carry out of the mantissa move
	 * into the exponent, up to Inf.
	 */
	e = ilogb(a);
	if (e < -126)
		e = -126;
	if (e > 128)
		return sign | inf;
	q = nearbyint(ldexp(a, (int)mbits - e));
	bits = ((uint32_t)(e + 126) << mbits) + (uint32_t)q;
	return sign | (bits >= inf ? inf : bits);
}

double test_float_value(uint32_t bits, unsigned int mbits)
{
	uint32_t be = (bits >> mbits) & 0xff;
	uint32_t m = bits & ((1u << mbits) - 1);
	double s = (bits >> (8 + mbits)) & 1 ? -1.0 : 1.0;

	if (be == 0xff)
		return m ? NAN : s * INFINITY;
	if (!be)
		return s * ldexp((double)m, -126 - (int)mbits);
	return s * ldexp((double)(m | (1u << mbits)),
			 (int)be - 127 - (int)mbits);
}

/* --- MX elements ------------------------------------------------------ */

static const struct test_elem_info elem_info[] = {
	[MXA_ELEM_E4M3] = { "e4m3", 4, 3, 7, 8, 448.0, false, true },
	[MXA_ELEM_E5M2] = { "e5m2", 5, 2, 15, 8, 57344.0, true, true },
	[MXA_ELEM_E2M3] = { "e2m3", 2, 3, 1, 6, 7.5, false, false },
	[MXA_ELEM_E3M2] = { "e3m2", 3, 2, 3, 6, 28.0, false, false },
	[MXA_ELEM_E2M1] = { "e2m1", 2, 1, 1, 4, 6.0, false, false },
};

const enum mxa_elem test_elems[5] = {
	MXA_ELEM_E4M3, MXA_ELEM_E5M2, MXA_ELEM_E2M3, MXA_ELEM_E3M2,
	MXA_ELEM_E2M1,
};

const enum mxa_scale_mode test_modes[4] = {
	MXA_SCALE_FLOOR, MXA_SCALE_RCEIL, MXA_SCALE_CEIL, MXA_SCALE_EVEN,
};

const char *const test_mode_names[4] = { "floor", "rceil", "ceil", "even" };

const struct test_elem_info *test_elem(enum mxa_elem elem)
{
	if (elem < MXA_ELEM_E4M3 || elem > MXA_ELEM_E2M1) {
		fprintf(stderr, "test bug: element %d\n", (int)elem);
		abort();
	}
	return &elem_info[elem];
}

unsigned int test_elem_ncodes(enum mxa_elem elem)
{
	return 1u << test_elem(elem)->code_bits;
}

uint8_t test_elem_sign(enum mxa_elem elem)
{
	const struct test_elem_info *f = test_elem(elem);

	return (uint8_t)(1u << (f->ebits + f->mbits));
}

enum test_class test_elem_decode(enum mxa_elem elem, uint8_t code,
				 int64_t *k, int *e, bool *neg_zero)
{
	const struct test_elem_info *f = test_elem(elem);
	unsigned int c = code & ((1u << f->code_bits) - 1);
	bool neg = c >> (f->ebits + f->mbits);
	unsigned int be = (c >> f->mbits) & ((1u << f->ebits) - 1);
	unsigned int m = c & ((1u << f->mbits) - 1);
	unsigned int be_max = (1u << f->ebits) - 1;
	unsigned int m_max = (1u << f->mbits) - 1;

	*k = 0;
	*e = 0;
	if (neg_zero)
		*neg_zero = false;
	/* e4m3: only S.1111.111 is NaN; e5m2: IEEE-like top exponent. */
	if (elem == MXA_ELEM_E4M3 && be == be_max && m == m_max)
		return TEST_NAN;
	if (f->has_inf && be == be_max)
		return m ? TEST_NAN : neg ? TEST_NINF : TEST_PINF;
	if (be) {
		*k = (int64_t)((1u << f->mbits) | m);
		*e = (int)be - (int)f->bias - (int)f->mbits;
	} else {
		*k = m;
		*e = 1 - (int)f->bias - (int)f->mbits;
	}
	if (neg)
		*k = -*k;
	if (neg_zero)
		*neg_zero = neg && !m && !be;
	return TEST_FINITE;
}

double test_elem_value(enum mxa_elem elem, uint8_t code)
{
	bool nz;
	int64_t k;
	int e;

	switch (test_elem_decode(elem, code, &k, &e, &nz)) {
	case TEST_NAN:
		return NAN;
	case TEST_PINF:
		return INFINITY;
	case TEST_NINF:
		return -INFINITY;
	default:
		break;
	}
	return nz ? -0.0 : ldexp((double)k, e);
}

uint8_t test_elem_max_code(enum mxa_elem elem)
{
	unsigned int c, best = 0;
	double vmax = -1;

	for (c = 0; c < test_elem_ncodes(elem); c++) {
		double v = test_elem_value(elem, (uint8_t)c);

		if (isfinite(v) && v > vmax) {
			vmax = v;
			best = c;
		}
	}
	return (uint8_t)best;
}

uint8_t test_rand_code(enum mxa_elem elem, bool allow_special)
{
	for (;;) {
		uint8_t c = (uint8_t)test_rand_below(test_elem_ncodes(elem));
		int64_t k;
		int e;

		if (allow_special ||
		    test_elem_decode(elem, c, &k, &e, NULL) == TEST_FINITE)
			return c;
	}
}

double test_scale_value(uint8_t s)
{
	return s == 0xff ? NAN : ldexp(1.0, (int)s - 127);
}

/* --- matrices on a device -------------------------------------------- */

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

void test_mx_alloc(struct test_mx *m, enum mxa_elem elem, uint32_t rows,
		   uint32_t cols)
{
	m->elem = elem;
	m->rows = rows;
	m->cols = cols;
	m->code = xcalloc((size_t)rows * cols, 1);
	m->scale = xcalloc((size_t)rows * (cols / 32), 1);
}

void test_mx_free(struct test_mx *m)
{
	free(m->code);
	free(m->scale);
	m->code = m->scale = NULL;
}

/* The design's swizzle formula, written out here rather than trusted. */
static size_t swizzle_at(uint32_t blocks, uint32_t r, uint32_t c)
{
	size_t cp = (blocks + 3) / 4 * 4;

	return ((size_t)(r / 128) * (cp / 4) + c / 4) * 512 +
	       (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
}

int test_mx_upload(struct mxa_device *dev, const struct test_mx *m,
		   const struct test_mx_place *place, struct mxa_matrix *out)
{
	static const struct test_mx_place plain;
	const struct test_mx_place *p = place ? place : &plain;
	uint32_t blocks = m->cols / 32, r, c;
	bool fp4 = m->elem == MXA_ELEM_E2M1;
	size_t row_bytes = fp4 ? m->cols / 2 : m->cols;
	size_t dstride = row_bytes + p->data_pad;
	size_t dsize = p->data_offset + (size_t)m->rows * dstride;
	size_t sstride = blocks + p->scale_pad, ssize;
	uint8_t *d, *s;
	int ret;

	if (p->layout == MXA_LAYOUT_SWIZZLED)
		ssize = p->scale_offset + (size_t)(m->rows + 127) / 128 * 128 *
			((blocks + 3) / 4 * 4);
	else
		ssize = p->scale_offset + (size_t)m->rows * sstride;
	d = xcalloc(dsize, 1);
	s = xcalloc(ssize, 1);
	memset(d, 0xa5, dsize);
	memset(s, 0xa5, ssize);
	for (r = 0; r < m->rows; r++) {
		uint8_t *row = d + p->data_offset + r * dstride;
		const uint8_t *codes = m->code + (size_t)r * m->cols;

		if (fp4) {
			for (c = 0; c < m->cols / 2; c++)
				row[c] = (uint8_t)((codes[2 * c] & 0xf) |
						   (codes[2 * c + 1] << 4));
		} else {
			memcpy(row, codes, m->cols);
		}
		for (c = 0; c < blocks; c++) {
			size_t at = p->layout == MXA_LAYOUT_SWIZZLED ?
				    swizzle_at(blocks, r, c) : r * sstride + c;

			s[p->scale_offset + at] = m->scale[(size_t)r * blocks + c];
		}
	}

	memset(out, 0, sizeof(*out));
	ret = mxa_buffer_alloc(dev, dsize, &out->data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, ssize, &out->scale);
	if (!ret)
		ret = mxa_buffer_write(out->data, 0, d, dsize);
	if (!ret)
		ret = mxa_buffer_write(out->scale, 0, s, ssize);
	free(d);
	free(s);
	if (ret) {
		test_mx_release(out);
		return ret;
	}
	out->data_offset = p->data_offset;
	out->data_stride = p->data_pad ? dstride : 0;
	out->scale_offset = p->scale_offset;
	out->scale_stride = p->layout == MXA_LAYOUT_PLAIN && p->scale_pad ?
			    sstride : 0;
	out->elem = m->elem;
	out->scale_layout = p->layout;
	out->rows = m->rows;
	out->cols = m->cols;
	return 0;
}

void test_mx_release(struct mxa_matrix *m)
{
	mxa_buffer_free(m->data);
	mxa_buffer_free(m->scale);
	m->data = m->scale = NULL;
}

static size_t dtype_bytes(enum mxa_dtype dtype)
{
	return dtype == MXA_DTYPE_BF16 ? 2 : 4;
}

static size_t dense_stride(const struct mxa_dense *d)
{
	return d->stride ? d->stride : d->cols * dtype_bytes(d->dtype);
}

int test_dense_upload(struct mxa_device *dev, enum mxa_dtype dtype,
		      uint32_t rows, uint32_t cols, const uint32_t *bits,
		      size_t offset, size_t pad, struct mxa_dense *out)
{
	size_t es = dtype_bytes(dtype), stride = cols * es + pad;
	size_t size = offset + (size_t)rows * stride, i;
	uint8_t *h = xcalloc(size, 1);
	int ret;

	memset(h, 0xa5, size);
	for (i = 0; i < (size_t)rows * cols; i++) {
		uint8_t *at = h + offset + (i / cols) * stride + (i % cols) * es;
		uint32_t v = bits ? bits[i] : 0;

		if (es == 2) {
			uint16_t x = (uint16_t)v;

			memcpy(at, &x, 2);
		} else {
			memcpy(at, &v, 4);
		}
	}
	memset(out, 0, sizeof(*out));
	ret = mxa_buffer_alloc(dev, size, &out->buf);
	if (!ret)
		ret = mxa_buffer_write(out->buf, 0, h, size);
	free(h);
	if (ret) {
		mxa_buffer_free(out->buf);
		out->buf = NULL;
		return ret;
	}
	out->offset = offset;
	out->stride = pad ? stride : 0;
	out->dtype = dtype;
	out->rows = rows;
	out->cols = cols;
	return 0;
}

int test_dense_download(const struct mxa_dense *d, uint32_t *bits)
{
	size_t es = dtype_bytes(d->dtype), stride = dense_stride(d), i;
	size_t size = mxa_buffer_size(d->buf);
	uint8_t *h = xcalloc(size, 1);
	int ret = mxa_buffer_read(d->buf, 0, h, size);

	for (i = 0; !ret && i < (size_t)d->rows * d->cols; i++) {
		const uint8_t *at = h + d->offset + (i / d->cols) * stride +
				    (i % d->cols) * es;

		if (es == 2) {
			uint16_t x;

			memcpy(&x, at, 2);
			bits[i] = x;
		} else {
			memcpy(&bits[i], at, 4);
		}
	}
	free(h);
	return ret;
}

bool test_dense_pad_intact(const struct mxa_dense *d)
{
	size_t es = dtype_bytes(d->dtype), stride = dense_stride(d), i;
	size_t size = mxa_buffer_size(d->buf);
	uint8_t *h = xcalloc(size, 1);
	bool ok = !mxa_buffer_read(d->buf, 0, h, size);

	for (i = 0; ok && i < size; i++) {
		bool inside = i >= d->offset &&
			      (i - d->offset) / stride < d->rows &&
			      (i - d->offset) % stride < d->cols * es;

		if (!inside && h[i] != 0xa5)
			ok = false;
	}
	free(h);
	return ok;
}

void test_dense_release(struct mxa_dense *d)
{
	mxa_buffer_free(d->buf);
	d->buf = NULL;
}

struct mxa_device *test_open_cpu(void)
{
	struct mxa_device *dev = NULL;
	int ret = mxa_device_open("cpu", &dev);

	if (ret) {
		fprintf(stderr, "FAIL: mxa_device_open(\"cpu\") = %d (%s)\n",
			ret, mxa_strerror(ret));
		exit(1);
	}
	return dev;
}

const char *test_device_name(void)
{
	const char *name = getenv("MXACCEL_TEST_DEVICE");

	return name && *name ? name : "cpu";
}

struct mxa_device *test_open_device(void)
{
	struct mxa_device *dev = NULL;
	struct mxa_device_info info;
	int ret = mxa_device_open(test_device_name(), &dev);

	if (ret) {
		fprintf(stderr, "FAIL: mxa_device_open(\"%s\") = %d (%s)\n",
			test_device_name(), ret, mxa_strerror(ret));
		exit(1);
	}
	info = test_device_info(dev);
	printf("device %s: %s\n", info.name, info.description);
	return dev;
}

struct mxa_device_info test_device_info(struct mxa_device *dev)
{
	struct mxa_device_info info;
	int ret;

	memset(&info, 0, sizeof(info));
	ret = mxa_device_info(dev, &info);
	if (ret) {
		test_fail(__FILE__, __LINE__, "mxa_device_info: %d (%s)", ret,
			  mxa_strerror(ret));
		memset(&info, 0, sizeof(info));
	}
	return info;
}

bool test_is_cpu(struct mxa_device *dev)
{
	return !strcmp(test_device_info(dev).backend, "cpu");
}

bool test_supports(struct mxa_device *dev, const struct mxa_op_desc *d,
		   enum mxa_pref pref)
{
	struct mxa_capability cap;
	int ret = mxa_query(dev, d, pref, &cap);

	if (ret) {
		test_fail(__FILE__, __LINE__, "mxa_query(op %d, pref %d): %d (%s)",
			  (int)d->op, (int)pref, ret, mxa_strerror(ret));
		return false;
	}
	return cap.support != MXA_SUPPORT_NONE;
}

bool test_has_native(struct mxa_device *dev, enum mxa_op op)
{
	struct mxa_op_desc d = {
		.op = op, .a_elem = MXA_ELEM_E4M3, .b_elem = MXA_ELEM_E4M3,
		.m = 4, .n = 3, .k = 64,
	};

	return test_supports(dev, &d, MXA_PREF_NATIVE);
}

int test_native_ret(struct mxa_device *dev, enum mxa_op op)
{
	return test_has_native(dev, op) ? 0 : -EOPNOTSUPP;
}

void test_req_init(struct mxa_device *dev, struct test_req *r)
{
	static const uint8_t one_e4m3 = 0x38, one_e2m1 = 0x2;
	uint8_t ad[4 * 64], bd[3 * 32], sc[16];
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < sizeof(ad); i++)
		ad[i] = one_e4m3;
	for (i = 0; i < sizeof(bd); i++)
		bd[i] = one_e2m1 | one_e2m1 << 4;
	memset(sc, 127, sizeof(sc));
	if (mxa_buffer_alloc(dev, sizeof(ad), &r->ab) ||
	    mxa_buffer_alloc(dev, 8, &r->as) ||
	    mxa_buffer_alloc(dev, sizeof(bd), &r->bb) ||
	    mxa_buffer_alloc(dev, 6, &r->bs) ||
	    mxa_buffer_alloc(dev, 4 * 3 * 4, &r->cb)) {
		fprintf(stderr, "FAIL: cannot allocate the request\n");
		exit(1);
	}
	mxa_buffer_write(r->ab, 0, ad, sizeof(ad));
	mxa_buffer_write(r->as, 0, sc, 8);
	mxa_buffer_write(r->bb, 0, bd, sizeof(bd));
	mxa_buffer_write(r->bs, 0, sc, 6);
	r->a = (struct mxa_matrix){
		.data = r->ab, .scale = r->as, .elem = MXA_ELEM_E4M3,
		.scale_layout = MXA_LAYOUT_PLAIN, .rows = 4, .cols = 64,
	};
	r->b = (struct mxa_matrix){
		.data = r->bb, .scale = r->bs, .elem = MXA_ELEM_E2M1,
		.scale_layout = MXA_LAYOUT_PLAIN, .rows = 3, .cols = 64,
	};
	r->c = (struct mxa_dense){
		.buf = r->cb, .dtype = MXA_DTYPE_F32, .rows = 4, .cols = 3,
	};
}

void test_req_free(struct test_req *r)
{
	mxa_buffer_free(r->ab);
	mxa_buffer_free(r->as);
	mxa_buffer_free(r->bb);
	mxa_buffer_free(r->bs);
	mxa_buffer_free(r->cb);
}
