/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SUBMIT: copy, validate and queue a job.
 */
#ifndef MXACCEL_SUBMIT_H
#define MXACCEL_SUBMIT_H

struct drm_device;
struct drm_file;

int mxaccel_ioctl_submit(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* MXACCEL_SUBMIT_H */
