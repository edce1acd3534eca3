// SPDX-License-Identifier: GPL-2.0
/*
 * Queues.  Each queue has a scheduler of its own (so a hung job stalls only
 * its queue), one entity on it, and a timeline syncobj whose point N is
 * the finished fence of the queue's job N.  Finished jobs leave their error
 * behind for JOB_WAIT.
 */
#include <linux/xarray.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_gem.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"

struct mxaccel_queue *mxaccel_queue_get(struct mxaccel_file *mfile, u32 id)
{
	return xa_load(&mfile->queues, id);
}

int mxaccel_queue_job_reserve(struct mxaccel_queue *q, u64 seqno)
{
	return xa_reserve(&q->jobs, seqno, GFP_KERNEL);
}

void mxaccel_queue_job_unreserve(struct mxaccel_queue *q, u64 seqno)
{
	xa_release(&q->jobs, seqno);
}

void mxaccel_queue_job_add(struct mxaccel_queue *q, u64 seqno,
			   struct dma_fence *finished)
{
	/* The slot is reserved: this store allocates nothing. */
	xa_store(&q->jobs, seqno, dma_fence_get(finished), GFP_NOWAIT);
	atomic_inc(&q->jobs_alive);
}

void mxaccel_queue_job_done(struct mxaccel_queue *q, u64 seqno, int error)
{
	u64 guilty = READ_ONCE(q->guilty_seqno);

	/*
	 * A failed job's status outlives it; successes need no entry, nor do
	 * the cancellations after a timeout (finished_status() derives them).
	 */
	if (error && !(guilty && seqno > guilty && error == -ECANCELED))
		xa_store(&q->errors, seqno, xa_mk_value(-error), GFP_KERNEL);
	dma_fence_put(xa_erase(&q->jobs, seqno));
}

void mxaccel_queue_job_put(struct mxaccel_queue *q)
{
	if (atomic_dec_and_test(&q->jobs_alive))
		wake_up_all(&q->idle);
}

static struct mxaccel_queue *queue_create(struct mxaccel_file *mfile)
{
	struct mxaccel_device *mdev = mfile->mdev;
	struct drm_gpu_scheduler *sched_list[1];
	struct mxaccel_queue *q;
	int ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->mfile = mfile;
	snprintf(q->name, sizeof(q->name), "mxaccel-q%d",
		 atomic_inc_return(&mdev->next_queue));
	mutex_init(&q->submit_lock);
	xa_init(&q->jobs);
	xa_init(&q->errors);
	init_waitqueue_head(&q->idle);

	ret = mxaccel_sched_init(&q->sched, &mxaccel_sched_ops, NULL,
				 msecs_to_jiffies(mxaccel_job_timeout_ms),
				 q->name, mdev->drm.dev);
	if (ret)
		goto err_free;
	sched_list[0] = &q->sched;
	ret = drm_sched_entity_init(&q->entity, DRM_SCHED_PRIORITY_NORMAL,
				    sched_list, 1, &q->guilty);
	if (ret)
		goto err_sched;
	ret = drm_syncobj_create(&q->syncobj, 0, NULL);
	if (ret)
		goto err_entity;
	return q;

err_entity:
	drm_sched_entity_destroy(&q->entity);
err_sched:
	drm_sched_fini(&q->sched);
err_free:
	kfree(q);
	return ERR_PTR(ret);
}

/*
 * Tear a queue down with jobs possibly in flight: stop the engine working
 * on them (they finish with -ECANCELED), let the entity drain, and wait
 * until the scheduler has freed every job before it goes away.
 */
static void queue_destroy(struct mxaccel_queue *q)
{
	struct dma_fence *last;

	WRITE_ONCE(q->dying, true);
	drm_sched_entity_destroy(&q->entity);

	mutex_lock(&q->submit_lock);
	last = q->last_fence;
	q->last_fence = NULL;
	mutex_unlock(&q->submit_lock);
	if (last) {
		dma_fence_wait(last, false);
		dma_fence_put(last);
	}
	wait_event(q->idle, !atomic_read(&q->jobs_alive));

	drm_sched_fini(&q->sched);
	drm_syncobj_put(q->syncobj);
	xa_destroy(&q->jobs);
	xa_destroy(&q->errors);
	mutex_destroy(&q->submit_lock);
	kfree(q);
}

/*
 * QUEUE_CREATE: a new queue and its timeline syncobj (a handle in this
 * file).  -EINVAL: flags set.  -EBUSY: the file holds max_queues queues.
 * -ENOMEM: no memory.
 */
int mxaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_queue_create *args = data;
	struct mxaccel_queue *q;
	u32 id, handle;
	int ret;

	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "queue_create: unknown flags 0x%x\n",
				     args->flags);
	if (args->pad)
		return mxaccel_inval(drm, -EINVAL,
				     "queue_create: pad is not zero\n");

	mutex_lock(&mfile->lock);
	if (mfile->n_queues >= mxaccel_max_queues) {
		ret = mxaccel_inval(drm, -EBUSY,
				    "queue_create: file holds %u queues (max_queues)\n",
				    mfile->n_queues);
		goto out_unlock;
	}
	q = queue_create(mfile);
	if (IS_ERR(q)) {
		ret = PTR_ERR(q);
		goto out_unlock;
	}
	/* The handle is created last: a syncobj handle cannot be taken back. */
	ret = xa_alloc_cyclic(&mfile->queues, &id, q, xa_limit_32b,
			      &mfile->next_queue_id, GFP_KERNEL);
	if (ret < 0)
		goto err_destroy;
	ret = drm_syncobj_get_handle(file, q->syncobj, &handle);
	if (ret)
		goto err_erase;
	q->id = id;
	mfile->n_queues++;
	args->queue_id = id;
	args->syncobj = handle;
	mutex_unlock(&mfile->lock);
	return 0;

err_erase:
	xa_erase(&mfile->queues, id);
err_destroy:
	queue_destroy(q);
out_unlock:
	mutex_unlock(&mfile->lock);
	return ret;
}

/*
 * QUEUE_DESTROY: destroy a queue; its jobs still in flight are canceled.
 * The syncobj handle stays valid.  -EINVAL: pad set.  -ENOENT: no queue.
 */
int mxaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_queue_destroy *args = data;
	struct mxaccel_queue *q;

	if (args->pad)
		return mxaccel_inval(drm, -EINVAL,
				     "queue_destroy: pad is not zero\n");
	mutex_lock(&mfile->lock);
	q = xa_erase(&mfile->queues, args->queue_id);
	if (q)
		mfile->n_queues--;
	mutex_unlock(&mfile->lock);
	if (!q)
		return mxaccel_inval(drm, -ENOENT,
				     "queue_destroy: no queue %u\n",
				     args->queue_id);
	queue_destroy(q);
	return 0;
}

void mxaccel_queue_destroy_all(struct mxaccel_file *mfile)
{
	struct mxaccel_queue *q;
	unsigned long id;

	/*
	 * Stop every queue's jobs before tearing any down: a queue's entity
	 * cannot drain while its jobs wait on another queue's running job.
	 */
	xa_for_each(&mfile->queues, id, q)
		WRITE_ONCE(q->dying, true);
	xa_for_each(&mfile->queues, id, q) {
		xa_erase(&mfile->queues, id);
		queue_destroy(q);
	}
	mfile->n_queues = 0;
}

/* Status of a job that has been freed: its recorded error, or success. */
static int finished_status(struct mxaccel_queue *q, u64 seqno)
{
	void *e = xa_load(&q->errors, seqno);
	u64 guilty = READ_ONCE(q->guilty_seqno);

	if (e)
		return -(int)xa_to_value(e);
	return guilty && seqno > guilty ? -ECANCELED : 0;
}

/*
 * JOB_WAIT: wait for job seqno of a queue and report its status.
 * -EINVAL: flags or pad set, or seqno never issued.  -ENOENT: no queue.
 * -ETIMEDOUT: still running at the deadline.  -ERESTARTSYS: interrupted.
 */
int mxaccel_ioctl_job_wait(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_job_wait *args = data;
	struct mxaccel_queue *q;
	struct dma_fence *fence;
	long ret;

	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "job_wait: unknown flags 0x%x\n",
				     args->flags);
	if (args->pad)
		return mxaccel_inval(drm, -EINVAL, "job_wait: pad is not zero\n");

	mutex_lock(&mfile->lock);
	q = mxaccel_queue_get(mfile, args->queue_id);
	if (!q) {
		mutex_unlock(&mfile->lock);
		return mxaccel_inval(drm, -ENOENT, "job_wait: no queue %u\n",
				     args->queue_id);
	}
	mutex_lock(&q->submit_lock);
	if (!args->seqno || args->seqno > q->last_seqno) {
		mutex_unlock(&q->submit_lock);
		mutex_unlock(&mfile->lock);
		return mxaccel_inval(drm, -EINVAL,
				     "job_wait: seqno %llu not issued\n",
				     args->seqno);
	}
	xa_lock(&q->jobs);
	fence = dma_fence_get(xa_load(&q->jobs, args->seqno));
	xa_unlock(&q->jobs);
	mutex_unlock(&q->submit_lock);

	if (!fence) {
		args->status = finished_status(q, args->seqno);
		mutex_unlock(&mfile->lock);
		return 0;
	}
	/* The queue may go away while we sleep: keep only the fence. */
	mutex_unlock(&mfile->lock);

	ret = dma_fence_wait_timeout(fence, true,
				     mxaccel_timeout_to_jiffies(args->timeout_ns));
	if (ret > 0)
		args->status = dma_fence_get_status(fence) < 0 ?
			       fence->error : 0;
	dma_fence_put(fence);
	if (ret == 0)
		return -ETIMEDOUT;
	return ret < 0 ? ret : 0;
}
