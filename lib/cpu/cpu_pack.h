/* SPDX-License-Identifier: MIT */
/*
 * Packing MX rows into microkernel panels (cpu_ukernel.h).
 */
#ifndef MXA_CPU_PACK_H
#define MXA_CPU_PACK_H

#include "cpu.h"
#include "cpu_ukernel.h"

/*
 * Pack rows [row0, row0 + width) x blocks [kb0, kb0 + kblocks) of m into
 * vals (kblocks x 32 x width) and scale exponents (kblocks x width); rows
 * at or past m->rows become zeros with exponent 0.
 */
void cpu_pack_panel(const struct mxa_matrix *m, uint32_t row0,
		    unsigned int width, uint32_t kb0, unsigned int kblocks,
		    float *vals, int16_t *scales);

#endif /* MXA_CPU_PACK_H */
