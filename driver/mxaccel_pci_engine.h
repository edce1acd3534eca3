/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PCI engine: the engine interface over an MX PCI device's rings
 * (hw/mxaccel_pci.h, Documentation/pci-device.rst).  mxaccel_pci_drv.c
 * binds the device, checks its header and maps it; this file talks to it.
 */
#ifndef MXACCEL_PCI_ENGINE_H
#define MXACCEL_PCI_ENGINE_H

#include <linux/atomic.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "mxaccel_engine.h"
#include "mxaccel_pci.h"

struct pci_dev;

/* What the device's header states, read once and checked at probe. */
struct mxaccel_pci_layout {
	u32 peer, n_rings, depth, desc_size, cpl_size, max_dim, offset_align;
	u64 elem_mask, op_mask, mode_mask;
	u64 ctrl, rings, stride, heap, heap_size, test;	/* BAR2 offsets */
	char name[32];
};

struct mxaccel_pci_ring {
	struct mxaccel_pci_engine *pe;
	unsigned int index;
	void __iomem *regs;		/* struct mxhw_ring_regs */
	void __iomem *sq, *cq;

	spinlock_t lock;		/* everything below */
	/*
	 * The ring's started jobs (struct pci_job), oldest first: those
	 * given to the device, then those held (test_hang).
	 */
	struct list_head jobs;
	unsigned int n_jobs, n_held;
	u64 next_seq;			/* the device's names for jobs */
	u32 sq_tail, cq_head;		/* the driver's copies */
	u32 reset_gen;
	bool broken;			/* bad completion: a reset is due */
	struct work_struct recover_work;
	struct work_struct release_held_work;
};

struct mxaccel_pci_engine {
	struct mxaccel_engine base;
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0 */
	void __iomem *mem;		/* BAR2, write-combined */
	void __iomem *ctrl;		/* struct mxhw_ctrl in BAR2 */
	u32 peer;			/* the device's doorbell peer id */
	u32 depth, desc_size, cpl_size;
	u32 n_vectors;			/* MSI-X vectors the driver got */
	char name[32];

	/* Handshakes; ring resets and hello/goodbye one at a time. */
	struct mutex ctrl_lock;
	wait_queue_head_t ctrl_wq;
	u32 drv_gen;

	/* Set once: the device is gone (lost or removed); no BAR access. */
	atomic_t lost;
	struct work_struct lost_work;

	/* Rescans the completion queues while jobs are on the device. */
	struct timer_list poll_timer;
	struct work_struct poll_work;

	struct mxaccel_pci_ring rings[];
};

static inline struct mxaccel_pci_engine *
to_pci_engine(struct mxaccel_engine *engine)
{
	return container_of(engine, struct mxaccel_pci_engine, base);
}

/*
 * A PCI engine for a device with BAR2 mapped at mem and the checked
 * layout lay; sets up rings and limits from it.  No interrupt is
 * requested and the device is not touched yet.
 */
struct mxaccel_pci_engine *mxaccel_pci_engine_create(struct mxaccel_device *mdev,
						     struct pci_dev *pdev,
						     void __iomem *regs,
						     void __iomem *mem,
						     const struct mxaccel_pci_layout *lay);
/* Interrupt handlers (threaded): vector 0, and a ring's vector. */
irqreturn_t mxaccel_pci_ctrl_irq(int irq, void *data);
irqreturn_t mxaccel_pci_ring_irq(int irq, void *data);
/* Hello (device reset): 0, or -ETIMEDOUT when the device did not answer. */
int mxaccel_pci_engine_hello(struct mxaccel_pci_engine *pe);
/*
 * The device is going (removal): stop talking to it, end every job on it
 * with -ENODEV; later jobs end with -ENODEV at once.  Interrupts must be
 * freed by the caller first.
 */
void mxaccel_pci_engine_shutdown(struct mxaccel_pci_engine *pe);

#endif /* MXACCEL_PCI_ENGINE_H */
