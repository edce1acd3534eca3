// SPDX-License-Identifier: MIT
/*
 * Devices: naming ("cpu", "accel:N", "cuda:N", "auto"), the backend table,
 * and MXACCEL_DEVICE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/*
 * In `auto` order: the first backend with a device wins.  cuda is the
 * plugin loader (plugin.c): without the plugin, a driver or a GPU it has
 * no devices, and its probe says why.
 */
static const struct mxa_backend *const backends[] = {
	&mxa_accel_backend,
	&mxa_cuda_backend,
	&mxa_cpu_backend,
};

MXA_EXPORT unsigned int mxa_backend_count(void)
{
	return MXA_ARRAY_SIZE(backends);
}

MXA_EXPORT int mxa_backend_info(unsigned int index,
				struct mxa_backend_info *out)
{
	if (!out)
		return mxa__err(-EINVAL, "backend_info: out is NULL");
	memset(out, 0, sizeof(*out));
	if (index >= MXA_ARRAY_SIZE(backends))
		return mxa__err(-EINVAL, "backend_info: index %u out of range",
				index);
	mxa__strlcpy(out->name, backends[index]->name, sizeof(out->name));
	out->devices = backends[index]->probe(out->reason,
					      sizeof(out->reason));
	out->available = out->devices > 0;
	return 0;
}

/* Split "kind[:N]" into a backend and an index. */
static int parse_name(const char *name, const struct mxa_backend **backend,
		      unsigned int *index)
{
	const char *colon = strchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);
	unsigned long n = 0;
	size_t i;

	if (colon) {
		char *end;

		if (!colon[1] || colon[1] == '-' || colon[1] == '+')
			return mxa__err(-EINVAL, "device '%s': bad index", name);
		n = strtoul(colon + 1, &end, 10);
		if (*end || n > 1024)
			return mxa__err(-EINVAL, "device '%s': bad index", name);
	}
	*index = (unsigned int)n;
	for (i = 0; i < MXA_ARRAY_SIZE(backends); i++) {
		if (strlen(backends[i]->name) == len &&
		    !strncmp(backends[i]->name, name, len)) {
			*backend = backends[i];
			return 0;
		}
	}
	return mxa__err(-EINVAL,
			"device '%s': unknown (use cpu, accel:N, cuda:N or auto)",
			name);
}

static int open_on(const struct mxa_backend *b, unsigned int index,
		   struct mxa_device **out)
{
	char reason[MXA_REASON_MAX] = "";
	struct mxa_device *dev;
	unsigned int count = b->probe(reason, sizeof(reason));
	int ret;

	if (index >= count)
		return mxa__err(-ENODEV, "%s:%u: no such device (%u found%s%s)",
				b->name, index, count, *reason ? ": " : "",
				reason);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->backend = b;
	dev->index = index;
	pthread_mutex_init(&dev->lock, NULL);
	ret = b->open(dev);
	if (ret) {
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		return mxa__err(ret, "%s:%u: open failed: %s", b->name, index,
				mxa_strerror(ret));
	}
	*out = dev;
	return 0;
}

/*
 * "auto": the first device in backend order (accelerators, then the CPU)
 * that is not a conformance device; a software-engine accel device is
 * exact but slower than the CPU's native path, so it is used only when
 * named.
 */
static int open_auto(struct mxa_device **out)
{
	int ret = -ENODEV;
	size_t i;

	for (i = 0; i < MXA_ARRAY_SIZE(backends); i++) {
		unsigned int n = backends[i]->probe(NULL, 0), d;

		for (d = 0; d < n; d++) {
			ret = open_on(backends[i], d, out);
			if (ret)
				continue;
			if (!(*out)->info.conformance) {
				mxa__dbg("auto: %s", (*out)->info.name);
				return 0;
			}
			mxa__dbg("auto: skipping %s, a conformance device",
				 (*out)->info.name);
			mxa_device_close(*out);
			*out = NULL;
			ret = -ENODEV;
		}
	}
	return mxa__err(ret, "auto: no device could be opened");
}

MXA_EXPORT int mxa_device_open(const char *name, struct mxa_device **out)
{
	const struct mxa_backend *b = NULL;
	unsigned int index = 0;
	int ret;

	if (!out)
		return mxa__err(-EINVAL, "device_open: out is NULL");
	*out = NULL;
	if (!name) {
		name = getenv("MXACCEL_DEVICE");
		if (name && !*name)
			name = NULL;
	}
	if (!name || !strcmp(name, "auto"))
		return open_auto(out);
	ret = parse_name(name, &b, &index);
	if (ret)
		return ret;
	return open_on(b, index, out);
}

MXA_EXPORT void mxa_device_close(struct mxa_device *dev)
{
	if (!dev)
		return;
	dev->backend->close(dev);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

MXA_EXPORT int mxa_device_info(struct mxa_device *dev,
			       struct mxa_device_info *out)
{
	if (!dev || !out)
		return mxa__err(-EINVAL, "device_info: NULL argument");
	*out = dev->info;
	return 0;
}

MXA_EXPORT int mxa_device_set_threads(struct mxa_device *dev,
				      unsigned int threads)
{
	if (!dev)
		return mxa__err(-EINVAL, "device_set_threads: dev is NULL");
	if (!dev->backend->set_threads)
		return mxa__err(-EOPNOTSUPP,
				"%s: the device has no worker threads to set",
				dev->info.name);
	return dev->backend->set_threads(dev, threads);
}

MXA_EXPORT int mxa_device_set_stream(struct mxa_device *dev, void *stream)
{
	if (!dev)
		return mxa__err(-EINVAL, "device_set_stream: dev is NULL");
	if (!dev->backend->set_stream) {
		if (!stream)
			return 0;
		return mxa__err(-EOPNOTSUPP,
				"device_set_stream: %s has no streams (only NULL is accepted)",
				dev->info.name);
	}
	return dev->backend->set_stream(dev, stream);
}

MXA_EXPORT int mxa_device_get_stream(struct mxa_device *dev, void **stream)
{
	if (!dev || !stream)
		return mxa__err(-EINVAL, "device_get_stream: NULL argument");
	*stream = dev->backend->get_stream ? dev->backend->get_stream(dev) :
		  NULL;
	return 0;
}
