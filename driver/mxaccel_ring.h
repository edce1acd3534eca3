/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rings: one scheduler per engine ring, owned by the device.  A ring has
 * up to the engine's ring_jobs jobs started at once (the software engine:
 * one), which it runs in order; queues are scheduler entities on one ring.
 */
#ifndef MXACCEL_RING_H
#define MXACCEL_RING_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

struct mxaccel_device;
struct mxaccel_job;
struct mxaccel_ring_set;

struct mxaccel_ring {
	struct drm_gpu_scheduler sched;
	struct mxaccel_device *mdev;
	struct mxaccel_ring_set *set;
	unsigned int index;
	/* The timeline name of every fence of the ring. */
	char name[32];
	/* Engine fences of the ring: seqnos follow the order jobs start. */
	u64 fence_context;
	u64 fence_seqno;		/* only run_job() advances it */
	/* Jobs pushed to the ring and not yet ended: where queues go. */
	atomic_t load;

	/*
	 * The jobs on the engine, oldest first, and the timeout that
	 * watches the oldest (the one the engine is working on).
	 */
	spinlock_t lock;
	struct list_head running;
	ktime_t last_end;		/* when the last job ended: busy time */
	struct delayed_work timeout_work;

	/* For fdinfo and debugfs. */
	atomic64_t busy_ns;
	atomic64_t jobs_done;
	atomic64_t jobs_timed_out;
};

/*
 * The rings of a device, in one allocation that lives as long as the
 * last fence that names one of them: the device's reference goes when the
 * device is released, each engine fence holds one (mxaccel_fence.c).  A
 * device can go before its fences (PCI removal with sync_files open).
 */
struct mxaccel_ring_set {
	struct kref ref;
	struct rcu_head rcu;
	struct mxaccel_ring ring[];
};

static inline void mxaccel_ring_set_get(struct mxaccel_ring_set *set)
{
	kref_get(&set->ref);
}

void mxaccel_ring_set_put(struct mxaccel_ring_set *set);

static inline struct mxaccel_ring *to_mxaccel_ring(struct drm_gpu_scheduler *s)
{
	return container_of(s, struct mxaccel_ring, sched);
}

/* The least loaded ring; prefer wins a tie. */
struct mxaccel_ring *mxaccel_ring_least_loaded(struct mxaccel_device *mdev,
					       struct mxaccel_ring *prefer);

int mxaccel_rings_init(struct mxaccel_device *mdev);
void mxaccel_rings_fini(struct mxaccel_device *mdev);

/* The oldest job on the ring, or NULL; under ring->lock. */
struct mxaccel_job *mxaccel_ring_oldest(struct mxaccel_ring *ring);

/* The engine started job on ring (under no lock); arms the timeout. */
void mxaccel_ring_job_started(struct mxaccel_ring *ring,
			      struct mxaccel_job *job);
/*
 * The job on ring ended: called by mxaccel_job_complete().  Returns the
 * ring's busy time it accounts for (since it started or, if later, since
 * the job before it ended: jobs queued on the engine overlap).
 */
u64 mxaccel_ring_job_ended(struct mxaccel_ring *ring, struct mxaccel_job *job);
/* Stop a running job of the queue, on whichever ring (a dying queue). */
struct mxaccel_queue;
void mxaccel_rings_abort_queue(struct mxaccel_device *mdev,
			       struct mxaccel_queue *q, int err);

#endif /* MXACCEL_RING_H */
