// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler callbacks: run a job on the engine, stop one that hangs, free
 * one that is done.  Each queue's scheduler admits one job at a time, so a
 * timeout concerns exactly the job on the engine.
 */
#include <linux/dma-fence.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_job.h"
#include "mxaccel_queue.h"

bool mxaccel_job_abort(struct mxaccel_job *job, int err)
{
	struct dma_fence *finished = &job->base.s_fence->finished;
	bool claimed = false;

	/*
	 * Only a job on the engine can be stopped: one that never ran
	 * (canceled by a guilty or dying queue) is already finished.
	 */
	spin_lock(&job->lock);
	if (job->hw_fence && !job->finishing && !job->abort_err &&
	    !dma_fence_is_signaled(finished)) {
		job->abort_err = err;
		dma_fence_set_error(finished, err);
		claimed = true;
	}
	spin_unlock(&job->lock);
	return claimed;
}

int mxaccel_job_finish(struct mxaccel_job *job, int err)
{
	struct dma_fence *finished = &job->base.s_fence->finished;

	spin_lock(&job->lock);
	job->finishing = true;
	if (job->abort_err) {
		err = job->abort_err;
	} else if (err) {
		job->abort_err = err;
		dma_fence_set_error(finished, err);
	}
	spin_unlock(&job->lock);
	return err;
}

static struct dma_fence *mxaccel_run_job(struct drm_sched_job *sched_job)
{
	struct mxaccel_job *job = to_mxaccel_job(sched_job);
	struct mxaccel_queue *q = job->queue;
	struct mxaccel_engine *engine = q->mfile->mdev->engine;
	struct dma_fence *fence;

	/* A guilty queue's jobs arrive canceled by the scheduler. */
	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;
	if (unlikely(READ_ONCE(q->dying))) {
		dma_fence_set_error(&sched_job->s_fence->finished, -ECANCELED);
		return NULL;
	}
	fence = engine->ops->run(engine, job);
	if (IS_ERR(fence))
		return fence;
	mxaccel_dbg(&q->mfile->mdev->drm, MXACCEL_DBG_JOB,
		    "%s: job %llu started\n", q->name, job->seqno);
	return fence;
}

/*
 * A job ran past the timeout: stop it with -ETIMEDOUT and mark its queue
 * guilty, so its later jobs fail with -ECANCELED while other queues go on.
 * The engine has stopped touching the job's memory once its fence has
 * signalled; only then is the scheduler restarted (which lets the job be
 * freed).
 */
static enum drm_gpu_sched_stat mxaccel_timedout_job(struct drm_sched_job *sched_job)
{
	struct mxaccel_job *job = to_mxaccel_job(sched_job);
	struct mxaccel_queue *q = job->queue;
	struct mxaccel_engine *engine = q->mfile->mdev->engine;

	if (mxaccel_job_abort(job, -ETIMEDOUT)) {
		if (!READ_ONCE(q->guilty_seqno))
			WRITE_ONCE(q->guilty_seqno, job->seqno);
		atomic_set(&q->guilty, 1);
		if (engine->ops->abort)
			engine->ops->abort(engine, job, -ETIMEDOUT);
		drm_info(&q->mfile->mdev->drm, "%s: job %llu timed out\n",
			 q->name, job->seqno);
	}
	if (job->hw_fence)
		dma_fence_wait(job->hw_fence, false);

	drm_sched_stop(&q->sched, sched_job);
	mxaccel_sched_start(&q->sched);
	return MXACCEL_SCHED_STAT_RESET;
}

static void mxaccel_free_job(struct drm_sched_job *sched_job)
{
	struct mxaccel_job *job = to_mxaccel_job(sched_job);
	struct mxaccel_queue *q = job->queue;
	int error = sched_job->s_fence->finished.error;
	u64 seqno = job->seqno;

	mxaccel_queue_job_done(q, seqno, error);
	drm_sched_job_cleanup(sched_job);
	mxaccel_job_release(job);
	mxaccel_queue_job_put(q);
}

const struct drm_sched_backend_ops mxaccel_sched_ops = {
	.run_job = mxaccel_run_job,
	.timedout_job = mxaccel_timedout_job,
	.free_job = mxaccel_free_job,
};
