/* SPDX-License-Identifier: MIT */
/*
 * MX codes to bf16 in AVX-512 registers, shared by the AMX packer
 * (amx_pack.c) and the decode kernels on tiles of 16 rows
 * (kernels/decode_tiles.h): a block's 32
 * codes become one zmm of bf16 words in K order by table lookups
 * (vpermw / vpermt2w), and a scale exponent is folded in by an exact
 * integer add on the exponent field.
 */
#ifndef MXA_AMX_CODES_H
#define MXA_AMX_CODES_H

#include "../../cpu_pack.h"
#include "amx.h"

/*
 * AVX-512 alone: these inline into the AMX files and into the AVX512_BF16
 * decode kernel (kernels/avx512/uk_decode_tiles.c) alike.
 */
#define AMX_CODES __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* The bf16 values of an element type's codes, in registers. */
struct amx_lut {
	enum mxcore_elem elem;
	__m512i t[4];		/* codes 0..127 (low 7 bits), 32 per zmm */
};

AMX_CODES static inline void lut_load(struct amx_lut *l, enum mxcore_elem elem)
{
	const uint16_t *tab = cpu_pack_bf16_values(elem);
	unsigned int i;

	l->elem = elem;
	for (i = 0; i < 4; i++)
		l->t[i] = _mm512_loadu_si512(tab + 32 * i);
}

/* One block: 32 codes to 16 words, element 2p low and 2p + 1 high. */
AMX_CODES static inline __m512i block_bf16(const struct amx_lut *l,
					const uint8_t *codes)
{
	__m512i x, lo, hi;

	switch (l->elem) {
	case MXCORE_E2M1: {
		/* Byte i holds elements 2i (low nibble) and 2i + 1. */
		__m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)codes));
		__m512i idx = _mm512_or_si512(
			_mm512_and_si512(b, _mm512_set1_epi32(0xf)),
			_mm512_slli_epi32(_mm512_srli_epi32(b, 4), 16));

		return _mm512_permutexvar_epi16(idx, l->t[0]);
	}
	case MXCORE_E2M3:
	case MXCORE_E3M2:
		/* 6-bit codes: vpermt2w reads the low 6 bits of each index. */
		x = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const void *)codes));
		return _mm512_permutex2var_epi16(l->t[0], x, l->t[1]);
	default:
		/* 8-bit codes: bit 7 is the sign, the low 7 bits the table. */
		x = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const void *)codes));
		lo = _mm512_permutex2var_epi16(l->t[0], x, l->t[1]);
		hi = _mm512_permutex2var_epi16(l->t[2], x, l->t[3]);
		lo = _mm512_mask_blend_epi16(
			_mm512_test_epi16_mask(x, _mm512_set1_epi16(0x40)), lo,
			hi);
		return _mm512_or_si512(lo, _mm512_slli_epi16(
			_mm512_and_si512(x, _mm512_set1_epi16(0x80)), 8));
	}
}

/*
 * v * 2^d on finite nonzero bf16 words; the caller keeps the results
 * bf16 normals (the packer: d <= 0 on values >= 2^-16; the decode kernel:
 * rows whose scales allow it).
 */
AMX_CODES static inline __m512i fold(__m512i v, int d)
{
	__m512i ex = _mm512_and_si512(v, _mm512_set1_epi16(0x7f80));
	__mmask32 finite = _mm512_test_epi16_mask(ex, ex) &
			   _mm512_cmpneq_epi16_mask(ex, _mm512_set1_epi16(0x7f80));

	return _mm512_mask_add_epi16(v, finite, v,
				     _mm512_set1_epi16((short)(d * 128)));
}

#endif /* MXA_AMX_CODES_H */
