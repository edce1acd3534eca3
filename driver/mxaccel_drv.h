/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mxaccel: the device, the per-file state, and what the driver's files
 * share.
 */
#ifndef MXACCEL_DRV_H
#define MXACCEL_DRV_H

#include <linux/platform_device.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_print.h>

#include "mxaccel_accel.h"

struct mxaccel_engine;

struct mxaccel_device {
	struct drm_device drm;
	struct mxaccel_engine *engine;
	/* Monotonic id for queue names and scheduler debug output. */
	atomic_t next_queue;
};

static inline struct mxaccel_device *to_mxaccel(struct drm_device *drm)
{
	return container_of(drm, struct mxaccel_device, drm);
}

struct mxaccel_file {
	struct mxaccel_device *mdev;
	struct drm_file *file;
	struct xarray queues;		/* queue id -> struct mxaccel_queue */
	u32 next_queue_id;		/* ids are never reused */
	struct mutex lock;		/* serialises queue create/destroy */
	unsigned int n_queues;
};

/* The debug mask module parameter gates user-mistake messages. */
#define MXACCEL_DBG_IOCTL	0x1
#define MXACCEL_DBG_JOB		0x2

extern unsigned int mxaccel_debug;

#define mxaccel_dbg(drm, mask, fmt, ...)				\
	do {								\
		if (mxaccel_debug & (mask))				\
			drm_info(drm, fmt, ##__VA_ARGS__);		\
	} while (0)

/* A rejected ioctl argument: logged only with the ioctl debug bit. */
#define mxaccel_inval(drm, err, fmt, ...)				\
	({								\
		mxaccel_dbg(drm, MXACCEL_DBG_IOCTL, fmt, ##__VA_ARGS__); \
		err;							\
	})

#endif /* MXACCEL_DRV_H */
