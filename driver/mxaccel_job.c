// SPDX-License-Identifier: GPL-2.0
/*
 * The job life cycle (see mxaccel_job.h): everything that can fail
 * happens in mxaccel_job_create(), in the submitter's context and charged
 * to its memory cgroup; push only publishes what was prepared; the
 * scheduler and engine side allocates nothing.
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_fdinfo.h"
#include "mxaccel_fence.h"
#include "mxaccel_gem.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"
#include "mxaccel_validate.h"
#include "mxcore_geom.h"

int mxaccel_job_should_stop(struct mxaccel_job *job)
{
	int err = READ_ONCE(job->abort_err);

	if (!err && mxaccel_queue_dying(job->queue))
		err = -ECANCELED;
	return err;
}

/* Block operations of a validated op: blocks of A (32, or 16 for UE4M3). */
static u64 op_work(const struct drm_mxaccel_op *op)
{
	u64 blocks = op->k / mxcore_scale_block(op->a_scale.scale_type);

	return op->kind == DRM_MXACCEL_OP_GEMM ? (u64)op->m * op->n * blocks :
						 (u64)op->m * blocks;
}

static int copy_ops(struct mxaccel_job *job, struct drm_file *file,
		    const struct drm_mxaccel_submit *args)
{
	struct drm_device *drm = file->minor->dev;
	u32 i;
	int ret;

	job->ops = kvcalloc(args->op_count, sizeof(*job->ops),
			    GFP_KERNEL_ACCOUNT);
	job->spans = kvcalloc(args->op_count, sizeof(*job->spans),
			      GFP_KERNEL_ACCOUNT);
	job->bo_max = args->op_count * MXACCEL_OPND_COUNT;
	job->bos = kvcalloc(job->bo_max, sizeof(*job->bos),
			    GFP_KERNEL_ACCOUNT);
	if (!job->ops || !job->spans || !job->bos)
		return -ENOMEM;
	job->op_count = args->op_count;

	for (i = 0; i < args->op_count; i++) {
		u64 at = args->ops + (u64)i * args->op_size;

		/* Newer, larger ops must have zeros past what we know. */
		ret = copy_struct_from_user(&job->ops[i], sizeof(job->ops[i]),
					    u64_to_user_ptr(at), args->op_size);
		if (ret)
			return ret == -E2BIG ?
			       mxaccel_inval(drm, -E2BIG,
					     "submit: op %u: unknown trailing fields set\n",
					     i) : ret;
		ret = mxaccel_validate_op(job, file, i);
		if (ret)
			return ret;
		job->work += op_work(&job->ops[i]);
	}
	return 0;
}

/*
 * A dependency whose result the job consumes: the scheduler waits for it,
 * and we keep it to cancel the job if it fails.  One that has signalled
 * already is only waited for: whoever submits after a failure could see it
 * and chose to go on (a buffer object is not poisoned forever by one
 * failed job); a job queued behind a producer that fails later could not.
 */
static int add_dep(struct mxaccel_job *job, struct dma_fence *fence)
{
	u32 id;
	int ret;

	if (!dma_fence_is_signaled(fence)) {
		ret = xa_alloc(&job->deps, &id, fence, xa_limit_32b,
			       GFP_KERNEL_ACCOUNT);
		if (ret) {
			dma_fence_put(fence);
			return ret;
		}
		dma_fence_get(fence);
	}
	return drm_sched_job_add_dependency(&job->base, fence);
}

static int add_in_syncs(struct mxaccel_job *job, struct drm_file *file,
			const struct drm_mxaccel_submit *args)
{
	struct drm_device *drm = file->minor->dev;
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
			return ret == -E2BIG ?
			       mxaccel_inval(drm, -E2BIG,
					     "submit: in_sync %u: unknown trailing fields set\n",
					     i) : ret;
		if (sync.pad)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: in_sync %u: pad is not zero\n",
					     i);
		ret = drm_syncobj_find_fence(file, sync.handle, sync.point,
					     0, &fence);
		if (ret)
			return mxaccel_inval(drm, ret,
					     "submit: in_sync %u: syncobj %u point %llu: %d\n",
					     i, sync.handle, sync.point, ret);
		ret = add_dep(job, fence);
		if (ret)
			return ret;
	}
	return 0;
}

static int map_bos(struct mxaccel_job *job)
{
	u32 i;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		ret = mxaccel_bo_map(job->bos[i].bo);
		if (ret)
			return ret;
	}
	return 0;
}

static int prepare_out_sync(struct mxaccel_job *job, struct drm_file *file,
			    const struct drm_mxaccel_sync *out)
{
	job->chain = dma_fence_chain_alloc();
	if (!job->chain)
		return -ENOMEM;
	if (!out->handle)
		return 0;
	job->out_sync = drm_syncobj_find(file, out->handle);
	if (!job->out_sync)
		return mxaccel_inval(file->minor->dev, -ENOENT,
				     "submit: no out_sync syncobj %u\n",
				     out->handle);
	job->out_point = out->point;
	if (out->point) {
		job->out_chain = dma_fence_chain_alloc();
		if (!job->out_chain)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Copy in, validate, map and prepare a job for q (the job takes a queue
 * reference).  Returns the job or an ERR_PTR; nothing is published yet.
 */
struct mxaccel_job *mxaccel_job_create(struct mxaccel_file *mfile,
				       struct mxaccel_queue *q,
				       const struct drm_mxaccel_submit *args)
{
	struct mxaccel_engine *engine = mfile->mdev->engine;
	struct mxaccel_job *job;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&job->lock);
	INIT_LIST_HEAD(&job->ring_link);
	xa_init_flags(&job->deps, XA_FLAGS_ALLOC);
	mxaccel_queue_get(q);
	job->queue = q;
	/* Where the entity is now; arm() may move an idle one. */
	job->ring = to_mxaccel_ring(READ_ONCE(q->entity.rq)->sched);

	ret = copy_ops(job, mfile->file, args);
	if (ret)
		goto err;
	ret = mxaccel_sched_job_init(&job->base, &q->entity, q);
	if (ret)
		goto err;
	job->sched_init = true;
	ret = add_in_syncs(job, mfile->file, args);
	if (ret)
		goto err;
	ret = map_bos(job);
	if (ret)
		goto err;
	ret = prepare_out_sync(job, mfile->file, &args->out_sync);
	if (ret)
		goto err;
	job->fence = mxaccel_fence_alloc();
	if (!job->fence) {
		ret = -ENOMEM;
		goto err;
	}
	ret = engine->ops->job_init(engine, job);
	if (ret)
		goto err;
	return job;

err:
	mxaccel_job_release(job);
	return ERR_PTR(ret);
}

/*
 * Implicit sync: wait for earlier users of the buffer objects.  Earlier
 * writers of a buffer object the job reads produce its input; the others
 * (readers and writers of what it only overwrites) merely go first.
 */
static int add_implicit_deps(struct mxaccel_job *job)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	u32 i;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		const struct mxaccel_job_bo *jb = &job->bos[i];
		struct dma_resv *resv = jb->bo->base.base.resv;

		ret = dma_resv_reserve_fences(resv, 1);
		if (ret)
			return ret;
		dma_resv_for_each_fence(&cursor, resv,
					dma_resv_usage_rw(jb->write), fence) {
			if (jb->read && dma_resv_iter_usage(&cursor) <=
					DMA_RESV_USAGE_WRITE)
				ret = add_dep(job, dma_fence_get(fence));
			else
				ret = drm_sched_job_add_dependency(&job->base,
								   dma_fence_get(fence));
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int lock_bos(struct mxaccel_job *job, struct ww_acquire_ctx *acquire)
{
	struct drm_gem_object **objs;
	u32 i;
	int ret;

	objs = kvmalloc_array(job->bo_count, sizeof(*objs), GFP_KERNEL_ACCOUNT);
	if (!objs)
		return -ENOMEM;
	for (i = 0; i < job->bo_count; i++)
		objs[i] = &job->bos[i].bo->base.base;
	ret = drm_gem_lock_reservations(objs, job->bo_count, acquire);
	kvfree(objs);
	return ret;
}

static void unlock_bos(struct mxaccel_job *job, struct ww_acquire_ctx *acquire)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		dma_resv_unlock(job->bos[i].bo->base.base.resv);
	ww_acquire_fini(acquire);
}

/* Nothing delays the job and it is small: run it in this thread. */
static bool can_run_inline(struct mxaccel_job *job,
			   const struct drm_mxaccel_submit *args)
{
	struct mxaccel_queue *q = job->queue;
	struct dma_fence *fence;
	unsigned long i;

	if (!job->ring->mdev->engine->ops->run_inline ||
	    (args->flags & DRM_MXACCEL_SUBMIT_NO_INLINE) ||
	    job->work > READ_ONCE(mxaccel_inline_max_work) ||
	    READ_ONCE(mxaccel_test_hang) || READ_ONCE(q->unfinished) ||
	    atomic_read(&q->guilty) || mxaccel_queue_dying(q))
		return false;
	/* Jobs of a queue signal in order: the last one must have. */
	if (q->last_done && !dma_fence_is_signaled(q->last_done))
		return false;
	xa_for_each(&job->deps, i, fence)
		if (dma_fence_get_status(fence) != 1 ||
		    dma_fence_get_status(dma_fence_chain_contained(fence)) < 0)
			return false;
	for (i = 0; i < job->bo_count; i++)
		if (!dma_resv_test_signaled(job->bos[i].bo->base.base.resv,
					    dma_resv_usage_rw(job->bos[i].write)))
			return false;
	return true;
}

/*
 * Publish the job's fence where its completion is observed: the buffer
 * objects' reservations, the queue's timeline point seqno, the out_sync.
 * Under submit_lock and the reservation locks; allocates nothing.
 */
static void publish(struct mxaccel_job *job)
{
	struct mxaccel_queue *q = job->queue;
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i].bo->base.base.resv, job->done,
				   job->bos[i].write ? DMA_RESV_USAGE_WRITE :
						       DMA_RESV_USAGE_READ);
	drm_syncobj_add_point(q->syncobj, job->chain, job->done, job->seqno);
	job->chain = NULL;
	if (job->out_sync && job->out_chain) {
		drm_syncobj_add_point(job->out_sync, job->out_chain, job->done,
				      job->out_point);
		job->out_chain = NULL;
	} else if (job->out_sync) {
		drm_syncobj_replace_fence(job->out_sync, job->done);
	}
	mxaccel_queue_job_pushed(q, job->seqno, job->done);
	job->pushed = true;
}

static void run_inline(struct mxaccel_job *job)
{
	struct mxaccel_engine *engine = job->ring->mdev->engine;
	bool cookie = dma_fence_begin_signalling();

	mxaccel_job_start(job, NULL);
	mxaccel_job_complete(job, engine->ops->run_inline(engine, job));
	dma_fence_end_signalling(cookie);
}

/*
 * An idle queue (every job ended and signalled) goes to the least loaded
 * ring; arm() makes the move, and makes it only when the entity is idle
 * too.  Under submit_lock.
 */
static void move_if_idle(struct mxaccel_job *job)
{
	struct mxaccel_queue *q = job->queue;
	struct mxaccel_device *mdev = job->ring->mdev;
	struct mxaccel_ring *best;

	if (READ_ONCE(q->unfinished) ||
	    (q->last_done && !dma_fence_is_signaled(q->last_done)))
		return;
	best = mxaccel_ring_least_loaded(mdev, job->ring);
	if (best != job->ring)
		drm_sched_entity_modify_sched(&q->entity,
					      &mdev->sched_list[best->index], 1);
}

/*
 * SUBMIT_WAIT on an engine that can poll (a PCI device): look for the
 * job's completion for up to poll_us before sleeping, ahead of its
 * interrupt.  ring is the job's (the job itself may be freed by now).
 */
static void poll_job(struct dma_fence *done, struct mxaccel_ring *ring)
{
	struct mxaccel_engine *engine = ring->mdev->engine;
	unsigned int us = READ_ONCE(mxaccel_poll_us);
	ktime_t end;

	if (!us || !engine->ops->poll)
		return;
	end = ktime_add_us(ktime_get(), us);
	while (!dma_fence_is_signaled(done) && ktime_before(ktime_get(), end)) {
		engine->ops->poll(engine, ring->index);
		if (need_resched())
			break;
		cpu_relax();
	}
}

/* Wait for a pushed job if asked to; never fails (the job is queued). */
static void wait_job(struct dma_fence *done, struct mxaccel_ring *ring,
		     struct drm_mxaccel_submit *args)
{
	long ret;

	if (!(args->flags & DRM_MXACCEL_SUBMIT_WAIT))
		return;
	if (ring)
		poll_job(done, ring);
	ret = dma_fence_wait_timeout(done, true,
				     mxaccel_timeout_to_jiffies(args->wait_timeout_ns));
	if (ret > 0) {
		args->status = dma_fence_get_status(done) < 0 ? done->error : 0;
		args->out_flags |= DRM_MXACCEL_SUBMIT_OUT_DONE;
	}
}

int mxaccel_job_push(struct mxaccel_job *job, struct drm_mxaccel_submit *args)
{
	struct mxaccel_queue *q = job->queue;
	struct mxaccel_ring *ring = NULL;
	struct ww_acquire_ctx acquire;
	struct dma_fence *done;
	bool inline_run;
	int ret;

	ret = lock_bos(job, &acquire);
	if (ret)
		return ret;
	ret = add_implicit_deps(job);
	if (ret)
		goto err_unlock_bos;

	mutex_lock(&q->submit_lock);
	ret = mxaccel_queue_job_admit(q);
	if (ret)
		goto err_unlock_queue;
	job->seqno = q->last_seqno + 1;
	inline_run = can_run_inline(job, args);
	if (inline_run) {
		/* No scheduler job: its fence and dependencies go now. */
		drm_sched_job_cleanup(&job->base);
		job->sched_init = false;
		/* Its first reference is the job's. */
		mxaccel_fence_init(job->fence, job->ring,
				   q->inline_context, job->seqno);
		job->fence_live = true;
		job->done = &job->fence->base;
	} else {
		move_if_idle(job);
		drm_sched_job_arm(&job->base);
		job->ring = to_mxaccel_ring(job->base.sched);
		atomic_inc(&job->ring->load);
		job->ring_loaded = true;
		job->done = &job->base.s_fence->finished;
	}
	publish(job);
	done = dma_fence_get(job->done);
	unlock_bos(job, &acquire);

	args->seqno = job->seqno;
	if (inline_run) {
		args->out_flags |= DRM_MXACCEL_SUBMIT_OUT_INLINE;
		run_inline(job);
		mutex_unlock(&q->submit_lock);
		mxaccel_job_release(job);
	} else {
		/* The rings live as long as the device: past the job. */
		ring = job->ring;
		drm_sched_entity_push_job(&job->base);
		mutex_unlock(&q->submit_lock);
	}
	/* The job may be freed by now: only its fence is ours. */
	wait_job(done, ring, args);
	dma_fence_put(done);
	return 0;

err_unlock_queue:
	mutex_unlock(&q->submit_lock);
err_unlock_bos:
	unlock_bos(job, &acquire);
	return ret;
}

void mxaccel_job_release(struct mxaccel_job *job)
{
	struct mxaccel_engine *engine = job->ring->mdev->engine;
	struct mxaccel_queue *q = job->queue;
	struct dma_fence *fence;
	unsigned long i;

	if (job->pushed)
		mxaccel_queue_job_finish(q, job->seqno, job->status);
	if (job->engine_priv)
		engine->ops->job_fini(engine, job);
	if (job->sched_init)
		drm_sched_job_cleanup(&job->base);
	xa_for_each(&job->deps, i, fence)
		dma_fence_put(fence);
	xa_destroy(&job->deps);
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(&job->bos[i].bo->base.base);
	/* Once initialised, the fence is reference counted. */
	if (job->fence_live)
		dma_fence_put(&job->fence->base);
	else
		mxaccel_fence_free(job->fence);
	dma_fence_chain_free(job->chain);
	dma_fence_chain_free(job->out_chain);
	if (job->out_sync)
		drm_syncobj_put(job->out_sync);
	kvfree(job->bos);
	kvfree(job->spans);
	kvfree(job->ops);
	kfree(job);
	mxaccel_queue_put(q);
}

void mxaccel_job_start(struct mxaccel_job *job, struct mxaccel_ring *ring)
{
	job->started = ktime_get();
	if (ring)
		mxaccel_ring_job_started(ring, job);
}

bool mxaccel_job_abort(struct mxaccel_job *job, int err)
{
	bool claimed = false;

	spin_lock(&job->lock);
	if (!job->ended && !job->abort_err) {
		job->abort_err = err;
		/*
		 * Guilty before the engine can end the job, so that the
		 * queue's next job, which may start right after, is canceled.
		 */
		if (err == -ETIMEDOUT)
			atomic_set(&job->queue->guilty, 1);
		claimed = true;
	}
	spin_unlock(&job->lock);
	return claimed;
}

void mxaccel_job_complete(struct mxaccel_job *job, int err)
{
	struct dma_fence *fence = &job->fence->base;

	spin_lock(&job->lock);
	job->ended = true;
	if (job->abort_err)
		err = job->abort_err;
	spin_unlock(&job->lock);

	job->status = err;
	if (err) {
		/* The scheduler of 6.1 does not pass the error on. */
		if (job->sched_init)
			dma_fence_set_error(&job->base.s_fence->finished, err);
		dma_fence_set_error(fence, err);
	}
	if (job->started) {
		u64 busy = mxaccel_ring_job_ended(job->ring, job);

		atomic64_add(busy, &job->queue->client->busy_ns[job->ring->index]);
	}
	/*
	 * Before the fence signals: whoever sees it signalled may submit the
	 * next job at once, and must find room in the queue.
	 */
	mxaccel_queue_job_done(job->queue);
	if (job->ring_loaded)
		atomic_dec(&job->ring->load);
	/* Signalling may free the job: keep the fence. */
	dma_fence_get(fence);
	dma_fence_signal(fence);
	dma_fence_put(fence);
}
