/* SPDX-License-Identifier: MIT */
/*
 * Pieces shared by the AMX files: the target attribute (so AMX and
 * AVX-512 flags never leak into other files), the register tile (2 x 2
 * accumulator tiles of 16 x 16 fp32, two tiles of A and two of B), and
 * the tile configuration.
 *
 * Tile registers: tmm0..3 accumulate C (C[t] = A[t / 2] x B[t % 2]),
 * tmm4..5 hold A (16 rows x 32 bf16 of one block), tmm6..7 hold B (16
 * K pairs x 16 columns).  Every tile is 16 rows of 64 bytes, so one
 * configuration serves all eight.
 */
#ifndef MXA_AMX_H
#define MXA_AMX_H

#include <immintrin.h>
#include <stdint.h>

#include "../../cpu_ukernel.h"

#ifdef MXA_AMX_EMULATE
#include "amx_emul.h"
#endif

#define UK_AMX_ISA "avx512f,avx512bw,avx512vl,avx512dq,amx-tile,amx-bf16,amx-int8"
#define UK_AMX __attribute__((target(UK_AMX_ISA)))

#define AMX_MR 32			/* rows of A: two tiles */
#define AMX_NR 32			/* rows of B: two tiles */
#define AMX_TILE_WORDS 256		/* 16 rows x 16 words */
#define AMX_MC 128
#define AMX_NC 256
#define AMX_FOLD 16			/* blocks per fold group (the packer's) */
#define AMX_KCB 64			/* blocks per call: whole fold groups */

/*
 * The largest spread of scale exponents folded into one group of blocks
 * (cpu_ukernel.h, CPU_PANEL_AMX_BF16): an element of magnitude >= 2^-16
 * (e5m2's least) lowered by at most 47 binades stays >= 2^-63, so the
 * product of two folded values, and every partial sum of such products,
 * is 0 or at least 2^-126, an fp32 normal.  AMX flushes bf16 and fp32
 * denormals to zero; this keeps it from ever meeting one.
 */
#define AMX_FOLD_SPREAD 47

/* The 64-byte operand of ldtilecfg (Intel SDM vol. 1, 3.2 "TILECFG"). */
struct amx_tilecfg {
	uint8_t palette;
	uint8_t start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct amx_tilecfg) == 64, "ldtilecfg reads 64 bytes");

/*
 * gcc 12's _tile_loadconfig() names only the first 8 bytes of the
 * configuration as its input, so stores to the rest may be dropped; this
 * asm reads the whole struct, and callers pass a static const one.
 */
UK_AMX static inline void amx_load_tilecfg(const struct amx_tilecfg *cfg)
{
#ifdef MXA_AMX_EMULATE
	amx_emul_cfg(cfg);
#else
	__asm__ volatile("ldtilecfg %0" : : "m"(*cfg));
#endif
}

/* Loads and stores: 16 rows of 64 bytes, row stride in bytes. */
#define AMX_STRIDE 64

/* The packer of CPU_PANEL_AMX_BF16 panels (amx_pack.c). */
void cpu_amx_pack_bf16(const struct mxa_matrix *m, bool b_side,
		       uint32_t row0, unsigned int w, uint32_t kb0,
		       unsigned int kblocks, uint32_t *words, float *meta,
		       uint8_t *nan_rows);

#endif /* MXA_AMX_H */
