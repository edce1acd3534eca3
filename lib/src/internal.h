/* SPDX-License-Identifier: MIT */
/*
 * Library-internal declarations shared by the front end (lib/src) and the
 * backends (lib/cpu, ...).
 */
#ifndef MXA_INTERNAL_H
#define MXA_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxaccel.h"

#define MXA_EXPORT __attribute__((visibility("default")))

#define MXA_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Symbol versioning (lib/libmxaccel.map).  A function whose ABI changed
 * keeps its name here and is bound to NAME@@NODE, the version programs
 * link against from then on (GNU as's "@@@" renames rather than
 * aliases, so the library's own calls and static links see it as NAME);
 * the old version lives on in compat_<old>.c as NAME_<old>, bound to
 * NAME@<old node>, where programs built against it still find it.
 */
#define MXA_SYMVER(name, node) \
	__asm__(".symver " #name ", " #name "@@@" node)
#define MXA_SYMVER_COMPAT(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@" node)

/* True when $MXACCEL_DEBUG asks for explanations on stderr. */
bool mxa__debug(void);
/* Print one "mxaccel: ..." line on stderr when debugging is on. */
void mxa__dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mxa__dbg() then return err: `return mxa__err(-EINVAL, "...", ...);` */
int mxa__err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The named recipes (names.c), in mxa_recipe_at() order. */
struct mxa_recipe_entry {
	const char *name;
	struct mxa_recipe recipe;
};

extern const struct mxa_recipe_entry mxa__recipes[];
extern const unsigned int mxa__n_recipes;

/*
 * Byte range [lo, hi) an operand touches in one buffer, named for
 * messages ("dst data", "b scale").
 */
struct mxa_extent {
	const struct mxa_buffer *buf;
	size_t lo, hi;
	const char *name;
};

/* ops.c: the extents of operands that passed validation (they fit). */
struct mxa_extent mxa__data_extent(const struct mxa_matrix *m,
				   const char *name);
struct mxa_extent mxa__scale_extent(const struct mxa_matrix *m,
				    const char *name);
struct mxa_extent mxa__dense_extent(const struct mxa_dense *d,
				    const char *name);
/*
 * -EINVAL, and "what: out [..) overlaps in [..)" under $MXACCEL_DEBUG,
 * when output out shares bytes with in; an empty in overlaps nothing.
 */
int mxa__check_overlap(const char *what, const struct mxa_extent *out,
		       const struct mxa_extent *in);

/* Bounded string copy that always terminates. */
void mxa__strlcpy(char *dst, const char *src, size_t size);

#endif /* MXA_INTERNAL_H */
