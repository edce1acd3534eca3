/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of SUBMIT's operations: every field, and every operand's
 * extent against its buffer object, before anything is queued.
 */
#ifndef MXACCEL_VALIDATE_H
#define MXACCEL_VALIDATE_H

#include <linux/types.h>

struct drm_file;
struct mxaccel_job;

/*
 * Check job->ops[i], look up the buffer objects it names (added to
 * job->bos) and record its operands' spans; 0 or the errno to return.
 */
int mxaccel_validate_op(struct mxaccel_job *job, struct drm_file *file,
			u32 i);

#endif /* MXACCEL_VALIDATE_H */
