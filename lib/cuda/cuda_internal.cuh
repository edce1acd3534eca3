/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend (libmxaccel-cuda.so.0): declarations shared by its files.
 *
 * cuda_plugin.cu   entry point, devices, buffers, streams and fences, the
 *                  kernel table and the submit path
 * cuda_core.cu     lib/core compiled for the GPU: quantize and dequantize
 *                  (bit-identical to the CPU)
 * cuda_exact.cuh   the exact GEMMs (lib/core's dots on the GPU): dense,
 *                  weight-only and grouped, bit-identical to the CPU's;
 *                  compiled in cuda_core.cu's unit
 * cuda_quant_encode.cuh  the fast fp6/fp4 quantize encoders (host and device)
 * cuda_gemm_sm90.cu the native fused MX GEMM for sm_90a (TMA + wgmma):
 *                  each path's launch sequence
 * cuda_sm90_operand.cu  its operand view: tensor maps, aligned codes,
 *                  K-major scales, the views the kernels take
 * cuda_gemm_sm90_fp8.cu  its fp8 kernel (per-32 promotion) and launcher
 * cuda_sm90_select.cu  which path runs which shape: each path's range and
 *                  rank, the kernel table's predicates
 * cuda_gemm_sm90_bf16.cu  its bf16 kernel (scales folded into operands)
 * cuda_gemm_sm90_decode.cu  its decode kernel (32 < M <= 64)
 * cuda_gemm_sm90_skinny.cu  its skinny kernel (M <= 32)
 * cuda_gemm_sm90_grouped.cu  the grouped GEMM on the bf16 kernel's main loop
 * cuda_gemm_sm90_grouped_k.cu  its 2d x 2d (groups along K) in one launch
 * cuda_sm90.cuh    what they share (PTX helpers, the kernels' argument
 *                  structures and entry points); cuda_wgmma.cuh the wgmma
 *                  instructions; cuda_sm90_fold.cuh the folding
 * cuda_cublas.cu   dequantize to bf16 + cuBLAS GEMM, loaded with dlopen
 * cuda_gemm_sm90_weight_only.cu  the weight-only GEMM (dense A, MX or
 *                  NVFP4 B) for sm_90a, a decode kernel
 * cuda_gemm_sm90_weight_only_wgmma.cu  the same for M >= 192 with bf16 A
 *                  on the bf16-ss kernel
 */
#ifndef MXA_CUDA_INTERNAL_CUH
#define MXA_CUDA_INTERNAL_CUH

#include <pthread.h>
#include <cuda_runtime.h>

extern "C" {
#include "plugin.h"
}

/* The library's services (plugin.h). */
extern const struct mxa_plugin_host *cuda_host;

#define cuda_err(code, ...) cuda_host->err((code), __VA_ARGS__)
#define cuda_dbg(...) cuda_host->dbg(__VA_ARGS__)

struct cuda_device {
	int ordinal;
	/*
	 * Where every operation is queued: own_stream, or the caller's
	 * (mxa_device_set_stream(), user_stream set), on which calls return
	 * once enqueued.
	 */
	cudaStream_t stream;
	cudaStream_t own_stream;
	bool user_stream;
	pthread_mutex_t lock;		/* one submitter at a time */
	int cc_major, cc_minor;
	int sms;
	size_t smem_optin;		/* shared memory per block, opt-in */
	void *cublas;			/* cublasHandle_t, made on first use */
	/*
	 * The skinny GEMM's split-K counters (zero between GEMMs: the last
	 * CTA of a tile resets its own) and partial sums, grown on demand.
	 */
	void *skinny_ws;
	size_t skinny_ws_bytes;
	uint32_t skinny_ws_tiles;
	/*
	 * cuda-grouped-exact: the groups' workspace (grown on demand) and
	 * the mapped host word its offset checks report faults in.
	 */
	void *exact_ws;
	size_t exact_ws_bytes;
	struct cuda_exact_fault *exact_fault;		/* host address */
	struct cuda_exact_fault *exact_fault_dev;	/* its device address */
	/* The same for the weight-only GEMM, with A's fragments after them. */
	void *wo_ws;
	size_t wo_ws_bytes;
	uint32_t wo_ws_tiles;
};

static inline struct cuda_device *cuda_dev(struct mxa_device *dev)
{
	return (struct cuda_device *)dev->priv;
}

/* Device address of a buffer's byte offset. */
static inline uint8_t *cuda_ptr(const struct mxa_buffer *buf, size_t offset)
{
	return (uint8_t *)buf->priv + offset;
}

/* A CUDA error as a message (MXACCEL_DEBUG=1) and -EIO / -ENOMEM. */
int cuda_fail(cudaError_t e, const char *what);

/* cuda_core.cu */
int cuda_launch_quantize(struct cuda_device *cd, const struct mxa_job *job);
int cuda_launch_quantize_colwise(struct cuda_device *cd,
				 const struct mxa_job *job);
int cuda_launch_dequantize(struct cuda_device *cd, const struct mxa_job *job);
/*
 * Dequantize rows x cols of an MX matrix to a packed bf16 matrix at dst
 * (device memory), exactly rounded; the dequantize+cuBLAS GEMM uses it.
 */
int cuda_dequantize_bf16(struct cuda_device *cd, const struct mxa_matrix *m,
			 uint16_t *dst);
/*
 * An MX matrix (rows x K) as two exact bf16 matrices (packed, device
 * memory) and a per-row exponent R: element = a0 * 2^(R - 191) + a1 *
 * 2^(R - 331), a1 nonzero only for blocks 2^140 and more below the row's
 * largest scale; *any nonzero where some is (cuda-mixed-sm90).
 */
int cuda_mx_bands(struct cuda_device *cd, const struct mxa_matrix *m, uint16_t *a0,
		  uint16_t *a1, int32_t *rexp, uint32_t *any);
/* dst (bf16, rows x cols) = round(src (fp32) [+ dst when accumulating]). */
int cuda_f32_to_bf16(struct cuda_device *cd, const float *src, uint32_t cols,
		     uint32_t rows, uint64_t src_ld, uint16_t *dst,
		     uint64_t dst_ld, int accumulate);

/*
 * The native MX GEMM's paths, one kernel-table entry each (Documentation/
 * cuda.rst): the skinny kernel, the decode kernel, the bf16 kernel with
 * A converted in registers or by a pre-pass (ss: both operands from
 * shared memory), the fp8 kernel alone with its three large-M tilings.
 * The bf16 and decode paths hand the tiles they cannot do exactly to the
 * fp8 kernel.
 */
enum sm90_path {
	SM90_PATH_SKINNY,
	SM90_PATH_DECODE,
	SM90_PATH_BF16,
	SM90_PATH_BF16_SS,
	SM90_PATH_FP8,
	SM90_PATH_FP8_SINGLE,
	SM90_PATH_FP8_QUAD,
};

/* cuda_gemm_sm90.cu */
/* NULL if the device can run the native MX GEMM at all, else why not. */
const char *cuda_sm90_reject(struct cuda_device *cd);
int cuda_launch_gemm_sm90(struct cuda_device *cd, const struct mxa_job *job,
			  enum sm90_path path);

/* cuda_sm90_select.cu: each path's range (NULL: it can run desc) and rank. */
const char *cuda_sm90_path_reject(struct cuda_device *cd,
				  const struct mxa_op_desc *desc,
				  enum sm90_path path);
int cuda_sm90_path_rank(struct cuda_device *cd, const struct mxa_op_desc *desc,
			enum sm90_path path);

/* cuda_exact.cuh (in cuda_core.cu) */
int cuda_launch_gemm_exact(struct cuda_device *cd, const struct mxa_job *job);
int cuda_launch_gemm_weight_only_exact(struct cuda_device *cd,
				       const struct mxa_job *job);
int cuda_launch_gemm_grouped_exact(struct cuda_device *cd,
				   const struct mxa_job *job);
/*
 * A fault cuda-grouped-exact's offset check recorded since the last call
 * (-EINVAL / -EOVERFLOW with the message), cleared; 0 if none.  Called
 * once the host has waited for the work.
 */
int cuda_exact_fault_take(struct cuda_device *cd);
/* cuda_gemm_sm90_grouped.cu: the native grouped GEMM. */
int cuda_launch_gemm_grouped_sm90(struct cuda_device *cd, const struct mxa_job *job);
/*
 * cuda-grouped-sm90-skinny: M <= 32 (2d x 3d: A's rows of all groups) on
 * the skinny kernel; the reject() of its table entry (NULL: it runs).
 */
int cuda_launch_gemm_grouped_skinny(struct cuda_device *cd, const struct mxa_job *job);
const char *cuda_grouped_skinny_reject(struct cuda_device *cd, const struct mxa_op_desc *d);
/*
 * cuda_gemm_sm90_grouped_k.cu: 2d x 2d with MX operands in one launch of
 * the bf16 kernel, offsets read on the device; the reason it cannot take
 * the job (NULL: it can; the per-group path runs it otherwise).
 */
int cuda_launch_gemm_grouped_k(struct cuda_device *cd, const struct mxa_job *job);
const char *cuda_grouped_k_reject(struct cuda_device *cd, const struct mxa_job *job);

/* cuda_cublas.cu */
const char *cuda_cublas_reject(void);
int cuda_launch_gemm_cublas(struct cuda_device *cd, const struct mxa_job *job);
void cuda_cublas_release(struct cuda_device *cd);

/* cuda_gemm_sm90_weight_only.cu: NULL if it can run desc, else why not. */
const char *cuda_weight_only_reject(struct cuda_device *cd,
				    const struct mxa_op_desc *desc);
int cuda_launch_gemm_weight_only(struct cuda_device *cd, const struct mxa_job *job);
/*
 * The same restricted to the stripes of 128 rows of B flagged in
 * stripes[], and to nothing unless *any (both device memory, written by
 * work queued before): cuda-weight-only-wgmma's redo.
 */
int cuda_weight_only_redo(struct cuda_device *cd, const struct mxa_job *job,
			  const uint32_t *any, const uint32_t *stripes);
/* cuda_gemm_sm90_weight_only_wgmma.cu: the same pair for M > 64 or so. */
const char *cuda_weight_only_wgmma_reject(struct cuda_device *cd,
					  const struct mxa_op_desc *desc);
int cuda_weight_only_wgmma_rank(struct cuda_device *cd, const struct mxa_op_desc *desc);
int cuda_launch_gemm_weight_only_wgmma(struct cuda_device *cd, const struct mxa_job *job);
/*
 * cuda_gemm_sm90_mixed.cu: NVFP4 x MX and MX x NVFP4 GEMM through the
 * weight-only kernels, the MX or NVFP4 B streamed as it is (NULL: it can
 * run desc).
 */
const char *cuda_mixed_sm90_reject(struct cuda_device *cd, const struct mxa_op_desc *desc);
int cuda_launch_gemm_mixed_sm90(struct cuda_device *cd, const struct mxa_job *job);

#endif /* MXA_CUDA_INTERNAL_CUH */
