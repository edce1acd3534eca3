// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler callbacks of the rings: start a job on the engine, free one
 * that is done.  Each ring's scheduler admits one job at a time.
 *
 * run_job() always returns the job's engine fence, even for a job that is
 * not run (its queue is guilty or dying, or a dependency failed): the
 * scheduler's fences then hold it as their parent, and with it a module
 * reference (see mxaccel_fence.c).  Nothing here allocates: the fence and
 * whatever the engine needs were allocated at SUBMIT.
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-fence.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_fence.h"
#include "mxaccel_job.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"

/*
 * -ECANCELED if a consumed dependency (all have signalled by now) failed.
 * A timeline point is a chain link, which does not carry the error of the
 * fence it holds: look at that fence.
 */
static int deps_status(struct mxaccel_job *job)
{
	struct dma_fence *fence;
	unsigned long i;

	xa_for_each(&job->deps, i, fence)
		if (dma_fence_get_status(dma_fence_chain_contained(fence)) < 0)
			return -ECANCELED;
	return 0;
}

static struct dma_fence *mxaccel_run_job(struct drm_sched_job *sched_job)
{
	struct mxaccel_job *job = to_mxaccel_job(sched_job);
	struct mxaccel_ring *ring = job->ring;
	struct mxaccel_engine *engine = ring->mdev->engine;
	bool cookie = dma_fence_begin_signalling();
	int err;

	/* Seqnos of the ring's context follow the order jobs start. */
	mxaccel_fence_init(job->fence, ring, ring->fence_context,
			   ++ring->fence_seqno);
	job->fence_live = true;
	/* The first reference goes to the scheduler; this one is the job's. */
	dma_fence_get(&job->fence->base);

	/* A guilty queue's jobs arrive canceled by the scheduler. */
	err = sched_job->s_fence->finished.error;
	if (!err && mxaccel_queue_dying(job->queue))
		err = -ECANCELED;
	if (!err)
		err = deps_status(job);
	if (err) {
		mxaccel_job_complete(job, err);
	} else {
		mxaccel_dbg(&ring->mdev->drm, MXACCEL_DBG_JOB,
			    "%s: queue %u job %llu starts\n", ring->name,
			    job->queue->serial, job->seqno);
		mxaccel_job_start(job, ring);
		engine->ops->run(engine, ring->index, job);
	}
	dma_fence_end_signalling(cookie);
	return &job->fence->base;
}

/* Never called: the rings time jobs out themselves (mxaccel_ring.c). */
static enum drm_gpu_sched_stat mxaccel_timedout_job(struct drm_sched_job *sched_job)
{
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void mxaccel_free_job(struct drm_sched_job *sched_job)
{
	mxaccel_job_release(to_mxaccel_job(sched_job));
}

const struct drm_sched_backend_ops mxaccel_sched_ops = {
	.run_job = mxaccel_run_job,
	.timedout_job = mxaccel_timedout_job,
	.free_job = mxaccel_free_job,
};
