// SPDX-License-Identifier: MIT
/*
 * mxaccel gemm: C[M x N] (+)= A[M x K] * B[N x K]^T with A and B MX
 * matrices read from files, C fp32 or bf16.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel gemm --m M --n N --k K --a FILE --a-scale FILE --a-elem E\n"
"                    --b FILE --b-scale FILE --b-elem E --out FILE [options]\n"
"\n"
"Computes C = A * B^T (A is M x K, B is N x K, both K-contiguous).\n"
"\n"
"  --m M, --n N, --k K shape; K a multiple of 32\n"
"  --a FILE            A codes, M rows of K bytes (e2m1: K/2, packed)\n"
"  --a-scale FILE      A scales, M x K/32 E8M0 bytes\n"
"  --a-elem E          A element type: e4m3 e5m2 e2m3 e3m2 e2m1\n"
"  --b FILE, --b-scale FILE, --b-elem E   the same for B (N rows)\n"
"  --scale-layout L    layout of both scale files: plain (default) or swizzled\n"
"  --out FILE          C, M x N values, row-major\n"
"  --out-dtype T       f32 (default) or bf16\n"
"  --c-in FILE         accumulate: C = C_in + A * B^T (C_in has --out-dtype)\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated (exact)\n"
"  --explain           print the kernel plan before running\n";

/* The codes and scales of one operand. */
static int load_operand(struct mxa_device *dev, const char *name,
			const char *data_path, const char *scale_path,
			enum mxa_elem elem, enum mxa_scale_layout layout,
			uint32_t rows, uint32_t k, struct mxa_matrix *mat)
{
	size_t data_bytes, scale_bytes;
	char opt[16], what[128];

	memset(mat, 0, sizeof(*mat));
	if (cli_data_bytes(elem, rows, k, &data_bytes) ||
	    cli_scale_bytes(layout, rows, k, &scale_bytes))
		return -1;
	snprintf(what, sizeof(what), "%u x %u %s codes", rows, k,
		 mxa_elem_name(elem));
	if (cli_buffer_load(dev, name, data_path, data_bytes, what, &mat->data))
		return -1;
	snprintf(opt, sizeof(opt), "%s-scale", name);
	snprintf(what, sizeof(what), "%u x %u %s E8M0 scales", rows,
		 k / MXA_BLOCK_SIZE, mxa_layout_name(layout));
	if (cli_buffer_load(dev, opt, scale_path, scale_bytes, what,
			    &mat->scale))
		return -1;
	mat->elem = elem;
	mat->scale_layout = layout;
	mat->rows = rows;
	mat->cols = k;
	return 0;
}

int cmd_gemm(int argc, char **argv)
{
	enum mxa_elem a_elem = MXA_ELEM_E4M3, b_elem = MXA_ELEM_E4M3;
	enum mxa_dtype out_dtype = MXA_DTYPE_F32;
	enum mxa_scale_layout layout = MXA_LAYOUT_PLAIN;
	enum mxa_pref pref = MXA_PREF_AUTO;
	uint32_t m = 0, n = 0, k = 0;
	const char *a = NULL, *a_scale = NULL, *b = NULL, *b_scale = NULL;
	const char *out_path = NULL, *c_in = NULL, *device = NULL;
	bool explain = false;
	struct cli_opt opts[] = {
		CLI_REQUIRED("m", CLI_U32, &m),
		CLI_REQUIRED("n", CLI_U32, &n),
		CLI_REQUIRED("k", CLI_U32, &k),
		CLI_REQUIRED("a", CLI_STR, &a),
		CLI_REQUIRED("a-scale", CLI_STR, &a_scale),
		CLI_REQUIRED("a-elem", CLI_ELEM, &a_elem),
		CLI_REQUIRED("b", CLI_STR, &b),
		CLI_REQUIRED("b-scale", CLI_STR, &b_scale),
		CLI_REQUIRED("b-elem", CLI_ELEM, &b_elem),
		CLI_REQUIRED("out", CLI_STR, &out_path),
		CLI_OPTION("out-dtype", CLI_DTYPE, &out_dtype),
		CLI_OPTION("c-in", CLI_STR, &c_in),
		CLI_OPTION("scale-layout", CLI_LAYOUT, &layout),
		CLI_OPTION("device", CLI_STR, &device),
		CLI_OPTION("kernel", CLI_PREF, &pref),
		CLI_OPTION("explain", CLI_FLAG, &explain),
		CLI_END,
	};
	struct mxa_matrix ma = { 0 }, mb = { 0 };
	struct cli_out out = CLI_OUT_INIT;
	struct mxa_buffer *c_buf = NULL;
	struct mxa_device *dev = NULL;
	struct mxa_op_desc desc;
	struct mxa_dense c;
	uint32_t flags = 0;
	size_t c_bytes;
	char what[128];
	int ret;

	ret = cli_parse(argc, argv, opts, usage);
	if (ret)
		return ret == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	if (cli_check_k("k", k) ||
	    cli_dense_bytes(out_dtype, m, n, &c_bytes))
		return CLI_EXIT_ERROR;
	if (c_in)
		flags |= MXA_GEMM_ACCUMULATE;

	if (cli_device_open(device, &dev))
		return CLI_EXIT_ERROR;
	memset(&desc, 0, sizeof(desc));
	desc.op = MXA_OP_GEMM;
	desc.a_elem = a_elem;
	desc.b_elem = b_elem;
	desc.dtype = out_dtype;
	desc.m = m;
	desc.n = n;
	desc.k = k;
	desc.flags = flags;
	ret = CLI_EXIT_ERROR;
	if (cli_check_support(dev, &desc, pref))
		goto out;
	if (explain && cli_explain(dev, &desc, pref))
		goto out;

	if (load_operand(dev, "a", a, a_scale, a_elem, layout, m, k, &ma) ||
	    load_operand(dev, "b", b, b_scale, b_elem, layout, n, k, &mb))
		goto out;
	if (c_in) {
		snprintf(what, sizeof(what), "%u x %u %s values", m, n,
			 mxa_dtype_name(out_dtype));
		if (cli_buffer_load(dev, "c-in", c_in, c_bytes, what, &c_buf))
			goto out;
	} else if (cli_buffer_new(dev, c_bytes, &c_buf)) {
		goto out;
	}
	if (cli_out_open(&out, "out", out_path))
		goto out;

	c = (struct mxa_dense) {
		.buf = c_buf, .dtype = out_dtype, .rows = m, .cols = n,
	};
	ret = mxa_gemm(dev, &ma, &mb, &c, flags, pref);
	if (ret) {
		cli_error("mxa_gemm: %s", mxa_strerror(ret));
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	ret = CLI_EXIT_ERROR;
	if (cli_buffer_store(c_buf, &out) || cli_out_commit(&out, 1))
		goto out;
	ret = CLI_EXIT_OK;
out:
	cli_out_discard(&out);
	cli_buffer_free(c_buf);
	cli_buffer_free(mb.scale);
	cli_buffer_free(mb.data);
	cli_buffer_free(ma.scale);
	cli_buffer_free(ma.data);
	cli_device_close(dev);
	return ret;
}
