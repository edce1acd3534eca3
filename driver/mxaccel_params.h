/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module parameters and the fixed limits of the uapi.
 */
#ifndef MXACCEL_PARAMS_H
#define MXACCEL_PARAMS_H

#include <linux/types.h>

extern unsigned int mxaccel_num_devices;
extern unsigned int mxaccel_rings;
extern unsigned int mxaccel_job_timeout_ms;
extern unsigned int mxaccel_max_queues;
extern unsigned int mxaccel_max_device_queues;
extern unsigned int mxaccel_queue_depth;
extern unsigned int mxaccel_inline_max_work;
extern unsigned int mxaccel_test_hang;
extern unsigned int mxaccel_poll_us;

#define MXACCEL_MAX_DEVICES	8
#define MXACCEL_MAX_RINGS	16
#define MXACCEL_MAX_OPS		256
#define MXACCEL_MAX_IN_SYNCS	64
#define MXACCEL_MAX_DIM		(1u << 20)
#define MXACCEL_MAX_BO_SIZE	(1ull << 32)
/* Statuses kept per queue; the depth limit stays below it. */
#define MXACCEL_STATUS_WINDOW	1024
#define MXACCEL_MAX_QUEUE_DEPTH	(MXACCEL_STATUS_WINDOW / 2)

#endif /* MXACCEL_PARAMS_H */
