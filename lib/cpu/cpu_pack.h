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
 */
void cpu_pack_panel(const struct mxa_matrix *m, enum cpu_panel fmt,
		    bool b_side, uint32_t row0, unsigned int w, uint32_t kb0,
		    unsigned int kblocks, uint32_t *words, float *meta,
		    uint8_t *nan_rows);

/*
 * The bf16 value of every byte as a code of elem (bits above the code
 * ignored; NaN codes give 0x7fc0, Inf codes +-Inf): 256 entries, for
 * packers of other panel formats.
 */
const uint16_t *cpu_pack_bf16_values(enum mxcore_elem elem);

#endif /* MXA_CPU_PACK_H */
