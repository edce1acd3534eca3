// SPDX-License-Identifier: MIT
/*
 * AVX-512 BF16 microkernel for bf16 panels: vdpbf16ps multiplies a pair
 * of bf16 (two K) per lane and adds both products to fp32, with A's pair
 * broadcast from memory.  Block sums of 16 pairs, then vscalefps.
 */
#if defined(__x86_64__)
#include "uk_avx512.h"

#define UK_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

UK_BF16 static void bf16dot(unsigned int kblocks, const uint32_t *a,
			    const float *ea, const uint32_t *b,
			    const float *eb, float *c, size_t ldc, bool add)
{
	unsigned int kb, p, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		__m512 t[UK_MR][UK_NRV];

		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = _mm512_setzero_ps();
		#pragma GCC unroll 16
		for (p = 0; p < 16; p++) {
			__m512bh bv[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				bv[j] = (__m512bh)_mm512_loadu_si512(b + p * UK_NR +
								     16 * j);
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				__m512bh av = (__m512bh)_mm512_set1_epi32((int)a[p * UK_MR + i]);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++)
					t[i][j] = _mm512_dpbf16_ps(t[i][j], bv[j],
								   av);
			}
		}
		uk_scale_add(t, ea, eb, c, ldc);
		a += 16 * UK_MR;
		b += 16 * UK_NR;
		ea += UK_MR;
		eb += UK_NR;
	}
}

const struct cpu_ukernel cpu_uk_avx512_bf16dot = {
	.name = "avx512-bf16dot",
	.insn = "vdpbf16ps",
	.panel = CPU_PANEL_BF16,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = bf16dot,
};
#endif
