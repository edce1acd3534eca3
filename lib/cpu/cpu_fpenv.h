/* SPDX-License-Identifier: MIT */
/*
 * The floating-point environment the CPU kernels assume: round to nearest
 * even, gradual underflow (no flush-to-zero, no denormals-are-zero),
 * exceptions masked.  A program built with -ffast-math, or one that sets
 * MXCSR itself, would otherwise change results (quantization would no
 * longer be bit-exact), so every task sets it on entry and restores the
 * caller's on exit.
 */
#ifndef MXA_CPU_FPENV_H
#define MXA_CPU_FPENV_H

#if defined(__x86_64__)
#include <xmmintrin.h>

#define CPU_MXCSR_DEFAULT 0x1f80u
#define CPU_MXCSR_FLAGS 0x3fu	/* sticky exception flags: not control */

static inline unsigned int cpu_fpenv_enter(void)
{
	unsigned int saved = _mm_getcsr();

	if ((saved & ~CPU_MXCSR_FLAGS) != CPU_MXCSR_DEFAULT)
		_mm_setcsr(CPU_MXCSR_DEFAULT);
	return saved;
}

static inline void cpu_fpenv_leave(unsigned int saved)
{
	if ((saved & ~CPU_MXCSR_FLAGS) != CPU_MXCSR_DEFAULT)
		_mm_setcsr(saved);
}
#else
static inline unsigned int cpu_fpenv_enter(void)
{
	return 0;
}

static inline void cpu_fpenv_leave(unsigned int saved)
{
	(void)saved;
}
#endif

#endif /* MXA_CPU_FPENV_H */
