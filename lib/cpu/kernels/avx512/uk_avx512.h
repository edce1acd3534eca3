/* SPDX-License-Identifier: MIT */
/*
 * Pieces shared by the AVX-512 microkernels: the 6 x 32 register tile,
 * the target attributes (so ISA flags never leak into other files), and
 * the per-block epilogue c += t * 2^(ea[i] + eb[j]) with vscalefps, which
 * rounds once and keeps zeros, Inf and NaN.
 */
#ifndef MXA_UK_AVX512_H
#define MXA_UK_AVX512_H

#include <immintrin.h>

#include "../../cpu_ukernel.h"

#define UK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

#define UK_MR 6
#define UK_NRV 2			/* zmm vectors per row */
#define UK_NR (16 * UK_NRV)
#define UK_MC 96
#define UK_NC 256
#define UK_KCB 8

UK_AVX512 static inline void uk_clear(float *c, size_t ldc)
{
	unsigned int i, j;

	#pragma GCC unroll 16
	for (i = 0; i < UK_MR; i++)
		#pragma GCC unroll 16
		for (j = 0; j < UK_NRV; j++)
			_mm512_storeu_ps(c + i * ldc + 16 * j,
					 _mm512_setzero_ps());
}

/* c[i] += t[i] * 2^(ea[i] + eb): one block of the tile. */
UK_AVX512 static inline void uk_scale_add(__m512 t[UK_MR][UK_NRV],
					  const float *ea, const float *eb,
					  float *c, size_t ldc)
{
	__m512 e[UK_NRV];
	unsigned int i, j;

	#pragma GCC unroll 16
	for (j = 0; j < UK_NRV; j++)
		e[j] = _mm512_loadu_ps(eb + 16 * j);
	#pragma GCC unroll 16
	for (i = 0; i < UK_MR; i++) {
		__m512 ei = _mm512_set1_ps(ea[i]);

		#pragma GCC unroll 16
		for (j = 0; j < UK_NRV; j++) {
			float *cp = c + i * ldc + 16 * j;
			__m512 s = _mm512_scalef_ps(t[i][j],
						    _mm512_add_ps(e[j], ei));

			_mm512_storeu_ps(cp, _mm512_add_ps(_mm512_loadu_ps(cp),
							   s));
		}
	}
}

#endif /* MXA_UK_AVX512_H */
