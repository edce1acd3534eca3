/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debugfs: /sys/kernel/debug/mxaccel/<device>/{rings,queues}.
 */
#ifndef MXACCEL_DEBUGFS_H
#define MXACCEL_DEBUGFS_H

struct mxaccel_device;

void mxaccel_debugfs_init(struct mxaccel_device *mdev);
void mxaccel_debugfs_fini(struct mxaccel_device *mdev);
void mxaccel_debugfs_module_fini(void);

#endif /* MXACCEL_DEBUGFS_H */
