// SPDX-License-Identifier: GPL-2.0
/*
 * Engine fences and module lifetime.  Fences travel far beyond their
 * driver: into syncobjs of other files, sync_files, other drivers'
 * reservation objects.  Their ops live in this module and the scheduler
 * fences that wrap them read their scheduler's name, which lives with the
 * device's rings.  So every engine fence holds a reference on the module
 * (while any fence of ours exists, rmmod fails with -EBUSY) and on the
 * rings of its device (struct mxaccel_ring_set: a PCI device can be
 * removed while its fences live on).  Every scheduler fence the
 * driver publishes has an engine fence as its parent (run_job always
 * returns one, even for a canceled job), which it holds until it is
 * released itself.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "mxaccel_fence.h"
#include "mxaccel_ring.h"

static const char *mxaccel_fence_driver_name(struct dma_fence *f)
{
	return "mxaccel";
}

static const char *mxaccel_fence_timeline_name(struct dma_fence *f)
{
	return container_of(f, struct mxaccel_fence, base)->timeline;
}

/*
 * The last thing this module's code does for a fence is dropping the
 * module reference.  free_module() waits for an RCU grace period before it
 * frees the module's text, and the reference is dropped inside a read-side
 * section, so the few instructions that follow it still exist.
 */
static void mxaccel_fence_release(struct dma_fence *f)
{
	struct mxaccel_fence *mf = container_of(f, struct mxaccel_fence, base);

	rcu_read_lock();
	mxaccel_ring_set_put(mf->set);
	kfree_rcu(mf, base.rcu);
	module_put(THIS_MODULE);
	rcu_read_unlock();
}

static const struct dma_fence_ops mxaccel_fence_ops = {
	.get_driver_name = mxaccel_fence_driver_name,
	.get_timeline_name = mxaccel_fence_timeline_name,
	.release = mxaccel_fence_release,
};

struct mxaccel_fence *mxaccel_fence_alloc(void)
{
	struct mxaccel_fence *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	/* Called from an ioctl: the open file already pins the module. */
	if (f)
		__module_get(THIS_MODULE);
	return f;
}

void mxaccel_fence_free(struct mxaccel_fence *f)
{
	if (!f)
		return;
	kfree(f);
	module_put(THIS_MODULE);
}

void mxaccel_fence_init(struct mxaccel_fence *f, struct mxaccel_ring *ring,
			u64 context, u64 seqno)
{
	spin_lock_init(&f->lock);
	f->timeline = ring->name;
	f->set = ring->set;
	mxaccel_ring_set_get(f->set);
	dma_fence_init(&f->base, &mxaccel_fence_ops, &f->lock, context, seqno);
}
