// SPDX-License-Identifier: GPL-2.0
/*
 * mxaccel: a DRM compute accelerator driver for OCP Microscaling (MX)
 * block-scaled GEMM and quantization.  Without hardware it registers
 * software-engine devices (like vgem): platform devices with no platform
 * driver, each a DRM accel node (render node before Linux 6.2).
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>

#include "mxaccel_compat.h"
#include "mxaccel_debugfs.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_fdinfo.h"
#include "mxaccel_gem.h"
#include "mxaccel_params.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"
#include "mxaccel_submit.h"

/*
 * GET_PARAM: report one device parameter.
 * -EINVAL: unknown param or non-zero pad.
 */
static int mxaccel_ioctl_get_param(struct drm_device *drm, void *data,
				   struct drm_file *file)
{
	struct mxaccel_device *mdev = to_mxaccel(drm);
	const struct mxaccel_engine_ops *ops = mdev->engine->ops;
	const struct mxaccel_engine_limits *lim = &mdev->engine->limits;
	struct drm_mxaccel_get_param *args = data;

	if (args->pad)
		return mxaccel_inval(drm, -EINVAL, "get_param: pad is not zero\n");

	switch (args->param) {
	case DRM_MXACCEL_PARAM_UAPI_VERSION:
		args->value = DRM_MXACCEL_UAPI_VERSION;
		break;
	case DRM_MXACCEL_PARAM_ENGINE_KIND:
		args->value = ops->kind;
		break;
	case DRM_MXACCEL_PARAM_ELEM_MASK:
		args->value = lim->elem_mask;
		break;
	case DRM_MXACCEL_PARAM_OP_MASK:
		args->value = lim->op_mask;
		break;
	case DRM_MXACCEL_PARAM_SCALE_MODE_MASK:
		args->value = lim->mode_mask;
		break;
	case DRM_MXACCEL_PARAM_MAX_QUEUES:
		args->value = mxaccel_max_queues;
		break;
	case DRM_MXACCEL_PARAM_MAX_OPS:
		args->value = MXACCEL_MAX_OPS;
		break;
	case DRM_MXACCEL_PARAM_MAX_DIM:
		args->value = lim->max_dim;
		break;
	case DRM_MXACCEL_PARAM_MAX_BO_SIZE:
		args->value = lim->max_bo_size;
		break;
	case DRM_MXACCEL_PARAM_JOB_TIMEOUT_MS:
		args->value = mxaccel_job_timeout_ms;
		break;
	case DRM_MXACCEL_PARAM_OP_SIZE:
		args->value = sizeof(struct drm_mxaccel_op);
		break;
	case DRM_MXACCEL_PARAM_RINGS:
		args->value = mdev->n_rings;
		break;
	case DRM_MXACCEL_PARAM_QUEUE_DEPTH:
		args->value = mxaccel_queue_depth;
		break;
	case DRM_MXACCEL_PARAM_MAX_DEVICE_QUEUES:
		args->value = mxaccel_max_device_queues;
		break;
	case DRM_MXACCEL_PARAM_STATUS_WINDOW:
		args->value = MXACCEL_STATUS_WINDOW;
		break;
	case DRM_MXACCEL_PARAM_INLINE_MAX_WORK:
		args->value = ops->run_inline ? mxaccel_inline_max_work : 0;
		break;
	default:
		return mxaccel_inval(drm, -EINVAL,
				     "get_param: unknown param %u\n",
				     args->param);
	}
	return 0;
}

static int mxaccel_open(struct drm_device *drm, struct drm_file *file)
{
	struct mxaccel_file *mfile;

	mfile = kzalloc(sizeof(*mfile), GFP_KERNEL_ACCOUNT);
	if (!mfile)
		return -ENOMEM;
	mfile->mdev = to_mxaccel(drm);
	mfile->file = file;
	mfile->client = mxaccel_client_create(atomic64_inc_return(&mfile->mdev->next_client));
	if (!mfile->client) {
		kfree(mfile);
		return -ENOMEM;
	}
	xa_init_flags(&mfile->queues, XA_FLAGS_ALLOC1);
	mutex_init(&mfile->lock);
	file->driver_priv = mfile;
	return 0;
}

static void mxaccel_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct mxaccel_file *mfile = file->driver_priv;

	mxaccel_queue_destroy_all(mfile);
	xa_destroy(&mfile->queues);
	mutex_destroy(&mfile->lock);
	mxaccel_client_put(mfile->client);
	kfree(mfile);
}

#define MXACCEL_IOCTL(n, func) \
	DRM_IOCTL_DEF_DRV(MXACCEL_##n, mxaccel_ioctl_##func, DRM_RENDER_ALLOW)

static const struct drm_ioctl_desc mxaccel_ioctls[] = {
	MXACCEL_IOCTL(GET_PARAM, get_param),
	MXACCEL_IOCTL(BO_CREATE, bo_create),
	MXACCEL_IOCTL(BO_INFO, bo_info),
	MXACCEL_IOCTL(BO_WAIT, bo_wait),
	MXACCEL_IOCTL(QUEUE_CREATE, queue_create),
	MXACCEL_IOCTL(QUEUE_DESTROY, queue_destroy),
	MXACCEL_IOCTL(SUBMIT, submit),
	MXACCEL_IOCTL(JOB_WAIT, job_wait),
};

static const struct file_operations mxaccel_fops = {
	.owner = THIS_MODULE,
	MXACCEL_BASE_FOPS,
	.show_fdinfo = MXACCEL_FOPS_SHOW_FDINFO,
};

static const struct drm_driver mxaccel_driver = {
	.driver_features = DRIVER_GEM | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE |
			   MXACCEL_DRIVER_NODE_FEATURE,
	.open = mxaccel_open,
	.postclose = mxaccel_postclose,
	MXACCEL_DRIVER_SHOW_FDINFO(mxaccel_show_fdinfo)
	.gem_create_object = mxaccel_gem_create_object,
	DRM_GEM_SHMEM_DRIVER_OPS,
	.ioctls = mxaccel_ioctls,
	.num_ioctls = ARRAY_SIZE(mxaccel_ioctls),
	.fops = &mxaccel_fops,
	.name = "mxaccel",
	.desc = "OCP Microscaling (MX) accelerator",
	MXACCEL_DRIVER_DATE
	.major = 0,
	.minor = DRM_MXACCEL_UAPI_VERSION,
};

static struct platform_device *mxaccel_pdevs[MXACCEL_MAX_DEVICES];
static struct mxaccel_device *mxaccel_mdevs[MXACCEL_MAX_DEVICES];

static struct mxaccel_device *mxaccel_device_create(unsigned int index)
{
	struct platform_device *pdev;
	struct mxaccel_device *mdev;
	int ret;

	pdev = platform_device_register_simple("mxaccel", index, NULL, 0);
	if (IS_ERR(pdev))
		return ERR_CAST(pdev);
	mxaccel_pdevs[index] = pdev;

	/* devres needs a group: the device has no driver to open one. */
	if (!devres_open_group(&pdev->dev, NULL, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto err_unregister;
	}
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_release;

	mdev = devm_drm_dev_alloc(&pdev->dev, &mxaccel_driver,
				  struct mxaccel_device, drm);
	if (IS_ERR(mdev)) {
		ret = PTR_ERR(mdev);
		goto err_release;
	}
	mdev->index = index;
	mutex_init(&mdev->queues_lock);
	INIT_LIST_HEAD(&mdev->queues);
	/*
	 * Timeouts stop jobs, so they are on the fence-signalling path; queue
	 * teardown must not wait behind them (or anything else) either.
	 */
	mdev->timeout_wq = alloc_ordered_workqueue("mxaccel%u-timeout",
						   WQ_MEM_RECLAIM, index);
	mdev->release_wq = alloc_workqueue("mxaccel%u-release", 0, 0, index);
	if (!mdev->timeout_wq || !mdev->release_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	mdev->engine = mxaccel_soft_engine_create(mdev, mxaccel_rings);
	if (IS_ERR(mdev->engine)) {
		ret = PTR_ERR(mdev->engine);
		goto err_wq;
	}
	ret = mxaccel_rings_init(mdev);
	if (ret)
		goto err_engine;
	ret = drm_dev_register(&mdev->drm, 0);
	if (ret)
		goto err_rings;
	mxaccel_debugfs_init(mdev);
	return mdev;

err_rings:
	mxaccel_rings_fini(mdev);
err_engine:
	mdev->engine->ops->destroy(mdev->engine);
err_wq:
	if (mdev->release_wq)
		destroy_workqueue(mdev->release_wq);
	if (mdev->timeout_wq)
		destroy_workqueue(mdev->timeout_wq);
err_release:
	devres_release_group(&pdev->dev, NULL);
err_unregister:
	platform_device_unregister(pdev);
	mxaccel_pdevs[index] = NULL;
	return ERR_PTR(ret);
}

static void mxaccel_device_destroy(unsigned int index)
{
	struct mxaccel_device *mdev = mxaccel_mdevs[index];
	struct platform_device *pdev = mxaccel_pdevs[index];

	mxaccel_debugfs_fini(mdev);
	drm_dev_unplug(&mdev->drm);
	/*
	 * No file is open and no fence of ours is left (they hold module
	 * references), but the last queues may still be being torn down.
	 */
	destroy_workqueue(mdev->release_wq);
	mxaccel_rings_fini(mdev);
	mdev->engine->ops->destroy(mdev->engine);
	destroy_workqueue(mdev->timeout_wq);
	mutex_destroy(&mdev->queues_lock);
	devres_release_group(&pdev->dev, NULL);
	platform_device_unregister(pdev);
	mxaccel_mdevs[index] = NULL;
	mxaccel_pdevs[index] = NULL;
}

static void mxaccel_destroy_all(void)
{
	unsigned int i;

	for (i = MXACCEL_MAX_DEVICES; i-- > 0;)
		if (mxaccel_mdevs[i])
			mxaccel_device_destroy(i);
}

static int __init mxaccel_init(void)
{
	unsigned int i;

	for (i = 0; i < mxaccel_num_devices; i++) {
		struct mxaccel_device *mdev = mxaccel_device_create(i);

		if (IS_ERR(mdev)) {
			mxaccel_destroy_all();
			mxaccel_debugfs_module_fini();
			return PTR_ERR(mdev);
		}
		mxaccel_mdevs[i] = mdev;
	}
	return 0;
}

static void __exit mxaccel_exit(void)
{
	mxaccel_destroy_all();
	mxaccel_debugfs_module_fini();
	/* Fence releases run under RCU (mxaccel_fence.c): let them finish. */
	rcu_barrier();
}

module_init(mxaccel_init);
module_exit(mxaccel_exit);

MODULE_DESCRIPTION("OCP Microscaling (MX) accelerator with an exact software engine");
MODULE_LICENSE("GPL");
/* dma_buf_vmap() of imported buffers (mxaccel_gem.c). */
MODULE_IMPORT_NS(DMA_BUF);
