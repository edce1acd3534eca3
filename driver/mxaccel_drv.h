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
	 * The rings own the schedulers and their names: schedulers go when
	 * the device is released (no file open, no queue left), their
	 * memory with the last fence (struct mxaccel_ring_set).
	 */
	struct mxaccel_ring_set *ring_set;
	struct mxaccel_ring *rings;	/* ring_set->ring */
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
	/* Device memory, where the engine has any (mxaccel_vram.c). */
	struct mxaccel_vram *vram;
	/* mxaccel_device_unplug() ran: the device is gone for its users. */
	atomic_t unplugged;
};

/*
 * A device's life: alloc (devres of parent, released with the last DRM
 * reference), then the engine and register; unplug once when it goes
 * (module exit, PCI removal, a lost device).  What register set up is
 * torn down only when the device is released.
 */
struct mxaccel_device *mxaccel_device_alloc(struct device *parent);
int mxaccel_device_register(struct mxaccel_device *mdev,
			    struct mxaccel_engine *engine);
void mxaccel_device_unplug(struct mxaccel_device *mdev);

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
