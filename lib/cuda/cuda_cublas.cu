// SPDX-License-Identifier: MIT
/*
 * cuda-dequant-cublas: torchao's emulated path on the GPU.  Both operands
 * are dequantized exactly to bf16 (cuda_core.cu; every element value is
 * exact in bf16, and so is the scaled value unless it leaves bf16's normal
 * range), then cuBLAS multiplies them in bf16 with fp32 accumulation
 * (CUBLAS_COMPUTE_32F) into fp32, with beta = 1 when accumulating into an
 * fp32 C; a bf16 C gets the fp32 result plus C_in rounded once.  Scratch for the two bf16 matrices comes from the stream's
 * memory pool and is released in stream order.
 *
 * cuBLAS is loaded with dlopen on first use, so the plugin itself needs no
 * cuBLAS to load; without it this kernel is rejected with the reason.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include <cublas_v2.h>

#include "cuda_internal.cuh"

#define STR2(x) #x
#define STR(x) STR2(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

/* The C entry points, as declared in cublas_api.h. */
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t,
				     cublasOperation_t, int, int, int,
				     const void *, const void *, cudaDataType,
				     int, const void *, cudaDataType, int,
				     const void *, void *, cudaDataType, int,
				     cublasComputeType_t, cublasGemmAlgo_t);

static struct {
	decltype(&cublasCreate_v2) create;
	decltype(&cublasDestroy_v2) destroy;
	decltype(&cublasSetStream_v2) set_stream;
	gemm_ex_fn gemm_ex;
} cb;

static pthread_once_t cublas_once = PTHREAD_ONCE_INIT;
static const char *cublas_reason;
static char cublas_reason_buf[MXA_REASON_MAX];

static void cublas_load(void)
{
	static const char *const names[] = {
		CUBLAS_SONAME,
		"/usr/local/cuda/lib64/" CUBLAS_SONAME,
	};
	void *h = NULL;
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(cublas_reason_buf, sizeof(cublas_reason_buf),
			 "cuBLAS is not available: %s", dlerror());
		cublas_reason = cublas_reason_buf;
		return;
	}
	*(void **)&cb.create = dlsym(h, "cublasCreate_v2");
	*(void **)&cb.destroy = dlsym(h, "cublasDestroy_v2");
	*(void **)&cb.set_stream = dlsym(h, "cublasSetStream_v2");
	*(void **)&cb.gemm_ex = dlsym(h, "cublasGemmEx");
	if (!cb.create || !cb.destroy || !cb.set_stream || !cb.gemm_ex)
		cublas_reason = "cuBLAS lacks cublasCreate_v2, cublasSetStream_v2 or cublasGemmEx";
}

const char *cuda_cublas_reject(void)
{
	pthread_once(&cublas_once, cublas_load);
	return cublas_reason;
}

void cuda_cublas_release(struct cuda_device *cd)
{
	if (cd->cublas)
		cb.destroy((cublasHandle_t)cd->cublas);
	cd->cublas = NULL;
}

int cuda_launch_gemm_cublas(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_matrix *a = &job->a, *b = &job->b;
	const struct mxa_dense *c = &job->dense;
	size_t es = c->dtype == MXA_DTYPE_BF16 ? 2 : 4;
	float alpha = 1.0f, beta = job->flags & MXA_GEMM_ACCUMULATE ? 1.0f : 0.0f;
	uint16_t *a16 = NULL, *b16 = NULL;
	float *c32 = NULL;
	cublasStatus_t st;
	cudaError_t e;
	int ret;

	if (cuda_cublas_reject())
		return cuda_err(-EOPNOTSUPP, "cuda: %s", cuda_cublas_reject());
	if (!cd->cublas) {
		cublasHandle_t h;

		st = cb.create(&h);
		if (st != CUBLAS_STATUS_SUCCESS)
			return cuda_err(-EIO, "cuda: cublasCreate: status %d",
					(int)st);
		cd->cublas = h;
	}
	st = cb.set_stream((cublasHandle_t)cd->cublas, cd->stream);
	if (st != CUBLAS_STATUS_SUCCESS)
		return cuda_err(-EIO, "cuda: cublasSetStream: status %d", (int)st);

	e = cudaMallocAsync((void **)&a16, (size_t)a->rows * a->cols * 2,
			    cd->stream);
	if (e == cudaSuccess)
		e = cudaMallocAsync((void **)&b16, (size_t)b->rows * b->cols * 2,
				    cd->stream);
	if (e != cudaSuccess) {
		ret = cuda_fail(e, "dequant-cublas: scratch");
		goto out;
	}
	ret = cuda_dequantize_bf16(cd, a, a16);
	if (!ret)
		ret = cuda_dequantize_bf16(cd, b, b16);
	if (ret)
		goto out;
	/*
	 * C is always computed in fp32: for a bf16 C, cuBLAS's own bf16
	 * output path may round partial sums (split K), so it goes to fp32
	 * scratch and one rounding (after C_in is added) makes the bf16.
	 */
	if (c->dtype == MXA_DTYPE_BF16) {
		e = cudaMallocAsync((void **)&c32, (size_t)a->rows * b->rows * 4,
				    cd->stream);
		if (e != cudaSuccess) {
			ret = cuda_fail(e, "dequant-cublas: scratch");
			goto out;
		}
		beta = 0.0f;
	}
	/*
	 * Column-major view: C^T (N x M, ld = C's row stride) = B' * A, with
	 * B' the transpose of the column-major K x N matrix that B's rows are.
	 */
	st = cb.gemm_ex((cublasHandle_t)cd->cublas, CUBLAS_OP_T, CUBLAS_OP_N,
			(int)b->rows, (int)a->rows, (int)a->cols, &alpha,
			b16, CUDA_R_16BF, (int)b->cols, a16, CUDA_R_16BF,
			(int)a->cols, &beta, c32 ? (void *)c32 : cuda_ptr(c->buf, c->offset),
			CUDA_R_32F,
			c32 ? (int)b->rows : (int)(mxa__dense_stride(c) / es),
			CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	if (st != CUBLAS_STATUS_SUCCESS)
		ret = cuda_err(-EIO, "cuda: cublasGemmEx: status %d", (int)st);
	else if (c32)
		ret = cuda_f32_to_bf16(cd, c32, b->rows, a->rows, b->rows,
				       (uint16_t *)cuda_ptr(c->buf, c->offset),
				       mxa__dense_stride(c) / 2,
				       !!(job->flags & MXA_GEMM_ACCUMULATE));
out:
	if (c32)
		cudaFreeAsync(c32, cd->stream);
	if (a16)
		cudaFreeAsync(a16, cd->stream);
	if (b16)
		cudaFreeAsync(b16, cd->stream);
	return ret;
}
