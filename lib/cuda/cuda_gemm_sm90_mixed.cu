// SPDX-License-Identifier: MIT
/*
 * cuda-mixed-sm90: C (+)= A B^T with one operand NVFP4 (e2m1, UE4M3 per
 * 16, optional tensor scale) and the other MX (E8M0 per 32), on Hopper.
 *
 * Why this way: every NVFP4 value is code * scale * ts, and code * scale
 * (at most 2 x 4 significant bits, 2^-10 .. 2688 in magnitude) is an exact
 * bf16.  So the NVFP4 operand becomes a dense bf16 matrix D = code * scale
 * * 2^e (exact: cuda-dequantize with the tensor scale 2^e), the product is
 * a weight-only GEMM of D against the MX operand (cuda-weight-only for
 * few rows of D, cuda-weight-only-wgmma for many: the kernels, bounds and
 * special-value handling of mxa_gemm_weight_only()), and a last pass
 * multiplies by t = ts * 2^-e, adds C_in and writes C, transposing where
 * the NVFP4 operand is B.  2^e is the tensor scale's binade (clamped to
 * 2^-80 .. 2^100, so that D stays far inside bf16's normal range): the
 * intermediate W = C / t, with t in [1, 2) there, cannot overflow where C
 * does not.
 *
 * Cost: D (rows x K x 2 bytes) and W (rows x columns x 4 bytes) in
 * stream-ordered scratch, one read of the NVFP4 operand to write D and
 * one of W to write C, beside the weight-only GEMM itself.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_bf16.h>

#include "cuda_internal.cuh"

namespace {

/* The binades of 2^e kept in D (see above). */
constexpr int E_MIN = -80;
constexpr int E_MAX = 100;

struct post_args {
	const float *w;			/* W, packed: w_rows x w_cols */
	uint32_t w_rows, w_cols;
	float t;
	int transpose;			/* C = W^T (the NVFP4 operand is B) */
	uint8_t *c;
	uint64_t c_ld;			/* elements */
	int bf16, accumulate;
};

/* One element of C from W's (r, c): times t, plus C_in, one store. */
__device__ __forceinline__ void post_store(const struct post_args &p, uint32_t row,
					   uint32_t col, float w)
{
	float v = w * p.t;

	if (p.bf16) {
		uint16_t *o = (uint16_t *)p.c + row * p.c_ld + col;

		if (p.accumulate)
			v += __uint_as_float((uint32_t)*o << 16);
		*o = __bfloat16_as_ushort(__float2bfloat16_rn(v));
	} else {
		float *o = (float *)p.c + row * p.c_ld + col;

		if (p.accumulate)
			v += *o;
		*o = v;
	}
}

/*
 * C from W by tiles of 32 x 32 through shared memory, so that both the
 * reads of W and the writes of C are along rows when C is W^T.
 */
__global__ void __launch_bounds__(256) mixed_post_kernel(const struct post_args p)
{
	__shared__ float tile[32][33];
	const uint32_t c0 = blockIdx.x * 32;
	const uint32_t tx = threadIdx.x % 32, ty = threadIdx.x / 32;
	uint32_t r0, i;

	/* gridDim.y stops at 65535: tile rows by a stride. */
	for (r0 = blockIdx.y * 32; r0 < p.w_rows; r0 += gridDim.y * 32) {
		for (i = ty; i < 32; i += 8) {
			const uint32_t r = r0 + i, c = c0 + tx;

			if (r < p.w_rows && c < p.w_cols) {
				const float w = p.w[(uint64_t)r * p.w_cols + c];

				if (!p.transpose)
					post_store(p, r, c, w);
				else
					tile[i][tx] = w;
			}
		}
		if (!p.transpose)
			continue;
		__syncthreads();
		/* C's row c0 + i is W's column; its columns W's rows r0 + tx. */
		for (i = ty; i < 32; i += 8) {
			const uint32_t r = r0 + tx, c = c0 + i;

			if (r < p.w_rows && c < p.w_cols)
				post_store(p, c, r, tile[tx][i]);
		}
		__syncthreads();
	}
}

/* The weight-only request the mixed one becomes (D: nv's rows, bf16). */
struct mxa_op_desc weight_only_desc_of(const struct mxa_op_desc *desc)
{
	const bool nv_a = desc->a_scale_type == MXA_SCALE_UE4M3;
	struct mxa_op_desc w;

	memset(&w, 0, sizeof(w));
	w.op = MXA_OP_GEMM_WEIGHT_ONLY;
	w.a_dtype = MXA_DTYPE_BF16;
	w.b_elem = nv_a ? desc->b_elem : desc->a_elem;
	w.b_scale_type = MXA_SCALE_E8M0;
	w.dtype = MXA_DTYPE_F32;
	w.m = nv_a ? desc->m : desc->n;
	w.n = nv_a ? desc->n : desc->m;
	w.k = desc->k;
	return w;
}

/* Whether cuda-weight-only-wgmma runs w rather than cuda-weight-only. */
bool wgmma_for(struct cuda_device *cd, const struct mxa_op_desc *w)
{
	return !cuda_weight_only_wgmma_reject(cd, w) &&
	       cuda_weight_only_wgmma_rank(cd, w) > 10;
}

} /* namespace */

const char *cuda_mixed_sm90_reject(struct cuda_device *cd, const struct mxa_op_desc *desc)
{
	struct mxa_op_desc w;

	if (desc->a_scale_type == desc->b_scale_type)
		return "cuda-mixed-sm90 takes mixed NVFP4 x MX operands only (the cuda-mx-sm90-* paths take MX x MX and NVFP4 x NVFP4)";
	w = weight_only_desc_of(desc);
	/* Both weight-only kernels must be able to run it: either may. */
	return cuda_weight_only_reject(cd, &w);
}

int cuda_launch_gemm_mixed_sm90(struct cuda_device *cd, const struct mxa_job *job)
{
	const bool nv_a = job->a.scale_type == MXA_SCALE_UE4M3;
	const struct mxa_matrix *nv = nv_a ? &job->a : &job->b;
	const struct mxa_matrix *mx = nv_a ? &job->b : &job->a;
	const float ts = nv->tensor_scale != 0.0f ? nv->tensor_scale : 1.0f;
	const int e = ilogbf(ts) < E_MIN ? E_MIN : ilogbf(ts) > E_MAX ? E_MAX : ilogbf(ts);
	const size_t d_bytes = ((size_t)nv->rows * nv->cols * 2 + 255) / 256 * 256;
	const size_t w_bytes = (size_t)nv->rows * mx->rows * 4;
	struct mxa_buffer scratch_buf;
	struct mxa_op_desc wdesc;
	struct mxa_job dq, wo;
	struct post_args p;
	void *scratch = NULL;
	cudaError_t err;
	int ret;

	err = cudaMallocAsync(&scratch, d_bytes + w_bytes, cd->stream);
	if (err != cudaSuccess)
		return cuda_fail(err, "cuda-mixed-sm90: scratch");
	memset(&scratch_buf, 0, sizeof(scratch_buf));
	scratch_buf.size = d_bytes + w_bytes;
	scratch_buf.priv = scratch;

	/* D = code * scale * 2^e, exact in bf16 (rows of nv, K). */
	memset(&dq, 0, sizeof(dq));
	dq.op = MXA_OP_DEQUANTIZE;
	dq.a = *nv;
	dq.a.tensor_scale = ldexpf(1.0f, e);
	dq.dense.buf = &scratch_buf;
	dq.dense.dtype = MXA_DTYPE_BF16;
	dq.dense.rows = nv->rows;
	dq.dense.cols = nv->cols;
	ret = cuda_launch_dequantize(cd, &dq);

	/* W = D mx^T, fp32 (rows of nv x rows of mx). */
	memset(&wo, 0, sizeof(wo));
	wo.op = MXA_OP_GEMM_WEIGHT_ONLY;
	wo.a_dense = dq.dense;
	wo.b = *mx;
	wo.dense.buf = &scratch_buf;
	wo.dense.offset = d_bytes;
	wo.dense.dtype = MXA_DTYPE_F32;
	wo.dense.rows = nv->rows;
	wo.dense.cols = mx->rows;
	memset(&wdesc, 0, sizeof(wdesc));
	wdesc.op = MXA_OP_GEMM;
	wdesc.a_elem = job->a.elem;
	wdesc.b_elem = job->b.elem;
	wdesc.a_scale_type = job->a.scale_type;
	wdesc.b_scale_type = job->b.scale_type;
	wdesc.m = job->a.rows;
	wdesc.n = job->b.rows;
	wdesc.k = job->a.cols;
	wdesc = weight_only_desc_of(&wdesc);
	if (!ret)
		ret = wgmma_for(cd, &wdesc) ? cuda_launch_gemm_weight_only_wgmma(cd, &wo) :
					      cuda_launch_gemm_weight_only(cd, &wo);

	/* C (+)= W t, or W^T t. */
	if (!ret) {
		p.w = (const float *)((uint8_t *)scratch + d_bytes);
		p.w_rows = nv->rows;
		p.w_cols = mx->rows;
		p.t = ldexpf(ts, -e);
		p.transpose = !nv_a;
		p.c = cuda_ptr(job->dense.buf, job->dense.offset);
		p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
		p.c_ld = mxa__dense_stride(&job->dense) / (p.bf16 ? 2 : 4);
		p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
		const uint32_t tile_rows = (p.w_rows + 31) / 32;

		mixed_post_kernel<<<dim3((p.w_cols + 31) / 32,
					 tile_rows < 65535 ? tile_rows : 65535),
				    256, 0, cd->stream>>>(p);
		err = cudaGetLastError();
		if (err != cudaSuccess)
			ret = cuda_fail(err, "cuda-mixed-sm90: the last pass");
	}
	cudaFreeAsync(scratch, cd->stream);
	return ret;
}
