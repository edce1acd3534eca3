// SPDX-License-Identifier: MIT
/*
 * lib/core compiled for the GPU (MXCORE_FN = __device__): quantization,
 * dequantization and the exact GEMM run the core's own code, so they are
 * bit-identical to the CPU's cpu-quantize, cpu-dequantize and cpu-exact.
 *
 * The one substitution: quantization multiplies by the scale's reciprocal
 * with the GPU's fp32 multiply (__fmul_rn, denormals kept) instead of the
 * core's integer emulation mxcore_f32_mul(), which exists to reproduce
 * exactly that multiply (round to nearest even, NaN results 0x7fffffff) on
 * machines without an NVIDIA GPU.  The golden-vector test on the device
 * (tests/cuda) checks the equivalence bit for bit.
 */
#include <errno.h>

#include <cuda_bf16.h>

#include "cuda_internal.cuh"

#define MXCORE_FN __device__
#define MXCORE_TABLE __device__
#include "mxcore_elem.c"
#include "mxcore_float.c"
#include "mxcore_quant.c"
#include "mxcore_dot.c"

/* An MX matrix as the kernels see it. */
struct mx_view {
	const uint8_t *data;
	const uint8_t *scale;
	uint64_t data_stride;
	uint64_t scale_stride;
	uint32_t rows, blocks;
	int elem;
	int swizzled;
};

static struct mx_view view(const struct mxa_matrix *m)
{
	struct mx_view v;

	v.data = cuda_ptr(m->data, m->data_offset);
	v.scale = cuda_ptr(m->scale, m->scale_offset);
	v.data_stride = cuda_host->data_stride(m);
	v.scale_stride = cuda_host->scale_stride(m);
	v.rows = m->rows;
	v.blocks = m->cols / MXCORE_BLOCK;
	v.elem = m->elem;
	v.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	return v;
}

static __device__ __forceinline__ uint64_t scale_index(const struct mx_view &v,
						       uint32_t r, uint32_t b)
{
	if (v.swizzled)
		return mxcore_swizzle_index(v.rows, v.blocks, r, b);
	return r * v.scale_stride + b;
}

/* Bytes of one 32-element block of codes. */
static __host__ __device__ __forceinline__ uint32_t block_bytes(int elem)
{
	return elem == MXCORE_E2M1 ? 16 : 32;
}

/* mxcore_swizzle_bytes() for the host (the core is device code here). */
static uint64_t swizzle_bytes(uint64_t rows, uint64_t blocks)
{
	return (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
}

static unsigned int grid_1d(uint64_t n, unsigned int threads)
{
	uint64_t g = (n + threads - 1) / threads;

	return g > 0x7fffffff ? 0x7fffffff : (unsigned int)g;
}

/* --- quantize ----------------------------------------------------------------- */

struct quant_params {
	const uint8_t *src;
	uint64_t src_stride;
	int src_bf16;
	uint8_t *data;
	uint8_t *scale;
	uint64_t data_stride;
	uint64_t scale_stride;
	uint32_t rows, blocks;
	int swizzled;
	int elem, mode;
};

/* 32 fp32 bit patterns of block b of row r (bf16 widened exactly). */
static __device__ __forceinline__ void load_block(const struct quant_params &p,
						  uint32_t r, uint32_t b,
						  uint32_t x[32])
{
	const uint8_t *row = p.src + r * p.src_stride;
	unsigned int i;

	if (!p.src_bf16) {
		const uint8_t *s = row + (uint64_t)b * 128;

		if (!((uintptr_t)s & 15)) {
			for (i = 0; i < 8; i++) {
				uint4 v = ((const uint4 *)s)[i];

				x[4 * i] = v.x;
				x[4 * i + 1] = v.y;
				x[4 * i + 2] = v.z;
				x[4 * i + 3] = v.w;
			}
		} else {
			for (i = 0; i < 32; i++)
				x[i] = ((const uint32_t *)s)[i];
		}
	} else {
		const uint8_t *s = row + (uint64_t)b * 64;

		if (!((uintptr_t)s & 15)) {
			for (i = 0; i < 4; i++) {
				uint4 v = ((const uint4 *)s)[i];
				uint32_t w[4] = { v.x, v.y, v.z, v.w };
				unsigned int j;

				for (j = 0; j < 4; j++) {
					x[8 * i + 2 * j] = w[j] << 16;
					x[8 * i + 2 * j + 1] = w[j] & 0xffff0000u;
				}
			}
		} else {
			for (i = 0; i < 32; i++)
				x[i] = (uint32_t)((const uint16_t *)s)[i] << 16;
		}
	}
}

static __device__ __forceinline__ void store_bytes(uint8_t *dst,
						   const uint32_t *w,
						   unsigned int words)
{
	unsigned int i;

	if (!((uintptr_t)dst & 15)) {
		for (i = 0; i < words; i += 4)
			*(uint4 *)(dst + 4 * i) = make_uint4(w[i], w[i + 1],
							     w[i + 2], w[i + 3]);
	} else {
		for (i = 0; i < 4 * words; i++)
			dst[i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
	}
}

/*
 * Two fp32 values to e4m3 or e5m2 codes, as encode_fp8() does (round to
 * nearest even, saturation to the largest finite value, NaN to 0x7f with
 * the NaN's sign): the hardware conversion where there is one (sm_89 and
 * later), else the core's integer code.  lo lands in the low byte.
 */
static __device__ __forceinline__ uint32_t cvt_fp8x2(const struct mxcore_format *f,
						     bool e5m2, uint32_t lo,
						     uint32_t hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	unsigned short d;

	(void)f;
	if (e5m2)
		asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;"
		    : "=h"(d) : "f"(__uint_as_float(hi)), "f"(__uint_as_float(lo)));
	else
		asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
		    : "=h"(d) : "f"(__uint_as_float(hi)), "f"(__uint_as_float(lo)));
	return d;
#else
	(void)e5m2;
	return encode_fp8(f, lo) | (uint32_t)encode_fp8(f, hi) << 8;
#endif
}

/*
 * encode_floatx() with the subnormal range done by the hardware: below the
 * element's smallest normal, the code is |y| / 2^k_exp rounded to nearest
 * even (subnormal_code()), and |y| * 2^-k_exp is exact in fp32.
 */
static __device__ __forceinline__ uint32_t encode_floatx_fast(const struct mxcore_format *f,
							      uint32_t y)
{
	uint32_t ay = y & ~F32_SIGN;

	if (ay < (uint32_t)(127 + 1 - f->bias) << 23) {
		uint32_t code = __float2int_rn(__uint_as_float(ay) *
					       __uint_as_float((uint32_t)(127 - f->k_exp) << 23));

		return code | (y & F32_SIGN ? 1u << (f->ebits + f->mbits) : 0);
	}
	return encode_floatx(f, y);
}

/* mxcore_scale(), with the hardware multiply for RCEIL. */
static __device__ __forceinline__ uint8_t quant_scale(int elem, int mode,
						      uint32_t amax)
{
	if (mode == MXCORE_RCEIL)
		return e8m0_round_up(__float_as_uint(__fmul_rn(__uint_as_float(amax & ~F32_SIGN),
							       __uint_as_float(rcp_max_f32[elem]))));
	return mxcore_scale((enum mxcore_elem)elem, (enum mxcore_mode)mode, amax);
}

/*
 * One thread per block of 32: mxcore_quantize_block() with the hardware
 * multiply (see the top of this file) and, for fp8, conversion.
 */
__global__ void quantize_kernel(const struct quant_params p)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t total = (uint64_t)p.rows * p.blocks;

	for (; i < total; i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t r = (uint32_t)(i / p.blocks), b = (uint32_t)(i % p.blocks);
		const struct mxcore_format f = *mxcore_format((enum mxcore_elem)p.elem);
		uint32_t x[32], w[8], amax = 0;
		float rcp;
		uint8_t scale;
		unsigned int k;

		load_block(p, r, b, x);
		/* torch.amax(abs(x)): NaN if any element is NaN. */
		for (k = 0; k < 32; k++) {
			uint32_t a = x[k] & ~F32_SIGN;

			if (mxcore_f32_isnan(a))
				amax = 0x7fc00000;	/* above any number */
			else if (a > amax)
				amax = a;
		}
		scale = quant_scale(p.elem, p.mode, amax);
		rcp = __uint_as_float(scale_reciprocal(scale));
		for (k = 0; k < 8; k++)
			w[k] = 0;
		if (f.code_bits == 8) {
			for (k = 0; k < 32; k += 2) {
				uint32_t y0 = __float_as_uint(__fmul_rn(__uint_as_float(x[k]),
									rcp));
				uint32_t y1 = __float_as_uint(__fmul_rn(__uint_as_float(x[k + 1]),
									rcp));

				w[k / 4] |= cvt_fp8x2(&f, p.elem == MXCORE_E5M2, y0, y1)
					    << (8 * (k % 4));
			}
		} else {
			for (k = 0; k < 32; k++) {
				uint32_t y = __float_as_uint(__fmul_rn(__uint_as_float(x[k]),
								       rcp));
				uint32_t code = encode_floatx_fast(&f, y);

				if (p.elem == MXCORE_E2M1)
					w[k / 8] |= (code & 0xff) << (4 * (k % 8));
				else
					w[k / 4] |= (code & 0xff) << (8 * (k % 4));
			}
		}
		store_bytes(p.data + r * p.data_stride + (uint64_t)b * block_bytes(p.elem),
			    w, block_bytes(p.elem) / 4);
		p.scale[p.swizzled ? mxcore_swizzle_index(p.rows, p.blocks, r, b) :
				     r * p.scale_stride + b] = scale;
	}
}

/*
 * Quantization with TPB threads per block of 32, each loading 16 bytes, so
 * that a warp's loads are contiguous: 4 threads of 8 bf16, or 8 of 4 fp32.
 * Each thread has U such loads in flight before it computes.  The block's
 * amax is an unsigned max over the lanes (a NaN, mapped to 0x7fc00000, is
 * above every other |x|, as the core's NaN rule needs).  Needs a 16-byte
 * aligned source row and fewer than 2^31 threads' worth of work.
 */
template <int TPB>
static __device__ __forceinline__ void quant_chunk(const struct quant_params &p,
						   const struct mxcore_format &f,
						   uint4 v, uint32_t blk, int j)
{
	constexpr int EPT = 32 / TPB;
	const bool valid = blk < p.rows * p.blocks;
	const uint32_t r = valid ? blk / p.blocks : 0, b = valid ? blk % p.blocks : 0;
	uint32_t x[EPT], amax = 0, w[2] = { 0, 0 };
	uint8_t scale;
	float rcp;
	int k;

	if (EPT == 8) {
		uint32_t in[4] = { v.x, v.y, v.z, v.w };

		for (k = 0; k < 4; k++) {
			x[2 * k] = in[k] << 16;
			x[2 * k + 1] = in[k] & 0xffff0000u;
		}
	} else {
		x[0] = v.x;
		x[1] = v.y;
		x[2] = v.z;
		x[3] = v.w;
	}
	for (k = 0; k < EPT; k++) {
		uint32_t a = x[k] & ~F32_SIGN;

		a = mxcore_f32_isnan(a) ? 0x7fc00000u : a;
		amax = a > amax ? a : amax;
	}
	for (k = 1; k < TPB; k <<= 1)
		amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, k));
	if (!valid)
		return;
	scale = quant_scale(p.elem, p.mode, amax);
	rcp = __uint_as_float(scale_reciprocal(scale));
	if (f.code_bits == 8) {
		for (k = 0; k < EPT; k += 2) {
			uint32_t y0 = __float_as_uint(__fmul_rn(__uint_as_float(x[k]), rcp));
			uint32_t y1 = __float_as_uint(__fmul_rn(__uint_as_float(x[k + 1]), rcp));

			w[k / 4] |= cvt_fp8x2(&f, p.elem == MXCORE_E5M2, y0, y1) << (8 * (k % 4));
		}
	} else {
		for (k = 0; k < EPT; k++) {
			uint32_t y = __float_as_uint(__fmul_rn(__uint_as_float(x[k]), rcp));
			uint32_t code = encode_floatx_fast(&f, y) & 0xff;

			if (p.elem == MXCORE_E2M1)
				w[k / 8] |= code << (4 * (k % 8));
			else
				w[k / 4] |= code << (8 * (k % 4));
		}
	}
	{
		/* EPT codes: bytes, or EPT / 2 bytes of packed e2m1. */
		const int nbytes = p.elem == MXCORE_E2M1 ? EPT / 2 : EPT;
		uint8_t *dst = p.data + r * p.data_stride +
			       (uint64_t)b * block_bytes(p.elem) + j * nbytes;

		if (nbytes == 8 && !((uintptr_t)dst & 7)) {
			*(uint2 *)dst = make_uint2(w[0], w[1]);
		} else if (nbytes == 4 && !((uintptr_t)dst & 3)) {
			*(uint32_t *)dst = w[0];
		} else {
			for (k = 0; k < nbytes; k++)
				dst[k] = (uint8_t)(w[k / 4] >> (8 * (k % 4)));
		}
	}
	if (j == 0)
		p.scale[p.swizzled ? mxcore_swizzle_index(p.rows, p.blocks, r, b) :
				     r * p.scale_stride + b] = scale;
}

#define QUANT_ILP 4

template <int TPB>
__global__ void quantize_fast_kernel(const struct quant_params p)
{
	constexpr int EPT = 32 / TPB;
	const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t per = gridDim.x * blockDim.x / TPB;
	const uint32_t total = p.rows * p.blocks;
	const struct mxcore_format f = *mxcore_format((enum mxcore_elem)p.elem);
	const int j = (int)(t % TPB);
	uint4 v[QUANT_ILP];
	int u;

	for (u = 0; u < QUANT_ILP; u++) {
		uint32_t blk = t / TPB + u * per;

		v[u] = make_uint4(0, 0, 0, 0);
		if (blk < total) {
			uint32_t r = blk / p.blocks, b = blk % p.blocks;

			v[u] = *(const uint4 *)(p.src + r * p.src_stride +
						((uint64_t)b * 32 + j * EPT) *
						(p.src_bf16 ? 2 : 4));
		}
	}
	for (u = 0; u < QUANT_ILP; u++)
		quant_chunk<TPB>(p, f, v[u], t / TPB + u * per, j);
}

int cuda_launch_quantize(struct cuda_device *cd, const struct mxa_job *job)
{
	struct quant_params p;
	struct mx_view v = view(&job->a);
	uint64_t total;

	p.src = cuda_ptr(job->dense.buf, job->dense.offset);
	p.src_stride = cuda_host->dense_stride(&job->dense);
	p.src_bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	p.data = (uint8_t *)v.data;
	p.scale = (uint8_t *)v.scale;
	p.data_stride = v.data_stride;
	p.scale_stride = v.scale_stride;
	p.rows = v.rows;
	p.blocks = v.blocks;
	p.swizzled = v.swizzled;
	p.elem = job->a.elem;
	p.mode = job->mode;
	total = (uint64_t)p.rows * p.blocks;
	if (p.swizzled) {
		/* Padding entries are written as 0, like to_blocked(). */
		cudaError_t e = cudaMemsetAsync(p.scale, 0,
						swizzle_bytes(p.rows, p.blocks),
						cd->stream);

		if (e != cudaSuccess)
			return cuda_fail(e, "quantize: memset");
	}
	/*
	 * fp6 and fp4 encoding is arithmetic enough that 16-byte loads by
	 * neighbouring threads (and 32-bit indices, where they suffice) pay;
	 * fp8 is faster one thread per block (measured: Documentation/cuda.rst).
	 */
	if (p.elem != MXCORE_E4M3 && p.elem != MXCORE_E5M2 &&
	    !((uintptr_t)p.src & 15) && !(p.src_stride & 15) &&
	    total * 8 + 4096 < (1ull << 31)) {
		if (p.src_bf16)
			quantize_fast_kernel<4><<<grid_1d(total * 4, 256 * QUANT_ILP), 256,
						  0, cd->stream>>>(p);
		else
			quantize_fast_kernel<8><<<grid_1d(total * 8, 256 * QUANT_ILP), 256,
						  0, cd->stream>>>(p);
		return 0;
	}
	quantize_kernel<<<grid_1d(total, 128), 128, 0, cd->stream>>>(p);
	return 0;
}

/* --- dequantize --------------------------------------------------------------- */

struct dequant_params {
	struct mx_view src;
	uint8_t *dst;
	uint64_t dst_stride;
	int bf16;
};

__global__ void dequantize_kernel(const struct dequant_params p)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t total = (uint64_t)p.src.rows * p.src.blocks;
	enum mxcore_dtype dt = p.bf16 ? MXCORE_BF16 : MXCORE_F32;
	enum mxcore_elem elem = (enum mxcore_elem)p.src.elem;

	for (; i < total; i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t r = (uint32_t)(i / p.src.blocks);
		uint32_t b = (uint32_t)(i % p.src.blocks);
		const uint8_t *codes = p.src.data + r * p.src.data_stride +
				       (uint64_t)b * block_bytes(elem);
		uint8_t s = p.src.scale[scale_index(p.src, r, b)];
		uint8_t *out = p.dst + r * p.dst_stride +
			       (uint64_t)b * 32 * (p.bf16 ? 2 : 4);
		uint32_t w[32];
		unsigned int k;

		for (k = 0; k < 32; k++) {
			uint32_t v = mxcore_dequantize(elem,
						       mxcore_get_code(elem, codes, k),
						       s, dt);

			if (p.bf16) {
				if (k & 1)
					w[k / 2] |= v << 16;
				else
					w[k / 2] = v;
			} else {
				w[k] = v;
			}
		}
		store_bytes(out, w, p.bf16 ? 16 : 32);
	}
}

static int launch_dequantize(struct cuda_device *cd, const struct mx_view &src,
			     uint8_t *dst, uint64_t dst_stride, int bf16)
{
	struct dequant_params p;
	uint64_t total = (uint64_t)src.rows * src.blocks;

	p.src = src;
	p.dst = dst;
	p.dst_stride = dst_stride;
	p.bf16 = bf16;
	dequantize_kernel<<<grid_1d(total, 128), 128, 0, cd->stream>>>(p);
	return 0;
}

int cuda_launch_dequantize(struct cuda_device *cd, const struct mxa_job *job)
{
	return launch_dequantize(cd, view(&job->a),
				 cuda_ptr(job->dense.buf, job->dense.offset),
				 cuda_host->dense_stride(&job->dense),
				 job->dense.dtype == MXA_DTYPE_BF16);
}

int cuda_dequantize_bf16(struct cuda_device *cd, const struct mxa_matrix *m,
			 uint16_t *dst)
{
	return launch_dequantize(cd, view(m), (uint8_t *)dst,
				 (uint64_t)m->cols * 2, 1);
}

/* --- the exact GEMM ------------------------------------------------------------- */

struct exact_params {
	struct mx_view a, b;
	uint8_t *c;
	uint64_t c_stride;
	int bf16;
	int accumulate;
};

/* One thread per output: the core's exact block dots, rounded once. */
__global__ void gemm_exact_kernel(const struct exact_params p)
{
	enum mxcore_dtype dt = p.bf16 ? MXCORE_BF16 : MXCORE_F32;
	enum mxcore_elem ea = (enum mxcore_elem)p.a.elem;
	enum mxcore_elem eb = (enum mxcore_elem)p.b.elem;
	uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;

	if (col >= p.b.rows)
		return;
	for (; row < p.a.rows; row += gridDim.y * blockDim.y) {
		const uint8_t *ar = p.a.data + row * p.a.data_stride;
		const uint8_t *br = p.b.data + col * p.b.data_stride;
		uint8_t *out = p.c + row * p.c_stride + (uint64_t)col * (p.bf16 ? 2 : 4);
		struct mxcore_acc acc;
		uint32_t kb, v;

		mxcore_acc_init(&acc);
		for (kb = 0; kb < p.a.blocks; kb++)
			mxcore_acc_block_dot(&acc, ea, ar + kb * block_bytes(ea),
					     p.a.scale[scale_index(p.a, row, kb)],
					     eb, br + kb * block_bytes(eb),
					     p.b.scale[scale_index(p.b, col, kb)]);
		if (p.accumulate)
			mxcore_acc_add_float(&acc, p.bf16 ? *(const uint16_t *)out :
					     *(const uint32_t *)out, dt);
		v = mxcore_acc_round(&acc, dt);
		if (p.bf16)
			*(uint16_t *)out = (uint16_t)v;
		else
			*(uint32_t *)out = v;
	}
}

int cuda_launch_gemm_exact(struct cuda_device *cd, const struct mxa_job *job)
{
	struct exact_params p;
	dim3 threads(16, 16), grid;
	uint32_t gy;

	p.a = view(&job->a);
	p.b = view(&job->b);
	p.c = cuda_ptr(job->dense.buf, job->dense.offset);
	p.c_stride = cuda_host->dense_stride(&job->dense);
	p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	gy = (p.a.rows + 15) / 16;
	grid = dim3((p.b.rows + 15) / 16, gy > 65535 ? 65535 : gy);
	gemm_exact_kernel<<<grid, threads, 0, cd->stream>>>(p);
	return 0;
}

/* --- fp32 -> bf16 with C_in --------------------------------------------------- */

__global__ void f32_to_bf16_kernel(const float *src, uint32_t cols, uint32_t rows,
				   uint64_t src_ld, uint16_t *dst, uint64_t dst_ld,
				   int accumulate)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;

	for (; i < (uint64_t)rows * cols; i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t r = i / cols, c = i % cols;
		float v = src[r * src_ld + c];
		uint16_t *o = dst + r * dst_ld + c;

		if (accumulate)
			v += __uint_as_float((uint32_t)*o << 16);
		*o = __bfloat16_as_ushort(__float2bfloat16_rn(v));
	}
}

int cuda_f32_to_bf16(struct cuda_device *cd, const float *src, uint32_t cols,
		     uint32_t rows, uint64_t src_ld, uint16_t *dst,
		     uint64_t dst_ld, int accumulate)
{
	f32_to_bf16_kernel<<<grid_1d((uint64_t)rows * cols, 256), 256, 0, cd->stream>>>(
		src, cols, rows, src_ld, dst, dst_ld, accumulate);
	return 0;
}
