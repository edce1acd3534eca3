// SPDX-License-Identifier: MIT
/*
 * The exact reference GEMM (Documentation/numerics.rst), built directly on
 * the freestanding core: integer segment dots into the 704-bit
 * accumulator, one rounding per output.  MX, NVFP4 (single and two level)
 * and mixed MX x NVFP4 operands.  Rows are spread over the thread pool.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Rows per task: enough work per task, enough tasks per thread. */
static unsigned int row_tasks(uint32_t rows, uint32_t *chunk)
{
	*chunk = rows < 64 ? 1 : rows / 64;
	return (rows + *chunk - 1) / *chunk;
}

static void load_f32(const uint8_t *row, enum mxa_dtype dtype, uint32_t i,
		     uint32_t *out)
{
	if (dtype == MXA_DTYPE_BF16) {
		uint16_t h;

		memcpy(&h, row + 2 * (size_t)i, 2);
		*out = (uint32_t)h << 16;
	} else {
		memcpy(out, row + 4 * (size_t)i, 4);
	}
}

static void store(uint8_t *row, enum mxa_dtype dtype, uint32_t i,
		  uint32_t bits)
{
	if (dtype == MXA_DTYPE_BF16) {
		uint16_t h = (uint16_t)bits;

		memcpy(row + 2 * (size_t)i, &h, 2);
	} else {
		memcpy(row + 4 * (size_t)i, &bits, 4);
	}
}

/*
 * A matrix decoded once for the exact GEMM: every element as its integer
 * k, and per segment (the elements that share one scale on both sides: a
 * block of 32 for MX x MX, 16 when either side has UE4M3 scales) the
 * exact factor sig * 2^exp of its k (code unit, block scale, tensor
 * scale) and whether it needs the special-value path (Inf/NaN code or
 * NaN scale).  MX segments have sig 1.
 */
struct decoded {
	int64_t *k;
	int32_t *sig;
	int16_t *exp;
	uint8_t *special;
};

/* How a matrix's values are made, for the core's segment functions. */
static struct mxcore_scaling scaling_of(const struct mxa_matrix *m)
{
	struct mxcore_scaling f = { .elem = (uint32_t)m->elem,
				    .scale_type = (uint32_t)m->scale_type };

	memcpy(&f.tensor_scale, &m->tensor_scale, sizeof(f.tensor_scale));
	return f;
}

static void decode_row(const struct mxa_matrix *m, uint32_t row, uint32_t seg,
		       int64_t *k, int32_t *sig, int16_t *exp, uint8_t *special)
{
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	struct mxcore_scaling f = scaling_of(m);
	uint32_t block = mxcore_scale_block((enum mxcore_scale_type)
					    m->scale_type);
	const uint8_t *codes = cpu_data(m) + (size_t)row * mxa__data_stride(m);
	int k_exp = mxcore_format(elem)->k_exp;
	int64_t tsig, ssig;
	int texp, sexp;
	uint32_t s, i;

	/* Validation admits positive finite tensor scales only. */
	mxcore_tensor_scale_decode(f.tensor_scale, &tsig, &texp);
	for (s = 0; s < m->cols / seg; s++) {
		uint8_t sb = cpu_scales(m)[mxa__scale_index(m, row,
							    s * seg / block)];
		const uint8_t *sc = codes + mxcore_row_bytes(elem,
							     (size_t)s * seg);
		int64_t *ks = k + (size_t)s * seg;
		unsigned int fl;

		if (seg == MXCORE_BLOCK) {
			fl = mxcore_decode_block(elem, sc, ks);
		} else {
			for (fl = 0, i = 0; i < seg; i++)
				fl |= mxcore_decode(elem,
						    mxcore_get_code(elem, sc, i),
						    &ks[i]);
		}
		fl |= mxcore_scale_decode(f.scale_type, sb, &ssig, &sexp);
		special[s] = fl != 0;
		sig[s] = (int32_t)(ssig * tsig);
		exp[s] = (int16_t)(k_exp + sexp + texp);
	}
}

static int decoded_alloc(struct decoded *d, size_t rows, size_t cols,
			 uint32_t seg)
{
	size_t segs = rows * (cols / seg);

	d->k = malloc(rows * cols * sizeof(*d->k));
	d->sig = malloc(segs * sizeof(*d->sig));
	d->exp = malloc(segs * sizeof(*d->exp));
	d->special = malloc(segs);
	if (!d->k || !d->sig || !d->exp || !d->special) {
		free(d->k);
		free(d->sig);
		free(d->exp);
		free(d->special);
		return -ENOMEM;
	}
	return 0;
}

static void decoded_free(struct decoded *d)
{
	free(d->k);
	free(d->sig);
	free(d->exp);
	free(d->special);
}

struct exact_gemm_job {
	const struct mxa_job *job;
	uint32_t chunk;
	uint32_t seg;			/* elements per segment */
	struct decoded b;		/* all of B */
	struct decoded *a;		/* one row of A per worker */
};

/* A segment with an Inf/NaN code or a NaN scale, through the core. */
static void special_seg(struct mxcore_acc *acc, uint32_t seg, uint32_t s,
			const struct mxa_matrix *a, uint32_t i,
			const struct mxa_matrix *b, uint32_t j)
{
	struct mxcore_scaling fa = scaling_of(a), fb = scaling_of(b);
	uint32_t ba = mxcore_scale_block((enum mxcore_scale_type)a->scale_type);
	uint32_t bb = mxcore_scale_block((enum mxcore_scale_type)b->scale_type);
	size_t first = (size_t)s * seg;

	mxcore_acc_seg_dot(acc, seg, &fa,
			   cpu_data(a) + (size_t)i * mxa__data_stride(a) +
			   mxcore_row_bytes(a->elem, first),
			   cpu_scales(a)[mxa__scale_index(a, i, first / ba)],
			   &fb,
			   cpu_data(b) + (size_t)j * mxa__data_stride(b) +
			   mxcore_row_bytes(b->elem, first),
			   cpu_scales(b)[mxa__scale_index(b, j, first / bb)]);
}

static void gemm_rows(void *arg, unsigned int task, unsigned int worker)
{
	const struct exact_gemm_job *gj = arg;
	const struct mxa_job *job = gj->job;
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	const struct mxa_dense *c = &job->dense;
	const struct decoded *db = &gj->b, *da = &gj->a[worker];
	enum mxcore_dtype dt = c->dtype == MXA_DTYPE_BF16 ? MXCORE_BF16 :
							    MXCORE_F32;
	uint32_t seg = gj->seg, segs = a->cols / seg;
	uint32_t i, j, k, end = (task + 1) * gj->chunk;
	bool mx = seg == MXCORE_BLOCK;
	struct mxcore_acc acc;

	if (end > a->rows)
		end = a->rows;
	for (i = task * gj->chunk; i < end; i++) {
		uint8_t *crow = cpu_dense_row(c, i);

		decode_row(a, i, seg, da->k, da->sig, da->exp, da->special);
		for (j = 0; j < b->rows; j++) {
			size_t jb = (size_t)j * segs;
			uint32_t cin;

			mxcore_acc_init(&acc);
			if (job->flags & MXA_GEMM_ACCUMULATE) {
				load_f32(crow, c->dtype, j, &cin);
				mxcore_acc_add_float(&acc, cin, MXCORE_F32);
			}
			for (k = 0; k < segs; k++) {
				const int64_t *ka = da->k + (size_t)k * seg;
				const int64_t *kb = db->k + (jb + k) * seg;
				int exp = da->exp[k] + db->exp[jb + k];

				if (da->special[k] || db->special[jb + k])
					special_seg(&acc, seg, k, a, i, b, j);
				else if (mx)
					mxcore_acc_dot_decoded(&acc, ka, kb,
							       exp);
				else
					mxcore_acc_dot_scaled(&acc, ka, kb, seg,
						(int64_t)da->sig[k] *
						db->sig[jb + k], exp);
			}
			store(crow, c->dtype, j, mxcore_acc_round(&acc, dt));
		}
	}
}

int cpu_gemm_exact(struct mxa_device *dev, const struct mxa_job *job)
{
	struct cpu_pool *pool = cpu_dev(dev)->pool;
	unsigned int workers = cpu_pool_threads(pool), w, n;
	struct exact_gemm_job gj = { .job = job };
	uint32_t j, segs;
	int ret;

	gj.seg = job->a.scale_type == MXA_SCALE_UE4M3 ||
		 job->b.scale_type == MXA_SCALE_UE4M3 ?
		 MXCORE_NVFP4_BLOCK : MXCORE_BLOCK;
	segs = job->b.cols / gj.seg;
	n = row_tasks(job->a.rows, &gj.chunk);
	ret = decoded_alloc(&gj.b, job->b.rows, job->b.cols, gj.seg);
	if (ret)
		return mxa__err(ret, "gemm: no memory to decode B (%u x %u)",
				job->b.rows, job->b.cols);
	gj.a = calloc(workers, sizeof(*gj.a));
	if (!gj.a) {
		ret = -ENOMEM;
		goto out_free_b;
	}
	for (w = 0; w < workers; w++) {
		ret = decoded_alloc(&gj.a[w], 1, job->a.cols, gj.seg);
		if (ret)
			goto out_free_a;
	}
	for (j = 0; j < job->b.rows; j++)
		decode_row(&job->b, j, gj.seg, gj.b.k + (size_t)j * job->b.cols,
			   gj.b.sig + (size_t)j * segs,
			   gj.b.exp + (size_t)j * segs,
			   gj.b.special + (size_t)j * segs);
	cpu_parallel(pool, n, gemm_rows, &gj);
out_free_a:
	while (w--)
		decoded_free(&gj.a[w]);
	free(gj.a);
out_free_b:
	decoded_free(&gj.b);
	if (ret)
		return mxa__err(ret, "gemm: out of memory for the exact kernel");
	return 0;
}
