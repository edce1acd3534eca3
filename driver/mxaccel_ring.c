// SPDX-License-Identifier: GPL-2.0
/*
 * Rings.  Each is one drm_gpu_scheduler with a credit limit of the
 * engine's ring_jobs jobs (the software engine: one; a PCI device: as
 * many as its ring holds), and every queue may use every ring: an idle
 * queue (its last job done) moves to the ring with the fewest unfinished jobs when it is given a
 * job (mxaccel_job_push()), so a long or hung job holds up only the jobs
 * queued behind it in its own queue, as long as a ring is free.  (The
 * scheduler's own choice counts idle queues attached to a ring as load,
 * and would put a job behind a hung one.)  Each ring is created with the
 * device and its scheduler finalised when the device is released (its
 * last file closed, after removal for a PCI device): queues are entities
 * of the schedulers until then.  The rings' memory lives on while any
 * engine fence does (struct mxaccel_ring_set): the scheduler fences of
 * every queue on a ring read its name for as long as they exist.
 *
 * Timeouts are the ring's own, not the scheduler's: a queue carries the
 * job timeout in force when it was created, and a job that runs past it
 * is stopped by the engine, fails with -ETIMEDOUT and makes its queue
 * guilty.  The engine runs a ring's jobs in order, so only the oldest is
 * running: its time counts from when it started or, if later, when the
 * job before it ended.  The scheduler never times out, so it never stops
 * or restarts.
 */
#include <linux/dma-fence.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_fence.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"

/* How long an aborted job may take to stop before its ring is reset. */
#define MXACCEL_ABORT_GRACE_MS	5000

static void ring_timeout_work(struct work_struct *work)
{
	struct mxaccel_ring *ring = container_of(to_delayed_work(work),
						 struct mxaccel_ring,
						 timeout_work);
	struct mxaccel_engine *engine = ring->mdev->engine;
	struct dma_fence *fence = NULL;
	struct mxaccel_job *job;
	unsigned long deadline;
	u64 seqno = 0;
	u32 serial = 0;

	spin_lock(&ring->lock);
	job = mxaccel_ring_oldest(ring);
	if (job) {
		deadline = job->started_jiffies + job->queue->timeout;
		if (time_before(jiffies, deadline)) {
			/* A later job: watch it until its own deadline. */
			mod_delayed_work(ring->mdev->timeout_wq,
					 &ring->timeout_work, deadline - jiffies);
			job = NULL;
		} else if (mxaccel_job_abort(job, -ETIMEDOUT)) {
			engine->ops->abort(engine, ring->index, job,
					   -ETIMEDOUT);
			fence = dma_fence_get(&job->fence->base);
			seqno = job->seqno;
			serial = job->queue->serial;
		}
	}
	spin_unlock(&ring->lock);
	if (!fence)
		return;

	atomic64_inc(&ring->jobs_timed_out);
	mxaccel_dbg(&ring->mdev->drm, MXACCEL_DBG_JOB,
		    "%s: queue %u job %llu timed out\n", ring->name, serial,
		    seqno);
	if (!dma_fence_wait_timeout(fence, false,
				    msecs_to_jiffies(MXACCEL_ABORT_GRACE_MS))) {
		drm_err_ratelimited(&ring->mdev->drm,
				    "%s: job did not stop, resetting the ring\n",
				    ring->name);
		engine->ops->reset(engine, ring->index);
	}
	dma_fence_put(fence);
}

struct mxaccel_job *mxaccel_ring_oldest(struct mxaccel_ring *ring)
{
	return list_first_entry_or_null(&ring->running, struct mxaccel_job,
					ring_link);
}

/*
 * Stop the ring's started jobs of queue q with err, under ring->lock.
 * A job that has ended already is not claimed (mxaccel_job_abort()).
 */
static void ring_abort_queue(struct mxaccel_ring *ring,
			     struct mxaccel_queue *q, int err)
{
	struct mxaccel_engine *engine = ring->mdev->engine;
	struct mxaccel_job *job;

	lockdep_assert_held(&ring->lock);
	list_for_each_entry(job, &ring->running, ring_link)
		if (job->queue == q && mxaccel_job_abort(job, err))
			engine->ops->abort(engine, ring->index, job, err);
}

void mxaccel_ring_job_started(struct mxaccel_ring *ring,
			      struct mxaccel_job *job)
{
	spin_lock(&ring->lock);
	job->started_jiffies = jiffies;
	list_add_tail(&job->ring_link, &ring->running);
	/* The oldest job's timer; a later one's starts when it is oldest. */
	if (mxaccel_ring_oldest(ring) == job)
		mod_delayed_work(ring->mdev->timeout_wq, &ring->timeout_work,
				 job->queue->timeout);
	spin_unlock(&ring->lock);
}

u64 mxaccel_ring_job_ended(struct mxaccel_ring *ring, struct mxaccel_job *job)
{
	ktime_t now = ktime_get(), from;
	struct mxaccel_job *next;
	bool was_oldest;
	u64 busy;

	spin_lock(&ring->lock);
	/*
	 * A guilty queue's later jobs fail: those the engine has already
	 * started (it may hold several of a ring) are stopped here, the
	 * scheduler cancels the rest.  All of a queue's jobs are on one ring;
	 * this one has ended and is not claimed again.
	 */
	if (atomic_read(&job->queue->guilty))
		ring_abort_queue(ring, job->queue, -ECANCELED);
	from = ktime_after(ring->last_end, job->started) ? ring->last_end :
							    job->started;
	busy = ktime_after(now, from) ? ktime_to_ns(ktime_sub(now, from)) : 0;
	ring->last_end = now;
	was_oldest = mxaccel_ring_oldest(ring) == job;
	list_del_init(&job->ring_link);
	next = was_oldest ? mxaccel_ring_oldest(ring) : NULL;
	if (next) {
		next->started_jiffies = jiffies;
		mod_delayed_work(ring->mdev->timeout_wq, &ring->timeout_work,
				 next->queue->timeout);
	}
	spin_unlock(&ring->lock);
	atomic64_add(busy, &ring->busy_ns);
	atomic64_inc(&ring->jobs_done);
	return busy;
}

void mxaccel_rings_abort_queue(struct mxaccel_device *mdev,
			       struct mxaccel_queue *q, int err)
{
	unsigned int i;

	for (i = 0; i < mdev->n_rings; i++) {
		struct mxaccel_ring *ring = &mdev->rings[i];

		spin_lock(&ring->lock);
		ring_abort_queue(ring, q, err);
		spin_unlock(&ring->lock);
	}
}

struct mxaccel_ring *mxaccel_ring_least_loaded(struct mxaccel_device *mdev,
					       struct mxaccel_ring *prefer)
{
	struct mxaccel_ring *best = prefer ? prefer : &mdev->rings[0];
	unsigned int i;

	for (i = 0; i < mdev->n_rings; i++)
		if (atomic_read(&mdev->rings[i].load) < atomic_read(&best->load))
			best = &mdev->rings[i];
	return best;
}

static void ring_set_free(struct kref *ref)
{
	kfree_rcu(container_of(ref, struct mxaccel_ring_set, ref), rcu);
}

/*
 * The last reference may go with a fence, in any context: freeing waits
 * for readers of the names under RCU (dma_fence_get_timeline_name()).
 */
void mxaccel_ring_set_put(struct mxaccel_ring_set *set)
{
	kref_put(&set->ref, ring_set_free);
}

int mxaccel_rings_init(struct mxaccel_device *mdev)
{
	unsigned int n = mdev->engine->n_rings;
	struct mxaccel_ring_set *set;
	unsigned int i;
	int ret;

	set = kzalloc(struct_size(set, ring, n), GFP_KERNEL);
	mdev->sched_list = kcalloc(n, sizeof(*mdev->sched_list), GFP_KERNEL);
	if (!set || !mdev->sched_list) {
		kfree(set);
		kfree(mdev->sched_list);
		mdev->sched_list = NULL;
		return -ENOMEM;
	}
	kref_init(&set->ref);
	mdev->ring_set = set;
	mdev->rings = set->ring;
	for (i = 0; i < n; i++) {
		struct mxaccel_ring *ring = &mdev->rings[i];

		ring->mdev = mdev;
		ring->set = set;
		ring->index = i;
		snprintf(ring->name, sizeof(ring->name), "mxaccel%u-ring%u",
			 mdev->index, i);
		ring->fence_context = dma_fence_context_alloc(1);
		spin_lock_init(&ring->lock);
		INIT_LIST_HEAD(&ring->running);
		INIT_DELAYED_WORK(&ring->timeout_work, ring_timeout_work);
		ret = mxaccel_sched_init(&ring->sched, &mxaccel_sched_ops,
					 mdev->timeout_wq, ring->name,
					 mdev->drm.dev,
					 mdev->engine->limits.ring_jobs);
		if (ret)
			goto err_fini;
		mdev->sched_list[i] = &ring->sched;
		mdev->n_rings++;
	}
	return 0;

err_fini:
	mxaccel_rings_fini(mdev);
	return ret;
}

void mxaccel_rings_fini(struct mxaccel_device *mdev)
{
	unsigned int i;

	for (i = 0; i < mdev->n_rings; i++) {
		cancel_delayed_work_sync(&mdev->rings[i].timeout_work);
		drm_sched_fini(&mdev->rings[i].sched);
	}
	mdev->n_rings = 0;
	if (mdev->ring_set)
		mxaccel_ring_set_put(mdev->ring_set);
	mdev->ring_set = NULL;
	mdev->rings = NULL;
	kfree(mdev->sched_list);
	mdev->sched_list = NULL;
}
