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

/* True when $MXACCEL_DEBUG asks for explanations on stderr. */
bool mxa__debug(void);
/* Print one "mxaccel: ..." line on stderr when debugging is on. */
void mxa__dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mxa__dbg() then return err: `return mxa__err(-EINVAL, "...", ...);` */
int mxa__err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Bounded string copy that always terminates. */
void mxa__strlcpy(char *dst, const char *src, size_t size);

#endif /* MXA_INTERNAL_H */
