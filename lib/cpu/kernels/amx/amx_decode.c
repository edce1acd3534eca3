// SPDX-License-Identifier: MIT
/*
 * The decode GEMM's bf16 path on AMX (contract in cpu_decode.h): the tile
 * walk of kernels/decode_tiles.h with AMX's tile multiply, TDPBF16PS on a
 * decoded tile of 16 B rows and A's tiles (16 pairs x up to 16 rows of A),
 * the accumulators in tile registers.
 *
 * Tiles: see "Tile roles" below; they rotate so that no tile instruction
 * waits on the previous block's.
 */
#if defined(__x86_64__)
/* The test's build on the C model: its own names beside the library's. */
#ifdef MXA_AMX_EMULATE
#define cpu_decode_amx cpu_decode_amx_emul
#define cpu_decode_amx_put_a cpu_decode_amx_put_a_emul
#define cpu_decode_amx_a_words cpu_decode_amx_a_words_emul
#define cpu_decode_amx_config cpu_decode_amx_config_emul
#endif

#include "amx.h"

#define DA_INLINE __attribute__((target(UK_AMX_ISA), always_inline))
#define TD_INLINE DA_INLINE

/* The accumulators are tile registers: nothing to carry. */
struct td_state {
	char unused;
};

#include "../decode_tiles.h"

size_t cpu_decode_amx_a_words(unsigned int m, uint32_t k)
{
	return (size_t)((k + 31) / 32) * a_tiles(m) * 16 * a_cols(m);
}

void cpu_decode_amx_put_a(uint32_t *tiles, unsigned int m, uint32_t k,
			  unsigned int i, const float *row)
{
	unsigned int mt = a_tiles(m), nc = a_cols(m);
	uint32_t q, lo, hi;

	for (q = 0; q < k / 2; q++) {
		size_t at = ((size_t)(q / 16 * mt + i / 16) * 16 + q % 16) *
			    nc + i % 16;

		memcpy(&lo, &row[2 * q], 4);
		memcpy(&hi, &row[2 * q + 1], 4);
		tiles[at] = lo >> 16 | (hi & 0xffff0000u);
	}
}

void cpu_decode_amx_config(void *cfg, unsigned int m)
{
	struct amx_tilecfg c;
	unsigned int t;

	memset(&c, 0, sizeof(c));
	c.palette = 1;
	/* Only one tile of A's rows can be narrow: B is tmm2, 4, 6 then. */
	for (t = 0; t < 8; t++) {
		c.rows[t] = 16;
		c.colsb[t] = (uint16_t)(t == 2 || t == 4 || t == 6 ? 64 :
					4 * a_cols(m));
	}
	memcpy(cfg, &c, sizeof(c));
}

/*
 * Tile roles.  AMX tile registers are not renamed: a load into a tile
 * waits until the multiply reading its old contents is done, and a
 * multiply into an accumulator waits for the previous one.  So the roles
 * rotate: with one tile of A's rows (m <= 16) two accumulators take
 * blocks in turn and three (B, A) pairs take blocks in turn (tmm2/3,
 * tmm4/5, tmm6/7); with two tiles of A each has its accumulator and two
 * sets (B, A0, A1) alternate (tmm2-4, tmm5-7); with three, B alternates
 * between tmm3 and tmm7 beside A's tmm4-6; with four, B is tmm4 and A's
 * tiles share tmm5-7.  bu is the block's index modulo 6.
 */
DA_INLINE static inline void tload(unsigned int t, const void *p,
				   size_t stride)
{
	switch (t) {
	case 0:
		_tile_loadd(0, p, stride);
		break;
	case 1:
		_tile_loadd(1, p, stride);
		break;
	case 2:
		_tile_loadd(2, p, stride);
		break;
	case 3:
		_tile_loadd(3, p, stride);
		break;
	case 4:
		_tile_loadd(4, p, stride);
		break;
	case 5:
		_tile_loadd(5, p, stride);
		break;
	case 6:
		_tile_loadd(6, p, stride);
		break;
	default:
		_tile_loadd(7, p, stride);
		break;
	}
}

#define DA_TRIPLE(c, b, a) ((c) * 64 + (b) * 8 + (a))

/* Exactly the (accumulator, B, A) triples of the roles above. */
DA_INLINE static inline void dp(unsigned int c, unsigned int b,
				unsigned int a)
{
	unsigned int k = DA_TRIPLE(c, b, a);

	if (k == DA_TRIPLE(0, 2, 3))
		_tile_dpbf16ps(0, 2, 3);
	else if (k == DA_TRIPLE(1, 2, 3))
		_tile_dpbf16ps(1, 2, 3);
	else if (k == DA_TRIPLE(0, 4, 5))
		_tile_dpbf16ps(0, 4, 5);
	else if (k == DA_TRIPLE(1, 4, 5))
		_tile_dpbf16ps(1, 4, 5);
	else if (k == DA_TRIPLE(0, 6, 7))
		_tile_dpbf16ps(0, 6, 7);
	else if (k == DA_TRIPLE(1, 6, 7))
		_tile_dpbf16ps(1, 6, 7);
	else if (k == DA_TRIPLE(0, 5, 6))
		_tile_dpbf16ps(0, 5, 6);
	else if (k == DA_TRIPLE(1, 2, 4))
		_tile_dpbf16ps(1, 2, 4);
	else if (k == DA_TRIPLE(1, 5, 7))
		_tile_dpbf16ps(1, 5, 7);
	else if (k == DA_TRIPLE(0, 3, 4))
		_tile_dpbf16ps(0, 3, 4);
	else if (k == DA_TRIPLE(1, 3, 5))
		_tile_dpbf16ps(1, 3, 5);
	else if (k == DA_TRIPLE(2, 3, 6))
		_tile_dpbf16ps(2, 3, 6);
	else if (k == DA_TRIPLE(0, 7, 4))
		_tile_dpbf16ps(0, 7, 4);
	else if (k == DA_TRIPLE(1, 7, 5))
		_tile_dpbf16ps(1, 7, 5);
	else if (k == DA_TRIPLE(2, 7, 6))
		_tile_dpbf16ps(2, 7, 6);
	else if (k == DA_TRIPLE(1, 4, 6))
		_tile_dpbf16ps(1, 4, 6);
	else if (k == DA_TRIPLE(2, 4, 7))
		_tile_dpbf16ps(2, 4, 7);
	else if (k == DA_TRIPLE(3, 4, 5))
		_tile_dpbf16ps(3, 4, 5);
	else
		__builtin_unreachable();
}

DA_INLINE static inline void acc_zero(unsigned int c)
{
	switch (c) {
	case 0:
		_tile_zero(0);
		break;
	case 1:
		_tile_zero(1);
		break;
	case 2:
		_tile_zero(2);
		break;
	default:
		_tile_zero(3);
		break;
	}
}

DA_INLINE static inline void acc_store(unsigned int c, float *p)
{
	switch (c) {
	case 0:
		_tile_stored(0, p, 64);
		break;
	case 1:
		_tile_stored(1, p, 64);
		break;
	case 2:
		_tile_stored(2, p, 64);
		break;
	default:
		_tile_stored(3, p, 64);
		break;
	}
}

/* Accumulators per tile of A's rows: two in turn for one tile. */
DA_INLINE static inline unsigned int td_parts(unsigned int mt)
{
	return mt == 1 ? 2 : 1;
}

/* The decoded tile bt (block b, bu = b % 6) against A's tiles at. */
DA_INLINE static inline void multiply(const uint16_t *bt, const uint32_t *at,
				      unsigned int mt, unsigned int nc,
				      unsigned int bu)
{
	size_t as = 4 * nc, at_step = (size_t)16 * nc;
	unsigned int b, t;

	switch (mt) {
	case 1:
		b = 2 + 2 * (bu % 3);
		tload(b, bt, 64);
		tload(b + 1, at, as);
		dp(bu % 2, b, b + 1);
		break;
	case 2:
		b = 2 + 3 * (bu % 2);
		tload(b, bt, 64);
		tload(b + 1, at, as);
		dp(0, b, b + 1);
		tload(b + 2, at + at_step, as);
		dp(1, b, b + 2);
		break;
	case 3:
		b = bu % 2 ? 7 : 3;
		tload(b, bt, 64);
		#pragma GCC unroll 3
		for (t = 0; t < 3; t++) {
			tload(4 + t, at + t * at_step, as);
			dp(t, b, 4 + t);
		}
		break;
	default:
		tload(4, bt, 64);
		#pragma GCC unroll 4
		for (t = 0; t < 4; t++) {
			tload(5 + t % 3, at + t * at_step, as);
			dp(t, 4, 5 + t % 3);
		}
		break;
	}
}

DA_INLINE static inline void td_begin(struct td_state *st,
				      float (*acc)[16][16], unsigned int mt,
				      bool first)
{
	unsigned int p;

	(void)st;
	for (p = 0; p < mt * td_parts(mt); p++) {
		if (first)
			acc_zero(p);
		else
			tload(p, acc[p], 64);
	}
}

DA_INLINE static inline void td_end(struct td_state *st,
				    float (*acc)[16][16], unsigned int mt)
{
	unsigned int p;

	(void)st;
	for (p = 0; p < mt * td_parts(mt); p++)
		acc_store(p, &acc[p][0][0]);
}

DA_INLINE static inline void td_multiply(struct td_state *st,
					 const uint16_t *bt,
					 const uint32_t *at, unsigned int mt,
					 unsigned int nc, uint32_t b)
{
	(void)st;
	switch (b % 6) {
	case 0:
		multiply(bt, at, mt, nc, 0);
		break;
	case 1:
		multiply(bt, at, mt, nc, 1);
		break;
	case 2:
		multiply(bt, at, mt, nc, 2);
		break;
	case 3:
		multiply(bt, at, mt, nc, 3);
		break;
	case 4:
		multiply(bt, at, mt, nc, 4);
		break;
	default:
		multiply(bt, at, mt, nc, 5);
		break;
	}
}

UK_AMX void cpu_decode_amx(const struct cpu_decode_amx_args *d,
			   const uint8_t *codes, size_t dstride,
			   const uint8_t *scales, size_t sstride,
			   unsigned int rows, float *out, size_t ldo)
{
	struct rows_view v;

	rows_view_init(&v, d, codes, dstride, scales, sstride, rows);
	amx_load_tilecfg(d->cfg);
	switch (a_tiles(d->m)) {
	case 1:
		run(d, &v, 1, rows, out, ldo);
		break;
	case 2:
		run(d, &v, 2, rows, out, ldo);
		break;
	case 3:
		run(d, &v, 3, rows, out, ldo);
		break;
	default:
		run(d, &v, 4, rows, out, ldo);
		break;
	}
	_tile_release();
}
#endif
