/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API drift, in one place.  Every wrapper is chosen by a build-time
 * probe (conftest.sh -> mxaccel_config.h), never by a version number, and
 * no function body elsewhere carries an #ifdef.
 */
#ifndef MXACCEL_COMPAT_H
#define MXACCEL_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/gpu_scheduler.h>

#include "mxaccel_config.h"

#if defined(MXACCEL_HAVE_DRM_ACCEL)
#include <drm/drm_accel.h>
#define MXACCEL_DRIVER_NODE_FEATURE	DRIVER_COMPUTE_ACCEL
#define MXACCEL_BASE_FOPS		DRM_ACCEL_FOPS
#else
/* No accel subsystem (before 6.2): a render node. */
#define MXACCEL_DRIVER_NODE_FEATURE	DRIVER_RENDER
#define MXACCEL_BASE_FOPS		DRM_GEM_FOPS
#endif

/*
 * fdinfo: the DRM core prints the common keys and calls the driver since
 * 6.5; before, the driver prints them all from its file operations.
 */
#if defined(MXACCEL_HAVE_DRM_SHOW_FDINFO)
#define MXACCEL_FOPS_SHOW_FDINFO	drm_show_fdinfo
#define MXACCEL_DRIVER_SHOW_FDINFO(fn)	.show_fdinfo = fn,
#else
#define MXACCEL_FOPS_SHOW_FDINFO	mxaccel_show_fdinfo_legacy
#define MXACCEL_DRIVER_SHOW_FDINFO(fn)
#endif

static inline void mxaccel_show_memory_stats(struct drm_printer *p,
					     struct drm_file *file)
{
#if defined(MXACCEL_HAVE_DRM_SHOW_MEMORY_STATS)
	drm_show_memory_stats(p, file);
#endif
}

/* struct drm_driver lost .date in Linux 6.14. */
#if defined(MXACCEL_HAVE_DRIVER_DATE)
#define MXACCEL_DRIVER_DATE	.date = "20261129",
#else
#define MXACCEL_DRIVER_DATE
#endif

/*
 * A ring's scheduler: one job at a time, and no scheduler timeout (the
 * rings time jobs out themselves, per queue).  name is kept, not copied.
 */
static inline int mxaccel_sched_init(struct drm_gpu_scheduler *sched,
				     const struct drm_sched_backend_ops *ops,
				     struct workqueue_struct *timeout_wq,
				     const char *name, struct device *dev,
				     u32 jobs)
{
#if defined(MXACCEL_HAVE_SCHED_INIT_ARGS)
	const struct drm_sched_init_args args = {
		.ops = ops,
		.timeout_wq = timeout_wq,
#if defined(MXACCEL_HAVE_SCHED_INIT_ARGS_NUM_RQS)
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.credit_limit = jobs,
		.timeout = MAX_SCHEDULE_TIMEOUT,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#elif defined(MXACCEL_HAVE_SCHED_INIT_11)
	return drm_sched_init(sched, ops, NULL, DRM_SCHED_PRIORITY_COUNT, jobs, 0,
			      MAX_SCHEDULE_TIMEOUT, timeout_wq, NULL, name,
			      dev);
#else
#error "unsupported drm_sched_init(): extend driver/conftest.sh"
#endif
}

static inline int mxaccel_sched_job_init(struct drm_sched_job *job,
					 struct drm_sched_entity *entity,
					 void *owner)
{
#if defined(MXACCEL_HAVE_SCHED_JOB_INIT_5)
	return drm_sched_job_init(job, entity, 1, owner, 0);
#elif defined(MXACCEL_HAVE_SCHED_JOB_INIT_4)
	return drm_sched_job_init(job, entity, 1, owner);
#else
	return drm_sched_job_init(job, entity, owner);
#endif
}

/* The lowest user priority: LOW since 6.8's inversion, MIN before. */
#if defined(MXACCEL_HAVE_SCHED_PRIORITY_LOW)
#define MXACCEL_SCHED_PRIORITY_LOW	DRM_SCHED_PRIORITY_LOW
#else
#define MXACCEL_SCHED_PRIORITY_LOW	DRM_SCHED_PRIORITY_MIN
#endif

static inline int mxaccel_dma_buf_vmap(struct dma_buf *dmabuf,
				       struct iosys_map *map)
{
#if defined(MXACCEL_HAVE_DMA_BUF_VMAP_UNLOCKED)
	return dma_buf_vmap_unlocked(dmabuf, map);
#else
	return dma_buf_vmap(dmabuf, map);
#endif
}

static inline void mxaccel_dma_buf_vunmap(struct dma_buf *dmabuf,
					  struct iosys_map *map)
{
#if defined(MXACCEL_HAVE_DMA_BUF_VMAP_UNLOCKED)
	dma_buf_vunmap_unlocked(dmabuf, map);
#else
	dma_buf_vunmap(dmabuf, map);
#endif
}

static inline int mxaccel_gem_vmap(struct drm_gem_object *obj,
				   struct iosys_map *map)
{
#if defined(MXACCEL_HAVE_GEM_VMAP_UNLOCKED)
	return drm_gem_vmap_unlocked(obj, map);
#else
	return drm_gem_shmem_vmap(to_drm_gem_shmem_obj(obj), map);
#endif
}

static inline void mxaccel_gem_vunmap(struct drm_gem_object *obj,
				      struct iosys_map *map)
{
#if defined(MXACCEL_HAVE_GEM_VMAP_UNLOCKED)
	drm_gem_vunmap_unlocked(obj, map);
#else
	drm_gem_shmem_vunmap(to_drm_gem_shmem_obj(obj), map);
#endif
}

/* vm_flags became write-protected in 6.3. */
static inline void mxaccel_vm_flags_set(struct vm_area_struct *vma,
					unsigned long flags)
{
#if defined(MXACCEL_HAVE_VM_FLAGS_SET)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* MXACCEL_COMPAT_H */
