/* SPDX-License-Identifier: MIT */
/*
 * The decode GEMM's bf16 path on groups of 16 rows of B (contract in
 * cpu_decode.h), shared by its two forms: AMX tiles (amx/amx_decode.c)
 * and AVX512_BF16 registers (avx512/uk_decode_tiles.c).  A task's rows of
 * B in groups of 16, against every row of A at once; K in chunks whose
 * part of A stays in L1, each chunk for every group in turn.
 *
 * B: block by block, each of the 16 rows' 32 codes become one zmm of bf16
 * words with the block's scale folded in, stored as one 64-byte row of a
 * tile in a small ring; DA_LAG blocks later the tile is multiplied, so
 * the stores have left the store buffer by then.  For e2m1 with E8M0
 * scales (MXFP4, the weight format this path exists for) the scale goes
 * into the 16-entry value table (one masked vpaddw on the exponent fields
 * of the nonzero entries, its operand broadcast from memory) and one
 * vpermw on the nibbles gives the scaled block; other element types take
 * amx_codes.h's table lookups and exponent fold; UE4M3 scales (NVFP4)
 * multiply in fp32, which is exact (e2m1 times e4m3 has 6 significant
 * bits).  While one piece (a group's chunk) is decoded the next piece is
 * read into L2 row by row (read_ahead()): the kernel reads 16 rows at a
 * time, 16 bytes from each in turn, which the hardware prefetchers follow
 * poorly (a third of the rate of the same bytes read in order on Zen 5;
 * Documentation/bench-cpu.rst).
 *
 * A: up to 64 rows, bf16 pairs in AMX's interleaved layout, 16 pairs x
 * min(m, 16) rows per tile (cpu_decode_amx_put_a()), so that one row of
 * A (decode of one token) loads 64 bytes per block, not a kilobyte.
 *
 * The includer defines TD_INLINE (its target attribute, always_inline)
 * and struct td_state (its accumulators), includes this, then defines the
 * hooks declared below: what multiplies a decoded tile by A's tiles, and
 * where the accumulators live between chunks of K.
 */
#ifndef MXA_DECODE_TILES_H
#define MXA_DECODE_TILES_H

#include "../cpu_decode.h"
#include "amx/amx_codes.h"

#define DA_RING 4		/* decoded tiles of B in the ring */
#define DA_LAG 2		/* blocks from decoding a tile to using it */
#define DA_L1_A 24576		/* bytes of A's tiles per chunk of K */

static inline unsigned int a_tiles(unsigned int m)
{
	return (m + 15) / 16;
}

static inline unsigned int a_cols(unsigned int m)
{
	return m < 16 ? m : 16;
}

/* One group of up to 16 rows of B, and where the next piece lies. */
struct rows_view {
	const uint8_t *codes, *scales;
	size_t dstride, sstride;
	unsigned int rows;
	/* The next piece (rows x bytes from each row's ahead + r * dstride). */
	const char *ahead;
	unsigned int ahead_lines, ahead_row_lines;	/* in all, per row */
	/* read_ahead()'s walk: next line (row, column), and its error term. */
	unsigned int pf_row, pf_col, pf_err, pf_steps;
	bool fast;		/* e2m1, E8M0, no NaN scale */
	__m512i lut2;		/* e2m1 values, twice (fast path) */
	/* Fast path: (s - 127) * 128 in both words, 16 blocks of each row. */
	uint32_t adds[16][16] __attribute__((aligned(64)));
	struct amx_lut lut;	/* generic path */
	uint32_t kb0;		/* the piece's first block */
};

/*
 * The next piece's bytes into L2, row by row, spread evenly over this
 * piece's pf_steps blocks (one call per block): streaming B from memory
 * overlaps decoding it from L2.  The lines are walked incrementally, with
 * no division per line.
 */
TD_INLINE static inline void read_ahead(struct rows_view *v)
{
	v->pf_err += v->ahead_lines;
	while (v->pf_err >= v->pf_steps) {
		v->pf_err -= v->pf_steps;
		_mm_prefetch(v->ahead + v->pf_row * v->dstride + 64 * v->pf_col,
			     _MM_HINT_T1);
		if (++v->pf_col == v->ahead_row_lines) {
			v->pf_col = 0;
			v->pf_row++;
		}
	}
}

/*
 * The fast path's exponent adds for blocks [kb, kb + 16) of every row,
 * from 16 scale bytes at a time: what a broadcast from memory then feeds
 * to the table's masked add, sparing a broadcast from a general register
 * (port 5, which the lookups need) per row and block.
 */
TD_INLINE static inline void scale_adds(struct rows_view *v, uint32_t kb,
					uint32_t nb)
{
	__mmask16 live = nb - kb >= 16 ? 0xffff :
			 (__mmask16)((1u << (nb - kb)) - 1);
	unsigned int r;

	for (r = 0; r < v->rows; r++) {
		__m512i s = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(live,
				v->scales + r * v->sstride + kb));

		s = _mm512_and_si512(_mm512_slli_epi32(_mm512_sub_epi32(s,
				_mm512_set1_epi32(127)), 7),
				_mm512_set1_epi32(0xffff));
		_mm512_store_si512(v->adds[r], _mm512_or_si512(s,
				   _mm512_slli_epi32(s, 16)));
	}
}

/* Block kb of B's rows into one ring tile (rows past the view stay 0). */
TD_INLINE static inline void decode_block(const struct cpu_decode_amx_args *d,
					  struct rows_view *v, uint32_t kb,
					  uint32_t nb, uint16_t *tile)
{
	unsigned int r;

	if (v->fast) {
		/* Entries 0, 8, 16, 24 are +-0: no exponent to move. */
		const __mmask32 nonzero = 0xfefefefe;

		if (!((kb - v->kb0) % 16))
			scale_adds(v, kb, nb);

		#pragma GCC unroll 16
		for (r = 0; r < 16; r++) {
			const uint8_t *c = v->codes + r * v->dstride + kb * 16;
			__m512i x, t;

			if (r >= v->rows)
				break;
			t = _mm512_mask_add_epi16(v->lut2, nonzero, v->lut2,
				_mm512_set1_epi32((int)v->adds[r][(kb - v->kb0) % 16]));
			/*
			 * Byte j to dword j, then its high nibble to the upper
			 * word: vpermw reads the low 5 bits of each word, and
			 * the table repeats after 16, so the low word's stray
			 * bits 4-7 and 12-15 select the same value.
			 */
			x = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)c));
			x = _mm512_or_si512(x, _mm512_slli_epi32(x, 12));
			_mm512_store_si512(tile + 32 * r,
					   _mm512_permutexvar_epi16(x, t));
		}
		return;
	}
	for (r = 0; r < v->rows; r++) {
		const uint8_t *c = v->codes + r * v->dstride;
		const uint8_t *s = v->scales + r * v->sstride;
		__m512i x;

		if (d->ue4m3) {
			/* NVFP4: two blocks of 16, the second maybe past K. */
			uint8_t half[32] = { 0 };
			bool whole = (kb + 1) * 32 <= d->k;
			__m512 s0 = _mm512_set1_ps(d->table[s[2 * kb]]);
			__m512 s1 = _mm512_set1_ps(whole ? d->table[s[2 * kb + 1]] : 0.0f);
			__m512i lo, hi, odd;

			if (!whole) {
				memcpy(half, c + kb * 16, 8);
				x = block_bf16(&v->lut, half);
			} else {
				x = block_bf16(&v->lut, c + kb * 16);
			}
			lo = _mm512_slli_epi32(_mm512_cvtepu16_epi32(
				_mm512_castsi512_si256(x)), 16);
			hi = _mm512_slli_epi32(_mm512_cvtepu16_epi32(
				_mm512_extracti64x4_epi64(x, 1)), 16);
			lo = _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(lo), s0));
			hi = _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(hi), s1));
			/* The products' top halves (their low halves are 0). */
			odd = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49,
					       47, 45, 43, 41, 39, 37, 35, 33,
					       31, 29, 27, 25, 23, 21, 19, 17,
					       15, 13, 11, 9, 7, 5, 3, 1);
			x = _mm512_permutex2var_epi16(lo, odd, hi);
		} else if (s[kb] == MXCORE_SCALE_NAN) {
			x = _mm512_set1_epi16(0x7fc0);
		} else {
			x = fold(block_bf16(&v->lut, c + (size_t)kb *
					    mxcore_row_bytes(d->elem, 32)),
				 (int)s[kb] - 127);
		}
		_mm512_store_si512(tile + 32 * r, x);
	}
}

/* Rows of group g (16, or fewer in the last) of a call's rows. */
static inline unsigned int group_rows(unsigned int rows, unsigned int g)
{
	return rows - 16 * g < 16 ? rows - 16 * g : 16;
}

/* The call's rows of B, with the fast path's table or the generic one's. */
TD_INLINE static inline void rows_view_init(struct rows_view *v,
					    const struct cpu_decode_amx_args *d,
					    const uint8_t *codes, size_t dstride,
					    const uint8_t *scales, size_t sstride,
					    unsigned int rows)
{
	static const uint16_t e2m1_bf16[16] = {
		0x0000, 0x3f00, 0x3f80, 0x3fc0, 0x4000, 0x4040, 0x4080, 0x40c0,
		0x8000, 0xbf00, 0xbf80, 0xbfc0, 0xc000, 0xc040, 0xc080, 0xc0c0,
	};
	uint32_t nb = (d->k + 31) / 32;
	unsigned int r;

	memset(v, 0, sizeof(*v));
	v->codes = codes;
	v->scales = scales;
	v->dstride = dstride;
	v->sstride = sstride;
	v->fast = d->elem == MXCORE_E2M1 && !d->ue4m3;
	for (r = 0; v->fast && r < rows; r++)
		v->fast = !memchr(v->scales + r * v->sstride, MXCORE_SCALE_NAN, nb);
	if (v->fast) {
		__m256i h = _mm256_loadu_si256((const void *)e2m1_bf16);

		v->lut2 = _mm512_inserti64x4(_mm512_castsi256_si512(h), h, 1);
	} else {
		lut_load(&v->lut, d->elem);
	}
}

/*
 * The hooks.  Accumulators per tile of A's rows (their sum is the
 * result); the accumulators of a group, zeroed (first) or loaded from
 * acc, and stored back to acc after its piece; block b's decoded tile bt
 * times A's tiles at (mt of them, nc rows of A each).  acc[p][r][j]: part
 * p, B row r, A row j (of tile p / td_parts()).
 */
TD_INLINE static inline unsigned int td_parts(unsigned int mt);
TD_INLINE static inline void td_begin(struct td_state *st,
				      float (*acc)[16][16], unsigned int mt,
				      bool first);
TD_INLINE static inline void td_multiply(struct td_state *st,
					 const uint16_t *bt,
					 const uint32_t *at, unsigned int mt,
					 unsigned int nc, uint32_t b);
TD_INLINE static inline void td_end(struct td_state *st,
				    float (*acc)[16][16], unsigned int mt);

/* Blocks [kb0, kb1) of one group into its accumulators (already set). */
TD_INLINE static inline void piece(const struct cpu_decode_amx_args *d,
				   struct rows_view *v, struct td_state *st,
				   unsigned int mt, uint32_t kb0, uint32_t kb1,
				   uint32_t nb, uint16_t (*ring)[16 * 32])
{
	unsigned int nc = a_cols(d->m);
	size_t a_block = (size_t)mt * 16 * nc;
	uint32_t kb, b;

	v->kb0 = kb0;
	v->pf_row = 0;
	v->pf_col = 0;
	v->pf_err = 0;
	v->pf_steps = kb1 - kb0;
	for (kb = kb0; kb < kb1 + DA_LAG; kb++) {
		if (kb < kb1) {
			decode_block(d, v, kb, nb, ring[kb % DA_RING]);
			read_ahead(v);
		}
		if (kb < kb0 + DA_LAG)
			continue;
		b = kb - DA_LAG;
		td_multiply(st, ring[b % DA_RING], d->a + b * a_block, mt, nc, b);
	}
}

/*
 * K in chunks whose part of A stays in L1, and for each chunk every group
 * of 16 rows in turn, its accumulators kept in acc between chunks: A's
 * tiles come from L1 once per group, where a pass over all of K per group
 * would load them from L2 (128 KiB of A at 16 rows and K = 4096).
 */
TD_INLINE static inline void run(const struct cpu_decode_amx_args *d,
				 struct rows_view *v, unsigned int mt,
				 unsigned int rows, float *out, size_t ldo)
{
	uint16_t ring[DA_RING][16 * 32] __attribute__((aligned(64)));
	float acc[CPU_DECODE_AMX_MAX_ROWS / 16][4][16][16]
		__attribute__((aligned(64)));
	unsigned int np = td_parts(mt), groups = (rows + 15) / 16, g, p, i, r;
	uint32_t nb = (d->k + 31) / 32, kc, c, kb1;
	size_t row_bytes = d->elem == MXCORE_E2M1 ? 16 : 32;
	const uint8_t *codes = v->codes, *scales = v->scales;
	struct td_state st;

	/* Blocks per chunk: A's tiles for it in 24 KiB of L1. */
	kc = DA_L1_A / (a_tiles(d->m) * 16 * a_cols(d->m) * 4);
	kc = kc < 4 ? 4 : kc > nb ? nb : kc;
	memset(ring, 0, sizeof(ring));
	for (c = 0; c < nb; c += kc) {
		kb1 = c + kc < nb ? c + kc : nb;
		for (g = 0; g < groups; g++) {
			/* The next piece: the next group, or the first of the next chunk. */
			uint32_t nc0 = g + 1 < groups ? c : kb1;
			unsigned int ng = g + 1 < groups ? g + 1 : 0;
			uint32_t nkb = nc0 + kc < nb ? kc : nb - nc0;

			v->codes = codes + (size_t)16 * g * v->dstride;
			v->scales = scales + (size_t)16 * g * v->sstride;
			v->rows = group_rows(rows, g);
			v->ahead = (const char *)codes + (size_t)16 * ng * v->dstride +
				   nc0 * row_bytes;
			v->ahead_row_lines = (unsigned int)((nkb * row_bytes + 63) / 64);
			v->ahead_lines = nc0 < nb ? group_rows(rows, ng) *
						    v->ahead_row_lines : 0;
			td_begin(&st, acc[g], mt, !c);
			piece(d, v, &st, mt, c, kb1, nb, ring);
			td_end(&st, acc[g], mt);
		}
	}
	for (g = 0; g < groups; g++) {
		unsigned int n = group_rows(rows, g);

		for (i = 0; i < d->m; i++) {
			unsigned int t = i / 16, j = i % 16;

			for (r = 0; r < n; r++) {
				float s = acc[g][t * np][r][j];

				for (p = 1; p < np; p++)
					s += acc[g][t * np + p][r][j];
				out[i * ldo + 16 * g + r] = s;
			}
		}
	}
}

#endif /* MXA_DECODE_TILES_H */
