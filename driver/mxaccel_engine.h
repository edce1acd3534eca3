/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine interface: what executes jobs.  The software engine is the
 * first implementation; a hardware engine registers the same ops.
 */
#ifndef MXACCEL_ENGINE_H
#define MXACCEL_ENGINE_H

#include <linux/dma-fence.h>

struct mxaccel_device;
struct mxaccel_engine;
struct mxaccel_job;

struct mxaccel_engine_ops {
	const char *name;
	u32 kind;		/* enum drm_mxaccel_engine_kind */
	u64 elem_mask;		/* 1 << enum drm_mxaccel_elem */
	u64 op_mask;		/* 1 << enum drm_mxaccel_op_kind */
	u64 mode_mask;		/* 1 << enum drm_mxaccel_scale_mode */
	/*
	 * Start a validated job; return the fence that signals when it is
	 * done, with the job's error set on it.  Before the job can start,
	 * run() stores a reference to that fence in job->hw_fence (under
	 * job->lock), so a timeout can always tell a running job.
	 */
	struct dma_fence *(*run)(struct mxaccel_engine *engine,
				 struct mxaccel_job *job);
	/* Stop a running job early; its fence signals with err. */
	void (*abort)(struct mxaccel_engine *engine, struct mxaccel_job *job,
		      int err);
	void (*destroy)(struct mxaccel_engine *engine);
};

struct mxaccel_engine {
	const struct mxaccel_engine_ops *ops;
	struct mxaccel_device *mdev;
};

struct mxaccel_engine *mxaccel_soft_engine_create(struct mxaccel_device *mdev);

#endif /* MXACCEL_ENGINE_H */
