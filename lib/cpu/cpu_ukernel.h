/* SPDX-License-Identifier: MIT */
/*
 * The CPU GEMM microkernel contract (BLIS style), stated once here; every
 * microkernel in lib/cpu/kernels/ implements it and the framework
 * (cpu_gemm.c) relies on nothing else.
 *
 * A microkernel updates an MR x NR fp32 tile c (row stride ldc floats):
 *
 *   c[i][j] (add ? += : =) sum over blocks kb < kblocks of
 *                          scale(t[kb][i][j], ea[kb][i] + eb[kb][j])
 *   t[kb][i][j] = sum_{k < 32} a[kb][k][i] * b[kb][k][j]
 *   scale(t, e) = t * 2^e, rounded once to fp32 (twice when e < -126 and
 *                 the result is an fp32 subnormal)
 *
 * from packed micro-panels (cpu_pack.h) of MR rows of A and NR rows of B,
 * kblocks blocks of 32 K each.  Each 32-bit word of a panel holds
 * consecutive K of one row:
 *
 *   CPU_PANEL_BF16  two bf16 element values (K = 2p low, 2p + 1 high):
 *                   per block 16 x W words, word (p, r) at [p * W + r].
 *                   Every MX element value is exact in bf16, and the
 *                   product of two is exact in fp32.  NVFP4 rows carry
 *                   each e2m1 value times its UE4M3 block scale (exact
 *                   bf16 normals of at most 6 significant bits; two
 *                   blocks of 16 per block of 32), so their products
 *                   are exact too (cpu_pack.h).
 *   CPU_PANEL_I8    four int8 (K = 4q .. 4q + 3, lowest byte first): per
 *                   block 8 x W words, word (q, r) at [q * W + r].  Only
 *                   e2m1 and e2m3, whose values are k * 2^-1 and k * 2^-3
 *                   with |k| <= 60.  A holds k as signed bytes; B holds
 *                   k + 64 as unsigned bytes (what vpdpbusd and vpmaddubsw
 *                   multiply), and A's meta carries the correction
 *                   -64 * sum_k a_k per block, so t = (integer dot) + corr
 *                   is exact.
 *   CPU_PANEL_AMX_BF16  bf16 pairs as in CPU_PANEL_BF16, laid out as AMX
 *                   tiles of 16 rows x 16 words (1 KiB) per block, two
 *                   per panel (W = 32): A's tile t holds rows 16t..16t+15,
 *                   word (r, p) at [t * 256 + r * 16 + p] (a row's block
 *                   is one 64-byte tile row); B's tile t holds columns
 *                   16t..16t+15, word (p, j) at [t * 256 + p * 16 + j]
 *                   (AMX's pair-interleaved B).  Elements may carry part
 *                   of their scale ("folded", below).
 *
 * Folding (CPU_PANEL_AMX_BF16 only).  The packer cuts K into fold groups
 * of AMX_FOLD blocks (kernels/amx/amx.h; kcb is a multiple of it),
 * aligned where the packed range starts, so that every microkernel call
 * starts on a group.  Where the exponents of a row's blocks in a group
 * (all-zero and NaN-scale blocks ignored) span at most AMX_FOLD_SPREAD,
 * it multiplies each element by 2^(s - max s) and gives every block of
 * the group the exponent max s - 127; elsewhere elements are the plain
 * values and exponents are per block.  Either way the value the contract
 * below computes is unchanged, every folded element is 0, Inf, NaN or at
 * least 2^-63 in magnitude, and every product of two is 0 or an fp32
 * normal.  A kernel that sees one exponent per row of A and per row of B
 * across a run of blocks may sum the run's products in fp32 before
 * scaling once.
 *
 * Meta (floats, per block): ea holds MR exponents, followed for
 * CPU_PANEL_I8 by MR corrections; eb holds NR exponents.  An exponent is
 * the block's E8M0 scale minus 127 (plus the k exponent for CPU_PANEL_I8;
 * for NVFP4 rows, the exponent of the operand's tensor scale, or 0);
 * NaN scales are packed as 0 (UE4M3 ones as zero elements) and the
 * framework sets the affected rows and columns of C to NaN.  Rows past the matrix edge are packed as zeros with
 * exponent 0, so a kernel never handles edges.  Element Inf and NaN codes
 * (e4m3, e5m2) reach the kernel as bf16 Inf and NaN and follow IEEE
 * arithmetic: Inf * 0 is NaN, Inf + -Inf is NaN.
 *
 * Error: each block sum t is exact (CPU_PANEL_I8) or rounded at most 31
 * times (CPU_PANEL_BF16, fp32 accumulation of exact products); scaling is
 * exact outside the subnormal range; the caller adds blocks to c in fp32.
 * A CPU_PANEL_AMX_BF16 kernel summing runs of folded blocks in fp32 and
 * scaling each run once makes at most as many roundings per output
 * (32 * kblocks - 1 in all, then one to add to c).
 * Documentation/numerics.rst turns this into each kernel's bound.
 *
 * Optional hooks: pack replaces cpu_pack_panel() for the kernel's panel
 * format (same arguments, cpu_pack.h); task_begin and task_end run on
 * the thread before and after a task's microkernel calls (AMX loads its
 * tile configuration and releases the tiles there).
 */
#ifndef MXA_CPU_UKERNEL_H
#define MXA_CPU_UKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cpu_panel {
	CPU_PANEL_BF16,
	CPU_PANEL_I8,
	CPU_PANEL_AMX_BF16,
};

/* 32-bit words per row per block, and the B-side offset of int8 panels. */
#define CPU_PANEL_WORDS(p)	((p) == CPU_PANEL_I8 ? 8u : 16u)
#define CPU_I8_OFFSET		64

typedef void cpu_ukernel_fn(unsigned int kblocks, const uint32_t *a,
			    const float *ea, const uint32_t *b,
			    const float *eb, float *c, size_t ldc, bool add);

struct mxa_matrix;

typedef void cpu_pack_fn(const struct mxa_matrix *m, bool b_side,
			 uint32_t row0, unsigned int w, uint32_t kb0,
			 unsigned int kblocks, uint32_t *words, float *meta,
			 uint8_t *nan_rows);

struct cpu_ukernel {
	const char *name;	/* e.g. "avx512-bf16dot" */
	const char *insn;	/* what does the work, for descriptions */
	enum cpu_panel panel;
	unsigned int mr, nr;	/* register tile */
	unsigned int mc, nc;	/* cache tile, multiples of mr and nr */
	unsigned int kcb;	/* blocks per call */
	cpu_ukernel_fn *run;
	cpu_pack_fn *pack;		/* NULL: cpu_pack_panel() */
	void (*task_begin)(void);	/* NULL: nothing to do */
	void (*task_end)(void);
};

/* The kernels of lib/cpu/kernels/; x86 ones exist only on x86-64. */
extern const struct cpu_ukernel cpu_uk_ref_bf16;
extern const struct cpu_ukernel cpu_uk_ref_i8;
extern const struct cpu_ukernel cpu_uk_avx2_bf16;
extern const struct cpu_ukernel cpu_uk_avx2_i8;
extern const struct cpu_ukernel cpu_uk_avx512_fma;
extern const struct cpu_ukernel cpu_uk_avx512_bf16dot;
extern const struct cpu_ukernel cpu_uk_avx512_vnni;
extern const struct cpu_ukernel cpu_uk_amx_bf16;

#endif /* MXA_CPU_UKERNEL_H */
