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
 * - The reference: each group's mxa_gemm() EMULATED on the cpu of that
 *   group's rows / K columns copied into operands of their own (plain
 *   scales), so the per-group layouts are checked independently of the
 *   library's walk and of the device under test.  An empty K group gives
 *   0 (C_in, rounded).
 * - EMULATED, where the device has it: byte for byte the reference.
 * - NATIVE: within (K_g + 1) * 2^-24 * sum|a*b| (+ |C_in|) plus
 *   half an ulp of the exact result (2d x 2d on a GPU: the dense
 *   cuda-mx-sm90 bound), per element, NaN and Inf exactly
 *   where the reference has them (special codes, NaN scales and scale
 *   spans too wide for folding, planted in some configurations); (K_g + 4)
 *   * 2^-24 when an operand is NVFP4.  A device whose mxa_query() has no
 *   NATIVE grouped kernel for the scale types must refuse with -EOPNOTSUPP.  Groups of 130 rows and N = 260 / 300 cross the CUDA
 *   kernel's 128 x 256 tiles.
 * - Every malformed request fails with its errno and writes nothing.
 *
 * Buffers are written and read with mxa_buffer_write/read, so the test
 * runs on any device (MXACCEL_TEST_DEVICE=cuda:0).
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

/* Buffers through write and read: no device needs a host mapping. */
static void put(struct mxa_buffer *b, size_t off, const void *src, size_t n)
{
	int ret = n ? mxa_buffer_write(b, off, src, n) : 0;

	if (ret) {
		fprintf(stderr, "mxa_buffer_write(%zu bytes at %zu): %d\n", n, off,
			ret);
		exit(1);
	}
}

static void get(struct mxa_buffer *b, size_t off, void *dst, size_t n)
{
	int ret = n ? mxa_buffer_read(b, off, dst, n) : 0;

	if (ret) {
		fprintf(stderr, "mxa_buffer_read(%zu bytes at %zu): %d\n", n, off,
			ret);
		exit(1);
	}
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
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
	d = xmalloc(nr * row_bytes(h, nk));
	s = xmalloc((size_t)nr * nb);
	for (r = 0; r < nr; r++) {
		pack_row(h, r0 + r, k0, nk, d + r * row_bytes(h, nk));
		memcpy(s + (size_t)r * nb,
		       h->scale + (size_t)(r0 + r) * (h->cols / h->block) +
		       k0 / h->block, nb);
	}
	put(m.data, 0, d, nr * row_bytes(h, nk));
	put(m.scale, 0, s, (size_t)nr * nb);
	free(d);
	free(s);
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
	d = xmalloc((size_t)h->rows * row_bytes(h, h->cols));
	for (r = 0; r < h->rows; r++)
		pack_row(h, r, 0, h->cols, d + r * row_bytes(h, h->cols));
	put(m.data, 0, d, (size_t)h->rows * row_bytes(h, h->cols));
	free(d);
	if (layout == MXA_LAYOUT_PLAIN) {
		m.scale = buffer(dev, (size_t)h->rows * nb);
		put(m.scale, 0, h->scale, (size_t)h->rows * nb);
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
	s = calloc(bytes ? bytes : 1, 1);
	if (!s) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
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
	put(m.scale, 0, s, bytes);
	free(s);
	return m;
}

/*
 * Element (r, k)'s value (code * block scale [* tensor scale]) as a double
 * (NaN for NaN codes and scales).
 */
static double value(const struct host_op *h, uint32_t r, uint32_t k)
{
	double v = test_elem_value(h->elem, h->code[(size_t)r * h->cols + k]);
	uint8_t s = h->scale[(size_t)r * (h->cols / h->block) + k / h->block];

	if (h->st != MXA_SCALE_UE4M3)
		return v * test_scale_value(s);
	v *= test_elem_value(MXA_ELEM_E4M3, s);
	return h->tensor_scale != 0 ? v * h->tensor_scale : v;
}

/*
 * Special values at fixed places of an operand (rows that exist).  MX:
 * Inf and NaN codes where the element type has them, a NaN scale, and a
 * row whose scales span 67 binades (more than any element type folds
 * exactly into bf16 operands, so such tiles take a device's slow path).
 * NVFP4 (no special codes): NaN scales (0x7f, 0xff) and UE4M3's extremes,
 * the smallest subnormal 2^-9 and the largest 448.
 */
static void plant_specials(struct host_op *h, bool is_a, uint32_t n)
{
	const bool nv = h->st == MXA_SCALE_UE4M3;
	const uint32_t nb = h->cols / h->block;
	const bool fp8 = h->elem == MXA_ELEM_E4M3 || h->elem == MXA_ELEM_E5M2;
	const uint8_t nan = 0x7f;	/* e4m3 and e5m2 */
	const struct { uint32_t r, k; uint8_t code; } codes[] = {
		{ 10, 7, 0x7c }, { 20, 33, 0xfc }, { 40, 50, nan },
		{ 3 * n + 2, 40, nan }, { 4 * n + 1, 3, 0x7c },
	};
	/* rn: NVFP4's row (B's NaN scale in a group that has rows of A). */
	const struct { uint32_t r, rn, b; uint8_t s, nv; } scales[] = {
		{ 70, 70, 1, 0xff, 0x7f }, { 100, 100, 0, 60, 0x01 },
		{ 3 * n + 4, 3 * n + 4, 0, 60, 0x7e },
		{ 2 * n + 7, 4 * n + 7, 1, 0xff, 0xff },
	};
	unsigned int i;

	/* Rows past the operand's wrap around: small ones get them too. */
	for (i = 0; i < TEST_ARRAY_SIZE(codes); i++) {
		uint8_t c = codes[i].code;

		/* A: the first three; B: the last two.  Inf only in e5m2. */
		if ((i < 3) != is_a || !fp8)
			continue;
		if (c != nan && h->elem != MXA_ELEM_E5M2)
			continue;
		h->code[(size_t)(codes[i].r % h->rows) * h->cols +
			codes[i].k % h->cols] = c;
	}
	for (i = 0; i < TEST_ARRAY_SIZE(scales); i++) {
		if ((i < 2) != is_a)
			continue;
		h->scale[(size_t)((nv ? scales[i].rn : scales[i].r) % h->rows) *
			 nb + scales[i].b % nb] = nv ? scales[i].nv : scales[i].s;
	}
}

struct config {
	const char *name;
	enum mxa_group_kind kind;
	enum mxa_elem ea, eb;
	bool nva, nvb;		/* NVFP4 operands */
	enum mxa_scale_layout layout;
	enum mxa_dtype dtype;
	bool accumulate;
	uint32_t n, k;		/* 0: 5 and, 2d x 3d, 64 */
	bool specials;		/* plant_specials() in both operands */
	uint32_t m;		/* 2d x 2d: rows of A (0: 7) */
};

static const uint32_t dsize[2] = { 4, 2 };

/* Failures printed per configuration; the rest are counted. */
#define SHOWN 12

/*
 * NATIVE group g (rows x n results at got) against the exact ones (ref):
 * NaN where ref is NaN, the same infinity where it is infinite, else
 * |v - x| <= gamma * (sum |a*b| + |C_in|) + half an ulp of x, gamma
 * (K_g + 1) * 2^-24, or on a GPU for 2d x 2d (each group through the
 * dense cuda-mx-sm90 paths) their stated 2^-9 + (K_g / 32 + 1) * 2^-24
 * (bf16: of x and of v, both one rounding away, Documentation/numerics.rst).
 * Returns the number of elements out of bound.
 */
static unsigned int check_native(const struct config *cf, double gamma,
				 const struct host_op *ha,
				 const struct host_op *hb, uint32_t g,
				 uint32_t lo, uint32_t kg, uint32_t rows,
				 uint32_t n, const uint8_t *got,
				 const uint8_t *ref, const uint8_t *in,
				 unsigned int shown)
{
	bool mk = cf->kind == MXA_GROUP_2D_3D;
	uint32_t es = dsize[cf->dtype], i, j, kk;
	unsigned int mb = es == 2 ? 7 : 23, bad = 0;

	for (i = 0; i < rows; i++) {
		for (j = 0; j < n; j++) {
			size_t at = ((size_t)i * n + j) * es;
			uint32_t vb = 0, rb = 0, cb = 0;
			uint32_t ar = mk ? lo + i : i, br = mk ? g * n + j : j;
			uint32_t k0 = mk ? 0 : lo;
			double v, x, s = 0, cv = 0;
			bool ok;

			memcpy(&vb, got + at, es);
			memcpy(&rb, ref + at, es);
			memcpy(&cb, in + at, es);
			v = test_float_value(vb, mb);
			x = test_float_value(rb, mb);
			if (isnan(x)) {
				ok = isnan(v);
			} else if (isinf(x)) {
				ok = v == x;
			} else {
				if (cf->accumulate)
					cv = fabs(test_float_value(cb, mb));
				for (kk = 0; kk < kg; kk++)
					s += fabs(value(ha, ar, k0 + kk) *
						  value(hb, br, k0 + kk));
				/* bf16: c and c_ref both one rounding away. */
				s = gamma * (s + cv) +
				    (es == 2 ? 0x1p-8 * (fabs(x) + fabs(v)) :
					       0x1p-24 * fabs(x)) + 0x1p-149;
				ok = fabs(v - x) <= s;
			}
			if (ok)
				continue;
			if (shown + bad < SHOWN)
				test_fail(__FILE__, __LINE__,
					  "%s: NATIVE group %u C[%u][%u] (row %u of C) = %g (0x%x), exact %g (0x%x), bound %g",
					  cf->name, g, i, j,
					  mk ? lo + i : g * rows + i, v, vb, x,
					  rb, s);
			bad++;
		}
	}
	return bad;
}

/*
 * The reference of every group into ref (C's bytes, from C_in): mxa_gemm()
 * EMULATED on the cpu of operands copied out of the group; an empty K
 * group's C is 0, or C_in rounded (a NaN the default one, -0 + 0 = +0).
 */
static void reference(struct mxa_device *cpu, const struct config *cf,
		      const struct host_op *ha, const struct host_op *hb,
		      const int32_t *ends, uint32_t count, uint32_t m,
		      uint32_t n, uint32_t k, uint8_t *ref)
{
	bool mk = cf->kind == MXA_GROUP_2D_3D;
	uint32_t es = dsize[cf->dtype], g, j;
	uint32_t flags = cf->accumulate ? MXA_GEMM_ACCUMULATE : 0;

	for (g = 0; g < count; g++) {
		uint32_t lo = g ? (uint32_t)ends[g - 1] : 0;
		uint32_t size = (uint32_t)ends[g] - lo;
		uint32_t r0 = mk ? lo : g * m, rows = mk ? size : m;
		uint8_t *c = ref + (size_t)r0 * n * es;
		struct mxa_matrix pa, pb;
		struct mxa_dense pc;

		if (!size && mk)
			continue;
		if (!size) {
			for (j = 0; j < rows * n; j++) {
				uint32_t w = 0;

				if (cf->accumulate)
					memcpy(&w, c + j * es, es);
				if (es == 4 && test_isnan_bits(w, 23))
					w = 0x7fc00000;
				if (es == 2 && test_isnan_bits(w, 7))
					w = 0x7fc0;
				if (w == 0x80000000 || (es == 2 && w == 0x8000))
					w = 0;
				memcpy(c + j * es, &w, es);
			}
			continue;
		}
		pa = part(cpu, ha, mk ? lo : 0, mk ? size : m, mk ? 0 : lo,
			  mk ? k : size);
		pb = part(cpu, hb, mk ? g * n : 0, n, mk ? 0 : lo,
			  mk ? k : size);
		pc = (struct mxa_dense){ .buf = buffer(cpu, (size_t)rows * n * es),
					 .dtype = cf->dtype, .rows = rows,
					 .cols = n };
		put(pc.buf, 0, c, (size_t)rows * n * es);
		CHECK_RET(mxa_gemm(cpu, &pa, &pb, &pc, flags,
				   MXA_PREF_EMULATED), 0);
		get(pc.buf, 0, c, (size_t)rows * n * es);
		release(&pa);
		release(&pb);
		mxa_buffer_free(pc.buf);
	}
}

/* The query a configuration's grouped request makes. */
static struct mxa_op_desc desc_of(const struct config *cf, uint32_t m,
				  uint32_t n, uint32_t k)
{
	return (struct mxa_op_desc){
		.op = MXA_OP_GEMM_GROUPED,
		.a_elem = cf->nva ? MXA_ELEM_E2M1 : cf->ea,
		.b_elem = cf->nvb ? MXA_ELEM_E2M1 : cf->eb,
		.a_scale_type = cf->nva ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.b_scale_type = cf->nvb ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0,
		.dtype = cf->dtype, .m = m, .n = n, .k = k,
		.flags = cf->accumulate ? MXA_GEMM_ACCUMULATE : 0,
	};
}

/* Run one configuration: grouped vs the per-group reference. */
static void run_config(struct mxa_device *dev, struct mxa_device *cpu,
		       const struct config *cf, const int32_t *ends,
		       uint32_t count)
{
	bool mk = cf->kind == MXA_GROUP_2D_3D;
	uint32_t m = mk ? (uint32_t)ends[count - 1] : cf->m ? cf->m : 7;
	uint32_t n = cf->n ? cf->n : 5;
	uint32_t k = mk ? (cf->k ? cf->k : 64) : (uint32_t)ends[count - 1];
	uint32_t crows = mk ? m : count * m, es = dsize[cf->dtype];
	uint32_t i, g, flags = cf->accumulate ? MXA_GEMM_ACCUMULATE : 0;
	struct mxa_op_desc d = desc_of(cf, m, n, k);
	struct host_op ha, hb;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *obuf;
	struct mxa_grouped gr;
	uint8_t *cin, *cref, *got;
	size_t cbytes = (size_t)crows * n * es;
	unsigned int bad = 0;
	int ret;

	host_op_init(&ha, cf->ea, cf->nva, 0x1.3p-3f, m, k);
	host_op_init(&hb, cf->eb, cf->nvb, 0x1.7ffffep+4f,
		     mk ? count * n : n, k);
	if (cf->specials) {
		plant_specials(&ha, true, n);
		plant_specials(&hb, false, n);
	}
	a = grouped_operand(dev, &ha, cf->layout, mk ? BY_ROWS : BY_COLS,
			    ends, count);
	b = grouped_operand(dev, &hb, cf->layout, mk ? STACK : BY_COLS, ends,
			    count);
	obuf = buffer(dev, 8 + count * 4);
	put(obuf, 8, ends, count * 4);
	gr = (struct mxa_grouped){ .kind = cf->kind, .count = count,
				   .offsets = obuf, .offsets_offset = 8 };
	cin = xmalloc(cbytes);
	cref = xmalloc(cbytes);
	got = xmalloc(cbytes);
	for (i = 0; i < crows * n; i++) {
		uint32_t bits = test_f32_bits(test_rand_float(8));

		if (es == 2)
			bits >>= 16;
		memcpy(cin + i * es, &bits, es);
	}
	memcpy(cref, cin, cbytes);
	reference(cpu, cf, &ha, &hb, ends, count, m, n, k, cref);
	if (cf->specials) {
		unsigned int nan = 0, inf = 0;

		for (i = 0; i < crows * n; i++) {
			uint32_t v = 0;
			double x;

			memcpy(&v, cref + i * es, es);
			x = test_float_value(v, es == 2 ? 7 : 23);
			nan += isnan(x) != 0;
			inf += isinf(x) != 0;
		}
		printf("%s: %u NaN and %u infinite results of %u\n", cf->name,
		       nan, inf, crows * n);
		/* With 20 rows of A the NaN scale of row 10 hides its Inf. */
		CHECK(nan && (inf || cf->ea != MXA_ELEM_E5M2 || m < 100),
		      "%s: the planted special values gave %u NaN, %u Inf",
		      cf->name, nan, inf);
	}
	c = (struct mxa_dense){ .buf = buffer(dev, cbytes), .dtype = cf->dtype,
				.rows = crows, .cols = n };

	/* EMULATED, where the device has it: the reference, byte for byte. */
	if (test_supports(dev, &d, MXA_PREF_EMULATED)) {
		put(c.buf, 0, cin, cbytes);
		CHECK_RET(mxa_gemm_grouped(dev, &a, &b, &c, &gr, flags,
					   MXA_PREF_EMULATED), 0);
		get(c.buf, 0, got, cbytes);
		for (i = 0; i < crows * n * es && bad < SHOWN; i++) {
			if (got[i] == cref[i])
				continue;
			CHECK(0, "%s: EMULATED C[%u][%u] byte %u = 0x%02x, the group's mxa_gemm() gives 0x%02x",
			      cf->name, i / es / n, i / es % n, i % es, got[i],
			      cref[i]);
			bad++;
		}
	}

	put(c.buf, 0, cin, cbytes);
	ret = mxa_gemm_grouped(dev, &a, &b, &c, &gr, flags, MXA_PREF_NATIVE);
	if (!test_supports(dev, &d, MXA_PREF_NATIVE)) {
		CHECK(ret == -EOPNOTSUPP,
		      "%s: NATIVE, which mxa_query() refuses, returned %d, want -EOPNOTSUPP",
		      cf->name, ret);
	} else {
		struct mxa_plan plan;
		bool skinny;

		CHECK(!ret, "%s: NATIVE returned %d", cf->name, ret);
		CHECK_RET(mxa_plan(dev, &d, MXA_PREF_NATIVE, &plan), 0);
		skinny = !strcmp(plan.kernel, "cuda-grouped-sm90-skinny");
		get(c.buf, 0, got, cbytes);
		for (g = 0; g < count && !ret; g++) {
			uint32_t lo = g ? (uint32_t)ends[g - 1] : 0;
			uint32_t size = (uint32_t)ends[g] - lo;
			uint32_t r0 = mk ? lo : g * m, rows = mk ? size : m;
			size_t at = (size_t)r0 * n * es;

			/* An empty K group's C is C_in + 0 (checked too). */
			const uint32_t nv = cf->nva || cf->nvb ? 4 : 1;
			double gamma = (size + nv) * 0x1p-24;

			if (mk && skinny)	/* the dense skinny kernel's */
				gamma = 0x1p-9 + (nv == 4 ? k / 16 + 4 : k / 32 + 1) * 0x1p-24;
			else if (mk)
				gamma = (k + nv) * 0x1p-24;
			else if (!test_is_cpu(dev))
				gamma = 0x1p-9 + (size / 32 + 1) * 0x1p-24;
			bad += check_native(cf, gamma, &ha, &hb, g, lo, mk ? k : size,
					    rows, n, got + at, cref + at,
					    cin + at, bad);
		}
		if (bad > SHOWN)
			CHECK(0, "%s: %u NATIVE results out of bound in all",
			      cf->name, bad);
	}
	free(cin);
	free(cref);
	free(got);
	mxa_buffer_free(c.buf);
	mxa_buffer_free(obuf);
	release(&a);
	release(&b);
	host_op_free(&ha);
	host_op_free(&hb);
}

static void test_semantics(struct mxa_device *dev, struct mxa_device *cpu)
{
	/* Ragged M groups with empty ones; K groups on 32-multiples. */
	static const int32_t m_ends[] = { 0, 3, 3, 133, 140, 140 };
	/* A decode step: 20 rows of A in all (CUDA: the skinny kernel). */
	static const int32_t m_small[] = { 0, 3, 3, 17, 20, 20 };
	static const int32_t k_ends[] = { 64, 64, 96, 224, 224 };
	/*
	 * Longer K groups (CUDA: more chunks than its pipeline's stages), an
	 * empty first one, odd block counts (a chunk's tail in the next group).
	 */
	static const int32_t k_long[] = { 0, 352, 352, 1056, 1088 };
	static const int32_t k16_ends[] = { 16, 16, 80, 208, 224 };
	static const int32_t one[] = { 37 };
	/* Groups across CUDA's units of 256 rows of A (its swapped mapping). */
	static const int32_t m_large[] = { 0, 3, 300, 300, 560, 700 };
	static const struct config configs[] = {
		{ "2d3d e4m3 x e4m3 plain f32", MXA_GROUP_2D_3D, MXA_ELEM_E4M3,
		  MXA_ELEM_E4M3, false, false, MXA_LAYOUT_PLAIN, MXA_DTYPE_F32,
		  false, 0, 0, false, 0 },
		{ "2d3d e2m1 x e5m2 swizzled bf16 acc", MXA_GROUP_2D_3D,
		  MXA_ELEM_E2M1, MXA_ELEM_E5M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, true, 0, 0, false, 0 },
		{ "2d3d nvfp4 x nvfp4 swizzled f32 acc", MXA_GROUP_2D_3D, 0, 0,
		  true, true, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true, 0, 0, false, 0 },
		{ "2d3d nvfp4 x e3m2 plain bf16", MXA_GROUP_2D_3D, 0,
		  MXA_ELEM_E3M2, true, false, MXA_LAYOUT_PLAIN, MXA_DTYPE_BF16,
		  false, 0, 0, false, 0 },
		{ "2d2d e4m3 x e2m1 plain f32 acc", MXA_GROUP_2D_2D,
		  MXA_ELEM_E4M3, MXA_ELEM_E2M1, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_F32, true, 0, 0, false, 0 },
		{ "2d2d e5m2 x e2m3 swizzled bf16", MXA_GROUP_2D_2D,
		  MXA_ELEM_E5M2, MXA_ELEM_E2M3, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, false, 0, 0, false, 0 },
		{ "2d2d nvfp4 x nvfp4 swizzled f32 acc", MXA_GROUP_2D_2D, 0, 0,
		  true, true, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true, 0, 0, false, 0 },
		{ "2d2d e2m1 x nvfp4 plain bf16 acc", MXA_GROUP_2D_2D,
		  MXA_ELEM_E2M1, 0, false, true, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_BF16, true, 0, 0, false, 0 },
		/* Two tile columns (256 + 44), odd K / 32, fp6 both sides. */
		{ "2d3d e2m3 x e3m2 swizzled f32 N=300 K=96", MXA_GROUP_2D_3D,
		  MXA_ELEM_E2M3, MXA_ELEM_E3M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, false, 300, 96, false, 0 },
		{ "2d3d e5m2 x e4m3 plain bf16 acc N=300 K=96 specials",
		  MXA_GROUP_2D_3D, MXA_ELEM_E5M2, MXA_ELEM_E4M3, false, false,
		  MXA_LAYOUT_PLAIN, MXA_DTYPE_BF16, true, 300, 96, true, 0 },
		{ "2d3d e4m3 x e5m2 swizzled f32 N=260 K=128 specials",
		  MXA_GROUP_2D_3D, MXA_ELEM_E4M3, MXA_ELEM_E5M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, false, 260, 128, true, 0 },
		{ "2d2d e5m2 x e5m2 plain f32 specials", MXA_GROUP_2D_2D,
		  MXA_ELEM_E5M2, MXA_ELEM_E5M2, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_F32, false, 0, 0, true, 0 },
		/* NVFP4 across tile columns, K ragged in the kernels' chunks of 64. */
		{ "2d3d nvfp4 x nvfp4 plain bf16 acc N=300 K=208 specials",
		  MXA_GROUP_2D_3D, 0, 0, true, true, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_BF16, true, 300, 208, true, 0 },
		{ "2d3d nvfp4 x nvfp4 swizzled f32 N=260 K=96 specials",
		  MXA_GROUP_2D_3D, 0, 0, true, true, MXA_LAYOUT_SWIZZLED,
		  MXA_DTYPE_F32, false, 260, 96, true, 0 },
		{ "2d2d nvfp4 x nvfp4 plain bf16 specials", MXA_GROUP_2D_2D, 0,
		  0, true, true, MXA_LAYOUT_PLAIN, MXA_DTYPE_BF16, false, 0, 0,
		  true, 0 },
		/*
		 * 2d x 2d past the skinny range (CUDA: every group's tiles in
		 * one launch), two tile rows and columns.
		 */
		{ "2d2d e4m3 x e4m3 plain f32 M=140 N=300", MXA_GROUP_2D_2D,
		  MXA_ELEM_E4M3, MXA_ELEM_E4M3, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_F32, false, 300, 0, false, 140 },
		{ "2d2d e2m1 x e5m2 swizzled bf16 acc M=140 N=300 specials",
		  MXA_GROUP_2D_2D, MXA_ELEM_E2M1, MXA_ELEM_E5M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, true, 300, 0, true, 140 },
		{ "2d2d e3m2 x e2m3 swizzled f32 acc M=200 N=260", MXA_GROUP_2D_2D,
		  MXA_ELEM_E3M2, MXA_ELEM_E2M3, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true, 260, 0, false, 200 },
		{ "2d2d e5m2 x e4m3 plain bf16 M=40 N=16 specials", MXA_GROUP_2D_2D,
		  MXA_ELEM_E5M2, MXA_ELEM_E4M3, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_BF16, false, 16, 0, true, 40 },
		{ "2d2d nvfp4 x nvfp4 swizzled f32 acc M=140 N=300", MXA_GROUP_2D_2D,
		  0, 0, true, true, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true, 300, 0,
		  false, 140 },
		{ "2d2d nvfp4 x nvfp4 plain bf16 M=40 N=16 specials", MXA_GROUP_2D_2D,
		  0, 0, true, true, MXA_LAYOUT_PLAIN, MXA_DTYPE_BF16, false, 16, 0,
		  true, 40 },
		/*
		 * fp8 B with N on 16 and the stack at least A's rows: CUDA
		 * swaps the operands (B's stack in registers); 272 = two
		 * tiles of 128 + 16.
		 */
		{ "2d3d e4m3 x e4m3 plain f32 N=272 K=96", MXA_GROUP_2D_3D,
		  MXA_ELEM_E4M3, MXA_ELEM_E4M3, false, false, MXA_LAYOUT_PLAIN,
		  MXA_DTYPE_F32, false, 272, 96, false, 0 },
		{ "2d3d e2m1 x e5m2 swizzled bf16 acc N=144 K=128 specials",
		  MXA_GROUP_2D_3D, MXA_ELEM_E2M1, MXA_ELEM_E5M2, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_BF16, true, 144, 128, true, 0 },
		{ "2d3d e3m2 x e4m3 swizzled f32 acc N=128 K=224", MXA_GROUP_2D_3D,
		  MXA_ELEM_E3M2, MXA_ELEM_E4M3, false, false,
		  MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, true, 128, 224, false, 0 },
	};
	const unsigned int first_swapped = TEST_ARRAY_SIZE(configs) - 3;
	const unsigned int first_k_wide = first_swapped - 6;
	unsigned int i;

	for (i = 0; i < TEST_ARRAY_SIZE(configs); i++) {
		const struct config *cf = &configs[i];

		if (cf->kind == MXA_GROUP_2D_3D)
			run_config(dev, cpu, cf, m_ends, TEST_ARRAY_SIZE(m_ends));
		else
			run_config(dev, cpu, cf, k_ends, TEST_ARRAY_SIZE(k_ends));
	}
	for (i = first_swapped; i < TEST_ARRAY_SIZE(configs); i++)
		run_config(dev, cpu, &configs[i], m_large, TEST_ARRAY_SIZE(m_large));
	for (i = first_k_wide; i < first_swapped; i++)
		run_config(dev, cpu, &configs[i], k_long, TEST_ARRAY_SIZE(k_long));
	/* A single group is the dense GEMM. */
	run_config(dev, cpu, &configs[1], one, 1);
	run_config(dev, cpu, &configs[first_swapped], one, 1);
	run_config(dev, cpu, &configs[9], one, 1);
	/* NVFP4 x NVFP4 K groups on NVFP4's blocks of 16 (odd ones too). */
	run_config(dev, cpu, &configs[6], k16_ends, TEST_ARRAY_SIZE(k16_ends));
	run_config(dev, cpu, &configs[first_swapped - 2], k16_ends, TEST_ARRAY_SIZE(k16_ends));
	run_config(dev, cpu, &configs[first_swapped - 1], k16_ends, TEST_ARRAY_SIZE(k16_ends));
	/*
	 * The most groups a call takes (MXA_GROUPS_MAX), all but the last
	 * two empty: more groups than a CUDA grid's y extent.
	 */
	{
		const struct config many = { "2d2d e4m3 x e4m3 plain f32 acc M=33 N=1, 65536 groups",
					     MXA_GROUP_2D_2D, MXA_ELEM_E4M3, MXA_ELEM_E4M3,
					     false, false, MXA_LAYOUT_PLAIN, MXA_DTYPE_F32,
					     true, 1, 0, false, 33 };
		int32_t *ends = calloc(MXA_GROUPS_MAX, sizeof(*ends));

		if (!ends) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		ends[MXA_GROUPS_MAX - 2] = 32;
		ends[MXA_GROUPS_MAX - 1] = 96;
		run_config(dev, cpu, &many, ends, MXA_GROUPS_MAX);
		free(ends);
	}
	/* Decode steps: every 2d x 3d configuration with 20 rows of A. */
	for (i = 0; i < TEST_ARRAY_SIZE(configs); i++)
		if (configs[i].kind == MXA_GROUP_2D_3D)
			run_config(dev, cpu, &configs[i], m_small,
				   TEST_ARRAY_SIZE(m_small));
	printf("%u configurations and their decode steps: grouped == per-group mxa_gemm (EMULATED), within bound (NATIVE)\n",
	       (unsigned int)TEST_ARRAY_SIZE(configs) + 16);
}

/* A valid 2d x 3d request (3 groups) whose fields the error cases break. */
struct req {
	struct host_op ha, hb;
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *obuf;
	struct mxa_grouped gr;
	int32_t ends[4];	/* host copy of obuf's first 16 bytes */
};

/* C filled with 0xcc, to see that a refused request writes nothing. */
static void fill_cc(struct mxa_buffer *c)
{
	size_t n = mxa_buffer_size(c);
	uint8_t *cc = xmalloc(n);

	memset(cc, 0xcc, n);
	put(c, 0, cc, n);
	free(cc);
}

/* ends[i] = v, on the device too. */
static void set_end(struct req *r, unsigned int i, int32_t v)
{
	r->ends[i] = v;
	put(r->obuf, 0, r->ends, sizeof(r->ends));
}

/*
 * k_rows: 2d x 2d's rows of A (C has 3 x k_rows); nvfp4: both operands
 * NVFP4, whose 2d x 2d groups end on multiples of 16, not 32.
 */
static void req_init_as(struct mxa_device *dev, struct req *r,
			enum mxa_group_kind kind, enum mxa_scale_layout layout,
			uint32_t k_rows, bool nvfp4)
{
	static const int32_t m_ends[] = { 2, 2, 9 };
	const int32_t k_ends[] = { nvfp4 ? 16 : 32, nvfp4 ? 16 : 32, 96 };
	bool mk = kind == MXA_GROUP_2D_3D;
	const int32_t *ends = mk ? m_ends : k_ends;

	host_op_init(&r->ha, MXA_ELEM_E4M3, nvfp4, 0.5f, mk ? 9 : k_rows,
		     mk ? 64 : 96);
	host_op_init(&r->hb, MXA_ELEM_E4M3, nvfp4, 0.25f, mk ? 9 : 3,
		     mk ? 64 : 96);
	r->a = grouped_operand(dev, &r->ha, layout, mk ? BY_ROWS : BY_COLS,
			       ends, 3);
	r->b = grouped_operand(dev, &r->hb, layout, mk ? STACK : BY_COLS, ends,
			       3);
	r->c = (struct mxa_dense){ .buf = buffer(dev, (mk ? 9 : 3 * k_rows) * 3 * 4),
				   .dtype = MXA_DTYPE_F32, .rows = mk ? 9 : 3 * k_rows,
				   .cols = 3 };
	fill_cc(r->c.buf);
	r->obuf = buffer(dev, 16);
	memset(r->ends, 0, sizeof(r->ends));
	memcpy(r->ends, ends, 12);
	put(r->obuf, 0, r->ends, sizeof(r->ends));
	r->gr = (struct mxa_grouped){ .kind = kind, .count = 3,
				      .offsets = r->obuf };
}

static void req_init(struct mxa_device *dev, struct req *r,
		     enum mxa_group_kind kind, enum mxa_scale_layout layout)
{
	req_init_as(dev, r, kind, layout, 4, false);
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
	size_t i, n = mxa_buffer_size(r->c.buf);
	uint8_t *p = xmalloc(n);
	bool same = true;

	get(r->c.buf, 0, p, n);
	for (i = 0; i < n; i++)
		if (p[i] != 0xcc)
			same = false;
	free(p);
	return same;
}

#define EXPECT(r, call, err, what)                                          \
	do {                                                                \
		int __r = (call);                                           \
		CHECK(__r == (err), "%s: returned %d, want %d", what, __r,  \
		      (int)(err));                                          \
		CHECK(untouched(r), "%s: C was written", what);             \
	} while (0)

/*
 * The errors: under EMULATED where the device has it, else NATIVE (the
 * ends in device memory are then checked by the device's kernel).
 */
static void test_errors(struct mxa_device *dev)
{
	const struct config e4m3 = { .ea = MXA_ELEM_E4M3, .eb = MXA_ELEM_E4M3 };
	struct mxa_op_desc d = desc_of(&e4m3, 9, 3, 64);
	enum mxa_pref pref = test_supports(dev, &d, MXA_PREF_EMULATED) ?
			     MXA_PREF_EMULATED : MXA_PREF_NATIVE;
	struct mxa_device *other = NULL;
	struct mxa_buffer *small;
	struct mxa_grouped gr;
	struct mxa_matrix m;
	struct mxa_dense c;
	struct req r;
	int ret;

#define RUN(g) mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, (g), 0, pref)
	req_init(dev, &r, MXA_GROUP_2D_3D, MXA_LAYOUT_PLAIN);
	CHECK_RET(RUN(&r.gr), 0);
	fill_cc(r.c.buf);
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
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, &r.gr, 2, pref),
	       -EINVAL, "flags");
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
	set_end(&r, 1, 1);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "decreasing ends");
	set_end(&r, 1, 2);
	set_end(&r, 0, -1);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "negative end");
	set_end(&r, 0, 2);
	set_end(&r, 2, 8);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end below total_M");
	set_end(&r, 2, 10);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end beyond total_M");
	set_end(&r, 2, 9);
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
	put(small, gr.offsets_offset, r.ends, 12);
	CHECK_RET(mxa_gemm_grouped(dev, &r.a, &r.b, &c, &gr, 0, 0), -EINVAL);
	mxa_buffer_free(small);
	req_free(&r);

	/* Swizzled A sized for the whole matrix, not per group: too small. */
	req_init(dev, &r, MXA_GROUP_2D_3D, MXA_LAYOUT_SWIZZLED);
	CHECK_RET(RUN(&r.gr), 0);
	fill_cc(r.c.buf);
	m = r.a;
	m.scale = buffer(dev, 128 * 4);		/* 9 rows, one tile */
	EXPECT(&r, mxa_gemm_grouped(dev, &m, &r.b, &r.c, &r.gr, 0, 0),
	       -EOVERFLOW, "swizzled a scales without per-group padding");
	mxa_buffer_free(m.scale);
	req_free(&r);

	/* 2d x 2d: K boundaries on blocks, c = count * M rows. */
	req_init(dev, &r, MXA_GROUP_2D_2D, MXA_LAYOUT_SWIZZLED);
	ret = RUN(&r.gr);
	CHECK(!ret, "a valid 2d x 2d request returned %d", ret);
	fill_cc(r.c.buf);
	set_end(&r, 0, 16);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "K boundary off the block");
	set_end(&r, 0, 32);
	set_end(&r, 2, 64);
	EXPECT(&r, RUN(&r.gr), -EINVAL, "last end below total_K");
	set_end(&r, 2, 96);
	c = r.c;
	c.rows = 4;
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &c, &r.gr, 0, 0), -EINVAL,
	       "2d x 2d c not count * M rows");
	req_free(&r);
#undef RUN
	printf("malformed requests: each refused with its errno, C untouched\n");
}

/*
 * 2d x 2d's device-side offsets and per-group swizzled scales under
 * NATIVE, MX (groups on 32) and NVFP4 (groups on 16): each malformed
 * request refused with its errno, C untouched, the well-formed one run.
 */
static void errors_2d2d_native(struct mxa_device *dev, bool nvfp4)
{
	const struct config cf = { .ea = MXA_ELEM_E4M3, .eb = MXA_ELEM_E4M3,
				   .nva = nvfp4, .nvb = nvfp4 };
	const int32_t blk = nvfp4 ? 16 : 32;
	/* The whole K's swizzled scales: columns of 4 blocks, 128 rows x 4 bytes each. */
	const size_t whole = (size_t)(96 / blk + 3) / 4 * 128 * 4;
	struct mxa_op_desc d = desc_of(&cf, 40, 3, 96);
	const char *fmt = nvfp4 ? "NVFP4" : "MX";
	char what[96];
	struct mxa_matrix m;
	struct req r;

	if (!test_supports(dev, &d, MXA_PREF_NATIVE))
		return;
#define RUN(pa, pb) mxa_gemm_grouped(dev, (pa), (pb), &r.c, &r.gr, 0, MXA_PREF_NATIVE)
#define WHAT(s) (snprintf(what, sizeof(what), "NATIVE %s 2d x 2d: %s", fmt, (s)), what)
	req_init_as(dev, &r, MXA_GROUP_2D_2D, MXA_LAYOUT_SWIZZLED, 40, nvfp4);
	CHECK_RET(RUN(&r.a, &r.b), 0);
	fill_cc(r.c.buf);
	set_end(&r, 0, blk / 2);
	EXPECT(&r, RUN(&r.a, &r.b), -EINVAL, WHAT("K boundary off the block"));
	set_end(&r, 0, blk);
	set_end(&r, 1, 0);
	EXPECT(&r, RUN(&r.a, &r.b), -EINVAL, WHAT("decreasing ends"));
	set_end(&r, 1, blk);
	set_end(&r, 2, 128);
	EXPECT(&r, RUN(&r.a, &r.b), -EINVAL, WHAT("last end beyond total_K"));
	set_end(&r, 2, 64);
	EXPECT(&r, RUN(&r.a, &r.b), -EINVAL, WHAT("last end below total_K"));
	set_end(&r, 2, 96);
	/*
	 * One block, none, the rest per group: each group's scales start a
	 * new column of 4 blocks, one column more than the whole K's.
	 */
	m = r.a;
	m.scale = buffer(dev, whole);
	EXPECT(&r, RUN(&m, &r.b), -EOVERFLOW,
	       WHAT("a's swizzled scales without per-group padding"));
	mxa_buffer_free(m.scale);
	m = r.b;
	m.scale = buffer(dev, whole);
	EXPECT(&r, RUN(&r.a, &m), -EOVERFLOW,
	       WHAT("b's swizzled scales without per-group padding"));
	mxa_buffer_free(m.scale);
	CHECK_RET(RUN(&r.a, &r.b), 0);
	req_free(&r);
#undef WHAT
#undef RUN
	printf("malformed %s 2d x 2d requests under NATIVE: each refused with its errno, C untouched\n",
	       fmt);
}

static void test_errors_2d2d_native(struct mxa_device *dev)
{
	errors_2d2d_native(dev, false);
	errors_2d2d_native(dev, true);
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
	set_end(&r, 1, 1);
	EXPECT(&r, mxa_gemm_grouped(dev, &r.a, &r.b, &r.c, &r.gr, 0,
				    MXA_PREF_AUTO), -EINVAL,
	       "decreasing ends, validated before dispatch");
	req_free(&r);
	return true;
}

int main(void)
{
	struct mxa_device *dev, *cpu;

	test_seed(20261202);
	dev = test_open_device();
	cpu = test_open_cpu();
	if (test_is_cpu(dev))
		test_query(dev);
	else if (refused(dev))
		goto out;
	test_semantics(dev, cpu);
	test_errors(dev);
	test_errors_2d2d_native(dev);
out:
	mxa_device_close(cpu);
	mxa_device_close(dev);
	return test_finish();
}
