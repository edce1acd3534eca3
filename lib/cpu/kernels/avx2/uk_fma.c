// SPDX-License-Identifier: MIT
/* AVX2 + FMA microkernel for bf16 panels: kernels/uk_fma_body.h on ymm. */
#if defined(__x86_64__)
#include "uk_avx2.h"

#define UKF_TARGET UK_AVX2
#define UKF_FN fma256
#define UKF_LANES 8
#define UKF_V __m256
#define UKF_VI __m256i
#define UKF_LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define UKF_LO(w) _mm256_castsi256_ps(_mm256_slli_epi32(w, 16))
#define UKF_HI(w) _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xffff0000u)))
#define UKF_STORE(p, v) _mm256_store_ps(p, v)
#define UKF_SET1(x) _mm256_broadcast_ss(&(x))
#define UKF_ZERO() _mm256_setzero_ps()
#define UKF_FMADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#include "../uk_fma_body.h"

const struct cpu_ukernel cpu_uk_avx2_bf16 = {
	.name = "avx2-fma",
	.insn = "vfmadd231ps on widened bf16",
	.panel = CPU_PANEL_BF16,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = fma256,
};
#endif
