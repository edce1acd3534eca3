/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the mxaccel command-line tool: option parsing, error
 * reporting, atomic file output, and moving file contents in and out of
 * device buffers.  Every failure a user can cause ends in exactly one line
 * on stderr and exit status 2 (CLI_EXIT_ERROR).
 */
#ifndef MXACCEL_CLI_H
#define MXACCEL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mxaccel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 2

/* --- subcommands (cmd_*.c) ------------------------------------------------ */

int cmd_info(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_dequantize(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* --- errors (mxaccel.c) --------------------------------------------------- */

/* Name of the running subcommand, used as the prefix of every message. */
void cli_set_command(const char *name);
/* Print "mxaccel: <subcommand>: <message>" as one line on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- options (mxaccel.c) -------------------------------------------------- */

enum cli_kind {
	CLI_FLAG,	/* bool, takes no value */
	CLI_STR,	/* const char * */
	CLI_U32,	/* uint32_t, 1 .. UINT32_MAX */
	CLI_ELEM,	/* enum mxa_elem */
	CLI_MODE,	/* enum mxa_scale_mode */
	CLI_LAYOUT,	/* enum mxa_scale_layout */
	CLI_DTYPE,	/* enum mxa_dtype */
	CLI_PREF,	/* enum mxa_pref */
	CLI_RECIPE,	/* struct mxa_recipe */
};

/*
 * One "--name value" (or "--name=value") option.  The parser stores the
 * converted value through val and the raw text in arg, and sets seen; an
 * option a user did not give keeps whatever default val points at.
 */
struct cli_opt {
	const char *name;	/* without the leading "--" */
	enum cli_kind kind;
	void *val;
	bool required;
	bool seen;
	const char *arg;
};

#define CLI_OPTION(n, k, v)	{ .name = (n), .kind = (k), .val = (v) }
#define CLI_REQUIRED(n, k, v)	{ .name = (n), .kind = (k), .val = (v), \
				  .required = true }
#define CLI_END			{ .name = NULL }

#define CLI_HELP 1

/*
 * Parse argv[1..argc-1] against opts (terminated by an entry with a NULL
 * name).  Returns 0, CLI_HELP after printing usage to stdout for --help, or
 * -1 after reporting the first problem.
 */
int cli_parse(int argc, char **argv, struct cli_opt *opts, const char *usage);
/* The entry of opts named name (which must exist). */
struct cli_opt *cli_opt_get(struct cli_opt *opts, const char *name);

/*
 * Resolve --recipe against --elem/--mode: either may come from the recipe,
 * but both given must agree.  need_mode: --mode (or a recipe) is required.
 */
int cli_resolve_recipe(struct cli_opt *opts, enum mxa_elem *elem,
		       enum mxa_scale_mode *mode, bool need_mode);
/*
 * The scale type a command's options ask for: the recipe's (--recipe
 * nvfp4: UE4M3), or UE4M3 for --mode nvfp4, else E8M0.
 */
enum mxa_scale_type cli_scale_type(struct cli_opt *opts,
				   enum mxa_scale_mode mode);
/*
 * --tensor-scale X (decimal or C99 hex float) into *out, 0 if not given:
 * a positive finite fp32, and only with UE4M3 scales.
 */
int cli_tensor_scale(struct cli_opt *opts, enum mxa_scale_type type,
		     float *out);
/*
 * The quantized matrix quantize and dequantize name: element and mode
 * from --recipe / --elem / --mode (cli_resolve_recipe(); need_mode for
 * quantize), its scale type and --tensor-scale, --cols checked against
 * the block size, rows x cols in `layout`.  *mode is the resolved mode.
 */
int cli_matrix_of(struct cli_opt *opts, bool need_mode, enum mxa_elem elem,
		  enum mxa_scale_mode *mode, enum mxa_scale_layout layout,
		  uint32_t rows, uint32_t cols, struct mxa_matrix *m);
/* The bytes m's data and scale files hold (mxa_matrix_bytes()). */
int cli_matrix_bytes(const struct mxa_matrix *m, size_t *data,
		     size_t *scale);

/* Validate K (a multiple of 32) for the option called opt. */
int cli_check_k(const char *opt, uint32_t k);
/* The same for a block size: 32 (E8M0) or 16 (UE4M3). */
int cli_check_k_block(const char *opt, uint32_t k, uint32_t block);

/* --- files (cli_io.c) ----------------------------------------------------- */

/*
 * An input file named by option opt that must hold exactly size bytes;
 * what describes the expected contents for messages.  cli_in_open()
 * rejects a regular file of the wrong size before anything is allocated,
 * cli_in_read() reads it (and catches pipes of the wrong length).
 */
struct cli_in {
	const char *opt;
	const char *path;
	const char *what;
	size_t size;
	int fd;
};

int cli_in_open(struct cli_in *in, const char *opt, const char *path,
		size_t size, const char *what);
int cli_in_read(struct cli_in *in, void *dst);
void cli_in_close(struct cli_in *in);

/*
 * An output written to a temporary file beside its destination and renamed
 * over it only when everything succeeded, so a failure never leaves a
 * partial or stale result behind.
 */
struct cli_out {
	const char *opt;
	const char *path;
	char *tmp;
	int fd;
	bool done;		/* renamed into place */
};

#define CLI_OUT_INIT { .fd = -1 }

int cli_out_open(struct cli_out *out, const char *opt, const char *path);
int cli_out_write(struct cli_out *out, const void *data, size_t size);
/* Rename all of outs into place, or none of them stays. */
int cli_out_commit(struct cli_out *outs, unsigned int n);
/* Drop an output that was not committed (safe on a never-opened one). */
void cli_out_discard(struct cli_out *out);

/* --- devices and buffers (cli_dev.c) -------------------------------------- */

/* Open --device name (NULL: the library's default choice). */
int cli_device_open(const char *name, struct mxa_device **dev);

/* The API does not promise that NULL is a no-op; these do. */
void cli_device_close(struct mxa_device *dev);
void cli_buffer_free(struct mxa_buffer *buf);

/* A zero-filled device buffer of size bytes. */
int cli_buffer_new(struct mxa_device *dev, size_t size,
		   struct mxa_buffer **buf);
/* A device buffer holding the contents of a file of exactly size bytes. */
int cli_buffer_load(struct mxa_device *dev, const char *opt, const char *path,
		    size_t size, const char *what, struct mxa_buffer **buf);
/* Write the whole buffer to an output. */
int cli_buffer_store(struct mxa_buffer *buf, struct cli_out *out);

/*
 * Fail with the library's reason when dev cannot run desc under pref (e.g.
 * --kernel native without a native kernel).
 */
int cli_check_support(struct mxa_device *dev, const struct mxa_op_desc *desc,
		      enum mxa_pref pref);
/* Print the plan for desc as "key: value" lines on stdout. */
int cli_explain(struct mxa_device *dev, const struct mxa_op_desc *desc,
		enum mxa_pref pref);

/* Sizes for messages and buffers; fail (with a message) on overflow. */
int cli_dense_bytes(enum mxa_dtype dtype, uint32_t rows, uint32_t cols,
		    size_t *out);
int cli_data_bytes(enum mxa_elem elem, uint32_t rows, uint32_t cols,
		   size_t *out);
int cli_scale_bytes(enum mxa_scale_layout layout, uint32_t rows,
		    uint32_t cols, size_t *out);

/* --- JSON output (cli_json.c) --------------------------------------------- */

#define CLI_JSON_DEPTH 16

/*
 * A streaming JSON writer: members are written in order, separators and
 * string escapes are its business.  key is NULL for array elements.
 */
struct cli_json {
	FILE *f;
	unsigned int depth;
	bool first[CLI_JSON_DEPTH];
	char close[CLI_JSON_DEPTH];
};

void cli_json_init(struct cli_json *j, FILE *f);
void cli_json_object(struct cli_json *j, const char *key);
void cli_json_array(struct cli_json *j, const char *key);
/* Close the innermost object or array; a newline follows the outermost. */
void cli_json_end(struct cli_json *j);
void cli_json_str(struct cli_json *j, const char *key, const char *val);
void cli_json_uint(struct cli_json *j, const char *key, uint64_t val);
void cli_json_bool(struct cli_json *j, const char *key, bool val);
/* Non-finite numbers are written as null, which JSON can represent. */
void cli_json_double(struct cli_json *j, const char *key, double val);

#endif /* MXACCEL_CLI_H */
