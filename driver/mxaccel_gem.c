// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: shmem-backed GEM objects (or device memory,
 * mxaccel_vram.c), created, described and waited
 * on through the ioctls below and mapped by user space through the DRM
 * file's mmap; the engine maps each once, when it first uses it, and
 * keeps the mapping until the object is freed (no map and unmap per job).
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_prime.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_gem.h"
#include "mxaccel_params.h"
#include "mxaccel_vram.h"

/*
 * The shmem helper's object functions, but freeing through us: the
 * engine's mapping goes before the object.
 */
static void mxaccel_bo_free(struct drm_gem_object *obj)
{
	mxaccel_bo_unmap(to_mxaccel_bo(obj));
	drm_gem_shmem_object_free(obj);
}

static const struct drm_gem_object_funcs mxaccel_bo_funcs = {
	.free = mxaccel_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *mxaccel_gem_create_object(struct drm_device *drm,
						 size_t size)
{
	struct mxaccel_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	mutex_init(&bo->map_lock);
	/* The engine reads and writes through the CPU: keep it coherent. */
	bo->base.map_wc = false;
	bo->base.base.funcs = &mxaccel_bo_funcs;
	return &bo->base.base;
}

void mxaccel_bo_unmap(struct mxaccel_bo *bo)
{
	struct mxaccel_engine *engine = to_mxaccel(bo->base.base.dev)->engine;

	if (bo->mapped)
		engine->ops->bo_unmap(engine, bo);
	mutex_destroy(&bo->map_lock);
}

int mxaccel_bo_map(struct mxaccel_bo *bo)
{
	struct mxaccel_engine *engine = to_mxaccel(bo->base.base.dev)->engine;
	int ret = 0;

	mutex_lock(&bo->map_lock);
	if (!bo->mapped) {
		ret = engine->ops->bo_map(engine, bo);
		bo->mapped = !ret;
	}
	mutex_unlock(&bo->map_lock);
	return ret;
}

/*
 * An imported dma-buf is accessed by the CPU from the fence-signalling
 * path, where dma_buf_begin_cpu_access() must not be called (it waits on
 * the reservation, which holds the job's own fence).  So only exporters
 * that need no CPU access brackets are accepted, and only memory the CPU
 * can address directly (not I/O memory: the 6.1 shmem helper would WARN
 * on it).
 */
static int vmap_import(struct mxaccel_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct dma_buf *dmabuf = obj->import_attach->dmabuf;
	struct drm_device *drm = obj->dev;
	int ret;

	if (dmabuf->ops->begin_cpu_access || dmabuf->ops->end_cpu_access)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: imported buffer (%s) needs CPU access brackets\n",
				     dmabuf->exp_name);
	ret = mxaccel_dma_buf_vmap(dmabuf, &bo->vmap);
	if (ret)
		return ret;
	if (bo->vmap.is_iomem) {
		mxaccel_dma_buf_vunmap(dmabuf, &bo->vmap);
		return mxaccel_inval(drm, -EINVAL,
				     "submit: imported buffer (%s) is I/O memory\n",
				     dmabuf->exp_name);
	}
	return 0;
}

int mxaccel_bo_vmap(struct mxaccel_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;

	if (obj->import_attach)
		return vmap_import(bo);
	return mxaccel_gem_vmap(obj, &bo->vmap);
}

void mxaccel_bo_vunmap(struct mxaccel_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;

	if (obj->import_attach)
		mxaccel_dma_buf_vunmap(obj->import_attach->dmabuf, &bo->vmap);
	else
		mxaccel_gem_vunmap(obj, &bo->vmap);
}

unsigned long mxaccel_timeout_to_jiffies(s64 timeout_ns)
{
	s64 left;

	if (timeout_ns <= 0)
		return 0;
	left = timeout_ns - ktime_get_ns();
	if (left <= 0)
		return 0;
	return nsecs_to_jiffies64(left) > MAX_SCHEDULE_TIMEOUT ?
	       MAX_SCHEDULE_TIMEOUT : (unsigned long)nsecs_to_jiffies64(left);
}

#define MXACCEL_BO_PLACEMENT	(DRM_MXACCEL_BO_SYSTEM | DRM_MXACCEL_BO_DEVICE)

/*
 * BO_CREATE: a zero-filled buffer object of at least args->size bytes, in
 * system memory or in the device's memory (flags; none: device memory
 * where the device has it).
 * -EINVAL: size 0, unknown flags, both placements, or device memory on a
 * device without.  -E2BIG: size above MAX_BO_SIZE (or the device
 * memory).  -ENOMEM (or -ENOSPC from shmem or a full device memory): no
 * memory.
 */
int mxaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_mxaccel_bo_create *args = data;
	struct mxaccel_device *mdev = to_mxaccel(drm);
	struct drm_gem_object *obj;
	bool device;
	int ret;

	if (args->flags & ~MXACCEL_BO_PLACEMENT)
		return mxaccel_inval(drm, -EINVAL,
				     "bo_create: unknown flags 0x%x\n",
				     args->flags & ~MXACCEL_BO_PLACEMENT);
	if (args->flags == MXACCEL_BO_PLACEMENT)
		return mxaccel_inval(drm, -EINVAL,
				     "bo_create: flags ask for system and device memory\n");
	if (!args->size)
		return mxaccel_inval(drm, -EINVAL, "bo_create: size is 0\n");
	if (args->size > MXACCEL_MAX_BO_SIZE)
		return mxaccel_inval(drm, -E2BIG,
				     "bo_create: size %llu above %llu\n",
				     args->size, MXACCEL_MAX_BO_SIZE);
	device = args->flags & DRM_MXACCEL_BO_DEVICE ||
		 (!args->flags && mdev->vram);
	if (device && !mdev->vram)
		return mxaccel_inval(drm, -EINVAL,
				     "bo_create: DRM_MXACCEL_BO_DEVICE: the device has no device memory\n");

	if (device) {
		obj = mxaccel_vram_bo_create(drm, args->size);
		if (IS_ERR(obj))
			return PTR_ERR(obj);
	} else {
		struct drm_gem_shmem_object *shmem;

		shmem = drm_gem_shmem_create(drm, args->size);
		if (IS_ERR(shmem))
			return PTR_ERR(shmem);
		obj = &shmem->base;
	}
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		ret = drm_gem_handle_create(file, obj, &args->handle);
	if (!ret)
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	/* The handle (if any) holds the object now. */
	drm_gem_object_put(obj);
	return ret;
}

/*
 * BO_INFO: size and mmap offset of a buffer object.
 * -EINVAL: pad set.  -ENOENT: no such handle in this file.
 */
int mxaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_mxaccel_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return mxaccel_inval(drm, -EINVAL, "bo_info: pad is not zero\n");
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return mxaccel_inval(drm, -ENOENT, "bo_info: no handle %u\n",
				     args->handle);
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

/*
 * BO_WAIT: wait until no queued or running job uses the buffer object.
 * -EINVAL: pad set.  -ENOENT: no such handle.  -ETIMEDOUT: the deadline
 * passed first.  -ERESTARTSYS: interrupted (restarted transparently).
 */
int mxaccel_ioctl_bo_wait(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_mxaccel_bo_wait *args = data;
	struct drm_gem_object *obj;
	long ret;

	if (args->pad)
		return mxaccel_inval(drm, -EINVAL, "bo_wait: pad is not zero\n");
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return mxaccel_inval(drm, -ENOENT, "bo_wait: no handle %u\n",
				     args->handle);
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true,
				    mxaccel_timeout_to_jiffies(args->timeout_ns));
	drm_gem_object_put(obj);
	if (ret == 0)
		return -ETIMEDOUT;
	return ret < 0 ? ret : 0;
}
