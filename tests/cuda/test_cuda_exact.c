// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's exact GEMMs against the CPU's, byte for byte:
 *
 * - cuda-exact == cpu-exact on NVFP4 x NVFP4, NVFP4 x MX, MX x NVFP4 and
 *   MX x MX operands;
 * - cuda-weight-only-exact == cpu-weight-only-exact (fp32 / bf16 A, MX or
 *   NVFP4 B);
 * - cuda-grouped-exact == cpu-grouped-exact, 2D_3D and 2D_2D, offsets in
 *   device memory with empty groups;
 *
 * each on random ragged shapes with special codes (NaN, Inf), NaN and
 * zero scales, scales over the whole E8M0 / UE4M3 range, fp32 tensor
 * scales (normal and subnormal), plain and swizzled scales, offsets and
 * strides, fp32 and bf16 C with and without C_in.  The same bytes go to a
 * cpu and a cuda:0 buffer; the whole C buffers (padding included) are
 * compared.  Then the offset rules the GPU checks itself: bad offsets are
 * refused with the library's errno and leave C untouched.
 *
 * Skips (77) where no CUDA device is found.  MXACCEL_TEST_QUICK=1 runs
 * fewer cases (compute-sanitizer).
 *
 * Built with CUDA_EXACT_HOST (test_cuda_exact_host, by make check where
 * nvcc is found), the same cases run the kernels of cuda_exact.cuh on the
 * host instead (tests/cuda/cuda_exact_host.cpp), on a second cpu device's
 * buffers: their logic (segments, group search, geometry, the offset
 * checks) is tested without a GPU; the GPU run tests the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"
#ifdef CUDA_EXACT_HOST
#include "cuda_exact_host.h"
#endif

static struct mxa_device *cuda, *cpu;
static unsigned int n_cases[3], n_outputs[3], n_printed;


/* The operations on "cuda" (EMULATED: the exact kernels). */
static int gpu_gemm(const struct mxa_matrix *a, const struct mxa_matrix *b,
		    const struct mxa_dense *c, uint32_t flags)
{
#ifdef CUDA_EXACT_HOST
	return host_gemm_exact(a, b, c, flags);
#else
	return mxa_gemm(cuda, a, b, c, flags, MXA_PREF_EMULATED);
#endif
}

static int gpu_weight_only(const struct mxa_dense *a,
			   const struct mxa_matrix *b,
			   const struct mxa_dense *c, uint32_t flags)
{
#ifdef CUDA_EXACT_HOST
	return host_gemm_weight_only_exact(a, b, c, flags);
#else
	return mxa_gemm_weight_only(cuda, a, b, c, flags, MXA_PREF_EMULATED);
#endif
}

static int gpu_grouped(const struct mxa_matrix *a, const struct mxa_matrix *b,
		       const struct mxa_dense *c, const struct mxa_grouped *g,
		       uint32_t flags)
{
#ifdef CUDA_EXACT_HOST
	return host_gemm_grouped_exact(a, b, c, g, flags);
#else
	return mxa_gemm_grouped(cuda, a, b, c, g, flags, MXA_PREF_EMULATED);
#endif
}
/* Shapes the error cases need (0: random). */
static uint32_t force_m, force_k;

/* --- the same bytes on both devices ---------------------------------- */

struct twin {
	struct mxa_buffer *cpu, *gpu;
	uint8_t *host;		/* what both were given */
	size_t size;
};

static void twin_init(struct twin *t, size_t size)
{
	t->size = size ? size : 1;
	t->host = malloc(t->size);
	if (!t->host || mxa_buffer_alloc(cpu, t->size, &t->cpu) ||
	    mxa_buffer_alloc(cuda, t->size, &t->gpu)) {
		fprintf(stderr, "FAIL: cannot allocate %zu bytes\n", t->size);
		exit(1);
	}
}

static void twin_upload(struct twin *t)
{
	if (mxa_buffer_write(t->cpu, 0, t->host, t->size) ||
	    mxa_buffer_write(t->gpu, 0, t->host, t->size)) {
		fprintf(stderr, "FAIL: cannot write a buffer\n");
		exit(1);
	}
}

static void twin_free(struct twin *t)
{
	mxa_buffer_free(t->cpu);
	mxa_buffer_free(t->gpu);
	free(t->host);
}

/* --- random operands ------------------------------------------------- */

/* How wild a case's values are. */
struct wild {
	bool specials;		/* NaN / Inf codes, NaN and zero scales */
	bool wide;		/* scales over the whole range */
};

static bool chance(unsigned int one_in)
{
	return !test_rand_below(one_in);
}

static bool is_special_code(enum mxa_elem elem, uint8_t c)
{
	if (elem == MXA_ELEM_E4M3)
		return (c & 0x7f) == 0x7f;
	if (elem == MXA_ELEM_E5M2)
		return (c & 0x7c) == 0x7c;
	return false;
}

static uint8_t rand_code_byte(enum mxa_elem elem, const struct wild *w)
{
	uint8_t c = (uint8_t)test_rand();

	if (elem == MXA_ELEM_E2M3 || elem == MXA_ELEM_E3M2)
		return c & 0x3f;
	if (elem == MXA_ELEM_E2M1)
		return c;	/* two codes, no specials */
	if (is_special_code(elem, c) && !(w->specials && chance(8)))
		c &= 0xf3;	/* a finite code */
	return c;
}

static uint8_t rand_scale(bool ue4m3, const struct wild *w)
{
	if (ue4m3) {
		if (w->specials && chance(24)) {
			static const uint8_t odd[] = { 0x7f, 0xff, 0x00, 0x80,
						       0xb8, 0x01 };

			return odd[test_rand_below(sizeof(odd))];
		}
		if (w->wide)
			return (uint8_t)(1 + test_rand_below(0x7e));
		return (uint8_t)(0x30 + test_rand_below(0x20));
	}
	if (w->specials && chance(32))
		return 0xff;
	if (w->wide)
		return (uint8_t)test_rand_below(255);
	return (uint8_t)(120 + test_rand_below(16));
}

static float rand_tensor_scale(void)
{
	static const uint32_t bits[] = {
		0x3f800000,	/* 1 */
		0x3e400000,	/* 0.1875 */
		0x3b449ba6,	/* 3e-3 */
		0x43e00000,	/* 448 */
		0x00000001,	/* 2^-149, the least subnormal */
		0x00123456,	/* a subnormal */
		0x00800000,	/* the least normal */
		0x7f7fffff,	/* the largest finite */
	};

	if (chance(3))
		return 0.0f;	/* single level */
	return test_f32(bits[test_rand_below(sizeof(bits) / 4)]);
}

/*
 * An operand of rows x cols (times stack matrices, for 2D_3D's B),
 * codes and scales at random offsets and strides; extra_scale bytes of
 * room after the scales (per-group swizzled layouts need more).
 */
struct opnd {
	struct mxa_matrix m;	/* the cpu's; gpu() makes the cuda one */
	struct twin data, scale;
};

static void opnd_init(struct opnd *o, enum mxa_elem elem, bool nvfp4,
		      enum mxa_scale_layout layout, uint32_t rows,
		      uint32_t cols, uint32_t stack, size_t extra_scale,
		      const struct wild *w)
{
	uint32_t block = nvfp4 ? 16 : 32, blocks = cols / block;
	size_t row_bytes = elem == MXA_ELEM_E2M1 ? cols / 2 : cols;
	size_t i, scale_bytes;
	uint32_t all = rows * stack;

	memset(o, 0, sizeof(*o));
	o->m.elem = elem;
	o->m.scale_layout = layout;
	o->m.rows = rows;
	o->m.cols = cols;
	o->m.scale_type = nvfp4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0;
	o->m.tensor_scale = nvfp4 ? rand_tensor_scale() : 0.0f;
	o->m.data_offset = test_rand_below(3) * 16 + test_rand_below(2) * 3;
	o->m.data_stride = chance(2) ? 0 : row_bytes + test_rand_below(24);
	o->m.scale_offset = test_rand_below(40);
	if (layout == MXA_LAYOUT_PLAIN && chance(2))
		o->m.scale_stride = blocks + test_rand_below(8);
	twin_init(&o->data, o->m.data_offset + (size_t)all *
		  (o->m.data_stride ? o->m.data_stride : row_bytes));
	if (layout == MXA_LAYOUT_SWIZZLED)
		scale_bytes = (size_t)stack * ((rows + 127) / 128 * 128) *
			      ((blocks + 3) / 4 * 4);
	else
		scale_bytes = (size_t)all * (o->m.scale_stride ?
					     o->m.scale_stride : blocks);
	twin_init(&o->scale, o->m.scale_offset + scale_bytes + extra_scale);
	for (i = 0; i < o->data.size; i++)
		o->data.host[i] = rand_code_byte(elem, w);
	for (i = 0; i < o->scale.size; i++)
		o->scale.host[i] = rand_scale(nvfp4, w);
	twin_upload(&o->data);
	twin_upload(&o->scale);
	o->m.data = o->data.cpu;
	o->m.scale = o->scale.cpu;
}

static struct mxa_matrix on_gpu(const struct opnd *o)
{
	struct mxa_matrix m = o->m;

	m.data = o->data.gpu;
	m.scale = o->scale.gpu;
	return m;
}

static void opnd_free(struct opnd *o)
{
	twin_free(&o->data);
	twin_free(&o->scale);
}

/* A random fp32 value: wide exponents, subnormals, specials if wild. */
static uint32_t rand_f32_bits(const struct wild *w)
{
	uint32_t sign = (uint32_t)test_rand_below(2) << 31;
	uint32_t mant = (uint32_t)test_rand() & 0x7fffff;
	uint32_t e;

	if (w->specials && chance(40)) {
		static const uint32_t odd[] = { 0x7f800000, 0x7fc00000,
						0x00000000, 0x00000001 };

		return sign | odd[test_rand_below(4)];
	}
	if (chance(16))
		return sign | mant;				/* subnormal */
	e = w->wide ? 1 + test_rand_below(254) : 110 + test_rand_below(30);
	return sign | e << 23 | mant;
}

/* A dense operand / C: random contents everywhere, padding included. */
struct dense {
	struct mxa_dense d;
	struct twin buf;
};

static void dense_init(struct dense *x, enum mxa_dtype dtype, uint32_t rows,
		       uint32_t cols, const struct wild *w)
{
	size_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4, i;

	memset(x, 0, sizeof(*x));
	x->d.dtype = dtype;
	x->d.rows = rows;
	x->d.cols = cols;
	x->d.offset = test_rand_below(4) * es;
	x->d.stride = chance(2) ? 0 : (cols + test_rand_below(5)) * es;
	twin_init(&x->buf, x->d.offset + (size_t)rows *
		  (x->d.stride ? x->d.stride : cols * es));
	for (i = 0; i + es <= x->buf.size; i += es) {
		uint32_t v = rand_f32_bits(w);

		if (es == 2) {
			uint16_t h = (uint16_t)(v >> 16);

			memcpy(x->buf.host + i, &h, 2);
		} else {
			memcpy(x->buf.host + i, &v, 4);
		}
	}
	twin_upload(&x->buf);
	x->d.buf = x->buf.cpu;
}

static struct mxa_dense dense_gpu(const struct dense *x)
{
	struct mxa_dense d = x->d;

	d.buf = x->buf.gpu;
	return d;
}

/*
 * The two C buffers byte for byte; the first mismatches printed with
 * their element's row and column.
 */
static bool same_c(const struct dense *c, const char *what)
{
	size_t es = c->d.dtype == MXA_DTYPE_BF16 ? 2 : 4;
	size_t stride = c->d.stride ? c->d.stride : c->d.cols * es;
	uint8_t *x = cudatest_read(c->buf.cpu), *y = cudatest_read(c->buf.gpu);
	size_t i, bad = 0;

	for (i = 0; i + es <= c->buf.size; i += es) {
		uint32_t u = 0, v = 0;
		size_t at = i - c->d.offset;

		if (!memcmp(x + i, y + i, es))
			continue;
		if (bad++ >= 4 || n_printed >= 40)
			continue;
		n_printed++;
		memcpy(&u, x + i, es);
		memcpy(&v, y + i, es);
		if (i < c->d.offset)
			fprintf(stderr, "  %s: byte %zu (before C) cpu 0x%x cuda 0x%x\n",
				what, i, u, v);
		else
			fprintf(stderr, "  %s: C[%zu][%zu] cpu 0x%0*x (%g) cuda 0x%0*x (%g)\n",
				what, at / stride, at % stride / es,
				(int)es * 2, u,
				(double)test_f32(es == 2 ? u << 16 : u),
				(int)es * 2, v,
				(double)test_f32(es == 2 ? v << 16 : v));
	}
	if (bad)
		fprintf(stderr, "FAIL: %s: %zu of %zu C elements differ\n", what,
			bad, c->buf.size / es);
	free(x);
	free(y);
	if (bad)
		test_failures++;
	return !bad;
}

static const char *elem_text(enum mxa_elem e, bool nvfp4)
{
	return nvfp4 ? "nvfp4" : mxa_elem_name(e);
}

static const enum mxa_elem elems[] = { MXA_ELEM_E4M3, MXA_ELEM_E5M2,
				       MXA_ELEM_E2M3, MXA_ELEM_E3M2,
				       MXA_ELEM_E2M1 };

static void rand_format(enum mxa_elem *e, bool *nvfp4, bool want_nvfp4)
{
	*nvfp4 = want_nvfp4;
	*e = want_nvfp4 ? MXA_ELEM_E2M1 : elems[test_rand_below(5)];
}

static enum mxa_scale_layout rand_layout(void)
{
	return chance(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
}

static void rand_wild(struct wild *w)
{
	w->specials = chance(3);
	w->wide = chance(3);
}

/* Both devices' return codes: both 0, else a failure with the case. */
static bool both_ok(int rc_cpu, int rc_gpu, const char *what)
{
	if (!rc_cpu && !rc_gpu)
		return true;
	fprintf(stderr, "FAIL: %s: cpu returned %d (%s), cuda %d (%s)\n",
		what, rc_cpu, mxa_strerror(rc_cpu), rc_gpu,
		mxa_strerror(rc_gpu));
	test_failures++;
	return false;
}

/* --- cuda-exact ------------------------------------------------------- */

static void gemm_case(unsigned int mix)
{
	struct opnd a, b;
	struct dense c;
	struct wild w;
	struct mxa_matrix ga, gb;
	struct mxa_dense gc;
	enum mxa_elem ea, eb;
	bool na, nb;
	uint32_t m = 1 + test_rand_below(chance(4) ? 140 : 40);
	uint32_t n = 1 + test_rand_below(chance(4) ? 140 : 40);
	uint32_t k, flags = chance(2) ? MXA_GEMM_ACCUMULATE : 0;
	enum mxa_dtype dt = chance(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	char what[200];

	/* mix: 0 NVFP4 x NVFP4, 1 NVFP4 x MX, 2 MX x NVFP4, 3 MX x MX */
	rand_format(&ea, &na, mix < 2);
	rand_format(&eb, &nb, mix == 0 || mix == 2);
	k = (na && nb ? 16 : 32) * (1 + test_rand_below(chance(3) ? 12 : 4));
	rand_wild(&w);
	opnd_init(&a, ea, na, rand_layout(), m, k, 1, 0, &w);
	opnd_init(&b, eb, nb, rand_layout(), n, k, 1, 0, &w);
	dense_init(&c, dt, m, n, &w);
	snprintf(what, sizeof(what),
		 "gemm %ux%ux%u %s%s (ts %a) x %s%s (ts %a) %s%s%s%s",
		 m, n, k, elem_text(ea, na),
		 a.m.scale_layout ? " swz" : "", (double)a.m.tensor_scale,
		 elem_text(eb, nb), b.m.scale_layout ? " swz" : "",
		 (double)b.m.tensor_scale, dt == MXA_DTYPE_BF16 ? "bf16" : "f32",
		 flags ? " +C" : "", w.specials ? " specials" : "",
		 w.wide ? " wide" : "");
	ga = on_gpu(&a);
	gb = on_gpu(&b);
	gc = dense_gpu(&c);
	if (both_ok(mxa_gemm(cpu, &a.m, &b.m, &c.d, flags, MXA_PREF_EMULATED),
		    gpu_gemm(&ga, &gb, &gc, flags),
		    what) && same_c(&c, what)) {
		n_cases[0]++;
		n_outputs[0] += m * n;
	}
	opnd_free(&a);
	opnd_free(&b);
	twin_free(&c.buf);
}

/* --- cuda-weight-only-exact ------------------------------------------ */

static void weight_only_case(void)
{
	struct dense a, c;
	struct opnd b;
	struct wild w;
	struct mxa_matrix gb;
	struct mxa_dense ga, gc;
	enum mxa_elem eb;
	bool nb;
	uint32_t m = 1 + test_rand_below(chance(4) ? 100 : 20);
	uint32_t n = 1 + test_rand_below(chance(4) ? 140 : 40);
	uint32_t k, flags = chance(2) ? MXA_GEMM_ACCUMULATE : 0;
	enum mxa_dtype at = chance(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	enum mxa_dtype dt = chance(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	char what[200];

	rand_format(&eb, &nb, chance(2));
	k = (nb ? 16 : 32) * (1 + test_rand_below(chance(3) ? 12 : 4));
	rand_wild(&w);
	dense_init(&a, at, m, k, &w);
	opnd_init(&b, eb, nb, rand_layout(), n, k, 1, 0, &w);
	dense_init(&c, dt, m, n, &w);
	snprintf(what, sizeof(what),
		 "weight-only %ux%ux%u %s x %s%s (ts %a) %s%s%s%s",
		 m, n, k, at == MXA_DTYPE_BF16 ? "bf16" : "f32",
		 elem_text(eb, nb), b.m.scale_layout ? " swz" : "",
		 (double)b.m.tensor_scale, dt == MXA_DTYPE_BF16 ? "bf16" : "f32",
		 flags ? " +C" : "", w.specials ? " specials" : "",
		 w.wide ? " wide" : "");
	ga = dense_gpu(&a);
	gb = on_gpu(&b);
	gc = dense_gpu(&c);
	if (both_ok(mxa_gemm_weight_only(cpu, &a.d, &b.m, &c.d, flags,
					 MXA_PREF_EMULATED),
		    gpu_weight_only(&ga, &gb, &gc, flags), what) &&
	    same_c(&c, what)) {
		n_cases[1]++;
		n_outputs[1] += m * n;
	}
	twin_free(&a.buf);
	opnd_free(&b);
	twin_free(&c.buf);
}

/* --- cuda-grouped-exact ----------------------------------------------- */

/* count ends partitioning total in steps of unit, empty groups likely. */
static void rand_ends(int32_t *ends, uint32_t count, uint32_t total,
		      uint32_t unit)
{
	uint32_t g, units = total / unit;

	for (g = 0; g + 1 < count; g++)
		ends[g] = (int32_t)(unit * (chance(4) ? 0 :
				    test_rand_below(units + 1)));
	ends[count - 1] = (int32_t)total;
	/* Sorted: a random partition (repeats are empty groups). */
	for (g = 1; g < count; g++) {
		int32_t v = ends[g];
		uint32_t h = g;

		while (h && ends[h - 1] > v) {
			ends[h] = ends[h - 1];
			h--;
		}
		ends[h] = v;
	}
}

struct grouped_req {
	struct opnd a, b;
	struct dense c;
	struct twin offs;
	struct mxa_grouped gr;
	uint32_t flags;
	int32_t *ends;
};

static void grouped_init(struct grouped_req *r, enum mxa_group_kind kind,
			 uint32_t count, const struct wild *w, char *what,
			 size_t size)
{
	enum mxa_elem ea, eb;
	bool na, nb, both;
	uint32_t m = force_m ? force_m : 1 + test_rand_below(chance(3) ? 150 : 30);
	uint32_t n = 1 + test_rand_below(chance(4) ? 90 : 30);
	uint32_t k, unit, extent;
	enum mxa_scale_layout la = rand_layout(), lb = rand_layout();
	enum mxa_dtype dt = chance(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	size_t pad_a, pad_b;
	size_t off = 4 * test_rand_below(3);

	rand_format(&ea, &na, chance(3));
	rand_format(&eb, &nb, na ? !chance(4) : chance(4));
	both = na && nb;
	unit = both ? 16 : 32;
	r->flags = chance(2) ? MXA_GEMM_ACCUMULATE : 0;
	if (kind == MXA_GROUP_2D_3D) {
		k = unit * (1 + test_rand_below(6));
		extent = m;
		/* Per-group swizzled A: up to 128 padded rows a group. */
		pad_a = (size_t)count * 128 * ((k / (na ? 16 : 32) + 3) / 4 * 4);
		pad_b = 0;
		opnd_init(&r->a, ea, na, la, m, k, 1, pad_a, w);
		opnd_init(&r->b, eb, nb, lb, n, k, count, pad_b, w);
		dense_init(&r->c, dt, m, n, w);
	} else {
		k = force_k ? force_k : unit * (1 + test_rand_below(12));
		extent = k;
		/* Per-group swizzled K: up to 4 padded blocks a group. */
		pad_a = (size_t)count * 4 * ((m + 127) / 128 * 128);
		pad_b = (size_t)count * 4 * ((n + 127) / 128 * 128);
		opnd_init(&r->a, ea, na, la, m, k, 1, pad_a, w);
		opnd_init(&r->b, eb, nb, lb, n, k, 1, pad_b, w);
		dense_init(&r->c, dt, count * m, n, w);
	}
	twin_init(&r->offs, off + (size_t)count * 4);
	memset(r->offs.host, 0xee, r->offs.size);
	r->ends = (int32_t *)(r->offs.host + off);
	rand_ends(r->ends, count, extent, kind == MXA_GROUP_2D_2D ? unit : 1);
	twin_upload(&r->offs);
	memset(&r->gr, 0, sizeof(r->gr));
	r->gr.kind = kind;
	r->gr.count = count;
	r->gr.offsets = r->offs.cpu;
	r->gr.offsets_offset = off;
	snprintf(what, size,
		 "grouped %s x%u %ux%ux%u %s%s (ts %a) x %s%s (ts %a) %s%s%s%s ends %d %d .. %d",
		 kind == MXA_GROUP_2D_3D ? "2d3d" : "2d2d", count, m, n, k,
		 elem_text(ea, na), la ? " swz" : "",
		 (double)r->a.m.tensor_scale, elem_text(eb, nb),
		 lb ? " swz" : "", (double)r->b.m.tensor_scale,
		 dt == MXA_DTYPE_BF16 ? "bf16" : "f32",
		 r->flags ? " +C" : "", w->specials ? " specials" : "",
		 w->wide ? " wide" : "", r->ends[0],
		 count > 1 ? r->ends[1] : r->ends[0], r->ends[count - 1]);
}

static void grouped_free(struct grouped_req *r)
{
	opnd_free(&r->a);
	opnd_free(&r->b);
	twin_free(&r->c.buf);
	twin_free(&r->offs);
}

static int run_gpu(struct grouped_req *r)
{
	struct mxa_matrix ga = on_gpu(&r->a), gb = on_gpu(&r->b);
	struct mxa_dense gc = dense_gpu(&r->c);
	struct mxa_grouped gr = r->gr;

	gr.offsets = r->offs.gpu;
	return gpu_grouped(&ga, &gb, &gc, &gr, r->flags);
}

static void grouped_case(enum mxa_group_kind kind)
{
	struct grouped_req r;
	struct wild w;
	uint32_t count = 1 + test_rand_below(chance(3) ? 9 : 4);
	char what[300];

	rand_wild(&w);
	grouped_init(&r, kind, count, &w, what, sizeof(what));
	if (both_ok(mxa_gemm_grouped(cpu, &r.a.m, &r.b.m, &r.c.d, &r.gr,
				     r.flags, MXA_PREF_EMULATED),
		    run_gpu(&r), what) && same_c(&r.c, what)) {
		n_cases[2]++;
		n_outputs[2] += r.c.d.rows * r.c.d.cols;
	}
	grouped_free(&r);
}

/*
 * Offsets the GPU checks itself: refused with the library's errno, C
 * untouched, and the next good request runs.
 */
static void bad_offsets(void)
{
	static const struct {
		enum mxa_group_kind kind;
		int32_t ends[3];
		int err;
		const char *what;
	} bad[] = {
		{ MXA_GROUP_2D_3D, { 4, 2, -1 }, -EINVAL, "decreasing ends" },
		{ MXA_GROUP_2D_3D, { -3, 2, -1 }, -EINVAL, "a negative end" },
		{ MXA_GROUP_2D_3D, { 2, 4, -2 }, -EINVAL, "last end below M" },
		{ MXA_GROUP_2D_3D, { 2, 40, -1 }, -EINVAL, "an end beyond M" },
		{ MXA_GROUP_2D_2D, { 32, 40, -1 }, -EINVAL, "a K end off the block" },
		{ MXA_GROUP_2D_2D, { 32, 64, 64 }, -EINVAL, "last end below K" },
	};
	struct wild w = { false, false };
	unsigned int i;
	char what[300];

	for (i = 0; i < TEST_ARRAY_SIZE(bad); i++) {
		struct grouped_req r;
		uint32_t extent, g;
		uint8_t *before, *after;
		int ret;

		/* M = 20 and K = 128: room for the ends above. */
		force_m = 20;
		force_k = 128;
		grouped_init(&r, bad[i].kind, 3, &w, what, sizeof(what));
		force_m = 0;
		force_k = 0;
		extent = bad[i].kind == MXA_GROUP_2D_3D ? r.a.m.rows : r.a.m.cols;
		for (g = 0; g < 3; g++)
			r.ends[g] = bad[i].ends[g] == -1 ? (int32_t)extent :
				    bad[i].ends[g] == -2 ? (int32_t)extent - 1 :
				    bad[i].ends[g];
		twin_upload(&r.offs);
		before = cudatest_read(r.c.buf.gpu);
		ret = run_gpu(&r);
		after = cudatest_read(r.c.buf.gpu);
		CHECK(ret == bad[i].err, "cuda: %s (%d %d %d of %u): %d (%s), expected %d",
		      bad[i].what, r.ends[0], r.ends[1], r.ends[2], extent, ret,
		      mxa_strerror(ret), bad[i].err);
		CHECK(!memcmp(before, after, r.c.buf.size),
		      "cuda: %s: C was written", bad[i].what);
		/* The cpu validates the same ends on the host. */
		ret = mxa_gemm_grouped(cpu, &r.a.m, &r.b.m, &r.c.d, &r.gr,
				       r.flags, MXA_PREF_EMULATED);
		CHECK(ret == bad[i].err, "cpu: %s: %d, expected %d",
		      bad[i].what, ret, bad[i].err);
		/* Good ends again: the fault is gone, the result right. */
		rand_ends(r.ends, 3, extent,
			  bad[i].kind == MXA_GROUP_2D_2D ? 32 : 1);
		twin_upload(&r.offs);
		free(before);
		free(after);
		if (both_ok(mxa_gemm_grouped(cpu, &r.a.m, &r.b.m, &r.c.d, &r.gr,
					     r.flags, MXA_PREF_EMULATED),
			    run_gpu(&r), "good ends after bad ones"))
			same_c(&r.c, "good ends after bad ones");
		grouped_free(&r);
	}
}

/*
 * 2D_3D with B's buffers holding fewer matrices than there are groups:
 * the host cannot see that the last group reads past them (the offsets
 * are on the GPU).  The exact kernel's own check (run directly on the
 * host) refuses it, and accepts it when that group is empty.  Through the
 * library on cuda:0 the call is refused either way, before anything runs:
 * with the ends out of sight, lib/src/grouped.c checks the whole stack
 * (the last group's B) against its buffers.
 */
static void short_b(void)
{
	struct wild w = { false, false };
	struct grouped_req r;
	struct mxa_matrix ga, gb;
	struct mxa_dense gc;
	struct mxa_grouped gr;
	struct twin small;
	uint8_t *before, *after;
	char what[300];
	size_t bytes;
	int ret;

	force_m = 20;
	grouped_init(&r, MXA_GROUP_2D_3D, 3, &w, what, sizeof(what));
	force_m = 0;
	/* Two of the three matrices of codes. */
	bytes = r.b.m.data_offset + 2 * (size_t)r.b.m.rows *
		(r.b.m.data_stride ? r.b.m.data_stride :
		 (r.b.m.elem == MXA_ELEM_E2M1 ? r.b.m.cols / 2 : r.b.m.cols));
	twin_init(&small, bytes);
	memcpy(small.host, r.b.data.host, bytes);
	twin_upload(&small);
	r.ends[0] = 0;
	r.ends[1] = (int32_t)r.a.m.rows;
	r.ends[2] = (int32_t)r.a.m.rows;
	twin_upload(&r.offs);
	ga = on_gpu(&r.a);
	gb = on_gpu(&r.b);
	gb.data = small.gpu;
	gc = dense_gpu(&r.c);
	gr = r.gr;
	gr.offsets = r.offs.gpu;
	ret = gpu_grouped(&ga, &gb, &gc, &gr, r.flags);
#ifdef CUDA_EXACT_HOST
	CHECK(ret == 0, "cuda: B short of an empty last group: %d (%s)", ret,
	      mxa_strerror(ret));
#else
	CHECK(ret == -EOVERFLOW,
	      "cuda: B short of the stack, last group empty: %d (%s), expected -EOVERFLOW (the library checks the whole stack)",
	      ret, mxa_strerror(ret));
#endif
	/* Now the last group has rows 1 .. 19: it needs the third B. */
	r.ends[1] = 1;
	twin_upload(&r.offs);
	before = cudatest_read(r.c.buf.gpu);
	ret = gpu_grouped(&ga, &gb, &gc, &gr, r.flags);
	after = cudatest_read(r.c.buf.gpu);
	CHECK(ret == -EOVERFLOW,
	      "cuda: the last group's B past its buffer: %d (%s), expected -EOVERFLOW",
	      ret, mxa_strerror(ret));
	CHECK(!memcmp(before, after, r.c.buf.size),
	      "cuda: B past its buffer: C was written");
	free(before);
	free(after);
	twin_free(&small);
	grouped_free(&r);
}

/* --- plans ------------------------------------------------------------- */

#ifndef CUDA_EXACT_HOST

static void expect_kernel(const struct mxa_op_desc *d, const char *kernel)
{
	struct mxa_plan plan;
	int ret = mxa_plan(cuda, d, MXA_PREF_EMULATED, &plan);

	CHECK(!ret && !strcmp(plan.kernel, kernel) && plan.exact,
	      "EMULATED op %d on cuda:0: %d %s, expected %s", (int)d->op, ret,
	      ret ? mxa_strerror(ret) : plan.kernel, kernel);
	if (!ret)
		printf("EMULATED op %d (scales %d x %d): %s\n", (int)d->op,
		       (int)d->a_scale_type, (int)d->b_scale_type, plan.kernel);
}

static void plans(void)
{
	struct mxa_op_desc d = { .op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E2M1,
				 .b_elem = MXA_ELEM_E2M1, .m = 5, .n = 7,
				 .k = 64, .a_scale_type = MXA_SCALE_UE4M3,
				 .b_scale_type = MXA_SCALE_UE4M3 };

	expect_kernel(&d, "cuda-exact");
	d.b_elem = MXA_ELEM_E4M3;
	d.b_scale_type = MXA_SCALE_E8M0;
	expect_kernel(&d, "cuda-exact");
	d.op = MXA_OP_GEMM_GROUPED;
	expect_kernel(&d, "cuda-grouped-exact");
	d = (struct mxa_op_desc){ .op = MXA_OP_GEMM_WEIGHT_ONLY,
				  .b_elem = MXA_ELEM_E2M1,
				  .a_dtype = MXA_DTYPE_BF16, .m = 1, .n = 9,
				  .k = 64, .b_scale_type = MXA_SCALE_UE4M3 };
	expect_kernel(&d, "cuda-weight-only-exact");
}
#endif

int main(void)
{
	unsigned int i, reps = getenv("MXACCEL_TEST_QUICK") ? 2 : 12;

#ifdef CUDA_EXACT_HOST
	cuda = test_open_cpu();
	printf("cuda_exact.cuh's kernels on the host, on a second cpu device\n");
#else
	cuda = cudatest_open();
#endif
	cpu = test_open_cpu();
	test_seed(20261202);
#ifndef CUDA_EXACT_HOST
	plans();
#endif
	for (i = 0; i < reps * 4; i++)
		gemm_case(i % 4);
	for (i = 0; i < reps * 3; i++)
		weight_only_case();
	for (i = 0; i < reps * 3; i++)
		grouped_case(i % 2 ? MXA_GROUP_2D_2D : MXA_GROUP_2D_3D);
	bad_offsets();
	short_b();
	printf("bit-identical to the cpu: %u exact GEMMs (%u outputs), %u weight-only (%u), %u grouped (%u)\n",
	       n_cases[0], n_outputs[0], n_cases[1], n_outputs[1], n_cases[2],
	       n_outputs[2]);
	mxa_device_close(cpu);
	mxa_device_close(cuda);
	return test_finish();
}
