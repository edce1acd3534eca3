// SPDX-License-Identifier: MIT
/*
 * Jobs to the device: works become struct drm_mxaccel_op, travel in as few
 * SUBMITs as the device's op limit allows, and complete through the
 * queue's timeline syncobj.  A fence waits for the last point with
 * drmSyncobjTimelineWait() and then reads every job's status.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xf86drm.h>

#include "accel.h"
#include "mxaccel_accel.h"

struct accel_fence {
	struct mxa_fence base;
	struct mxa_device *dev;
	struct accel_queue *queue;
	unsigned int count;
	int status;			/* cached once complete */
	bool complete;
	uint64_t seqnos[];		/* one per SUBMIT, in order */
};

static struct accel_fence *to_accel_fence(struct mxa_fence *f)
{
	return (struct accel_fence *)f;
}

/* The library's enums are the uapi's. */
_Static_assert((int)MXA_SCALE_NVFP4 == (int)DRM_MXACCEL_SCALE_NVFP4 &&
	       (int)MXA_SCALE_E8M0 == (int)DRM_MXACCEL_SCALE_TYPE_E8M0 &&
	       (int)MXA_SCALE_UE4M3 == (int)DRM_MXACCEL_SCALE_TYPE_UE4M3,
	       "uapi scale enums");

/*
 * The scaling of an operand (uapi 4).  A driver older than that gets the
 * version 1 op, without it: accel_reject() keeps UE4M3 operands from it,
 * and E8M0 ones have zeros here.
 */
static void encode_scale(struct drm_mxaccel_block_scale *s,
			 const struct mxa_matrix *m)
{
	s->scale_type = m->scale_type;
	s->block_size = m->block_size;
	memcpy(&s->tensor_scale, &m->tensor_scale, sizeof(s->tensor_scale));
}

static void encode_mx(struct drm_mxaccel_mx_operand *o,
		      const struct mxa_matrix *m)
{
	o->data_handle = accel_bo(m->data)->handle;
	o->scale_handle = accel_bo(m->scale)->handle;
	o->data_offset = m->data_offset;
	o->data_stride = m->data_stride;
	o->scale_offset = m->scale_offset;
	o->scale_stride = m->scale_stride;
	o->elem = m->elem;
	o->scale_layout = m->scale_layout == MXA_LAYOUT_SWIZZLED ?
			  DRM_MXACCEL_LAYOUT_SWIZZLED : DRM_MXACCEL_LAYOUT_PLAIN;
}

/*
 * One op of a work item.  The exact GEMM kernel asks the device for the
 * exact result (uapi 3): a hardware engine's own GEMM is not exact.
 */
static void encode(struct drm_mxaccel_op *op, const struct mxa_work *w,
		   const struct accel_device *ad)
{
	const struct mxa_job *job = &w->job;

	memset(op, 0, sizeof(*op));
	op->c.handle = accel_bo(job->dense.buf)->handle;
	op->c.dtype = job->dense.dtype == MXA_DTYPE_BF16 ?
		      DRM_MXACCEL_DTYPE_BF16 : DRM_MXACCEL_DTYPE_F32;
	op->c.offset = job->dense.offset;
	op->c.stride = job->dense.stride;
	encode_mx(&op->a, &job->a);
	encode_scale(&op->a_scale, &job->a);
	op->m = job->a.rows;
	op->k = job->a.cols;
	if (job->op == MXA_OP_GEMM) {
		op->kind = DRM_MXACCEL_OP_GEMM;
		op->flags = job->flags & MXA_GEMM_ACCUMULATE ?
			    DRM_MXACCEL_OP_ACCUMULATE : 0;
		if (w->kernel->exact && ad->uapi >= 3)
			op->flags |= DRM_MXACCEL_OP_EXACT;
		op->n = job->b.rows;
		encode_mx(&op->b, &job->b);
		encode_scale(&op->b_scale, &job->b);
	} else {
		op->kind = DRM_MXACCEL_OP_QUANTIZE;
		op->scale_mode = job->mode;
	}
}

/* The op struct the driver knows: version 4's, or versions 1 to 3's. */
static size_t op_size(const struct accel_device *ad)
{
	return ad->uapi >= 4 ? sizeof(struct drm_mxaccel_op) :
			       DRM_MXACCEL_OP_SIZE_V1;
}

/* count works as ops op_size(ad) bytes apart, in one allocation. */
static uint8_t *encode_all(const struct mxa_work *works, unsigned int count,
			   const struct accel_device *ad)
{
	size_t size = op_size(ad);
	uint8_t *ops = calloc(count, size);
	struct drm_mxaccel_op op;
	unsigned int i;

	if (!ops)
		return NULL;
	for (i = 0; i < count; i++) {
		encode(&op, &works[i], ad);
		memcpy(ops + i * size, &op, size);
	}
	return ops;
}

static int64_t deadline(int64_t timeout_ns)
{
	struct timespec ts;
	int64_t now;

	if (timeout_ns < 0)
		return INT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ll + ts.tv_nsec;
	return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

/* Status of job seqno, which has completed. */
static int job_status(struct accel_fence *f, uint64_t seqno)
{
	struct drm_mxaccel_job_wait jw = { .queue_id = f->queue->id,
					   .seqno = seqno };
	int ret = accel_ioctl(f->queue->fd, DRM_IOCTL_MXACCEL_JOB_WAIT, &jw);

	return ret ? ret : jw.status;
}

static int accel_fence_wait(struct mxa_fence *fence, int64_t timeout_ns)
{
	struct accel_fence *f = to_accel_fence(fence);
	uint64_t point = f->seqnos[f->count - 1];
	uint32_t handle = f->queue->syncobj;
	unsigned int i;
	int ret;

	if (f->complete)
		return f->status;
	ret = drmSyncobjTimelineWait(f->queue->fd, &handle, &point, 1,
				     deadline(timeout_ns),
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				     NULL);
	if (ret == -ETIME || ret == -ETIMEDOUT)
		return -ETIME;
	if (ret)
		return mxa__err(ret, "%s: syncobj wait: %s",
				f->dev->info.name, mxa_strerror(ret));
	/* Jobs of a queue finish in order: all are done; report the first. */
	for (i = 0; i < f->count && !ret; i++)
		ret = job_status(f, f->seqnos[i]);
	/* A timed-out job makes its queue guilty: use a fresh one next. */
	if (ret == -ETIMEDOUT || ret == -ECANCELED)
		f->queue->guilty = true;
	f->status = ret;
	f->complete = true;
	if (ret)
		mxa__dbg("%s: job failed: %s", f->dev->info.name,
			 mxa_strerror(ret));
	return ret;
}

static void accel_fence_release(struct mxa_fence *fence)
{
	struct accel_fence *f = to_accel_fence(fence);

	accel_fence_wait(fence, -1);
	accel_queue_put(accel_dev(f->dev), f->queue);
	free(f);
}

static const struct mxa_fence_ops accel_fence_ops = {
	.wait = accel_fence_wait,
	.release = accel_fence_release,
};

/*
 * One SUBMIT.  With wait (uapi 2), the driver also waits for the job: then
 * *done says whether it finished (a signal can end the wait early) and
 * *status is its status.
 */
static int submit_chunk(struct accel_queue *q, const uint8_t *ops,
			size_t size, unsigned int count, bool wait,
			uint64_t *seqno, bool *done, int *status)
{
	struct drm_mxaccel_submit s = {
		.queue_id = q->id,
		.flags = wait ? DRM_MXACCEL_SUBMIT_WAIT : 0,
		.ops = (uintptr_t)ops,
		.op_count = count,
		.op_size = (uint32_t)size,
		.wait_timeout_ns = wait ? INT64_MAX : 0,
	};
	int ret = accel_ioctl(q->fd, DRM_IOCTL_MXACCEL_SUBMIT, &s);

	*seqno = s.seqno;
	if (done) {
		*done = !ret && (s.out_flags & DRM_MXACCEL_SUBMIT_OUT_DONE);
		*status = s.status;
	}
	return ret;
}

int accel_submit(struct mxa_device *dev, const struct mxa_work *works,
		 unsigned int count, struct mxa_fence **out)
{
	struct accel_device *ad = accel_dev(dev);
	unsigned int per = ad->max_ops ? (unsigned int)ad->max_ops : 1;
	unsigned int chunks = (count + per - 1) / per, i;
	size_t size = op_size(ad);
	struct accel_fence *f;
	uint8_t *ops;
	int ret;

	ops = encode_all(works, count, ad);
	f = calloc(1, sizeof(*f) + chunks * sizeof(f->seqnos[0]));
	if (!ops || !f) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = accel_queue_get(ad, &f->queue);
	if (ret)
		goto err_free;
	f->base.ops = &accel_fence_ops;
	f->dev = dev;
	for (i = 0; i < chunks; i++) {
		unsigned int n = count - i * per < per ? count - i * per : per;

		ret = submit_chunk(f->queue, ops + (size_t)i * per * size,
				   size, n, false, &f->seqnos[i], NULL, NULL);
		if (ret)
			break;
		f->count++;
	}
	if (ret) {
		mxa__dbg("%s: SUBMIT: %s", dev->info.name, mxa_strerror(ret));
		/* Earlier chunks are queued: their fence still has to end. */
		if (f->count) {
			accel_fence_release(&f->base);
			f = NULL;
		} else {
			accel_queue_put(ad, f->queue);
		}
		goto err_free;
	}
	free(ops);
	*out = &f->base;
	return 0;

err_free:
	free(ops);
	free(f);
	return ret;
}

/*
 * A synchronous call: works that fit one SUBMIT go with
 * DRM_MXACCEL_SUBMIT_WAIT, one ioctl for submit and wait (and, for a small
 * job on an idle queue, the driver runs it before returning).  Anything
 * else, an older driver, or a wait cut short takes the fence path.
 */
int accel_submit_wait(struct mxa_device *dev, const struct mxa_work *works,
		      unsigned int count)
{
	struct accel_device *ad = accel_dev(dev);
	struct accel_fence *f;
	struct mxa_fence *fence;
	uint8_t *ops;
	bool done;
	int ret, status;

	if (ad->uapi < 2 || count > (ad->max_ops ? ad->max_ops : 1)) {
		ret = accel_submit(dev, works, count, &fence);
		if (!ret) {
			ret = mxa_fence_wait(fence, -1);
			mxa_fence_free(fence);
		}
		return ret;
	}
	ops = encode_all(works, count, ad);
	f = calloc(1, sizeof(*f) + sizeof(f->seqnos[0]));
	if (!ops || !f) {
		free(ops);
		free(f);
		return -ENOMEM;
	}
	ret = accel_queue_get(ad, &f->queue);
	if (ret)
		goto out_free;
	f->base.ops = &accel_fence_ops;
	f->dev = dev;
	ret = submit_chunk(f->queue, ops, op_size(ad), count, true,
			   &f->seqnos[0], &done, &status);
	if (ret) {
		mxa__dbg("%s: SUBMIT: %s", dev->info.name, mxa_strerror(ret));
		accel_queue_put(ad, f->queue);
		goto out_free;
	}
	f->count = 1;
	if (done) {
		f->complete = true;
		f->status = status;
		if (status == -ETIMEDOUT || status == -ECANCELED)
			f->queue->guilty = true;
		if (status)
			mxa__dbg("%s: job failed: %s", dev->info.name,
				 mxa_strerror(status));
	}
	ret = accel_fence_wait(&f->base, -1);
	accel_fence_release(&f->base);
	f = NULL;
out_free:
	free(ops);
	free(f);
	return ret;
}
