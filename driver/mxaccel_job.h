/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job: the validated operations of one SUBMIT, the buffer objects they
 * touch, its dependencies, and its way through the scheduler and the
 * engine.  Life cycle (mxaccel_job.c):
 *
 *   mxaccel_job_create()  copy in, validate, map, collect dependencies and
 *                         allocate everything the job will need
 *   mxaccel_job_push()    reservations, sequence number, timeline point;
 *                         (the caller holds a queue reference across it)
 *                         then run inline or arm and push to the scheduler
 *   run_job()             the engine starts it (mxaccel_sched.c) ...
 *   mxaccel_job_complete()  ... and ends it, exactly once
 *   mxaccel_job_release() when the scheduler frees it (or SUBMIT failed)
 */
#ifndef MXACCEL_JOB_H
#define MXACCEL_JOB_H

#include <linux/ktime.h>
#include <linux/xarray.h>
#include <drm/gpu_scheduler.h>

#include "mxaccel_accel.h"

struct dma_fence_chain;
struct drm_syncobj;
struct mxaccel_bo;
struct mxaccel_fence;
struct mxaccel_file;
struct mxaccel_queue;
struct mxaccel_ring;

/* Operands of an op: which buffer object bytes each one covers. */
enum mxaccel_opnd {
	MXACCEL_OPND_A_DATA,
	MXACCEL_OPND_A_SCALE,
	MXACCEL_OPND_B_DATA,
	MXACCEL_OPND_B_SCALE,
	MXACCEL_OPND_C,
	MXACCEL_OPND_COUNT
};

struct mxaccel_span {
	u64 lo, hi;		/* bytes [lo, hi) of the buffer object */
	u32 bo;			/* index into job->bos */
	bool used;
};

#define MXACCEL_BO_READ		0x1
#define MXACCEL_BO_WRITE	0x2

struct mxaccel_job_bo {
	struct mxaccel_bo *bo;
	bool read, write;
};

struct mxaccel_job {
	struct drm_sched_job base;
	struct mxaccel_queue *queue;	/* holds a reference */
	struct mxaccel_ring *ring;
	u64 seqno;

	struct drm_mxaccel_op *ops;
	struct mxaccel_span (*spans)[MXACCEL_OPND_COUNT];
	u32 op_count;
	u64 work;			/* block operations, for the inline test */

	struct mxaccel_job_bo *bos;
	u32 bo_count, bo_max;

	/*
	 * The dependencies whose results the job consumes (in_syncs, earlier
	 * writers of what it reads): if one failed, so does the job.
	 */
	struct xarray deps;

	/* Preallocated at create, consumed by push. */
	struct mxaccel_fence *fence;	/* the engine fence */
	struct dma_fence_chain *chain, *out_chain;
	struct drm_syncobj *out_sync;
	u64 out_point;

	/* What the job publishes: the scheduler's finished fence, or the
	 * engine fence of a job run inline.
	 */
	struct dma_fence *done;
	bool sched_init;		/* drm_sched_job_init() succeeded */
	bool fence_live;		/* mxaccel_fence_init() was called */
	bool ring_loaded;		/* counted in job->ring->load */
	bool pushed;

	/*
	 * Completion versus abort: the engine polls abort_err while it works
	 * and ends the job through mxaccel_job_complete(); a timeout or a
	 * dying queue sets abort_err through mxaccel_job_abort().  Under lock
	 * the first of them wins.
	 */
	spinlock_t lock;
	bool ended;
	int abort_err;
	int status;
	ktime_t started;
	/* On the ring's running list; the oldest's timeout runs from here. */
	struct list_head ring_link;
	unsigned long started_jiffies;

	void *engine_priv;
};

static inline struct mxaccel_job *to_mxaccel_job(struct drm_sched_job *job)
{
	return container_of(job, struct mxaccel_job, base);
}

/* Why a running job must stop now, or 0 (engines poll it). */
int mxaccel_job_should_stop(struct mxaccel_job *job);

struct mxaccel_job *mxaccel_job_create(struct mxaccel_file *mfile,
				       struct mxaccel_queue *q,
				       const struct drm_mxaccel_submit *args);
/* Publish and queue (or run inline) the job; fills seqno and out_flags. */
int mxaccel_job_push(struct mxaccel_job *job,
		     struct drm_mxaccel_submit *args);
void mxaccel_job_release(struct mxaccel_job *job);

/* The engine starts a job (run_job, or inline). */
void mxaccel_job_start(struct mxaccel_job *job, struct mxaccel_ring *ring);
/* The engine ended the job: err is its own result, 0 on success. */
void mxaccel_job_complete(struct mxaccel_job *job, int err);
/* Ask a started job to stop; true if this call decided its status. */
bool mxaccel_job_abort(struct mxaccel_job *job, int err);

extern const struct drm_sched_backend_ops mxaccel_sched_ops;

#endif /* MXACCEL_JOB_H */
