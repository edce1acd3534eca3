/* SPDX-License-Identifier: MIT */
/*
 * Packing MX rows into microkernel panels (formats in cpu_ukernel.h).
 */
#ifndef MXA_CPU_PACK_H
#define MXA_CPU_PACK_H

#include "cpu.h"
#include "cpu_ukernel.h"

/* Floats of meta per row per block: A of int8 panels adds corrections. */
static inline unsigned int cpu_meta_per_row(enum cpu_panel fmt, bool b_side)
{
	return fmt == CPU_PANEL_I8 && !b_side ? 2 : 1;
}

/*
 * Pack rows [row0, row0 + w) x blocks [kb0, kb0 + kblocks) of m into one
 * micro-panel: words gets kblocks x CPU_PANEL_WORDS(fmt) x w words, meta
 * kblocks x cpu_meta_per_row() x w floats.  b_side: the operand the
 * kernel loads as vectors (B).  Rows at or past m->rows become zeros with
 * exponent 0; nan_rows[r] is set for each row r < w whose packed blocks
 * include a NaN scale (and left alone otherwise).
 *
 * UE4M3 (NVFP4) operands go to CPU_PANEL_BF16 only: a panel block's 32 K
 * are two blocks of 16 whose scales are folded into the elements (e2m1
 * times UE4M3 is exact in bf16), the block's exponent is the tensor
 * scale's (cpu_pack_tensor_scale()), and a K that ends halfway through a
 * panel block (K = 16 mod 32) leaves its second half zero.
 */
void cpu_pack_panel(const struct mxa_matrix *m, enum cpu_panel fmt,
		    bool b_side, uint32_t row0, unsigned int w, uint32_t kb0,
		    unsigned int kblocks, uint32_t *words, float *meta,
		    uint8_t *nan_rows);

/*
 * A UE4M3 operand's fp32 tensor scale t as mant * 2^*exp with mant in
 * [1, 2), exact (subnormal t included); 1 * 2^0 for single level (t = 0)
 * and for E8M0 operands.  cpu_pack_panel() gives every block of such an
 * operand the exponent *exp; the framework multiplies the output by the
 * two operands' mantissas.
 */
double cpu_pack_tensor_scale(const struct mxa_matrix *m, int *exp);

/*
 * The bf16 value of every byte as a code of elem (bits above the code
 * ignored; NaN codes give 0x7fc0, Inf codes +-Inf): 256 entries, for
 * packers of other panel formats.
 */
const uint16_t *cpu_pack_bf16_values(enum mxcore_elem elem);

#endif /* MXA_CPU_PACK_H */
