// SPDX-License-Identifier: MIT
/*
 * The CUDA backend: "cuda:N" is the N-th CUDA device.  Buffers are device
 * memory (cudaMalloc, or the caller's, wrapped; never managed memory)
 * without a host mapping; copies go through the device's stream.  Every
 * kernel is queued on that stream (submit) and a fence is a CUDA event
 * recorded after the last one.  The stream is the device's own, or the
 * caller's (stream mode: mxa_device_set_stream()), on which synchronous
 * calls return once queued.
 *
 * Kernels (Documentation/cuda.rst):
 *   cuda-quantize, cuda-dequantize  lib/core on the GPU, bit-exact
 *   cuda-exact      the exact reference GEMM (lib/core on the GPU),
 *                   bit-identical to cpu-exact: EMULATED; MX, NVFP4 and
 *                   mixed operands
 *   cuda-weight-only-exact, cuda-grouped-exact  the same for weight-only
 *                   and grouped GEMM (cuda_exact.cuh): EMULATED
 *   cuda-mx-sm90-*  the fused MX GEMM for Hopper (TMA + wgmma bf16 with the
 *                   scales folded into exact operands; fp8 with per-32
 *                   scale promotion): NATIVE, one entry per path (skinny,
 *                   decode, bf16, bf16-ss, fp8, fp8-single, fp8-quad),
 *                   chosen by cuda_sm90_select.cu's ranges and ranks
 *   cuda-dequant-cublas  dequantize to bf16 + cuBLAS, torchao's emulated
 *                   path: neither native nor exact, AUTO's choice where
 *                   the native kernel cannot run
 *   cuda-weight-only  weight-only GEMM (dense A, MX or NVFP4 B) for
 *                   sm_90a: NATIVE, a decode kernel
 *   cuda-weight-only-wgmma  the same with bf16 A from M = 192 on (prefill):
 *                   NATIVE, B to bf16 once, the bf16-ss kernel
 *   cuda-grouped-sm90  the grouped GEMM: 2d x 3d on the bf16 kernel's
 *                   main loop, 2d x 2d by the dense paths per group: NATIVE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "cuda_internal.cuh"

const struct mxa_plugin_host *cuda_host;

int cuda_fail(cudaError_t e, const char *what)
{
	int err = e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;

	return cuda_err(err, "cuda: %s: %s (%s)", what, cudaGetErrorName(e),
			cudaGetErrorString(e));
}

/* --- probe ----------------------------------------------------------------- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_count;
static char probe_reason[MXA_REASON_MAX];

static void probe_devices(void)
{
	int n = 0, drv = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
	    e == cudaErrorInitializationError) {
		cudaDriverGetVersion(&drv);
		snprintf(probe_reason, sizeof(probe_reason),
			 "no CUDA device: %s (%s)%s", cudaGetErrorString(e),
			 cudaGetErrorName(e),
			 drv ? "" : "; no NVIDIA driver (libcuda.so.1) found");
		n = 0;
	} else if (e != cudaSuccess) {
		snprintf(probe_reason, sizeof(probe_reason),
			 "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
			 cudaGetErrorName(e));
		n = 0;
	} else if (!n) {
		snprintf(probe_reason, sizeof(probe_reason),
			 "no CUDA device");
	}
	probe_count = n;
}

static unsigned int cuda_probe(char *reason, size_t size)
{
	pthread_once(&probe_once, probe_devices);
	if (!probe_count && reason && size)
		snprintf(reason, size, "%s", probe_reason);
	return (unsigned int)probe_count;
}

/* --- devices ------------------------------------------------------------------ */

static int cuda_open(struct mxa_device *dev)
{
	struct cuda_device *cd;
	cudaDeviceProp prop;
	const char *no_native;
	int rt = 0, drv = 0, optin = 0;
	cudaError_t e;

	e = cudaSetDevice((int)dev->index);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, (int)dev->index);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&optin,
					   cudaDevAttrMaxSharedMemoryPerBlockOptin,
					   (int)dev->index);
	if (e != cudaSuccess)
		return cuda_fail(e, "open");
	cd = (struct cuda_device *)calloc(1, sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	cd->ordinal = (int)dev->index;
	cd->cc_major = prop.major;
	cd->cc_minor = prop.minor;
	cd->sms = prop.multiProcessorCount;
	cd->smem_optin = (size_t)optin;
	e = cudaStreamCreateWithFlags(&cd->own_stream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		free(cd);
		return cuda_fail(e, "stream");
	}
	cd->stream = cd->own_stream;
	pthread_mutex_init(&cd->lock, NULL);
	dev->priv = cd;

	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	no_native = cuda_sm90_reject(cd);
	snprintf(dev->info.name, sizeof(dev->info.name), "cuda:%u",
		 dev->index);
	snprintf(dev->info.backend, sizeof(dev->info.backend), "cuda");
	snprintf(dev->info.description, sizeof(dev->info.description),
		 "%s (sm_%d%d, %d SMs, %zu MiB), CUDA runtime %d.%d, driver %d.%d; %s%s",
		 prop.name, prop.major, prop.minor, prop.multiProcessorCount,
		 prop.totalGlobalMem >> 20, rt / 1000, rt % 1000 / 10,
		 drv / 1000, drv % 1000 / 10,
		 no_native ? "no native MX GEMM: " : "native MX GEMM: TMA + wgmma",
		 no_native ? no_native : "");
	dev->info.host_visible = 0;
	dev->info.conformance = 0;
	return 0;
}

static void cuda_close(struct mxa_device *dev)
{
	struct cuda_device *cd = cuda_dev(dev);

	cudaSetDevice(cd->ordinal);
	/* The caller's stream too: the workspace below may be in use on it. */
	cudaStreamSynchronize(cd->stream);
	cuda_cublas_release(cd);
	cudaFree(cd->skinny_ws);
	cudaFree(cd->exact_ws);
	if (cd->exact_fault)
		cudaFreeHost(cd->exact_fault);
	cudaFree(cd->wo_ws);
	cudaStreamDestroy(cd->own_stream);
	pthread_mutex_destroy(&cd->lock);
	free(cd);
}

/* The stream operations go to now (set_stream() may change it). */
static cudaStream_t current_stream(struct cuda_device *cd)
{
	cudaStream_t s;

	pthread_mutex_lock(&cd->lock);
	s = cd->stream;
	pthread_mutex_unlock(&cd->lock);
	return s;
}

/* --- streams ------------------------------------------------------------------ */

/*
 * Queue later work on the caller's stream (NULL: the device's own).  Work
 * queued before is ordered before work queued after by an event the new
 * stream waits for, on the GPU: the skinny kernel's workspace and the
 * memory pool's blocks move from one stream to the other safely.
 */
static int cuda_set_stream(struct mxa_device *dev, void *stream)
{
	struct cuda_device *cd = cuda_dev(dev);
	cudaStream_t next = stream ? (cudaStream_t)stream : cd->own_stream;
	cudaEvent_t ev;
	cudaError_t e;
	int on = -1;

	cudaSetDevice(cd->ordinal);
	if (stream) {
		e = cudaStreamGetDevice(next, &on);
		if (e != cudaSuccess) {
			cudaGetLastError();
			return cuda_err(-EINVAL,
					"device_set_stream: %p is not a CUDA stream: %s",
					stream, cudaGetErrorString(e));
		}
		if (on != cd->ordinal)
			return cuda_err(-EXDEV,
					"device_set_stream: the stream belongs to cuda:%d, not %s",
					on, dev->info.name);
	}
	pthread_mutex_lock(&cd->lock);
	if (next != cd->stream) {
		e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
		if (e == cudaSuccess) {
			e = cudaEventRecord(ev, cd->stream);
			if (e == cudaSuccess)
				e = cudaStreamWaitEvent(next, ev, 0);
			/* Released once it has completed. */
			cudaEventDestroy(ev);
		}
		if (e != cudaSuccess) {
			pthread_mutex_unlock(&cd->lock);
			return cuda_fail(e, "device_set_stream: ordering the streams");
		}
	}
	cd->stream = next;
	cd->user_stream = stream != NULL;
	pthread_mutex_unlock(&cd->lock);
	cuda_dbg("%s: operations go to %s", dev->info.name,
		 stream ? "the caller's stream, without waiting" :
			  "the device's own stream, synchronously");
	return 0;
}

static void *cuda_get_stream(struct mxa_device *dev)
{
	struct cuda_device *cd = cuda_dev(dev);
	void *s;

	pthread_mutex_lock(&cd->lock);
	s = cd->user_stream ? (void *)cd->stream : NULL;
	pthread_mutex_unlock(&cd->lock);
	return s;
}

/* --- buffers --------------------------------------------------------------- */

static int cuda_buf_alloc(struct mxa_buffer *buf)
{
	struct cuda_device *cd = cuda_dev(buf->dev);
	void *p = NULL;
	cudaError_t e;

	cudaSetDevice(cd->ordinal);
	e = cudaMalloc(&p, buf->size);
	if (e != cudaSuccess)
		return cuda_fail(e, "cudaMalloc");
	/* Contents start zeroed; later work on the stream is ordered after. */
	e = cudaMemsetAsync(p, 0, buf->size, current_stream(cd));
	if (e != cudaSuccess) {
		cudaFree(p);
		return cuda_fail(e, "cudaMemsetAsync");
	}
	buf->priv = p;
	buf->host = NULL;
	return 0;
}

static void cuda_buf_free(struct mxa_buffer *buf)
{
	struct cuda_device *cd = cuda_dev(buf->dev);

	cudaSetDevice(cd->ordinal);
	/* Work queued on the buffer finishes first. */
	cudaStreamSynchronize(current_stream(cd));
	cudaFree(buf->priv);
}

typedef CUresult (*address_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
static pthread_once_t range_once = PTHREAD_ONCE_INIT;
static address_range_fn address_range;

static void range_load(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = NULL;

	if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000,
					     cudaEnableDefault, &q) == cudaSuccess &&
	    q == cudaDriverEntryPointSuccess)
		address_range = (address_range_fn)fn;
}

/*
 * mxa_buffer_wrap(): ptr must be device memory of this GPU (not host,
 * pinned, managed or unknown memory), and ptr + size inside one of its
 * allocations.  The memory stays the caller's: buf_free is never called
 * for a wrapped buffer.
 */
static int cuda_buf_wrap(struct mxa_buffer *buf, void *ptr)
{
	struct cuda_device *cd = cuda_dev(buf->dev);
	const char *name = buf->dev->info.name;
	cudaPointerAttributes a;
	CUdeviceptr base = 0;
	size_t extent = 0;
	cudaError_t e;

	cudaSetDevice(cd->ordinal);
	e = cudaPointerGetAttributes(&a, ptr);
	if (e != cudaSuccess) {
		cudaGetLastError();
		return cuda_err(-EINVAL, "buffer_wrap: %p on %s: %s", ptr, name,
				cudaGetErrorString(e));
	}
	switch (a.type) {
	case cudaMemoryTypeDevice:
		break;
	case cudaMemoryTypeManaged:
		return cuda_err(-EINVAL,
				"buffer_wrap: %p is managed memory; %s wraps device memory (cudaMalloc) only",
				ptr, name);
	case cudaMemoryTypeHost:
		return cuda_err(-EINVAL,
				"buffer_wrap: %p is pinned host memory; %s wraps device memory (cudaMalloc) only",
				ptr, name);
	default:
		return cuda_err(-EINVAL,
				"buffer_wrap: %p is host or unknown memory, not device memory of %s",
				ptr, name);
	}
	if (a.device != cd->ordinal)
		return cuda_err(-EXDEV,
				"buffer_wrap: %p is memory of cuda:%d, not of %s",
				ptr, a.device, name);
	pthread_once(&range_once, range_load);
	if (address_range &&
	    address_range(&base, &extent, (CUdeviceptr)(uintptr_t)ptr) == CUDA_SUCCESS &&
	    (uintptr_t)ptr - base + buf->size > extent)
		return cuda_err(-EINVAL,
				"buffer_wrap: %zu bytes at %p run past the end of its allocation (%zu bytes from %p)",
				buf->size, ptr, extent, (void *)(uintptr_t)base);
	buf->priv = ptr;
	buf->host = NULL;
	return 0;
}

static int cuda_buf_copy(struct mxa_buffer *buf, size_t offset, void *host,
			 size_t size, bool to_device)
{
	struct cuda_device *cd = cuda_dev(buf->dev);
	cudaStream_t s = current_stream(cd);
	cudaError_t e;

	cudaSetDevice(cd->ordinal);
	/* On the stream, so that copies are ordered with queued kernels. */
	if (to_device)
		e = cudaMemcpyAsync(cuda_ptr(buf, offset), host, size,
				    cudaMemcpyHostToDevice, s);
	else
		e = cudaMemcpyAsync(host, cuda_ptr(buf, offset), size,
				    cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	return e == cudaSuccess ? 0 : cuda_fail(e, "copy");
}

/* --- kernels ----------------------------------------------------------------- */

/* One per path of the native GEMM (cuda_sm90_select.cu). */
template <enum sm90_path P>
static const char *reject_sm90(struct mxa_device *dev,
			       const struct mxa_op_desc *desc)
{
	const char *no = cuda_sm90_reject(cuda_dev(dev));

	return no ? no : cuda_sm90_path_reject(cuda_dev(dev), desc, P);
}

template <enum sm90_path P>
static int rank_sm90(struct mxa_device *dev, const struct mxa_op_desc *desc)
{
	return cuda_sm90_path_rank(cuda_dev(dev), desc, P);
}

/* MX x MX or NVFP4 x NVFP4 (the table entry's scale_types takes both). */
static const char *reject_grouped(struct mxa_device *dev,
				  const struct mxa_op_desc *desc)
{
	const char *no = cuda_sm90_reject(cuda_dev(dev));

	if (no)
		return no;
	return desc->a_scale_type != desc->b_scale_type ?
	       "mixed NVFP4 x MX grouped operands are not taken natively (UE4M3 scales on both or neither; cuda-grouped-exact runs them)" :
	       NULL;
}

static const char *reject_grouped_skinny(struct mxa_device *dev,
					 const struct mxa_op_desc *desc)
{
	return cuda_grouped_skinny_reject(cuda_dev(dev), desc);
}

static const char *reject_cublas(struct mxa_device *dev,
				 const struct mxa_op_desc *desc)
{
	(void)dev;
	(void)desc;
	return cuda_cublas_reject();
}

static const char *reject_weight_only(struct mxa_device *dev,
				      const struct mxa_op_desc *desc)
{
	return cuda_weight_only_reject(cuda_dev(dev), desc);
}

static const char *reject_weight_only_wgmma(struct mxa_device *dev,
					    const struct mxa_op_desc *desc)
{
	return cuda_weight_only_wgmma_reject(cuda_dev(dev), desc);
}

static int rank_weight_only_wgmma(struct mxa_device *dev, const struct mxa_op_desc *desc)
{
	return cuda_weight_only_wgmma_rank(cuda_dev(dev), desc);
}

static const char *reject_mixed(struct mxa_device *dev, const struct mxa_op_desc *desc)
{
	return cuda_mixed_sm90_reject(cuda_dev(dev), desc);
}

enum {
	K_QUANTIZE,
	K_DEQUANTIZE,
	K_EXACT,
	K_SM90_SKINNY,
	K_SM90_DECODE,
	K_SM90_BF16,
	K_SM90_BF16_SS,
	K_SM90_FP8,
	K_SM90_FP8_SINGLE,
	K_SM90_FP8_QUAD,
	K_CUBLAS,
	K_QUANTIZE_COLWISE,
	K_WEIGHT_ONLY_EXACT,
	K_GROUPED_EXACT,
	K_WEIGHT_ONLY,
	K_SM90_GROUPED,
	K_SM90_GROUPED_SKINNY,
	K_WEIGHT_ONLY_WGMMA,
	K_SM90_MIXED,
};

/*
 * A path of the native GEMM as a kernel-table entry, taking the scale
 * types `scales` (MXA_KERNEL_SCALES; 0 = E8M0 only).
 */
#define SM90_KERNEL_SCALES(kname, path, scales, text) {			\
		.name = kname,						\
		.summary = text,					\
		.op = MXA_OP_GEMM,					\
		.native = true,						\
		.exact = false,						\
		.rank = 0,						\
		.scale_types = scales,					\
		.reject = reject_sm90<path>,				\
		.rank_for = rank_sm90<path>,				\
	}
#define SM90_KERNEL(kname, path, text) SM90_KERNEL_SCALES(kname, path, 0, text)

/* In the order of the enum above (C++ has no array designators). */
static const struct mxa_kernel cuda_kernels[] = {
	{	/* K_QUANTIZE */
		.name = "cuda-quantize",
		.summary = "the exact core's quantization on the GPU, bit-exact with torchao",
		.op = MXA_OP_QUANTIZE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	{	/* K_DEQUANTIZE */
		.name = "cuda-dequantize",
		.summary = "the exact core's dequantization on the GPU (one rounding)",
		.op = MXA_OP_DEQUANTIZE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	{	/* K_EXACT */
		.name = "cuda-exact",
		.summary = "exact: the core's integer segment dots and 704-bit accumulator on the GPU, one rounding, bit-identical to cpu-exact (MX, NVFP4, mixed)",
		.op = MXA_OP_GEMM,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	/* K_SM90_SKINNY ... K_SM90_FP8_QUAD: the native GEMM's paths. */
	SM90_KERNEL_SCALES("cuda-mx-sm90-skinny", SM90_PATH_SKINNY,
			   MXA_KERNEL_SCALES(MXA_SCALE_E8M0) | MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
			   "native MX GEMM for M <= 32 (decode): the skinny kernel streams B once with split K, mma on exact fp16 operands with per-32 scale promotion; NVFP4 x NVFP4 with K a multiple of 32, per-16 promotion by the exact product of the UE4M3 scales (Documentation/cuda.rst)"),
	SM90_KERNEL_SCALES("cuda-mx-sm90-decode", SM90_PATH_DECODE,
			   MXA_KERNEL_SCALES(MXA_SCALE_E8M0) | MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
			   "native MX GEMM for 16 < M <= 64: the decode kernel, TMA + wgmma on bf16 operands with the per-32 scales folded in exactly; the fp8 kernel for tiles that cannot be folded; NVFP4 x NVFP4 for M <= 64, UE4M3 scales folded exactly (Documentation/cuda.rst)"),
	SM90_KERNEL("cuda-mx-sm90-bf16", SM90_PATH_BF16,
		    "native MX GEMM for M > 64: TMA + wgmma bf16 on exact operands with the per-32 scales folded in, A converted in registers; the fp8 kernel for tiles that cannot be folded (Documentation/cuda.rst)"),
	SM90_KERNEL_SCALES("cuda-mx-sm90-bf16-ss", SM90_PATH_BF16_SS,
			   MXA_KERNEL_SCALES(MXA_SCALE_E8M0) | MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
			   "native MX GEMM for M > 64: as cuda-mx-sm90-bf16 with A converted by a pre-pass too (chosen for fp4/fp6 A on grids of two waves or more); NVFP4 x NVFP4 at every M, UE4M3 scales folded exactly, tensor scales in the epilogue (Documentation/cuda.rst)"),
	SM90_KERNEL("cuda-mx-sm90-fp8", SM90_PATH_FP8,
		    "native MX GEMM, any shape: TMA + wgmma fp8 (fp6/fp4 re-encoded exactly) with per-32 fp32 scale promotion (Documentation/cuda.rst)"),
	SM90_KERNEL("cuda-mx-sm90-fp8-single", SM90_PATH_FP8_SINGLE,
		    "native MX GEMM for M > 64: the fp8 kernel with one partial in flight (tuning; MXACCEL_KERNEL only)"),
	SM90_KERNEL("cuda-mx-sm90-fp8-quad", SM90_PATH_FP8_QUAD,
		    "native MX GEMM for M > 64: the fp8 kernel with four 64 x 64 consumer warpgroups (tuning; MXACCEL_KERNEL only)"),
	{	/* K_CUBLAS */
		.name = "cuda-dequant-cublas",
		.summary = "dequantize to bf16, then a cuBLAS bf16 GEMM with fp32 accumulation (torchao's emulated path)",
		.op = MXA_OP_GEMM,
		.native = false,
		.exact = false,
		.rank = 5,
		.reject = reject_cublas,
	},
	{	/* K_QUANTIZE_COLWISE */
		.name = "cuda-quantize-colwise",
		.summary = "column-wise quantization: the core's block quantizer on blocks gathered down the source's columns, bit-exact with quantizing the transpose",
		.op = MXA_OP_QUANTIZE_COLWISE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	{	/* K_WEIGHT_ONLY_EXACT */
		.name = "cuda-weight-only-exact",
		.summary = "exact weight-only GEMM on the GPU: A's values as given times B's (MX or NVFP4), the core's dense dots in its wide accumulator, one rounding, bit-identical to cpu-weight-only-exact",
		.op = MXA_OP_GEMM_WEIGHT_ONLY,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	{	/* K_GROUPED_EXACT */
		.name = "cuda-grouped-exact",
		.summary = "exact grouped GEMM on the GPU: offsets read and checked on the device, each group through cuda-exact's sums, bit-identical to cpu-grouped-exact",
		.op = MXA_OP_GEMM_GROUPED,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
	},
	{	/* K_WEIGHT_ONLY */
		.name = "cuda-weight-only",
		.summary = "weight-only GEMM for sm_90a, a decode kernel (M <= 64; larger M in groups of 64): B (MX or NVFP4) streamed once, mma on exact bf16 operands (fp32 A as three bf16 pieces), per-block scale promotion (Documentation/cuda.rst)",
		.op = MXA_OP_GEMM_WEIGHT_ONLY,
		.native = true,
		.exact = false,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = reject_weight_only,
	},
	{	/* K_SM90_GROUPED */
		.name = "cuda-grouped-sm90",
		.summary = "native grouped GEMM: 2d x 3d by the bf16 kernel's main loop over every group's tiles, scheduled on the GPU from the device-side offsets (MX: an fp32 kernel for tiles that cannot be folded; NVFP4 x NVFP4: both operands folded by a pre-pass, the bf16-ss main loop); 2d x 2d the same way, every group's tiles in one launch over its own K columns (Documentation/cuda.rst)",
		.op = MXA_OP_GEMM_GROUPED,
		.native = true,
		.exact = false,
		.rank = 20,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = reject_grouped,
	},
	{	/* K_SM90_GROUPED_SKINNY */
		.name = "cuda-grouped-sm90-skinny",
		.summary = "native grouped GEMM for M <= 32 (an MoE decode step): 2d x 3d by the skinny kernel over every group's B as one stream (read once), each result kept where its row of A is in that B's group, offsets checked on the GPU; 2d x 2d as cuda-grouped-sm90 runs it, every group's tiles in one launch with the offsets read on the GPU (on a caller's stream, NVFP4, or 16 groups and more), else per group by the skinny kernel, offsets read on the host (Documentation/cuda.rst)",
		.op = MXA_OP_GEMM_GROUPED,
		.native = true,
		.exact = false,
		.rank = 30,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = reject_grouped_skinny,
	},
	{	/* K_WEIGHT_ONLY_WGMMA */
		.name = "cuda-weight-only-wgmma",
		.summary = "weight-only GEMM for sm_90a with bf16 A and M > 64 (MX B) or > 128 (NVFP4 B) (prefill): TMA + wgmma bf16, MX codes converted in registers (fp8 codes, or grids under two waves), else B to exact bf16 once by a pre-pass; stripes of B that cannot be folded exactly redone by cuda-weight-only (Documentation/cuda.rst)",
		.op = MXA_OP_GEMM_WEIGHT_ONLY,
		.native = true,
		.exact = false,
		.rank = 20,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = reject_weight_only_wgmma,
		.rank_for = rank_weight_only_wgmma,
	},
	{	/* K_SM90_MIXED */
		.name = "cuda-mixed-sm90",
		.summary = "native NVFP4 x MX and MX x NVFP4 GEMM for sm_90a through the weight-only kernels (cuda-weight-only or cuda-weight-only-wgmma, by M): NVFP4 A to exact bf16 against MX B as it is; MX A to exact bf16 scaled per row (two bands of binades) against NVFP4 B as it is (Documentation/cuda.rst)",
		.op = MXA_OP_GEMM,
		.native = true,
		.exact = false,
		.rank = 20,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = reject_mixed,
	},
};

static int launch(struct cuda_device *cd, const struct mxa_work *w)
{
	switch (w->kernel - cuda_kernels) {
	case K_QUANTIZE:
		return cuda_launch_quantize(cd, &w->job);
	case K_DEQUANTIZE:
		return cuda_launch_dequantize(cd, &w->job);
	case K_EXACT:
		return cuda_launch_gemm_exact(cd, &w->job);
	case K_SM90_SKINNY:
	case K_SM90_DECODE:
	case K_SM90_BF16:
	case K_SM90_BF16_SS:
	case K_SM90_FP8:
	case K_SM90_FP8_SINGLE:
	case K_SM90_FP8_QUAD:
		return cuda_launch_gemm_sm90(cd, &w->job, (enum sm90_path)
					     (w->kernel - cuda_kernels - K_SM90_SKINNY));
	case K_CUBLAS:
		return cuda_launch_gemm_cublas(cd, &w->job);
	case K_QUANTIZE_COLWISE:
		return cuda_launch_quantize_colwise(cd, &w->job);
	case K_WEIGHT_ONLY_EXACT:
		return cuda_launch_gemm_weight_only_exact(cd, &w->job);
	case K_GROUPED_EXACT:
		return cuda_launch_gemm_grouped_exact(cd, &w->job);
	case K_WEIGHT_ONLY:
		return cuda_launch_gemm_weight_only(cd, &w->job);
	case K_SM90_GROUPED:
		return cuda_launch_gemm_grouped_sm90(cd, &w->job);
	case K_SM90_GROUPED_SKINNY:
		return cuda_launch_gemm_grouped_skinny(cd, &w->job);
	case K_WEIGHT_ONLY_WGMMA:
		return cuda_launch_gemm_weight_only_wgmma(cd, &w->job);
	case K_SM90_MIXED:
		return cuda_launch_gemm_mixed_sm90(cd, &w->job);
	}
	return -EINVAL;
}

/* --- fences ------------------------------------------------------------------ */

struct cuda_fence {
	struct mxa_fence base;
	struct cuda_device *cd;
	cudaEvent_t ev;
	bool done;
	int status;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int cuda_fence_wait(struct mxa_fence *fence, int64_t timeout_ns)
{
	struct cuda_fence *f = (struct cuda_fence *)fence;
	int64_t deadline = timeout_ns > 0 ? now_ns() + timeout_ns : 0;
	cudaError_t e;

	if (f->done)
		return f->status;
	cudaSetDevice(f->cd->ordinal);
	if (timeout_ns < 0) {
		e = cudaEventSynchronize(f->ev);
	} else {
		for (;;) {
			e = cudaEventQuery(f->ev);
			if (e != cudaErrorNotReady)
				break;
			if (!timeout_ns || now_ns() >= deadline)
				return -ETIME;
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
	}
	f->done = true;
	f->status = e == cudaSuccess ? 0 : cuda_fail(e, "job");
	/* A grouped job's offsets the GPU refused (cuda_exact.cuh). */
	if (!f->status)
		f->status = cuda_exact_fault_take(f->cd);
	return f->status;
}

static void cuda_fence_release(struct mxa_fence *fence)
{
	struct cuda_fence *f = (struct cuda_fence *)fence;

	cuda_fence_wait(fence, -1);
	cudaEventDestroy(f->ev);
	free(f);
}

static const struct mxa_fence_ops cuda_fence_ops = {
	.wait = cuda_fence_wait,
	.release = cuda_fence_release,
};

/*
 * The kernels read and write fp32 / bf16 matrices in whole elements: the
 * library checks offsets and strides against the buffer, this checks the
 * address, which a wrapped buffer (any base) can leave misaligned.  MX
 * codes and scales may sit anywhere (the GEMM copies operands the tensor
 * memory accelerator cannot read in place to aligned scratch).
 */
static int check_dense_aligned(const struct mxa_work *w)
{
	const struct mxa_dense *d = &w->job.dense;
	size_t es = d->dtype == MXA_DTYPE_BF16 ? 2 : 4;
	const char *what = w->job.op == MXA_OP_GEMM ? "C" :
			   w->job.op == MXA_OP_DEQUANTIZE ? "dst" :
			   w->job.op == MXA_OP_QUANTIZE ||
			   w->job.op == MXA_OP_QUANTIZE_COLWISE ? "src" : "C";
	uintptr_t at = (uintptr_t)cuda_ptr(d->buf, d->offset);

	if (at % es)
		return cuda_err(-EINVAL,
				"%s: %s at device address %p is not %zu-byte aligned (a wrapped buffer's base plus offset must be)",
				w->kernel->name, what, (void *)at, es);
	/* Grouped GEMM: the kernels read the int32 offsets on the device. */
	if (w->job.op == MXA_OP_GEMM_GROUPED) {
		const struct mxa_grouped *g = &w->job.groups;

		at = (uintptr_t)cuda_ptr(g->offsets, g->offsets_offset);
		if (at % 4)
			return cuda_err(-EINVAL,
					"%s: offsets at device address %p are not 4-byte aligned (a wrapped buffer's base plus offsets_offset must be)",
					w->kernel->name, (void *)at);
	}
	return 0;
}

/*
 * Queue works in order on the device's stream; cd->lock is held.  A launch
 * that fails stops the batch: what was queued before it still runs.
 */
static int queue(struct cuda_device *cd, const struct mxa_work *works,
		 unsigned int count)
{
	unsigned int i;
	cudaError_t e;
	int ret = 0;

	for (i = 0; i < count && !ret; i++)
		ret = check_dense_aligned(&works[i]);
	if (ret)
		return ret;
	cudaSetDevice(cd->ordinal);
	for (i = 0; i < count && !ret; i++) {
		ret = launch(cd, &works[i]);
		if (!ret) {
			e = cudaGetLastError();
			if (e != cudaSuccess)
				ret = cuda_fail(e, works[i].kernel->name);
		}
	}
	return ret;
}

/*
 * Queue works and record an event after the last (the fence).  On an
 * error the fence is waited for before the error returns.
 */
static int cuda_submit(struct mxa_device *dev, const struct mxa_work *works,
		       unsigned int count, struct mxa_fence **out)
{
	struct cuda_device *cd = cuda_dev(dev);
	struct cuda_fence *f;
	cudaStream_t s;
	cudaError_t e;
	int ret;

	f = (struct cuda_fence *)calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->base.ops = &cuda_fence_ops;
	f->cd = cd;
	pthread_mutex_lock(&cd->lock);
	cudaSetDevice(cd->ordinal);
	e = cudaEventCreateWithFlags(&f->ev, cudaEventDisableTiming);
	if (e != cudaSuccess) {
		pthread_mutex_unlock(&cd->lock);
		free(f);
		return cuda_fail(e, "cudaEventCreate");
	}
	ret = queue(cd, works, count);
	s = cd->stream;
	e = cudaEventRecord(f->ev, s);
	pthread_mutex_unlock(&cd->lock);
	if (e != cudaSuccess) {
		cudaStreamSynchronize(s);
		cudaEventDestroy(f->ev);
		free(f);
		return ret ? ret : cuda_fail(e, "cudaEventRecord");
	}
	if (ret) {
		cuda_fence_release(&f->base);
		return ret;
	}
	*out = &f->base;
	return 0;
}

/*
 * A synchronous call: on the device's own stream, queue and wait; on the
 * caller's stream (stream mode), return once queued, without an event or
 * any host wait: the caller's stream orders what follows.
 */
static int cuda_submit_wait(struct mxa_device *dev,
			    const struct mxa_work *works, unsigned int count)
{
	struct cuda_device *cd = cuda_dev(dev);
	cudaStream_t s;
	cudaError_t e;
	bool user;
	int ret;

	pthread_mutex_lock(&cd->lock);
	ret = queue(cd, works, count);
	s = cd->stream;
	user = cd->user_stream;
	pthread_mutex_unlock(&cd->lock);
	if (user && !ret)
		return 0;
	e = cudaStreamSynchronize(s);
	if (!ret && e != cudaSuccess)
		ret = cuda_fail(e, "job");
	if (!ret)
		ret = cuda_exact_fault_take(cd);
	return ret;
}

static const struct mxa_backend cuda_backend = {
	.name = "cuda",
	.wraps_host = false,
	.probe = cuda_probe,
	.open = cuda_open,
	.close = cuda_close,
	.buf_alloc = cuda_buf_alloc,
	.buf_free = cuda_buf_free,
	.buf_copy = cuda_buf_copy,
	.submit = cuda_submit,
	.submit_wait = cuda_submit_wait,
	.buf_wrap = cuda_buf_wrap,
	.set_stream = cuda_set_stream,
	.get_stream = cuda_get_stream,
	.kernels = cuda_kernels,
	.n_kernels = sizeof(cuda_kernels) / sizeof(cuda_kernels[0]),
};

extern "C" __attribute__((visibility("default")))
const struct mxa_backend *mxa_plugin_entry(const struct mxa_plugin_host *host,
					   char *reason, size_t size)
{
	if (!host || host->abi != MXA_PLUGIN_ABI ||
	    host->sizeof_host != sizeof(struct mxa_plugin_host) ||
	    host->sizeof_backend != sizeof(struct mxa_backend) ||
	    host->sizeof_kernel != sizeof(struct mxa_kernel) ||
	    host->sizeof_device != sizeof(struct mxa_device) ||
	    host->sizeof_buffer != sizeof(struct mxa_buffer) ||
	    host->sizeof_work != sizeof(struct mxa_work)) {
		snprintf(reason, size,
			 "libmxaccel-cuda.so.0 was built for another libmxaccel (plugin ABI %d, library ABI %u)",
			 MXA_PLUGIN_ABI, host ? host->abi : 0);
		return NULL;
	}
	cuda_host = host;
	return &cuda_backend;
}
