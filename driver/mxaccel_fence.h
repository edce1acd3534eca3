/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Engine fences: the fence of each job on the engine (the scheduler's
 * fences point at it as their parent) and of jobs run inline.
 */
#ifndef MXACCEL_FENCE_H
#define MXACCEL_FENCE_H

#include <linux/dma-fence.h>
#include <linux/spinlock.h>

struct mxaccel_ring;
struct mxaccel_ring_set;

struct mxaccel_fence {
	struct dma_fence base;
	spinlock_t lock;		/* dma_fence_init() needs one */
	/* The ring's name, in a ring set the fence holds a reference on. */
	const char *timeline;
	struct mxaccel_ring_set *set;
};

/*
 * Memory for a fence, allocated at SUBMIT so that nothing allocates on
 * the signalling path.  It holds a module reference from here on; a fence
 * never initialised gives it back through mxaccel_fence_free(), an
 * initialised one when its last reference goes.
 */
struct mxaccel_fence *mxaccel_fence_alloc(void);
void mxaccel_fence_free(struct mxaccel_fence *f);
/* A fence on ring's timeline (named after it); context as given. */
void mxaccel_fence_init(struct mxaccel_fence *f, struct mxaccel_ring *ring,
			u64 context, u64 seqno);

#endif /* MXACCEL_FENCE_H */
