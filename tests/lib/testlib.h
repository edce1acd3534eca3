/* SPDX-License-Identifier: MIT */
/*
 * Minimal test helpers shared by the library tests: checks that record a
 * failure and continue, a seeded PRNG, file loading, and locating golden
 * vectors.  A test's main() ends with `return test_finish();`: 0 pass,
 * 1 fail.  TEST_SKIP (77) skips.
 */
#ifndef MXA_TESTLIB_H
#define MXA_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#define TEST_SKIP 77

extern int test_failures;

void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* CHECK(cond, "fmt", ...): on failure print location and message. */
#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond))                                          \
			test_fail(__FILE__, __LINE__, __VA_ARGS__);   \
	} while (0)

/* CHECK_ERR(call, errno): call must return exactly -errno (or 0). */
#define CHECK_RET(call, want)                                         \
	do {                                                          \
		int __r = (call);                                     \
		if (__r != (want))                                    \
			test_fail(__FILE__, __LINE__,                 \
				  "%s returned %d, want %d", #call,   \
				  __r, (int)(want));                  \
	} while (0)

/* Print the summary and return the process exit status. */
int test_finish(void);

/* splitmix64, seeded from $MXACCEL_TEST_SEED or the given default. */
void test_seed(uint64_t dflt);
uint64_t test_rand(void);
/* Uniform in [0, n). */
uint32_t test_rand_below(uint32_t n);
/* A random fp32 in [-scale, scale] (a float, not its bits). */
float test_rand_float(float scale);

/* Read a whole file; NULL (and *size 0) if it cannot be read. */
void *test_read_file(const char *path, size_t *size);

/*
 * Golden vector directories: the compact subset kept in the repository and,
 * when present, the full torchao set beside the repository
 * (../shared/testdata/mx_golden or $MXACCEL_GOLDEN_DIR).  Returns the number
 * of directories written to dirs (at most 2).
 */
int test_golden_dirs(const char *dirs[2]);

#endif /* MXA_TESTLIB_H */
