/* SPDX-License-Identifier: MIT */
/*
 * The CPU GEMM microkernel contract (BLIS style).
 *
 * A microkernel updates an MR x NR fp32 tile held by the caller:
 *
 *   acc[i][j] += sum over blocks kb of
 *                t[i][j] * 2^(sa[kb][i] + sb[kb][j])
 *   t[i][j] = sum_{k in kb} a[kb][k][i] * b[kb][k][j]
 *
 * from packed micro-panels: a is kblocks x 32 x MR element values (exact
 * fp32), sa is kblocks x MR block scale exponents (E8M0 byte - 127, or
 * CPU_SCALE_NAN for 0xff), and b, sb likewise with NR.  Rows past the
 * matrix edge are packed as zeros with exponent 0, so a kernel never
 * handles edges.  The power of two is applied as two factors, each within
 * fp32's range (cpu_pow2_split()), so zero blocks stay zero and Inf stays
 * Inf at every scale, and an intermediate overflows only when the result
 * does.  Each 32-product block sum is formed in fp32 before scaling, so a
 * kernel's error is at most (31 + kblocks) ulps of sum |a*b| per tile, plus
 * one fp32 underflow step per block; see Documentation/numerics.rst.
 */
#ifndef MXA_CPU_UKERNEL_H
#define MXA_CPU_UKERNEL_H

#include <stdint.h>

#define CPU_MR 4
#define CPU_NR 16

/* Exponent of a NaN scale: any sum with it indexes a NaN factor. */
#define CPU_SCALE_NAN 600
#define CPU_POW2_SLOTS (2 * CPU_SCALE_NAN + 255)

/*
 * 2^e = cpu_pow2_lo[e + 254] * cpu_pow2_hi[e + 254] for e in
 * [-254, 254], each factor in [2^-127, 2^127]; NaN for sums involving
 * CPU_SCALE_NAN.  Filled before cpu_pack_panel() first returns.
 */
extern float cpu_pow2_lo[CPU_POW2_SLOTS];
extern float cpu_pow2_hi[CPU_POW2_SLOTS];

struct cpu_ukernel {
	const char *name;
	void (*run)(unsigned int kblocks, const float *a, const int16_t *sa,
		    const float *b, const int16_t *sb,
		    float acc[CPU_MR][CPU_NR]);
};

extern const struct cpu_ukernel cpu_ukernel_ref;

#endif /* MXA_CPU_UKERNEL_H */
