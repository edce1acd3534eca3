// SPDX-License-Identifier: MIT
/*
 * Packing MX rows into CPU_PANEL_AMX_BF16 panels (cpu_ukernel.h) with
 * AVX-512: a block's 32 codes become one zmm of bf16 pairs by table
 * lookups in registers (vpermw / vpermt2w), the group's scales are folded
 * into the bf16 exponents where AMX_FOLD_SPREAD allows (an exact integer
 * add on the exponent field), and B's tiles are transposed 16 x 16 words
 * into AMX's pair-interleaved layout.
 */
#if defined(__x86_64__)
#include "../../cpu_pack.h"
#include "amx.h"
#include "amx_codes.h"

/* out[p] = word p of every row: a 16 x 16 transpose of 32-bit words. */
UK_AMX static void transpose16(const __m512i in[16], uint32_t *out)
{
	__m512i t[16], u[16];
	unsigned int i, q;

	for (i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(in[i], in[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(in[i], in[i + 1]);
	}
	/* u[4g + q]: column 4L + q of rows 4g..4g + 3 in 128-bit lane L. */
	for (i = 0; i < 16; i += 4) {
		u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	for (q = 0; q < 4; q++) {
		__m512i x0 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0x88);
		__m512i x1 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0xdd);
		__m512i y0 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0x88);
		__m512i y1 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0xdd);

		_mm512_store_si512(out + 16 * q, _mm512_shuffle_i32x4(x0, y0, 0x88));
		_mm512_store_si512(out + 16 * (4 + q),
				   _mm512_shuffle_i32x4(x1, y1, 0x88));
		_mm512_store_si512(out + 16 * (8 + q),
				   _mm512_shuffle_i32x4(x0, y0, 0xdd));
		_mm512_store_si512(out + 16 * (12 + q),
				   _mm512_shuffle_i32x4(x1, y1, 0xdd));
	}
}

/*
 * Rows [row0, row0 + 16) x blocks [kb, kb + n) of m, n <= AMX_FOLD: each
 * row's block b to v[b * 16 + r], its exponent to e[b * w + r], folded
 * when the row's scales allow; nan_rows[r] set for a NaN scale.
 */
UK_AMX static void pack_group16(const struct mxa_matrix *m,
				const struct amx_lut *l, uint32_t row0,
				uint32_t kb, unsigned int n, unsigned int w,
				__m512i *v, float *e, uint8_t *nan_rows)
{
	size_t bbytes = mxcore_row_bytes(l->elem, MXCORE_BLOCK);
	unsigned int r, b;

	for (r = 0; r < 16; r++) {
		uint32_t row = row0 + r;
		const uint8_t *data;
		uint8_t s[AMX_FOLD];
		bool live[AMX_FOLD];
		int lo = 255, hi = 0;
		bool folded;

		if (row >= m->rows) {
			for (b = 0; b < n; b++) {
				v[b * 16 + r] = _mm512_setzero_si512();
				e[b * w + r] = 0.0f;
			}
			continue;
		}
		data = cpu_data(m) + (size_t)row * mxa__data_stride(m) +
		       (size_t)kb * bbytes;
		for (b = 0; b < n; b++) {
			__m512i x = block_bf16(l, data + b * bbytes);

			s[b] = cpu_scales(m)[mxa__scale_index(m, row, kb + b)];
			v[b * 16 + r] = x;
			live[b] = s[b] != MXCORE_SCALE_NAN &&
				  _mm512_test_epi16_mask(x, _mm512_set1_epi16(0x7fff));
			if (s[b] == MXCORE_SCALE_NAN)
				nan_rows[r] = 1;
			if (!live[b])
				continue;
			lo = s[b] < lo ? s[b] : lo;
			hi = s[b] > hi ? s[b] : hi;
		}
		/* No live block (lo > hi): all zero, one exponent will do. */
		folded = hi - lo <= AMX_FOLD_SPREAD;
		if (lo > hi)
			hi = 127;
		for (b = 0; b < n; b++) {
			if (!folded) {
				e[b * w + r] = s[b] == MXCORE_SCALE_NAN ? 0.0f :
					       (float)((int)s[b] - 127);
				continue;
			}
			if (live[b] && s[b] != hi)
				v[b * 16 + r] = fold(v[b * 16 + r],
						     (int)s[b] - hi);
			e[b * w + r] = (float)(hi - 127);
		}
	}
}

UK_AMX void cpu_amx_pack_bf16(const struct mxa_matrix *m, bool b_side,
			      uint32_t row0, unsigned int w, uint32_t kb0,
			      unsigned int kblocks, uint32_t *words,
			      float *meta, uint8_t *nan_rows)
{
	__m512i v[AMX_FOLD * 16];
	struct amx_lut l;
	unsigned int g, t, b, n, r;

	lut_load(&l, (enum mxcore_elem)m->elem);
	for (g = 0; g < kblocks; g += AMX_FOLD) {
		n = kblocks - g < AMX_FOLD ? kblocks - g : AMX_FOLD;
		for (t = 0; t < w / 16; t++) {
			pack_group16(m, &l, row0 + 16 * t, kb0 + g, n, w, v,
				     meta + (size_t)g * w + 16 * t,
				     nan_rows + 16 * t);
			for (b = 0; b < n; b++) {
				uint32_t *tile = words + (size_t)(g + b) * 16 * w +
						 t * AMX_TILE_WORDS;

				if (b_side) {
					transpose16(v + b * 16, tile);
					continue;
				}
				for (r = 0; r < 16; r++)
					_mm512_store_si512(tile + 16 * r,
							   v[b * 16 + r]);
			}
		}
	}
}
#endif
