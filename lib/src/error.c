// SPDX-License-Identifier: MIT
/*
 * Error text and the MXACCEL_DEBUG explanation channel.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

MXA_EXPORT const char *mxa_version(void)
{
#define MXA_STR2(x) #x
#define MXA_STR(x) MXA_STR2(x)
	return MXA_STR(MXA_VERSION_MAJOR) "." MXA_STR(MXA_VERSION_MINOR) "."
	       MXA_STR(MXA_VERSION_PATCH);
}

MXA_EXPORT const char *mxa_strerror(int err)
{
	/* Errors are small negative numbers; anything else is unknown. */
	if (err > 0 || err < -4095)
		return "unknown error";
	switch (-err) {
	case 0:
		return "success";
	case EINVAL:
		return "invalid argument";
	case EOVERFLOW:
		return "extent past the end of a buffer or size overflow";
	case EXDEV:
		return "buffer belongs to another device";
	case EOPNOTSUPP:
		return "not supported by this device or preference";
	case ENODEV:
		return "no such device";
	case ENOMEM:
		return "out of memory";
	case ETIME:
		return "timed out";
	case EBUSY:
		return "device busy";
	case EIO:
		return "device I/O error";
	case ECANCELED:
		return "job canceled";
	case ENOENT:
		return "no such object";
	}
	return strerror(-err);
}

bool mxa__debug(void)
{
	const char *s = getenv("MXACCEL_DEBUG");

	return s && *s && strcmp(s, "0") != 0;
}

static void vdbg(const char *fmt, va_list ap)
{
	fputs("mxaccel: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void mxa__dbg(const char *fmt, ...)
{
	va_list ap;

	if (!mxa__debug())
		return;
	va_start(ap, fmt);
	vdbg(fmt, ap);
	va_end(ap);
}

int mxa__err(int err, const char *fmt, ...)
{
	va_list ap;

	if (!mxa__debug())
		return err;
	va_start(ap, fmt);
	vdbg(fmt, ap);
	va_end(ap);
	return err;
}

void mxa__strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
