// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory buffer objects.  The heap is a range of the device's
 * memory BAR managed with drm_mm; an object is one contiguous range,
 * page-aligned (so user space can map it and nothing else).  Objects are
 * not shared through dma-buf: an importer could not reach the memory
 * once the device is removed, and the heap goes with the device.
 *
 * Removal: mxaccel_vram_unmap_all() zaps every user mapping (later
 * accesses fault with SIGBUS), objects still held by files stay valid
 * bookkeeping until the files close, and the heap is destroyed with the
 * device, after the last of them.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>

#include "mxaccel_compat.h"
#include "mxaccel_drv.h"
#include "mxaccel_gem.h"
#include "mxaccel_vram.h"

struct mxaccel_vram *mxaccel_vram_create(u64 size, u64 dev_base,
					 resource_size_t phys,
					 void __iomem *cpu)
{
	struct mxaccel_vram *vram = kzalloc(sizeof(*vram), GFP_KERNEL);

	if (!vram)
		return ERR_PTR(-ENOMEM);
	drm_mm_init(&vram->mm, 0, size);
	mutex_init(&vram->lock);
	vram->size = size;
	vram->dev_base = dev_base;
	vram->phys = phys;
	vram->cpu = cpu;
	return vram;
}

void mxaccel_vram_destroy(struct mxaccel_vram *vram)
{
	if (!vram)
		return;
	drm_mm_takedown(&vram->mm);
	mutex_destroy(&vram->lock);
	kfree(vram);
}

bool mxaccel_bo_is_vram(const struct mxaccel_bo *bo)
{
	return bo->vram;
}

u64 mxaccel_vram_bo_addr(const struct mxaccel_bo *bo)
{
	return to_mxaccel(bo->base.base.dev)->vram->dev_base +
	       bo->vram_node.start;
}

static void vram_bo_free(struct drm_gem_object *obj)
{
	struct mxaccel_bo *bo = to_mxaccel_bo(obj);
	struct mxaccel_vram *vram = to_mxaccel(obj->dev)->vram;

	mxaccel_bo_unmap(bo);
	mutex_lock(&vram->lock);
	drm_mm_remove_node(&bo->vram_node);
	mutex_unlock(&vram->lock);
	drm_gem_object_release(obj);
	kfree(bo);
}

static int vram_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct mxaccel_bo *bo = to_mxaccel_bo(obj);
	struct mxaccel_vram *vram = to_mxaccel(obj->dev)->vram;
	unsigned long pfn;
	int idx, ret;

	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	/* vm_pgoff is the fake offset of the object plus the page within. */
	vma->vm_pgoff -= drm_vma_node_start(&obj->vma_node);
	mxaccel_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			     VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	pfn = PHYS_PFN(vram->phys + bo->vram_node.start) + vma->vm_pgoff;
	ret = io_remap_pfn_range(vma, vma->vm_start, pfn,
				 vma->vm_end - vma->vm_start,
				 vma->vm_page_prot);
	drm_dev_exit(idx);
	return ret;
}

static struct dma_buf *vram_bo_export(struct drm_gem_object *obj, int flags)
{
	return ERR_PTR(mxaccel_inval(obj->dev, -EOPNOTSUPP,
				     "export: device-memory buffer objects are not shared\n"));
}

static const struct vm_operations_struct vram_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs vram_bo_funcs = {
	.free = vram_bo_free,
	.mmap = vram_bo_mmap,
	.export = vram_bo_export,
	.vm_ops = &vram_vm_ops,
};

struct drm_gem_object *mxaccel_vram_bo_create(struct drm_device *drm,
					      u64 size)
{
	struct mxaccel_vram *vram = to_mxaccel(drm)->vram;
	struct mxaccel_bo *bo;
	int idx, ret;

	size = round_up(size, PAGE_SIZE);
	if (size > vram->size)
		return ERR_PTR(mxaccel_inval(drm, -E2BIG,
					     "bo_create: size %llu above the device memory, %llu\n",
					     size, vram->size));
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	mutex_init(&bo->map_lock);
	bo->vram = true;
	bo->base.base.funcs = &vram_bo_funcs;
	drm_gem_private_object_init(drm, &bo->base.base, size);

	mutex_lock(&vram->lock);
	ret = drm_mm_insert_node_generic(&vram->mm, &bo->vram_node, size,
					 PAGE_SIZE, 0, DRM_MM_INSERT_BEST);
	mutex_unlock(&vram->lock);
	if (ret) {
		drm_gem_object_release(&bo->base.base);
		mutex_destroy(&bo->map_lock);
		kfree(bo);
		return ERR_PTR(mxaccel_inval(drm, -ENOSPC,
					     "bo_create: no %llu bytes free in device memory\n",
					     size));
	}
	/* The memory held someone else's data: zero it while it is there. */
	if (drm_dev_enter(drm, &idx)) {
		memset_io(vram->cpu + bo->vram_node.start, 0, size);
		drm_dev_exit(idx);
	} else {
		drm_gem_object_put(&bo->base.base);
		return ERR_PTR(-ENODEV);
	}
	return &bo->base.base;
}

void mxaccel_vram_unmap_all(struct drm_device *drm)
{
	/* Every mapping of every object of the file's device, at once. */
	unmap_mapping_range(drm->anon_inode->i_mapping, 0, 0, 1);
}
