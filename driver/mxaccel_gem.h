/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer objects: GEM shmem objects with a CPU mapping for the engine.
 */
#ifndef MXACCEL_GEM_H
#define MXACCEL_GEM_H

#include <drm/drm_gem.h>

struct drm_gem_object *mxaccel_gem_create_object(struct drm_device *drm,
						 size_t size);

int mxaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int mxaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			  struct drm_file *file);
int mxaccel_ioctl_bo_wait(struct drm_device *drm, void *data,
			  struct drm_file *file);

/* Absolute CLOCK_MONOTONIC ns -> jiffies from now (0 if passed). */
unsigned long mxaccel_timeout_to_jiffies(s64 timeout_ns);

#endif /* MXACCEL_GEM_H */
