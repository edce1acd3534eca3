/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer objects: GEM shmem objects (or imported dma-bufs), mapped for
 * the engine once, at their first SUBMIT, and unmapped when freed.
 */
#ifndef MXACCEL_GEM_H
#define MXACCEL_GEM_H

#include <linux/iosys-map.h>
#include <linux/mutex.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

/*
 * A system-memory object is a shmem object; a device-memory one
 * (mxaccel_vram.c) uses only base.base of it and its heap range.
 */
struct mxaccel_bo {
	struct drm_gem_shmem_object base;
	bool vram;
	struct drm_mm_node vram_node;
	/* The engine's mapping: made once, under map_lock. */
	struct mutex map_lock;
	bool mapped;
	struct iosys_map vmap;		/* CPU engines: kernel address */
	void *engine_priv;		/* DMA engines: their mapping */
};

static inline struct mxaccel_bo *to_mxaccel_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct mxaccel_bo, base.base);
}

struct drm_gem_object *mxaccel_gem_create_object(struct drm_device *drm,
						 size_t size);
/* Map a buffer object for its device's engine (idempotent). */
int mxaccel_bo_map(struct mxaccel_bo *bo);
/* The object is being freed: the engine's mapping (if any) goes. */
void mxaccel_bo_unmap(struct mxaccel_bo *bo);
/* CPU mapping for engines that compute with the CPU (their bo_map). */
int mxaccel_bo_vmap(struct mxaccel_bo *bo);
void mxaccel_bo_vunmap(struct mxaccel_bo *bo);

int mxaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int mxaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			  struct drm_file *file);
int mxaccel_ioctl_bo_wait(struct drm_device *drm, void *data,
			  struct drm_file *file);

/* Absolute CLOCK_MONOTONIC ns -> jiffies from now (0 if passed). */
unsigned long mxaccel_timeout_to_jiffies(s64 timeout_ns);

#endif /* MXACCEL_GEM_H */
