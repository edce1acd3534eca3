// SPDX-License-Identifier: MIT
/*
 * AVX-512 microkernel for bf16 panels without AVX512_BF16: each word's
 * two bf16 become fp32 by a shift and a mask (exact), then two vfmadd per
 * pair.  A's words for the block are widened once into a small buffer
 * that the FMAs broadcast from.
 */
#if defined(__x86_64__)
#include "uk_avx512.h"

UK_AVX512 static void fma512(unsigned int kblocks, const uint32_t *a,
			     const float *ea, const uint32_t *b,
			     const float *eb, float *c, size_t ldc, bool add)
{
	const __m512i hi_mask = _mm512_set1_epi32(0xffff0000u);
	float alo[16 * UK_MR] __attribute__((aligned(64)));
	float ahi[16 * UK_MR] __attribute__((aligned(64)));
	unsigned int kb, p, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		__m512 t[UK_MR][UK_NRV];

		/* 16 * UK_MR = 96 words: six vectors. */
		#pragma GCC unroll 16
		for (p = 0; p < 16 * UK_MR; p += 16) {
			__m512i w = _mm512_loadu_si512(a + p);

			_mm512_store_ps(alo + p,
					_mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
			_mm512_store_ps(ahi + p,
					_mm512_castsi512_ps(_mm512_and_si512(w, hi_mask)));
		}
		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = _mm512_setzero_ps();
		for (p = 0; p < 16; p++) {
			__m512 blo[UK_NRV], bhi[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++) {
				__m512i w = _mm512_loadu_si512(b + p * UK_NR + 16 * j);

				blo[j] = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
				bhi[j] = _mm512_castsi512_ps(_mm512_and_si512(w, hi_mask));
			}
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				__m512 lo = _mm512_set1_ps(alo[p * UK_MR + i]);
				__m512 hi = _mm512_set1_ps(ahi[p * UK_MR + i]);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++) {
					t[i][j] = _mm512_fmadd_ps(blo[j], lo, t[i][j]);
					t[i][j] = _mm512_fmadd_ps(bhi[j], hi, t[i][j]);
				}
			}
		}
		uk_scale_add(t, ea, eb, c, ldc);
		a += 16 * UK_MR;
		b += 16 * UK_NR;
		ea += UK_MR;
		eb += UK_NR;
	}
}

const struct cpu_ukernel cpu_uk_avx512_fma = {
	.name = "avx512-fma",
	.insn = "vfmadd231ps on widened bf16",
	.panel = CPU_PANEL_BF16,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = fma512,
};
#endif
