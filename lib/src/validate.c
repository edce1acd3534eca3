// SPDX-License-Identifier: MIT
/*
 * Validation of matrix descriptors against their buffers, before anything
 * runs.  Every failure names the argument and the limit (MXACCEL_DEBUG=1).
 */
#include "backend.h"
#include "mxcore.h"

size_t mxa__data_stride(const struct mxa_matrix *m)
{
	return m->data_stride ? m->data_stride :
	       mxcore_row_bytes((enum mxcore_elem)m->elem, m->cols);
}

size_t mxa__scale_stride(const struct mxa_matrix *m)
{
	return m->scale_stride ? m->scale_stride : m->cols / MXA_BLOCK_SIZE;
}

size_t mxa__scale_index(const struct mxa_matrix *m, uint32_t row,
			uint32_t block)
{
	if (m->scale_layout == MXA_LAYOUT_SWIZZLED)
		return mxcore_swizzle_index(m->rows, m->cols / MXA_BLOCK_SIZE,
					    row, block);
	return (size_t)row * mxa__scale_stride(m) + block;
}

static size_t dtype_size(enum mxa_dtype dtype)
{
	return dtype == MXA_DTYPE_BF16 ? 2 : 4;
}

size_t mxa__dense_stride(const struct mxa_dense *d)
{
	return d->stride ? d->stride : (size_t)d->cols * dtype_size(d->dtype);
}

/* offset + (rows - 1) * stride + row_bytes <= size, without overflow. */
static int check_extent(const char *what, const char *field,
			const struct mxa_buffer *buf, size_t offset,
			uint32_t rows, size_t stride, size_t row_bytes)
{
	size_t end;

	if (__builtin_mul_overflow((size_t)(rows - 1), stride, &end) ||
	    __builtin_add_overflow(end, row_bytes, &end) ||
	    __builtin_add_overflow(end, offset, &end))
		return mxa__err(-EOVERFLOW, "%s: %s extent overflows size_t",
				what, field);
	if (end > buf->size)
		return mxa__err(-EOVERFLOW,
				"%s: %s needs %zu bytes (offset %zu), buffer has %zu",
				what, field, end, offset, buf->size);
	return 0;
}

static int check_buffer(struct mxa_device *dev, const char *what,
			const char *field, const struct mxa_buffer *buf)
{
	if (!buf)
		return mxa__err(-EINVAL, "%s: %s buffer is NULL", what, field);
	if (buf->dev != dev)
		return mxa__err(-EXDEV, "%s: %s buffer belongs to device %s, not %s",
				what, field, buf->dev->info.name,
				dev->info.name);
	return 0;
}

int mxa__check_matrix(struct mxa_device *dev, const char *what,
		      const struct mxa_matrix *m)
{
	size_t row_bytes, blocks, stride;
	int ret;

	if (!m)
		return mxa__err(-EINVAL, "%s: matrix is NULL", what);
	ret = check_buffer(dev, what, "data", m->data);
	if (!ret)
		ret = check_buffer(dev, what, "scale", m->scale);
	if (ret)
		return ret;
	if (!mxcore_elem_valid(m->elem))
		return mxa__err(-EINVAL, "%s: unknown element type %d", what,
				(int)m->elem);
	if (m->scale_layout != MXA_LAYOUT_PLAIN &&
	    m->scale_layout != MXA_LAYOUT_SWIZZLED)
		return mxa__err(-EINVAL, "%s: unknown scale layout %d", what,
				(int)m->scale_layout);
	if (!m->rows || !m->cols)
		return mxa__err(-EINVAL, "%s: rows (%u) and cols (%u) must be > 0",
				what, m->rows, m->cols);
	if (m->cols % MXA_BLOCK_SIZE)
		return mxa__err(-EINVAL,
				"%s: cols (K) = %u is not a multiple of 32",
				what, m->cols);

	row_bytes = mxcore_row_bytes((enum mxcore_elem)m->elem, m->cols);
	stride = mxa__data_stride(m);
	if (stride < row_bytes)
		return mxa__err(-EINVAL,
				"%s: data_stride %zu is less than a row (%zu bytes)",
				what, stride, row_bytes);
	ret = check_extent(what, "data", m->data, m->data_offset, m->rows,
			   stride, row_bytes);
	if (ret)
		return ret;

	blocks = m->cols / MXA_BLOCK_SIZE;
	if (m->scale_layout == MXA_LAYOUT_SWIZZLED) {
		if (m->scale_stride)
			return mxa__err(-EINVAL,
					"%s: scale_stride must be 0 for the swizzled layout",
					what);
		return check_extent(what, "scale", m->scale, m->scale_offset,
				    1, 0, mxcore_swizzle_bytes(m->rows, blocks));
	}
	stride = mxa__scale_stride(m);
	if (stride < blocks)
		return mxa__err(-EINVAL,
				"%s: scale_stride %zu is less than a row of scales (%zu)",
				what, stride, blocks);
	return check_extent(what, "scale", m->scale, m->scale_offset, m->rows,
			    stride, blocks);
}

int mxa__check_dense(struct mxa_device *dev, const char *what,
		     const struct mxa_dense *d)
{
	size_t row_bytes, stride;
	int ret;

	if (!d)
		return mxa__err(-EINVAL, "%s: matrix is NULL", what);
	ret = check_buffer(dev, what, "dense", d->buf);
	if (ret)
		return ret;
	if (d->dtype != MXA_DTYPE_F32 && d->dtype != MXA_DTYPE_BF16)
		return mxa__err(-EINVAL, "%s: unknown dtype %d", what,
				(int)d->dtype);
	if (!d->rows || !d->cols)
		return mxa__err(-EINVAL, "%s: rows (%u) and cols (%u) must be > 0",
				what, d->rows, d->cols);
	row_bytes = (size_t)d->cols * dtype_size(d->dtype);
	stride = mxa__dense_stride(d);
	if (stride < row_bytes)
		return mxa__err(-EINVAL,
				"%s: stride %zu is less than a row (%zu bytes)",
				what, stride, row_bytes);
	if ((d->offset | stride) % dtype_size(d->dtype))
		return mxa__err(-EINVAL,
				"%s: offset %zu and stride %zu must be multiples of %zu",
				what, d->offset, stride, dtype_size(d->dtype));
	return check_extent(what, "dense", d->buf, d->offset, d->rows, stride,
			    row_bytes);
}
