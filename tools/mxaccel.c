// SPDX-License-Identifier: MIT
/*
 * mxaccel: command-line front end of libmxaccel.  This file holds main(),
 * the subcommand table and the option parsing every subcommand shares, so
 * that all of them word their errors the same way.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct cli_command commands[] = {
	{ "info", cmd_info,
	  "library version, backends, devices and what they can run" },
	{ "quantize", cmd_quantize,
	  "fp32/bf16 matrix -> MX (E8M0 scales) or NVFP4 (UE4M3) codes and scales" },
	{ "dequantize", cmd_dequantize, "MX or NVFP4 matrix -> fp32/bf16" },
	{ "gemm", cmd_gemm, "C (+)= A * B^T on MX / NVFP4 matrices, dense or grouped" },
	{ "bench", cmd_bench, "time GEMM or quantization on random data" },
};

#define N_COMMANDS ARRAY_SIZE(commands)

static const char *command_name = "mxaccel";

void cli_set_command(const char *name)
{
	command_name = name;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mxaccel: %s: ", command_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void print_usage(FILE *f)
{
	size_t i;

	fputs("usage: mxaccel <subcommand> [options]\n\n", f);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'mxaccel <subcommand> --help' describes its options.\n"
		   "Files are raw little-endian arrays, row-major, K contiguous.\n");
}

/* --- names ---------------------------------------------------------------- */

/*
 * The accepted spellings of a kind, for error messages.  They come from the
 * library's own printers so the list can never disagree with the parser.
 */
static const char *kind_name_at(enum cli_kind kind, unsigned int i)
{
	switch (kind) {
	case CLI_ELEM:
		return mxa_elem_name((enum mxa_elem)i);
	case CLI_MODE:
		return mxa_scale_mode_name((enum mxa_scale_mode)i);
	case CLI_LAYOUT:
		return mxa_layout_name((enum mxa_scale_layout)i);
	case CLI_DTYPE:
		return mxa_dtype_name((enum mxa_dtype)i);
	case CLI_PREF:
		return mxa_pref_name((enum mxa_pref)i);
	case CLI_RECIPE:
		return mxa_recipe_at(i);
	default:
		return NULL;
	}
}

static const char *kind_what(enum cli_kind kind)
{
	switch (kind) {
	case CLI_ELEM:
		return "element type";
	case CLI_MODE:
		return "scale mode";
	case CLI_LAYOUT:
		return "scale layout";
	case CLI_DTYPE:
		return "dtype";
	case CLI_PREF:
		return "kernel preference";
	case CLI_RECIPE:
		return "recipe";
	default:
		return "value";
	}
}

static void kind_names(enum cli_kind kind, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int i;
	const char *name;
	int n;

	buf[0] = '\0';
	/* Enum values are small; recipes end at the first NULL. */
	for (i = 0; i < 64; i++) {
		name = kind_name_at(kind, i);
		if (!name) {
			if (kind == CLI_RECIPE)
				break;
			continue;
		}
		n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			     name);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += n;
	}
}

/* --- option values -------------------------------------------------------- */

static int parse_u32(const struct cli_opt *opt, const char *s)
{
	unsigned long long v;
	char *end;
	const char *p;

	for (p = s; *p; p++)
		if (*p < '0' || *p > '9')
			break;
	if (!*s || *p) {
		cli_error("--%s '%s': expected a positive integer", opt->name,
			  s);
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v > UINT32_MAX) {
		cli_error("--%s %s: expected a positive integer at most %u",
			  opt->name, s, UINT32_MAX);
		return -1;
	}
	if (!v) {
		cli_error("--%s 0: expected a positive integer", opt->name);
		return -1;
	}
	*(uint32_t *)opt->val = (uint32_t)v;
	return 0;
}

static int parse_value(struct cli_opt *opt, const char *s)
{
	char names[512];
	int ret;

	switch (opt->kind) {
	case CLI_STR:
		if (!*s) {
			cli_error("--%s: expected a non-empty value",
				  opt->name);
			return -1;
		}
		*(const char **)opt->val = s;
		return 0;
	case CLI_U32:
		return parse_u32(opt, s);
	case CLI_ELEM:
		ret = mxa_elem_parse(s, opt->val);
		break;
	case CLI_MODE:
		ret = mxa_scale_mode_parse(s, opt->val);
		break;
	case CLI_LAYOUT:
		ret = mxa_layout_parse(s, opt->val);
		break;
	case CLI_DTYPE:
		ret = mxa_dtype_parse(s, opt->val);
		break;
	case CLI_PREF:
		ret = mxa_pref_parse(s, opt->val);
		break;
	case CLI_RECIPE:
		ret = mxa_recipe_parse(s, opt->val);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (ret) {
		kind_names(opt->kind, names, sizeof(names));
		cli_error("--%s '%s': unknown %s (expected one of: %s)",
			  opt->name, s, kind_what(opt->kind), names);
		return -1;
	}
	return 0;
}

/* --- parsing -------------------------------------------------------------- */

static struct cli_opt *find_opt(struct cli_opt *opts, const char *name,
				size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
			return opts;
	return NULL;
}

struct cli_opt *cli_opt_get(struct cli_opt *opts, const char *name)
{
	return find_opt(opts, name, strlen(name));
}

int cli_parse(int argc, char **argv, struct cli_opt *opts,
	      const char *usage_text)
{
	struct cli_opt *opt;
	bool any_required = false;
	const char *arg, *val, *eq;
	size_t len;
	int i;

	for (opt = opts; opt->name; opt++)
		any_required |= opt->required;
	/* A bare subcommand that cannot run without options wants help. */
	if (argc <= 1 && any_required) {
		fputs(usage_text, stderr);
		return -1;
	}

	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			fputs(usage_text, stdout);
			return CLI_HELP;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			cli_error("unexpected argument '%s' (see --help)", arg);
			return -1;
		}
		arg += 2;
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		opt = find_opt(opts, arg, len);
		if (!opt) {
			cli_error("unknown option '--%.*s' (see --help)",
				  (int)len, arg);
			return -1;
		}
		if (opt->seen) {
			cli_error("--%s given more than once", opt->name);
			return -1;
		}
		if (opt->kind == CLI_FLAG) {
			if (eq) {
				cli_error("--%s takes no value", opt->name);
				return -1;
			}
			*(bool *)opt->val = true;
			opt->seen = true;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
			val = argv[++i];
		} else {
			/* "--in --out x" is a forgotten value, not a file. */
			cli_error("--%s needs a value", opt->name);
			return -1;
		}
		if (parse_value(opt, val))
			return -1;
		opt->seen = true;
		opt->arg = val;
	}

	for (opt = opts; opt->name; opt++) {
		if (opt->required && !opt->seen) {
			cli_error("missing required option --%s (see --help)",
				  opt->name);
			return -1;
		}
	}
	return 0;
}

int cli_resolve_recipe(struct cli_opt *opts, enum mxa_elem *elem,
		       enum mxa_scale_mode *mode, bool need_mode)
{
	struct cli_opt *r = cli_opt_get(opts, "recipe");
	struct cli_opt *e = cli_opt_get(opts, "elem");
	struct cli_opt *m = cli_opt_get(opts, "mode");
	const struct mxa_recipe *rec = r->val;

	if (r->seen && !m) {
		if (e->seen && *(enum mxa_elem *)e->val != rec->elem) {
			cli_error("--recipe %s uses element %s, which conflicts with --elem %s",
				  r->arg, mxa_elem_name(rec->elem), e->arg);
			return -1;
		}
		*elem = rec->elem;
		*mode = rec->mode;
		return 0;
	}
	if (r->seen) {
		if (e->seen && *(enum mxa_elem *)e->val != rec->elem) {
			cli_error("--recipe %s uses element %s, which conflicts with --elem %s",
				  r->arg, mxa_elem_name(rec->elem), e->arg);
			return -1;
		}
		if (m->seen && *(enum mxa_scale_mode *)m->val != rec->mode) {
			cli_error("--recipe %s uses scale mode %s, which conflicts with --mode %s",
				  r->arg, mxa_scale_mode_name(rec->mode),
				  m->arg);
			return -1;
		}
		*elem = rec->elem;
		*mode = rec->mode;
		return 0;
	}
	if (!e->seen) {
		cli_error("missing required option --elem (or --recipe)");
		return -1;
	}
	if (need_mode && !m->seen) {
		cli_error("missing required option --mode (or --recipe)");
		return -1;
	}
	*elem = *(enum mxa_elem *)e->val;
	if (m && m->seen)
		*mode = *(enum mxa_scale_mode *)m->val;
	return 0;
}

enum mxa_scale_type cli_scale_type(struct cli_opt *opts,
				   enum mxa_scale_mode mode)
{
	struct cli_opt *r = cli_opt_get(opts, "recipe");

	if (r && r->seen)
		return ((const struct mxa_recipe *)r->val)->scale_type;
	return mode == MXA_SCALE_NVFP4 ? MXA_SCALE_UE4M3 : MXA_SCALE_E8M0;
}

int cli_tensor_scale(struct cli_opt *opts, enum mxa_scale_type type,
		     float *out)
{
	struct cli_opt *t = cli_opt_get(opts, "tensor-scale");
	const char *s;
	char *end;
	float v;

	*out = 0;
	if (!t || !t->seen)
		return 0;
	s = *(const char **)t->val;
	if (type != MXA_SCALE_UE4M3) {
		cli_error("--tensor-scale %s: only UE4M3 scales (--recipe nvfp4) take a per-tensor scale",
			  s);
		return -1;
	}
	errno = 0;
	v = strtof(s, &end);
	if (end == s || *end || !isfinite(v) || !(v > 0)) {
		cli_error("--tensor-scale %s: not a positive finite float (decimal or C99 hex, e.g. 0x1.8p-9)",
			  s);
		return -1;
	}
	if (errno == ERANGE && v == 0) {
		cli_error("--tensor-scale %s: below the smallest fp32", s);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_matrix_of(struct cli_opt *opts, bool need_mode, enum mxa_elem elem,
		  enum mxa_scale_mode *mode, enum mxa_scale_layout layout,
		  uint32_t rows, uint32_t cols, struct mxa_matrix *m)
{
	enum mxa_scale_type st;
	float ts;

	if (cli_resolve_recipe(opts, &elem, mode, need_mode))
		return -1;
	st = cli_scale_type(opts, *mode);
	if (cli_tensor_scale(opts, st, &ts) ||
	    cli_check_k_block("cols", cols, st == MXA_SCALE_UE4M3 ?
			      MXA_NVFP4_BLOCK_SIZE : MXA_BLOCK_SIZE))
		return -1;
	*m = (struct mxa_matrix) {
		.elem = elem, .scale_type = st, .tensor_scale = ts,
		.scale_layout = layout, .rows = rows, .cols = cols,
	};
	return 0;
}

int cli_matrix_bytes(const struct mxa_matrix *m, size_t *data,
		     size_t *scale)
{
	int ret = mxa_matrix_bytes(m, data, scale);

	if (ret)
		cli_error("%u x %u %s matrix with %s scales: %s (MXACCEL_DEBUG=1 says which field)",
			  m->rows, m->cols, mxa_elem_name(m->elem),
			  mxa_scale_type_name(m->scale_type),
			  mxa_strerror(ret));
	return ret ? -1 : 0;
}

int cli_check_k_block(const char *opt, uint32_t k, uint32_t block)
{
	if (!k || k % block) {
		cli_error("--%s %u: must be a positive multiple of %u (the block size)",
			  opt, k, block);
		return -1;
	}
	return 0;
}

int cli_check_k(const char *opt, uint32_t k)
{
	if (k % MXA_BLOCK_SIZE) {
		cli_error("--%s %u: must be a multiple of %d (the MX block size)",
			  opt, k, MXA_BLOCK_SIZE);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *name;
	size_t i;

	if (argc < 2) {
		print_usage(stderr);
		return CLI_EXIT_ERROR;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") ||
	    !strcmp(name, "help")) {
		print_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(name, "--version")) {
		printf("mxaccel %s\n", mxa_version());
		return CLI_EXIT_OK;
	}
	for (i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(name, commands[i].name)) {
			cli_set_command(name);
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	cli_set_command(name);
	cli_error("unknown subcommand (expected info, quantize, dequantize, gemm or bench; see mxaccel --help)");
	return CLI_EXIT_ERROR;
}
