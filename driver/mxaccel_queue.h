/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queues: a scheduler entity on the device's rings, a timeline
 * syncobj, sequence numbers, and the status of its recent jobs.  A queue
 * is reference counted: its file holds one reference until QUEUE_DESTROY
 * or close, every job one until it is freed, so a destroyed queue lives on
 * (dying: its jobs are canceled) until its last job is done.
 */
#ifndef MXACCEL_QUEUE_H
#define MXACCEL_QUEUE_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

#include "mxaccel_drv.h"

struct dma_fence;
struct drm_syncobj;
struct mxaccel_job;
struct mxaccel_ring;

/* The status of one of the queue's last STATUS_WINDOW jobs. */
struct mxaccel_job_slot {
	u64 seqno;
	struct dma_fence *done;		/* until the job is freed */
	int status;
};

struct mxaccel_queue {
	struct kref ref;
	struct mxaccel_device *mdev;
	struct mxaccel_client *client;	/* of the creating file */
	u32 id;				/* in its file */
	u32 serial;			/* on the device, for names */
	u32 priority;			/* enum drm_mxaccel_queue_priority */
	unsigned long timeout;		/* jiffies a job may run */
	pid_t pid;			/* of the creator, for debugfs */

	struct drm_sched_entity entity;
	atomic_t guilty;		/* a job timed out */
	bool dying;			/* destroyed: cancel, do not run */

	struct drm_syncobj *syncobj;
	u64 inline_context;		/* engine fences of inline jobs */

	/* Held across push, so seqno order is push order. */
	struct mutex submit_lock;
	struct dma_fence *last_done;	/* of last_seqno, under submit_lock */
	/* Protects last_seqno (also under submit_lock), unfinished, slots. */
	spinlock_t status_lock;
	u64 last_seqno;
	unsigned int unfinished;	/* pushed, not yet ended by the engine */
	struct mxaccel_job_slot *slots;

	struct list_head link;		/* mdev->queues */
	struct work_struct release_work;
};

struct mxaccel_queue *mxaccel_queue_lookup(struct mxaccel_file *mfile, u32 id);
void mxaccel_queue_get(struct mxaccel_queue *q);
void mxaccel_queue_put(struct mxaccel_queue *q);
void mxaccel_queue_destroy_all(struct mxaccel_file *mfile);

static inline bool mxaccel_queue_dying(struct mxaccel_queue *q)
{
	return READ_ONCE(q->dying);
}

/*
 * Job bookkeeping.  Under submit_lock: may another job be pushed (-EBUSY
 * when the queue has queue_depth unfinished jobs), and record a pushed job
 * (its slot keeps a reference to its fence for JOB_WAIT).  done(): the
 * engine has ended it (its fence signals next).  finish(): the job is
 * freed; its status stays.
 */
int mxaccel_queue_job_admit(struct mxaccel_queue *q);
void mxaccel_queue_job_pushed(struct mxaccel_queue *q, u64 seqno,
			      struct dma_fence *done);
void mxaccel_queue_job_done(struct mxaccel_queue *q);
void mxaccel_queue_job_finish(struct mxaccel_queue *q, u64 seqno, int status);

int mxaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			       struct drm_file *file);
int mxaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
				struct drm_file *file);
int mxaccel_ioctl_job_wait(struct drm_device *drm, void *data,
			   struct drm_file *file);

#endif /* MXACCEL_QUEUE_H */
