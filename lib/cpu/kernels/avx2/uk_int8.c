// SPDX-License-Identifier: MIT
/*
 * AVX2 microkernel for int8 panels (e2m1, e2m3): vpmaddubsw multiplies
 * B's unsigned bytes (k + 64) by A's broadcast signed bytes and adds
 * pairs into int16 (at most 2 * 124 * 60, no saturation), vpmaddwd adds
 * those pairs into int32.  The exact block sum is converted, corrected by
 * A's -64 * sum(k) and scaled.
 */
#if defined(__x86_64__)
#include "uk_avx2.h"

UK_AVX2 static void int8_256(unsigned int kblocks, const uint32_t *a,
			     const float *ea, const uint32_t *b,
			     const float *eb, float *c, size_t ldc, bool add)
{
	const __m256i ones = _mm256_set1_epi16(1);
	unsigned int kb, q, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		__m256i t[UK_MR][UK_NRV];
		__m256 tf[UK_MR][UK_NRV];

		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = _mm256_setzero_si256();
		#pragma GCC unroll 16
		for (q = 0; q < 8; q++) {
			__m256i bv[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				bv[j] = _mm256_loadu_si256((const __m256i *)
							   (b + q * UK_NR + 8 * j));
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				__m256i av = _mm256_set1_epi32((int)a[q * UK_MR + i]);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++) {
					__m256i p16 = _mm256_maddubs_epi16(bv[j], av);

					t[i][j] = _mm256_add_epi32(t[i][j],
								   _mm256_madd_epi16(p16, ones));
				}
			}
		}
		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++) {
			__m256 corr = _mm256_broadcast_ss(ea + UK_MR + i);

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				tf[i][j] = _mm256_add_ps(_mm256_cvtepi32_ps(t[i][j]),
							 corr);
		}
		uk_scale_add(tf, ea, eb, c, ldc);
		a += 8 * UK_MR;
		b += 8 * UK_NR;
		ea += 2 * UK_MR;
		eb += UK_NR;
	}
}

const struct cpu_ukernel cpu_uk_avx2_i8 = {
	.name = "avx2-int8",
	.insn = "vpmaddubsw + vpmaddwd",
	.panel = CPU_PANEL_I8,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = int8_256,
};
#endif
