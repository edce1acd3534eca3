// SPDX-License-Identifier: MIT
/*
 * MX element codes to microkernel panels through tables built once: bf16
 * values (exact for every element type) and, for e2m1 and e2m3, the
 * integers k of value k * 2^k_exp as bytes; for NVFP4, the bf16 value of
 * every e2m1 code times every UE4M3 scale.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "cpu_pack.h"

static uint16_t bf16_of[MXCORE_ELEM_LAST + 1][256];
static int8_t k_of[MXCORE_ELEM_LAST + 1][256];
/* e2m1, one byte = two codes: both bf16 values, both k (A and B side). */
static uint32_t fp4_bf16[256];
static uint16_t fp4_k[2][256];
static int8_t fp4_ksum[256];
/*
 * NVFP4: the bf16 bits of e2m1 code c times UE4M3 scale s, [s][c].  The
 * product has at most 6 significant bits (e2m1's odd part 1 or 3 times
 * a 4-bit significand) and lies in 2^-10 .. 2688 in magnitude: an exact
 * bf16 normal, or zero.  NaN scales (0x7f, 0xff) give 0; the framework
 * writes NaN to their rows.
 */
static uint16_t fold_of[256][16];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void)
{
	unsigned int e, c;

	for (e = MXCORE_ELEM_FIRST; e <= MXCORE_ELEM_LAST; e++) {
		const struct mxcore_format *f = mxcore_format(e);

		/* All 256 bytes: decoding ignores bits above the code. */
		for (c = 0; c < 256; c++) {
			int64_t k;
			unsigned int sp = mxcore_decode(e, (uint8_t)c, &k);
			float v = ldexpf((float)k, f->k_exp);
			uint32_t bits;

			memcpy(&bits, &v, 4);
			if (sp & MXCORE_NAN)
				bits = 0x7fc00000;
			else if (sp)
				bits = sp & MXCORE_NINF ? 0xff800000 : 0x7f800000;
			/* At most 4 significant bits: exact in bf16. */
			bf16_of[e][c] = (uint16_t)(bits >> 16);
			k_of[e][c] = (int8_t)(k >= -128 && k <= 127 ? k : 0);
		}
	}
	for (c = 0; c < 256; c++) {
		const int8_t *k = k_of[MXCORE_E2M1];
		unsigned int lo = c & 0xf, hi = c >> 4;

		fp4_bf16[c] = bf16_of[MXCORE_E2M1][lo] |
			      (uint32_t)bf16_of[MXCORE_E2M1][hi] << 16;
		fp4_k[0][c] = (uint8_t)k[lo] | (uint16_t)((uint8_t)k[hi] << 8);
		fp4_k[1][c] = (uint8_t)(k[lo] + CPU_I8_OFFSET) |
			      (uint16_t)((uint8_t)(k[hi] + CPU_I8_OFFSET) << 8);
		fp4_ksum[c] = (int8_t)(k[lo] + k[hi]);
	}
	for (c = 0; c < 256; c++) {
		uint32_t sbits = mxcore_e4m3_to_f32((uint8_t)c), x;
		float sv;

		if ((c & 0x7f) == 0x7f)
			continue;	/* NaN scale: zeros */
		memcpy(&sv, &sbits, 4);
		for (x = 0; x < 16; x++) {
			uint32_t vbits = (uint32_t)bf16_of[MXCORE_E2M1][x] << 16;
			float v;

			memcpy(&v, &vbits, 4);
			v *= sv;
			memcpy(&vbits, &v, 4);
			fold_of[c][x] = (uint16_t)(vbits >> 16);
		}
	}
}

double cpu_pack_tensor_scale(const struct mxa_matrix *m, int *exp)
{
	float t = m->scale_type == MXA_SCALE_UE4M3 ? m->tensor_scale : 0.0f;

	*exp = 0;
	if (t == 0.0f)
		return 1.0;
	*exp = ilogbf(t);
	return ldexp((double)t, -*exp);
}

const uint16_t *cpu_pack_bf16_values(enum mxcore_elem elem)
{
	pthread_once(&tables_once, build_tables);
	return bf16_of[elem];
}

static void pack_pad_row(enum cpu_panel fmt, unsigned int r, unsigned int w,
			 unsigned int kblocks, unsigned int mw,
			 uint32_t *words, float *meta)
{
	unsigned int words_pb = CPU_PANEL_WORDS(fmt), kb, p, x;

	for (kb = 0; kb < kblocks; kb++) {
		for (p = 0; p < words_pb; p++)
			words[((size_t)kb * words_pb + p) * w + r] = 0;
		for (x = 0; x < mw; x++)
			meta[((size_t)kb * mw + x) * w + r] = 0.0f;
	}
}

/* One block of one row: 32 codes to 16 words of bf16 pairs. */
static void pack_bf16_block(enum mxcore_elem elem, const uint8_t *codes,
			    uint32_t *out, unsigned int w)
{
	const uint16_t *tab = bf16_of[elem];
	unsigned int p;

	if (elem == MXCORE_E2M1) {
		for (p = 0; p < 16; p++)
			out[p * w] = fp4_bf16[codes[p]];
		return;
	}
	for (p = 0; p < 16; p++)
		out[p * w] = tab[codes[2 * p]] |
			     (uint32_t)tab[codes[2 * p + 1]] << 16;
}

/*
 * 32 codes to 8 words of int8 quads; returns the sum of k (A's correction;
 * 0 on the B side, which does not need it).
 */
static int pack_i8_block(enum mxcore_elem elem, const uint8_t *codes,
			 uint32_t *out, unsigned int w, bool b_side)
{
	const int8_t *tab = k_of[elem];
	uint8_t off = b_side ? CPU_I8_OFFSET : 0;
	unsigned int q, i;
	int sum = 0;

	if (elem == MXCORE_E2M1) {
		const uint16_t *pair = fp4_k[b_side];

		for (q = 0; q < 8; q++) {
			out[q * w] = pair[codes[2 * q]] |
				     (uint32_t)pair[codes[2 * q + 1]] << 16;
			if (!b_side)
				sum += fp4_ksum[codes[2 * q]] +
				       fp4_ksum[codes[2 * q + 1]];
		}
		return sum;
	}
	for (q = 0; q < 8; q++) {
		uint32_t word = 0;

		for (i = 0; i < 4; i++) {
			unsigned int k = q * 4 + i;
			uint8_t c = codes[k];

			sum += tab[c];
			word |= (uint32_t)(uint8_t)(tab[c] + off) << (8 * i);
		}
		out[q * w] = word;
	}
	return sum;
}

/* UE4M3 rows to bf16 panels, scales folded (cpu_pack.h). */
static void pack_ue4m3(const struct mxa_matrix *m, uint32_t row0,
		       unsigned int w, uint32_t kb0, unsigned int kblocks,
		       uint32_t *words, float *meta, uint8_t *nan_rows)
{
	uint32_t nb = m->cols / MXCORE_NVFP4_BLOCK;
	unsigned int r, kb, h, p;
	int texp;

	cpu_pack_tensor_scale(m, &texp);
	for (r = 0; r < w; r++) {
		uint32_t row = row0 + r;
		const uint8_t *data;

		if (row >= m->rows) {
			pack_pad_row(CPU_PANEL_BF16, r, w, kblocks, 1, words,
				     meta);
			continue;
		}
		data = cpu_data(m) + (size_t)row * mxa__data_stride(m);
		for (kb = 0; kb < kblocks; kb++) {
			uint32_t *out = words + (size_t)kb * 16 * w + r;

			/* Half h: K 16h .. 16h + 15, words 8h .. 8h + 7. */
			for (h = 0; h < 2; h++) {
				uint32_t blk = 2 * (kb0 + kb) + h;
				const uint8_t *codes = data + (size_t)blk * 8;
				const uint16_t *tab;
				uint8_t s;

				if (blk >= nb) {
					for (p = 0; p < 8; p++)
						out[(8 * h + p) * w] = 0;
					continue;
				}
				s = cpu_scales(m)[mxa__scale_index(m, row, blk)];
				if ((s & 0x7f) == 0x7f)
					nan_rows[r] = 1;
				tab = fold_of[s];
				for (p = 0; p < 8; p++)
					out[(8 * h + p) * w] =
						tab[codes[p] & 0xf] |
						(uint32_t)tab[codes[p] >> 4] << 16;
			}
			meta[(size_t)kb * w + r] = (float)texp;
		}
	}
}

void cpu_pack_panel(const struct mxa_matrix *m, enum cpu_panel fmt,
		    bool b_side, uint32_t row0, unsigned int w, uint32_t kb0,
		    unsigned int kblocks, uint32_t *words, float *meta,
		    uint8_t *nan_rows)
{
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	size_t bbytes = mxcore_row_bytes(elem, MXCORE_BLOCK);
	unsigned int words_pb = CPU_PANEL_WORDS(fmt);
	unsigned int mw = cpu_meta_per_row(fmt, b_side);
	int k_exp = fmt == CPU_PANEL_I8 ? mxcore_format(elem)->k_exp : 0;
	unsigned int r, kb;

	pthread_once(&tables_once, build_tables);
	if (m->scale_type == MXA_SCALE_UE4M3) {
		pack_ue4m3(m, row0, w, kb0, kblocks, words, meta, nan_rows);
		return;
	}
	for (r = 0; r < w; r++) {
		uint32_t row = row0 + r;
		const uint8_t *data;

		if (row >= m->rows) {
			pack_pad_row(fmt, r, w, kblocks, mw, words, meta);
			continue;
		}
		data = cpu_data(m) + (size_t)row * mxa__data_stride(m);
		for (kb = 0; kb < kblocks; kb++) {
			uint32_t blk = kb0 + kb;
			uint8_t s = cpu_scales(m)[mxa__scale_index(m, row, blk)];
			uint32_t *out = words + (size_t)kb * words_pb * w + r;
			float *mo = meta + (size_t)kb * mw * w + r;
			const uint8_t *codes = data + blk * bbytes;

			if (s == MXCORE_SCALE_NAN)
				nan_rows[r] = 1;
			mo[0] = s == MXCORE_SCALE_NAN ? 0.0f :
				(float)((int)s - 127 + k_exp);
			if (fmt == CPU_PANEL_BF16) {
				pack_bf16_block(elem, codes, out, w);
			} else {
				int sum = pack_i8_block(elem, codes, out, w,
							b_side);

				if (mw == 2)
					mo[w] = (float)(-CPU_I8_OFFSET * sum);
			}
		}
	}
}
