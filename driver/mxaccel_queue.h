/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queues: a scheduler and entity each, a timeline syncobj, sequence numbers
 * and the status of finished jobs.
 */
#ifndef MXACCEL_QUEUE_H
#define MXACCEL_QUEUE_H

#include <linux/wait.h>
#include <drm/gpu_scheduler.h>

#include "mxaccel_drv.h"

struct drm_syncobj;

struct mxaccel_queue {
	struct mxaccel_file *mfile;
	u32 id;
	char name[32];

	struct drm_gpu_scheduler sched;
	struct drm_sched_entity entity;
	atomic_t guilty;		/* set by a timeout */
	u64 guilty_seqno;		/* the job that timed out, or 0 */
	bool dying;			/* being destroyed: abort, do not run */

	struct drm_syncobj *syncobj;

	struct mutex submit_lock;	/* seqno order == push order */
	u64 last_seqno;
	struct dma_fence *last_fence;	/* finished fence of last_seqno */

	struct xarray jobs;		/* seqno -> finished fence, while alive */
	struct xarray errors;		/* seqno -> xa_mk_value(-error) */
	atomic_t jobs_alive;
	wait_queue_head_t idle;
};

struct mxaccel_queue *mxaccel_queue_get(struct mxaccel_file *mfile, u32 id);
void mxaccel_queue_destroy_all(struct mxaccel_file *mfile);
/*
 * Job bookkeeping: reserve() before a job is armed (it may fail), add()
 * under submit_lock when it is pushed (the queue
 * keeps a reference to its finished fence for JOB_WAIT); done() when the
 * scheduler frees it, recording a failure; put() last of all, as it may
 * let a waiting queue_destroy() free the queue.
 */
int mxaccel_queue_job_reserve(struct mxaccel_queue *q, u64 seqno);
void mxaccel_queue_job_unreserve(struct mxaccel_queue *q, u64 seqno);
void mxaccel_queue_job_add(struct mxaccel_queue *q, u64 seqno,
			   struct dma_fence *finished);
void mxaccel_queue_job_done(struct mxaccel_queue *q, u64 seqno, int error);
void mxaccel_queue_job_put(struct mxaccel_queue *q);

int mxaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			       struct drm_file *file);
int mxaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
				struct drm_file *file);
int mxaccel_ioctl_job_wait(struct drm_device *drm, void *data,
			   struct drm_file *file);

#endif /* MXACCEL_QUEUE_H */
