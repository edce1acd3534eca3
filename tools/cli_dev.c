// SPDX-License-Identifier: MIT
/*
 * Devices and device buffers for the CLI.  Files are moved through
 * mxa_buffer_map() when the device's memory is host visible (no extra
 * copy) and through mxa_buffer_write()/mxa_buffer_read() otherwise, so the
 * subcommands work unchanged on any device.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_device_open(const char *name, struct mxa_device **dev)
{
	const char *env;
	int ret;

	ret = mxa_device_open(name, dev);
	if (!ret)
		return 0;
	env = getenv("MXACCEL_DEVICE");
	if (name)
		cli_error("--device %s: cannot open: %s", name,
			  mxa_strerror(ret));
	else if (env)
		cli_error("cannot open the device MXACCEL_DEVICE=%s names: %s",
			  env, mxa_strerror(ret));
	else
		cli_error("cannot open a device (try --device cpu): %s",
			  mxa_strerror(ret));
	return -1;
}

void cli_device_close(struct mxa_device *dev)
{
	if (dev)
		mxa_device_close(dev);
}

void cli_buffer_free(struct mxa_buffer *buf)
{
	if (buf)
		mxa_buffer_free(buf);
}

int cli_buffer_new(struct mxa_device *dev, size_t size,
		   struct mxa_buffer **buf)
{
	void *ptr;
	int ret;

	ret = mxa_buffer_alloc(dev, size, buf);
	if (ret) {
		cli_error("cannot allocate a %zu-byte device buffer: %s", size,
			  mxa_strerror(ret));
		return -1;
	}
	/* Padding in outputs (swizzled scales) must not leak old memory. */
	if (!mxa_buffer_map(*buf, &ptr)) {
		memset(ptr, 0, size);
		return 0;
	}
	ptr = calloc(1, size);
	if (!ptr) {
		cli_error("out of memory (%zu bytes)", size);
		goto err_free;
	}
	ret = mxa_buffer_write(*buf, 0, ptr, size);
	free(ptr);
	if (ret) {
		cli_error("cannot clear a device buffer: %s",
			  mxa_strerror(ret));
		goto err_free;
	}
	return 0;
err_free:
	mxa_buffer_free(*buf);
	*buf = NULL;
	return -1;
}

int cli_buffer_load(struct mxa_device *dev, const char *opt, const char *path,
		    size_t size, const char *what, struct mxa_buffer **buf)
{
	struct cli_in in;
	void *ptr = NULL;
	int ret;

	*buf = NULL;
	if (cli_in_open(&in, opt, path, size, what))
		return -1;
	ret = mxa_buffer_alloc(dev, size, buf);
	if (ret) {
		cli_error("--%s %s: cannot allocate a %zu-byte device buffer: %s",
			  opt, path, size, mxa_strerror(ret));
		*buf = NULL;
		goto err;
	}
	if (!mxa_buffer_map(*buf, &ptr)) {
		if (cli_in_read(&in, ptr))
			goto err;
		cli_in_close(&in);
		return 0;
	}
	ptr = malloc(size);
	if (!ptr) {
		cli_error("--%s %s: out of memory (%zu bytes)", opt, path,
			  size);
		goto err;
	}
	if (cli_in_read(&in, ptr))
		goto err_host;
	ret = mxa_buffer_write(*buf, 0, ptr, size);
	if (ret) {
		cli_error("--%s %s: cannot copy to the device: %s", opt, path,
			  mxa_strerror(ret));
		goto err_host;
	}
	free(ptr);
	cli_in_close(&in);
	return 0;
err_host:
	free(ptr);
err:
	cli_in_close(&in);
	cli_buffer_free(*buf);
	*buf = NULL;
	return -1;
}

int cli_buffer_store(struct mxa_buffer *buf, struct cli_out *out)
{
	size_t size = mxa_buffer_size(buf);
	void *ptr;
	int ret;

	if (!mxa_buffer_map(buf, &ptr))
		return cli_out_write(out, ptr, size);
	ptr = malloc(size);
	if (!ptr) {
		cli_error("--%s %s: out of memory (%zu bytes)", out->opt,
			  out->path, size);
		return -1;
	}
	ret = mxa_buffer_read(buf, 0, ptr, size);
	if (ret) {
		cli_error("--%s %s: cannot copy from the device: %s", out->opt,
			  out->path, mxa_strerror(ret));
		free(ptr);
		return -1;
	}
	ret = cli_out_write(out, ptr, size);
	free(ptr);
	return ret;
}

int cli_check_support(struct mxa_device *dev, const struct mxa_op_desc *desc,
		      enum mxa_pref pref)
{
	struct mxa_capability cap;
	const char *env;
	int ret;

	memset(&cap, 0, sizeof(cap));
	ret = mxa_query(dev, desc, pref, &cap);
	if (ret) {
		env = getenv("MXACCEL_KERNEL");
		/* The override applies to every request; name it. */
		if (env && *env)
			cli_error("mxa_query: %s (with MXACCEL_KERNEL=%s)",
				  mxa_strerror(ret), env);
		else
			cli_error("mxa_query: %s", mxa_strerror(ret));
		return -1;
	}
	if (cap.support == MXA_SUPPORT_NONE) {
		cli_error("--kernel %s: %s", mxa_pref_name(pref),
			  cap.reason[0] ? cap.reason :
			  "not supported on this device");
		return -1;
	}
	return 0;
}

int cli_explain(struct mxa_device *dev, const struct mxa_op_desc *desc,
		enum mxa_pref pref)
{
	struct mxa_plan plan;
	int ret;

	memset(&plan, 0, sizeof(plan));
	ret = mxa_plan(dev, desc, pref, &plan);
	if (ret) {
		cli_error("--kernel %s: mxa_plan: %s", mxa_pref_name(pref),
			  mxa_strerror(ret));
		return -1;
	}
	printf("device: %s\n", plan.device);
	printf("kernel: %s\n", plan.kernel);
	printf("support: %s\n", mxa_support_name(plan.support));
	printf("pref: %s\n", mxa_pref_name(plan.pref));
	printf("exact: %s\n", plan.exact ? "yes" : "no");
	printf("reason: %s\n", plan.reason);
	fflush(stdout);
	return 0;
}

static int mul_size(size_t a, size_t b, size_t *out)
{
	if (__builtin_mul_overflow(a, b, out)) {
		cli_error("matrix too large (%zu x %zu bytes overflows)", a, b);
		return -1;
	}
	return 0;
}

int cli_dense_bytes(enum mxa_dtype dtype, uint32_t rows, uint32_t cols,
		    size_t *out)
{
	size_t row = (size_t)cols * (dtype == MXA_DTYPE_BF16 ? 2 : 4);

	return mul_size(rows, row, out);
}

int cli_data_bytes(enum mxa_elem elem, uint32_t rows, uint32_t cols,
		   size_t *out)
{
	size_t row;
	int ret;

	ret = mxa_data_row_bytes(elem, cols, &row);
	if (ret) {
		cli_error("mxa_data_row_bytes(%s, %u): %s", mxa_elem_name(elem),
			  cols, mxa_strerror(ret));
		return -1;
	}
	return mul_size(rows, row, out);
}

int cli_scale_bytes(enum mxa_scale_layout layout, uint32_t rows,
		    uint32_t cols, size_t *out)
{
	int ret;

	ret = mxa_scale_bytes(layout, rows, cols, out);
	if (ret) {
		cli_error("mxa_scale_bytes(%s, %u, %u): %s",
			  mxa_layout_name(layout), rows, cols,
			  mxa_strerror(ret));
		return -1;
	}
	return 0;
}
