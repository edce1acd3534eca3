// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT: check the arguments, then create and push a job
 * (mxaccel_job.c has the life cycle, mxaccel_validate.c the checks).
 */
#include <drm/drm_file.h>

#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_submit.h"

#define MXACCEL_SUBMIT_FLAGS	(DRM_MXACCEL_SUBMIT_WAIT | \
				 DRM_MXACCEL_SUBMIT_NO_INLINE)

/* Version 4 appended to the version 1 op; nothing moved. */
static_assert(offsetof(struct drm_mxaccel_op, a_scale) ==
	      DRM_MXACCEL_OP_SIZE_V1);

static int check_args(struct drm_device *drm,
		      const struct drm_mxaccel_submit *args)
{
	if (args->flags & ~MXACCEL_SUBMIT_FLAGS)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: unknown flags 0x%x\n",
				     args->flags & ~MXACCEL_SUBMIT_FLAGS);
	if (args->op_count == 0)
		return mxaccel_inval(drm, -EINVAL, "submit: op_count is 0\n");
	if (args->op_count > to_mxaccel(drm)->engine->limits.max_ops)
		return mxaccel_inval(drm, -E2BIG, "submit: op_count %u above %u\n",
				     args->op_count,
				     to_mxaccel(drm)->engine->limits.max_ops);
	/* Older, smaller ops are zero-extended (copy_struct_from_user). */
	if (args->op_size < DRM_MXACCEL_OP_SIZE_V1)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op_size %u below %u\n",
				     args->op_size, DRM_MXACCEL_OP_SIZE_V1);
	if (args->op_size > DRM_MXACCEL_MAX_ELEM_SIZE)
		return mxaccel_inval(drm, -E2BIG,
				     "submit: op_size %u above %u\n",
				     args->op_size, DRM_MXACCEL_MAX_ELEM_SIZE);
	if (args->in_sync_count > MXACCEL_MAX_IN_SYNCS)
		return mxaccel_inval(drm, -E2BIG,
				     "submit: in_sync_count %u above %u\n",
				     args->in_sync_count, MXACCEL_MAX_IN_SYNCS);
	if (args->in_sync_count &&
	    args->sync_size < sizeof(struct drm_mxaccel_sync))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: sync_size %u below %zu\n",
				     args->sync_size,
				     sizeof(struct drm_mxaccel_sync));
	if (args->in_sync_count && args->sync_size > DRM_MXACCEL_MAX_ELEM_SIZE)
		return mxaccel_inval(drm, -E2BIG,
				     "submit: sync_size %u above %u\n",
				     args->sync_size, DRM_MXACCEL_MAX_ELEM_SIZE);
	if (args->out_sync.pad)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: out_sync.pad is not zero\n");
	if (!args->out_sync.handle && args->out_sync.point)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: out_sync.point %llu without a handle\n",
				     args->out_sync.point);
	if (args->reserved)
		return mxaccel_inval(drm, -EINVAL, "submit: reserved is not zero\n");
	if (!(args->flags & DRM_MXACCEL_SUBMIT_WAIT) && args->wait_timeout_ns)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: wait_timeout_ns without DRM_MXACCEL_SUBMIT_WAIT\n");
	return 0;
}

/*
 * SUBMIT: queue one job of op_count operations on a queue (see the uapi
 * for waiting and the inline path).
 * -EINVAL: a field out of range, flags/pad/reserved set, an extent past
 * its buffer object, overlapping output, an unusable imported buffer.
 * -E2BIG: too many ops or syncs, op_size or sync_size above
 * DRM_MXACCEL_MAX_ELEM_SIZE, unknown trailing fields set.  -EOVERFLOW:
 * extent arithmetic overflows.  -ENOENT: unknown queue, buffer object or
 * syncobj.  -EBUSY: the queue is full.  -EFAULT: bad user pointer.
 * -ENOMEM.  Nothing is queued on error.
 */
int mxaccel_ioctl_submit(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;
	struct drm_mxaccel_submit *args = data;
	struct mxaccel_queue *q;
	struct mxaccel_job *job;
	int ret;

	args->status = 0;
	args->out_flags = 0;
	ret = check_args(drm, args);
	if (ret)
		return ret;
	q = mxaccel_queue_lookup(mfile, args->queue_id);
	if (!q)
		return mxaccel_inval(drm, -ENOENT, "submit: no queue %u\n",
				     args->queue_id);
	job = mxaccel_job_create(mfile, q, args);
	if (IS_ERR(job)) {
		ret = PTR_ERR(job);
	} else {
		ret = mxaccel_job_push(job, args);
		if (ret)
			mxaccel_job_release(job);
	}
	/*
	 * Held until now: once pushed, the job may be freed, and its queue
	 * reference with it, before push has unlocked the queue.
	 */
	mxaccel_queue_put(q);
	return ret;
}
