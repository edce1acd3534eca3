/* SPDX-License-Identifier: MIT */
/*
 * The qemu side of ivshmem-doorbell, for testing mxaccel-devmodel on the
 * host: start the device model, connect to its socket as qemu's
 * -chardev socket does, take the setup messages in qemu's order with
 * their descriptors (SCM_RIGHTS), map BAR2, ring doorbells (write our
 * copy of the device's eventfd, as qemu does for a doorbell write) and
 * take interrupts (read our vector eventfds, as qemu's msix_notify path
 * does).
 */
#ifndef FAKEQEMU_H
#define FAKEQEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mxaccel_pci.h"

#define FQ_MAX_VECTORS (1 + MXHW_MAX_RINGS)

struct fq {
	pid_t pid;
	char dir[64];
	char sock[128];
	char ctl[128];
	char log[128];
	int fd;			/* the server socket, our end */
	int64_t my_id;
	uint8_t *bar;		/* BAR2 */
	size_t size;
	unsigned int n_vectors;
	int db[FQ_MAX_VECTORS];	 /* the device's doorbells */
	int vec[FQ_MAX_VECTORS]; /* our interrupt vectors */
	struct mxhw_header *hdr;
	struct mxhw_ctrl *ctrl;
	struct mxhw_test *test;
};

/* The device model binary: $MXACCEL_DEVMODEL or ../tools/ beside us. */
const char *fq_devmodel_path(void);

/*
 * Run the device model with --socket, --control and --log in a new
 * temporary directory plus args (NULL-terminated), and wait (5 s at most)
 * for its socket.  0 or -1 (with a message on stderr).
 */
int fq_start(struct fq *q, const char *const *args);
/* Connect and take the setup; every step checked.  0 or -1. */
int fq_connect(struct fq *q);
/*
 * Close our socket (qemu exits) and wait for the model: its exit status,
 * or -1 if it did not exit within timeout_ms (it is then killed).
 */
int fq_finish(struct fq *q, int timeout_ms);
/* Send a signal and wait as above. */
int fq_signal(struct fq *q, int sig, int timeout_ms);
/* Remove the temporary directory. */
void fq_cleanup(struct fq *q);

void fq_doorbell(struct fq *q, unsigned int db);
/* Interrupts raised on a vector since the last read (0: none). */
uint64_t fq_irq_take(struct fq *q, unsigned int vec);
/* Wait up to timeout_ms for an interrupt; returns the count taken. */
uint64_t fq_irq_wait(struct fq *q, unsigned int vec, int timeout_ms);

/* One control socket exchange: 0 and the reply line (no newline), or -1. */
int fq_control(struct fq *q, const char *cmd, char *reply, size_t size);

/* Read the device model's log (malloc'd, NUL-terminated) or NULL. */
char *fq_read_log(struct fq *q);

uint64_t fq_now_ms(void);

/* Run the device model with args, capture stderr; its exit status. */
int fq_run_capture(const char *const *args, char *err, size_t size);

#endif /* FAKEQEMU_H */
