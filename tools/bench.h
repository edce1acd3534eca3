/* SPDX-License-Identifier: MIT */
/*
 * Pieces of `mxaccel bench` besides the command itself (cmd_bench.c): the
 * machine's measured peaks and copy bandwidth (bench_machine.c), the
 * OpenBLAS SGEMM peer (bench_blas.c) and the oneDNN matmul peers
 * (bench_dnnl.c).  Everything a ratio is computed
 * against is measured in the same run, with the same thread count.
 */
#ifndef MXACCEL_BENCH_H
#define MXACCEL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Best, median and quartiles of repeated runs, in seconds. */
struct bench_times {
	double best, median, q1, q3;
	unsigned int runs;
};

/* --- bench_machine.c ------------------------------------------------------ */

/*
 * Peak arithmetic rates with `threads` threads issuing independent
 * instructions: fp32 FMA (vfmadd231ps, zmm if AVX-512 else ymm), BF16 dot
 * (vdpbf16ps zmm), int8 dot (vpdpbusd zmm), and the AMX tile multiplies
 * (tdpbf16ps, tdpbssd on four accumulator tiles), in GFLOP/s counting a
 * multiply-add as 2.  0 where the CPU (or the OS's permission) lacks the
 * instruction.
 */
struct bench_peaks {
	double fma, bf16, int8, amx_bf16, amx_int8;
	const char *fma_insn;
	bool amx;			/* AMX present and permitted */
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
 * OPENBLAS_CORETYPE=SkylakeX (its AVX-512 SGEMM); likewise with
 * OMP_WAIT_POLICY=PASSIVE when that is unset (oneDNN's OpenMP threads).
 * Returns only when no re-execution was needed or it failed.
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

/* --- bench_dnnl.c --------------------------------------------------------- */

/*
 * C[m x n] (fp32) = A[m x k] * B[n x k]^T by oneDNN's matmul, on a and b
 * converted to bf16 (RNE) or, s8, to int8 with one scale per tensor.
 * NULL, with the reason in why, where oneDNN is not built in ("oneDNN
 * not available") or refuses.
 */
struct bench_dnnl;

struct bench_dnnl *bench_dnnl_new(bool s8, const float *a, const float *b,
				  uint32_t m, uint32_t n, uint32_t k,
				  unsigned int threads, char *why, size_t len);
const char *bench_dnnl_impl(const struct bench_dnnl *d);
int bench_dnnl_once(void *dnnl);
void bench_dnnl_free(struct bench_dnnl *d);

#endif /* MXACCEL_BENCH_H */
