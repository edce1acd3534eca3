// SPDX-License-Identifier: MIT
/*
 * mxa_quantize() and mxa_dequantize() validation: a valid request succeeds
 * under each preference (NATIVE where the device has the kernel), and each
 * misuse (NULL arguments, unknown modes, dtypes, elements and preferences,
 * mismatched shapes, K not a multiple of 32, buffers too small and size_t
 * wrap, misaligned or short strides, outputs overlapping the input or each
 * other) returns the documented errno.  One invalid field per check, on an
 * otherwise valid request.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "testlib.h"

static struct mxa_device *dev;

static void test_quantize_validation(void)
{
	struct mxa_buffer *src_buf, *data, *scale, *out;
	struct mxa_dense src, dd;
	struct mxa_matrix m, q;
	struct mxa_dense s;
	float in[2 * 64];
	unsigned int i;

	for (i = 0; i < 128; i++)
		in[i] = (float)i - 60.0f;
	if (mxa_buffer_alloc(dev, sizeof(in), &src_buf) ||
	    mxa_buffer_alloc(dev, 128, &data) ||
	    mxa_buffer_alloc(dev, 4, &scale) ||
	    mxa_buffer_alloc(dev, sizeof(in), &out)) {
		CHECK(0, "cannot allocate");
		return;
	}
	mxa_buffer_write(src_buf, 0, in, sizeof(in));
	src = (struct mxa_dense){ .buf = src_buf, .dtype = MXA_DTYPE_F32,
				  .rows = 2, .cols = 64 };
	dd = (struct mxa_dense){ .buf = out, .dtype = MXA_DTYPE_F32,
				 .rows = 2, .cols = 64 };
	m = (struct mxa_matrix){ .data = data, .scale = scale,
				 .elem = MXA_ELEM_E4M3, .rows = 2, .cols = 64 };

	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR, 0), 0);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, 0), 0);
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR,
			       MXA_PREF_NATIVE), test_native_ret(dev, MXA_OP_QUANTIZE));
	CHECK_RET(mxa_dequantize(dev, &m, &dd, MXA_PREF_NATIVE),
		  test_native_ret(dev, MXA_OP_DEQUANTIZE));
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR,
			       MXA_PREF_EMULATED), 0);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, MXA_PREF_EMULATED), 0);
	CHECK_RET(mxa_quantize(NULL, &src, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, NULL, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, NULL, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, 4, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, (enum mxa_scale_mode)-1, 0),
		  -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR, 3), -EINVAL);
	s = src;
	s.dtype = 7;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.rows = 1;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.cols = 32;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	s = src;
	q.cols = s.cols = 40;
	CHECK_RET(mxa_quantize(dev, &s, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	q.elem = 0;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	q.scale_offset = 1;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	q = m;
	q.scale_layout = MXA_LAYOUT_SWIZZLED;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	s = src;
	s.stride = 4 * 64 - 4;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.offset = SIZE_MAX - 7;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	/* Quantizing into the source buffer's own bytes. */
	q = m;
	q.data = src_buf;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	/* data and scales overlapping each other. */
	q = m;
	q.scale = data;
	q.scale_offset = 120;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);

	CHECK_RET(mxa_dequantize(NULL, &m, &dd, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, NULL, &dd, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, &m, NULL, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, 9), -EINVAL);
	s = dd;
	s.cols = 32;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EINVAL);
	s = dd;
	s.dtype = MXA_DTYPE_BF16;
	s.offset = 1;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EINVAL);
	s = dd;
	s.offset = 4;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EOVERFLOW);
	q = m;
	q.data_stride = 1;
	CHECK_RET(mxa_dequantize(dev, &q, &dd, 0), -EINVAL);
	s = dd;
	s.buf = data;				/* over its own codes */
	s.dtype = MXA_DTYPE_BF16;
	s.rows = 1;
	q = m;
	q.rows = 1;
	CHECK_RET(mxa_dequantize(dev, &q, &s, 0), -EINVAL);

	mxa_buffer_free(src_buf);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
	mxa_buffer_free(out);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	test_quantize_validation();
	mxa_device_close(dev);
	return test_finish();
}
