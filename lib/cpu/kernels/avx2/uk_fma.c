// SPDX-License-Identifier: MIT
/*
 * AVX2 + FMA microkernel for bf16 panels: each word's two bf16 become
 * fp32 by a shift and a mask (exact), then two vfmadd per pair.  A's
 * words for the block are widened once into a small buffer that the
 * FMAs broadcast from.
 */
#if defined(__x86_64__)
#include "uk_avx2.h"

UK_AVX2 static void fma256(unsigned int kblocks, const uint32_t *a,
			   const float *ea, const uint32_t *b,
			   const float *eb, float *c, size_t ldc, bool add)
{
	const __m256i hi_mask = _mm256_set1_epi32(0xffff0000u);
	float alo[16 * UK_MR] __attribute__((aligned(32)));
	float ahi[16 * UK_MR] __attribute__((aligned(32)));
	unsigned int kb, p, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		__m256 t[UK_MR][UK_NRV];

		#pragma GCC unroll 16
		for (p = 0; p < 16 * UK_MR; p += 8) {
			__m256i w = _mm256_loadu_si256((const __m256i *)(a + p));

			_mm256_store_ps(alo + p,
					_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
			_mm256_store_ps(ahi + p,
					_mm256_castsi256_ps(_mm256_and_si256(w, hi_mask)));
		}
		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = _mm256_setzero_ps();
		for (p = 0; p < 16; p++) {
			__m256 blo[UK_NRV], bhi[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++) {
				__m256i w = _mm256_loadu_si256((const __m256i *)
							       (b + p * UK_NR + 8 * j));

				blo[j] = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
				bhi[j] = _mm256_castsi256_ps(_mm256_and_si256(w, hi_mask));
			}
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				__m256 lo = _mm256_broadcast_ss(alo + p * UK_MR + i);
				__m256 hi = _mm256_broadcast_ss(ahi + p * UK_MR + i);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++) {
					t[i][j] = _mm256_fmadd_ps(blo[j], lo, t[i][j]);
					t[i][j] = _mm256_fmadd_ps(bhi[j], hi, t[i][j]);
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

const struct cpu_ukernel cpu_uk_avx2_bf16 = {
	.name = "avx2-fma",
	.insn = "vfmadd231ps on widened bf16",
	.panel = CPU_PANEL_BF16,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = fma256,
};
#endif
