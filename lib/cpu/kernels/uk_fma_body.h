/* SPDX-License-Identifier: MIT */
/*
 * The fp32 FMA microkernel for bf16 panels, written once and compiled per
 * instruction set by kernels/<isa>/uk_fma.c, which defines the vector
 * operations below and includes this file after its uk_<isa>.h: each
 * word's two bf16 become fp32 by a shift and a mask (exact), then two
 * vfmadd per pair.  A's words for the block are widened once into a small
 * buffer that the FMAs broadcast from.
 *
 *   UKF_TARGET          the target attribute (UK_AVX2, UK_AVX512)
 *   UKF_FN              the function's name
 *   UKF_LANES           fp32 lanes per vector
 *   UKF_V, UKF_VI       the float and integer vector types
 *   UKF_LOAD(p)         an integer vector of 32-bit words from p
 *   UKF_LO(w), UKF_HI(w)  the low and high bf16 of each word as fp32
 *   UKF_STORE(p, v)     an aligned store of fp32
 *   UKF_SET1(x), UKF_ZERO(), UKF_FMADD(a, b, c)
 */
#ifndef MXA_UK_FMA_BODY_H
#define MXA_UK_FMA_BODY_H

UKF_TARGET static void UKF_FN(unsigned int kblocks, const uint32_t *a,
			      const float *ea, const uint32_t *b,
			      const float *eb, float *c, size_t ldc, bool add)
{
	float alo[16 * UK_MR] __attribute__((aligned(4 * UKF_LANES)));
	float ahi[16 * UK_MR] __attribute__((aligned(4 * UKF_LANES)));
	unsigned int kb, p, i, j;

	if (!add)
		uk_clear(c, ldc);
	for (kb = 0; kb < kblocks; kb++) {
		UKF_V t[UK_MR][UK_NRV];

		#pragma GCC unroll 16
		for (p = 0; p < 16 * UK_MR; p += UKF_LANES) {
			UKF_VI w = UKF_LOAD(a + p);

			UKF_STORE(alo + p, UKF_LO(w));
			UKF_STORE(ahi + p, UKF_HI(w));
		}
		#pragma GCC unroll 16
		for (i = 0; i < UK_MR; i++)
			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++)
				t[i][j] = UKF_ZERO();
		for (p = 0; p < 16; p++) {
			UKF_V blo[UK_NRV], bhi[UK_NRV];

			#pragma GCC unroll 16
			for (j = 0; j < UK_NRV; j++) {
				UKF_VI w = UKF_LOAD(b + p * UK_NR + UKF_LANES * j);

				blo[j] = UKF_LO(w);
				bhi[j] = UKF_HI(w);
			}
			#pragma GCC unroll 16
			for (i = 0; i < UK_MR; i++) {
				UKF_V lo = UKF_SET1(alo[p * UK_MR + i]);
				UKF_V hi = UKF_SET1(ahi[p * UK_MR + i]);

				#pragma GCC unroll 16
				for (j = 0; j < UK_NRV; j++) {
					t[i][j] = UKF_FMADD(blo[j], lo, t[i][j]);
					t[i][j] = UKF_FMADD(bhi[j], hi, t[i][j]);
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

#endif /* MXA_UK_FMA_BODY_H */
