/* SPDX-License-Identifier: MIT */
/*
 * Pieces of `mxaccel bench` besides the command itself (cmd_bench.c): the
 * machine's measured peaks and copy bandwidth (bench_machine.c) and the
 * OpenBLAS SGEMM peer (bench_blas.c).  Everything a ratio is computed
 * against is measured in the same run, with the same thread count.
 */
#ifndef MXACCEL_BENCH_H
#define MXACCEL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Best and median of repeated runs, in seconds. */
struct bench_times {
	double best, median;
	unsigned int runs;
};

/* --- bench_machine.c ------------------------------------------------------ */

/*
 * Peak arithmetic rates with `threads` threads issuing independent
 * instructions: fp32 FMA (vfmadd231ps, zmm if AVX-512 else ymm), BF16 dot
 * (vdpbf16ps zmm) and int8 dot (vpdpbusd zmm), in GFLOP/s counting a
 * multiply-add as 2.  0 where the CPU lacks the instruction.
 */
struct bench_peaks {
	double fma, bf16, int8;
	const char *fma_insn;
	unsigned int threads;
};

/* Measure every peak (best of a few runs) into a zeroed *out. */
void bench_peaks(unsigned int threads, struct bench_peaks *out);
/*
 * One short run of every peak *peaks has, each kept if higher: timed
 * alternately with a kernel, so the peak and the kernel are measured
 * under the same conditions on a shared machine.  Returns 0.
 */
int bench_peaks_once(void *peaks);

/* memcpy of size bytes split over threads; traffic 2 * size per run. */
struct bench_copy;

struct bench_copy *bench_copy_new(size_t size, unsigned int threads);
int bench_copy_once(void *copy);
void bench_copy_free(struct bench_copy *copy);

/* --- bench_blas.c --------------------------------------------------------- */

/*
 * OpenBLAS must see OPENBLAS_CORETYPE before it loads, so when the CPU has
 * AVX-512 and the variable is unset, re-execute this command with
 * OPENBLAS_CORETYPE=SkylakeX (its AVX-512 SGEMM).  Returns only when no
 * re-execution was needed or it failed.
 */
void bench_blas_force_avx512(int argc, char **argv);
/* The OpenBLAS core in use, and whether OPENBLAS_CORETYPE chose it. */
const char *bench_blas_core(bool *forced);

/* C[m x n] = A[m x k] * B[n x k]^T in fp32 with cblas_sgemm. */
struct bench_sgemm {
	const float *a, *b;
	float *c;
	uint32_t m, n, k;
};

void bench_sgemm_threads(unsigned int threads);
int bench_sgemm_once(void *sgemm);

#endif /* MXACCEL_BENCH_H */
