// SPDX-License-Identifier: MIT
/*
 * The portable reference microkernel: plain C the compiler can vectorize
 * for any target.  ISA-specific microkernels must match its contract.
 */
#include <stddef.h>

#include "cpu_ukernel.h"

static void ukernel_ref(unsigned int kblocks, const float *a,
			const int16_t *sa, const float *b, const int16_t *sb,
			float acc[CPU_MR][CPU_NR])
{
	unsigned int kb, k, i, j;

	for (kb = 0; kb < kblocks; kb++) {
		float t[CPU_MR][CPU_NR] = { { 0 } };

		for (k = 0; k < 32; k++) {
			const float *ak = a + ((size_t)kb * 32 + k) * CPU_MR;
			const float *bk = b + ((size_t)kb * 32 + k) * CPU_NR;

			for (i = 0; i < CPU_MR; i++)
				for (j = 0; j < CPU_NR; j++)
					t[i][j] += ak[i] * bk[j];
		}
		for (i = 0; i < CPU_MR; i++) {
			for (j = 0; j < CPU_NR; j++) {
				int e = sa[kb * CPU_MR + i] +
					sb[kb * CPU_NR + j] + 254;

				acc[i][j] += t[i][j] * cpu_pow2_lo[e] *
					     cpu_pow2_hi[e];
			}
		}
	}
}

const struct cpu_ukernel cpu_ukernel_ref = {
	.name = "ref",
	.run = ukernel_ref,
};
