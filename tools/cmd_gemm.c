// SPDX-License-Identifier: MIT
/*
 * mxaccel gemm: C[M x N] (+)= A[M x K] * B[N x K]^T with A and B block-
 * scaled matrices (MX with E8M0 scales, or NVFP4 with UE4M3 scales and an
 * optional per-tensor scale, mixed freely) read from files, C fp32 or
 * bf16.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
"usage: mxaccel gemm --m M --n N --k K --a FILE --a-scale FILE --a-elem E\n"
"                    --b FILE --b-scale FILE --b-elem E --out FILE [options]\n"
"\n"
"Computes C = A * B^T (A is M x K, B is N x K, both K-contiguous).\n"
"\n"
"  --m M, --n N, --k K shape; K a multiple of each operand's block size\n"
"  --a FILE            A codes, M rows of K bytes (e2m1: K/2, packed)\n"
"  --a-scale FILE      A scales, M x K/32 E8M0 bytes (nvfp4: M x K/16 UE4M3)\n"
"  --a-elem E          A element type: e4m3 e5m2 e2m3 e3m2 e2m1\n"
"  --a-recipe NAME     A's recipe instead of (or agreeing with) --a-elem:\n"
"                      nvfp4 gives e2m1 with UE4M3 scales in blocks of 16\n"
"  --a-tensor-scale X  nvfp4 only: A's fp32 per-tensor scale (two-level),\n"
"                      decimal or C99 hex float (0x1.8p-9)\n"
"  --b FILE, --b-scale FILE, --b-elem E, --b-recipe NAME, --b-tensor-scale X\n"
"                      the same for B (N rows)\n"
"  --scale-layout L    layout of both scale files: plain (default) or swizzled\n"
"  --out FILE          C, M x N values, row-major\n"
"  --out-dtype T       f32 (default) or bf16\n"
"  --c-in FILE         accumulate: C = C_in + A * B^T (C_in has --out-dtype)\n"
"  --device D          cpu, accel:N, cuda:N, auto (default: $MXACCEL_DEVICE or auto)\n"
"  --kernel P          auto (default), native or emulated (exact)\n"
"  --explain           print the kernel plan before running\n";

/* One operand's options: --X-elem, --X-recipe, --X-tensor-scale. */
struct operand_opts {
	const char *name;		/* "a" or "b" */
	enum mxa_elem elem;
	struct mxa_recipe recipe;
	const char *tensor_scale;
};

/*
 * The element type, scale type and tensor scale an operand's options ask
 * for: --X-recipe and --X-elem must agree where both are given, one of
 * them must be.
 */
static int operand_format(struct cli_opt *opts, struct operand_opts *o,
			  struct mxa_matrix *mat)
{
	char key[32];
	struct cli_opt *e, *r, *t;
	char *end;
	float v;

	snprintf(key, sizeof(key), "%s-elem", o->name);
	e = cli_opt_get(opts, key);
	snprintf(key, sizeof(key), "%s-recipe", o->name);
	r = cli_opt_get(opts, key);
	snprintf(key, sizeof(key), "%s-tensor-scale", o->name);
	t = cli_opt_get(opts, key);
	memset(mat, 0, sizeof(*mat));
	if (!e->seen && !r->seen) {
		cli_error("--%s-elem or --%s-recipe is required", o->name,
			  o->name);
		return -1;
	}
	if (e->seen && r->seen && o->elem != o->recipe.elem) {
		cli_error("--%s-recipe %s uses element %s, which conflicts with --%s-elem %s",
			  o->name, r->arg, mxa_elem_name(o->recipe.elem),
			  o->name, e->arg);
		return -1;
	}
	mat->elem = r->seen ? o->recipe.elem : o->elem;
	mat->scale_type = r->seen ? o->recipe.scale_type : MXA_SCALE_E8M0;
	if (!t->seen)
		return 0;
	if (mat->scale_type != MXA_SCALE_UE4M3) {
		cli_error("--%s-tensor-scale %s: only UE4M3 scales (--%s-recipe nvfp4) take a per-tensor scale",
			  o->name, o->tensor_scale, o->name);
		return -1;
	}
	errno = 0;
	v = strtof(o->tensor_scale, &end);
	if (end == o->tensor_scale || *end || !isfinite(v) || !(v > 0)) {
		cli_error("--%s-tensor-scale %s: not a positive finite float (decimal or C99 hex, e.g. 0x1.8p-9)",
			  o->name, o->tensor_scale);
		return -1;
	}
	if (errno == ERANGE && v == 0) {
		cli_error("--%s-tensor-scale %s: below the smallest fp32",
			  o->name, o->tensor_scale);
		return -1;
	}
	mat->tensor_scale = v;
	return 0;
}

/* The codes and scales of one operand, whose format mat already holds. */
static int load_operand(struct mxa_device *dev, const char *name,
			const char *data_path, const char *scale_path,
			enum mxa_scale_layout layout, uint32_t rows,
			uint32_t k, struct mxa_matrix *mat)
{
	size_t data_bytes, scale_bytes;
	char opt[16], what[128];

	mat->scale_layout = layout;
	mat->rows = rows;
	mat->cols = k;
	if (cli_matrix_bytes(mat, &data_bytes, &scale_bytes))
		return -1;
	snprintf(what, sizeof(what), "%u x %u %s codes", rows, k,
		 mxa_elem_name(mat->elem));
	if (cli_buffer_load(dev, name, data_path, data_bytes, what, &mat->data))
		return -1;
	snprintf(opt, sizeof(opt), "%s-scale", name);
	snprintf(what, sizeof(what), "%u x %u %s %s scales", rows,
		 k / (mat->scale_type == MXA_SCALE_UE4M3 ?
		      MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE),
		 mxa_layout_name(layout), mxa_scale_type_name(mat->scale_type));
	if (cli_buffer_load(dev, opt, scale_path, scale_bytes, what,
			    &mat->scale))
		return -1;
	return 0;
}

int cmd_gemm(int argc, char **argv)
{
	struct operand_opts oa = { .name = "a", .elem = MXA_ELEM_E4M3 };
	struct operand_opts ob = { .name = "b", .elem = MXA_ELEM_E4M3 };
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
		CLI_OPTION("a-elem", CLI_ELEM, &oa.elem),
		CLI_OPTION("a-recipe", CLI_RECIPE, &oa.recipe),
		CLI_OPTION("a-tensor-scale", CLI_STR, &oa.tensor_scale),
		CLI_REQUIRED("b", CLI_STR, &b),
		CLI_REQUIRED("b-scale", CLI_STR, &b_scale),
		CLI_OPTION("b-elem", CLI_ELEM, &ob.elem),
		CLI_OPTION("b-recipe", CLI_RECIPE, &ob.recipe),
		CLI_OPTION("b-tensor-scale", CLI_STR, &ob.tensor_scale),
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
	if (operand_format(opts, &oa, &ma) || operand_format(opts, &ob, &mb) ||
	    cli_check_k_block("k", k, ma.scale_type == MXA_SCALE_UE4M3 &&
			      mb.scale_type == MXA_SCALE_UE4M3 ?
			      MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE) ||
	    cli_dense_bytes(out_dtype, m, n, &c_bytes))
		return CLI_EXIT_ERROR;
	if (c_in)
		flags |= MXA_GEMM_ACCUMULATE;

	if (cli_device_open(device, &dev))
		return CLI_EXIT_ERROR;
	memset(&desc, 0, sizeof(desc));
	desc.op = MXA_OP_GEMM;
	desc.a_elem = ma.elem;
	desc.b_elem = mb.elem;
	desc.a_scale_type = ma.scale_type;
	desc.b_scale_type = mb.scale_type;
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

	if (load_operand(dev, "a", a, a_scale, layout, m, k, &ma) ||
	    load_operand(dev, "b", b, b_scale, layout, n, k, &mb))
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
