// SPDX-License-Identifier: MIT
/*
 * The benchmark's peer on the CPU: OpenBLAS SGEMM (Debian's
 * libopenblas-dev) on the same matrices dequantized to fp32.  Only the
 * mxaccel CLI links OpenBLAS; the library never does.
 */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define BENCH_BLAS_CORE "SkylakeX"

void bench_blas_force_avx512(int argc, char **argv)
{
	char **nargv;
	int i;

	bool core, omp;

	__builtin_cpu_init();
	core = !getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx512f");
	/*
	 * oneDNN's OpenMP threads spin after each matmul by default, taking
	 * the cores from the kernel timed next: make them sleep.
	 */
	omp = !getenv("OMP_WAIT_POLICY");
	if (!core && !omp)
		return;
	nargv = calloc((size_t)argc + 2, sizeof(*nargv));
	if (!nargv)
		return;
	nargv[0] = "mxaccel";
	for (i = 0; i < argc; i++)
		nargv[i + 1] = argv[i];
	if (core)
		setenv("OPENBLAS_CORETYPE", BENCH_BLAS_CORE, 1);
	if (omp)
		setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
	fflush(NULL);
	execv("/proc/self/exe", nargv);
	/* Could not re-execute: measure with what the libraries chose. */
	if (core)
		unsetenv("OPENBLAS_CORETYPE");
	if (omp)
		unsetenv("OMP_WAIT_POLICY");
	free(nargv);
}

const char *bench_blas_core(bool *forced)
{
	const char *env = getenv("OPENBLAS_CORETYPE");

	*forced = env && *env;
	return openblas_get_corename();
}

void bench_sgemm_threads(unsigned int threads)
{
	openblas_set_num_threads((int)threads);
}

int bench_sgemm_once(void *arg)
{
	struct bench_sgemm *s = arg;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)s->m,
		    (int)s->n, (int)s->k, 1.0f, s->a, (int)s->k, s->b,
		    (int)s->k, 0.0f, s->c, (int)s->n);
	return 0;
}
