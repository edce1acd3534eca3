// SPDX-License-Identifier: MIT
/*
 * mxaccel dequantize: MX element codes and scales back to fp32 or bf16
 * (bit-exact with torchao to_dtype).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel dequantize --elem E --rows R --cols C --data FILE --scale FILE\n"
"                          --out FILE [options]\n"
"\n"
"  --elem E            element type: e4m3 e5m2 e2m3 e3m2 e2m1\n"
"  --rows R            rows of the matrix\n"
"  --cols C            columns (K, contiguous), a multiple of 32\n"
"  --data FILE         element codes, R rows of C bytes (e2m1: C/2, packed)\n"
"  --scale FILE        E8M0 scales, R x C/32 bytes (plain)\n"
"  --scale-layout L    plain (default) or swizzled (128x4 tiles, padded)\n"
"  --out FILE          R x C values, row-major\n"
"  --out-dtype T       f32 (default) or bf16\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated\n";

int cmd_dequantize(int argc, char **argv)
{
	enum mxa_elem elem = MXA_ELEM_E4M3;
	enum mxa_dtype out_dtype = MXA_DTYPE_F32;
	enum mxa_scale_layout layout = MXA_LAYOUT_PLAIN;
	enum mxa_pref pref = MXA_PREF_AUTO;
	uint32_t rows = 0, cols = 0;
	const char *data = NULL, *scale = NULL, *out_path = NULL;
	const char *device = NULL;
	struct cli_opt opts[] = {
		CLI_REQUIRED("elem", CLI_ELEM, &elem),
		CLI_REQUIRED("rows", CLI_U32, &rows),
		CLI_REQUIRED("cols", CLI_U32, &cols),
		CLI_REQUIRED("data", CLI_STR, &data),
		CLI_REQUIRED("scale", CLI_STR, &scale),
		CLI_OPTION("scale-layout", CLI_LAYOUT, &layout),
		CLI_REQUIRED("out", CLI_STR, &out_path),
		CLI_OPTION("out-dtype", CLI_DTYPE, &out_dtype),
		CLI_OPTION("device", CLI_STR, &device),
		CLI_OPTION("kernel", CLI_PREF, &pref),
		CLI_END,
	};
	struct cli_out out = CLI_OUT_INIT;
	struct mxa_buffer *data_buf = NULL, *scale_buf = NULL, *out_buf = NULL;
	struct mxa_device *dev = NULL;
	size_t data_bytes, scale_bytes, out_bytes;
	struct mxa_op_desc desc;
	struct mxa_matrix src;
	struct mxa_dense dst;
	char what[128];
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	if (cli_check_k("cols", cols))
		return CLI_EXIT_ERROR;
	if (cli_data_bytes(elem, rows, cols, &data_bytes) ||
	    cli_scale_bytes(layout, rows, cols, &scale_bytes) ||
	    cli_dense_bytes(out_dtype, rows, cols, &out_bytes))
		return CLI_EXIT_ERROR;

	if (cli_device_open(device, &dev))
		return CLI_EXIT_ERROR;
	memset(&desc, 0, sizeof(desc));
	desc.op = MXA_OP_DEQUANTIZE;
	desc.a_elem = elem;
	desc.b_elem = elem;
	desc.dtype = out_dtype;
	desc.m = rows;
	desc.k = cols;
	ret = CLI_EXIT_ERROR;
	if (cli_check_support(dev, &desc, pref))
		goto out;

	snprintf(what, sizeof(what), "%u x %u %s codes", rows, cols,
		 mxa_elem_name(elem));
	if (cli_buffer_load(dev, "data", data, data_bytes, what, &data_buf))
		goto out;
	snprintf(what, sizeof(what), "%u x %u %s E8M0 scales", rows,
		 cols / MXA_BLOCK_SIZE, mxa_layout_name(layout));
	if (cli_buffer_load(dev, "scale", scale, scale_bytes, what,
			    &scale_buf) ||
	    cli_buffer_new(dev, out_bytes, &out_buf) ||
	    cli_out_open(&out, "out", out_path))
		goto out;

	src = (struct mxa_matrix) {
		.data = data_buf, .scale = scale_buf, .elem = elem,
		.scale_layout = layout, .rows = rows, .cols = cols,
	};
	dst = (struct mxa_dense) {
		.buf = out_buf, .dtype = out_dtype, .rows = rows, .cols = cols,
	};
	ret = mxa_dequantize(dev, &src, &dst, pref);
	if (ret) {
		cli_error("mxa_dequantize: %s", mxa_strerror(ret));
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	ret = CLI_EXIT_ERROR;
	if (cli_buffer_store(out_buf, &out) || cli_out_commit(&out, 1))
		goto out;
	ret = CLI_EXIT_OK;
out:
	cli_out_discard(&out);
	cli_buffer_free(out_buf);
	cli_buffer_free(scale_buf);
	cli_buffer_free(data_buf);
	cli_device_close(dev);
	return ret;
}
