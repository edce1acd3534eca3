// SPDX-License-Identifier: MIT
/*
 * mxaccel dequantize: MX element codes and scales back to fp32 or bf16
 * (bit-exact with torchao to_dtype), or NVFP4 ones (--recipe nvfp4,
 * bit-exact with torchao NVFP4Tensor.dequantize).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel dequantize --elem E | --recipe NAME --rows R --cols C\n"
"                          --data FILE --scale FILE\n"
"                          --out FILE [options]\n"
"\n"
"  --elem E            element type: e4m3 e5m2 e2m3 e3m2 e2m1\n"
"  --recipe NAME       sets --elem and the scale type (nvfp4: e2m1, UE4M3)\n"
"  --tensor-scale X    nvfp4 only: the fp32 per-tensor scale of two-level\n"
"                      scaling (decimal or C99 hex float)\n"
"  --rows R            rows of the matrix\n"
"  --cols C            columns (K, contiguous), a multiple of 32 (nvfp4: 16)\n"
"  --data FILE         element codes, R rows of C bytes (e2m1: C/2, packed)\n"
"  --scale FILE        scales, R x C/32 bytes (nvfp4: R x C/16 UE4M3) (plain)\n"
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
	const char *device = NULL, *tensor_scale = NULL;
	enum mxa_scale_mode mode = MXA_SCALE_FLOOR;
	struct mxa_recipe recipe;
	struct cli_opt opts[] = {
		CLI_OPTION("elem", CLI_ELEM, &elem),
		CLI_OPTION("recipe", CLI_RECIPE, &recipe),
		CLI_OPTION("tensor-scale", CLI_STR, &tensor_scale),
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
	enum mxa_scale_type st;
	struct mxa_op_desc desc;
	struct mxa_matrix src;
	struct mxa_dense dst;
	char what[128];
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	if (cli_matrix_of(opts, false, elem, &mode, layout, rows, cols, &src))
		return CLI_EXIT_ERROR;
	elem = src.elem;
	st = src.scale_type;
	if (cli_matrix_bytes(&src, &data_bytes, &scale_bytes) ||
	    cli_dense_bytes(out_dtype, rows, cols, &out_bytes))
		return CLI_EXIT_ERROR;

	if (cli_device_open(device, &dev))
		return CLI_EXIT_ERROR;
	memset(&desc, 0, sizeof(desc));
	desc.op = MXA_OP_DEQUANTIZE;
	desc.a_elem = elem;
	desc.b_elem = elem;
	desc.dtype = out_dtype;
	desc.a_scale_type = st;
	desc.m = rows;
	desc.k = cols;
	ret = CLI_EXIT_ERROR;
	if (cli_check_support(dev, &desc, pref))
		goto out;

	snprintf(what, sizeof(what), "%u x %u %s codes", rows, cols,
		 mxa_elem_name(elem));
	if (cli_buffer_load(dev, "data", data, data_bytes, what, &data_buf))
		goto out;
	snprintf(what, sizeof(what), "%u x %u %s %s scales", rows,
		 cols / (st == MXA_SCALE_UE4M3 ? MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE), mxa_layout_name(layout),
		 st == MXA_SCALE_UE4M3 ? "UE4M3" : "E8M0");
	if (cli_buffer_load(dev, "scale", scale, scale_bytes, what,
			    &scale_buf) ||
	    cli_buffer_new(dev, out_bytes, &out_buf) ||
	    cli_out_open(&out, "out", out_path))
		goto out;

	src.data = data_buf;
	src.scale = scale_buf;
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
