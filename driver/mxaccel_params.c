// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: how many software devices, job timeout, queues per
 * file, debug output, and a test hook that makes jobs hang.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "mxaccel_drv.h"
#include "mxaccel_params.h"

unsigned int mxaccel_num_devices = 1;
module_param_named(num_devices, mxaccel_num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices,
		 "Software engine devices to create (default 1, max 8)");

unsigned int mxaccel_job_timeout_ms = 10000;

/* A zero timeout would fail every job at once: refuse it. */
static int set_job_timeout(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret = kstrtouint(val, 0, &ms);

	if (ret)
		return ret;
	if (!ms || ms > 3600 * 1000)
		return -EINVAL;
	*(unsigned int *)kp->arg = ms;
	return 0;
}

static const struct kernel_param_ops job_timeout_ops = {
	.set = set_job_timeout,
	.get = param_get_uint,
};

module_param_cb(job_timeout_ms, &job_timeout_ops, &mxaccel_job_timeout_ms,
		0644);
MODULE_PARM_DESC(job_timeout_ms,
		 "Job timeout in ms (1..3600000) for queues created afterwards (default 10000)");

unsigned int mxaccel_max_queues = 16;
module_param_named(max_queues, mxaccel_max_queues, uint, 0644);
MODULE_PARM_DESC(max_queues, "Queues one open file may hold (default 16)");

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
