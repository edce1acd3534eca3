// SPDX-License-Identifier: MIT
/*
 * The accel backend: "accel:N" is the N-th mxaccel node.  Buffers are
 * buffer objects mapped into the process; GEMM and QUANTIZE go to the
 * device's queue.  A device backed by the software engine is a conformance
 * device: exact, never picked by "auto", and without a NATIVE kernel.  A
 * hardware engine (a PCI device, Documentation/pci-device.rst) has its own
 * native GEMM, and computes the exact one when asked (DRM_MXACCEL_OP_EXACT).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "accel.h"
#include "mxaccel_accel.h"
#include "mxcore.h"

#define ACCEL_MAX_NODES 64

static unsigned int accel_probe(char *reason, size_t size)
{
	struct accel_node nodes[ACCEL_MAX_NODES];

	return accel_discover(nodes, ACCEL_MAX_NODES, reason, size);
}

static int get_param(struct accel_device *ad, uint32_t param, uint64_t *out)
{
	struct drm_mxaccel_get_param gp = { .param = param };
	int ret = accel_ioctl(ad->fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp);

	if (ret)
		return mxa__err(ret, "%s: GET_PARAM %u: %s", ad->path, param,
				mxa_strerror(ret));
	*out = gp.value;
	return 0;
}

static int read_caps(struct accel_device *ad)
{
	int ret;

	/* Version 1 lacks only the one-ioctl submit and wait (see submit). */
	ret = get_param(ad, DRM_MXACCEL_PARAM_UAPI_VERSION, &ad->uapi);
	if (!ret && ad->uapi < 1)
		ret = mxa__err(-ENODEV, "%s: uapi version %llu, need 1",
			       ad->path, (unsigned long long)ad->uapi);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_ENGINE_KIND,
				&ad->engine_kind);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_ELEM_MASK, &ad->elem_mask);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_OP_MASK, &ad->op_mask);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_SCALE_MODE_MASK,
				&ad->mode_mask);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_MAX_DIM, &ad->max_dim);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_MAX_OPS, &ad->max_ops);
	if (!ret)
		ret = get_param(ad, DRM_MXACCEL_PARAM_RINGS, &ad->rings);
	/* Version 3: device memory, where buffers go by default. */
	if (!ret && ad->uapi >= 3)
		ret = get_param(ad, DRM_MXACCEL_PARAM_DEVICE_MEMORY,
				&ad->device_memory);
	/* Version 4: scale types per op (NVFP4's UE4M3); E8M0 before. */
	ad->quantize_scale_types = 1ull << DRM_MXACCEL_SCALE_TYPE_E8M0;
	ad->gemm_scale_types = 1ull << DRM_MXACCEL_SCALE_TYPE_E8M0;
	if (!ret && ad->uapi >= 4)
		ret = get_param(ad, DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES,
				&ad->quantize_scale_types);
	if (!ret && ad->uapi >= 4)
		ret = get_param(ad, DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES,
				&ad->gemm_scale_types);
	return ret;
}

static int accel_open(struct mxa_device *dev)
{
	struct accel_node nodes[ACCEL_MAX_NODES];
	unsigned int n = accel_discover(nodes, ACCEL_MAX_NODES, NULL, 0);
	struct accel_device *ad;
	bool soft;
	int ret;

	if (dev->index >= n)
		return -ENODEV;
	ad = calloc(1, sizeof(*ad));
	if (!ad)
		return -ENOMEM;
	mxa__strlcpy(ad->path, nodes[dev->index].path, sizeof(ad->path));
	pthread_mutex_init(&ad->lock, NULL);
	ad->fd = open(ad->path, O_RDWR | O_CLOEXEC);
	if (ad->fd < 0) {
		ret = mxa__err(-errno, "%s: %s", ad->path, strerror(errno));
		goto err_free;
	}
	ret = read_caps(ad);
	if (ret)
		goto err_close;
	dev->priv = ad;

	soft = ad->engine_kind == DRM_MXACCEL_ENGINE_SOFTWARE;
	snprintf(dev->info.name, sizeof(dev->info.name), "accel:%u",
		 dev->index);
	mxa__strlcpy(dev->info.backend, "accel", sizeof(dev->info.backend));
	if (soft)
		snprintf(dev->info.description, sizeof(dev->info.description),
			 "mxaccel software engine on %s (uapi %llu, %llu rings); conformance device: exact, no native kernels, never picked by auto",
			 ad->path, (unsigned long long)ad->uapi,
			 (unsigned long long)ad->rings);
	else
		snprintf(dev->info.description, sizeof(dev->info.description),
			 "mxaccel hardware engine on %s (uapi %llu, %llu rings, %llu MiB device memory); native GEMM, exact on request",
			 ad->path, (unsigned long long)ad->uapi,
			 (unsigned long long)ad->rings,
			 (unsigned long long)(ad->device_memory >> 20));
	dev->info.host_visible = 1;
	dev->info.conformance = soft;
	return 0;

err_close:
	close(ad->fd);
err_free:
	pthread_mutex_destroy(&ad->lock);
	free(ad);
	return ret;
}

static void accel_close(struct mxa_device *dev)
{
	struct accel_device *ad = accel_dev(dev);

	/* Fences hold their queue; the device's own reference goes here. */
	if (ad->queue)
		accel_queue_put(ad, ad->queue);
	close(ad->fd);
	pthread_mutex_destroy(&ad->lock);
	free(ad->handles);
	free(ad);
}

static int map_bo(struct accel_device *ad, struct mxa_buffer *buf,
		  uint32_t handle, uint64_t offset, size_t size)
{
	struct accel_bo *bo = calloc(1, sizeof(*bo));
	void *p;

	if (!bo)
		return -ENOMEM;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ad->fd,
		 (off_t)offset);
	if (p == MAP_FAILED) {
		free(bo);
		return mxa__err(-errno, "%s: mmap of %zu bytes: %s", ad->path,
				size, strerror(errno));
	}
	bo->handle = handle;
	bo->map_size = size;
	buf->priv = bo;
	buf->host = p;
	return 0;
}

/* Count one more buffer on handle; -ENOMEM leaves the count unchanged. */
static int handle_get(struct accel_device *ad, uint32_t handle)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&ad->lock);
	for (i = 0; i < ad->n_handles; i++)
		if (ad->handles[i].handle == handle)
			break;
	if (i < ad->n_handles) {
		ad->handles[i].refs++;
	} else {
		if (ad->n_handles == ad->cap_handles) {
			unsigned int cap = ad->cap_handles ? 2 * ad->cap_handles : 16;
			void *p = realloc(ad->handles, cap * sizeof(*ad->handles));

			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			ad->handles = p;
			ad->cap_handles = cap;
		}
		ad->handles[ad->n_handles++] =
			(struct accel_handle_ref){ .handle = handle, .refs = 1 };
	}
out:
	pthread_mutex_unlock(&ad->lock);
	return ret;
}

/* Drop one buffer's use of handle; GEM_CLOSE it with the last. */
static void handle_put(struct accel_device *ad, uint32_t handle)
{
	struct drm_gem_close gc = { .handle = handle };
	bool last = true;
	unsigned int i;

	pthread_mutex_lock(&ad->lock);
	for (i = 0; i < ad->n_handles; i++) {
		if (ad->handles[i].handle != handle)
			continue;
		last = !--ad->handles[i].refs;
		if (last)
			ad->handles[i] = ad->handles[--ad->n_handles];
		break;
	}
	pthread_mutex_unlock(&ad->lock);
	if (last)
		accel_ioctl(ad->fd, DRM_IOCTL_GEM_CLOSE, &gc);
}

static int accel_buf_alloc(struct mxa_buffer *buf)
{
	struct accel_device *ad = accel_dev(buf->dev);
	struct drm_mxaccel_bo_create bc = { .size = buf->size };
	int ret = accel_ioctl(ad->fd, DRM_IOCTL_MXACCEL_BO_CREATE, &bc);

	/* Above the device's MAX_BO_SIZE: as documented, -ENOMEM. */
	if (ret)
		return mxa__err(ret == -E2BIG ? -ENOMEM : ret,
				"%s: BO_CREATE of %zu bytes: %s", ad->path,
				buf->size, mxa_strerror(ret));
	ret = handle_get(ad, bc.handle);
	if (ret) {
		struct drm_gem_close gc = { .handle = bc.handle };

		accel_ioctl(ad->fd, DRM_IOCTL_GEM_CLOSE, &gc);
		return ret;
	}
	ret = map_bo(ad, buf, bc.handle, bc.mmap_offset, buf->size);
	if (ret)
		handle_put(ad, bc.handle);
	return ret;
}

static void accel_buf_free(struct mxa_buffer *buf)
{
	struct accel_device *ad = accel_dev(buf->dev);
	struct accel_bo *bo = accel_bo(buf);

	munmap(buf->host, bo->map_size);
	handle_put(ad, bo->handle);
	free(bo);
}

static int accel_buf_export(struct mxa_buffer *buf, int *fd)
{
	struct accel_device *ad = accel_dev(buf->dev);

	if (drmPrimeHandleToFD(ad->fd, accel_bo(buf)->handle,
			       DRM_CLOEXEC | DRM_RDWR, fd))
		return mxa__err(-errno, "%s: PRIME export: %s", ad->path,
				strerror(errno));
	return 0;
}

static int accel_buf_import(struct mxa_buffer *buf, int fd)
{
	struct accel_device *ad = accel_dev(buf->dev);
	struct drm_mxaccel_bo_info bi = { 0 };
	uint32_t handle;
	int ret;

	if (drmPrimeFDToHandle(ad->fd, fd, &handle))
		return mxa__err(-errno, "%s: PRIME import: %s", ad->path,
				strerror(errno));
	ret = handle_get(ad, handle);
	if (ret) {
		/* -ENOMEM comes only for a handle no buffer of ours holds. */
		struct drm_gem_close gc = { .handle = handle };

		accel_ioctl(ad->fd, DRM_IOCTL_GEM_CLOSE, &gc);
		return ret;
	}
	bi.handle = handle;
	ret = accel_ioctl(ad->fd, DRM_IOCTL_MXACCEL_BO_INFO, &bi);
	if (!ret) {
		buf->size = bi.size;
		ret = map_bo(ad, buf, handle, bi.mmap_offset, bi.size);
	}
	if (ret)
		handle_put(ad, handle);
	return ret;
}

/* What the device itself says it cannot do. */
static const char *accel_reject(struct mxa_device *dev,
				const struct mxa_op_desc *d)
{
	struct accel_device *ad = accel_dev(dev);
	uint32_t kind = d->op == MXA_OP_GEMM ? DRM_MXACCEL_OP_GEMM :
			DRM_MXACCEL_OP_QUANTIZE;

	if (!(ad->op_mask & (1ull << kind)))
		return "the device does not run this operation";
	if (d->op == MXA_OP_QUANTIZE &&
	    !(ad->quantize_scale_types & (1ull << d->a_scale_type)))
		return "the device's QUANTIZE writes no such scales (DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES; E8M0 only before uapi 4)";
	if (d->op == MXA_OP_GEMM &&
	    (!(ad->gemm_scale_types & (1ull << d->a_scale_type)) ||
	     !(ad->gemm_scale_types & (1ull << d->b_scale_type))))
		return ad->gemm_scale_types == 1ull << DRM_MXACCEL_SCALE_TYPE_E8M0 ?
		       "the device's GEMM takes E8M0 (MX) scales only (DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES)" :
		       "the device's GEMM does not take these scale types (DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES)";
	if (!(ad->elem_mask & (1ull << d->a_elem)) ||
	    (d->op == MXA_OP_GEMM && !(ad->elem_mask & (1ull << d->b_elem))))
		return "the device does not support this element type";
	if (d->op == MXA_OP_QUANTIZE && !(ad->mode_mask & (1ull << d->mode)))
		return "the device does not support this scale mode";
	if (d->m > ad->max_dim || d->n > ad->max_dim || d->k > ad->max_dim)
		return "a dimension is above the device's limit";
	return NULL;
}

/*
 * Host dequantization of the scale types the device's engine writes: a
 * device without NVFP4 quantization has no NVFP4 at all, and says so.
 */
static const char *accel_reject_dequantize(struct mxa_device *dev,
					   const struct mxa_op_desc *d)
{
	if (!(accel_dev(dev)->quantize_scale_types & (1ull << d->a_scale_type)))
		return "the device's engine has no such scales (DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES; E8M0 only before uapi 4)";
	return NULL;
}

/* The device's own kernels: a hardware engine's. */
static const char *accel_reject_native(struct mxa_device *dev,
				       const struct mxa_op_desc *d)
{
	if (accel_dev(dev)->engine_kind != DRM_MXACCEL_ENGINE_HARDWARE)
		return "the software engine has no native kernel";
	return accel_reject(dev, d);
}

/*
 * Dequantization is not a device op: exact, on the host, on the mapping,
 * through the core's functions (mxcore_nvfp4_dequantize() for UE4M3).
 */
static int accel_dequantize_host(struct mxa_device *dev,
				 const struct mxa_job *job)
{
	const struct mxa_matrix *m = &job->a;
	const struct mxa_dense *d = &job->dense;
	struct mxcore_geom g = mxa__geom(m);
	uint32_t block = mxcore_geom_block(&g), ts;
	bool nvfp4 = m->scale_type == MXA_SCALE_UE4M3;
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	enum mxcore_dtype dt = d->dtype == MXA_DTYPE_BF16 ? MXCORE_BF16 :
							    MXCORE_F32;
	const uint8_t *data = (const uint8_t *)m->data->host + m->data_offset;
	const uint8_t *scales = (const uint8_t *)m->scale->host +
				m->scale_offset;
	uint32_t r, i;

	(void)dev;
	memcpy(&ts, &m->tensor_scale, sizeof(ts));
	for (r = 0; r < m->rows; r++) {
		const uint8_t *row = data + mxcore_geom_data_offset(&g, r);
		uint8_t *out = (uint8_t *)d->buf->host + d->offset +
			       (size_t)r * mxa__dense_stride(d);

		for (i = 0; i < m->cols; i++) {
			uint8_t s = scales[mxcore_geom_scale_index(&g, r,
								   i / block)];
			uint8_t c = mxcore_get_code(elem, row, i);
			uint32_t v = nvfp4 ?
				     mxcore_nvfp4_dequantize(c, s, ts, dt) :
				     mxcore_dequantize(elem, c, s, dt);

			if (dt == MXCORE_BF16) {
				uint16_t h = (uint16_t)v;

				memcpy(out + 2 * (size_t)i, &h, 2);
			} else {
				memcpy(out + 4 * (size_t)i, &v, 4);
			}
		}
	}
	return 0;
}

static const struct mxa_kernel accel_kernels[] = {
	{
		.name = "accel-gemm-native",
		.summary = "the hardware engine's own GEMM, within the device's stated bound",
		.op = MXA_OP_GEMM,
		.native = true,
		.exact = false,
		.rank = 1,
		.reject = accel_reject_native,
	},
	{
		.name = "accel-quantize-native",
		.summary = "the hardware engine's quantization, bit-exact with torchao",
		.op = MXA_OP_QUANTIZE,
		.native = true,
		.exact = true,
		.rank = 1,
		.reject = accel_reject_native,
	},
	{
		.name = "accel-gemm",
		.summary = "the device's exact GEMM (integer block dots, one rounding): the software engine, or a hardware engine asked for it",
		.op = MXA_OP_GEMM,
		.native = false,
		.exact = true,
		.rank = 0,
		/* Where the device lists them (accel_reject()). */
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = accel_reject,
	},
	{
		.name = "accel-quantize",
		.summary = "the device's engine, bit-exact with torchao",
		.op = MXA_OP_QUANTIZE,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = accel_reject,
	},
	{
		.name = "accel-dequantize-host",
		.summary = "exact dequantization by the host CPU on the mapped buffer objects (not a device operation)",
		.op = MXA_OP_DEQUANTIZE,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = accel_reject_dequantize,
		.run = accel_dequantize_host,
	},
};

const struct mxa_backend mxa_accel_backend = {
	.name = "accel",
	.probe = accel_probe,
	.open = accel_open,
	.close = accel_close,
	.buf_alloc = accel_buf_alloc,
	.buf_free = accel_buf_free,
	.buf_export = accel_buf_export,
	.buf_import = accel_buf_import,
	.submit = accel_submit,
	.submit_wait = accel_submit_wait,
	.kernels = accel_kernels,
	.n_kernels = MXA_ARRAY_SIZE(accel_kernels),
};
