/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device memory: the heap of a device whose engine reads its operands
 * from its own memory (a PCI engine without DMA), and the buffer objects
 * allocated from it.  User space maps them write-combined; the kernel
 * zeroes each one before handing it out.
 */
#ifndef MXACCEL_VRAM_H
#define MXACCEL_VRAM_H

#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <drm/drm_mm.h>

struct drm_device;
struct drm_gem_object;
struct mxaccel_bo;

struct mxaccel_vram {
	struct drm_mm mm;		/* offsets from the heap's first byte */
	struct mutex lock;		/* mm */
	u64 size;
	u64 dev_base;			/* the device's address of byte 0 */
	resource_size_t phys;		/* the CPU's physical address of byte 0 */
	void __iomem *cpu;		/* the kernel's (write-combined) mapping */
};

struct mxaccel_vram *mxaccel_vram_create(u64 size, u64 dev_base,
					 resource_size_t phys,
					 void __iomem *cpu);
/* Every buffer object of the heap must be gone. */
void mxaccel_vram_destroy(struct mxaccel_vram *vram);

static inline u64 mxaccel_vram_size(const struct mxaccel_vram *vram)
{
	return vram->size;
}

/* A zero-filled device-memory buffer object; -E2BIG, -ENOSPC, -ENODEV. */
struct drm_gem_object *mxaccel_vram_bo_create(struct drm_device *drm,
					      u64 size);
/* The device is gone: zap every user mapping of its objects. */
void mxaccel_vram_unmap_all(struct drm_device *drm);
bool mxaccel_bo_is_vram(const struct mxaccel_bo *bo);
/* The device's address of a device-memory buffer object's first byte. */
u64 mxaccel_vram_bo_addr(const struct mxaccel_bo *bo);

#endif /* MXACCEL_VRAM_H */
