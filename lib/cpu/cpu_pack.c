// SPDX-License-Identifier: MIT
/*
 * MX element codes to microkernel panels through tables built once: bf16
 * values (exact for every element type) and, for e2m1 and e2m3, the
 * integers k of value k * 2^k_exp as bytes.
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
