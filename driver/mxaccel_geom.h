/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A uapi operand's geometry for the MX core's functions (mxcore_geom.h,
 * the one source of sizes, strides and scale positions, shared with the
 * library and the CUDA plugin).
 */
#ifndef MXACCEL_GEOM_H
#define MXACCEL_GEOM_H

#include "mxaccel_accel.h"
#include "mxcore_geom.h"

/* The uapi's enums are the core's (checked here, at build time). */
static_assert((int)DRM_MXACCEL_LAYOUT_PLAIN == (int)MXCORE_LAYOUT_PLAIN &&
	      (int)DRM_MXACCEL_LAYOUT_SWIZZLED ==
	      (int)MXCORE_LAYOUT_SWIZZLED &&
	      (int)DRM_MXACCEL_DTYPE_F32 == (int)MXCORE_F32 &&
	      (int)DRM_MXACCEL_DTYPE_BF16 == (int)MXCORE_BF16 &&
	      (int)DRM_MXACCEL_SCALE_TYPE_E8M0 == (int)MXCORE_SCALE_E8M0 &&
	      (int)DRM_MXACCEL_SCALE_TYPE_UE4M3 == (int)MXCORE_SCALE_UE4M3);

/* An operand and its scaling (zero for version 1 to 3 callers: E8M0). */
static inline struct mxcore_geom
mxaccel_mx_geom(const struct drm_mxaccel_mx_operand *mx,
		const struct drm_mxaccel_block_scale *bs, u32 rows, u32 cols)
{
	return (struct mxcore_geom){
		.rows = rows, .cols = cols,
		.data_stride = mx->data_stride,
		.scale_stride = mx->scale_stride,
		.elem = mx->elem,
		.scale_type = bs->scale_type,
		.block = bs->block_size,
		.layout = mx->scale_layout,
	};
}

#endif /* MXACCEL_GEOM_H */
