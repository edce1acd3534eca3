/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rings: one scheduler per engine ring, owned by the device.  A ring runs
 * one job at a time; queues are scheduler entities on one ring.
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

	/* The job on the engine and the timeout that watches it. */
	spinlock_t lock;
	struct mxaccel_job *running;
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
	unsigned int n;
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

/* The engine started job on ring (under no lock); arms the timeout. */
void mxaccel_ring_job_started(struct mxaccel_ring *ring,
			      struct mxaccel_job *job);
/* The job on ring ended: called by mxaccel_job_complete(). */
void mxaccel_ring_job_ended(struct mxaccel_ring *ring,
			    struct mxaccel_job *job, u64 busy_ns);
/* Stop a running job of the queue, on whichever ring (a dying queue). */
struct mxaccel_queue;
void mxaccel_rings_abort_queue(struct mxaccel_device *mdev,
			       struct mxaccel_queue *q, int err);

#endif /* MXACCEL_RING_H */
