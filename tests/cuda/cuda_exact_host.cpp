// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's exact GEMMs (lib/cuda/cuda_exact.cuh) run on the host,
 * for test_cuda_exact_host (tests/cuda/test_cuda_exact.c built with
 * CUDA_EXACT_HOST): the kernels and their launchers are compiled as plain
 * C++ against a stand-in for the few CUDA runtime calls they make, and
 * every launch runs every thread of every block in turn.  That is exact
 * emulation for these kernels: each thread writes only its own outputs,
 * none shares memory or synchronizes with another, and the grouped check
 * kernel (one thread) finishes before the GEMM kernel starts, as stream
 * order makes it on the GPU.  Buffers are a cpu device's (host memory).
 *
 * What this cannot test is the GPU's side of it (code generation, the
 * mapped fault word, stream-ordered allocation); test_cuda_exact on a GPU
 * does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUDA's qualifiers and the core's (lib/core/mxcore.h), for the host. */
#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define MXCORE_FN
#define MXCORE_TABLE

/* --- the CUDA runtime the kernels and launchers use ----------------------- */

typedef int cudaError_t;
typedef void *cudaStream_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum { cudaHostAllocMapped = 2 };

static cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	*p = calloc(1, n);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

static cudaError_t cudaHostGetDevicePointer(void **dev, void *host,
					    unsigned int flags)
{
	(void)flags;
	*dev = host;
	return cudaSuccess;
}

static cudaError_t cudaFreeHost(void *p)
{
	free(p);
	return cudaSuccess;
}

/* Fresh workspace holds garbage, as cudaMallocAsync's may. */
static cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
	(void)s;
	*p = malloc(n);
	if (!*p)
		return cudaErrorMemoryAllocation;
	memset(*p, 0xa5, n);
	return cudaSuccess;
}

static cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	(void)s;
	free(p);
	return cudaSuccess;
}

static void __threadfence_system(void)
{
}

struct uint3 {
	unsigned int x, y, z;
};

struct dim3 {
	unsigned int x, y, z;
	dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1)
		: x(a), y(b), z(c) {}
};

static uint3 blockIdx, threadIdx;
static dim3 blockDim, gridDim;

/* A launch: every thread of the grid, one after another. */
template <typename P>
static void host_launch(void (*kernel)(P), dim3 grid, dim3 threads,
			const P &p)
{
	unsigned int bx, by, tx, ty;

	gridDim = grid;
	blockDim = threads;
	for (by = 0; by < grid.y; by++)
		for (bx = 0; bx < grid.x; bx++)
			for (ty = 0; ty < threads.y; ty++)
				for (tx = 0; tx < threads.x; tx++) {
					blockIdx = { bx, by, 0 };
					threadIdx = { tx, ty, 0 };
					kernel(p);
				}
}

#define EXACT_LAUNCH(kernel, grid, threads, stream, p) \
	((void)(stream), host_launch(kernel, grid, threads, p))

/* --- what the plugin's cuda_internal.cuh gives them ---------------------- */

#define MXA_CUDA_INTERNAL_CUH

extern "C" {
#include "backend.h"
}
#include "cuda_exact_host.h"

struct cuda_device {
	cudaStream_t stream;
	void *exact_ws;
	size_t exact_ws_bytes;
	struct cuda_exact_fault *exact_fault;
	struct cuda_exact_fault *exact_fault_dev;
};

/* A cpu buffer's byte offset. */
static inline uint8_t *cuda_ptr(const struct mxa_buffer *buf, size_t offset)
{
	return (uint8_t *)buf->host + offset;
}

/* The library's error report (MXACCEL_DEBUG=1 prints it there too). */
static int cuda_err(int err, const char *fmt, ...)
{
	va_list ap;

	if (getenv("MXACCEL_DEBUG")) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return err;
}

static int cuda_fail(cudaError_t e, const char *what)
{
	return cuda_err(e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO,
			"%s: error %d", what, e);
}

#include "mxcore_elem.c"
#include "mxcore_float.c"
#include "mxcore_dot.c"
#include "cuda_exact.cuh"

/* --- the launchers, called as the plugin's submit path calls them ------- */

static struct cuda_device host_dev;

/* Launch, then what a wait on the device reports. */
static int run(int (*launch)(struct cuda_device *, const struct mxa_job *),
	       const struct mxa_job *job)
{
	int ret = launch(&host_dev, job);

	return ret ? ret : cuda_exact_fault_take(&host_dev);
}

extern "C" int host_gemm_exact(const struct mxa_matrix *a,
			       const struct mxa_matrix *b,
			       const struct mxa_dense *c, uint32_t flags)
{
	struct mxa_job job;

	memset(&job, 0, sizeof(job));
	job.op = MXA_OP_GEMM;
	job.a = *a;
	job.b = *b;
	job.dense = *c;
	job.flags = flags;
	return run(cuda_launch_gemm_exact, &job);
}

extern "C" int host_gemm_weight_only_exact(const struct mxa_dense *a,
					   const struct mxa_matrix *b,
					   const struct mxa_dense *c,
					   uint32_t flags)
{
	struct mxa_job job;

	memset(&job, 0, sizeof(job));
	job.op = MXA_OP_GEMM_WEIGHT_ONLY;
	job.a_dense = *a;
	job.b = *b;
	job.dense = *c;
	job.flags = flags;
	return run(cuda_launch_gemm_weight_only_exact, &job);
}

extern "C" int host_gemm_grouped_exact(const struct mxa_matrix *a,
				       const struct mxa_matrix *b,
				       const struct mxa_dense *c,
				       const struct mxa_grouped *g,
				       uint32_t flags)
{
	struct mxa_job job;

	memset(&job, 0, sizeof(job));
	job.op = MXA_OP_GEMM_GROUPED;
	job.a = *a;
	job.b = *b;
	job.dense = *c;
	job.flags = flags;
	job.groups = *g;
	return run(cuda_launch_gemm_grouped_exact, &job);
}
