/* SPDX-License-Identifier: MIT */
/*
 * A C model of the AMX instructions the kernels use, for testing their
 * data layouts on machines without AMX (tests/lib/test_amx_emul.c builds
 * the kernels with MXA_AMX_EMULATE defined; the library never does).
 *
 * The model follows the Intel SDM's pseudocode: eight tiles of up to 16
 * rows of 64 bytes shaped by the loaded configuration; loads and stores
 * move rows x colsb bytes; TDPBF16PS adds to each fp32 element of C, for
 * each K pair in order, the two products of bf16 values one at a time
 * (each product exact in fp32, each addition rounded to nearest even),
 * with bf16 inputs and fp32 results below 2^-126 read and written as
 * zero.  Shapes that the hardware would refuse (#UD) abort.  The hardware
 * may add the pair's products with fewer roundings; tests compare with a
 * bound that holds for either.
 */
#ifndef MXA_AMX_EMUL_H
#define MXA_AMX_EMUL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct amx_emul_state {
	uint8_t rows[8];
	uint16_t colsb[8];
	uint8_t t[8][16][64];
	int configured;
};

static __thread struct amx_emul_state amx_emul;

static inline void amx_emul_cfg(const void *cfg)
{
	const uint8_t *c = cfg;
	unsigned int i;

	if (c[0] != 1)
		abort();
	memset(&amx_emul, 0, sizeof(amx_emul));
	for (i = 0; i < 8; i++) {
		memcpy(&amx_emul.colsb[i], c + 16 + 2 * i, 2);
		amx_emul.rows[i] = c[48 + i];
		if (amx_emul.rows[i] > 16 || amx_emul.colsb[i] > 64 ||
		    amx_emul.colsb[i] % 4)
			abort();
	}
	amx_emul.configured = 1;
}

static inline void amx_emul_check(unsigned int t)
{
	if (!amx_emul.configured || t > 7 || !amx_emul.rows[t])
		abort();
}

static inline void amx_emul_loadd(unsigned int t, const void *base,
				  size_t stride)
{
	unsigned int r;

	amx_emul_check(t);
	memset(amx_emul.t[t], 0, sizeof(amx_emul.t[t]));
	for (r = 0; r < amx_emul.rows[t]; r++)
		memcpy(amx_emul.t[t][r], (const uint8_t *)base + r * stride,
		       amx_emul.colsb[t]);
}

static inline void amx_emul_stored(unsigned int t, void *base, size_t stride)
{
	unsigned int r;

	amx_emul_check(t);
	for (r = 0; r < amx_emul.rows[t]; r++)
		memcpy((uint8_t *)base + r * stride, amx_emul.t[t][r],
		       amx_emul.colsb[t]);
}

static inline void amx_emul_zero(unsigned int t)
{
	amx_emul_check(t);
	memset(amx_emul.t[t], 0, sizeof(amx_emul.t[t]));
}

/* A bf16 word as fp32, zero for subnormals (DAZ). */
static inline float amx_emul_bf16(const uint8_t *p)
{
	uint32_t w = (uint32_t)(p[0] | p[1] << 8) << 16;
	float f;

	if (!(w & 0x7f800000u))
		w &= 0x80000000u;
	memcpy(&f, &w, 4);
	return f;
}

static inline float amx_emul_ftz(float f)
{
	uint32_t w;

	memcpy(&w, &f, 4);
	if (!(w & 0x7f800000u))
		w &= 0x80000000u;
	memcpy(&f, &w, 4);
	return f;
}

static inline void amx_emul_dpbf16ps(unsigned int c, unsigned int a,
				     unsigned int b)
{
	unsigned int m, n, k, kn;

	amx_emul_check(c);
	amx_emul_check(a);
	amx_emul_check(b);
	kn = amx_emul.colsb[a] / 4;
	if (amx_emul.rows[c] != amx_emul.rows[a] || amx_emul.rows[b] != kn ||
	    amx_emul.colsb[c] != amx_emul.colsb[b])
		abort();
	for (m = 0; m < amx_emul.rows[c]; m++) {
		for (n = 0; n < amx_emul.colsb[c] / 4u; n++) {
			float acc;

			memcpy(&acc, &amx_emul.t[c][m][4 * n], 4);
			for (k = 0; k < kn; k++) {
				const uint8_t *pa = &amx_emul.t[a][m][4 * k];
				const uint8_t *pb = &amx_emul.t[b][k][4 * n];

				acc = amx_emul_ftz(acc + amx_emul_bf16(pa) *
						   amx_emul_bf16(pb));
				acc = amx_emul_ftz(acc + amx_emul_bf16(pa + 2) *
						   amx_emul_bf16(pb + 2));
			}
			memcpy(&amx_emul.t[c][m][4 * n], &acc, 4);
		}
	}
}

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#define _tile_loadd(t, base, stride) amx_emul_loadd(t, base, stride)
#define _tile_stored(t, base, stride) amx_emul_stored(t, base, stride)
#define _tile_zero(t) amx_emul_zero(t)
#define _tile_dpbf16ps(c, a, b) amx_emul_dpbf16ps(c, a, b)
#define _tile_release() memset(&amx_emul, 0, sizeof(amx_emul))

#endif /* MXA_AMX_EMUL_H */
