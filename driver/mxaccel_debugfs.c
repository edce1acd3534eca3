// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs, for people debugging the driver or a stuck workload:
 *
 *   rings   per ring: the running job and for how long,
 *           jobs done and timed out, engine busy time
 *   queues  per queue (destroyed ones until their last job is freed):
 *           creator, ring, priority, guilty / dying, last seqno, jobs
 *           unfinished
 */
#include <linux/debugfs.h>
#include <linux/jiffies.h>
#include <linux/seq_file.h>

#include "mxaccel_drv.h"
#include "mxaccel_debugfs.h"
#include "mxaccel_job.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"

static struct dentry *mxaccel_debugfs_root;

static int rings_show(struct seq_file *m, void *unused)
{
	struct mxaccel_device *mdev = m->private;
	unsigned int i;

	seq_puts(m, "ring             running (queue/seqno/ms)   done  timed_out  busy_ns\n");
	for (i = 0; i < mdev->n_rings; i++) {
		struct mxaccel_ring *ring = &mdev->rings[i];
		char running[32] = "-";
		struct mxaccel_job *job;

		spin_lock(&ring->lock);
		job = mxaccel_ring_oldest(ring);
		if (job)
			snprintf(running, sizeof(running), "%u/%llu/%u",
				 job->queue->serial, job->seqno,
				 jiffies_to_msecs(jiffies - job->started_jiffies));
		spin_unlock(&ring->lock);
		seq_printf(m, "%-16s %-26s %6lld %10lld %lld\n",
			   ring->name, running,
			   (long long)atomic64_read(&ring->jobs_done),
			   (long long)atomic64_read(&ring->jobs_timed_out),
			   (long long)atomic64_read(&ring->busy_ns));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rings);

static int queues_show(struct seq_file *m, void *unused)
{
	static const char * const prio[] = { "normal", "low", "high" };
	struct mxaccel_device *mdev = m->private;
	struct mxaccel_queue *q;

	seq_puts(m, "queue  pid     ring  priority  state    last_seqno  unfinished\n");
	/* ring: where the queue's entity is now (it moves when idle). */
	mutex_lock(&mdev->queues_lock);
	list_for_each_entry(q, &mdev->queues, link) {
		u64 last;
		unsigned int in_flight;

		spin_lock(&q->status_lock);
		last = q->last_seqno;
		in_flight = q->unfinished;
		spin_unlock(&q->status_lock);
		seq_printf(m, "%5u  %-6d  %4u  %-8s  %-7s  %10llu  %10u\n",
			   q->serial, q->pid,
			   to_mxaccel_ring(READ_ONCE(q->entity.rq)->sched)->index,
			   prio[q->priority],
			   mxaccel_queue_dying(q) ? "dying" :
			   atomic_read(&q->guilty) ? "guilty" : "ok",
			   last, in_flight);
	}
	mutex_unlock(&mdev->queues_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(queues);

void mxaccel_debugfs_init(struct mxaccel_device *mdev)
{
	char name[16];

	if (!mxaccel_debugfs_root)
		mxaccel_debugfs_root = debugfs_create_dir("mxaccel", NULL);
	snprintf(name, sizeof(name), "%u", mdev->index);
	mdev->debugfs = debugfs_create_dir(name, mxaccel_debugfs_root);
	debugfs_create_file("rings", 0444, mdev->debugfs, mdev, &rings_fops);
	debugfs_create_file("queues", 0444, mdev->debugfs, mdev, &queues_fops);
}

void mxaccel_debugfs_fini(struct mxaccel_device *mdev)
{
	debugfs_remove_recursive(mdev->debugfs);
	mdev->debugfs = NULL;
}

void mxaccel_debugfs_module_fini(void)
{
	debugfs_remove_recursive(mxaccel_debugfs_root);
	mxaccel_debugfs_root = NULL;
}
