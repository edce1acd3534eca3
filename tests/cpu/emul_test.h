/* SPDX-License-Identifier: MIT */
/*
 * What the tests of kernels on the AMX model share: the AVX-512 subset
 * the kernels' vector code needs (they skip without it), and zeroed,
 * 64-byte aligned memory (the kernels store whole tile rows).
 */
#ifndef MXA_EMUL_TEST_H
#define MXA_EMUL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True where the kernels can run; else says why the test skips. */
static inline int emul_test_cpu_ok(void)
{
	if (__builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512dq"))
		return 1;
	printf("skip: the AMX kernels' vector code needs AVX-512 BW/VL/DQ\n");
	return 0;
}

static inline void *emul_test_zalloc(size_t n)
{
	void *p;

	n = (n + 63) & ~(size_t)63;
	if (posix_memalign(&p, 64, n ? n : 64))
		abort();
	memset(p, 0, n);
	return p;
}

#endif /* MXA_EMUL_TEST_H */
