/* SPDX-License-Identifier: MIT */
/*
 * mxaccel-devmodel: the MX accelerator PCI device (hw/mxaccel_pci.h) as a
 * host process behind qemu's ivshmem-doorbell.  It is the ivshmem server
 * (qemu connects as its one client) and the device peer: BAR2 is its
 * memfd, doorbells arrive on its eventfds, interrupts leave through the
 * guest's.  Jobs run on the CPU with libmxaccel.
 *
 * Threads: the main thread serves the sockets, the control doorbell
 * (hello, goodbye, ring resets), the control socket and the test page; one
 * worker per ring executes that ring's jobs.  Everything the main thread
 * and the workers share is under dm.lock; what the guest shares with us
 * lives in BAR2 and is read once into local copies before it is trusted.
 */
#ifndef MXACCEL_DEVMODEL_H
#define MXACCEL_DEVMODEL_H

#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "mxaccel.h"
#include "mxaccel_accel.h"
#include "mxaccel_pci.h"

/* Descriptors carry the uapi's enums; the library's have the same values. */
_Static_assert((int)MXA_ELEM_E4M3 == (int)DRM_MXACCEL_ELEM_E4M3 &&
	       (int)MXA_ELEM_E2M1 == (int)DRM_MXACCEL_ELEM_E2M1 &&
	       (int)MXA_LAYOUT_SWIZZLED == (int)DRM_MXACCEL_LAYOUT_SWIZZLED &&
	       (int)MXA_DTYPE_BF16 == (int)DRM_MXACCEL_DTYPE_BF16 &&
	       (int)MXA_SCALE_RCEIL == (int)DRM_MXACCEL_SCALE_RCEIL &&
	       (int)MXA_SCALE_EVEN == (int)DRM_MXACCEL_SCALE_EVEN,
	       "libmxaccel and uapi enums differ");

#define DM_PROG			"mxaccel-devmodel"
#define DM_DEVICE_NAME		"mxaccel-devmodel 1.0"

/* The BAR2 layout this device model publishes (see the header fields). */
#define DM_CTRL_OFFSET		0x1000ULL
#define DM_TEST_OFFSET		0x2000ULL
#define DM_RING_OFFSET		0x10000ULL
#define DM_RING_ALIGN		4096ULL
#define DM_HEAP_ALIGN		(2ULL << 20)

/* Limits, as the driver's software engine has them. */
#define DM_MAX_DIM		(1U << 20)
#define DM_OFFSET_ALIGN		1
#define DM_CPL_SIZE		32U

#define DM_DEFAULT_SIZE		(256ULL << 20)
#define DM_DEFAULT_RINGS	4
#define DM_DEFAULT_DEPTH	64
#define DM_MAX_VECTORS		(1 + MXHW_MAX_RINGS)
#define DM_MAX_INITIAL_FAULTS	32
#define DM_N_FAULTS		(MXHW_FAULT_LOST + 1)

/* Shared-memory access: little-endian, one load or store each. */
static inline uint32_t dm_ld32(const __le32 *p)
{
	return le32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static inline void dm_st32(__le32 *p, uint32_t v)
{
	__atomic_store_n(p, htole32(v), __ATOMIC_RELEASE);
}

static inline void dm_st64(__le64 *p, uint64_t v)
{
	__atomic_store_n(p, htole64(v), __ATOMIC_RELEASE);
}

struct dm_fault_spec {
	uint32_t kind;		/* enum mxhw_fault */
	uint32_t ring;
	uint32_t arg;
	uint32_t count;
};

struct dm_config {
	const char *socket_path;
	const char *control_path;
	const char *log_path;
	uint64_t size;
	unsigned int rings;
	unsigned int depth;
	unsigned int device_peer;
	unsigned int guest_peer;
	bool test_page;
	bool verbose;
	bool exact_only;
	struct dm_fault_spec initial[DM_MAX_INITIAL_FAULTS];
	unsigned int n_initial;
};

struct dm_layout {
	uint64_t size;
	uint64_t ctrl_offset;
	uint64_t test_offset;	/* 0: none */
	uint64_t ring_offset;
	uint64_t ring_stride;
	uint64_t heap_offset;
	uint64_t heap_size;
	uint32_t n_rings;
	uint32_t depth;
};

/* One armed fault of a ring. */
struct dm_fault {
	bool on;
	uint32_t arg;
	uint32_t left;		/* jobs it still applies to; 0: until cleared */
};

/*
 * The executor of one ring: its own cpu device, so rings never wait on
 * each other's worker pools.
 */
struct dm_exec {
	struct mxa_device *dev;
	struct mxa_buffer *heap;	/* the heap of BAR2, wrapped */
	uint8_t *heap_ptr;
	uint64_t heap_offset;		/* BAR2 offset of heap_ptr */
	struct mxa_buffer *scratch;	/* plain scales of swizzled operands */
	uint8_t *scratch_ptr;
	double ns_per_dot[2];		/* GEMM block dots: [exact] */
	double ns_per_qblock;		/* QUANTIZE blocks */
};

/* A validated operation: a copy in host byte order. */
struct dm_mx {
	uint64_t data, data_stride, scale, scale_stride;	/* BAR2 offsets */
	uint32_t elem, layout;
};

struct dm_op {
	uint32_t kind, flags, m, n, k, mode;
	struct dm_mx a, b;
	uint64_t c, c_stride;
	uint32_t c_dtype;
};

struct dm;

struct dm_ring {
	struct dm *dm;
	unsigned int idx;
	pthread_t thread;
	bool started;
	int wake_fd;		/* the main thread's nudge */
	struct mxhw_ring_regs *regs;
	struct mxhw_desc *sq;
	struct mxhw_cpl *cq;

	/* under dm->lock */
	bool running;		/* hello'd and not stopped */
	uint32_t stop_ack;	/* the dm->stop_gen this worker has obeyed */
	bool reset_pending;
	uint32_t reset_val;	/* the reset_req to acknowledge */
	uint32_t reset_ack_val;	/* the last one acknowledged */
	struct dm_fault fault[DM_N_FAULTS];
	bool hang_counted;	/* the held job counts as faulted once */
	uint64_t jobs, ops, failed;

	/* the worker's own */
	uint32_t sq_head, cq_tail;
	uint32_t bad_tail;	/* the sq_tail last logged as bad */
	struct mxhw_desc *job;	/* depth descriptors copied out of BAR2 */
	struct dm_op *job_ops;
	struct dm_exec exec;
};

struct dm_ctl_client {
	int fd;
	size_t len;
	char buf[512];
};

#define DM_MAX_CTL_CLIENTS 8

struct dm {
	struct dm_config cfg;
	struct dm_layout lay;
	uint8_t *shm;
	int shm_fd;
	struct mxhw_header *hdr;
	struct mxhw_ctrl *ctrl;
	struct mxhw_test *test;
	unsigned int n_vectors;
	int db_fd[DM_MAX_VECTORS];	/* our doorbells: qemu writes them */
	int irq_fd[DM_MAX_VECTORS];	/* the guest's vectors: we write them */
	int listen_fd;
	int client_fd;
	bool socket_linked;		/* cfg.socket_path is ours to unlink */
	int ctl_fd;
	struct dm_ctl_client ctl[DM_MAX_CTL_CLIENTS];

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a worker acknowledged a stop */
	uint32_t status;		/* MXHW_STATUS_* */
	bool irq_on;			/* hello'd, not said goodbye */
	bool hello_seen;
	bool lost;
	bool quit;
	uint32_t stop_gen;
	uint32_t last_gen;		/* drv_gen of the last command obeyed */
	uint64_t faulted;
	uint64_t hellos, goodbyes, resets, irqs;
	struct dm_ring rings[MXHW_MAX_RINGS];

	pthread_mutex_t test_lock;
	uint32_t test_seq;		/* the cmd_seq last acted on */

	FILE *log;
	pthread_mutex_t log_lock;
	struct timespec t0;
};

/* devmodel_log.c */
void dm_log(struct dm *dm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define dm_vlog(dm, ...) \
	do { if ((dm)->cfg.verbose) dm_log(dm, __VA_ARGS__); } while (0)
uint64_t dm_now_ns(void);

/* devmodel_ivshmem.c */
int dm_server_listen(struct dm *dm);
int dm_server_accept(struct dm *dm);
void dm_server_unlink(struct dm *dm);

/* devmodel_ring.c */
int dm_rings_start(struct dm *dm);
void dm_rings_stop(struct dm *dm);
void dm_ring_wake(struct dm_ring *r);
void dm_raise(struct dm *dm, unsigned int vector);
/* Stop every ring and wait until each worker has let go of it. */
void dm_rings_park(struct dm *dm);

/* devmodel_exec.c */
int dm_exec_init(struct dm *dm, struct dm_exec *x);
void dm_exec_fini(struct dm_exec *x);
int dm_op_check(const struct dm_layout *lay, const struct mxhw_desc *d,
		struct dm_op *op, char *why, size_t size);
/* Between chunks: non-zero stops the op and is returned. */
typedef int (*dm_stop_fn)(void *ctx);
int dm_op_run(struct dm_exec *x, const struct dm_op *op, bool exact,
	      dm_stop_fn stop, void *ctx, char *why, size_t size);

/* devmodel_fault.c */
int dm_fault_parse_spec(const char *s, struct dm_fault_spec *out,
			char *why, size_t size);
const char *dm_fault_name(uint32_t kind);
/* Arm (or with MXHW_FAULT_CLEAR clear) a fault; dm->lock held. */
int dm_fault_apply(struct dm *dm, const struct dm_fault_spec *f,
		   const char *source, char *why, size_t size);
/* Use up one job's worth of a ring's fault; dm->lock held. */
bool dm_fault_take(struct dm_ring *r, uint32_t kind, uint32_t *arg);
void dm_fault_counted(struct dm *dm);
void dm_test_page_poll(struct dm *dm);
int dm_control_listen(struct dm *dm);
void dm_control_accept(struct dm *dm);
/* Returns false when the client went away. */
bool dm_control_serve(struct dm *dm, struct dm_ctl_client *c);
void dm_control_close(struct dm *dm);
/* dm->lock held. */
void dm_go_lost(struct dm *dm, const char *why);

#endif /* MXACCEL_DEVMODEL_H */
