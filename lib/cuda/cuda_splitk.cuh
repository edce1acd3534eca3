/* SPDX-License-Identifier: MIT */
/*
 * K split across CTAs, summed in a fixed order: each CTA of a tile stores
 * its partial tile, the last to arrive (a counter per tile, which it
 * resets for the next GEMM in stream order) adds every range's partial in
 * range order, so results do not depend on which CTA finished when.  Used
 * by the decode-shaped kernels (skinny, weight-only), whose threads hold
 * NT x 4 accumulators of an mma.sync C fragment.
 */
#ifndef MXA_CUDA_SPLITK_CUH
#define MXA_CUDA_SPLITK_CUH

#include <stdint.h>

/*
 * Range part of ranges of tile: partial holds [tile][range][j][thread]
 * float4s (whole sectors), count a counter per tile.  Returns false in
 * every CTA but the last of the tile, which then holds in acc the ranges'
 * sum in range order; call it from every thread (it has barriers).
 */
template <int NT, int THREADS>
__device__ __forceinline__ bool splitk_ordered_sum(float (&acc)[NT][4], float4 *partial,
						   uint32_t *count, uint32_t tile,
						   uint32_t ranges, uint32_t part)
{
	float4 *mine = partial + ((uint64_t)tile * ranges + part) * NT * THREADS +
		       threadIdx.x;
	__shared__ uint32_t last;

#pragma unroll
	for (int j = 0; j < NT; j++)
		mine[j * THREADS] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
	/*
	 * One release by one thread after the barrier publishes the CTA's
	 * partials (cumulativity), the acquire makes the others' visible to
	 * the last CTA: no fence per thread.
	 */
	__syncthreads();
	if (threadIdx.x == 0) {
		uint32_t before;

		asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
			     : "=r"(before) : "l"(count + tile) : "memory");
		last = before == ranges - 1;
		/* Zero again for the next GEMM (stream order). */
		if (last)
			count[tile] = 0;
	}
	__syncthreads();
	if (!last)
		return false;
#pragma unroll
	for (int j = 0; j < NT; j++)
		for (int e = 0; e < 4; e++)
			acc[j][e] = 0.0f;
	for (uint32_t q = 0; q < ranges; q++) {
		const float4 *from = partial + ((uint64_t)tile * ranges + q) * NT * THREADS +
				     threadIdx.x;
#pragma unroll
		for (int j = 0; j < NT; j++) {
			const float4 v = __ldcg(from + j * THREADS);

			acc[j][0] += v.x;
			acc[j][1] += v.y;
			acc[j][2] += v.z;
			acc[j][3] += v.w;
		}
	}
	return true;
}

#endif /* MXA_CUDA_SPLITK_CUH */
