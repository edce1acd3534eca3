// SPDX-License-Identifier: MIT
/*
 * The decode GEMM (weight streaming): C (+)= A * B^T where A has few rows
 * (decode: one token, or a few) and B is a block-scaled weight matrix.
 * Such a GEMM is bound by reading B, so B's codes and scales are read
 * once, where they lie: no packed copy of B, no per-call scratch to fault
 * in.  A (dense fp32 / bf16, or MX dequantized) is converted once per call
 * to fp32 rows in the row kernel's K order (cpu_decode.h) and stays in L1
 * in chunks of K while the row kernel decodes B row by row in registers
 * and dots it with every row of A.
 *
 * Work: N is cut into tasks of DEC_JB rows of B (DEC_JB_AMX for the tile
 * kernel, which walks a task's groups of 16 rows chunk of K by chunk of K
 * with A's chunk in L1, reading each next piece of B ahead); a task walks
 * K in chunks
 * (A's chunk, all rows, fits L1), calls the row kernel per B row and
 * chunk, and adds its fp32 sums into the task's partials, then stores its
 * columns of C (times the per-tensor scale, plus C_in, rounded).  Every
 * output is summed in the same order whatever the thread count.  More
 * than DEC_MS rows of A (or than the tile kernel's stripe, below) run in
 * stripes, each streaming B again.
 *
 * Scratch (A's rows and each worker's partials and scale bytes) belongs to
 * the device and is kept across calls, grown when a call needs more;
 * calls on one device take turns for it.
 *
 * B rows whose E8M0 scales make a value leave fp32's range (a scale above
 * 254 - emax of the element type) go to the portable kernel, which sums
 * in double; an MX A with such scales sends the whole call to the blocked
 * kernel (cpu_gemm.c), whose per-block scaling keeps them in range.
 *
 * An NVFP4 A (e2m1 times UE4M3: exact fp32, and bf16, normals in 2^-10 ..
 * 2688) is always in range; its tensor scale, like B's, multiplies the
 * sums at the store (the product of the two in double, one rounding of
 * the result to fp32).
 *
 * A weight-only call with a bf16 A on a CPU with AVX512_BF16 runs the
 * bf16-dot row kernel (twice the products per instruction of fp32 FMA)
 * where that is exact: A without bf16 subnormals, and B rows whose values
 * are bf16 normals (E8M0 scales at least 1 - k_exp); other rows take the
 * fp32 kernel.  On the amx level the same rows go 16 at a time to the tile
 * kernel (kernels/amx/amx_decode.c; on avx512bf16 its register form,
 * kernels/avx512/uk_decode_tiles.c, from 7 rows of A on, in stripes of
 * 16), which decodes them once for every row of A where the row kernel's
 * vector units would redo the dot per row.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "cpu_decode.h"
#include "cpu_fpenv.h"
#include "cpu_isa.h"

#define DEC_JB		32		/* B rows per task */
#define DEC_JB_AMX	CPU_DECODE_AMX_MAX_ROWS /* the same, tile kernel */
#define DEC_JB_MAX	DEC_JB_AMX	/* part's row pitch */
#define DEC_MS		64		/* A rows per stripe */
#define DEC_L1_FLOATS	6144		/* A's chunk: 24 KiB */

_Static_assert(DEC_MS <= CPU_DECODE_AMX_MAX_M,
	       "a stripe of A must fit the tile kernel's accumulators");
_Static_assert(DEC_JB <= DEC_JB_MAX, "a task's rows must fit part's pitch");

struct cpu_decode_state {
	pthread_mutex_t lock;
	float *a;			/* A, fp32, kernel order */
	size_t a_floats;
	uint16_t *ab;			/* A, bf16, the same (bf16 kernel) */
	uint32_t *aa;			/* A in AMX tiles (tile kernel) */
	size_t aa_words;
	unsigned int workers;
	float **part;			/* per worker: DEC_MS x DEC_JB_MAX */
	uint8_t **scales;		/* per worker: DEC_JB_MAX x blocks */
	size_t scale_bytes;
};

struct decode {
	const struct mxa_job *job;
	const struct mxa_matrix *b;
	struct cpu_decode_state *st;
	cpu_decode_fn *kernel;
	cpu_decode_fn *kernel_bf16;	/* NULL: not for this call */
	cpu_decode_tiles_fn *tiles_call; /* the tile kernel for the call */
	cpu_decode_tiles_fn *tiles;	/* ... for this stripe's bf16 rows */
	uint32_t ms;			/* A rows per stripe */
	struct cpu_decode_amx_args tiles_args;
	uint8_t tiles_cfg[64] __attribute__((aligned(64)));
	struct cpu_decode_args args;	/* template: a, m per stripe */
	float table[256];
	uint32_t k, n, blocks;		/* K, N, K / block */
	uint32_t kc;			/* K per chunk */
	uint32_t jb;			/* B rows per task */
	uint32_t i0, mcur;		/* the stripe of A */
	size_t lda;
	uint8_t scale_limit;		/* larger E8M0 scales: portable path */
	uint8_t scale_bf16;		/* smaller E8M0 scales: not bf16 */
	double tensor_scale;		/* A's times B's (NVFP4); 0: none */
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

int cpu_decode_adjust(enum mxcore_elem elem)
{
	/* The AVX-512 kernel reads e2m1 from a value table, the rest as fp16. */
	return elem == MXCORE_E2M1 ? 0 : 15 - mxcore_format(elem)->bias;
}

/* Position of K offset o (in a group of g = 32 or 16) in kernel order. */
static uint32_t kernel_pos(uint32_t o, uint32_t g)
{
	return o & 1 ? g / 2 + o / 2 : o / 2;
}

/* B's element k of a row as a double (NaN, Inf included). */
static double elem_value(enum mxcore_elem elem, const uint8_t *row,
			 uint32_t k)
{
	uint8_t code = mxcore_get_code(elem, row, k);
	unsigned int special;
	int64_t v;

	special = mxcore_decode(elem, code, &v);
	if (special & MXCORE_NAN)
		return __builtin_nan("");
	if (special)
		return special & MXCORE_NINF ? -__builtin_inf() :
		       __builtin_inf();
	return __builtin_ldexp((double)v, mxcore_format(elem)->k_exp);
}

static double scale_value(const struct cpu_decode_args *d, uint8_t s)
{
	uint32_t bits;
	float f;

	if (d->ue4m3) {
		bits = mxcore_e4m3_to_f32(s);
		memcpy(&f, &bits, 4);
		return f;
	}
	if (s == MXCORE_SCALE_NAN)
		return __builtin_nan("");
	return __builtin_ldexp(1.0, (int)s - 127);
}

void cpu_decode_rows_ref(const struct cpu_decode_args *d,
			 const uint8_t *codes, const uint8_t *scales,
			 float *sums)
{
	bool perm = d->elem == MXCORE_E2M1;
	unsigned int i;
	uint32_t k;

	for (i = 0; i < d->m; i++) {
		const float *a = d->a + i * d->lda;
		double s = 0;

		for (k = 0; k < d->kn; k++) {
			uint32_t g0 = k / 32 * 32, g = min_u32(32, d->kn - g0);
			uint32_t p = perm ? g0 + kernel_pos(k - g0, g) : k;

			s += (double)a[p] * elem_value(d->elem, codes, k) *
			     scale_value(d, scales[k / d->bs]);
		}
		sums[i] = (float)s;
	}
}

/* One row of A into fp32 in kernel order. */
static void put_row(float *out, const float *row, uint32_t k, bool perm)
{
	uint32_t g0, o, g;

	if (!perm) {
		memcpy(out, row, (size_t)k * 4);
		return;
	}
	for (g0 = 0; g0 < k; g0 += 32) {
		g = min_u32(32, k - g0);
		for (o = 0; o < g; o++)
			out[g0 + kernel_pos(o, g)] = row[g0 + o];
	}
}

/*
 * A row in kernel order as bf16 (a bf16 A: exact), the pitch's tail zero;
 * false if a value is a bf16 subnormal, which vdpbf16ps reads as zero.
 */
static bool bf16_row(const float *row, uint16_t *out, uint32_t k)
{
	bool normal = true;
	uint32_t i, bits;

	for (i = 0; i < k; i++) {
		memcpy(&bits, &row[i], 4);
		out[i] = (uint16_t)(bits >> 16);
		if (!(bits & 0x7f800000u) && (bits & 0x007f0000u))
			normal = false;
	}
	for (; i < ((k + 15) & ~15u) + 16; i++)
		out[i] = 0;
	return normal;
}

/*
 * Whether an MX A's values are all in fp32's range (NaN scales aside);
 * NVFP4 values always are.
 */
static bool a_in_range(const struct mxa_matrix *a)
{
	uint8_t limit = (uint8_t)(254 - mxcore_format(
				(enum mxcore_elem)a->elem)->emax);
	uint32_t i, blk;

	if (a->scale_type == MXA_SCALE_UE4M3)
		return true;
	for (i = 0; i < a->rows; i++) {
		for (blk = 0; blk < a->cols / 32; blk++) {
			uint8_t s = cpu_scales(a)[mxa__scale_index(a, i, blk)];

			if (s != MXCORE_SCALE_NAN && s > limit)
				return false;
		}
	}
	return true;
}

/* Row i of the stripe (natural K order) into the tile kernel's A. */
static void put_tiles_row(struct decode *g, uint32_t rows, uint32_t i,
			  const float *row)
{
#if defined(__x86_64__)
	if (!i)
		memset(g->st->aa, 0,
		       cpu_decode_amx_a_words(rows, g->k) * sizeof(uint32_t));
	cpu_decode_amx_put_a(g->st->aa, rows, g->k, i, row);
#else
	(void)g;
	(void)rows;
	(void)i;
	(void)row;
#endif
}

/*
 * A's rows [i0, i0 + rows) as fp32 in kernel order, into st->a (and as
 * bf16 into st->ab, and st->aa for the tile kernel, where those run).
 */
static void prepare_a(struct decode *g, uint32_t i0, uint32_t rows,
		      float *tmp)
{
	const struct mxa_job *job = g->job;
	bool perm = g->args.elem == MXCORE_E2M1;
	uint32_t i, k;

	for (i = 0; i < rows; i++) {
		float *out = g->st->a + (size_t)i * g->lda;

		if (job->op == MXA_OP_GEMM_WEIGHT_ONLY) {
			const uint8_t *src = cpu_dense_row(&job->a_dense,
							   i0 + i);

			if (job->a_dense.dtype == MXA_DTYPE_F32) {
				memcpy(tmp, src, (size_t)g->k * 4);
			} else {
				for (k = 0; k < g->k; k++) {
					uint16_t h;
					uint32_t w;

					memcpy(&h, src + 2 * (size_t)k, 2);
					w = (uint32_t)h << 16;
					memcpy(&tmp[k], &w, 4);
				}
			}
		} else {
			const struct mxa_matrix *a = &job->a;
			enum mxcore_elem ea = (enum mxcore_elem)a->elem;
			const uint8_t *codes = (const uint8_t *)a->data->host +
					       a->data_offset +
					       (size_t)(i0 + i) *
					       mxa__data_stride(a);
			bool nv = a->scale_type == MXA_SCALE_UE4M3;
			uint32_t bs = mxa__block(a);

			/* NVFP4: code * block scale (exact); tensor scale: store */
			for (k = 0; k < g->k; k += bs) {
				uint8_t s = cpu_scales(a)[mxa__scale_index(
						a, i0 + i, k / bs)];
				uint32_t j, bits;

				for (j = k; j < k + bs; j++) {
					uint8_t c = mxcore_get_code(ea, codes, j);

					bits = nv ? mxcore_nvfp4_dequantize(c, s, 0,
									    MXCORE_F32) :
					       mxcore_dequantize(ea, c, s,
								 MXCORE_F32);
					memcpy(&tmp[j], &bits, 4);
				}
			}
		}
		put_row(out, tmp, g->k, perm);
		if (g->kernel_bf16 && !bf16_row(out, g->st->ab +
						(size_t)i * g->lda, g->k))
			g->kernel_bf16 = NULL;
		if (g->tiles)
			put_tiles_row(g, rows, i, tmp);
	}
	if (!g->kernel_bf16)
		g->tiles = NULL;
}

/* Which row kernel a B row's values allow. */
enum row_kind {
	ROW_BF16,	/* bf16 normals: the bf16 kernel if the call has one */
	ROW_F32,	/* within fp32's range */
	ROW_REF,	/* beyond it: the portable kernel, in double */
	ROW_DONE,	/* summed over all of K by the tile kernel */
};

typedef uint8_t u8x16 __attribute__((vector_size(16)));

/*
 * The largest and the least of n scale bytes, NaN (255) counting as
 * neither (255 and 0 when all are NaN), 16 bytes per step: every row of B
 * passes here, and gcc -O2 leaves the plain byte loop scalar.
 */
static void scale_range(const uint8_t *s, uint32_t n, uint8_t *worst,
			uint8_t *least)
{
	u8x16 hi = { 0 }, lo = ~hi, v, nan, h, l, up, down;
	uint8_t w = 0, le = 255;
	uint32_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		memcpy(&v, s + i, 16);
		nan = (u8x16)(v == MXCORE_SCALE_NAN);
		h = v & ~nan;
		l = v | nan;
		up = (u8x16)(h > hi);
		down = (u8x16)(l < lo);
		hi = (hi & ~up) | (h & up);
		lo = (lo & ~down) | (l & down);
	}
	for (; i < n; i++) {
		if (s[i] == MXCORE_SCALE_NAN)
			continue;
		w = s[i] > w ? s[i] : w;
		le = s[i] < le ? s[i] : le;
	}
	for (i = 0; i < 16; i++) {
		w = hi[i] > w ? hi[i] : w;
		le = lo[i] < le ? lo[i] : le;
	}
	*worst = w;
	*least = le;
}

/* Scale bytes of B row j, gathered, and what they allow. */
static enum row_kind gather_scales(const struct decode *g, uint32_t j,
				   uint8_t *out)
{
	const struct mxa_matrix *b = g->b;
	const uint8_t *sc = cpu_scales(b);
	uint8_t worst, least;
	uint32_t blk;

	if (b->scale_layout == MXA_LAYOUT_PLAIN) {
		memcpy(out, sc + (size_t)j * mxa__scale_stride(b), g->blocks);
	} else {
		for (blk = 0; blk < g->blocks; blk++)
			out[blk] = sc[mxa__scale_index(b, j, blk)];
	}
	/* e2m1 times UE4M3: 2^-10 .. 2688, bf16 normals. */
	if (b->scale_type == MXA_SCALE_UE4M3)
		return ROW_BF16;
	scale_range(out, g->blocks, &worst, &least);
	if (worst > g->scale_limit)
		return ROW_REF;
	return least >= g->scale_bf16 ? ROW_BF16 : ROW_F32;
}

static void store_cols(const struct decode *g, uint32_t j0, uint32_t nj,
		       const float *part)
{
	const struct mxa_dense *c = &g->job->dense;
	bool accumulate = g->job->flags & MXA_GEMM_ACCUMULATE;
	bool bf16 = c->dtype == MXA_DTYPE_BF16;
	uint32_t i, j;

	for (i = 0; i < g->mcur; i++) {
		uint8_t *row = cpu_dense_row(c, g->i0 + i);

		for (j = 0; j < nj; j++) {
			float v = part[i * DEC_JB_MAX + j];

			if (g->tensor_scale != 0)
				v = (float)((double)v * g->tensor_scale);
			if (bf16) {
				uint16_t h;
				uint32_t w;

				if (accumulate) {
					float cin;

					memcpy(&h, row + 2 * (size_t)(j0 + j), 2);
					w = (uint32_t)h << 16;
					memcpy(&cin, &w, 4);
					v += cin;
				}
				memcpy(&w, &v, 4);
				if ((w & 0x7fffffff) > 0x7f800000)
					h = 0x7fc0;
				else
					h = (uint16_t)((w + 0x7fff +
							((w >> 16) & 1)) >> 16);
				memcpy(row + 2 * (size_t)(j0 + j), &h, 2);
			} else {
				if (accumulate) {
					float cin;

					memcpy(&cin, row + 4 * (size_t)(j0 + j), 4);
					v += cin;
				}
				memcpy(row + 4 * (size_t)(j0 + j), &v, 4);
			}
		}
	}
}

/* Whether the AVX512_BF16 kernel runs here, which has a two-row form. */
static bool pair_kernel(const struct decode *g)
{
#if defined(__x86_64__)
	return g->kernel_bf16 == cpu_decode_rows_avx512bf16;
#else
	(void)g;
	return false;
#endif
}

/*
 * B rows j and j + 1 of the task, both for the bf16 kernel, in one pass
 * over A (the sums are those of two single-row calls).
 */
static void decode_pair(const struct decode *g,
			const struct cpu_decode_args *d, const uint8_t *codes,
			const uint8_t *s, size_t dstride, uint32_t j,
			uint32_t k0, float *part)
{
#if defined(__x86_64__)
	float sums0[DEC_MS], sums1[DEC_MS];
	uint32_t i;

	if (j + 2 < g->n)
		__builtin_prefetch(codes + 2 * dstride);
	cpu_decode_rows2_avx512bf16(d, codes, s, codes + dstride,
				    s + g->blocks, sums0, sums1);
	for (i = 0; i < g->mcur; i++) {
		float *p = &part[i * DEC_JB_MAX + j];

		p[0] = k0 ? p[0] + sums0[i] : sums0[i];
		p[1] = k0 ? p[1] + sums1[i] : sums1[i];
	}
#else
	(void)g;
	(void)d;
	(void)codes;
	(void)s;
	(void)dstride;
	(void)j;
	(void)k0;
	(void)part;
#endif
}

/*
 * The task's B rows through the tile kernel, over all of K, into part:
 * each run of whole groups of 16 rows (a shorter group at the task's end)
 * that are all for the bf16 kernel, in one call; they become ROW_DONE.
 */
static void tile_rows(const struct decode *g, uint32_t j0, uint32_t nj,
		      enum row_kind *kind, const uint8_t *sc, float *part)
{
#if defined(__x86_64__)
	const struct mxa_matrix *b = g->b;
	size_t dstride = mxa__data_stride(b);
	uint32_t j, r, n, first = 0, len = 0;
	bool ok;

	for (j = 0; j < nj + CPU_DECODE_AMX_GROUP; j += CPU_DECODE_AMX_GROUP) {
		n = j < nj ? min_u32(CPU_DECODE_AMX_GROUP, nj - j) : 0;
		ok = n > 0;
		for (r = 0; ok && r < n; r++)
			ok = kind[j + r] == ROW_BF16;
		if (ok) {
			first = len ? first : j;
			len += n;
			continue;
		}
		if (!len)
			continue;
		g->tiles(&g->tiles_args, cpu_data(b) +
			 (size_t)(j0 + first) * dstride, dstride,
			 sc + (size_t)first * g->blocks, g->blocks, len,
			 part + first, DEC_JB_MAX);
		for (r = first; r < first + len; r++)
			kind[r] = ROW_DONE;
		len = 0;
	}
#else
	(void)g;
	(void)j0;
	(void)nj;
	(void)kind;
	(void)sc;
	(void)part;
#endif
}

static void decode_task(void *arg, unsigned int task, unsigned int worker)
{
	struct decode *g = arg;
	unsigned int saved = cpu_fpenv_enter();
	const struct mxa_matrix *b = g->b;
	const uint8_t *data = cpu_data(b);
	size_t dstride = mxa__data_stride(b);
	uint32_t j0 = task * g->jb, nj = min_u32(g->jb, g->n - j0);
	float *part = g->st->part[worker];
	uint8_t *sc = g->st->scales[worker];
	enum row_kind kind[DEC_JB_MAX];
	float sums[DEC_MS];
	struct cpu_decode_args d = g->args;
	bool pair = pair_kernel(g);
	uint32_t j, i, k0;

	for (j = 0; j < nj; j++)
		kind[j] = gather_scales(g, j0 + j, sc + (size_t)j * g->blocks);
	if (g->tiles)
		tile_rows(g, j0, nj, kind, sc, part);
	for (k0 = 0; k0 < g->k; k0 += g->kc) {
		d.kn = min_u32(g->kc, g->k - k0);
		d.a = g->st->a + k0;
		d.ab = g->st->ab + k0;
		for (j = 0; j < nj; j++) {
			const uint8_t *codes = data + (size_t)(j0 + j) * dstride +
				(g->args.elem == MXCORE_E2M1 ? k0 / 2 : k0);
			const uint8_t *s = sc + (size_t)j * g->blocks +
					   k0 / g->args.bs;

			if (kind[j] == ROW_DONE)
				continue;
			if (j + 1 < nj)
				__builtin_prefetch(codes + dstride);
			if (pair && kind[j] == ROW_BF16 && j + 1 < nj &&
			    kind[j + 1] == ROW_BF16) {
				decode_pair(g, &d, codes, s, dstride, j, k0,
					    part);
				j++;
				continue;
			}
			if (kind[j] == ROW_BF16 && g->kernel_bf16)
				g->kernel_bf16(&d, codes, s, sums);
			else if (kind[j] != ROW_REF)
				g->kernel(&d, codes, s, sums);
			else
				cpu_decode_rows_ref(&d, codes, s, sums);
			for (i = 0; i < g->mcur; i++) {
				float *p = &part[i * DEC_JB_MAX + j];

				*p = k0 ? *p + sums[i] : sums[i];
			}
		}
	}
	store_cols(g, j0, nj, part);
	cpu_fpenv_leave(saved);
}

/* Grow the device's scratch to this call's needs (lock held). */
static int scratch_reserve(struct cpu_decode_state *st, unsigned int workers,
			   size_t a_floats, size_t aa_words, size_t scale_bytes)
{
	unsigned int w;
	void *p;

	if (aa_words > st->aa_words) {
		free(st->aa);
		st->aa = NULL;
		st->aa_words = 0;
		if (posix_memalign(&p, 64, aa_words * 4))
			return -ENOMEM;
		st->aa = p;
		st->aa_words = aa_words;
	}

	if (a_floats > st->a_floats) {
		free(st->a);
		free(st->ab);
		st->a = NULL;
		st->ab = NULL;
		st->a_floats = 0;
		if (posix_memalign(&p, 64, a_floats * 4))
			return -ENOMEM;
		st->a = p;
		if (posix_memalign(&p, 64, a_floats * 2))
			return -ENOMEM;
		st->ab = p;
		st->a_floats = a_floats;
	}
	if (workers > st->workers) {
		float **part = realloc(st->part, workers * sizeof(*part));
		uint8_t **sc;

		if (!part)
			return -ENOMEM;
		st->part = part;
		sc = realloc(st->scales, workers * sizeof(*sc));
		if (!sc)
			return -ENOMEM;
		st->scales = sc;
		for (w = st->workers; w < workers; w++) {
			if (posix_memalign(&p, 64,
					   (size_t)DEC_MS * DEC_JB_MAX * 4))
				return -ENOMEM;
			st->part[w] = p;
			st->scales[w] = NULL;
			st->workers = w + 1;
		}
		st->scale_bytes = 0;
	}
	if (scale_bytes > st->scale_bytes) {
		for (w = 0; w < st->workers; w++) {
			free(st->scales[w]);
			st->scales[w] = malloc(scale_bytes);
			if (!st->scales[w]) {
				st->scale_bytes = 0;
				return -ENOMEM;
			}
		}
		st->scale_bytes = scale_bytes;
	}
	return 0;
}

void cpu_decode_free(struct cpu_decode_state *st)
{
	unsigned int w;

	if (!st)
		return;
	for (w = 0; w < st->workers; w++) {
		free(st->part[w]);
		if (st->scales)
			free(st->scales[w]);
	}
	free(st->part);
	free(st->scales);
	free(st->a);
	free(st->ab);
	free(st->aa);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

struct cpu_decode_state *cpu_decode_alloc(void)
{
	struct cpu_decode_state *st = calloc(1, sizeof(*st));

	if (st && pthread_mutex_init(&st->lock, NULL)) {
		free(st);
		return NULL;
	}
	return st;
}

static void fill_table(struct decode *g)
{
	int adj = cpu_decode_adjust(g->args.elem);
	unsigned int s;
	uint32_t bits;

	for (s = 0; s < 256; s++) {
		if (g->args.ue4m3) {
			bits = mxcore_e4m3_to_f32((uint8_t)s);
			memcpy(&g->table[s], &bits, 4);
		} else if (s == MXCORE_SCALE_NAN) {
			g->table[s] = __builtin_nanf("");
		} else {
			g->table[s] = (float)((int)s - 127 + adj);
		}
	}
}

/*
 * The product of the NVFP4 operands' tensor scales (exact in double: two
 * 24-bit significands), or 0 when neither has one.
 */
static double tensor_scales(const struct mxa_job *job)
{
	double t = 1.0;
	bool any = false;

	if (job->op == MXA_OP_GEMM && job->a.scale_type == MXA_SCALE_UE4M3 &&
	    job->a.tensor_scale != 0) {
		t *= job->a.tensor_scale;
		any = true;
	}
	if (job->b.scale_type == MXA_SCALE_UE4M3 && job->b.tensor_scale != 0) {
		t *= job->b.tensor_scale;
		any = true;
	}
	return any ? t : 0;
}

/* Words of the tile kernel's A for a stripe of that many rows, or 0. */
static size_t tiles_words(const struct decode *g, uint32_t rows)
{
#if defined(__x86_64__)
	return g->tiles_call ? cpu_decode_amx_a_words(rows, g->k) : 0;
#else
	(void)g;
	(void)rows;
	return 0;
#endif
}

/* The tile kernel's arguments for the current stripe (after prepare_a). */
static void tiles_stripe(struct decode *g)
{
#if defined(__x86_64__)
	if (!g->tiles)
		return;
	g->tiles_args = (struct cpu_decode_amx_args){
		.elem = g->args.elem, .ue4m3 = g->args.ue4m3,
		.bs = g->args.bs, .k = g->k, .a = g->st->aa, .m = g->mcur,
		.table = g->table, .cfg = g->tiles_cfg,
	};
	cpu_decode_amx_config(g->tiles_cfg, g->mcur);
#else
	(void)g;
#endif
}

static int run_decode(struct mxa_device *dev, struct decode *g)
{
	struct cpu_device *cd = cpu_dev(dev);
	uint32_t m = g->job->op == MXA_OP_GEMM_WEIGHT_ONLY ?
		     g->job->a_dense.rows : g->job->a.rows;
	unsigned int workers = cpu_pool_threads(cd->pool);
	uint32_t rows = min_u32(m, g->ms);
	float *tmp;
	int ret;

	/* Rows one cache line apart from 4 KiB aliasing (L1 sets). */
	g->lda = ((g->k + 15) & ~(size_t)15) + 16;
	tmp = malloc((size_t)g->k * 4);
	if (!tmp)
		return -ENOMEM;
	pthread_mutex_lock(&cd->decode->lock);
	g->st = cd->decode;
	ret = scratch_reserve(g->st, workers, (size_t)rows * g->lda,
			      tiles_words(g, rows), (size_t)DEC_JB_MAX * g->blocks);
	for (g->i0 = 0; !ret && g->i0 < m; g->i0 += g->ms) {
		g->mcur = min_u32(g->ms, m - g->i0);
		/* A's chunk of every row of the stripe in L1; whole blocks of 32. */
		g->kc = (uint32_t)(DEC_L1_FLOATS / g->mcur) & ~31u;
		if (g->kc < 128)
			g->kc = 128;
		/* A last stripe too short for the tile kernel: the row kernel. */
		g->tiles = g->kernel_bf16 &&
			   g->mcur >= cd->isa->decode_tiles_m[0] ?
			   g->tiles_call : NULL;
		prepare_a(g, g->i0, g->mcur, tmp);
		g->args.a = g->st->a;
		g->args.lda = g->lda;
		g->args.m = g->mcur;
		tiles_stripe(g);
		cpu_parallel(cd->pool, (g->n + g->jb - 1) / g->jb,
			     decode_task, g);
	}
	pthread_mutex_unlock(&cd->decode->lock);
	free(tmp);
	return ret;
}

/*
 * The tile kernel for a call with m rows of A on the bf16 path, or NULL:
 * the level's, from its fewest rows of A on; A then runs in stripes of at
 * most its most rows (each streaming B again: at 16 rows the register
 * form is bound by its multiplies, not by B's bytes).
 */
static cpu_decode_tiles_fn *tiles_kernel(const struct cpu_isa *isa,
					 cpu_decode_fn *kernel_bf16, uint32_t m)
{
	if (!kernel_bf16 || !isa->decode_tiles || m < isa->decode_tiles_m[0])
		return NULL;
	return isa->decode_tiles;
}

int cpu_gemm_decode(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_device *cd = cpu_dev(dev);
	const struct mxa_matrix *b = &job->b;
	enum mxcore_elem eb = (enum mxcore_elem)b->elem;
	struct decode *g;
	int ret;

	/* An MX A scale beyond fp32's range: per-block scaling instead. */
	if (job->op == MXA_OP_GEMM && !a_in_range(&job->a))
		return cpu_gemm_blocked(dev, job);
	g = calloc(1, sizeof(*g));
	if (!g)
		return mxa__err(-ENOMEM, "gemm: no memory for the decode kernel");
	g->job = job;
	g->b = b;
	g->kernel = cd->isa->decode;
	g->k = b->cols;
	g->n = b->rows;
	g->args.elem = eb;
	g->args.ue4m3 = b->scale_type == MXA_SCALE_UE4M3;
	g->args.bs = mxa__block(b);
	g->blocks = g->k / g->args.bs;
	g->scale_limit = (uint8_t)(254 - mxcore_format(eb)->emax);
	g->scale_bf16 = (uint8_t)(1 - mxcore_format(eb)->k_exp);
	if (job->op == MXA_OP_GEMM_WEIGHT_ONLY &&
	    job->a_dense.dtype == MXA_DTYPE_BF16)
		g->kernel_bf16 = cd->isa->decode_bf16;
	g->tiles_call = tiles_kernel(cd->isa, g->kernel_bf16,
				     job->op == MXA_OP_GEMM_WEIGHT_ONLY ?
				     job->a_dense.rows : job->a.rows);
	g->ms = g->tiles_call ? min_u32(DEC_MS, cd->isa->decode_tiles_m[1]) :
		DEC_MS;
	g->jb = g->tiles_call ? DEC_JB_AMX : DEC_JB;
	g->tensor_scale = tensor_scales(job);
	g->args.table = g->table;
	fill_table(g);
	ret = run_decode(dev, g);
	free(g);
	if (ret)
		return mxa__err(ret, "gemm: no memory for the decode kernel's scratch");
	return 0;
}
