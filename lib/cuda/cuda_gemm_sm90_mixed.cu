// SPDX-License-Identifier: MIT
/*
 * cuda-mixed-sm90: C (+)= A B^T with one operand NVFP4 (e2m1, UE4M3 per
 * 16, optional tensor scale) and the other MX (E8M0 per 32), on Hopper,
 * through the weight-only kernels (cuda-weight-only for few rows of their
 * dense A, cuda-weight-only-wgmma for many: their kernels, bounds and
 * special-value handling, mxa_gemm_weight_only()).  Their quantized
 * operand is the one they stream, so the route depends on which side the
 * NVFP4 operand is on:
 *
 * NVFP4 A, MX B (route X): every NVFP4 value is code * scale * ts, and
 * code * scale (at most 2 x 4 significant bits, 2^-10 .. 2688 in
 * magnitude) is an exact bf16.  So A becomes a dense bf16 matrix D = code
 * * scale * 2^e (exact: cuda-dequantize with the tensor scale 2^e), W = D
 * B^T is a weight-only GEMM with B as it is, and a last pass multiplies
 * by t = ts * 2^-e and adds C_in.  2^e is the tensor scale's binade
 * (clamped to 2^-80 .. 2^100, so that D stays far inside bf16's normal
 * range): W = C / t, with t in [1, 2) there, cannot overflow where C
 * does not.
 *
 * MX A, NVFP4 B (route Y: MX activations against NVFP4 weights, where B
 * is large and must be read once, as it is): A becomes two exact bf16
 * matrices scaled per row, a0 * 2^(R - 191) + a1 * 2^(R - 331), R the
 * row's largest scale (cuda_mx_bands(): band 1 holds the blocks 2^140 and
 * more below it, which bf16 cannot hold beside the largest; it is empty
 * in all but extreme data), W0 = a0 B^T and W1 = a1 B^T are weight-only
 * GEMMs against B without its tensor scale (W1 by cuda-weight-only and
 * only where *any says band 1 holds something: otherwise its launches
 * return at once), and the last pass computes (W0 + W1 2^-140) 2^(R -
 * 191) ts in double, rounds once to fp32 and adds C_in.  The factor 2^64
 * in band 0 keeps a0 at least 2^-92, inside the weight-only kernels'
 * range, and their partial sums (B folded as code * scale * 2^-8) below
 * K 2^84: inside theirs for every K below 2^28.
 *
 * (Route X with NVFP4 B, as this first did, transposing at the end, wrote
 * D for the large operand and ran the weight-only GEMM with its M and N
 * swapped: 3.4 ms at 16 x 28672 x 8192 against 0.13 for NVFP4 A.)
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_bf16.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"

namespace {

/* The binades of 2^e kept in D (see above). */
constexpr int E_MIN = -80;
constexpr int E_MAX = 100;

/*
 * The last pass of either route, element by element of C (rows x cols):
 * route X v = w0 t; route Y v = (w0 + w1 2^-140) 2^(rexp[row] - 191) ts,
 * w1 only where *any, in double (no intermediate leaves its range) and
 * rounded once.
 */
struct post_args {
	const float *w0, *w1;		/* packed: rows x cols */
	const int32_t *rexp;		/* route Y, else NULL */
	const uint32_t *any;
	uint32_t rows, cols;
	float t;			/* route X */
	double ts;			/* route Y */
	uint8_t *c;
	uint64_t c_ld;			/* elements */
	int bf16, accumulate;
};

/* C's (row, col) = v, plus C_in, one store. */
__device__ __forceinline__ void store_c(uint8_t *c, uint64_t c_ld, int bf16, int accumulate,
					uint32_t row, uint32_t col, float v)
{
	if (bf16) {
		uint16_t *o = (uint16_t *)c + row * c_ld + col;

		if (accumulate)
			v += __uint_as_float((uint32_t)*o << 16);
		*o = __bfloat16_as_ushort(__float2bfloat16_rn(v));
	} else {
		float *o = (float *)c + row * c_ld + col;

		if (accumulate)
			v += *o;
		*o = v;
	}
}

__global__ void __launch_bounds__(256) mixed_post_kernel(const struct post_args p)
{
	const uint64_t total = (uint64_t)p.rows * p.cols;
	const bool band1 = p.rexp && *p.any;

	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		const uint32_t row = (uint32_t)(i / p.cols), col = (uint32_t)(i % p.cols);
		float v;

		if (p.rexp) {
			double w = p.w0[i];

			if (band1)
				w += ldexp((double)p.w1[i], -140);
			v = __double2float_rn(w * ldexp(p.ts, p.rexp[row] - 191));
		} else {
			v = p.w0[i] * p.t;
		}
		store_c(p.c, p.c_ld, p.bf16, p.accumulate, row, col, v);
	}
}

/*
 * The weight-only request the mixed one becomes: route X D (A's rows,
 * bf16) against MX B, route Y a0 (bf16) against NVFP4 B.
 */
struct mxa_op_desc weight_only_desc_of(const struct mxa_op_desc *desc)
{
	struct mxa_op_desc w;

	memset(&w, 0, sizeof(w));
	w.op = MXA_OP_GEMM_WEIGHT_ONLY;
	w.a_dtype = MXA_DTYPE_BF16;
	w.b_elem = desc->a_scale_type == MXA_SCALE_UE4M3 ? desc->b_elem : MXA_ELEM_E2M1;
	w.b_scale_type = desc->b_scale_type;
	w.dtype = MXA_DTYPE_F32;
	w.m = desc->m;
	w.n = desc->n;
	w.k = desc->k;
	return w;
}

/* Whether cuda-weight-only-wgmma runs w rather than cuda-weight-only. */
bool wgmma_for(struct cuda_device *cd, const struct mxa_op_desc *w)
{
	return !cuda_weight_only_wgmma_reject(cd, w) &&
	       cuda_weight_only_wgmma_rank(cd, w) > 10;
}

size_t align256(size_t n)
{
	return (n + 255) / 256 * 256;
}

/* A weight-only job: dense A at a_off, B, fp32 W at w_off of scratch. */
struct mxa_job weight_only_job_of(struct mxa_buffer *scratch, size_t a_off, size_t w_off,
				  const struct mxa_matrix *b, uint32_t m)
{
	struct mxa_job wo;

	memset(&wo, 0, sizeof(wo));
	wo.op = MXA_OP_GEMM_WEIGHT_ONLY;
	wo.a_dense.buf = scratch;
	wo.a_dense.offset = a_off;
	wo.a_dense.dtype = MXA_DTYPE_BF16;
	wo.a_dense.rows = m;
	wo.a_dense.cols = b->cols;
	wo.b = *b;
	wo.dense.buf = scratch;
	wo.dense.offset = w_off;
	wo.dense.dtype = MXA_DTYPE_F32;
	wo.dense.rows = m;
	wo.dense.cols = b->rows;
	return wo;
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
	const bool route_x = job->a.scale_type == MXA_SCALE_UE4M3;
	const struct mxa_matrix *nv = route_x ? &job->a : &job->b;
	const uint32_t m = job->a.rows, n = job->b.rows, k = job->a.cols;
	const float ts = nv->tensor_scale != 0.0f ? nv->tensor_scale : 1.0f;
	const size_t a_bytes = align256((size_t)m * k * 2);
	const size_t w_bytes = align256((size_t)m * n * 4);
	/* Route Y: a1, W1, R per row, the flag and the stripe flags of B. */
	const size_t r_bytes = align256((size_t)m * 4) + 256;
	const size_t ones_bytes = align256(((size_t)n + 127) / 128 * 4);
	const size_t bytes = route_x ? a_bytes + w_bytes :
			     2 * a_bytes + 2 * w_bytes + r_bytes + ones_bytes;
	/* The weight-only request either route runs (the same for both GEMMs of Y). */
	const struct mxa_op_desc gdesc = sm90_desc_of(job);
	const struct mxa_op_desc wdesc = weight_only_desc_of(&gdesc);
	struct mxa_buffer scratch_buf;
	struct mxa_job dq, wo;
	struct post_args p;
	uint8_t *scratch = NULL;
	cudaError_t err;
	int ret;

	err = cudaMallocAsync((void **)&scratch, bytes, cd->stream);
	if (err != cudaSuccess)
		return cuda_fail(err, "cuda-mixed-sm90: scratch");
	memset(&scratch_buf, 0, sizeof(scratch_buf));
	scratch_buf.size = bytes;
	scratch_buf.priv = scratch;
	memset(&p, 0, sizeof(p));

	if (route_x) {
		const int e = ilogbf(ts) < E_MIN ? E_MIN : ilogbf(ts) > E_MAX ? E_MAX :
			      ilogbf(ts);

		/* D = code * scale * 2^e, exact in bf16. */
		memset(&dq, 0, sizeof(dq));
		dq.op = MXA_OP_DEQUANTIZE;
		dq.a = *nv;
		dq.a.tensor_scale = ldexpf(1.0f, e);
		dq.dense.buf = &scratch_buf;
		dq.dense.dtype = MXA_DTYPE_BF16;
		dq.dense.rows = m;
		dq.dense.cols = k;
		ret = cuda_launch_dequantize(cd, &dq);
		/* W = D B^T. */
		wo = weight_only_job_of(&scratch_buf, 0, a_bytes, &job->b, m);
		if (!ret)
			ret = wgmma_for(cd, &wdesc) ? cuda_launch_gemm_weight_only_wgmma(cd, &wo) :
						      cuda_launch_gemm_weight_only(cd, &wo);
		p.t = ldexpf(ts, -e);
	} else {
		uint8_t *rest = scratch + 2 * a_bytes + 2 * w_bytes;
		int32_t *rexp = (int32_t *)rest;
		uint32_t *any = (uint32_t *)(rest + r_bytes - 256);
		uint32_t *ones = (uint32_t *)(rest + r_bytes);
		struct mxa_matrix b = job->b;

		ret = cuda_mx_bands(cd, &job->a, (uint16_t *)scratch,
				    (uint16_t *)(scratch + a_bytes), rexp, any);
		/* Every stripe of B for the band-1 GEMM, when it runs at all. */
		err = ret ? cudaSuccess : cudaMemsetAsync(ones, 1, ones_bytes, cd->stream);
		if (err != cudaSuccess)
			ret = cuda_fail(err, "cuda-mixed-sm90: stripe flags");
		/* W0 = a0 B^T, W1 = a1 B^T, B without its tensor scale. */
		b.tensor_scale = 0.0f;
		wo = weight_only_job_of(&scratch_buf, 0, 2 * a_bytes, &b, m);
		if (!ret)
			ret = wgmma_for(cd, &wdesc) ? cuda_launch_gemm_weight_only_wgmma(cd, &wo) :
						      cuda_launch_gemm_weight_only(cd, &wo);
		wo = weight_only_job_of(&scratch_buf, a_bytes, 2 * a_bytes + w_bytes, &b, m);
		if (!ret)
			ret = cuda_weight_only_redo(cd, &wo, any, ones);
		p.w1 = (const float *)(scratch + 2 * a_bytes + w_bytes);
		p.rexp = rexp;
		p.any = any;
		p.ts = ts;
	}

	/* C (+)= the sum, scaled. */
	if (!ret) {
		const uint64_t total = (uint64_t)m * n;
		const uint64_t grid = (total + 255) / 256;

		p.w0 = (const float *)(scratch + (route_x ? a_bytes : 2 * a_bytes));
		p.rows = m;
		p.cols = n;
		p.c = cuda_ptr(job->dense.buf, job->dense.offset);
		p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
		p.c_ld = mxa__dense_stride(&job->dense) / (p.bf16 ? 2 : 4);
		p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
		mixed_post_kernel<<<(unsigned int)(grid < (uint64_t)cd->sms * 16 ? grid :
						   (uint64_t)cd->sms * 16),
				    256, 0, cd->stream>>>(p);
		err = cudaGetLastError();
		if (err != cudaSuccess)
			ret = cuda_fail(err, "cuda-mixed-sm90: the last pass");
	}
	cudaFreeAsync(scratch, cd->stream);
	return ret;
}
