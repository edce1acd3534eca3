/* SPDX-License-Identifier: MIT */
/*
 * Pieces shared by the AVX2 microkernels: the 4 x 16 register tile, the
 * target attribute (so ISA flags never leak into other files), and the
 * per-block epilogue c += t * 2^(ea[i] + eb[j]).  AVX2 has no vscalefps:
 * the power of two is applied as two factors 2^e1 * 2^e2 with e1, e2
 * clamped to fp32's normal exponents, which is exact unless the result is
 * subnormal, keeps zeros, Inf and NaN, overflows only when the result
 * does, and makes any e below -252 (whose result rounds to zero for every
 * block sum) count as -252.
 */
#ifndef MXA_UK_AVX2_H
#define MXA_UK_AVX2_H

#include <immintrin.h>

#include "../../cpu_ukernel.h"

#define UK_AVX2 __attribute__((target("avx2,fma")))

#define UK_MR 4
#define UK_NRV 2			/* ymm vectors per row */
#define UK_NR (8 * UK_NRV)
#define UK_MC 64
#define UK_NC 128
#define UK_KCB 8

UK_AVX2 static inline void uk_clear(float *c, size_t ldc)
{
	unsigned int i, j;

	#pragma GCC unroll 16
	for (i = 0; i < UK_MR; i++)
		#pragma GCC unroll 16
		for (j = 0; j < UK_NRV; j++)
			_mm256_storeu_ps(c + i * ldc + 8 * j,
					 _mm256_setzero_ps());
}

/* 2^e for integer-valued e in [-126, 127]. */
UK_AVX2 static inline __m256 uk_pow2(__m256 e)
{
	__m256i x = _mm256_add_epi32(_mm256_cvttps_epi32(e),
				     _mm256_set1_epi32(127));

	return _mm256_castsi256_ps(_mm256_slli_epi32(x, 23));
}

UK_AVX2 static inline __m256 uk_scale(__m256 t, __m256 e)
{
	const __m256 lo = _mm256_set1_ps(-126.0f), hi = _mm256_set1_ps(127.0f);
	__m256 e1 = _mm256_min_ps(_mm256_max_ps(e, lo), hi);
	__m256 e2 = _mm256_min_ps(_mm256_max_ps(_mm256_sub_ps(e, e1), lo), hi);

	return _mm256_mul_ps(_mm256_mul_ps(t, uk_pow2(e1)), uk_pow2(e2));
}

/* c[i] += t[i] * 2^(ea[i] + eb): one block of the tile. */
UK_AVX2 static inline void uk_scale_add(__m256 t[UK_MR][UK_NRV],
					const float *ea, const float *eb,
					float *c, size_t ldc)
{
	__m256 e[UK_NRV];
	unsigned int i, j;

	#pragma GCC unroll 16
	for (j = 0; j < UK_NRV; j++)
		e[j] = _mm256_loadu_ps(eb + 8 * j);
	#pragma GCC unroll 16
	for (i = 0; i < UK_MR; i++) {
		__m256 ei = _mm256_broadcast_ss(ea + i);

		#pragma GCC unroll 16
		for (j = 0; j < UK_NRV; j++) {
			float *cp = c + i * ldc + 8 * j;
			__m256 s = uk_scale(t[i][j], _mm256_add_ps(e[j], ei));

			_mm256_storeu_ps(cp, _mm256_add_ps(_mm256_loadu_ps(cp),
							   s));
		}
	}
}

#endif /* MXA_UK_AVX2_H */
