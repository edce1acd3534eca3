/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-client usage statistics for fdinfo (drm-usage-stats.rst).
 */
#ifndef MXACCEL_FDINFO_H
#define MXACCEL_FDINFO_H

#include <linux/atomic.h>
#include <linux/kref.h>

#include "mxaccel_params.h"

struct drm_file;
struct drm_printer;
struct file;
struct seq_file;

/*
 * Engine time of a client per ring.  Its file and each of its queues hold
 * a reference, so time of jobs that finish after close is not lost.
 */
struct mxaccel_client {
	struct kref ref;
	u64 id;
	atomic64_t busy_ns[MXACCEL_MAX_RINGS];
};

struct mxaccel_client *mxaccel_client_create(u64 id);
void mxaccel_client_get(struct mxaccel_client *c);
void mxaccel_client_put(struct mxaccel_client *c);

/* drm_driver.show_fdinfo, where the DRM core prints the common keys. */
void mxaccel_show_fdinfo(struct drm_printer *p, struct drm_file *file);
/* file_operations.show_fdinfo on kernels without drm_show_fdinfo(). */
void mxaccel_show_fdinfo_legacy(struct seq_file *m, struct file *f);

#endif /* MXACCEL_FDINFO_H */
