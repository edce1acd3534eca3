// SPDX-License-Identifier: MIT
/*
 * AVX-512 VNNI microkernel for int8 panels (e2m1, e2m3): vpdpbusd adds
 * four products of B's unsigned bytes (k + 64) and A's broadcast signed
 * bytes into int32 per lane; a block is 8 of them.  The exact block sum
 * is converted, corrected by A's -64 * sum(k) and scaled by vscalefps.
 */
#if defined(__x86_64__)
#include "uk_avx512.h"

#define UK_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

UK_VNNI static void vnni(unsigned int kblocks, const uint32_t *a,
			 const float *ea, const uint32_t *b, const float *eb,
			 float *c, size_t ldc, bool add)
{
	unsigned int kb, q, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		__m512i t[UK_MR][UK_NRV];
		__m512 tf[UK_MR][UK_NRV];

		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = _mm512_setzero_si512();
		#pragma GCC unroll 16
		for (q = 0; q < 8; q++) {
			__m512i bv[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				bv[j] = _mm512_loadu_si512(b + q * UK_NR + 16 * j);
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				__m512i av = _mm512_set1_epi32((int)a[q * UK_MR + i]);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++)
					t[i][j] = _mm512_dpbusd_epi32(t[i][j], bv[j],
								      av);
			}
		}
		/* Exact: |t| < 2^19 and the correction is an integer. */
		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++) {
			__m512 corr = _mm512_set1_ps(ea[UK_MR + i]);

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				tf[i][j] = _mm512_add_ps(_mm512_cvtepi32_ps(t[i][j]),
							 corr);
		}
		uk_scale_add(tf, ea, eb, c, ldc);
		a += 8 * UK_MR;
		b += 8 * UK_NR;
		ea += 2 * UK_MR;
		eb += UK_NR;
	}
}

const struct cpu_ukernel cpu_uk_avx512_vnni = {
	.name = "avx512-vnni",
	.insn = "vpdpbusd",
	.panel = CPU_PANEL_I8,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = vnni,
};
#endif
