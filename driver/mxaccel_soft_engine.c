// SPDX-License-Identifier: GPL-2.0
/*
 * The software engine: executes jobs exactly, with the integer-only MX core
 * shared with libmxaccel, so its results are bit-identical to the
 * library's EMULATED kernels.
 *
 * Each ring has a work item on an unbound workqueue that runs the ring's
 * one job; an op's rows are spread in chunks over the online CPUs, on a
 * second workqueue, with chunk descriptors preallocated per ring.  Nothing
 * here allocates memory.  Every 256 block operations the work yields the
 * CPU (cond_resched()) and checks whether the job must stop, so a job
 * never pins a CPU and an aborted job ends within microseconds of work.
 * Small jobs run in the submitting thread (run_inline).
 */
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_gem.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_geom.h"

/* Block operations between two yields and stop checks. */
#define SOFT_YIELD_EVERY	256
/* Ops of fewer block operations run in one thread, without chunks. */
#define SOFT_SPLIT_MIN		4096
#define SOFT_MAX_CHUNKS		64

/*
 * GEMMs whose B, decoded, fits this many bytes decode every element once
 * (B at the start of the op, each row of A before its row of C), as the
 * library's exact kernel does, instead of once per block dot product.
 */
#define SOFT_DECODE_MAX		(256 * 1024)

/*
 * Decoded elements: each code's integer k (its value is k * 2^exp of its
 * block), and per block that exponent and whether the block needs the
 * special-value path (an Inf or NaN code, or a NaN scale).
 */
struct soft_decoded {
	s64 *k;
	s16 *exp;
	u8 *special;
};

/* Kernel addresses of an op's operands, and its decode scratch. */
struct soft_op_ptrs {
	u8 *a_data;
	u8 *a_scale;
	u8 *b_data;
	u8 *b_scale;
	u8 *c;
	u32 n_chunks;		/* workers the op is split over */
	struct soft_decoded b;	/* all of B; b.k NULL: no decoding */
	struct soft_decoded *a;	/* a row of A per chunk */
};

struct soft_ring;

struct soft_chunk {
	struct work_struct work;
	struct soft_ring *sr;
	struct mxaccel_job *job;
	u32 op;
	u32 row0, row1;
	int err;
};

struct soft_ring {
	struct work_struct work;
	struct soft_engine *se;
	struct mxaccel_job *job;	/* set by run(), read by work */
	struct completion chunks_done;
	atomic_t chunks_left;
	struct soft_chunk chunks[SOFT_MAX_CHUNKS];
};

struct soft_engine {
	struct mxaccel_engine base;
	struct workqueue_struct *ring_wq;	/* one work item per ring */
	struct workqueue_struct *chunk_wq;	/* row chunks of an op */
	struct soft_ring *rings;
};

/* Counts block operations; every SOFT_YIELD_EVERY yields and checks. */
struct soft_pace {
	struct mxaccel_job *job;
	unsigned int count;
};

static int soft_pace(struct soft_pace *p, unsigned int ops)
{
	p->count += ops;
	if (p->count < SOFT_YIELD_EVERY)
		return 0;
	p->count = 0;
	cond_resched();
	return mxaccel_job_should_stop(p->job);
}

static u32 load_bits(const u8 *row, u32 dtype, u32 i)
{
	if (dtype == DRM_MXACCEL_DTYPE_BF16)
		return (u32)((const u16 *)row)[i] << 16;
	return ((const u32 *)row)[i];
}

static void store_bits(u8 *row, u32 dtype, u32 i, u32 bits)
{
	if (dtype == DRM_MXACCEL_DTYPE_BF16)
		((u16 *)row)[i] = (u16)bits;
	else
		((u32 *)row)[i] = bits;
}

/* Operand a or b of an op, as the core's geometry. */
static struct mxcore_geom op_geom(const struct drm_mxaccel_op *op, bool b)
{
	return b ? mxaccel_mx_geom(&op->b, &op->b_scale, op->n, op->k) :
		   mxaccel_mx_geom(&op->a, &op->a_scale, op->m, op->k);
}

static u64 data_stride(const struct drm_mxaccel_op *op, bool b)
{
	struct mxcore_geom g = op_geom(op, b);

	return mxcore_geom_data_stride(&g);
}

static u64 scale_at(const struct drm_mxaccel_op *op, bool b, u32 row,
		    u32 block)
{
	struct mxcore_geom g = op_geom(op, b);

	return mxcore_geom_scale_index(&g, row, block);
}

static u64 dense_stride(const struct drm_mxaccel_dense_operand *d, u32 cols)
{
	return mxcore_dense_stride(d->dtype, cols, d->stride);
}

/* Row of operand a or b of an MX (E8M0) GEMM. */
static void decode_row(const struct drm_mxaccel_op *op, bool is_b,
		       const u8 *codes, const u8 *scales, u32 row,
		       struct soft_decoded *d)
{
	enum mxcore_elem elem = is_b ? op->b.elem : op->a.elem;
	u64 bbytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	int k_exp = mxcore_format(elem)->k_exp;
	u32 b;

	for (b = 0; b < op->k / MXCORE_BLOCK; b++) {
		u8 s = scales[scale_at(op, is_b, row, b)];

		d->special[b] = mxcore_decode_block(elem, codes + b * bbytes,
						    d->k + (u64)b * MXCORE_BLOCK) ||
				s == MXCORE_SCALE_NAN;
		d->exp[b] = (s16)(k_exp + s - 127);
	}
}

/* B decoded once per op: every row, into p->b. */
static void decode_b(const struct drm_mxaccel_op *op,
		     const struct soft_op_ptrs *p)
{
	u32 blocks = op->k / MXCORE_BLOCK, j;

	for (j = 0; j < op->n; j++) {
		struct soft_decoded row = {
			.k = p->b.k + (u64)j * op->k,
			.exp = p->b.exp + (u64)j * blocks,
			.special = p->b.special + (u64)j * blocks,
		};

		decode_row(op, true, p->b_data + (u64)j * data_stride(op, true),
			   p->b_scale, j, &row);
	}
}

/*
 * One row of C.  With da, the op's B is decoded in p->b and row i of A is
 * decoded into *da first; blocks with special values, and every block
 * without da, take the block dot product of the codes.
 */
static int gemm_row(struct soft_pace *pace, const struct drm_mxaccel_op *op,
		    const struct soft_op_ptrs *p, struct soft_decoded *da, u32 i)
{
	enum mxcore_elem ea = op->a.elem, eb = op->b.elem;
	enum mxcore_dtype dt = op->c.dtype == DRM_MXACCEL_DTYPE_BF16 ?
			       MXCORE_BF16 : MXCORE_F32;
	u64 ablk = mxcore_row_bytes(ea, MXCORE_BLOCK);
	u64 bblk = mxcore_row_bytes(eb, MXCORE_BLOCK);
	const u8 *arow = p->a_data + (u64)i * data_stride(op, false);
	u8 *crow = p->c + (u64)i * dense_stride(&op->c, op->n);
	u32 blocks = op->k / MXCORE_BLOCK, j, kb;
	struct mxcore_acc acc;
	int err;

	if (da)
		decode_row(op, false, arow, p->a_scale, i, da);
	for (j = 0; j < op->n; j++) {
		const u8 *brow = p->b_data + (u64)j * data_stride(op, true);
		u64 jb = (u64)j * blocks;

		mxcore_acc_init(&acc);
		if (op->flags & DRM_MXACCEL_OP_ACCUMULATE)
			mxcore_acc_add_float(&acc, load_bits(crow, op->c.dtype, j),
					     MXCORE_F32);
		for (kb = 0; kb < blocks; kb++) {
			if (da && !da->special[kb] && !p->b.special[jb + kb])
				mxcore_acc_dot_decoded(&acc,
					da->k + (u64)kb * MXCORE_BLOCK,
					p->b.k + (jb + kb) * MXCORE_BLOCK,
					da->exp[kb] + p->b.exp[jb + kb]);
			else
				mxcore_acc_block_dot(&acc,
					ea, arow + kb * ablk,
					p->a_scale[scale_at(op, false, i, kb)],
					eb, brow + kb * bblk,
					p->b_scale[scale_at(op, true, j, kb)]);
			err = soft_pace(pace, 1);
			if (err)
				return err;
		}
		store_bits(crow, op->c.dtype, j, mxcore_acc_round(&acc, dt));
	}
	return 0;
}

/*
 * One row of a QUANTIZE: each block through the core's torchao-exact
 * function, mxcore_quantize_block() for E8M0 scales and
 * mxcore_nvfp4_quantize_block() for UE4M3 ones (with the op's tensor
 * scale), as the library's cpu backend does.
 */
/* A GEMM with a UE4M3 (NVFP4) operand: MX x MX has the paths above. */
static bool gemm_has_ue4m3(const struct drm_mxaccel_op *op)
{
	return op->a_scale.scale_type == DRM_MXACCEL_SCALE_TYPE_UE4M3 ||
	       op->b_scale.scale_type == DRM_MXACCEL_SCALE_TYPE_UE4M3;
}

static struct mxcore_scaling op_scaling(const struct drm_mxaccel_op *op,
					bool b)
{
	const struct drm_mxaccel_block_scale *bs = b ? &op->b_scale :
						       &op->a_scale;

	return (struct mxcore_scaling){
		.elem = b ? op->b.elem : op->a.elem,
		.scale_type = bs->scale_type,
		.tensor_scale = bs->tensor_scale,
	};
}

/*
 * One row of C of a GEMM with a UE4M3 operand, NVFP4 x NVFP4 or mixed
 * with MX: K in segments of 16 elements (each inside one block of either
 * side, blocks being 16 or 32), every segment's exact product through
 * the core's mxcore_acc_seg_dot() (element codes, block scales and tensor
 * scales are integers times powers of two), one rounding at the end.
 */
static int gemm_row_seg(struct soft_pace *pace, const struct drm_mxaccel_op *op,
			const struct soft_op_ptrs *p, u32 i)
{
	struct mxcore_geom ga = op_geom(op, false), gb = op_geom(op, true);
	struct mxcore_scaling fa = op_scaling(op, false);
	struct mxcore_scaling fb = op_scaling(op, true);
	u32 ba = mxcore_geom_block(&ga), bb = mxcore_geom_block(&gb);
	u32 seg = min(ba, bb), segs = op->k / seg, j, s;
	enum mxcore_dtype dt = op->c.dtype == DRM_MXACCEL_DTYPE_BF16 ?
			       MXCORE_BF16 : MXCORE_F32;
	const u8 *arow = p->a_data + mxcore_geom_data_offset(&ga, i);
	u8 *crow = p->c + (u64)i * dense_stride(&op->c, op->n);
	struct mxcore_acc acc;
	int err;

	for (j = 0; j < op->n; j++) {
		const u8 *brow = p->b_data + mxcore_geom_data_offset(&gb, j);

		mxcore_acc_init(&acc);
		if (op->flags & DRM_MXACCEL_OP_ACCUMULATE)
			mxcore_acc_add_float(&acc, load_bits(crow, op->c.dtype, j),
					     MXCORE_F32);
		for (s = 0; s < segs; s++) {
			u32 k0 = s * seg;

			mxcore_acc_seg_dot(&acc, seg,
				&fa, arow + mxcore_row_bytes(fa.elem, k0),
				p->a_scale[mxcore_geom_scale_index(&ga, i, k0 / ba)],
				&fb, brow + mxcore_row_bytes(fb.elem, k0),
				p->b_scale[mxcore_geom_scale_index(&gb, j, k0 / bb)]);
			err = soft_pace(pace, 1);
			if (err)
				return err;
		}
		store_bits(crow, op->c.dtype, j, mxcore_acc_round(&acc, dt));
	}
	return 0;
}

static int quantize_row(struct soft_pace *pace,
			const struct drm_mxaccel_op *op,
			const struct soft_op_ptrs *p, u32 r)
{
	struct mxcore_geom g = op_geom(op, false);
	u32 block = mxcore_geom_block(&g);
	u64 blk = mxcore_geom_block_bytes(&g);
	const u8 *in = p->c + (u64)r * dense_stride(&op->c, op->k);
	u8 *out = p->a_data + (u64)r * mxcore_geom_data_stride(&g);
	bool nvfp4 = op->a_scale.scale_type == DRM_MXACCEL_SCALE_TYPE_UE4M3;
	u32 x[MXCORE_BLOCK];
	u32 b, i;
	int err;

	for (b = 0; b < op->k / block; b++) {
		for (i = 0; i < block; i++)
			x[i] = load_bits(in, op->c.dtype, b * block + i);
		p->a_scale[mxcore_geom_scale_index(&g, r, b)] = nvfp4 ?
			mxcore_nvfp4_quantize_block(x, op->a_scale.tensor_scale,
						    out + b * blk) :
			mxcore_quantize_block(op->a.elem, op->scale_mode, x,
					      out + b * blk);
		err = soft_pace(pace, 1);
		if (err)
			return err;
	}
	return 0;
}

/* Rows [row0, row1) of op opi, as the chunk-th worker of the op. */
static int run_rows(struct mxaccel_job *job, u32 opi, u32 chunk, u32 row0,
		    u32 row1)
{
	const struct drm_mxaccel_op *op = &job->ops[opi];
	const struct soft_op_ptrs *p =
		&((const struct soft_op_ptrs *)job->engine_priv)[opi];
	struct soft_pace pace = { .job = job };
	u32 r;
	int err = mxaccel_job_should_stop(job);

	for (r = row0; r < row1 && !err; r++) {
		if (op->kind == DRM_MXACCEL_OP_QUANTIZE)
			err = quantize_row(&pace, op, p, r);
		else if (gemm_has_ue4m3(op))
			err = gemm_row_seg(&pace, op, p, r);
		else
			err = gemm_row(&pace, op, p, p->b.k ? &p->a[chunk] : NULL,
				       r);
	}
	return err;
}

static void soft_chunk_work(struct work_struct *work)
{
	struct soft_chunk *c = container_of(work, struct soft_chunk, work);
	struct soft_ring *sr = c->sr;

	c->err = run_rows(c->job, c->op, c - sr->chunks, c->row0, c->row1);
	if (atomic_dec_and_test(&sr->chunks_left))
		complete(&sr->chunks_done);
}

/* Block operations of an op: blocks of A (32, or 16 for UE4M3). */
static u64 op_blocks(const struct drm_mxaccel_op *op)
{
	struct mxcore_geom g = op_geom(op, false);
	u64 blocks = mxcore_geom_blocks(&g);

	return op->kind == DRM_MXACCEL_OP_GEMM ? (u64)op->m * op->n * blocks :
						 (u64)op->m * blocks;
}

/*
 * One op: its rows in chunks over the CPUs when sr is given and the op is
 * large enough, else all in this thread.
 */
static int run_op(struct soft_ring *sr, struct mxaccel_job *job, u32 opi)
{
	const struct drm_mxaccel_op *op = &job->ops[opi];
	const struct soft_op_ptrs *p =
		&((const struct soft_op_ptrs *)job->engine_priv)[opi];
	u32 n, i, per;
	int err = 0;

	/* Swizzled padding is written as zero, like torchao's to_blocked. */
	if (op->kind == DRM_MXACCEL_OP_QUANTIZE &&
	    op->a.scale_layout == DRM_MXACCEL_LAYOUT_SWIZZLED) {
		struct mxcore_geom g = op_geom(op, false);
		u64 span = 0;

		/* Validated at SUBMIT: the span fits its buffer object. */
		mxcore_geom_scale_span(&g, &span);
		memset(p->a_scale, 0, span);
	}

	if (op->kind == DRM_MXACCEL_OP_GEMM && p->b.k)
		decode_b(op, p);
	n = p->n_chunks;
	if (!sr || n < 2)
		return run_rows(job, opi, 0, 0, op->m);

	per = DIV_ROUND_UP(op->m, n);
	n = DIV_ROUND_UP(op->m, per);
	reinit_completion(&sr->chunks_done);
	atomic_set(&sr->chunks_left, n);
	for (i = 0; i < n; i++) {
		struct soft_chunk *c = &sr->chunks[i];

		c->job = job;
		c->op = opi;
		c->row0 = i * per;
		c->row1 = min(op->m, (i + 1) * per);
		c->err = 0;
		queue_work(sr->se->chunk_wq, &c->work);
	}
	wait_for_completion(&sr->chunks_done);
	for (i = 0; i < n && !err; i++)
		err = sr->chunks[i].err;
	return err;
}

static int run_ops(struct soft_ring *sr, struct mxaccel_job *job)
{
	int err = 0;
	u32 i;

	/* The timeout kselftests need a job that never finishes by itself. */
	while (READ_ONCE(mxaccel_test_hang) && !mxaccel_job_should_stop(job))
		usleep_range(2000, 5000);

	for (i = 0; i < job->op_count && !err; i++)
		err = run_op(sr, job, i);
	return err ? err : mxaccel_job_should_stop(job);
}

static void soft_ring_work(struct work_struct *work)
{
	struct soft_ring *sr = container_of(work, struct soft_ring, work);
	/* The next run() may store another job once this one completes. */
	struct mxaccel_job *job = READ_ONCE(sr->job);
	bool cookie = dma_fence_begin_signalling();

	mxaccel_job_complete(job, run_ops(sr, job));
	dma_fence_end_signalling(cookie);
}

static struct soft_engine *to_soft(struct mxaccel_engine *engine)
{
	return container_of(engine, struct soft_engine, base);
}

static void soft_run(struct mxaccel_engine *engine, unsigned int ring,
		     struct mxaccel_job *job)
{
	struct soft_engine *se = to_soft(engine);

	WRITE_ONCE(se->rings[ring].job, job);
	queue_work(se->ring_wq, &se->rings[ring].work);
}

static int soft_run_inline(struct mxaccel_engine *engine,
			   struct mxaccel_job *job)
{
	return run_ops(NULL, job);
}

/* The work polls mxaccel_job_should_stop(): nothing to do here. */
static void soft_abort(struct mxaccel_engine *engine, unsigned int ring,
		       struct mxaccel_job *job, int err)
{
}

/* A job always stops within SOFT_YIELD_EVERY block operations. */
static void soft_reset(struct mxaccel_engine *engine, unsigned int ring)
{
	flush_work(&to_soft(engine)->rings[ring].work);
}

static u8 *span_ptr(struct mxaccel_job *job, u32 op, enum mxaccel_opnd which)
{
	const struct mxaccel_span *sp = &job->spans[op][which];

	return sp->used ?
	       (u8 *)job->bos[sp->bo].bo->vmap.vaddr + sp->lo : NULL;
}

/* Bytes of decoded elements for rows x cols. */
static u64 decoded_bytes(u64 rows, u64 cols)
{
	return rows * cols * sizeof(s64) +
	       rows * (cols / MXCORE_BLOCK) * (sizeof(s16) + 1);
}

/* Carve a decoded matrix of rows x cols out of *mem. */
static void decoded_at(struct soft_decoded *d, u8 **mem, u64 rows, u64 cols)
{
	d->k = (s64 *)*mem;
	*mem += rows * cols * sizeof(s64);
	d->exp = (s16 *)*mem;
	*mem += rows * (cols / MXCORE_BLOCK) * sizeof(s16);
	d->special = *mem;
	*mem += rows * (cols / MXCORE_BLOCK);
}

/*
 * The decode scratch of a GEMM: B whole and one row of A per chunk, all
 * allocated here, at SUBMIT; none if it would exceed SOFT_DECODE_MAX (the
 * op then decodes per block dot product).
 */
static int decode_scratch(struct soft_op_ptrs *p,
			  const struct drm_mxaccel_op *op)
{
	u64 need = decoded_bytes(op->n, op->k) +
		   p->n_chunks * decoded_bytes(1, op->k);
	u8 *mem;
	u32 c;

	if (op->kind != DRM_MXACCEL_OP_GEMM || gemm_has_ue4m3(op) ||
	    need > SOFT_DECODE_MAX)
		return 0;
	p->a = kcalloc(p->n_chunks, sizeof(*p->a), GFP_KERNEL_ACCOUNT);
	mem = kvmalloc(need, GFP_KERNEL_ACCOUNT);
	if (!p->a || !mem) {
		kfree(p->a);
		kvfree(mem);
		p->a = NULL;
		return -ENOMEM;
	}
	decoded_at(&p->b, &mem, op->n, op->k);
	for (c = 0; c < p->n_chunks; c++)
		decoded_at(&p->a[c], &mem, 1, op->k);
	return 0;
}

static void soft_job_fini(struct mxaccel_engine *engine,
			  struct mxaccel_job *job)
{
	struct soft_op_ptrs *ptrs = job->engine_priv;
	u32 i;

	for (i = 0; i < job->op_count; i++) {
		kvfree(ptrs[i].b.k);	/* the start of the scratch */
		kfree(ptrs[i].a);
	}
	kvfree(ptrs);
	job->engine_priv = NULL;
}

static int soft_job_init(struct mxaccel_engine *engine,
			 struct mxaccel_job *job)
{
	struct soft_op_ptrs *ptrs;
	u32 i;
	int ret;

	ptrs = kvcalloc(job->op_count, sizeof(*ptrs), GFP_KERNEL_ACCOUNT);
	if (!ptrs)
		return -ENOMEM;
	job->engine_priv = ptrs;
	for (i = 0; i < job->op_count; i++) {
		const struct drm_mxaccel_op *op = &job->ops[i];
		struct soft_op_ptrs *p = &ptrs[i];

		p->a_data = span_ptr(job, i, MXACCEL_OPND_A_DATA);
		p->a_scale = span_ptr(job, i, MXACCEL_OPND_A_SCALE);
		p->b_data = span_ptr(job, i, MXACCEL_OPND_B_DATA);
		p->b_scale = span_ptr(job, i, MXACCEL_OPND_B_SCALE);
		p->c = span_ptr(job, i, MXACCEL_OPND_C);
		/* Fixed now: the decode scratch has a row of A per chunk. */
		p->n_chunks = op_blocks(op) < SOFT_SPLIT_MIN ? 1 :
			      min3(num_online_cpus(), op->m,
				   (u32)SOFT_MAX_CHUNKS);
		ret = decode_scratch(p, op);
		if (ret) {
			soft_job_fini(engine, job);
			return ret;
		}
	}
	return 0;
}

static int soft_bo_map(struct mxaccel_engine *engine, struct mxaccel_bo *bo)
{
	return mxaccel_bo_vmap(bo);
}

static void soft_bo_unmap(struct mxaccel_engine *engine, struct mxaccel_bo *bo)
{
	mxaccel_bo_vunmap(bo);
}

static void soft_destroy(struct mxaccel_engine *engine)
{
	struct soft_engine *se = to_soft(engine);

	destroy_workqueue(se->ring_wq);
	destroy_workqueue(se->chunk_wq);
	kfree(se->rings);
	kfree(se);
}

static const struct mxaccel_engine_ops soft_engine_ops = {
	.name = "software",
	.kind = DRM_MXACCEL_ENGINE_SOFTWARE,
	.job_init = soft_job_init,
	.job_fini = soft_job_fini,
	.run = soft_run,
	.run_inline = soft_run_inline,
	.abort = soft_abort,
	.reset = soft_reset,
	.bo_map = soft_bo_map,
	.bo_unmap = soft_bo_unmap,
	.destroy = soft_destroy,
};

static const struct mxaccel_engine_limits soft_limits = {
	.elem_mask = BIT_ULL(DRM_MXACCEL_ELEM_E4M3) |
		     BIT_ULL(DRM_MXACCEL_ELEM_E5M2) |
		     BIT_ULL(DRM_MXACCEL_ELEM_E2M3) |
		     BIT_ULL(DRM_MXACCEL_ELEM_E3M2) |
		     BIT_ULL(DRM_MXACCEL_ELEM_E2M1),
	.op_mask = BIT_ULL(DRM_MXACCEL_OP_GEMM) |
		   BIT_ULL(DRM_MXACCEL_OP_QUANTIZE),
	.mode_mask = BIT_ULL(DRM_MXACCEL_SCALE_FLOOR) |
		     BIT_ULL(DRM_MXACCEL_SCALE_RCEIL) |
		     BIT_ULL(DRM_MXACCEL_SCALE_CEIL) |
		     BIT_ULL(DRM_MXACCEL_SCALE_EVEN) |
		     BIT_ULL(DRM_MXACCEL_SCALE_NVFP4),
	.quantize_scale_types = BIT_ULL(DRM_MXACCEL_SCALE_TYPE_E8M0) |
				BIT_ULL(DRM_MXACCEL_SCALE_TYPE_UE4M3),
	.gemm_scale_types = BIT_ULL(DRM_MXACCEL_SCALE_TYPE_E8M0) |
			    BIT_ULL(DRM_MXACCEL_SCALE_TYPE_UE4M3),
	.max_dim = MXACCEL_MAX_DIM,
	.max_ops = MXACCEL_MAX_OPS,
	.ring_jobs = 1,
	.max_bo_size = MXACCEL_MAX_BO_SIZE,
	.offset_align = 1,
};

struct mxaccel_engine *mxaccel_soft_engine_create(struct mxaccel_device *mdev,
						  unsigned int n_rings)
{
	struct soft_engine *se;
	unsigned int i, j;

	/* The uapi's enums are handed to the MX core unchanged. */
	BUILD_BUG_ON((int)DRM_MXACCEL_ELEM_E4M3 - (int)MXCORE_E4M3);
	BUILD_BUG_ON((int)DRM_MXACCEL_ELEM_E5M2 - (int)MXCORE_E5M2);
	BUILD_BUG_ON((int)DRM_MXACCEL_ELEM_E2M3 - (int)MXCORE_E2M3);
	BUILD_BUG_ON((int)DRM_MXACCEL_ELEM_E3M2 - (int)MXCORE_E3M2);
	BUILD_BUG_ON((int)DRM_MXACCEL_ELEM_E2M1 - (int)MXCORE_E2M1);
	BUILD_BUG_ON((int)DRM_MXACCEL_SCALE_FLOOR - (int)MXCORE_FLOOR);
	BUILD_BUG_ON((int)DRM_MXACCEL_SCALE_RCEIL - (int)MXCORE_RCEIL);
	BUILD_BUG_ON((int)DRM_MXACCEL_SCALE_CEIL - (int)MXCORE_CEIL);
	BUILD_BUG_ON((int)DRM_MXACCEL_SCALE_EVEN - (int)MXCORE_EVEN);

	se = kzalloc(sizeof(*se), GFP_KERNEL);
	if (!se)
		return ERR_PTR(-ENOMEM);
	se->rings = kcalloc(n_rings, sizeof(*se->rings), GFP_KERNEL);
	/*
	 * Both workqueues are on the fence-signalling path: they must make
	 * progress under memory pressure.
	 */
	se->ring_wq = alloc_workqueue("mxaccel%u-ring",
				      WQ_UNBOUND | WQ_MEM_RECLAIM, n_rings,
				      mdev->index);
	se->chunk_wq = alloc_workqueue("mxaccel%u-chunk",
				       WQ_UNBOUND | WQ_MEM_RECLAIM, 0,
				       mdev->index);
	if (!se->rings || !se->ring_wq || !se->chunk_wq) {
		if (se->ring_wq)
			destroy_workqueue(se->ring_wq);
		if (se->chunk_wq)
			destroy_workqueue(se->chunk_wq);
		kfree(se->rings);
		kfree(se);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < n_rings; i++) {
		struct soft_ring *sr = &se->rings[i];

		sr->se = se;
		INIT_WORK(&sr->work, soft_ring_work);
		init_completion(&sr->chunks_done);
		for (j = 0; j < SOFT_MAX_CHUNKS; j++) {
			sr->chunks[j].sr = sr;
			INIT_WORK(&sr->chunks[j].work, soft_chunk_work);
		}
	}
	se->base.ops = &soft_engine_ops;
	se->base.mdev = mdev;
	se->base.limits = soft_limits;
	se->base.n_rings = n_rings;
	return &se->base;
}
