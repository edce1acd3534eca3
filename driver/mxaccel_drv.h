/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mxaccel: the device, the per-file state, and what the driver's files
 * share.
 */
#ifndef MXACCEL_DRV_H
#define MXACCEL_DRV_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_print.h>

#include "mxaccel_accel.h"

struct dentry;
struct mxaccel_client;
struct mxaccel_engine;
struct mxaccel_ring;
struct workqueue_struct;

struct mxaccel_device {
	struct drm_device drm;
	unsigned int index;
	struct mxaccel_engine *engine;
	/*
	 * The rings own the schedulers and their names: both outlive every
	 * fence of the device, because every fence holds a module reference
	 * (mxaccel_fence.c) and rings go only with the device at unload.
	 */
	struct mxaccel_ring *rings;
	unsigned int n_rings;
	/* Every ring's scheduler: the entity of each queue lists them all. */
	struct drm_gpu_scheduler **sched_list;
	/* Scheduler timeouts; a queue's last reference is dropped here. */
	struct workqueue_struct *timeout_wq;
	struct workqueue_struct *release_wq;
	/* Queues alive on the device, destroyed ones included until freed. */
	atomic_t n_queues;
	/* Every queue of the device, for debugfs. */
	struct mutex queues_lock;
	struct list_head queues;
	atomic_t next_queue;		/* names in debugfs and the log */
	atomic64_t next_client;		/* fdinfo client ids (old kernels) */
	struct dentry *debugfs;
};

static inline struct mxaccel_device *to_mxaccel(struct drm_device *drm)
{
	return container_of(drm, struct mxaccel_device, drm);
}

struct mxaccel_file {
	struct mxaccel_device *mdev;
	struct drm_file *file;
	struct mxaccel_client *client;	/* fdinfo statistics */
	struct xarray queues;		/* queue id -> struct mxaccel_queue */
	u32 next_queue_id;		/* for xa_alloc_cyclic() */
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
			dev_info_ratelimited((drm)->dev, fmt, ##__VA_ARGS__); \
	} while (0)

/* A rejected ioctl argument: logged only with the ioctl debug bit. */
#define mxaccel_inval(drm, err, fmt, ...)				\
	({								\
		mxaccel_dbg(drm, MXACCEL_DBG_IOCTL, fmt, ##__VA_ARGS__); \
		err;							\
	})

#endif /* MXACCEL_DRV_H */
