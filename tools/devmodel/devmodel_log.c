// SPDX-License-Identifier: MIT
/*
 * The device model's log: one line per event, stamped with the seconds
 * since start, to --log FILE or stderr, from any thread.
 */
#include <stdarg.h>

#include "devmodel.h"

uint64_t dm_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

void dm_log(struct dm *dm, const char *fmt, ...)
{
	uint64_t t0 = (uint64_t)dm->t0.tv_sec * 1000000000ULL +
		      (uint64_t)dm->t0.tv_nsec;
	uint64_t ns = dm_now_ns() - t0;
	FILE *f = dm->log ? dm->log : stderr;
	va_list ap;

	pthread_mutex_lock(&dm->log_lock);
	fprintf(f, "[%6llu.%06llu] ", (unsigned long long)(ns / 1000000000ULL),
		(unsigned long long)(ns % 1000000000ULL / 1000));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
	pthread_mutex_unlock(&dm->log_lock);
}
