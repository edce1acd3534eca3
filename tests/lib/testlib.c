// SPDX-License-Identifier: MIT
#include "testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int test_failures;
static uint64_t rng_state;

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	test_failures++;
	if (test_failures > 50)
		return;
	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int test_finish(void)
{
	if (test_failures) {
		fprintf(stderr, "%d check(s) failed\n", test_failures);
		return 1;
	}
	return 0;
}

void test_seed(uint64_t dflt)
{
	const char *s = getenv("MXACCEL_TEST_SEED");

	rng_state = s ? strtoull(s, NULL, 0) : dflt;
	printf("seed %llu\n", (unsigned long long)rng_state);
}

uint64_t test_rand(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t test_rand_below(uint32_t n)
{
	return (uint32_t)((test_rand() >> 32) * n >> 32);
}

float test_rand_float(float scale)
{
	double u = (double)(test_rand() >> 11) / (double)(1ull << 53);

	return (float)((2.0 * u - 1.0) * scale);
}

void *test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	*size = (size_t)n;
out:
	fclose(f);
	return buf;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int test_golden_dirs(const char *dirs[2])
{
	const char *full = getenv("MXACCEL_GOLDEN_DIR");
	int n = 0;

	if (is_dir("tests/data/mx_golden"))
		dirs[n++] = "tests/data/mx_golden";
	if (!full)
		full = "../shared/testdata/mx_golden";
	if (is_dir(full))
		dirs[n++] = full;
	return n;
}
