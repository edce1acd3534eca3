/* SPDX-License-Identifier: MIT */
/*
 * The CPU GEMM microkernel contract (BLIS style).
 *
 * A microkernel updates an MR x NR fp32 tile held by the caller:
 *
 *   acc[i][j] += sum over blocks kb of
 *                (sum_{k in kb} a[kb][k][i] * b[kb][k][j]) * sa[kb][i] * sb[kb][j]
 *
 * from packed micro-panels: a is kblocks x 32 x MR element values (exact
 * fp32), sa is kblocks x MR block scales 2^(s-127) (NaN for 0xff), and b,
 * sb likewise with NR.  Rows past the matrix edge are packed as zeros with
 * scale 1, so a kernel never handles edges.  Each 32-product block sum is
 * formed in fp32 before its scales are applied, so a kernel's error is at
 * most (31 + kblocks) ulps of sum |a*b| per tile; see numerics.rst.
 */
#ifndef MXA_CPU_UKERNEL_H
#define MXA_CPU_UKERNEL_H

#define CPU_MR 4
#define CPU_NR 16

struct cpu_ukernel {
	const char *name;
	void (*run)(unsigned int kblocks, const float *a, const float *sa,
		    const float *b, const float *sb,
		    float acc[CPU_MR][CPU_NR]);
};

extern const struct cpu_ukernel cpu_ukernel_ref;

#endif /* MXA_CPU_UKERNEL_H */
