// SPDX-License-Identifier: MIT
/*
 * mxa_gemm_grouped(), torch._scaled_grouped_mm's semantics, against
 * per-group mxa_gemm() calls:
 *
 * - 2d x 3d (groups along M) and 2d x 2d (groups along K), ragged and
 *   empty groups, plain and swizzled scales laid out per group as torchao
 *   does (each group's scales swizzled on their own: to_blocked per group),
 *   MX, NVFP4 (two level) and mixed operands, fp32 and bf16 C, with and
 *   without MXA_GEMM_ACCUMULATE.
 * - EMULATED: every group's C equals, byte for byte, mxa_gemm() EMULATED
 *   of that group's rows / K columns copied into operands of their own
 *   (plain scales), so the per-group layouts are checked independently of
 *   the library's walk.  An empty K group gives 0 (C_in, rounded).
 * - NATIVE: within (K_g + 1) * 2^-24 * sum|a*b| (+ |C_in|) plus half an
 *   ulp of the exact result, per element; (K_g + 4) * 2^-24 when an
 *   operand is NVFP4 (Documentation/numerics.rst).  A device whose
 *   mxa_query() has no NATIVE grouped kernel for the scale types must
 *   refuse with -EOPNOTSUPP.
 * - Every malformed request fails with its errno and writes nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* A host operand: one code per element (unpacked), scales per block. */
struct host_op {
	enum mxa_elem elem;
	enum mxa_scale_type st;
	float tensor_scale;
	uint32_t rows, cols, block;
	uint8_t *code;		/* rows x cols */
	uint8_t *scale;		/* rows x cols / block */
};

static void host_op_init(struct host_op *h, enum mxa_elem elem, bool nvfp4,
			 float ts, uint32_t rows, uint32_t cols)
{
	uint32_t i;

	h->elem = nvfp4 ? MXA_ELEM_E2M1 : elem;
	h->st = nvfp4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0;
	h->tensor_scale = nvfp4 ? ts : 0;
	h->rows = rows;
	h->cols = cols;
	h->block = nvfp4 ? 16 : 32;
	h->code = malloc((size_t)rows * cols);
	h->scale = malloc((size_t)rows * (cols / h->block) + 1);
	if (!h->code || !h->scale) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (i = 0; i < rows * cols; i++)
		h->code[i] = test_rand_code(h->elem, false);
	for (i = 0; i < rows * (cols / h->block); i++)
		h->scale[i] = nvfp4 ? (uint8_t)(0x28 + test_rand_below(0x28)) :
				      (uint8_t)(122 + test_rand_below(10));
}

static void host_op_free(struct host_op *h)
{
	free(h->code);
	free(h->scale);
}

/* Codes of row r, columns [k0, k0 + n), packed as the device stores them. */
static void pack_row(const struct host_op *h, uint32_t r, uint32_t k0,
		     uint32_t n, uint8_t *out)
{
	const uint8_t *c = h->code + (size_t)r * h->cols + k0;
	uint32_t i;

	if (h->elem != MXA_ELEM_E2M1) {
		memcpy(out, c, n);
		return;
	}
	for (i = 0; i < n / 2; i++)
		out[i] = (uint8_t)(c[2 * i] | c[2 * i + 1] << 4);
}

static size_t row_bytes(const struct host_op *h, uint32_t n)
{
	return h->elem == MXA_ELEM_E2M1 ? n / 2 : n;
}

static struct mxa_buffer *buffer(struct mxa_device *dev, size_t size)
{
	struct mxa_buffer *b = NULL;

	if (mxa_buffer_alloc(dev, size ? size : 1, &b)) {
		fprintf(stderr, "cannot allocate %zu bytes\n", size);
		exit(1);
	}
	return b;
}

static uint8_t *host_of(struct mxa_buffer *b)
{
	void *p = NULL;

	if (mxa_buffer_map(b, &p)) {
		fprintf(stderr, "cannot map a buffer\n");
		exit(1);
	}
	return p;
}

static struct mxa_matrix matrix_of(const struct host_op *h, uint32_t rows,
				   uint32_t cols, enum mxa_scale_layout layout)
{
	return (struct mxa_matrix){ .elem = h->elem, .scale_type = h->st,
				    .tensor_scale = h->tensor_scale,
				    .scale_layout = layout, .rows = rows,
				    .cols = cols };
}

/*
 * Rows [r0, r0 + nr) and columns [k0, k0 + nk) of h as a matrix of its
 * own (plain, packed), for the per-group reference.
 */
static struct mxa_matrix part(struct mxa_device *dev, const struct host_op *h,
			      uint32_t r0, uint32_t nr, uint32_t k0,
			      uint32_t nk)
{
	struct mxa_matrix m = matrix_of(h, nr, nk, MXA_LAYOUT_PLAIN);
	uint32_t r, nb = nk / h->block;
	uint8_t *d, *s;

	m.data = buffer(dev, nr * row_bytes(h, nk));
	m.scale = buffer(dev, (size_t)nr * nb);
	d = host_of(m.data);
	s = host_of(m.scale);
	for (r = 0; r < nr; r++) {
		pack_row(h, r0 + r, k0, nk, d + r * row_bytes(h, nk));
		memcpy(s + (size_t)r * nb,
		       h->scale + (size_t)(r0 + r) * (h->cols / h->block) +
		       k0 / h->block, nb);
	}
	return m;
}

static void release(struct mxa_matrix *m)
{
	mxa_buffer_free(m->data);
	mxa_buffer_free(m->scale);
}

static uint64_t up(uint64_t x, uint64_t m)
{
	return (x + m - 1) / m * m;
}

/*
 * The grouped operand's buffers.  Data: all rows, packed.  Scales: plain
 * row-major, or swizzled per group as torchao lays them out:
 *   by_rows (A of 2d x 3d): group g's rows [starts[g], starts[g+1])
 *     swizzled alone, at sum of 128-padded group rows before it;
 *   stack (B of 2d x 3d): count groups of h->rows / count rows each,
 *     group g at g * its swizzled size;
 *   by_cols (2d x 2d): group g's K columns swizzled alone ([rows x
 *     blocks_g]), at sum of 4-padded block columns before it * 128-padded
 *     rows.
 */
enum split { BY_ROWS, STACK, BY_COLS };

static struct mxa_matrix grouped_operand(struct mxa_device *dev,
					 const struct host_op *h,
					 enum mxa_scale_layout layout,
					 enum split split, const int32_t *ends,
					 uint32_t count)
{
	struct mxa_matrix m = matrix_of(h, split == STACK ? h->rows / count :
					h->rows, h->cols, layout);
	uint32_t nb = h->cols / h->block, r, b, g;
	uint64_t bytes = 0, pos = 0;
	uint8_t *d, *s;

	m.data = buffer(dev, (size_t)h->rows * row_bytes(h, h->cols));
	d = host_of(m.data);
	for (r = 0; r < h->rows; r++)
		pack_row(h, r, 0, h->cols, d + r * row_bytes(h, h->cols));
	if (layout == MXA_LAYOUT_PLAIN) {
		m.scale = buffer(dev, (size_t)h->rows * nb);
		memcpy(host_of(m.scale), h->scale, (size_t)h->rows * nb);
		return m;
	}
	/* Sizes first, then the scales of each group. */
	for (g = 0; g < count; g++) {
		uint32_t lo = g ? (uint32_t)ends[g - 1] : 0;
		uint32_t size = (uint32_t)ends[g] - lo;

		if (split == BY_ROWS)
			bytes += up(size, 128) * up(nb, 4);
		else if (split == STACK)
			bytes += up(h->rows / count, 128) * up(nb, 4);
		else
			bytes += up(h->rows, 128) * up(size / h->block, 4);
	}
	m.scale = buffer(dev, bytes);
	s = host_of(m.scale);
	for (g = 0; g < count; g++) {
		uint32_t lo = g ? (uint32_t)ends[g - 1] : 0;
		uint32_t size = (uint32_t)ends[g] - lo;
		uint32_t rows = split == BY_ROWS ? size :
				split == STACK ? h->rows / count : h->rows;
		uint32_t r0 = split == BY_ROWS ? lo :
			      split == STACK ? g * rows : 0;
		uint32_t b0 = split == BY_COLS ? lo / h->block : 0;
		uint32_t gb = split == BY_COLS ? size / h->block : nb;

		for (r = 0; r < rows; r++)
			for (b = 0; b < gb; b++)
				s[pos + mxa_swizzle_index(rows, gb, r, b)] =
					h->scale[(size_t)(r0 + r) * nb + b0 + b];
		pos += up(rows, 128) * up(gb, 4);
	}
	return m;
}

/* Element (r, k)'s value (code * block scale [* tensor scale]). */
static double value(const struct host_op *h, uint32_t r, uint32_t k)
{
	double v = test_elem_value(h->elem, h->code[(size_t)r * h->cols + k]);
	uint8_t s = h->scale[(size_t)r * (h->cols / h->block) + k / h->block];

	if (h->st != MXA_SCALE_UE4M3)
		return v * test_scale_value(s);
	v *= test_elem_value(MXA_ELEM_E4M3, s);
	return h->tensor_scale != 0 ? v * h->tensor_scale : v;
}

struct config {
	const char *name;
	enum mxa_group_kind kind;
	enum mxa_elem ea, eb;
	bool nva, nvb;		/* NVFP4 operands */
	enum mxa_scale_layout layout;
	enum mxa_dtype dtype;
	bool accumulate;
};

static const uint32_t dsize[2] = { 4, 2 };

/*
 * NATIVE group g (rows x n results at got) against the exact ones (ref):
 * |v - x| <= (K_g + 1) * 2^-24 * (sum |a*b| + |C_in|) + half an ulp of x.
 */
static void check_native(const struct config *cf, const struct host_op *ha,
			 const struct host_op *hb, uint32_t g, uint32_t lo,
			 uint32_t kg, uint32_t rows, uint32_t n,
			 const uint8_t *got, const uint8_t *ref,
			 const uint8_t *in)
{
	bool mk = cf->kind == MXA_GROUP_2D_3D;
	uint32_t es = dsize[cf->dtype], i, j, kk;
	unsigned int mb = es == 2 ? 7 : 23;

	for (i = 0; i < rows; i++) {
		for (j = 0; j < n; j++) {
			size_t at = ((size_t)i * n + j) * es;
			uint32_t vb = 0, rb = 0, cb = 0;
			uint32_t ar = mk ? lo + i : i, br = mk ? g * n + j : j;
			uint32_t k0 = mk ? 0 : lo;
			double v, x, s = 0, cv = 0;

			memcpy(&vb, got + at, es);
			memcpy(&rb, ref + at, es);
			memcpy(&cb, in + at, es);
			v = test_float_value(vb, mb);
			x = test_float_value(rb, mb);
			if (cf->accumulate)
				cv = fabs(test_float_value(cb, mb));
			for (kk = 0; kk < kg; kk++)
				s += fabs(value(ha, ar, k0 + kk) *
					  value(hb, br, k0 + kk));
			s = (kg + (cf->nva || cf->nvb ? 4 : 1)) * 0x1p-24 *
			    (s + cv) +
			    fabs(x) * (es == 2 ? 0x1p-8 : 0x1p-24) + 0x1p-149;
			CHECK(fabs(v - x) <= s,
			      "%s: NATIVE group %u C[%u][%u] = %g, exact %g, bound %g",
			      cf->name, g, i, j, v, x, s);
		}
	}
}

/* Run one configuration: grouped vs per-group, EMULATED and NATIVE. */
static void run_config(struct mxa_device *dev, const struct config *cf,
		       const int32_t *ends, uint32_t count)
{
	bool mk = cf->kind == MXA_GROUP_2D_3D;
	uint32_t m = mk ? (uint32_t)ends[count - 1] : 7;
	uint32_t n = 5;
	uint32_t k = mk ? 64 : (uint32_t)ends[count - 1];
	uint32_t crows = mk ? m : count * m, es = dsize[cf->dtype];
	uint32_t i, g, flags = cf->accumulate ? MXA_GEMM_ACCUMULATE : 0;
	struct host_op ha, hb;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *obuf;
	struct mxa_grouped gr;
	uint8_t *cin, *cexact;
	size_t cbytes = (size_t)crows * n * es;
	int pass;

	host_op_init(&ha, cf->ea, cf->nva, 0x1.3p-3f, m, k);
	host_op_init(&hb, cf->eb, cf->nvb, 0x1.7ffffep+4f,
		     mk ? count * n : n, k);
	a = grouped_operand(dev, &ha, cf->layout, mk ? BY_ROWS : BY_COLS,
			    ends, count);
	b = grouped_operand(dev, &hb, cf->layout, mk ? STACK : BY_COLS, ends,
			    count);
	obuf = buffer(dev, 8 + count * 4);
	memcpy(host_of(obuf) + 8, ends, count * 4);
	gr = (struct mxa_grouped){ .kind = cf->kind, .count = count,
				   .offsets = obuf, .offsets_offset = 8 };
	cin = malloc(cbytes);
	cexact = malloc(cbytes);
	for (i = 0; i < crows * n; i++) {
		uint32_t bits = test_f32_bits(test_rand_float(8));

		if (es == 2)
			bits >>= 16;
		memcpy(cin + i * es, &bits, es);
	}
	c = (struct mxa_dense){ .buf = buffer(dev, cbytes), .dtype = cf->dtype,
				.rows = crows, .cols = n };

	for (pass = 0; pass < 2; pass++) {
		enum mxa_pref pref = pass ? MXA_PREF_NATIVE : MXA_PREF_EMULATED;
		struct mxa_op_desc d = {
			.op = MXA_OP_GEMM_GROUPED, .a_elem = ha.elem,
			.b_elem = hb.elem, .a_scale_type = ha.st,
			.b_scale_type = hb.st, .dtype = cf->dtype, .m = m,
			.n = n, .k = k, .flags = flags,
		};
		bool native_ok = test_supports(dev, &d, MXA_PREF_NATIVE);
		int ret;

		memcpy(host_of(c.buf), cin, cbytes);
		ret = mxa_gemm_grouped(dev, &a, &b, &c, &gr, flags, pref);
		if (pass && !native_ok) {
			CHECK(ret == -EOPNOTSUPP,
			      "%s: NATIVE, which mxa_query() refuses, returned %d, want -EOPNOTSUPP",
			      cf->name, ret);
			break;
		}
		CHECK(!ret, "%s: %s returned %d", cf->name,
		      mxa_pref_name(pref), ret);
		if (ret)
			break;
		if (!pass)
			memcpy(cexact, host_of(c.buf), cbytes);
		for (g = 0; g < count; g++) {
			uint32_t lo = g ? (uint32_t)ends[g - 1] : 0;
			uint32_t size = (uint32_t)ends[g] - lo;
			uint32_t r0 = mk ? lo : g * m, rows = mk ? size : m;
			const uint8_t *got = host_of(c.buf) + (size_t)r0 * n * es;
			const uint8_t *ref = cexact + (size_t)r0 * n * es;
			const uint8_t *in = cin + (size_t)r0 * n * es;
			struct mxa_matrix pa, pb;
			struct mxa_dense pc;
			uint32_t j;

			if (!size) {
				if (mk || pass)
					continue;
				/* An empty K group: 0, or C_in rounded. */
				for (j = 0; j < rows * n; j++) {
					uint32_t v = 0, w = 0;

					memcpy(&v, got + j * es, es);
					if (cf->accumulate)
						memcpy(&w, in + j * es, es);
					if (es == 4 && cf->accumulate &&
					    test_isnan_bits(w, 23))
						w = 0x7fc00000;
					if (w == 0x80000000 || w == 0x8000)
						w = 0;
					CHECK(v == w,
					      "%s: empty group %u C[%u] = 0x%x, want 0x%x",
					      cf->name, g, j, v, w);
				}
				continue;
			}
			if (pass) {
				check_native(cf, &ha, &hb, g, lo, mk ? k : size,
					     rows, n, got, ref, in);
				continue;
			}
			/* EMULATED: per-group mxa_gemm() of copied operands. */
			pa = part(dev, &ha, mk ? lo : 0, mk ? size : m,
				  mk ? 0 : lo, mk ? k : size);
			pb = part(dev, &hb, mk ? g * n : 0, n, mk ? 0 : lo,
				  mk ? k : size);
			pc = (struct mxa_dense){ .buf = buffer(dev, (size_t)rows * n * es),
						 .dtype = cf->dtype, .rows = rows,
						 .cols = n };
			memcpy(host_of(pc.buf), in, (size_t)rows * n * es);
			CHECK_RET(mxa_gemm(dev, &pa, &pb, &pc, flags,
					   MXA_PREF_EMULATED), 0);
			CHECK(!memcmp(host_of(pc.buf), got, (size_t)rows * n * es),
			      "%s: group %u differs from its mxa_gemm()",
			      cf->name, g);
			release(&pa);
			release(&pb);
			mxa_buffer_free(pc.buf);
		}
	}
	free(cin);
	free(cexact);
	mxa_buffer_free(c.buf);
	mxa_buffer_free(obuf);
	release(&a);
	release(&b);
	host_op_free(&ha);
	host_op_free(&hb);
}

static void test_semantics(struct mxa_device *dev)
{
	/* Ragged M groups with empty ones; K groups on 32-multiples. */
	static const int32_t m_ends[] = { 0, 3, 3, 133, 140, 140 };
	static const int32_t k_ends[] = { 64, 64, 96, 224, 224 };
	static const int32_t one[] = { 37 };
	static const int32_t k16_ends[] = { 16, 16, 80, 208, 224 };
	static const struct config configs[] = {
		{ "2d3d e4m3 x e4m3 plain f32", MXA_GROUP_2D_3D, MXA_ELEM_E4M3,
		  MXA_ELEM_E4M3, false, false, MXA_LAYOUT_PLAIN, MXA_DTYPE_F32,
		  false },
		{ "2d3d e2m1 x e5m2 swizzled bf16 acc", MXA_GROUP_2D_3D,
		  MXA_ELEM_E2M1, MXA_ELEM_E5M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, true },
		{ "2d3d nvfp4 x nvfp4 swizzled f32 acc", MXA_GROUP_2D_3D, 0, 0,
		  true, true, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true },
		{ "2d3d nvfp4 x e3m2 plain bf16", MXA_GROUP_2D_3D, 0,
		  MXA_ELEM_E3M2, true, false, MXA_LAYOUT_PLAIN, MXA_DTYPE_BF16,
		  false },
		{ "2d2d e4m3 x e2m1 plain f32 acc", MXA_GROUP_2D_2D,
		  MXA_ELEM_E4M3, MXA_ELEM_E2M1, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_F32, true },
		{ "2d2d e5m2 x e2m3 swizzled bf16", MXA_GROUP_2D_2D,
		  MXA_ELEM_E5M2, MXA_ELEM_E2M3, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, false },
		{ "2d2d nvfp4 x nvfp4 swizzled f32 acc", MXA_GROUP_2D_2D, 0, 0,
		  true, true, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true },
		{ "2d2d e2m1 x nvfp4 plain bf16 acc", MXA_GROUP_2D_2D,
		  MXA_ELEM_E2M1, 0, false, true, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_BF16, true },
	};
	unsigned int i;

	for (i = 0; i < TEST_ARRAY_SIZE(configs); i++) {
		const struct config *cf = &configs[i];

		if (cf->kind == MXA_GROUP_2D_3D)
			run_config(dev, cf, m_ends, TEST_ARRAY_SIZE(m_ends));
		else
			run_config(dev, cf, k_ends, TEST_ARRAY_SIZE(k_ends));
	}
	/* A single group is the dense GEMM. */
	run_config(dev, &configs[1], one, 1);
	/* NVFP4 x NVFP4 K groups on NVFP4's blocks of 16 (odd ones too). */
	run_config(dev, &configs[6], k16_ends, TEST_ARRAY_SIZE(k16_ends));
	printf("%u configurations: grouped == per-group mxa_gemm (EMULATED), within bound (NATIVE)\n",
	       (unsigned int)TEST_ARRAY_SIZE(configs) + 2);
}

/* A valid 2d x 3d request (3 groups) whose fields the error cases break. */
struct req {
	struct host_op ha, hb;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *obuf;
	struct mxa_grouped gr;
	int32_t *ends;
};

static void req_init(struct mxa_device *dev, struct req *r,
		     enum mxa_group_kind kind, enum mxa_scale_layout layout)
{
	static const int32_t m_ends[] = { 2, 2, 9 };
	static const int32_t k_ends[] = { 32, 32, 96 };
	bool mk = kind == MXA_GROUP_2D_3D;
	const int32_t *ends = mk ? m_ends : k_ends;

	host_op_init(&r->ha, MXA_ELEM_E4M3, false, 0, mk ? 9 : 4, mk ? 64 : 96);
	host_op_init(&r->hb, MXA_ELEM_E4M3, false, 0, mk ? 9 : 3, mk ? 64 : 96);
	r->a = grouped_operand(dev, &r->ha, layout, mk ? BY_ROWS : BY_COLS,
			       ends, 3);
	r->b = grouped_operand(dev, &r->hb, layout, mk ? STACK : BY_COLS, ends,
			       3);
	r->c = (struct mxa_dense){ .buf = buffer(dev, mk ? 9 * 3 * 4 : 12 * 3 * 4),
				   .dtype = MXA_DTYPE_F32, .rows = mk ? 9 : 12,
				   .cols = 3 };
	memset(host_of(r->c.buf), 0xcc, mxa_buffer_size(r->c.buf));
	r->obuf = buffer(dev, 16);
	r->ends = (int32_t *)host_of(r->obuf);
	memcpy(r->ends, ends, 12);
	r->gr = (struct mxa_grouped){ .kind = kind, .count = 3,
				      .offsets = r->obuf };
}

static void req_free(struct req *r)
{
	release(&r->a);
	release(&r->b);
	mxa_buffer_free(r->c.buf);
	mxa_buffer_free(r->obuf);
	host_op_free(&r->ha);
	host_op_free(&r->hb);
}

static bool untouched(const struct req *r)
{
	const uint8_t *p = host_of(r->c.buf);
	size_t i;

	for (i = 0; i < mxa_buffer_size(r->c.buf); i++)
		if (p[i] != 0xcc)
			return false;
	return true;
}

#define EXPECT(r, call, err, what)                                          \
	do {                                                                \
		int __r = (call);                                           \
		CHECK(__r == (err), "%s: returned %d, want %d", what, __r,  \
		      (int)(err));                                          \
		CHECK(untouched(r), "%s: C was written", what);             \
	} while (0)

static void test_errors(struct mxa_device *dev)
{
	struct mxa_device *other = NULL;
	struct mxa_buffer *small;
	struct mxa_grouped gr;
	struct mxa_matrix m;
	struct mxa_dense c;
	struct req r;

#define RUN(g) mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, (g), 0, \
				MXA_PREF_EMULATED)
	req_init(dev, &r, MXA_GROUP_2D_3D, MXA_LAYOUT_PLAIN);
	CHECK_RET(RUN(&r.gr), 0);
	memset(host_of(r.c.buf), 0xcc, mxa_buffer_size(r.c.buf));
	EXPECT(&r, mxa_gemm_grouped(NULL, &r.a, &r.b, &r.c, &r.gr, 0, 0),
	       -EINVAL, "dev NULL");
	EXPECT(&r, RUN(NULL), -EINVAL, "groups NULL");
	gr = r.gr;
	gr.kind = (enum mxa_group_kind)2;
	EXPECT(&r, RUN(&gr), -EINVAL, "unknown kind");
	gr = r.gr;
	gr.count = 0;
	EXPECT(&r, RUN(&gr), -EINVAL, "count 0");
	gr.count = MXA_GROUPS_MAX + 1;
	EXPECT(&r, RUN(&gr), -EINVAL, "count MAX + 1");
	gr = r.gr;
	gr.reserved[3] = 1;
	EXPECT(&r, RUN(&gr), -EINVAL, "reserved");
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, &r.gr, 2,
				    MXA_PREF_EMULATED), -EINVAL, "flags");
	gr = r.gr;
	gr.offsets = NULL;
	EXPECT(&r, RUN(&gr), -EINVAL, "offsets NULL");
	gr = r.gr;
	gr.offsets_offset = 2;
	EXPECT(&r, RUN(&gr), -EINVAL, "offsets_offset 2");
	gr.offsets_offset = 8;	/* 3 ends need 12 bytes, 8 are left */
	EXPECT(&r, RUN(&gr), -EOVERFLOW, "offsets past the buffer");
	gr.offsets_offset = 4;	/* exactly fits: ends 2, 9, garbage 0 */
	EXPECT(&r, RUN(&gr), -EINVAL, "offsets shifted: decreasing");
	if (!mxa_device_open("cpu", &other)) {
		gr = r.gr;
		CHECK_RET(mxa_buffer_alloc(other, 16, &gr.offsets), 0);
		EXPECT(&r, RUN(&gr), -EXDEV, "offsets of another device");
		mxa_buffer_free(gr.offsets);
		mxa_device_close(other);
	}
	r.ends[1] = 1;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "decreasing ends");
	r.ends[1] = 2;
	r.ends[0] = -1;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "negative end");
	r.ends[0] = 2;
	r.ends[2] = 8;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end below total_M");
	r.ends[2] = 10;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end beyond total_M");
	r.ends[2] = 9;
	c = r.c;
	c.rows = 8;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &c, &r.gr, 0, 0), -EINVAL,
	       "c rows");
	c = r.c;
	c.cols = 2;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &c, &r.gr, 0, 0), -EINVAL,
	       "c cols");
	m = r.b;
	m.cols = 32;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &m, &r.c, &r.gr, 0, 0), -EINVAL,
	       "b K differs");
	/* B holds 9 rows = 3 groups of 3: 4 rows per group overrun it. */
	m = r.b;
	m.rows = 4;
	c = r.c;
	c.cols = 4;
	c.buf = buffer(dev, 9 * 4 * 4);
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &m, &c, &r.gr, 0, 0),
	       -EOVERFLOW, "b stack past its buffer");
	mxa_buffer_free(c.buf);
	/* C over A's codes. */
	c = r.c;
	c.buf = r.a.data;
	c.rows = 9;
	c.cols = 3;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &c, &r.gr, 0, 0), -EINVAL,
	       "c overlaps a");
	/* C over the offsets. */
	c = r.c;
	gr = r.gr;
	small = buffer(dev, 9 * 3 * 4 + 16);
	c.buf = small;
	gr.offsets = small;
	gr.offsets_offset = 9 * 3 * 4 - 4;
	memcpy(host_of(small) + gr.offsets_offset, r.ends, 12);
	CHECK_RET(mxa_gemm_grouped(dev, &r.a, &r.b, &c, &gr, 0, 0), -EINVAL);
	mxa_buffer_free(small);
	req_free(&r);

	/* Swizzled A sized for the whole matrix, not per group: too small. */
	req_init(dev, &r, MXA_GROUP_2D_3D, MXA_LAYOUT_SWIZZLED);
	CHECK_RET(RUN(&r.gr), 0);
	memset(host_of(r.c.buf), 0xcc, mxa_buffer_size(r.c.buf));
	m = r.a;
	m.scale = buffer(dev, 128 * 4);		/* 9 rows, one tile */
	EXPECT(&r, mxa_gemm_grouped(dev, &m, &r.b, &r.c, &r.gr, 0, 0),
	       -EOVERFLOW, "swizzled a scales without per-group padding");
	mxa_buffer_free(m.scale);
	req_free(&r);

	/* 2d x 2d: K boundaries on blocks, c = count * M rows. */
	req_init(dev, &r, MXA_GROUP_2D_2D, MXA_LAYOUT_SWIZZLED);
	CHECK_RET(RUN(&r.gr), 0);
	memset(host_of(r.c.buf), 0xcc, mxa_buffer_size(r.c.buf));
	r.ends[0] = 16;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "K boundary off the block");
	r.ends[0] = 32;
	r.ends[2] = 64;
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end below total_K");
	r.ends[2] = 96;
	c = r.c;
	c.rows = 4;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &c, &r.gr, 0, 0), -EINVAL,
	       "2d x 2d c not count * M rows");
	req_free(&r);
#undef RUN
	printf("malformed requests: each refused with its errno, C untouched\n");
}

static void test_query(struct mxa_device *dev)
{
	struct mxa_op_desc d = { .op = MXA_OP_GEMM_GROUPED,
				 .a_elem = MXA_ELEM_E4M3,
				 .b_elem = MXA_ELEM_E2M1, .m = 64, .n = 32,
				 .k = 128 };
	struct mxa_capability cap;

	CHECK_RET(mxa_query(dev, &d, MXA_PREF_EMULATED, &cap), 0);
	CHECK(cap.support == MXA_SUPPORT_EMULATED &&
	      !strcmp(cap.kernel, "cpu-grouped-exact"),
	      "EMULATED grouped: %d %s (%s)", cap.support, cap.kernel,
	      cap.reason);
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_AUTO, &cap), 0);
	CHECK(cap.support == MXA_SUPPORT_NATIVE &&
	      !strcmp(cap.kernel, "cpu-grouped-blocked"),
	      "AUTO grouped: %d %s (%s)", cap.support, cap.kernel, cap.reason);
	d.a_elem = d.b_elem = MXA_ELEM_E2M1;
	d.a_scale_type = d.b_scale_type = MXA_SCALE_UE4M3;
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);
	CHECK(cap.support == MXA_SUPPORT_NATIVE &&
	      !strcmp(cap.kernel, "cpu-grouped-blocked"),
	      "NATIVE NVFP4 grouped: %d %s (%s)", cap.support, cap.kernel,
	      cap.reason);
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_AUTO, &cap), 0);
	CHECK(cap.support == MXA_SUPPORT_NATIVE &&
	      !strcmp(cap.kernel, "cpu-grouped-blocked"),
	      "AUTO NVFP4 grouped: %d %s (%s)", cap.support, cap.kernel,
	      cap.reason);
}

/*
 * A device without a grouped kernel says so and refuses a valid request
 * with -EOPNOTSUPP, after validating it, and writes nothing.
 */
static bool refused(struct mxa_device *dev)
{
	struct mxa_op_desc d = { .op = MXA_OP_GEMM_GROUPED,
				 .a_elem = MXA_ELEM_E4M3,
				 .b_elem = MXA_ELEM_E4M3, .m = 9, .n = 3,
				 .k = 64 };
	struct mxa_capability cap;
	struct req r;

	CHECK_RET(mxa_query(dev, &d, MXA_PREF_AUTO, &cap), 0);
	printf("grouped gemm on this device: %s (%s)\n",
	       mxa_support_name(cap.support), cap.reason);
	if (cap.support != MXA_SUPPORT_NONE)
		return false;
	CHECK(strstr(cap.reason, "gemm_grouped"),
	      "the refusal does not say what is missing: %s", cap.reason);
	req_init(dev, &r, MXA_GROUP_2D_3D, MXA_LAYOUT_PLAIN);
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, &r.gr, 0,
				    MXA_PREF_AUTO), -EOPNOTSUPP,
	       "a device without a grouped kernel");
	r.ends[1] = 1;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, &r.gr, 0,
				    MXA_PREF_AUTO), -EINVAL,
	       "decreasing ends, validated before dispatch");
	req_free(&r);
	return true;
}

int main(void)
{
	struct mxa_device *dev;

	test_seed(20261202);
	dev = test_open_device();
	if (test_is_cpu(dev))
		test_query(dev);
	else if (refused(dev))
		goto out;
	test_semantics(dev);
	test_errors(dev);
out:
	mxa_device_close(dev);
	return test_finish();
}
