/* SPDX-License-Identifier: MIT */
/*
 * Instruction-set levels of the CPU backend and what each provides: a
 * static const table per level (xxHash's dispatch style), the level chosen
 * from cpuid once per process, and $MXACCEL_CPU_ISA to force a level for
 * tests and comparisons.  Naming an unknown level, or one this CPU lacks,
 * is an error, never a silent fallback (BLIS_ARCH_TYPE style).
 */
#ifndef MXA_CPU_ISA_H
#define MXA_CPU_ISA_H

#include "cpu_decode.h"
#include "cpu_quant.h"
#include "cpu_ukernel.h"

/* Ordered: each level can run everything below it. */
enum cpu_isa_level {
	CPU_ISA_REF,		/* portable C */
	CPU_ISA_AVX2,		/* AVX2 + FMA */
	CPU_ISA_AVX512VNNI,	/* AVX-512 F/BW/VL/DQ + VNNI */
	CPU_ISA_AVX512BF16,	/* ... + AVX512_BF16 */
	CPU_ISA_AMX,		/* ... + AMX-TILE/BF16/INT8, XTILEDATA granted */
	CPU_ISA_COUNT,
};

struct cpu_isa {
	enum cpu_isa_level level;
	const char *name;		/* the $MXACCEL_CPU_ISA spelling */
	const struct cpu_ukernel *uk_bf16;	/* GEMM on bf16 panels */
	const struct cpu_ukernel *uk_i8;	/* GEMM on int8 panels */
	/*
	 * GEMM with a UE4M3 (NVFP4) operand: bf16 panels from
	 * cpu_pack_panel(), which folds the block scales into the elements.
	 */
	const struct cpu_ukernel *uk_ue4m3;
	const struct cpu_quant *quant;
	cpu_decode_fn *decode;		/* decode GEMM row kernel */
	cpu_decode_fn *decode_bf16;	/* the same on bf16 A, or NULL */
	/*
	 * The same 16 B rows at a time (cpu_decode.h), or NULL: for calls
	 * with at least decode_tiles_m[0] rows of A, in stripes of at most
	 * decode_tiles_m[1] rows (a shorter last stripe than [0]: the row
	 * kernel).
	 */
	cpu_decode_tiles_fn *decode_tiles;
	unsigned int decode_tiles_m[2];
};

/*
 * The level for a new device: the fastest the CPU has (the highest, but
 * on Intel avx512vnni rather than avx512bf16, see cpu_isa.c), or
 * $MXACCEL_CPU_ISA ("auto" = that choice), which may name any level the
 * CPU runs.  -EINVAL for an unknown name, -EOPNOTSUPP for a level the CPU
 * lacks.  *forced says whether the variable chose it.
 */
int cpu_isa_select(const struct cpu_isa **out, bool *forced);

/*
 * Why this process does not run the amx level (no AMX in cpuid, the OS
 * does not save tile state, or arch_prctl(ARCH_REQ_XCOMP_PERM) refused
 * the tile data), or NULL when it does.  Detection, and the permission
 * request, happen once per process.
 */
const char *cpu_isa_amx_unused(void);

/*
 * The microkernel for an operand pair: uk_ue4m3 when either has UE4M3
 * scales, else int8 panels for e2m1/e2m3 pairs only.
 */
const struct cpu_ukernel *cpu_isa_ukernel(const struct cpu_isa *isa,
					  enum mxcore_elem a, bool a_ue4m3,
					  enum mxcore_elem b, bool b_ue4m3);

#endif /* MXA_CPU_ISA_H */
