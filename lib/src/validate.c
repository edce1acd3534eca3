// SPDX-License-Identifier: MIT
/*
 * Validation of matrix descriptors against their buffers, before anything
 * runs.  Every failure names the argument and the limit (MXACCEL_DEBUG=1).
 * The rules themselves are the core's (mxcore_geom.h), shared with the
 * driver and the CUDA plugin.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"

/* offset + span <= size, without overflow. */
static int check_extent(const char *what, const char *field,
			const struct mxa_buffer *buf, size_t offset,
			bool span_ok, uint64_t span)
{
	size_t end;

	if (!span_ok || span > SIZE_MAX ||
	    __builtin_add_overflow((size_t)span, offset, &end))
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

/*
 * A per-tensor scale is a positive finite fp32 (normal or subnormal), and
 * only UE4M3 operands (NVFP4's second level) have one.
 */
static int check_tensor_scale(const char *what, const struct mxa_matrix *m)
{
	uint32_t bits;

	memcpy(&bits, &m->tensor_scale, sizeof(bits));
	if (!bits)
		return 0;
	if (m->scale_type != MXA_SCALE_UE4M3)
		return mxa__err(-EINVAL,
				"%s: tensor_scale %g with %s scales: only UE4M3 (NVFP4) scales take one",
				what, (double)m->tensor_scale,
				mxa_scale_type_name(m->scale_type) ?
				mxa_scale_type_name(m->scale_type) : "unknown");
	if (bits >= 0x7f800000u)
		return mxa__err(-EINVAL,
				"%s: tensor_scale 0x%08x is not a positive finite float",
				what, bits);
	return 0;
}

int mxa__matrix_shape_check(const char *what, const struct mxa_matrix *m)
{
	struct mxcore_geom g;
	enum mxcore_geom_fault f;
	uint64_t value, limit;
	char text[160];
	unsigned int i;

	for (i = 0; i < MXA_ARRAY_SIZE(m->reserved); i++)
		if (m->reserved[i])
			return mxa__err(-EINVAL, "%s: reserved[%u] is not 0",
					what, i);
	g = mxa__geom(m);
	f = mxcore_geom_check(&g, &value, &limit);
	if (f) {
		snprintf(text, sizeof(text), mxcore_geom_fault_text(f),
			 (unsigned long long)value, (unsigned long long)limit);
		return mxa__err(-EINVAL, "%s: %s", what, text);
	}
	return check_tensor_scale(what, m);
}

int mxa__check_matrix(struct mxa_device *dev, const char *what,
		      const struct mxa_matrix *m)
{
	struct mxcore_geom g;
	uint64_t span = 0;
	bool ok;
	int ret;

	if (!m)
		return mxa__err(-EINVAL, "%s: matrix is NULL", what);
	ret = check_buffer(dev, what, "data", m->data);
	if (!ret)
		ret = check_buffer(dev, what, "scale", m->scale);
	if (!ret)
		ret = mxa__matrix_shape_check(what, m);
	if (ret)
		return ret;
	g = mxa__geom(m);
	ok = mxcore_geom_data_span(&g, &span);
	ret = check_extent(what, "data", m->data, m->data_offset, ok, span);
	if (ret)
		return ret;
	ok = mxcore_geom_scale_span(&g, &span);
	return check_extent(what, "scale", m->scale, m->scale_offset, ok,
			    span);
}

int mxa__check_dense(struct mxa_device *dev, const char *what,
		     const struct mxa_dense *d)
{
	size_t row_bytes, stride, es;
	uint64_t span = 0;
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
	es = mxcore_dtype_size(d->dtype);
	row_bytes = (size_t)d->cols * es;
	stride = mxa__dense_stride(d);
	if (stride < row_bytes)
		return mxa__err(-EINVAL,
				"%s: stride %zu is less than a row (%zu bytes)",
				what, stride, row_bytes);
	if ((d->offset | stride) % es)
		return mxa__err(-EINVAL,
				"%s: offset %zu and stride %zu must be multiples of %zu",
				what, d->offset, stride, es);
	span = (uint64_t)(d->rows - 1) * stride;
	return check_extent(what, "dense", d->buf, d->offset,
			    span / stride == d->rows - 1 &&
			    span + row_bytes >= span, span + row_bytes);
}
