// SPDX-License-Identifier: MIT
/*
 * AMX-BF16 microkernel for CPU_PANEL_AMX_BF16 panels: a 32 x 32 tile of
 * C in four accumulator tiles, TDPBF16PS over one block (32 K) per
 * instruction.  Where the packer folded the scales (one exponent per row
 * of A and of B across fold groups), the tiles sum those blocks and the
 * epilogue scales once with vscalefps; otherwise each block is scaled on
 * its own, as the AVX-512 kernels do.
 */
#if defined(__x86_64__)
/* The test's build on the C model: its own name beside the library's. */
#ifdef MXA_AMX_EMULATE
#define cpu_uk_amx_bf16 cpu_uk_amx_bf16_emul
#endif

#include "amx.h"

/* Eight tiles of 16 rows x 64 bytes (palette 1). */
static const struct amx_tilecfg amx_cfg = {
	.palette = 1,
	.colsb = { 64, 64, 64, 64, 64, 64, 64, 64 },
	.rows = { 16, 16, 16, 16, 16, 16, 16, 16 },
};

UK_AMX static void amx_task_begin(void)
{
	amx_load_tilecfg(&amx_cfg);
}

UK_AMX static void amx_task_end(void)
{
	_tile_release();
}

/* The same 32 exponents (one per row) in blocks [0, n) of e as in e0's? */
UK_AMX static inline bool same_exponents(const float *e0, const float *e,
					 unsigned int n)
{
	__m512i x0 = _mm512_loadu_si512(e0), x1 = _mm512_loadu_si512(e0 + 16);
	__mmask16 diff = 0;
	unsigned int kb;

	for (kb = 0; kb < n; kb++) {
		diff |= _mm512_cmpneq_epi32_mask(_mm512_loadu_si512(e + 32 * kb),
						 x0);
		diff |= _mm512_cmpneq_epi32_mask(_mm512_loadu_si512(e + 32 * kb + 16),
						 x1);
	}
	return !diff;
}

/* C[t] = A[t / 2] x B[t % 2] over block kb of the panels. */
#define AMX_BLOCK(a, b, kb)						\
	do {								\
		const uint32_t *ak = (a) + (size_t)(kb) * 2 * AMX_TILE_WORDS; \
		const uint32_t *bk = (b) + (size_t)(kb) * 2 * AMX_TILE_WORDS; \
									\
		_tile_loadd(4, ak, AMX_STRIDE);				\
		_tile_loadd(6, bk, AMX_STRIDE);				\
		_tile_loadd(7, bk + AMX_TILE_WORDS, AMX_STRIDE);	\
		_tile_loadd(5, ak + AMX_TILE_WORDS, AMX_STRIDE);	\
		_tile_dpbf16ps(0, 4, 6);				\
		_tile_dpbf16ps(1, 4, 7);				\
		_tile_dpbf16ps(2, 5, 6);				\
		_tile_dpbf16ps(3, 5, 7);				\
	} while (0)

/* The four accumulators to t[32][32]. */
UK_AMX static inline void store_acc(float *t)
{
	_tile_stored(0, t, 128);
	_tile_stored(1, t + 16, 128);
	_tile_stored(2, t + 16 * 32, 128);
	_tile_stored(3, t + 16 * 32 + 16, 128);
}

UK_AMX static inline void zero_acc(void)
{
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	_tile_zero(3);
}

/* c[i][j] (add ? += : =) t[i][j] * 2^(ea[i] + eb[j]), rounded once. */
UK_AMX static inline void scale_out(const float *t, const float *ea,
				    const float *eb, float *c, size_t ldc,
				    bool add)
{
	__m512 e0 = _mm512_loadu_ps(eb), e1 = _mm512_loadu_ps(eb + 16);
	unsigned int i;

	for (i = 0; i < AMX_MR; i++) {
		__m512 ei = _mm512_set1_ps(ea[i]);
		__m512 s0 = _mm512_scalef_ps(_mm512_load_ps(t + 32 * i),
					     _mm512_add_ps(e0, ei));
		__m512 s1 = _mm512_scalef_ps(_mm512_load_ps(t + 32 * i + 16),
					     _mm512_add_ps(e1, ei));
		float *ci = c + i * ldc;

		if (add) {
			s0 = _mm512_add_ps(_mm512_loadu_ps(ci), s0);
			s1 = _mm512_add_ps(_mm512_loadu_ps(ci + 16), s1);
		}
		_mm512_storeu_ps(ci, s0);
		_mm512_storeu_ps(ci + 16, s1);
	}
}

/*
 * The call's blocks in runs: a run is whole fold groups (AMX_FOLD blocks)
 * whose rows of A and of B each keep one exponent throughout; its blocks
 * are summed in the tiles and scaled once.  With the scales of most data
 * every group folds to the same exponents, so one run covers the call and
 * its epilogue (tiles stored, scaled, added to C) runs once per AMX_KCB
 * blocks.  A group whose rows do not fold is scaled block by block.
 */
UK_AMX static void amx_bf16(unsigned int kblocks, const uint32_t *a,
			    const float *ea, const uint32_t *b,
			    const float *eb, float *c, size_t ldc, bool add)
{
	float t[AMX_MR * AMX_NR] __attribute__((aligned(64)));
	unsigned int kb = 0, end, n, i;

	while (kb < kblocks) {
		const float *ra = ea + AMX_MR * kb, *rb = eb + AMX_NR * kb;

		n = kblocks - kb < AMX_FOLD ? kblocks - kb : AMX_FOLD;
		if (!same_exponents(ra, ra, n) || !same_exponents(rb, rb, n)) {
			for (end = kb + n; kb < end; kb++) {
				zero_acc();
				AMX_BLOCK(a, b, kb);
				store_acc(t);
				scale_out(t, ea + AMX_MR * kb, eb + AMX_NR * kb,
					  c, ldc, add || kb);
			}
			continue;
		}
		for (end = kb + n; end < kblocks; end += n) {
			n = kblocks - end < AMX_FOLD ? kblocks - end : AMX_FOLD;
			if (!same_exponents(ra, ea + AMX_MR * end, n) ||
			    !same_exponents(rb, eb + AMX_NR * end, n))
				break;
		}
		zero_acc();
		for (i = kb; i < end; i++)
			AMX_BLOCK(a, b, i);
		store_acc(t);
		scale_out(t, ra, rb, c, ldc, add || kb);
		kb = end;
	}
}

const struct cpu_ukernel cpu_uk_amx_bf16 = {
	.name = "amx-bf16",
	.insn = "AMX tdpbf16ps",
	.panel = CPU_PANEL_AMX_BF16,
	.mr = AMX_MR, .nr = AMX_NR, .mc = AMX_MC, .nc = AMX_NC,
	.kcb = AMX_KCB,
	.run = amx_bf16,
	.pack = cpu_amx_pack_bf16,
	.task_begin = amx_task_begin,
	.task_end = amx_task_end,
};
#endif
