// SPDX-License-Identifier: GPL-2.0
/*
 * Hot-unplug of the MX PCI device by qemu (device_del), with a job on the
 * device, a mapping of its memory and the file open: the job's fence ends
 * with -ENODEV, every ioctl fails with -ENODEV, the mapping is gone
 * (SIGBUS), closing is clean.  The VM runner does the unplug when the
 * test prints MXACCEL-VM-DEVICE-DEL on the console (tests/vm/run.sh);
 * without MXACCEL_VM_DEVICE_DEL=1 in the environment (no runner to ask)
 * the test skips.  The device is gone for good afterwards, so this program
 * runs alone (tests/vm/test_vm_pci_unplug.sh), not in run.sh's list.
 */

#include "kselftest_harness.h"
#include "mxaccel_test.h"
#include "mxaccel_pci_test.h"

#define E4M3_ONE 0x38
#define SCALE_ONE 127

TEST(device_del_with_job_mapping_and_file)
{
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_get_param p;
	struct drm_mxaccel_op op;
	struct mxt_pci pd;
	struct mxt_bo bo;
	__u32 q, syncobj;
	int fd, sfd, con, i, ret;
	__u8 *map;

	if (!getenv("MXACCEL_VM_DEVICE_DEL"))
		SKIP(return, "no VM runner to hot-unplug the device (MXACCEL_VM_DEVICE_DEL)");
	memset(&pd, 0, sizeof(pd));
	fd = mxt_pci_open(&pd);
	if (fd < 0)
		SKIP(return, "no mxaccel device with a hardware engine");
	ret = mxt_pci_map(&pd);
	if (ret == -EINVAL)
		SKIP(return, "resource2 cannot be mapped: boot with iomem=relaxed");
	ASSERT_EQ(0, ret);
	if (!pd.test)
		SKIP(return, "no test page to slow the device");
	ret = mxt_pci_fault(&pd, MXHW_FAULT_SLOW, 0, 600000, 1);
	mxt_pci_unmap(&pd);
	ASSERT_EQ(0, ret);

	/* C = A * B^T of ones, 4x4x32, in one device-memory object. */
	ASSERT_EQ(0, mxt_bo_new(fd, 65536, &bo));
	map = mxt_bo_at(&bo, 0);
	memset(map, E4M3_ONE, 4 * 32);
	memset(map + 4096, SCALE_ONE, 4);
	memset(map + 8192, E4M3_ONE, 4 * 32);
	memset(map + 12288, SCALE_ONE, 4);
	mxt_gemm(&op, 4, 4, 32);
	mxt_mx(&op.a, bo.handle, 0, 4096, DRM_MXACCEL_ELEM_E4M3);
	mxt_mx(&op.b, bo.handle, 8192, 12288, DRM_MXACCEL_ELEM_E4M3);
	mxt_dense(&op.c, bo.handle, 16384, DRM_MXACCEL_DTYPE_F32);
	ASSERT_EQ(0, mxt_queue_create(fd, &q, &syncobj));
	mxt_submit_init(&args, q, &op, 1);
	ASSERT_EQ(0, mxt_submit_args(fd, &args));
	sfd = mxt_export_sync_file(fd, syncobj, args.seqno);
	ASSERT_LE(0, sfd);
	usleep(200000);

	/* Ask the runner, then wait for the function to go. */
	con = open("/dev/console", O_WRONLY);
	ASSERT_LE(0, con);
	ASSERT_LT(0, write(con, "MXACCEL-VM-DEVICE-DEL\n", 22));
	close(con);
	for (i = 0; i < 300 && !access(pd.sysfs, F_OK); i++)
		usleep(100000);
	if (!access(pd.sysfs, F_OK))
		SKIP(return, "%.200s still there 30 s after device_del (no ACPI PCI hotplug in this kernel?)",
		     pd.sysfs);

	EXPECT_EQ(-ENODEV, mxt_sync_file_status(sfd, 10000));
	close(sfd);
	memset(&p, 0, sizeof(p));
	p.param = DRM_MXACCEL_PARAM_UAPI_VERSION;
	EXPECT_EQ(-ENODEV, mxt_ioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &p));
	EXPECT_TRUE(mxt_read_faults(map))
		TH_LOG("the unplugged device's memory is still mapped");
	mxt_bo_free(fd, &bo);
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
