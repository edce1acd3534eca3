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
"  --explain           print the kernel plan before running\n"
"  --groups E0,E1,...  grouped GEMM (torch._scaled_grouped_mm): the groups'\n"
"                      cumulative ends (torch's offs), along M or K:\n"
"  --group-kind KIND   m (default, 2d x 3d): A is total_M x K (--m total_M),\n"
"                      B holds one N x K matrix per group (count * N rows),\n"
"                      C is total_M x N; k (2d x 2d): A is M x total_K,\n"
"                      B is N x total_K (--k total_K), C is count stacked\n"
"                      M x N.  Swizzled scales are laid out per group as\n"
"                      torchao's (Documentation/library.rst)\n";

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

/* --groups: the ends, and which dimension they split. */
struct groups_opts {
	const char *list;
	const char *kind_name;
	enum mxa_group_kind kind;
	uint32_t count;
	int32_t *ends;
};

static int parse_groups(struct groups_opts *g)
{
	const char *p = g->list;
	long prev = 0;
	char *end;

	if (!g->kind_name || !strcmp(g->kind_name, "m")) {
		g->kind = MXA_GROUP_2D_3D;
	} else if (!strcmp(g->kind_name, "k")) {
		g->kind = MXA_GROUP_2D_2D;
	} else {
		cli_error("--group-kind %s: m (2d x 3d, groups along M) or k (2d x 2d, along K)",
			  g->kind_name);
		return -1;
	}
	if (!g->list)
		return 0;
	g->ends = calloc(MXA_GROUPS_MAX, sizeof(*g->ends));
	if (!g->ends) {
		cli_error("out of memory");
		return -1;
	}
	for (;;) {
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < prev || v > INT32_MAX ||
		    (*end && *end != ',')) {
			cli_error("--groups %s: not a list of non-decreasing group ends >= 0 (e.g. 0,3,3,10)",
				  g->list);
			return -1;
		}
		if (g->count == MXA_GROUPS_MAX) {
			cli_error("--groups: more than %d groups", MXA_GROUPS_MAX);
			return -1;
		}
		g->ends[g->count++] = (int32_t)v;
		prev = v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static uint64_t round_up(uint64_t x, uint64_t m)
{
	return (x + m - 1) / m * m;
}

/*
 * Bytes of a grouped operand's files: its rows (all groups), and its
 * scales, plain or swizzled per group (torchao's layouts).  side: 'a' or
 * 'b'; rows / cols as the library sees the operand (b of 2d x 3d: one
 * group's N rows).
 */
static int grouped_bytes(const struct groups_opts *g, char side,
			 const struct mxa_matrix *mat, size_t *data,
			 size_t *scale)
{
	uint32_t block = mat->scale_type == MXA_SCALE_UE4M3 ?
			 MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE;
	uint64_t rows = mat->rows, blocks = mat->cols / block, bytes = 0;
	bool stack = g->kind == MXA_GROUP_2D_3D && side == 'b';
	uint32_t i;

	if (stack)
		rows *= g->count;
	*data = rows * (mat->elem == MXA_ELEM_E2M1 ? mat->cols / 2 : mat->cols);
	if (mat->scale_layout == MXA_LAYOUT_PLAIN) {
		*scale = rows * blocks;
		return 0;
	}
	for (i = 0; i < g->count; i++) {
		int32_t lo = i ? g->ends[i - 1] : 0;
		uint64_t size = (uint64_t)(g->ends[i] - lo);

		if (stack)
			bytes += round_up(mat->rows, 128) * round_up(blocks, 4);
		else if (g->kind == MXA_GROUP_2D_3D)
			bytes += round_up(size, 128) * round_up(blocks, 4);
		else
			bytes += round_up(mat->rows, 128) *
				 round_up(size / block, 4);
	}
	*scale = bytes;
	return 0;
}

/* The codes and scales of one operand, whose format mat already holds. */
static int load_operand(struct mxa_device *dev, const char *name,
			const char *data_path, const char *scale_path,
			enum mxa_scale_layout layout, uint32_t rows,
			uint32_t k, const struct groups_opts *g,
			struct mxa_matrix *mat)
{
	size_t data_bytes, scale_bytes;
	char opt[16], what[128];

	mat->scale_layout = layout;
	mat->rows = rows;
	mat->cols = k;
	if (cli_matrix_bytes(mat, &data_bytes, &scale_bytes))
		return -1;
	if (g->count)
		grouped_bytes(g, name[0], mat, &data_bytes, &scale_bytes);
	snprintf(what, sizeof(what), "%zu bytes of %s codes (%u x %u%s)",
		 data_bytes, mxa_elem_name(mat->elem), rows, k,
		 g->count && name[0] == 'b' && g->kind == MXA_GROUP_2D_3D ?
		 " per group" : "");
	if (cli_buffer_load(dev, name, data_path, data_bytes, what, &mat->data))
		return -1;
	snprintf(opt, sizeof(opt), "%s-scale", name);
	snprintf(what, sizeof(what), "%zu bytes of %s %s scales", scale_bytes,
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
	struct groups_opts groups = { 0 };
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
		CLI_OPTION("groups", CLI_STR, &groups.list),
		CLI_OPTION("group-kind", CLI_STR, &groups.kind_name),
		CLI_END,
	};
	struct mxa_matrix ma = { 0 }, mb = { 0 };
	struct cli_out out = CLI_OUT_INIT;
	struct mxa_buffer *c_buf = NULL, *ends_buf = NULL;
	uint32_t c_rows;
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
	if (parse_groups(&groups)) {
		free(groups.ends);
		return CLI_EXIT_ERROR;
	}
	c_rows = m;
	if (groups.count && groups.kind == MXA_GROUP_2D_2D) {
		if ((uint64_t)groups.count * m > UINT32_MAX) {
			cli_error("--groups: %u groups of %u rows make too tall a C",
				  groups.count, m);
			free(groups.ends);
			return CLI_EXIT_ERROR;
		}
		c_rows = groups.count * m;
	}
	if (operand_format(opts, &oa, &ma) || operand_format(opts, &ob, &mb) ||
	    cli_check_k_block("k", k, ma.scale_type == MXA_SCALE_UE4M3 &&
			      mb.scale_type == MXA_SCALE_UE4M3 ?
			      MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE) ||
	    cli_dense_bytes(out_dtype, c_rows, n, &c_bytes)) {
		free(groups.ends);
		return CLI_EXIT_ERROR;
	}
	if (c_in)
		flags |= MXA_GEMM_ACCUMULATE;

	if (cli_device_open(device, &dev)) {
		free(groups.ends);
		return CLI_EXIT_ERROR;
	}
	memset(&desc, 0, sizeof(desc));
	desc.op = groups.count ? MXA_OP_GEMM_GROUPED : MXA_OP_GEMM;
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

	if (load_operand(dev, "a", a, a_scale, layout, m, k, &groups, &ma) ||
	    load_operand(dev, "b", b, b_scale, layout, n, k, &groups, &mb))
		goto out;
	if (groups.count &&
	    (cli_buffer_new(dev, (size_t)groups.count * 4, &ends_buf) ||
	     mxa_buffer_write(ends_buf, 0, groups.ends,
			      (size_t)groups.count * 4)))
		goto out;
	if (c_in) {
		snprintf(what, sizeof(what), "%u x %u %s values", c_rows, n,
			 mxa_dtype_name(out_dtype));
		if (cli_buffer_load(dev, "c-in", c_in, c_bytes, what, &c_buf))
			goto out;
	} else if (cli_buffer_new(dev, c_bytes, &c_buf)) {
		goto out;
	}
	if (cli_out_open(&out, "out", out_path))
		goto out;

	c = (struct mxa_dense) {
		.buf = c_buf, .dtype = out_dtype, .rows = c_rows, .cols = n,
	};
	if (groups.count) {
		struct mxa_grouped gr = { .kind = groups.kind,
					  .count = groups.count,
					  .offsets = ends_buf };

		ret = mxa_gemm_grouped(dev, &ma, &mb, &c, &gr, flags, pref);
	} else {
		ret = mxa_gemm(dev, &ma, &mb, &c, flags, pref);
	}
	if (ret) {
		cli_error("%s: %s (MXACCEL_DEBUG=1 says which field)",
			  groups.count ? "mxa_gemm_grouped" : "mxa_gemm",
			  mxa_strerror(ret));
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	ret = CLI_EXIT_ERROR;
	if (cli_buffer_store(c_buf, &out) || cli_out_commit(&out, 1))
		goto out;
	ret = CLI_EXIT_OK;
out:
	cli_out_discard(&out);
	cli_buffer_free(ends_buf);
	free(groups.ends);
	cli_buffer_free(c_buf);
	cli_buffer_free(mb.scale);
	cli_buffer_free(mb.data);
	cli_buffer_free(ma.scale);
	cli_buffer_free(ma.data);
	cli_device_close(dev);
	return ret;
}
