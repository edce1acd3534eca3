// SPDX-License-Identifier: MIT
/*
 * Buffers: memory that lives on a device.  Host-visible devices map it;
 * read/write copy for every device.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

MXA_EXPORT int mxa_buffer_alloc(struct mxa_device *dev, size_t size,
				struct mxa_buffer **out)
{
	struct mxa_buffer *buf;
	int ret;

	if (!dev || !out)
		return mxa__err(-EINVAL, "buffer_alloc: NULL argument");
	*out = NULL;
	if (!size)
		return mxa__err(-EINVAL, "buffer_alloc: size is 0");
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	buf->dev = dev;
	buf->size = size;
	ret = dev->backend->buf_alloc(buf);
	if (ret) {
		free(buf);
		return mxa__err(ret, "buffer_alloc: %zu bytes on %s: %s", size,
				dev->info.name, mxa_strerror(ret));
	}
	*out = buf;
	return 0;
}

MXA_EXPORT int mxa_buffer_wrap(struct mxa_device *dev, void *ptr, size_t size,
			       struct mxa_buffer **out)
{
	struct mxa_buffer *buf;

	if (!dev || !ptr || !out)
		return mxa__err(-EINVAL, "buffer_wrap: NULL argument");
	*out = NULL;
	if (!size)
		return mxa__err(-EINVAL, "buffer_wrap: size is 0");
	if (!dev->backend->wraps_host && !dev->backend->buf_wrap)
		return mxa__err(-EOPNOTSUPP,
				"buffer_wrap: %s cannot use host memory; allocate its buffers",
				dev->info.name);
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	buf->dev = dev;
	buf->size = size;
	buf->wrapped = true;
	if (dev->backend->buf_wrap) {
		/* Device memory (cuda): the backend checks it is dev's own. */
		int ret = dev->backend->buf_wrap(buf, ptr);

		if (ret) {
			free(buf);
			return ret;
		}
	} else {
		buf->host = ptr;
	}
	*out = buf;
	return 0;
}

MXA_EXPORT void mxa_buffer_free(struct mxa_buffer *buf)
{
	if (!buf)
		return;
	if (!buf->wrapped)
		buf->dev->backend->buf_free(buf);
	free(buf);
}

MXA_EXPORT size_t mxa_buffer_size(const struct mxa_buffer *buf)
{
	return buf ? buf->size : 0;
}

MXA_EXPORT int mxa_buffer_map(struct mxa_buffer *buf, void **ptr)
{
	if (!buf || !ptr)
		return mxa__err(-EINVAL, "buffer_map: NULL argument");
	if (!buf->host)
		return mxa__err(-EOPNOTSUPP,
				"buffer_map: %s buffers are not host visible",
				buf->dev->info.name);
	*ptr = buf->host;
	return 0;
}

/* Copy for a buffer without a host mapping, through its backend. */
static int host_copy(struct mxa_buffer *buf, size_t offset, void *host,
		     size_t size, bool to_device)
{
	const struct mxa_backend *b = buf->dev->backend;

	if (!b->buf_copy)
		return mxa__err(-EOPNOTSUPP, "%s: buffer has no host path",
				buf->dev->info.name);
	return b->buf_copy(buf, offset, host, size, to_device);
}

static int check_range(const char *what, const struct mxa_buffer *buf,
		       size_t offset, size_t size)
{
	size_t end;

	if (__builtin_add_overflow(offset, size, &end) || end > buf->size)
		return mxa__err(-EOVERFLOW,
				"%s: offset %zu + size %zu is past the buffer end (%zu)",
				what, offset, size, buf->size);
	return 0;
}

MXA_EXPORT int mxa_buffer_write(struct mxa_buffer *buf, size_t offset,
				const void *src, size_t size)
{
	int ret;

	if (!buf || (!src && size))
		return mxa__err(-EINVAL, "buffer_write: NULL argument");
	ret = check_range("buffer_write", buf, offset, size);
	if (ret || !size)
		return ret;
	if (!buf->host)
		return host_copy(buf, offset, (void *)src, size, true);
	memcpy((char *)buf->host + offset, src, size);
	return 0;
}

MXA_EXPORT int mxa_buffer_read(struct mxa_buffer *buf, size_t offset,
			       void *dst, size_t size)
{
	int ret;

	if (!buf || (!dst && size))
		return mxa__err(-EINVAL, "buffer_read: NULL argument");
	ret = check_range("buffer_read", buf, offset, size);
	if (ret || !size)
		return ret;
	if (!buf->host)
		return host_copy(buf, offset, dst, size, false);
	memcpy(dst, (const char *)buf->host + offset, size);
	return 0;
}

MXA_EXPORT int mxa_buffer_export_dmabuf(struct mxa_buffer *buf, int *fd)
{
	if (!buf || !fd)
		return mxa__err(-EINVAL, "buffer_export_dmabuf: NULL argument");
	if (!buf->dev->backend->buf_export || buf->wrapped)
		return mxa__err(-EOPNOTSUPP,
				"buffer_export_dmabuf: %s buffers cannot be shared as dma-bufs",
				buf->dev->info.name);
	return buf->dev->backend->buf_export(buf, fd);
}

MXA_EXPORT int mxa_buffer_import_dmabuf(struct mxa_device *dev, int fd,
					struct mxa_buffer **out)
{
	struct mxa_buffer *buf;
	int ret;

	if (!dev || !out)
		return mxa__err(-EINVAL, "buffer_import_dmabuf: NULL argument");
	*out = NULL;
	if (fd < 0)
		return mxa__err(-EBADF, "buffer_import_dmabuf: fd %d", fd);
	if (!dev->backend->buf_import)
		return mxa__err(-EOPNOTSUPP,
				"buffer_import_dmabuf: %s cannot import dma-bufs",
				dev->info.name);
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	buf->dev = dev;
	ret = dev->backend->buf_import(buf, fd);
	if (ret) {
		free(buf);
		return mxa__err(ret, "buffer_import_dmabuf: %s",
				mxa_strerror(ret));
	}
	*out = buf;
	return 0;
}
