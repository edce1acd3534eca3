// SPDX-License-Identifier: MIT
/*
 * mxaccel quantize: an fp32 or bf16 matrix file to MX element codes and
 * E8M0 scales (bit-exact with torchao to_mx), or to NVFP4 codes and UE4M3
 * scales (--recipe nvfp4, bit-exact with torchao nvfp4_quantize).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel quantize --elem E --mode M --rows R --cols C --in FILE\n"
"                        --out-data FILE --out-scale FILE [options]\n"
"\n"
"  --elem E            element type: e4m3 e5m2 e2m3 e3m2 e2m1\n"
"  --mode M            scale mode: floor rceil ceil even (E8M0), nvfp4 (UE4M3)\n"
"  --recipe NAME       sets --elem and --mode (e.g. mxfp8, mxfp4_rceil, nvfp4)\n"
"  --tensor-scale X    nvfp4 only: the fp32 per-tensor scale of two-level\n"
"                      scaling (decimal or C99 hex float)\n"
"  --rows R            rows of the matrix\n"
"  --cols C            columns (K, contiguous), a multiple of 32 (nvfp4: 16)\n"
"  --in FILE           R x C values, row-major\n"
"  --in-dtype T        f32 (default) or bf16\n"
"  --out-data FILE     element codes, R rows of C bytes (e2m1: C/2, packed)\n"
"  --out-scale FILE    scales, R x C/32 bytes (nvfp4: R x C/16 UE4M3) (plain)\n"
"  --scale-layout L    plain (default) or swizzled (128x4 tiles, padded)\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated\n";

int cmd_quantize(int argc, char **argv)
{
	enum mxa_elem elem = MXA_ELEM_E4M3;
	enum mxa_scale_mode mode = MXA_SCALE_FLOOR;
	enum mxa_dtype in_dtype = MXA_DTYPE_F32;
	enum mxa_scale_layout layout = MXA_LAYOUT_PLAIN;
	enum mxa_pref pref = MXA_PREF_AUTO;
	struct mxa_recipe recipe;
	uint32_t rows = 0, cols = 0;
	const char *in = NULL, *out_data = NULL, *out_scale = NULL;
	const char *device = NULL, *tensor_scale = NULL;
	struct cli_opt opts[] = {
		CLI_OPTION("elem", CLI_ELEM, &elem),
		CLI_OPTION("mode", CLI_MODE, &mode),
		CLI_OPTION("recipe", CLI_RECIPE, &recipe),
		CLI_OPTION("tensor-scale", CLI_STR, &tensor_scale),
		CLI_REQUIRED("rows", CLI_U32, &rows),
		CLI_REQUIRED("cols", CLI_U32, &cols),
		CLI_REQUIRED("in", CLI_STR, &in),
		CLI_OPTION("in-dtype", CLI_DTYPE, &in_dtype),
		CLI_REQUIRED("out-data", CLI_STR, &out_data),
		CLI_REQUIRED("out-scale", CLI_STR, &out_scale),
		CLI_OPTION("scale-layout", CLI_LAYOUT, &layout),
		CLI_OPTION("device", CLI_STR, &device),
		CLI_OPTION("kernel", CLI_PREF, &pref),
		CLI_END,
	};
	struct cli_out outs[2] = { CLI_OUT_INIT, CLI_OUT_INIT };
	struct mxa_buffer *src_buf = NULL, *data_buf = NULL, *scale_buf = NULL;
	struct mxa_device *dev = NULL;
	size_t in_bytes, data_bytes, scale_bytes;
	enum mxa_scale_type st;
	struct mxa_op_desc desc;
	struct mxa_dense src;
	struct mxa_matrix dst;
	char what[128];
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	if (cli_matrix_of(opts, true, elem, &mode, layout, rows, cols, &dst))
		return CLI_EXIT_ERROR;
	elem = dst.elem;
	st = dst.scale_type;
	if (!strcmp(out_data, out_scale)) {
		cli_error("--out-data and --out-scale both name %s", out_data);
		return CLI_EXIT_ERROR;
	}
	if (cli_dense_bytes(in_dtype, rows, cols, &in_bytes) ||
	    cli_matrix_bytes(&dst, &data_bytes, &scale_bytes))
		return CLI_EXIT_ERROR;

	if (cli_device_open(device, &dev))
		return CLI_EXIT_ERROR;
	memset(&desc, 0, sizeof(desc));
	desc.op = MXA_OP_QUANTIZE;
	desc.a_elem = elem;
	desc.b_elem = elem;
	desc.dtype = in_dtype;
	desc.mode = mode;
	desc.a_scale_type = st;
	desc.m = rows;
	desc.k = cols;
	ret = CLI_EXIT_ERROR;
	if (cli_check_support(dev, &desc, pref))
		goto out;

	snprintf(what, sizeof(what), "%u x %u %s values", rows, cols,
		 mxa_dtype_name(in_dtype));
	if (cli_buffer_load(dev, "in", in, in_bytes, what, &src_buf) ||
	    cli_buffer_new(dev, data_bytes, &data_buf) ||
	    cli_buffer_new(dev, scale_bytes, &scale_buf))
		goto out;
	if (cli_out_open(&outs[0], "out-data", out_data) ||
	    cli_out_open(&outs[1], "out-scale", out_scale))
		goto out;

	src = (struct mxa_dense) {
		.buf = src_buf, .dtype = in_dtype, .rows = rows, .cols = cols,
	};
	dst.data = data_buf;
	dst.scale = scale_buf;
	ret = mxa_quantize(dev, &src, &dst, mode, pref);
	if (ret) {
		cli_error("mxa_quantize: %s", mxa_strerror(ret));
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	ret = CLI_EXIT_ERROR;
	if (cli_buffer_store(data_buf, &outs[0]) ||
	    cli_buffer_store(scale_buf, &outs[1]) ||
	    cli_out_commit(outs, 2))
		goto out;
	ret = CLI_EXIT_OK;
out:
	cli_out_discard(&outs[0]);
	cli_out_discard(&outs[1]);
	cli_buffer_free(scale_buf);
	cli_buffer_free(data_buf);
	cli_buffer_free(src_buf);
	cli_device_close(dev);
	return ret;
}
