// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI engine: jobs run on an MX PCI device (hw/mxaccel_pci.h).
 *
 * Each device ring is one engine ring and one scheduler.  A job's ops are
 * consecutive descriptors in the ring's submission queue; a job has at
 * most a quarter of the ring's descriptors (max_ops) and the scheduler
 * starts at most depth / max_ops jobs on the ring (ring_jobs), so they
 * are all on the device at once and always fit.  The device runs them in
 * order and posts one completion record per job; the threaded handler
 * checks each record (its check word, and that it names the oldest job
 * on the device) and completes the jobs in order.  A record that fails
 * the check is never trusted: its job fails with -EIO, the ring is reset
 * and the ring's other jobs are given to the device again.
 * A fallback timer rescans the completion queues while jobs are on the
 * device, so a lost interrupt delays a completion and never loses it.
 *
 * Abort writes the job's seq to the ring's abort register; a device that
 * does not stop is reset (ring reset handshake, only that ring).  A
 * device that does not answer a handshake, or reports itself lost, is
 * lost: every job ends with -ENODEV and the DRM device is unplugged.
 *
 * The device cannot reach system memory: every operand must be a
 * device-memory buffer object (mxaccel_vram.c), else SUBMIT fails with
 * -EINVAL (bo_map).  Descriptors are built at SUBMIT (job_init), so run()
 * only copies them to the ring.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "mxaccel_drv.h"
#include "mxaccel_gem.h"
#include "mxaccel_job.h"
#include "mxaccel_params.h"
#include "mxaccel_pci_engine.h"
#include "mxaccel_vram.h"

/* How long the device may take to acknowledge a handshake. */
#define PCI_HANDSHAKE_MS	2000
/* Removal: the device may already be unreachable. */
#define PCI_GOODBYE_MS		200
/* The fallback rescan of the completion queues. */
#define PCI_POLL_MS		50

#define ring_reg(pr, field) \
	((pr)->regs + offsetof(struct mxhw_ring_regs, field))
#define ctrl_reg(pe, field) \
	((pe)->ctrl + offsetof(struct mxhw_ctrl, field))

static void ring_doorbell(struct mxaccel_pci_engine *pe, unsigned int db)
{
	writel(MXHW_DOORBELL(pe->peer, db), pe->regs + MXHW_REG_DOORBELL);
}

static bool pci_lost(struct mxaccel_pci_engine *pe)
{
	return atomic_read(&pe->lost);
}

static u64 bo_addr(struct mxaccel_job *job, u32 op, enum mxaccel_opnd which,
		   u64 offset)
{
	const struct mxaccel_span *sp = &job->spans[op][which];

	return sp->used ? mxaccel_vram_bo_addr(job->bos[sp->bo].bo) + offset :
	       0;
}

static void fill_mx(struct mxhw_mx_operand *d,
		    const struct drm_mxaccel_mx_operand *mx,
		    struct mxaccel_job *job, u32 op, enum mxaccel_opnd data)
{
	d->data_addr = cpu_to_le64(bo_addr(job, op, data, mx->data_offset));
	d->data_stride = cpu_to_le64(mx->data_stride);
	d->scale_addr = cpu_to_le64(bo_addr(job, op, data + 1,
					    mx->scale_offset));
	d->scale_stride = cpu_to_le64(mx->scale_stride);
	d->elem = cpu_to_le32(mx->elem);
	d->scale_layout = cpu_to_le32(mx->scale_layout);
}

/* A job's state in the engine, built at SUBMIT. */
struct pci_job {
	struct mxaccel_job *job;
	struct list_head link;		/* on its ring's jobs, oldest first */
	u64 seq;
	bool held;			/* test_hang: not given to the device */
	int status;			/* from its completion record */
	struct mxhw_desc desc[];
};

static int pci_job_init(struct mxaccel_engine *engine, struct mxaccel_job *job)
{
	struct pci_job *pj;
	u32 i;

	pj = kvzalloc(struct_size(pj, desc, job->op_count), GFP_KERNEL_ACCOUNT);
	if (!pj)
		return -ENOMEM;
	pj->job = job;
	INIT_LIST_HEAD(&pj->link);
	for (i = 0; i < job->op_count; i++) {
		const struct drm_mxaccel_op *op = &job->ops[i];
		struct mxhw_desc *d = &pj->desc[i];
		u32 flags = 0;

		if (op->flags & DRM_MXACCEL_OP_ACCUMULATE)
			flags |= MXHW_DESC_ACCUMULATE;
		if (op->flags & DRM_MXACCEL_OP_EXACT)
			flags |= MXHW_DESC_EXACT;
		d->kind = cpu_to_le32(op->kind);
		d->flags = cpu_to_le32(flags);
		d->m = cpu_to_le32(op->m);
		d->n = cpu_to_le32(op->n);
		d->k = cpu_to_le32(op->k);
		d->scale_mode = cpu_to_le32(op->scale_mode);
		d->op_index = cpu_to_le32(i);
		d->op_count = cpu_to_le32(job->op_count);
		fill_mx(&d->a, &op->a, job, i, MXACCEL_OPND_A_DATA);
		if (op->kind == DRM_MXACCEL_OP_GEMM)
			fill_mx(&d->b, &op->b, job, i, MXACCEL_OPND_B_DATA);
		d->c.addr = cpu_to_le64(bo_addr(job, i, MXACCEL_OPND_C,
						op->c.offset));
		d->c.stride = cpu_to_le64(op->c.stride);
		d->c.dtype = cpu_to_le32(op->c.dtype);
	}
	job->engine_priv = pj;
	return 0;
}

static void pci_job_fini(struct mxaccel_engine *engine, struct mxaccel_job *job)
{
	kvfree(job->engine_priv);
	job->engine_priv = NULL;
}

static void arm_poll(struct mxaccel_pci_engine *pe)
{
	mod_timer(&pe->poll_timer, jiffies + msecs_to_jiffies(PCI_POLL_MS));
}

/*
 * Give a job to the device at the ring's tail, under the ring's lock.
 * The scheduler starts at most ring_jobs jobs of at most max_ops ops on
 * a ring, ring_jobs * max_ops <= depth: the descriptors always fit.
 */
static void ring_submit(struct mxaccel_pci_ring *pr, struct pci_job *pj)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	u32 i, n = pj->job->op_count, mask = pe->depth - 1;

	lockdep_assert_held(&pr->lock);
	pj->held = false;
	for (i = 0; i < n; i++) {
		void __iomem *slot = pr->sq + ((pr->sq_tail + i) & mask) *
					      pe->desc_size;

		pj->desc[i].seq = cpu_to_le64(pj->seq);
		memcpy_toio(slot, &pj->desc[i], sizeof(pj->desc[i]));
		if (pe->desc_size > sizeof(pj->desc[i]))
			memset_io(slot + sizeof(pj->desc[i]), 0,
				  pe->desc_size - sizeof(pj->desc[i]));
	}
	pr->sq_tail += n;
	/* Descriptors before the tail, the tail before the doorbell. */
	wmb();
	writel(pr->sq_tail, ring_reg(pr, sq_tail));
	ring_doorbell(pe, MXHW_DB_RING(pr->index));
}

static void pci_run(struct mxaccel_engine *engine, unsigned int ring,
		    struct mxaccel_job *job)
{
	struct mxaccel_pci_engine *pe = to_pci_engine(engine);
	struct mxaccel_pci_ring *pr = &pe->rings[ring];
	struct pci_job *pj = job->engine_priv;

	spin_lock(&pr->lock);
	if (pci_lost(pe)) {
		spin_unlock(&pr->lock);
		mxaccel_job_complete(job, -ENODEV);
		return;
	}
	/* An abort_seq of 0 means none: no job's seq ends in 32 zero bits. */
	pj->seq = ++pr->next_seq;
	if (!lower_32_bits(pj->seq))
		pj->seq = ++pr->next_seq;
	list_add_tail(&pj->link, &pr->jobs);
	pr->n_jobs++;
	/*
	 * The timeout kselftests' hook: jobs wait in the driver, in order,
	 * until test_hang goes back to 0 (the fallback timer looks) or they
	 * are aborted.
	 */
	if (READ_ONCE(mxaccel_test_hang) || pr->n_held) {
		pj->held = true;
		pr->n_held++;
	} else {
		ring_submit(pr, pj);
	}
	spin_unlock(&pr->lock);
	arm_poll(pe);
}

static int cpl_status(struct mxaccel_pci_engine *pe, struct mxaccel_pci_ring *pr,
		      s32 status)
{
	if (!status)
		return 0;
	/* Stopped by an abort: the abort's error is the job's. */
	if (status == -ECANCELED)
		return -ECANCELED;
	drm_err_ratelimited(&pe->base.mdev->drm,
			    "%s: ring %u: job failed on the device: %d\n",
			    pe->name, pr->index, status);
	/* The driver validated the job: any failure is the device's. */
	return -EIO;
}

/* The oldest job the device has, or NULL (held jobs are last). */
static struct pci_job *oldest_submitted(struct mxaccel_pci_ring *pr)
{
	struct pci_job *pj = list_first_entry_or_null(&pr->jobs,
						      struct pci_job, link);

	return pj && !pj->held ? pj : NULL;
}

/*
 * Take the completion records the device has posted, each of which must
 * be that of the oldest job on the device, onto done (for the caller to
 * complete outside the lock).  A record that is not is never trusted:
 * the ring is reset (recover_work).
 */
static void ring_reap(struct mxaccel_pci_ring *pr, struct list_head *done)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	u32 tail, head, ops, check;
	struct pci_job *pj;
	struct mxhw_cpl cpl;
	u64 seq, ns;
	s32 st;

	spin_lock(&pr->lock);
	if (!pr->n_jobs || pr->broken || pci_lost(pe))
		goto out;
	head = pr->cq_head;
	tail = readl(ring_reg(pr, cq_tail));
	/* Records after the index that says they are there. */
	rmb();
	while (pr->cq_head != tail) {
		pj = oldest_submitted(pr);
		memcpy_fromio(&cpl, pr->cq + (pr->cq_head & (pe->depth - 1)) *
					    pe->cpl_size, sizeof(cpl));
		seq = le64_to_cpu(cpl.seq);
		st = (s32)le32_to_cpu(cpl.status);
		ops = le32_to_cpu(cpl.ops_done);
		ns = le64_to_cpu(cpl.device_ns);
		check = mxhw_cpl_check(seq, (u32)st, ops, ns);
		if (!pj || le32_to_cpu(cpl.check) != check || seq != pj->seq ||
		    ops > pj->job->op_count ||
		    (!st && ops != pj->job->op_count)) {
			drm_err_ratelimited(&pe->base.mdev->drm,
					    "%s: ring %u: bad completion record (seq %llu for %llu, check %s), resetting the ring\n",
					    pe->name, pr->index, seq,
					    pj ? pj->seq : 0,
					    le32_to_cpu(cpl.check) == check ?
					    "ok" : "bad");
			pr->broken = true;
			queue_work(system_unbound_wq, &pr->recover_work);
			break;
		}
		pr->cq_head++;
		pj->status = cpl_status(pe, pr, st);
		list_move_tail(&pj->link, done);
		pr->n_jobs--;
	}
	if (pr->cq_head != head)
		writel(pr->cq_head, ring_reg(pr, cq_head));
out:
	spin_unlock(&pr->lock);
}

/* End the jobs on done, oldest first, each with its status. */
static unsigned int complete_jobs(struct list_head *done)
{
	struct pci_job *pj, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(pj, tmp, done, link) {
		list_del_init(&pj->link);
		/* May free the job, and pj with it. */
		mxaccel_job_complete(pj->job, pj->status);
		n++;
	}
	return n;
}

/* How many jobs were completed. */
static unsigned int ring_process(struct mxaccel_pci_ring *pr)
{
	LIST_HEAD(done);

	ring_reap(pr, &done);
	return complete_jobs(&done);
}

/* SUBMIT_WAIT's polling: the ring's records, ahead of the interrupt. */
static void pci_poll(struct mxaccel_engine *engine, unsigned int ring)
{
	ring_process(&to_pci_engine(engine)->rings[ring]);
}

irqreturn_t mxaccel_pci_ring_irq(int irq, void *data)
{
	ring_process(data);
	return IRQ_HANDLED;
}

static void check_lost(struct mxaccel_pci_engine *pe)
{
	if (!pci_lost(pe) &&
	    readl(ctrl_reg(pe, dev_status)) == MXHW_STATUS_LOST)
		queue_work(system_unbound_wq, &pe->lost_work);
}

irqreturn_t mxaccel_pci_ctrl_irq(int irq, void *data)
{
	struct mxaccel_pci_engine *pe = data;
	unsigned int i;

	wake_up_all(&pe->ctrl_wq);
	if (pci_lost(pe))
		return IRQ_HANDLED;
	check_lost(pe);
	/* Too few vectors: the rings' completions are ours to find. */
	if (pe->n_vectors < 1 + pe->base.n_rings)
		for (i = 0; i < pe->base.n_rings; i++)
			ring_process(&pe->rings[i]);
	return IRQ_HANDLED;
}

static void poll_timer_fn(struct timer_list *t)
{
	struct mxaccel_pci_engine *pe = from_timer(pe, t, poll_timer);

	queue_work(system_unbound_wq, &pe->poll_work);
}

static void poll_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_engine *pe = container_of(work, typeof(*pe),
						     poll_work);
	bool busy = false;
	unsigned int i;

	if (pci_lost(pe))
		return;
	check_lost(pe);
	for (i = 0; i < pe->base.n_rings; i++) {
		struct mxaccel_pci_ring *pr = &pe->rings[i];

		if (READ_ONCE(pr->n_held) && !READ_ONCE(mxaccel_test_hang)) {
			struct pci_job *pj;

			spin_lock(&pr->lock);
			if (!pci_lost(pe) && !pr->broken) {
				list_for_each_entry(pj, &pr->jobs, link)
					if (pj->held)
						ring_submit(pr, pj);
				pr->n_held = 0;
			}
			spin_unlock(&pr->lock);
		}
		if (ring_process(pr))
			drm_dbg_driver(&pe->base.mdev->drm,
				       "%s: ring %u: completion found without its interrupt\n",
				       pe->name, i);
		busy |= READ_ONCE(pr->n_jobs) != 0;
	}
	if (busy)
		arm_poll(pe);
}

/*
 * Wait until cond holds, the device is lost or ms pass; rechecked every
 * 10 ms, as the interrupt that should wake us may not come.
 */
#define wait_device(pe, cond, ms) ({					\
	unsigned long __end = jiffies + msecs_to_jiffies(ms);		\
	bool __ok;							\
	while (!(__ok = (cond)) && !pci_lost(pe) &&			\
	       time_before(jiffies, __end))				\
		wait_event_timeout((pe)->ctrl_wq, (cond) || pci_lost(pe), \
				   msecs_to_jiffies(10));		\
	__ok;								\
})

static int ctrl_command(struct mxaccel_pci_engine *pe, u32 cmd, u32 status,
			unsigned int ms)
{
	u32 gen;

	lockdep_assert_held(&pe->ctrl_lock);
	gen = ++pe->drv_gen ? pe->drv_gen : ++pe->drv_gen;
	/* The command, then the generation that makes it new. */
	writel(cmd, ctrl_reg(pe, drv_cmd));
	/* A device that sees the new generation sees the command too. */
	wmb();
	writel(gen, ctrl_reg(pe, drv_gen));
	ring_doorbell(pe, MXHW_DB_CONTROL);
	if (!wait_device(pe, readl(ctrl_reg(pe, dev_gen)) == gen &&
			 readl(ctrl_reg(pe, dev_status)) == status, ms))
		return -ETIMEDOUT;
	return 0;
}

int mxaccel_pci_engine_hello(struct mxaccel_pci_engine *pe)
{
	unsigned int i;
	int ret;

	mutex_lock(&pe->ctrl_lock);
	/* The device empties every ring: so does the driver. */
	for (i = 0; i < pe->base.n_rings; i++) {
		struct mxaccel_pci_ring *pr = &pe->rings[i];

		pr->sq_tail = 0;
		pr->cq_head = 0;
		writel(0, ring_reg(pr, sq_tail));
		writel(0, ring_reg(pr, cq_head));
		writel(0, ring_reg(pr, abort_seq));
		writel(0, ring_reg(pr, irq_off));
		pr->reset_gen = readl(ring_reg(pr, reset_ack));
		writel(pr->reset_gen, ring_reg(pr, reset_req));
	}
	ret = ctrl_command(pe, MXHW_CMD_HELLO, MXHW_STATUS_READY,
			   PCI_HANDSHAKE_MS);
	mutex_unlock(&pe->ctrl_lock);
	if (ret)
		drm_err(&pe->base.mdev->drm,
			"%s: no answer to hello in %u ms\n", pe->name,
			PCI_HANDSHAKE_MS);
	return ret;
}

/* Ring reset handshake; the ring's job (if any) is the caller's. */
static int ring_reset(struct mxaccel_pci_ring *pr)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	u32 gen;

	lockdep_assert_held(&pe->ctrl_lock);
	if (pci_lost(pe))
		return -ENODEV;
	writel(0, ring_reg(pr, sq_tail));
	writel(0, ring_reg(pr, cq_head));
	writel(0, ring_reg(pr, abort_seq));
	gen = ++pr->reset_gen ? pr->reset_gen : ++pr->reset_gen;
	/* The zeroed indices before the request that makes them count. */
	wmb();
	writel(gen, ring_reg(pr, reset_req));
	ring_doorbell(pe, MXHW_DB_CONTROL);
	if (!wait_device(pe, readl(ring_reg(pr, reset_ack)) == gen,
			 PCI_HANDSHAKE_MS)) {
		drm_err(&pe->base.mdev->drm,
			"%s: ring %u: no answer to reset in %u ms\n", pe->name,
			pr->index, PCI_HANDSHAKE_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * Reset a ring: its oldest job on the device (the one that hung or whose
 * record was bad) ends with err (unless its abort decided), so do jobs
 * that were aborted; the others are given to the device again, in order.
 * A reset the device does not answer loses the device.
 */
static void ring_recover(struct mxaccel_pci_ring *pr, int err)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	struct pci_job *pj, *tmp;
	LIST_HEAD(done);
	bool first = true;
	int ret;

	mutex_lock(&pe->ctrl_lock);
	spin_lock(&pr->lock);
	/* No more reaping until the device has forgotten the ring. */
	pr->broken = true;
	pj = oldest_submitted(pr);
	spin_unlock(&pr->lock);

	ret = pj ? ring_reset(pr) : 0;

	spin_lock(&pr->lock);
	pr->sq_tail = 0;
	pr->cq_head = 0;
	list_for_each_entry_safe(pj, tmp, &pr->jobs, link) {
		if (pj->held)
			continue;
		if (ret || first || mxaccel_job_should_stop(pj->job)) {
			pj->status = ret ? -ENODEV : err;
			list_move_tail(&pj->link, &done);
			pr->n_jobs--;
		} else {
			ring_submit(pr, pj);
		}
		first = false;
	}
	pr->broken = false;
	spin_unlock(&pr->lock);
	mutex_unlock(&pe->ctrl_lock);

	complete_jobs(&done);
	if (ret)
		queue_work(system_unbound_wq, &pe->lost_work);
}

static void recover_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_ring *pr = container_of(work, typeof(*pr),
						   recover_work);
	struct pci_job *pj;

	spin_lock(&pr->lock);
	pj = oldest_submitted(pr);
	/* The job's status is -EIO, unless a timeout or abort came first. */
	if (pj)
		mxaccel_job_abort(pj->job, -EIO);
	spin_unlock(&pr->lock);
	ring_recover(pr, -EIO);
}

/* test_hang: a held job ends when it is aborted. */
static void release_held_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_ring *pr = container_of(work, typeof(*pr),
						   release_held_work);
	struct pci_job *pj, *tmp;
	LIST_HEAD(done);

	spin_lock(&pr->lock);
	list_for_each_entry_safe(pj, tmp, &pr->jobs, link) {
		if (!pj->held || !mxaccel_job_should_stop(pj->job))
			continue;
		pj->status = -ECANCELED;
		list_move_tail(&pj->link, &done);
		pr->n_jobs--;
		pr->n_held--;
	}
	spin_unlock(&pr->lock);
	complete_jobs(&done);
}

/* Called under the scheduler ring's lock (mxaccel_ring.c): registers only. */
static void pci_abort(struct mxaccel_engine *engine, unsigned int ring,
		      struct mxaccel_job *job, int err)
{
	struct mxaccel_pci_engine *pe = to_pci_engine(engine);
	struct mxaccel_pci_ring *pr = &pe->rings[ring];
	struct pci_job *pj = job->engine_priv;

	spin_lock(&pr->lock);
	if (!list_empty(&pj->link)) {
		if (pj->held) {
			queue_work(system_unbound_wq, &pr->release_held_work);
		} else if (!pci_lost(pe)) {
			writel(lower_32_bits(pj->seq), ring_reg(pr, abort_seq));
			ring_doorbell(pe, MXHW_DB_RING(ring));
		}
	}
	spin_unlock(&pr->lock);
}

static void pci_reset(struct mxaccel_engine *engine, unsigned int ring)
{
	struct mxaccel_pci_engine *pe = to_pci_engine(engine);

	ring_recover(&pe->rings[ring], -EIO);
}

/* End every job on the device with -ENODEV; run() does so from now on. */
static void fail_all(struct mxaccel_pci_engine *pe)
{
	unsigned int i;

	for (i = 0; i < pe->base.n_rings; i++) {
		struct mxaccel_pci_ring *pr = &pe->rings[i];
		struct pci_job *pj;
		LIST_HEAD(done);

		spin_lock(&pr->lock);
		list_splice_init(&pr->jobs, &done);
		pr->n_jobs = 0;
		pr->n_held = 0;
		list_for_each_entry(pj, &done, link) {
			pj->status = -ENODEV;
			mxaccel_job_abort(pj->job, -ENODEV);
		}
		spin_unlock(&pr->lock);
		complete_jobs(&done);
	}
}

static void lost_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_engine *pe = container_of(work, typeof(*pe),
						     lost_work);

	if (atomic_xchg(&pe->lost, 1))
		return;
	drm_err(&pe->base.mdev->drm,
		"%s: device lost: its jobs fail with -ENODEV, and so will every ioctl\n",
		pe->name);
	wake_up_all(&pe->ctrl_wq);
	fail_all(pe);
	mxaccel_device_unplug(pe->base.mdev);
}

void mxaccel_pci_engine_shutdown(struct mxaccel_pci_engine *pe)
{
	unsigned int i;

	if (!pci_lost(pe)) {
		mutex_lock(&pe->ctrl_lock);
		/* Best effort: a device going away may not answer. */
		if (ctrl_command(pe, MXHW_CMD_GOODBYE, MXHW_STATUS_OFF,
				 PCI_GOODBYE_MS))
			drm_dbg_driver(&pe->base.mdev->drm,
				       "%s: no answer to goodbye\n", pe->name);
		mutex_unlock(&pe->ctrl_lock);
	}
	atomic_set(&pe->lost, 1);
	wake_up_all(&pe->ctrl_wq);
	del_timer_sync(&pe->poll_timer);
	cancel_work_sync(&pe->poll_work);
	cancel_work_sync(&pe->lost_work);
	for (i = 0; i < pe->base.n_rings; i++) {
		cancel_work_sync(&pe->rings[i].recover_work);
		cancel_work_sync(&pe->rings[i].release_held_work);
	}
	fail_all(pe);
}

static int pci_bo_map(struct mxaccel_engine *engine, struct mxaccel_bo *bo)
{
	if (!mxaccel_bo_is_vram(bo))
		return mxaccel_inval(&engine->mdev->drm, -EINVAL,
				     "submit: a buffer object in system memory: this device reads only its own memory (DRM_MXACCEL_BO_DEVICE)\n");
	return 0;
}

static void pci_bo_unmap(struct mxaccel_engine *engine, struct mxaccel_bo *bo)
{
}

static void pci_destroy(struct mxaccel_engine *engine)
{
	struct mxaccel_pci_engine *pe = to_pci_engine(engine);

	mxaccel_vram_destroy(engine->mdev->vram);
	engine->mdev->vram = NULL;
	mutex_destroy(&pe->ctrl_lock);
	kfree(pe);
}

static const struct mxaccel_engine_ops pci_engine_ops = {
	.name = "pci",
	.kind = DRM_MXACCEL_ENGINE_HARDWARE,
	.job_init = pci_job_init,
	.job_fini = pci_job_fini,
	.run = pci_run,
	.abort = pci_abort,
	.reset = pci_reset,
	.poll = pci_poll,
	.bo_map = pci_bo_map,
	.bo_unmap = pci_bo_unmap,
	.destroy = pci_destroy,
};

struct mxaccel_pci_engine *mxaccel_pci_engine_create(struct mxaccel_device *mdev,
						     struct pci_dev *pdev,
						     void __iomem *regs,
						     void __iomem *mem,
						     const struct mxaccel_pci_layout *lay)
{
	struct mxaccel_pci_engine *pe;
	unsigned int i;
	u32 max_ops;

	pe = kzalloc(struct_size(pe, rings, lay->n_rings), GFP_KERNEL);
	if (!pe)
		return ERR_PTR(-ENOMEM);
	pe->base.ops = &pci_engine_ops;
	pe->base.mdev = mdev;
	pe->base.n_rings = lay->n_rings;
	pe->pdev = pdev;
	pe->regs = regs;
	pe->mem = mem;
	pe->peer = lay->peer;
	pe->depth = lay->depth;
	pe->desc_size = lay->desc_size;
	pe->cpl_size = lay->cpl_size;
	pe->ctrl = mem + lay->ctrl;
	memcpy(pe->name, lay->name, sizeof(pe->name));

	/*
	 * A quarter of the ring per job, so that several are on the device
	 * at once and all their descriptors fit the ring.
	 */
	max_ops = max_t(u32, 1, min_t(u32, lay->depth / 4, MXACCEL_MAX_OPS));
	pe->base.limits = (struct mxaccel_engine_limits) {
		.elem_mask = lay->elem_mask,
		.op_mask = lay->op_mask,
		.mode_mask = lay->mode_mask,
		/* The device model has no NVFP4 (pci-device.rst). */
		.quantize_scale_types = BIT_ULL(DRM_MXACCEL_SCALE_TYPE_E8M0),
		.gemm_scale_types = BIT_ULL(DRM_MXACCEL_SCALE_TYPE_E8M0),
		.max_dim = min_t(u32, lay->max_dim, MXACCEL_MAX_DIM),
		.max_ops = max_ops,
		.ring_jobs = lay->depth / max_ops,
		.max_bo_size = lay->heap_size,
		.offset_align = lay->offset_align,
	};
	mutex_init(&pe->ctrl_lock);
	init_waitqueue_head(&pe->ctrl_wq);
	INIT_WORK(&pe->lost_work, lost_work_fn);
	INIT_WORK(&pe->poll_work, poll_work_fn);
	timer_setup(&pe->poll_timer, poll_timer_fn, 0);
	/* A fresh generation per bind: a reloaded driver's hello is new. */
	pe->drv_gen = readl(ctrl_reg(pe, dev_gen));

	for (i = 0; i < lay->n_rings; i++) {
		struct mxaccel_pci_ring *pr = &pe->rings[i];

		pr->pe = pe;
		pr->index = i;
		pr->regs = mem + lay->rings + i * lay->stride;
		pr->sq = pr->regs + MXHW_RING_SQ_OFFSET;
		pr->cq = pr->regs + mxhw_ring_cq_offset(pe->depth,
							pe->desc_size);
		spin_lock_init(&pr->lock);
		INIT_LIST_HEAD(&pr->jobs);
		INIT_WORK(&pr->recover_work, recover_work_fn);
		INIT_WORK(&pr->release_held_work, release_held_work_fn);
	}
	mdev->vram = mxaccel_vram_create(lay->heap_size, lay->heap,
					 pci_resource_start(pdev, MXHW_BAR_MEM) +
					 lay->heap, mem + lay->heap);
	if (IS_ERR(mdev->vram)) {
		long err = PTR_ERR(mdev->vram);

		mdev->vram = NULL;
		kfree(pe);
		return ERR_PTR(err);
	}
	return pe;
}
