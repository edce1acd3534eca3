/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job: the validated operations of one SUBMIT, the buffer objects they
 * touch (mapped for the engine), and its place in the scheduler.
 */
#ifndef MXACCEL_JOB_H
#define MXACCEL_JOB_H

#include <linux/iosys-map.h>
#include <drm/gpu_scheduler.h>

#include "mxaccel_accel.h"

struct mxaccel_queue;

struct mxaccel_job_bo {
	struct drm_gem_object *obj;
	u32 handle;
	struct iosys_map map;
	bool mapped;
	bool write;
};

/* Kernel addresses of an op's operands, resolved at submit time. */
struct mxaccel_op_ptrs {
	u8 *a_data;
	u8 *a_scale;
	u8 *b_data;
	u8 *b_scale;
	u8 *c;
};

struct mxaccel_job {
	struct drm_sched_job base;
	struct mxaccel_queue *queue;
	u64 seqno;

	struct drm_mxaccel_op *ops;
	struct mxaccel_op_ptrs *ptrs;
	u32 op_count;

	struct mxaccel_job_bo *bos;
	u32 bo_count;

	/*
	 * Completion versus abort: the engine polls abort_err while it works
	 * and ends through mxaccel_job_finish(); a timeout or teardown sets
	 * abort_err through mxaccel_job_abort().  Under lock exactly one of
	 * them wins, and the loser's error lands on the finished fence
	 * before the engine's fence signals.
	 */
	spinlock_t lock;
	bool finishing;
	int abort_err;
	/* The engine's fence, set by its run() before the job can start. */
	struct dma_fence *hw_fence;
	void *engine_priv;
};

/* The error the engine should stop with, 0 to keep going. */
static inline int mxaccel_job_should_stop(struct mxaccel_job *job)
{
	return READ_ONCE(job->abort_err);
}

bool mxaccel_job_abort(struct mxaccel_job *job, int err);
int mxaccel_job_finish(struct mxaccel_job *job, int err);

static inline struct mxaccel_job *to_mxaccel_job(struct drm_sched_job *job)
{
	return container_of(job, struct mxaccel_job, base);
}

extern const struct drm_sched_backend_ops mxaccel_sched_ops;

/* mxaccel_submit.c: release everything a job holds. */
void mxaccel_job_release(struct mxaccel_job *job);

#endif /* MXACCEL_JOB_H */
