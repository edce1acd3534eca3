// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT: copy the operations in, validate every field and every extent
 * against its buffer object before anything is queued (the ethos-u model),
 * map the buffer objects for the engine, collect explicit (syncobj) and
 * implicit (reservation) dependencies, and push the job to its queue.
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_submit.h"
#include "mxcore.h"

/* Operands of an op: which buffer object each one names. */
enum {
	OPND_A_DATA,
	OPND_A_SCALE,
	OPND_B_DATA,
	OPND_B_SCALE,
	OPND_C,
	OPND_COUNT
};

struct span {
	u64 lo, hi;		/* bytes [lo, hi) of the buffer object */
	u32 bo;			/* index into job->bos */
	bool used;
};

struct submit_ctx {
	struct drm_device *drm;
	struct drm_file *file;
	struct mxaccel_job *job;
	u32 bo_max;
	/* per op and operand, kept until the pointers are resolved */
	struct span (*spans)[OPND_COUNT];
};

/*
 * Index of a buffer object in the job, added on first use.  Objects are
 * compared, not handles: two handles may name one object (GEM_OPEN), and
 * it must be locked, fenced and overlap-checked as one.
 */
static int bo_index(struct submit_ctx *ctx, u32 handle, bool write, u32 *out)
{
	struct mxaccel_job *job = ctx->job;
	struct drm_gem_object *obj;
	u32 i;

	obj = drm_gem_object_lookup(ctx->file, handle);
	if (!obj)
		return mxaccel_inval(ctx->drm, -ENOENT,
				     "submit: no buffer object %u\n", handle);
	for (i = 0; i < job->bo_count; i++) {
		if (job->bos[i].obj == obj) {
			drm_gem_object_put(obj);
			job->bos[i].write |= write;
			*out = i;
			return 0;
		}
	}
	if (WARN_ON_ONCE(job->bo_count >= ctx->bo_max)) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	job->bos[i].obj = obj;
	job->bos[i].handle = handle;
	job->bos[i].write = write;
	job->bo_count++;
	*out = i;
	return 0;
}

/*
 * Record that an operand covers bytes [offset, offset + (rows - 1) * stride
 * + row_bytes) of a buffer object, which must hold them.
 */
static int add_span(struct submit_ctx *ctx, u32 op, unsigned int which,
		    const char *name, u32 handle, u64 offset, u64 rows,
		    u64 stride, u64 row_bytes, bool write)
{
	struct span *sp = &ctx->spans[op][which];
	u64 end;
	int ret;

	if (check_mul_overflow(rows - 1, stride, &end) ||
	    check_add_overflow(end, row_bytes, &end) ||
	    check_add_overflow(end, offset, &end))
		return mxaccel_inval(ctx->drm, -EOVERFLOW,
				     "submit: op %u %s extent overflows\n",
				     op, name);
	ret = bo_index(ctx, handle, write, &sp->bo);
	if (ret)
		return ret;
	if (end > ctx->job->bos[sp->bo].obj->size)
		return mxaccel_inval(ctx->drm, -EINVAL,
				     "submit: op %u %s needs %llu bytes, buffer object %u has %zu\n",
				     op, name, end, handle,
				     ctx->job->bos[sp->bo].obj->size);
	sp->lo = offset;
	sp->hi = end;
	sp->used = true;
	return 0;
}

static int check_mx(struct submit_ctx *ctx, u32 op, const char *name,
		    const struct drm_mxaccel_mx_operand *mx, u32 rows, u32 cols,
		    unsigned int data, bool write)
{
	u64 row_bytes, blocks = cols / MXCORE_BLOCK, stride;
	struct drm_device *drm = ctx->drm;
	int ret;

	if (!mxcore_elem_valid(mx->elem) ||
	    !(to_mxaccel(drm)->engine->ops->elem_mask & BIT_ULL(mx->elem)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s: element type %u\n",
				     op, name, mx->elem);
	row_bytes = mxcore_row_bytes(mx->elem, cols);
	stride = mx->data_stride ? mx->data_stride : row_bytes;
	if (stride < row_bytes)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s: data_stride %llu below a row (%llu)\n",
				     op, name, stride, row_bytes);
	ret = add_span(ctx, op, data, name, mx->data_handle, mx->data_offset,
		       rows, stride, row_bytes, write);
	if (ret)
		return ret;

	switch (mx->scale_layout) {
	case DRM_MXACCEL_LAYOUT_PLAIN:
		stride = mx->scale_stride ? mx->scale_stride : blocks;
		if (stride < blocks)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u %s: scale_stride %llu below a row (%llu)\n",
					     op, name, stride, blocks);
		return add_span(ctx, op, data + 1, name, mx->scale_handle,
				mx->scale_offset, rows, stride, blocks, write);
	case DRM_MXACCEL_LAYOUT_SWIZZLED:
		if (mx->scale_stride)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u %s: scale_stride with swizzled scales\n",
					     op, name);
		return add_span(ctx, op, data + 1, name, mx->scale_handle,
				mx->scale_offset, 1, 0,
				mxcore_swizzle_bytes(rows, blocks), write);
	}
	return mxaccel_inval(drm, -EINVAL, "submit: op %u %s: scale layout %u\n",
			     op, name, mx->scale_layout);
}

static int check_dense(struct submit_ctx *ctx, u32 op,
		       const struct drm_mxaccel_dense_operand *d, u32 rows,
		       u32 cols, bool write)
{
	struct drm_device *drm = ctx->drm;
	u64 es, row_bytes, stride;

	if (d->dtype == DRM_MXACCEL_DTYPE_F32)
		es = 4;
	else if (d->dtype == DRM_MXACCEL_DTYPE_BF16)
		es = 2;
	else
		return mxaccel_inval(drm, -EINVAL, "submit: op %u c: dtype %u\n",
				     op, d->dtype);
	row_bytes = cols * es;
	stride = d->stride ? d->stride : row_bytes;
	if (stride < row_bytes || stride % es || d->offset % es)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u c: offset %llu / stride %llu (row %llu bytes, element %llu)\n",
				     op, d->offset, stride, row_bytes, es);
	return add_span(ctx, op, OPND_C, "c", d->handle, d->offset, rows,
			stride, row_bytes, write);
}

static bool dim_ok(u32 v)
{
	return v >= 1 && v <= MXACCEL_MAX_DIM;
}

static int check_op(struct submit_ctx *ctx, u32 i,
		    const struct drm_mxaccel_op *op)
{
	const struct mxaccel_engine_ops *eops =
		to_mxaccel(ctx->drm)->engine->ops;
	struct drm_device *drm = ctx->drm;
	int ret;

	if (op->reserved[0] || op->reserved[1])
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: reserved is not zero\n", i);
	if (op->kind >= 64 || !(eops->op_mask & BIT_ULL(op->kind)))
		return mxaccel_inval(drm, -EINVAL, "submit: op %u: kind %u\n",
				     i, op->kind);
	if (!dim_ok(op->m) || !dim_ok(op->k) || op->k % MXCORE_BLOCK)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: m %u / k %u (1..%u, k a multiple of 32)\n",
				     i, op->m, op->k, MXACCEL_MAX_DIM);

	if (op->kind == DRM_MXACCEL_OP_GEMM) {
		if (op->flags & ~DRM_MXACCEL_OP_ACCUMULATE)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: unknown flags 0x%x\n",
					     i, op->flags);
		if (op->scale_mode)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: scale_mode set on a GEMM\n",
					     i);
		if (!dim_ok(op->n))
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: n %u (1..%u)\n",
					     i, op->n, MXACCEL_MAX_DIM);
		ret = check_mx(ctx, i, "a", &op->a, op->m, op->k, OPND_A_DATA,
			       false);
		if (!ret)
			ret = check_mx(ctx, i, "b", &op->b, op->n, op->k,
				       OPND_B_DATA, false);
		if (!ret)
			ret = check_dense(ctx, i, &op->c, op->m, op->n, true);
		return ret;
	}

	/* QUANTIZE */
	if (op->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: flags set on a QUANTIZE\n", i);
	if (op->n || memchr_inv(&op->b, 0, sizeof(op->b)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: n or b set on a QUANTIZE\n",
				     i);
	if (op->scale_mode >= 64 || !(eops->mode_mask & BIT_ULL(op->scale_mode)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: scale_mode %u\n", i,
				     op->scale_mode);
	ret = check_mx(ctx, i, "a", &op->a, op->m, op->k, OPND_A_DATA, true);
	if (!ret)
		ret = check_dense(ctx, i, &op->c, op->m, op->k, false);
	return ret;
}

static bool spans_overlap(const struct span *x, const struct span *y)
{
	return x->used && y->used && x->bo == y->bo && x->lo < y->hi &&
	       y->lo < x->hi;
}

/* Outputs must not overlap any other operand of their op. */
static int check_aliasing(struct submit_ctx *ctx, u32 i)
{
	const struct drm_mxaccel_op *op = &ctx->job->ops[i];
	const struct span *sp = ctx->spans[i];
	unsigned int out, in;

	for (out = 0; out < OPND_COUNT; out++) {
		bool is_out = op->kind == DRM_MXACCEL_OP_GEMM ?
			      out == OPND_C :
			      out == OPND_A_DATA || out == OPND_A_SCALE;

		if (!is_out)
			continue;
		for (in = 0; in < OPND_COUNT; in++)
			if (in != out && spans_overlap(&sp[out], &sp[in]))
				return mxaccel_inval(ctx->drm, -EINVAL,
						     "submit: op %u: output operand %u overlaps operand %u\n",
						     i, out, in);
	}
	return 0;
}

static int map_bos(struct mxaccel_job *job)
{
	u32 i;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		ret = mxaccel_gem_vmap(job->bos[i].obj, &job->bos[i].map);
		if (ret)
			return ret;
		job->bos[i].mapped = true;
	}
	return 0;
}

static u8 *span_ptr(struct submit_ctx *ctx, u32 op, unsigned int which)
{
	const struct span *sp = &ctx->spans[op][which];

	return sp->used ? (u8 *)ctx->job->bos[sp->bo].map.vaddr + sp->lo : NULL;
}

static void resolve_ptrs(struct submit_ctx *ctx)
{
	struct mxaccel_job *job = ctx->job;
	u32 i;

	for (i = 0; i < job->op_count; i++) {
		struct mxaccel_op_ptrs *p = &job->ptrs[i];

		p->a_data = span_ptr(ctx, i, OPND_A_DATA);
		p->a_scale = span_ptr(ctx, i, OPND_A_SCALE);
		p->b_data = span_ptr(ctx, i, OPND_B_DATA);
		p->b_scale = span_ptr(ctx, i, OPND_B_SCALE);
		p->c = span_ptr(ctx, i, OPND_C);
	}
}

void mxaccel_job_release(struct mxaccel_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		if (job->bos[i].mapped)
			mxaccel_gem_vunmap(job->bos[i].obj, &job->bos[i].map);
		drm_gem_object_put(job->bos[i].obj);
	}
	dma_fence_put(job->hw_fence);
	kvfree(job->bos);
	kvfree(job->ptrs);
	kvfree(job->ops);
	kfree(job);
}

static int copy_ops(struct submit_ctx *ctx,
		    const struct drm_mxaccel_submit *args)
{
	struct mxaccel_job *job = ctx->job;
	u32 i;
	int ret;

	job->ops = kvcalloc(args->op_count, sizeof(*job->ops), GFP_KERNEL);
	job->ptrs = kvcalloc(args->op_count, sizeof(*job->ptrs), GFP_KERNEL);
	ctx->bo_max = args->op_count * OPND_COUNT;
	job->bos = kvcalloc(ctx->bo_max, sizeof(*job->bos), GFP_KERNEL);
	ctx->spans = kvcalloc(args->op_count, sizeof(*ctx->spans), GFP_KERNEL);
	if (!job->ops || !job->ptrs || !job->bos || !ctx->spans)
		return -ENOMEM;
	job->op_count = args->op_count;

	for (i = 0; i < args->op_count; i++) {
		u64 at = args->ops + (u64)i * args->op_size;

		/* Newer, larger ops must have zeros past what we know. */
		ret = copy_struct_from_user(&job->ops[i], sizeof(job->ops[i]),
					    u64_to_user_ptr(at), args->op_size);
		if (ret)
			return ret == -E2BIG ?
			       mxaccel_inval(ctx->drm, -E2BIG,
					     "submit: op %u: unknown trailing fields set\n",
					     i) : ret;
		ret = check_op(ctx, i, &job->ops[i]);
		if (!ret)
			ret = check_aliasing(ctx, i);
		if (ret)
			return ret;
	}
	return 0;
}

static int add_in_syncs(struct submit_ctx *ctx,
			const struct drm_mxaccel_submit *args)
{
	u32 i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		u64 at = args->in_syncs + (u64)i * args->sync_size;
		struct drm_mxaccel_sync sync;
		struct dma_fence *fence;

		ret = copy_struct_from_user(&sync, sizeof(sync),
					    u64_to_user_ptr(at),
					    args->sync_size);
		if (ret)
			return ret;
		if (sync.pad)
			return mxaccel_inval(ctx->drm, -EINVAL,
					     "submit: in_sync %u: pad is not zero\n",
					     i);
		ret = drm_syncobj_find_fence(ctx->file, sync.handle, sync.point,
					     0, &fence);
		if (ret)
			return mxaccel_inval(ctx->drm, ret,
					     "submit: in_sync %u: syncobj %u point %llu: %d\n",
					     i, sync.handle, sync.point, ret);
		ret = drm_sched_job_add_dependency(&ctx->job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

static int check_args(struct drm_device *drm,
		      const struct drm_mxaccel_submit *args)
{
	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: unknown flags 0x%x\n", args->flags);
	if (args->reserved || args->out_sync.pad)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: reserved or pad is not zero\n");
	if (!args->op_count)
		return mxaccel_inval(drm, -EINVAL, "submit: op_count is 0\n");
	if (args->op_count > MXACCEL_MAX_OPS)
		return mxaccel_inval(drm, -E2BIG, "submit: op_count %u above %u\n",
				     args->op_count, MXACCEL_MAX_OPS);
	if (args->op_size < sizeof(struct drm_mxaccel_op))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op_size %u below %zu\n",
				     args->op_size,
				     sizeof(struct drm_mxaccel_op));
	if (args->in_sync_count > MXACCEL_MAX_IN_SYNCS)
		return mxaccel_inval(drm, -E2BIG,
				     "submit: in_sync_count %u above %u\n",
				     args->in_sync_count,
				     MXACCEL_MAX_IN_SYNCS);
	if (args->in_sync_count &&
	    args->sync_size < sizeof(struct drm_mxaccel_sync))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: sync_size %u below %zu\n",
				     args->sync_size,
				     sizeof(struct drm_mxaccel_sync));
	return 0;
}

/*
 * Arm and push under the queue's submit lock, so sequence numbers, the
 * syncobj timeline and the scheduler see jobs in one order.  Nothing here
 * can fail: every allocation happened before.
 */
static void push_job(struct mxaccel_queue *q, struct mxaccel_job *job,
		     struct dma_fence_chain *chain, struct drm_syncobj *out,
		     struct dma_fence_chain *out_chain, u64 out_point)
{
	struct dma_fence *finished;
	u32 i;

	drm_sched_job_arm(&job->base);
	finished = &job->base.s_fence->finished;
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i].obj->resv, finished,
				   job->bos[i].write ? DMA_RESV_USAGE_WRITE :
						       DMA_RESV_USAGE_READ);
	mxaccel_queue_job_add(q, job->seqno, finished);
	drm_syncobj_add_point(q->syncobj, chain, finished, job->seqno);
	if (out && out_chain)
		drm_syncobj_add_point(out, out_chain, finished, out_point);
	else if (out)
		drm_syncobj_replace_fence(out, finished);
	dma_fence_put(q->last_fence);
	q->last_fence = dma_fence_get(finished);
	drm_sched_entity_push_job(&job->base);
}

/*
 * SUBMIT: queue one job of op_count operations on a queue.
 * -EINVAL: a field out of range, flags/pad/reserved set, an extent past
 * its buffer object, overlapping output.  -E2BIG: too many ops or syncs,
 * or unknown trailing op fields set.  -EOVERFLOW: extent arithmetic
 * overflows.  -ENOENT: unknown queue, buffer object or syncobj.
 * -EFAULT: bad user pointer.  -ENOMEM.  Nothing is queued on error.
 */
int mxaccel_ioctl_submit(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_submit *args = data;
	struct submit_ctx ctx = { .drm = drm, .file = file };
	struct dma_fence_chain *chain = NULL, *out_chain = NULL;
	struct drm_syncobj *out = NULL;
	struct ww_acquire_ctx acquire;
	struct drm_gem_object **objs = NULL;
	struct mxaccel_queue *q;
	struct mxaccel_job *job;
	bool reserved = false;
	u32 i;
	int ret;

	ret = check_args(drm, args);
	if (ret)
		return ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	spin_lock_init(&job->lock);
	ctx.job = job;

	/* Holding the file lock keeps the queue alive until it is pushed. */
	mutex_lock(&mfile->lock);
	q = mxaccel_queue_get(mfile, args->queue_id);
	if (!q) {
		ret = mxaccel_inval(drm, -ENOENT, "submit: no queue %u\n",
				    args->queue_id);
		goto err_unlock;
	}
	job->queue = q;

	ret = copy_ops(&ctx, args);
	if (ret)
		goto err_unlock;
	ret = mxaccel_sched_job_init(&job->base, &q->entity, mfile);
	if (ret)
		goto err_unlock;
	ret = add_in_syncs(&ctx, args);
	if (ret)
		goto err_cleanup;
	ret = map_bos(job);
	if (ret)
		goto err_cleanup;
	resolve_ptrs(&ctx);

	chain = dma_fence_chain_alloc();
	if (!chain) {
		ret = -ENOMEM;
		goto err_cleanup;
	}
	if (args->out_sync.handle) {
		out = drm_syncobj_find(file, args->out_sync.handle);
		if (!out) {
			ret = mxaccel_inval(drm, -ENOENT,
					    "submit: no out_sync syncobj %u\n",
					    args->out_sync.handle);
			goto err_cleanup;
		}
		if (args->out_sync.point) {
			out_chain = dma_fence_chain_alloc();
			if (!out_chain) {
				ret = -ENOMEM;
				goto err_cleanup;
			}
		}
	}

	objs = kvmalloc_array(job->bo_count, sizeof(*objs), GFP_KERNEL);
	if (!objs) {
		ret = -ENOMEM;
		goto err_cleanup;
	}
	for (i = 0; i < job->bo_count; i++)
		objs[i] = job->bos[i].obj;
	ret = drm_gem_lock_reservations(objs, job->bo_count, &acquire);
	if (ret)
		goto err_cleanup;
	/* Implicit sync: wait for earlier jobs writing (or reading) them. */
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(objs[i]->resv, 1);
		if (!ret)
			ret = drm_sched_job_add_implicit_dependencies(&job->base,
								      objs[i],
								      job->bos[i].write);
		if (ret)
			goto err_unlock_resv;
	}

	mutex_lock(&q->submit_lock);
	job->seqno = q->last_seqno + 1;
	ret = mxaccel_queue_job_reserve(q, job->seqno);
	if (ret) {
		mutex_unlock(&q->submit_lock);
		goto err_unlock_resv;
	}
	reserved = true;
	q->last_seqno = job->seqno;
	push_job(q, job, chain, out, out_chain, args->out_sync.point);
	mutex_unlock(&q->submit_lock);

	drm_gem_unlock_reservations(objs, job->bo_count, &acquire);
	mutex_unlock(&mfile->lock);
	args->seqno = job->seqno;
	kvfree(objs);
	kvfree(ctx.spans);
	if (out)
		drm_syncobj_put(out);
	return 0;

err_unlock_resv:
	drm_gem_unlock_reservations(objs, job->bo_count, &acquire);
err_cleanup:
	if (reserved)
		mxaccel_queue_job_unreserve(q, job->seqno);
	drm_sched_job_cleanup(&job->base);
err_unlock:
	mutex_unlock(&mfile->lock);
	kvfree(objs);
	kvfree(ctx.spans);
	dma_fence_chain_free(chain);
	dma_fence_chain_free(out_chain);
	if (out)
		drm_syncobj_put(out);
	mxaccel_job_release(job);
	return ret;
}
