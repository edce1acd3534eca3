// SPDX-License-Identifier: MIT
/*
 * AVX-512 microkernel for bf16 panels without AVX512_BF16:
 * kernels/uk_fma_body.h on zmm.
 */
#if defined(__x86_64__)
#include "uk_avx512.h"

#define UKF_TARGET UK_AVX512
#define UKF_FN fma512
#define UKF_LANES 16
#define UKF_V __m512
#define UKF_VI __m512i
#define UKF_LOAD(p) _mm512_loadu_si512(p)
#define UKF_LO(w) _mm512_castsi512_ps(_mm512_slli_epi32(w, 16))
#define UKF_HI(w) _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(0xffff0000u)))
#define UKF_STORE(p, v) _mm512_store_ps(p, v)
#define UKF_SET1(x) _mm512_set1_ps(x)
#define UKF_ZERO() _mm512_setzero_ps()
#define UKF_FMADD(a, b, c) _mm512_fmadd_ps(a, b, c)
#include "../uk_fma_body.h"

const struct cpu_ukernel cpu_uk_avx512_fma = {
	.name = "avx512-fma",
	.insn = "vfmadd231ps on widened bf16",
	.panel = CPU_PANEL_BF16,
	.mr = UK_MR, .nr = UK_NR, .mc = UK_MC, .nc = UK_NC, .kcb = UK_KCB,
	.run = fma512,
};
#endif
