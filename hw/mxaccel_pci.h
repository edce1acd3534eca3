/* SPDX-License-Identifier: MIT */
/*
 * The MX accelerator PCI device interface, version 1.
 *
 * What a device that executes mxaccel jobs presents on PCI, and what the
 * driver (driver/mxaccel_pci*.c) and the device model
 * (tools/devmodel/) both build on.  Documentation/pci-device.rst is the
 * specification in prose; this header is its normative layout.  Every
 * multi-byte field is little-endian.  Offsets are bytes from the start of
 * BAR2 unless said otherwise.
 *
 * Transport (version 1): qemu's ivshmem-doorbell PCI function
 * (1af4:1110) whose BAR2 starts with the header below.  BAR0 holds the
 * ivshmem registers (32-bit accesses only), BAR1 the MSI-X table, BAR2
 * the device's memory: header, control block, rings and the heap in which
 * every operand lives.  The device cannot reach host memory (no DMA):
 * operands, descriptors and completion records are all in BAR2.  A device
 * with its own PCI IDs presents the same BAR2 layout.
 */
#ifndef MXACCEL_PCI_H
#define MXACCEL_PCI_H

#include <linux/types.h>

#define MXHW_PCI_VENDOR_ID	0x1af4	/* Red Hat, Inc. (ivshmem) */
#define MXHW_PCI_DEVICE_ID	0x1110	/* Inter-VM shared memory */

#define MXHW_BAR_REGS		0
#define MXHW_BAR_MEM		2

/* BAR0 registers of the ivshmem transport. */
#define MXHW_REG_IVPOSITION	0x08	/* ro: the driver's own peer id */
#define MXHW_REG_DOORBELL	0x0c	/* wo: (peer << 16) | doorbell */
#define MXHW_DOORBELL(peer, db)	(((__u32)(peer) << 16) | ((db) & 0xff))

/* "MXHW" read as a little-endian __u32 */
#define MXHW_MAGIC		0x5748584dU
#define MXHW_VERSION_MAJOR	1
#define MXHW_VERSION_MINOR	0

/* BAR2 is a power of two of at least this many bytes. */
#define MXHW_MIN_BAR_SIZE	(1U << 20)

/*
 * Doorbells the device listens on (the second half of a doorbell write)
 * and interrupt vectors it raises (MSI-X vector numbers).  Ring r has its
 * own doorbell and vector; the control ones carry the handshakes.  A
 * driver given fewer than n_irqs vectors takes ring completions on vector
 * 0 as well: the device raises MXHW_IRQ_RING(r) and the transport drops
 * vectors the driver did not enable, so such a driver polls the rings
 * from its vector-0 handler and from its fallback timer.
 */
#define MXHW_DB_CONTROL		0
#define MXHW_DB_RING(r)		(1 + (r))
#define MXHW_IRQ_CONTROL	0
#define MXHW_IRQ_RING(r)	(1 + (r))

#define MXHW_MAX_RINGS		16
#define MXHW_MAX_RING_DEPTH	4096

/* Bits of mxhw_header.features */
#define MXHW_FEAT_TEST_PAGE	(1ULL << 0)	/* fault injection, see below */

/*
 * The header, at offset 0, written by the device before the first driver
 * can see BAR2 and constant afterwards.  A driver accepts a device whose
 * magic matches, whose version_major it knows, and whose header_size is
 * at least the size it knows; it ignores fields beyond that size.
 */
struct mxhw_header {
	__le32 magic;			/* MXHW_MAGIC */
	__le16 version_major;		/* incompatible changes */
	__le16 version_minor;		/* compatible growth */
	__le32 header_size;		/* bytes of this struct the device fills */
	__le32 device_peer;		/* the ivshmem peer id doorbells go to */

	__le32 n_rings;			/* 1..MXHW_MAX_RINGS */
	__le32 ring_depth;		/* power of two, 2..MXHW_MAX_RING_DEPTH */
	__le32 desc_size;		/* sizeof(struct mxhw_desc) (or more) */
	__le32 cpl_size;		/* sizeof(struct mxhw_cpl) (or more) */
	__le32 n_doorbells;		/* 1 + n_rings */
	__le32 n_irqs;			/* 1 + n_rings */
	__le32 max_dim;			/* largest M, N or K of an op */
	__le32 offset_align;		/* operand addresses and strides */

	__le64 elem_mask;		/* 1 << enum drm_mxaccel_elem */
	__le64 op_mask;			/* 1 << enum drm_mxaccel_op_kind */
	__le64 mode_mask;		/* 1 << enum drm_mxaccel_scale_mode */
	__le64 desc_flags;		/* MXHW_DESC_* the device honours */
	__le64 features;		/* MXHW_FEAT_* */

	__le64 ctrl_offset;		/* struct mxhw_ctrl */
	__le64 ring_offset;		/* ring 0's struct mxhw_ring_regs */
	__le64 ring_stride;		/* bytes from ring r to ring r + 1 */
	__le64 heap_offset;		/* operands live in */
	__le64 heap_size;		/* [heap_offset, heap_offset + heap_size) */
	__le64 test_offset;		/* struct mxhw_test, 0 without */

	char name[32];			/* NUL-terminated, for logs and info */
	__le64 reserved[16];		/* zero */
};

/*
 * The control block.  The driver writes the first line, the device the
 * second; each side only reads the other's.
 *
 * Hello: the driver sets drv_gen to a new non-zero value and drv_cmd to
 * MXHW_CMD_HELLO, then rings MXHW_DB_CONTROL.  The device stops every
 * ring, empties them (all indices 0, no job in flight, no fault armed),
 * sets dev_gen = drv_gen and dev_status = MXHW_STATUS_READY, and raises
 * MXHW_IRQ_CONTROL.  The device raises no interrupt before its first
 * hello (the transport drops interrupts raised before the driver enabled
 * MSI-X).  A second hello is a device reset.
 *
 * Goodbye: drv_cmd = MXHW_CMD_GOODBYE with a new drv_gen: the device
 * stops every ring, sets dev_status = MXHW_STATUS_OFF and dev_gen, and
 * raises nothing until the next hello.
 *
 * Ring reset: the driver writes a new non-zero value into its ring's
 * reset_req and rings MXHW_DB_CONTROL.  The device abandons the ring's
 * jobs (no completion records for them), sets the ring's indices to 0,
 * sets reset_ack = reset_req and raises MXHW_IRQ_CONTROL.  Other rings
 * are not affected.
 *
 * Device lost: a device that can no longer execute sets dev_status to
 * MXHW_STATUS_LOST and raises MXHW_IRQ_CONTROL if it still can.  A driver
 * that sees it, or gets no answer to a handshake within its timeout,
 * treats the device as gone.
 */
struct mxhw_ctrl {
	/* written by the driver */
	__le32 drv_cmd;			/* MXHW_CMD_* */
	__le32 drv_gen;
	__le32 reserved0[14];
	/* written by the device */
	__le32 dev_status;		/* MXHW_STATUS_* */
	__le32 dev_gen;			/* drv_gen of the command it obeyed */
	__le64 uptime_ns;		/* device clock, for logs */
	__le32 reserved1[12];
};

#define MXHW_CMD_NONE		0
#define MXHW_CMD_HELLO		1
#define MXHW_CMD_GOODBYE	2

#define MXHW_STATUS_OFF		0
#define MXHW_STATUS_READY	1
#define MXHW_STATUS_LOST	2

/*
 * A ring: registers, then ring_depth descriptors (the submission queue),
 * then ring_depth completion records (the completion queue), at
 * ring_offset + r * ring_stride.  Indices are free-running __u32 counters;
 * entry i lives in slot i % ring_depth.
 *
 * Submission: the driver writes descriptors at slots sq_tail, sq_tail + 1,
 * ... (all of one job, consecutively), then advances sq_tail past them
 * (a release store) and rings MXHW_DB_RING(r).  It never lets sq_tail run
 * more than ring_depth ahead of sq_head.  The device executes jobs in
 * order, one at a time, advancing sq_head past each job's descriptors
 * once it no longer reads them.
 *
 * Completion: for every job the device writes one record at slot cq_tail,
 * then advances cq_tail (a release store) and raises MXHW_IRQ_RING(r)
 * unless irq_off is set.  Interrupts may coalesce: a driver scans from
 * cq_head to cq_tail on every interrupt and advances cq_head past what it
 * consumed.  A driver has at most ring_depth descriptors in flight, counted
 * until their job's completion record is consumed, so the completion
 * queue cannot overflow; a device that finds it full waits for cq_head.
 *
 * Abort: the driver writes the low 32 bits of a job's seq into abort_seq
 * and rings MXHW_DB_RING(r).  0 means no abort (hello and ring reset set
 * it): a driver never gives a job a seq whose low 32 bits are 0.  If that job is executing or waiting, the
 * device ends it early (status -ECANCELED) within a bounded time.  A
 * device that does not end it is reset (ring reset above).
 */
struct mxhw_ring_regs {
	/* written by the driver */
	__le32 sq_tail;
	__le32 cq_head;
	__le32 abort_seq;
	__le32 reset_req;
	__le32 irq_off;			/* 1: raise no interrupt, the driver polls */
	__le32 reserved0[11];
	/* written by the device */
	__le32 sq_head;
	__le32 cq_tail;
	__le32 reset_ack;
	__le32 reserved1[13];
};

#define MXHW_RING_SQ_OFFSET	sizeof(struct mxhw_ring_regs)

static inline __u64 mxhw_ring_cq_offset(__u32 depth, __u32 desc_size)
{
	return MXHW_RING_SQ_OFFSET + (__u64)depth * desc_size;
}

/*
 * Operands: device addresses are BAR2 offsets, and every byte an operand
 * covers must lie in the heap.  Extents are those of the UAPI
 * (uapi/drm/mxaccel_accel.h, struct drm_mxaccel_op): a row r of an MX
 * operand starts at data_addr + r * data_stride, its scales at
 * scale_addr + r * scale_stride (plain layout) or at the swizzled offset.
 */
struct mxhw_mx_operand {
	__le64 data_addr;
	__le64 data_stride;
	__le64 scale_addr;
	__le64 scale_stride;
	__le32 elem;			/* enum drm_mxaccel_elem */
	__le32 scale_layout;		/* enum drm_mxaccel_scale_layout */
};

struct mxhw_dense_operand {
	__le64 addr;
	__le64 stride;
	__le32 dtype;			/* enum drm_mxaccel_dtype */
	__le32 reserved;
};

/* Descriptor flags */
#define MXHW_DESC_ACCUMULATE	(1U << 0)	/* C += A * B^T */
#define MXHW_DESC_EXACT		(1U << 1)	/* the exact kernels */

/*
 * One operation of a job.  A job of n ops is n consecutive descriptors
 * with the same seq and op_index 0..n-1; if one fails, the device skips
 * the job's later ops and reports the failure.
 */
struct mxhw_desc {
	__le64 seq;			/* the job: echoed in its completion */
	__le32 kind;			/* enum drm_mxaccel_op_kind */
	__le32 flags;			/* MXHW_DESC_* */
	__le32 m, n, k;
	__le32 scale_mode;		/* enum drm_mxaccel_scale_mode */
	__le32 op_index;
	__le32 op_count;
	struct mxhw_mx_operand a;
	struct mxhw_mx_operand b;
	struct mxhw_dense_operand c;
	__le64 reserved[14];		/* zero */
};

/*
 * A job's completion record.  status is 0 or a negative errno:
 * -EINVAL a descriptor the device does not accept (bad kind, elem, flag,
 * shape or a non-zero reserved field), -EFAULT an operand outside the
 * heap, -ECANCELED aborted, -EIO a device error.  check lets the driver
 * reject a record the device did not write completely.
 */
struct mxhw_cpl {
	__le64 seq;
	__le32 status;			/* __s32 */
	__le32 ops_done;		/* ops that completed */
	__le64 device_ns;		/* time the device spent on the job */
	__le32 check;			/* mxhw_cpl_check() */
	__le32 reserved;
};

static inline __u32 mxhw_cpl_check(__u64 seq, __u32 status, __u32 ops_done,
				   __u64 device_ns)
{
	return 0x4d584350U ^ (__u32)seq ^ (__u32)(seq >> 32) ^
	       (status * 0x9e3779b1U) ^ (ops_done << 16) ^
	       (__u32)device_ns ^ (__u32)(device_ns >> 32);
}

/*
 * Fault injection (device models only, MXHW_FEAT_TEST_PAGE): a page a
 * test writes through the PCI resource file (sysfs resourceN) to make the
 * device misbehave on purpose.  The test fills cmd, ring, arg and count,
 * then stores a new cmd_seq; the device acts on it before it next reads a
 * ring (at the latest within 10 ms) and sets ack_seq = cmd_seq.
 */
struct mxhw_test {
	__le32 cmd_seq;
	__le32 cmd;			/* MXHW_FAULT_* */
	__le32 ring;			/* the ring it applies to */
	__le32 arg;			/* see the fault */
	__le32 count;			/* jobs it applies to, 0: until cleared */
	__le32 reserved0[11];
	__le32 ack_seq;
	__le32 jobs_faulted;		/* jobs a fault has applied to so far */
	__le32 reserved1[14];
};

enum mxhw_fault {
	MXHW_FAULT_CLEAR = 0,		/* every fault off, every ring runs */
	MXHW_FAULT_HANG = 1,		/* ring stops; aborts ignored; reset heals */
	MXHW_FAULT_HANG_HARD = 2,	/* ring stops; resets ignored too */
	MXHW_FAULT_ERROR = 3,		/* jobs complete with status -arg */
	MXHW_FAULT_SLOW = 4,		/* jobs take arg ms longer */
	MXHW_FAULT_CORRUPT = 5,		/* completion records are garbage */
	MXHW_FAULT_DROP_IRQ = 6,	/* completions raise no interrupt */
	MXHW_FAULT_LOST = 7,		/* the device is lost for good */
};

#endif /* MXACCEL_PCI_H */
