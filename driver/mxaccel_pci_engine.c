// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI engine: jobs run on an MX PCI device (hw/mxaccel_pci.h).
 *
 * Each device ring is one engine ring and one scheduler; the ring runs
 * one job at a time (the scheduler's credit limit is one job), whose ops
 * are consecutive descriptors in the ring's submission queue.  The device
 * posts one completion record per job and raises the ring's vector; the
 * threaded handler checks the record (its check word, and that it names
 * the job on the ring) and completes the job.  A record that fails the
 * check is never trusted: the job fails with -EIO and the ring is reset.
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

static int pci_job_init(struct mxaccel_engine *engine, struct mxaccel_job *job)
{
	struct mxhw_desc *desc;
	u32 i;

	desc = kvcalloc(job->op_count, sizeof(*desc), GFP_KERNEL_ACCOUNT);
	if (!desc)
		return -ENOMEM;
	for (i = 0; i < job->op_count; i++) {
		const struct drm_mxaccel_op *op = &job->ops[i];
		struct mxhw_desc *d = &desc[i];
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
	job->engine_priv = desc;
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

/* Give the ring's job to the device, under the ring's lock. */
static void ring_submit(struct mxaccel_pci_ring *pr)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	struct mxaccel_job *job = pr->job;
	struct mxhw_desc *desc = job->engine_priv;
	u32 i, mask = pe->depth - 1;

	lockdep_assert_held(&pr->lock);
	for (i = 0; i < job->op_count; i++) {
		void __iomem *slot = pr->sq + ((pr->sq_tail + i) & mask) *
					      pe->desc_size;

		desc[i].seq = cpu_to_le64(pr->seq);
		memcpy_toio(slot, &desc[i], sizeof(desc[i]));
		if (pe->desc_size > sizeof(desc[i]))
			memset_io(slot + sizeof(desc[i]), 0,
				  pe->desc_size - sizeof(desc[i]));
	}
	pr->sq_tail += job->op_count;
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

	spin_lock(&pr->lock);
	if (pci_lost(pe)) {
		spin_unlock(&pr->lock);
		mxaccel_job_complete(job, -ENODEV);
		return;
	}
	pr->job = job;
	/* An abort_seq of 0 means none: no job's seq ends in 32 zero bits. */
	pr->seq = ++pr->next_seq;
	if (!lower_32_bits(pr->seq))
		pr->seq = ++pr->next_seq;
	/*
	 * The timeout kselftests' hook: the job waits in the driver until
	 * test_hang goes back to 0 (the fallback timer looks) or it is
	 * aborted.
	 */
	if (READ_ONCE(mxaccel_test_hang))
		pr->held = true;
	else
		ring_submit(pr);
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

/*
 * Take the job's completion record if the device has posted it.  Returns
 * the job (and its status) for the caller to complete outside the lock.
 */
static struct mxaccel_job *ring_reap(struct mxaccel_pci_ring *pr, int *status)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	struct mxaccel_job *job = NULL;
	struct mxhw_cpl cpl;
	u32 tail, ops, check;
	u64 seq, ns;
	s32 st;

	spin_lock(&pr->lock);
	if (!pr->job || pr->held || pr->broken || pci_lost(pe))
		goto out;
	tail = readl(ring_reg(pr, cq_tail));
	if (tail == pr->cq_head)
		goto out;
	/* The record after the index that says it is there. */
	rmb();
	memcpy_fromio(&cpl, pr->cq + (pr->cq_head & (pe->depth - 1)) *
				    pe->cpl_size, sizeof(cpl));
	seq = le64_to_cpu(cpl.seq);
	st = (s32)le32_to_cpu(cpl.status);
	ops = le32_to_cpu(cpl.ops_done);
	ns = le64_to_cpu(cpl.device_ns);
	check = mxhw_cpl_check(seq, (u32)st, ops, ns);
	if (tail - pr->cq_head != 1 || le32_to_cpu(cpl.check) != check ||
	    seq != pr->seq || ops > pr->job->op_count ||
	    (!st && ops != pr->job->op_count)) {
		drm_err_ratelimited(&pe->base.mdev->drm,
				    "%s: ring %u: bad completion record (%u records, seq %llu for %llu, check %s), resetting the ring\n",
				    pe->name, pr->index, tail - pr->cq_head,
				    seq, pr->seq,
				    le32_to_cpu(cpl.check) == check ? "ok" : "bad");
		atomic64_inc(&pr->bad_records);
		pr->broken = true;
		queue_work(system_unbound_wq, &pr->recover_work);
		goto out;
	}
	pr->cq_head++;
	writel(pr->cq_head, ring_reg(pr, cq_head));
	job = pr->job;
	pr->job = NULL;
	atomic64_inc(&pr->completions);
	atomic64_add(ns, &pr->device_ns);
	*status = cpl_status(pe, pr, st);
out:
	spin_unlock(&pr->lock);
	return job;
}

/* True if a job was completed. */
static bool ring_process(struct mxaccel_pci_ring *pr)
{
	struct mxaccel_job *job;
	int status;

	job = ring_reap(pr, &status);
	if (job)
		mxaccel_job_complete(job, status);
	return job;
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

		if (READ_ONCE(pr->held) && !READ_ONCE(mxaccel_test_hang)) {
			spin_lock(&pr->lock);
			if (pr->held && !pci_lost(pe)) {
				pr->held = false;
				ring_submit(pr);
			}
			spin_unlock(&pr->lock);
		}
		if (ring_process(pr)) {
			atomic64_inc(&pr->polled);
			drm_dbg_driver(&pe->base.mdev->drm,
				       "%s: ring %u: completion found without its interrupt\n",
				       pe->name, i);
		}
		busy |= READ_ONCE(pr->job) != NULL;
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
	atomic64_inc(&pr->resets);
	if (!wait_device(pe, readl(ring_reg(pr, reset_ack)) == gen,
			 PCI_HANDSHAKE_MS)) {
		drm_err(&pe->base.mdev->drm,
			"%s: ring %u: no answer to reset in %u ms\n", pe->name,
			pr->index, PCI_HANDSHAKE_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Reset a ring and end its job (with err, unless its abort decided). */
static void ring_recover(struct mxaccel_pci_ring *pr, int err)
{
	struct mxaccel_pci_engine *pe = pr->pe;
	struct mxaccel_job *job;
	bool held;
	int ret;

	mutex_lock(&pe->ctrl_lock);
	spin_lock(&pr->lock);
	job = pr->job;
	held = pr->held;
	/* No more reaping until the device has forgotten the ring. */
	pr->broken = true;
	spin_unlock(&pr->lock);

	ret = job && !held ? ring_reset(pr) : 0;

	spin_lock(&pr->lock);
	/* The job may have completed while the reset was asked for. */
	job = pr->job;
	pr->job = NULL;
	pr->held = false;
	pr->broken = false;
	pr->sq_tail = 0;
	pr->cq_head = 0;
	spin_unlock(&pr->lock);
	mutex_unlock(&pe->ctrl_lock);

	if (job)
		mxaccel_job_complete(job, ret ? -ENODEV : err);
	if (ret)
		queue_work(system_unbound_wq, &pe->lost_work);
}

static void recover_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_ring *pr = container_of(work, typeof(*pr),
						   recover_work);
	struct mxaccel_job *job;

	spin_lock(&pr->lock);
	job = pr->job;
	/* The job's status is -EIO, unless a timeout or abort came first. */
	if (job)
		mxaccel_job_abort(job, -EIO);
	spin_unlock(&pr->lock);
	ring_recover(pr, -EIO);
}

/* test_hang: the held job ends when it is aborted. */
static void release_held_work_fn(struct work_struct *work)
{
	struct mxaccel_pci_ring *pr = container_of(work, typeof(*pr),
						   release_held_work);
	struct mxaccel_job *job = NULL;

	spin_lock(&pr->lock);
	if (pr->held) {
		job = pr->job;
		pr->job = NULL;
		pr->held = false;
	}
	spin_unlock(&pr->lock);
	if (job)
		mxaccel_job_complete(job, -ECANCELED);
}

/* Called under the ring's lock (mxaccel_ring.c): only registers. */
static void pci_abort(struct mxaccel_engine *engine, unsigned int ring,
		      struct mxaccel_job *job, int err)
{
	struct mxaccel_pci_engine *pe = to_pci_engine(engine);
	struct mxaccel_pci_ring *pr = &pe->rings[ring];

	spin_lock(&pr->lock);
	if (pr->job == job) {
		if (pr->held) {
			queue_work(system_unbound_wq, &pr->release_held_work);
		} else if (!pci_lost(pe)) {
			writel(lower_32_bits(pr->seq), ring_reg(pr, abort_seq));
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
		struct mxaccel_job *job;

		spin_lock(&pr->lock);
		job = pr->job;
		pr->job = NULL;
		pr->held = false;
		spin_unlock(&pr->lock);
		if (job) {
			mxaccel_job_abort(job, -ENODEV);
			mxaccel_job_complete(job, -ENODEV);
		}
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
	.bo_map = pci_bo_map,
	.bo_unmap = pci_bo_unmap,
	.destroy = pci_destroy,
};

struct mxaccel_pci_engine *mxaccel_pci_engine_create(struct mxaccel_device *mdev,
						     struct pci_dev *pdev,
						     void __iomem *regs,
						     void __iomem *mem)
{
	const struct mxhw_header __iomem *hdr = mem;
	struct mxaccel_pci_engine *pe;
	u64 ring_offset, ring_stride, heap_offset, heap_size;
	unsigned int i, n_rings;

	n_rings = readl(&hdr->n_rings);
	pe = kzalloc(struct_size(pe, rings, n_rings), GFP_KERNEL);
	if (!pe)
		return ERR_PTR(-ENOMEM);
	pe->base.ops = &pci_engine_ops;
	pe->base.mdev = mdev;
	pe->base.n_rings = n_rings;
	pe->pdev = pdev;
	pe->regs = regs;
	pe->mem = mem;
	pe->peer = readl(&hdr->device_peer);
	pe->depth = readl(&hdr->ring_depth);
	pe->desc_size = readl(&hdr->desc_size);
	pe->cpl_size = readl(&hdr->cpl_size);
	pe->ctrl = mem + readq(&hdr->ctrl_offset);
	memcpy_fromio(pe->name, hdr->name, sizeof(pe->name) - 1);
	ring_offset = readq(&hdr->ring_offset);
	ring_stride = readq(&hdr->ring_stride);
	heap_offset = readq(&hdr->heap_offset);
	heap_size = readq(&hdr->heap_size);

	pe->base.limits = (struct mxaccel_engine_limits) {
		.elem_mask = readq(&hdr->elem_mask),
		.op_mask = readq(&hdr->op_mask),
		.mode_mask = readq(&hdr->mode_mask),
		.max_dim = min_t(u32, readl(&hdr->max_dim), MXACCEL_MAX_DIM),
		/* One job on a ring at a time: it must fit the ring. */
		.max_ops = min_t(u32, pe->depth, MXACCEL_MAX_OPS),
		.max_bo_size = heap_size,
		.offset_align = readl(&hdr->offset_align),
	};
	mutex_init(&pe->ctrl_lock);
	init_waitqueue_head(&pe->ctrl_wq);
	INIT_WORK(&pe->lost_work, lost_work_fn);
	INIT_WORK(&pe->poll_work, poll_work_fn);
	timer_setup(&pe->poll_timer, poll_timer_fn, 0);
	/* A fresh generation per bind: a reloaded driver's hello is new. */
	pe->drv_gen = readl(ctrl_reg(pe, dev_gen));

	for (i = 0; i < n_rings; i++) {
		struct mxaccel_pci_ring *pr = &pe->rings[i];

		pr->pe = pe;
		pr->index = i;
		pr->regs = mem + ring_offset + i * ring_stride;
		pr->sq = pr->regs + MXHW_RING_SQ_OFFSET;
		pr->cq = pr->regs + mxhw_ring_cq_offset(pe->depth,
							pe->desc_size);
		spin_lock_init(&pr->lock);
		INIT_WORK(&pr->recover_work, recover_work_fn);
		INIT_WORK(&pr->release_held_work, release_held_work_fn);
	}
	mdev->vram = mxaccel_vram_create(heap_size, heap_offset,
					 pci_resource_start(pdev, MXHW_BAR_MEM) +
					 heap_offset, mem + heap_offset);
	if (IS_ERR(mdev->vram)) {
		long err = PTR_ERR(mdev->vram);

		mdev->vram = NULL;
		kfree(pe);
		return ERR_PTR(err);
	}
	return pe;
}
