/* SPDX-License-Identifier: MIT */
/*
 * The accel backend: devices driven by the mxaccel kernel driver through
 * libdrm and the mxaccel uapi.
 */
#ifndef MXA_ACCEL_H
#define MXA_ACCEL_H

#include <pthread.h>

#include "backend.h"

/*
 * A device queue and its timeline syncobj.  Fences hold a reference, so a
 * queue replaced after a timeout (the driver cancels every later job of a
 * guilty queue) lives until its last fence is freed.
 */
struct accel_queue {
	int fd;
	uint32_t id;
	uint32_t syncobj;
	unsigned int refs;		/* under accel_device.lock */
	bool guilty;
};

struct accel_device {
	int fd;
	char path[64];
	/* GET_PARAM answers */
	uint64_t uapi, engine_kind, elem_mask, op_mask, mode_mask;
	uint64_t max_dim, max_ops, rings, device_memory;
	/* 1 << enum drm_mxaccel_scale_type per op (version 4; E8M0 before) */
	uint64_t quantize_scale_types, gemm_scale_types;
	pthread_mutex_t lock;
	struct accel_queue *queue;	/* where new jobs go */
	/*
	 * GEM handles and how many buffers use each: importing a dma-buf of
	 * this same file yields the handle it already has (DRM dedups by
	 * object), so a handle is closed only with its last buffer.
	 */
	struct accel_handle_ref *handles;
	unsigned int n_handles, cap_handles;
};

struct accel_handle_ref {
	uint32_t handle;
	unsigned int refs;
};

struct accel_bo {
	uint32_t handle;
	size_t map_size;
};

static inline struct accel_device *accel_dev(struct mxa_device *dev)
{
	return dev->priv;
}

static inline struct accel_bo *accel_bo(const struct mxa_buffer *buf)
{
	return buf->priv;
}

/* accel_node.c: raw ioctls and node discovery. */
int accel_ioctl(int fd, unsigned long request, void *arg);
struct accel_node {
	char path[64];
};

unsigned int accel_discover(struct accel_node *nodes, unsigned int max,
			    char *reason, size_t size);
/*
 * The current queue with a reference held, replacing it first if it turned
 * guilty; accel_queue_put() drops a reference.
 */
int accel_queue_get(struct accel_device *ad, struct accel_queue **out);
void accel_queue_put(struct accel_device *ad, struct accel_queue *q);

/* accel_submit.c: jobs to the device queue, and their fences. */
int accel_submit(struct mxa_device *dev, const struct mxa_work *works,
		 unsigned int count, struct mxa_fence **out);
int accel_submit_wait(struct mxa_device *dev, const struct mxa_work *works,
		      unsigned int count);

#endif /* MXA_ACCEL_H */
