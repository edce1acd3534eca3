// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: how many software devices and rings, job timeout,
 * queue limits, the inline threshold, debug output, and a test hook that
 * makes jobs hang.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "mxaccel_drv.h"
#include "mxaccel_params.h"

/* A value within [min, max], or -EINVAL (the message names the limits). */
static int set_bounded(const char *val, const struct kernel_param *kp,
		       unsigned int min, unsigned int max)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v < min || v > max) {
		pr_err("mxaccel: %s=%u out of range %u..%u\n", kp->name, v,
		       min, max);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = v;
	return 0;
}

#define MXACCEL_BOUNDED_PARAM(name, var, def, min, max, perm, desc)	\
	unsigned int var = def;						\
	static int set_##name(const char *val,				\
			      const struct kernel_param *kp)		\
	{								\
		return set_bounded(val, kp, min, max);			\
	}								\
	static const struct kernel_param_ops name##_ops = {		\
		.set = set_##name,					\
		.get = param_get_uint,					\
	};								\
	module_param_cb(name, &name##_ops, &var, perm);			\
	MODULE_PARM_DESC(name, desc " (" #min ".." #max ", default " #def ")")

MXACCEL_BOUNDED_PARAM(num_devices, mxaccel_num_devices, 1, 1, 8, 0444,
		      "Software engine devices to create");
MXACCEL_BOUNDED_PARAM(rings, mxaccel_rings, 4, 1, 16, 0444,
		      "Engine rings of each software device: jobs that run at once");
/* A zero timeout would fail every job at once. */
MXACCEL_BOUNDED_PARAM(job_timeout_ms, mxaccel_job_timeout_ms, 10000, 1,
		      3600000, 0644,
		      "Job timeout in ms, for queues created afterwards");
MXACCEL_BOUNDED_PARAM(max_queues, mxaccel_max_queues, 16, 1, 1024, 0644,
		      "Queues one open file may hold");
MXACCEL_BOUNDED_PARAM(max_device_queues, mxaccel_max_device_queues, 256, 1,
		      65536, 0644,
		      "Queues that may exist on one device, over all files");
MXACCEL_BOUNDED_PARAM(queue_depth, mxaccel_queue_depth, 64, 1, 512, 0644,
		      "Unfinished jobs one queue may hold");
MXACCEL_BOUNDED_PARAM(inline_max_work, mxaccel_inline_max_work, 4096, 0,
		      1048576, 0644,
		      "Largest job (block operations) run in the submitting thread; 0: never");

MXACCEL_BOUNDED_PARAM(poll_us, mxaccel_poll_us, 0, 0, 10000, 0644,
		      "SUBMIT_WAIT on a device that can poll (PCI) looks for the completion this many us before sleeping; 0: interrupts only");

unsigned int mxaccel_debug;
module_param_named(debug, mxaccel_debug, uint, 0644);
MODULE_PARM_DESC(debug,
		 "Debug mask: 1 = rejected ioctl arguments, 2 = job lifecycle");

/*
 * Test hook: while non-zero, every job the engine starts hangs until the
 * scheduler times it out.  Unsafe: it exists for the timeout kselftests.
 */
unsigned int mxaccel_test_hang;
module_param_named_unsafe(test_hang, mxaccel_test_hang, uint, 0600);
MODULE_PARM_DESC(test_hang, "Testing only: make started jobs hang");
