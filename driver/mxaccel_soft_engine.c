// SPDX-License-Identifier: GPL-2.0
/*
 * The software engine: executes jobs exactly, with the integer-only MX core
 * shared with libmxaccel, so its results are bit-identical to the
 * library's EMULATED kernels.  A job runs on an unbound workqueue; the rows
 * of each operation are spread over the online CPUs.  Long work checks
 * between rows whether the job was told to stop.
 */
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxcore.h"

struct soft_engine {
	struct mxaccel_engine base;
	struct workqueue_struct *job_wq;	/* one work item per job */
	struct workqueue_struct *row_wq;	/* row chunks of an op */
};

/* One run of a job: its fence, and the work that executes it. */
struct soft_run {
	struct dma_fence fence;
	spinlock_t lock;
	struct work_struct work;
	struct soft_engine *se;
	struct mxaccel_job *job;
};

struct soft_chunk {
	struct work_struct work;
	struct soft_run *run;
	u32 op;
	u32 row0, row1;
	struct completion *done;
	atomic_t *left;
};

static const char *soft_fence_driver_name(struct dma_fence *f)
{
	return "mxaccel";
}

static const char *soft_fence_timeline_name(struct dma_fence *f)
{
	return "mxaccel-soft-engine";
}

static void soft_fence_release(struct dma_fence *f)
{
	kfree_rcu(container_of(f, struct soft_run, fence), fence.rcu);
}

static const struct dma_fence_ops soft_fence_ops = {
	.get_driver_name = soft_fence_driver_name,
	.get_timeline_name = soft_fence_timeline_name,
	.release = soft_fence_release,
};

/* Why the job must stop now, or 0. */
static int soft_stop_reason(struct mxaccel_job *job)
{
	int err = mxaccel_job_should_stop(job);

	if (!err && READ_ONCE(job->queue->dying))
		err = -ECANCELED;
	return err;
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

static u64 data_stride(const struct drm_mxaccel_mx_operand *mx, u32 cols)
{
	return mx->data_stride ? mx->data_stride :
	       mxcore_row_bytes(mx->elem, cols);
}

static u64 scale_at(const struct drm_mxaccel_mx_operand *mx, u32 rows,
		    u32 cols, u32 row, u32 block)
{
	u32 blocks = cols / MXCORE_BLOCK;

	if (mx->scale_layout == DRM_MXACCEL_LAYOUT_SWIZZLED)
		return mxcore_swizzle_index(rows, blocks, row, block);
	return (u64)row * (mx->scale_stride ? mx->scale_stride : blocks) +
	       block;
}

static u64 dense_stride(const struct drm_mxaccel_dense_operand *d, u32 cols)
{
	return d->stride ? d->stride :
	       (u64)cols * (d->dtype == DRM_MXACCEL_DTYPE_BF16 ? 2 : 4);
}

/* One row of C; a long row checks every 64 columns whether to stop. */
static void gemm_row(struct mxaccel_job *job, const struct drm_mxaccel_op *op,
		     const struct mxaccel_op_ptrs *p, u32 i)
{
	enum mxcore_elem ea = op->a.elem, eb = op->b.elem;
	enum mxcore_dtype dt = op->c.dtype == DRM_MXACCEL_DTYPE_BF16 ?
			       MXCORE_BF16 : MXCORE_F32;
	u64 ablk = mxcore_row_bytes(ea, MXCORE_BLOCK);
	u64 bblk = mxcore_row_bytes(eb, MXCORE_BLOCK);
	const u8 *arow = p->a_data + (u64)i * data_stride(&op->a, op->k);
	u8 *crow = p->c + (u64)i * dense_stride(&op->c, op->n);
	struct mxcore_acc acc;
	u32 j, kb;

	for (j = 0; j < op->n; j++) {
		const u8 *brow = p->b_data + (u64)j * data_stride(&op->b, op->k);

		mxcore_acc_init(&acc);
		if (op->flags & DRM_MXACCEL_OP_ACCUMULATE)
			mxcore_acc_add_float(&acc, load_bits(crow, op->c.dtype, j),
					     MXCORE_F32);
		for (kb = 0; kb < op->k / MXCORE_BLOCK; kb++)
			mxcore_acc_block_dot(&acc,
				ea, arow + kb * ablk,
				p->a_scale[scale_at(&op->a, op->m, op->k, i, kb)],
				eb, brow + kb * bblk,
				p->b_scale[scale_at(&op->b, op->n, op->k, j, kb)]);
		store_bits(crow, op->c.dtype, j, mxcore_acc_round(&acc, dt));
		if (!((j + 1) % 64) && soft_stop_reason(job))
			return;
	}
}

static void quantize_row(const struct drm_mxaccel_op *op,
			 const struct mxaccel_op_ptrs *p, u32 r)
{
	enum mxcore_elem elem = op->a.elem;
	u64 blk = mxcore_row_bytes(elem, MXCORE_BLOCK);
	const u8 *in = p->c + (u64)r * dense_stride(&op->c, op->k);
	u8 *out = p->a_data + (u64)r * data_stride(&op->a, op->k);
	u32 x[MXCORE_BLOCK];
	u32 b, i;

	for (b = 0; b < op->k / MXCORE_BLOCK; b++) {
		for (i = 0; i < MXCORE_BLOCK; i++)
			x[i] = load_bits(in, op->c.dtype,
					 b * MXCORE_BLOCK + i);
		p->a_scale[scale_at(&op->a, op->m, op->k, r, b)] =
			mxcore_quantize_block(elem, op->scale_mode, x,
					      out + b * blk);
	}
}

static void soft_chunk_work(struct work_struct *work)
{
	struct soft_chunk *c = container_of(work, struct soft_chunk, work);
	struct mxaccel_job *job = c->run->job;
	const struct drm_mxaccel_op *op = &job->ops[c->op];
	u32 r;

	for (r = c->row0; r < c->row1 && !soft_stop_reason(job); r++) {
		if (op->kind == DRM_MXACCEL_OP_GEMM)
			gemm_row(job, op, &job->ptrs[c->op], r);
		else
			quantize_row(op, &job->ptrs[c->op], r);
		cond_resched();
	}
	if (atomic_dec_and_test(c->left))
		complete(c->done);
}

/* Run one op's rows in chunks over the CPUs; -ENOMEM or 0. */
static int soft_run_op(struct soft_run *run, u32 opi)
{
	const struct drm_mxaccel_op *op = &run->job->ops[opi];
	u32 n = min_t(u32, num_online_cpus(), op->m), i, per;
	DECLARE_COMPLETION_ONSTACK(done);
	struct soft_chunk *chunks;
	atomic_t left;

	/* Swizzled padding is written as zero, like torchao's to_blocked. */
	if (op->kind == DRM_MXACCEL_OP_QUANTIZE &&
	    op->a.scale_layout == DRM_MXACCEL_LAYOUT_SWIZZLED)
		memset(run->job->ptrs[opi].a_scale, 0,
		       mxcore_swizzle_bytes(op->m, op->k / MXCORE_BLOCK));

	chunks = kcalloc(n, sizeof(*chunks), GFP_KERNEL);
	if (!chunks)
		return -ENOMEM;
	per = DIV_ROUND_UP(op->m, n);
	atomic_set(&left, n);
	for (i = 0; i < n; i++) {
		chunks[i] = (struct soft_chunk){
			.run = run, .op = opi, .done = &done, .left = &left,
			.row0 = i * per, .row1 = min(op->m, (i + 1) * per),
		};
		INIT_WORK(&chunks[i].work, soft_chunk_work);
		queue_work(run->se->row_wq, &chunks[i].work);
	}
	wait_for_completion(&done);
	kfree(chunks);
	return 0;
}

static void soft_job_work(struct work_struct *work)
{
	struct soft_run *run = container_of(work, struct soft_run, work);
	struct mxaccel_job *job = run->job;
	int err = 0;
	u32 i;

	/* The timeout kselftests need a job that never finishes by itself. */
	while (READ_ONCE(mxaccel_test_hang) && !soft_stop_reason(job))
		usleep_range(2000, 5000);

	for (i = 0; i < job->op_count && !err; i++) {
		err = soft_stop_reason(job);
		if (!err)
			err = soft_run_op(run, i);
	}
	if (!err)
		err = soft_stop_reason(job);

	err = mxaccel_job_finish(job, err);
	if (err)
		dma_fence_set_error(&run->fence, err);
	dma_fence_signal(&run->fence);
	dma_fence_put(&run->fence);
}

static struct dma_fence *soft_run(struct mxaccel_engine *engine,
				  struct mxaccel_job *job)
{
	struct soft_engine *se = container_of(engine, struct soft_engine, base);
	struct soft_run *run;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&run->lock);
	/* Jobs of different queues finish out of order: a context each. */
	dma_fence_init(&run->fence, &soft_fence_ops, &run->lock,
		       dma_fence_context_alloc(1), 1);
	run->se = se;
	run->job = job;
	INIT_WORK(&run->work, soft_job_work);
	/* References: the scheduler's, the work's, and the job's. */
	dma_fence_get(&run->fence);
	spin_lock(&job->lock);
	job->hw_fence = dma_fence_get(&run->fence);
	spin_unlock(&job->lock);
	queue_work(se->job_wq, &run->work);
	return &run->fence;
}

static void soft_destroy(struct mxaccel_engine *engine)
{
	struct soft_engine *se = container_of(engine, struct soft_engine, base);

	destroy_workqueue(se->job_wq);
	destroy_workqueue(se->row_wq);
	kfree(se);
}

static const struct mxaccel_engine_ops soft_engine_ops = {
	.name = "software",
	.kind = DRM_MXACCEL_ENGINE_SOFTWARE,
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
		     BIT_ULL(DRM_MXACCEL_SCALE_EVEN),
	.run = soft_run,
	.destroy = soft_destroy,
};

struct mxaccel_engine *mxaccel_soft_engine_create(struct mxaccel_device *mdev)
{
	struct soft_engine *se;

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
	se->job_wq = alloc_workqueue("mxaccel-job", WQ_UNBOUND, 0);
	se->row_wq = alloc_workqueue("mxaccel-row", WQ_UNBOUND, 0);
	if (!se->job_wq || !se->row_wq) {
		if (se->job_wq)
			destroy_workqueue(se->job_wq);
		if (se->row_wq)
			destroy_workqueue(se->row_wq);
		kfree(se);
		return ERR_PTR(-ENOMEM);
	}
	se->base.ops = &soft_engine_ops;
	se->base.mdev = mdev;
	return &se->base;
}
