// SPDX-License-Identifier: GPL-2.0
/*
 * Queues.  A queue is a scheduler entity that may use every ring of the
 * device (it moves to the least loaded one whenever it is idle), with a
 * timeline syncobj whose
 * point N is the fence of the queue's job N and a window of the statuses
 * of its last jobs for JOB_WAIT.
 *
 * Queues are reference counted and looked up without a file-wide lock, so
 * SUBMIT and JOB_WAIT of one file run concurrently.  QUEUE_DESTROY and
 * close mark a queue dying (its running job is stopped, its queued jobs
 * are canceled as they reach the ring) and drop the file's reference; the
 * queue is torn down on a workqueue once its last job is freed, so its
 * entity is always idle by then and no job is ever killed by the
 * scheduler behind our back.
 */
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_fdinfo.h"
#include "mxaccel_gem.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"

struct mxaccel_queue *mxaccel_queue_lookup(struct mxaccel_file *mfile, u32 id)
{
	struct mxaccel_queue *q;

	/* The file's reference is dropped only after the erase. */
	xa_lock(&mfile->queues);
	q = xa_load(&mfile->queues, id);
	if (q)
		kref_get(&q->ref);
	xa_unlock(&mfile->queues);
	return q;
}

void mxaccel_queue_get(struct mxaccel_queue *q)
{
	kref_get(&q->ref);
}

static void queue_release_work(struct work_struct *work)
{
	struct mxaccel_queue *q = container_of(work, struct mxaccel_queue,
					       release_work);
	struct mxaccel_device *mdev = q->mdev;

	/* Every job has been freed: the entity is idle. */
	drm_sched_entity_destroy(&q->entity);
	dma_fence_put(q->last_done);
	drm_syncobj_put(q->syncobj);
	mutex_lock(&mdev->queues_lock);
	list_del(&q->link);
	mutex_unlock(&mdev->queues_lock);
	mxaccel_client_put(q->client);
	mutex_destroy(&q->submit_lock);
	kvfree(q->slots);
	kfree(q);
}

static void queue_release(struct kref *ref)
{
	struct mxaccel_queue *q = container_of(ref, struct mxaccel_queue, ref);

	/*
	 * The queue has no job left: its place in the device's limit is free
	 * now.  The last put may come from free_job(): tear down elsewhere.
	 */
	atomic_dec(&q->mdev->n_queues);
	queue_work(q->mdev->release_wq, &q->release_work);
}

void mxaccel_queue_put(struct mxaccel_queue *q)
{
	kref_put(&q->ref, queue_release);
}

int mxaccel_queue_job_admit(struct mxaccel_queue *q)
{
	unsigned int depth = READ_ONCE(mxaccel_queue_depth);

	lockdep_assert_held(&q->submit_lock);
	if (READ_ONCE(q->unfinished) >= depth)
		return mxaccel_inval(&q->mdev->drm, -EBUSY,
				     "submit: queue %u holds %u unfinished jobs (queue_depth)\n",
				     q->id, depth);
	return 0;
}

void mxaccel_queue_job_pushed(struct mxaccel_queue *q, u64 seqno,
			      struct dma_fence *done)
{
	struct mxaccel_job_slot *slot = &q->slots[seqno % MXACCEL_STATUS_WINDOW];

	struct dma_fence *stale;

	lockdep_assert_held(&q->submit_lock);
	spin_lock(&q->status_lock);
	/*
	 * The slot's last job (STATUS_WINDOW seqnos ago, so its fence has
	 * signalled: depth < window) is normally freed; if not, it leaves the
	 * window now and will not touch the slot again.
	 */
	stale = slot->done;
	slot->seqno = seqno;
	slot->done = dma_fence_get(done);
	slot->status = 0;
	q->last_seqno = seqno;
	q->unfinished++;
	spin_unlock(&q->status_lock);
	dma_fence_put(stale);
	dma_fence_put(q->last_done);
	q->last_done = dma_fence_get(done);
}

void mxaccel_queue_job_done(struct mxaccel_queue *q)
{
	spin_lock(&q->status_lock);
	q->unfinished--;
	spin_unlock(&q->status_lock);
}

void mxaccel_queue_job_finish(struct mxaccel_queue *q, u64 seqno, int status)
{
	struct mxaccel_job_slot *slot = &q->slots[seqno % MXACCEL_STATUS_WINDOW];
	struct dma_fence *done = NULL;

	spin_lock(&q->status_lock);
	if (slot->seqno == seqno) {
		done = slot->done;
		slot->done = NULL;
		slot->status = status;
	}
	spin_unlock(&q->status_lock);
	dma_fence_put(done);
}

static int to_sched_priority(u32 priority, enum drm_sched_priority *out)
{
	switch (priority) {
	case DRM_MXACCEL_PRIORITY_NORMAL:
		*out = DRM_SCHED_PRIORITY_NORMAL;
		return 0;
	case DRM_MXACCEL_PRIORITY_LOW:
		*out = MXACCEL_SCHED_PRIORITY_LOW;
		return 0;
	case DRM_MXACCEL_PRIORITY_HIGH:
		*out = DRM_SCHED_PRIORITY_HIGH;
		return 0;
	}
	return -EINVAL;
}

static struct mxaccel_queue *queue_create(struct mxaccel_file *mfile,
					  enum drm_sched_priority prio,
					  u32 priority)
{
	struct mxaccel_device *mdev = mfile->mdev;
	struct mxaccel_queue *q;
	int ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->slots = kvcalloc(MXACCEL_STATUS_WINDOW, sizeof(*q->slots),
			    GFP_KERNEL_ACCOUNT);
	if (!q->slots) {
		ret = -ENOMEM;
		goto err_free;
	}
	kref_init(&q->ref);
	q->mdev = mdev;
	q->client = mfile->client;
	q->serial = atomic_inc_return(&mdev->next_queue);
	q->priority = priority;
	q->timeout = msecs_to_jiffies(READ_ONCE(mxaccel_job_timeout_ms));
	q->pid = task_tgid_nr(current);
	q->inline_context = dma_fence_context_alloc(1);
	mutex_init(&q->submit_lock);
	spin_lock_init(&q->status_lock);
	INIT_WORK(&q->release_work, queue_release_work);
	INIT_LIST_HEAD(&q->link);

	ret = drm_syncobj_create(&q->syncobj, 0, NULL);
	if (ret)
		goto err_free;
	mxaccel_client_get(q->client);
	/* One ring at a time; push moves an idle queue (see mxaccel_ring.c). */
	ret = drm_sched_entity_init(&q->entity, prio,
				    &mdev->sched_list[mxaccel_ring_least_loaded(mdev, NULL)->index],
				    1, &q->guilty);
	if (ret)
		goto err_syncobj;
	mutex_lock(&mdev->queues_lock);
	list_add_tail(&q->link, &mdev->queues);
	mutex_unlock(&mdev->queues_lock);
	return q;

err_syncobj:
	mxaccel_client_put(q->client);
	drm_syncobj_put(q->syncobj);
err_free:
	mutex_destroy(&q->submit_lock);
	kvfree(q->slots);
	kfree(q);
	return ERR_PTR(ret);
}

/* Stop the queue's work: running job aborted, the rest canceled. */
static void queue_kill(struct mxaccel_queue *q)
{
	WRITE_ONCE(q->dying, true);
	mxaccel_rings_abort_queue(q->mdev, q, -ECANCELED);
}

/* Take one place of the device's queue limit, or -EBUSY. */
static int reserve_device_queue(struct mxaccel_device *mdev)
{
	unsigned int max = READ_ONCE(mxaccel_max_device_queues);

	if (atomic_inc_return(&mdev->n_queues) > max) {
		atomic_dec(&mdev->n_queues);
		return mxaccel_inval(&mdev->drm, -EBUSY,
				     "queue_create: the device holds %u queues (max_device_queues)\n",
				     max);
	}
	return 0;
}

/*
 * QUEUE_CREATE: a new queue and its timeline syncobj (a handle in this
 * file).  -EINVAL: flags set or unknown priority.  -EPERM: high priority
 * without CAP_SYS_NICE.  -EBUSY: the file holds max_queues queues or the
 * device max_device_queues.  -ENOMEM: no memory.
 */
int mxaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct mxaccel_device *mdev = mfile->mdev;
	struct drm_mxaccel_queue_create *args = data;
	enum drm_sched_priority prio;
	struct mxaccel_queue *q;
	u32 id, handle;
	int ret;

	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "queue_create: unknown flags 0x%x\n",
				     args->flags);
	if (to_sched_priority(args->priority, &prio))
		return mxaccel_inval(drm, -EINVAL,
				     "queue_create: priority %u (0..2)\n",
				     args->priority);
	if (args->priority == DRM_MXACCEL_PRIORITY_HIGH &&
	    !capable(CAP_SYS_NICE))
		return mxaccel_inval(drm, -EPERM,
				     "queue_create: high priority needs CAP_SYS_NICE\n");

	mutex_lock(&mfile->lock);
	if (mfile->n_queues >= READ_ONCE(mxaccel_max_queues)) {
		ret = mxaccel_inval(drm, -EBUSY,
				    "queue_create: file holds %u queues (max_queues)\n",
				    mfile->n_queues);
		goto out_unlock;
	}
	ret = reserve_device_queue(mdev);
	if (ret)
		goto out_unlock;
	q = queue_create(mfile, prio, args->priority);
	if (IS_ERR(q)) {
		atomic_dec(&mdev->n_queues);
		ret = PTR_ERR(q);
		goto out_unlock;
	}
	/* The handle is created last: a syncobj handle cannot be taken back. */
	ret = xa_alloc_cyclic(&mfile->queues, &id, q, xa_limit_32b,
			      &mfile->next_queue_id, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_put;
	q->id = id;
	ret = drm_syncobj_get_handle(file, q->syncobj, &handle);
	if (ret)
		goto err_erase;
	mfile->n_queues++;
	args->queue_id = id;
	args->syncobj = handle;
	mutex_unlock(&mfile->lock);
	return 0;

err_erase:
	xa_erase(&mfile->queues, id);
err_put:
	mxaccel_queue_put(q);
out_unlock:
	mutex_unlock(&mfile->lock);
	return ret;
}

/*
 * QUEUE_DESTROY: destroy a queue; its jobs still in flight are canceled
 * (asynchronously: the ioctl does not wait for them).  The syncobj handle
 * stays valid.  -EINVAL: pad set.  -ENOENT: no queue.
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
	queue_kill(q);
	mxaccel_queue_put(q);
	return 0;
}

void mxaccel_queue_destroy_all(struct mxaccel_file *mfile)
{
	struct mxaccel_queue *q;
	unsigned long id;

	xa_for_each(&mfile->queues, id, q) {
		xa_erase(&mfile->queues, id);
		queue_kill(q);
		mxaccel_queue_put(q);
	}
	mfile->n_queues = 0;
}

/*
 * JOB_WAIT: wait for job seqno of a queue and report its status.
 * -EINVAL: flags or pad set, or seqno never issued.  -ENODATA: seqno is
 * older than the status window.  -ENOENT: no queue.  -ETIMEDOUT: still
 * running at the deadline.  -ERESTARTSYS: interrupted (restarted).
 */
int mxaccel_ioctl_job_wait(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_job_wait *args = data;
	struct mxaccel_job_slot *slot;
	struct mxaccel_queue *q;
	struct dma_fence *fence;
	int status, ret = 0;
	long left;

	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "job_wait: unknown flags 0x%x\n",
				     args->flags);
	if (args->pad)
		return mxaccel_inval(drm, -EINVAL, "job_wait: pad is not zero\n");

	q = mxaccel_queue_lookup(mfile, args->queue_id);
	if (!q)
		return mxaccel_inval(drm, -ENOENT, "job_wait: no queue %u\n",
				     args->queue_id);
	spin_lock(&q->status_lock);
	if (!args->seqno || args->seqno > q->last_seqno) {
		ret = mxaccel_inval(drm, -EINVAL,
				    "job_wait: seqno %llu not issued (last %llu)\n",
				    args->seqno, q->last_seqno);
	} else if (q->last_seqno - args->seqno >= MXACCEL_STATUS_WINDOW) {
		ret = mxaccel_inval(drm, -ENODATA,
				    "job_wait: seqno %llu older than the last %u jobs\n",
				    args->seqno, MXACCEL_STATUS_WINDOW);
	}
	slot = &q->slots[args->seqno % MXACCEL_STATUS_WINDOW];
	fence = ret ? NULL : dma_fence_get(slot->done);
	status = slot->status;
	spin_unlock(&q->status_lock);
	mxaccel_queue_put(q);
	if (ret)
		return ret;

	if (fence) {
		left = dma_fence_wait_timeout(fence, true,
					      mxaccel_timeout_to_jiffies(args->timeout_ns));
		if (left > 0)
			status = dma_fence_get_status(fence) < 0 ?
				 fence->error : 0;
		dma_fence_put(fence);
		if (left == 0)
			return -ETIMEDOUT;
		if (left < 0)
			return left;
	}
	args->status = status;
	return 0;
}
