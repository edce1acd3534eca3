// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: shmem-backed GEM objects, created, described and waited
 * on through the ioctls below and mapped by user space through the DRM
 * file's mmap.
 */
#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>

#include "mxaccel_drv.h"
#include "mxaccel_gem.h"
#include "mxaccel_params.h"

struct drm_gem_object *mxaccel_gem_create_object(struct drm_device *drm,
						 size_t size)
{
	struct drm_gem_shmem_object *shmem;

	shmem = kzalloc(sizeof(*shmem), GFP_KERNEL);
	if (!shmem)
		return ERR_PTR(-ENOMEM);
	/* The engine reads and writes through the CPU: keep it coherent. */
	shmem->map_wc = false;
	return &shmem->base;
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

/*
 * BO_CREATE: a zero-filled buffer object of at least args->size bytes.
 * -EINVAL: size 0 or flags set.  -E2BIG: size above MAX_BO_SIZE.
 * -ENOMEM: no memory.
 */
int mxaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_mxaccel_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	int ret;

	if (args->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "bo_create: unknown flags 0x%x\n",
				     args->flags);
	if (!args->size)
		return mxaccel_inval(drm, -EINVAL, "bo_create: size is 0\n");
	if (args->size > MXACCEL_MAX_BO_SIZE)
		return mxaccel_inval(drm, -E2BIG,
				     "bo_create: size %llu above %llu\n",
				     args->size, MXACCEL_MAX_BO_SIZE);

	shmem = drm_gem_shmem_create(drm, args->size);
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	ret = drm_gem_create_mmap_offset(&shmem->base);
	if (!ret)
		ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	if (!ret)
		args->mmap_offset =
			drm_vma_node_offset_addr(&shmem->base.vma_node);
	/* The handle (if any) holds the object now. */
	drm_gem_object_put(&shmem->base);
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
