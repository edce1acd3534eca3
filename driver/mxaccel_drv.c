// SPDX-License-Identifier: GPL-2.0
/*
 * mxaccel: a DRM compute accelerator driver for OCP Microscaling (MX)
 * block-scaled GEMM and quantization.  It registers software-engine
 * devices (num_devices of them) and binds MX PCI devices
 * (mxaccel_pci.c), each a DRM accel node (render node before Linux 6.2).
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
#include <drm/drm_managed.h>

#include "mxaccel_compat.h"
#include "mxaccel_debugfs.h"
#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_fdinfo.h"
#include "mxaccel_gem.h"
#include "mxaccel_params.h"
#include "mxaccel_pci_drv.h"
#include "mxaccel_queue.h"
#include "mxaccel_ring.h"
#include "mxaccel_submit.h"
#include "mxaccel_vram.h"

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
		args->value = lim->max_ops;
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
	case DRM_MXACCEL_PARAM_DEVICE_MEMORY:
		args->value = mdev->vram ? mxaccel_vram_size(mdev->vram) : 0;
		break;
	case DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES:
		args->value = lim->quantize_scale_types;
		break;
	case DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES:
		args->value = lim->gemm_scale_types;
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

/* Device numbers: debugfs directories, ring and workqueue names. */
static DEFINE_IDA(mxaccel_ida);

/*
 * The last DRM reference is gone: no file is open, so no queue is left
 * but those still being torn down, and no ioctl runs.  Fences may remain;
 * they hold the ring set and the module.
 */
static void mxaccel_device_release(struct drm_device *drm, void *unused)
{
	struct mxaccel_device *mdev = to_mxaccel(drm);

	if (mdev->release_wq)
		destroy_workqueue(mdev->release_wq);
	mxaccel_rings_fini(mdev);
	if (mdev->engine)
		mdev->engine->ops->destroy(mdev->engine);
	if (mdev->timeout_wq)
		destroy_workqueue(mdev->timeout_wq);
	mutex_destroy(&mdev->queues_lock);
	ida_free(&mxaccel_ida, mdev->index);
}

struct mxaccel_device *mxaccel_device_alloc(struct device *parent)
{
	struct mxaccel_device *mdev;
	int index, ret;

	index = ida_alloc(&mxaccel_ida, GFP_KERNEL);
	if (index < 0)
		return ERR_PTR(index);
	mdev = devm_drm_dev_alloc(parent, &mxaccel_driver,
				  struct mxaccel_device, drm);
	if (IS_ERR(mdev)) {
		ida_free(&mxaccel_ida, index);
		return mdev;
	}
	mdev->index = index;
	mutex_init(&mdev->queues_lock);
	INIT_LIST_HEAD(&mdev->queues);
	/* From here on the release action gives the index back. */
	ret = drmm_add_action_or_reset(&mdev->drm, mxaccel_device_release,
				       NULL);
	if (ret)
		return ERR_PTR(ret);
	/*
	 * Timeouts stop jobs, so they are on the fence-signalling path; queue
	 * teardown must not wait behind them (or anything else) either.
	 */
	mdev->timeout_wq = alloc_ordered_workqueue("mxaccel%u-timeout",
						   WQ_MEM_RECLAIM, index);
	mdev->release_wq = alloc_workqueue("mxaccel%u-release", 0, 0, index);
	if (!mdev->timeout_wq || !mdev->release_wq)
		return ERR_PTR(-ENOMEM);
	return mdev;
}

/* On failure the engine goes with the device, when it is released. */
int mxaccel_device_register(struct mxaccel_device *mdev,
			    struct mxaccel_engine *engine)
{
	int ret;

	mdev->engine = engine;
	ret = mxaccel_rings_init(mdev);
	if (ret)
		return ret;
	ret = drm_dev_register(&mdev->drm, 0);
	if (ret)
		return ret;
	mxaccel_debugfs_init(mdev);
	return 0;
}

/*
 * The device goes away for its users: new ioctls fail with -ENODEV, and
 * running ones have returned when this does.  Only the first call acts
 * (a lost PCI device is unplugged before it is removed).
 */
void mxaccel_device_unplug(struct mxaccel_device *mdev)
{
	if (atomic_xchg(&mdev->unplugged, 1))
		return;
	mxaccel_debugfs_fini(mdev);
	drm_dev_unplug(&mdev->drm);
}

/*
 * Software devices (like vgem): platform devices with no platform driver,
 * their devres in a group of their own.
 */
static struct platform_device *mxaccel_pdevs[MXACCEL_MAX_DEVICES];
static struct mxaccel_device *mxaccel_mdevs[MXACCEL_MAX_DEVICES];

static struct mxaccel_device *mxaccel_soft_device_create(unsigned int index)
{
	struct mxaccel_engine *engine;
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
	mdev = mxaccel_device_alloc(&pdev->dev);
	if (IS_ERR(mdev)) {
		ret = PTR_ERR(mdev);
		goto err_release;
	}
	engine = mxaccel_soft_engine_create(mdev, mxaccel_rings);
	if (IS_ERR(engine)) {
		ret = PTR_ERR(engine);
		goto err_release;
	}
	ret = mxaccel_device_register(mdev, engine);
	if (ret)
		goto err_release;
	return mdev;

err_release:
	devres_release_group(&pdev->dev, NULL);
err_unregister:
	platform_device_unregister(pdev);
	mxaccel_pdevs[index] = NULL;
	return ERR_PTR(ret);
}

/*
 * At module exit no file is open and no fence of ours is left (they hold
 * module references): the device is released right here.
 */
static void mxaccel_soft_device_destroy(unsigned int index)
{
	struct platform_device *pdev = mxaccel_pdevs[index];

	mxaccel_device_unplug(mxaccel_mdevs[index]);
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
			mxaccel_soft_device_destroy(i);
}

static int __init mxaccel_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < mxaccel_num_devices; i++) {
		struct mxaccel_device *mdev = mxaccel_soft_device_create(i);

		if (IS_ERR(mdev)) {
			ret = PTR_ERR(mdev);
			goto err;
		}
		mxaccel_mdevs[i] = mdev;
	}
	ret = mxaccel_pci_register();
	if (ret)
		goto err;
	return 0;

err:
	mxaccel_destroy_all();
	mxaccel_debugfs_module_fini();
	return ret;
}

static void __exit mxaccel_exit(void)
{
	mxaccel_pci_unregister();
	mxaccel_destroy_all();
	mxaccel_debugfs_module_fini();
	/* Fence releases run under RCU (mxaccel_fence.c): let them finish. */
	rcu_barrier();
}

module_init(mxaccel_init);
module_exit(mxaccel_exit);

MODULE_DESCRIPTION("OCP Microscaling (MX) accelerator: exact software engine and PCI devices");
MODULE_LICENSE("GPL");
/* dma_buf_vmap() of imported buffers (mxaccel_gem.c). */
MODULE_IMPORT_NS(DMA_BUF);
