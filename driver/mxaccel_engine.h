/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine interface: what executes jobs.  An engine has rings; each
 * ring runs one job at a time, in the order its scheduler hands them over.
 * The software engine is the first implementation; a hardware engine
 * registers the same ops.
 *
 * Rules for every engine:
 *  - run(), abort() and reset() are on the fence-signalling path: they
 *    must not allocate memory or wait for fences.  What a job needs is
 *    allocated by job_init() at SUBMIT, which may sleep and fail.
 *  - A started job ends exactly once, through mxaccel_job_complete(),
 *    which signals the job's fence.  abort() asks a running job to end
 *    early; it must then end within a bounded time.
 *  - Buffer objects are mapped for the engine once, by bo_map() at their
 *    first SUBMIT, and unmapped by bo_unmap() when they are freed.
 */
#ifndef MXACCEL_ENGINE_H
#define MXACCEL_ENGINE_H

#include <linux/types.h>

struct mxaccel_bo;
struct mxaccel_device;
struct mxaccel_engine;
struct mxaccel_job;

/* What the engine can do and how operands must be laid out for it. */
struct mxaccel_engine_limits {
	u64 elem_mask;		/* 1 << enum drm_mxaccel_elem */
	u64 op_mask;		/* 1 << enum drm_mxaccel_op_kind */
	u64 mode_mask;		/* 1 << enum drm_mxaccel_scale_mode */
	/* 1 << enum drm_mxaccel_scale_type, per op kind */
	u64 quantize_scale_types;
	u64 gemm_scale_types;
	u32 max_dim;		/* largest M, N or K */
	u32 max_ops;		/* ops of one job, <= MXACCEL_MAX_OPS */
	u32 ring_jobs;		/* jobs a ring may have started at once */
	u64 max_bo_size;
	u32 offset_align;	/* operand offsets and strides: a power of 2 */
};

struct mxaccel_engine_ops {
	const char *name;
	u32 kind;		/* enum drm_mxaccel_engine_kind */
	/* Per-job state (job->engine_priv); may sleep and fail. */
	int (*job_init)(struct mxaccel_engine *engine, struct mxaccel_job *job);
	void (*job_fini)(struct mxaccel_engine *engine, struct mxaccel_job *job);
	/*
	 * Start a job on a ring, which has fewer than ring_jobs started jobs;
	 * the engine runs a ring's jobs in the order they were started.
	 */
	void (*run)(struct mxaccel_engine *engine, unsigned int ring,
		    struct mxaccel_job *job);
	/*
	 * Optional: execute a job in the calling thread and return its
	 * status (engines that compute with the CPU).
	 */
	int (*run_inline)(struct mxaccel_engine *engine,
			  struct mxaccel_job *job);
	/* Ask the job running on a ring to stop with err. */
	void (*abort)(struct mxaccel_engine *engine, unsigned int ring,
		      struct mxaccel_job *job, int err);
	/*
	 * Bring a ring back after its job did not stop when aborted: on
	 * return the job has ended and the ring is idle.
	 */
	void (*reset)(struct mxaccel_engine *engine, unsigned int ring);
	/*
	 * Optional: look for completed jobs on a ring now (SUBMIT_WAIT polls
	 * with it for up to the poll_us parameter before it sleeps).  Any
	 * context that may sleep; must not sleep itself.
	 */
	void (*poll)(struct mxaccel_engine *engine, unsigned int ring);
	int (*bo_map)(struct mxaccel_engine *engine, struct mxaccel_bo *bo);
	void (*bo_unmap)(struct mxaccel_engine *engine, struct mxaccel_bo *bo);
	void (*destroy)(struct mxaccel_engine *engine);
};

struct mxaccel_engine {
	const struct mxaccel_engine_ops *ops;
	struct mxaccel_device *mdev;
	struct mxaccel_engine_limits limits;
	unsigned int n_rings;
};

struct mxaccel_engine *mxaccel_soft_engine_create(struct mxaccel_device *mdev,
						  unsigned int n_rings);

#endif /* MXACCEL_ENGINE_H */
