// SPDX-License-Identifier: MIT
/*
 * The portable reference microkernels, one per panel format: plain C for
 * any target, and the model every ISA-specific kernel must match
 * (contract in cpu_ukernel.h).
 */
#include <string.h>

#include "../../cpu_ukernel.h"

#define MR 4
#define NR 16

static float bf16_lo(uint32_t w)
{
	uint32_t x = w << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static float bf16_hi(uint32_t w)
{
	uint32_t x = w & 0xffff0000u;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/* t * 2^e rounded once: exact in double, then one rounding to fp32. */
static float scale(float t, float e)
{
	uint64_t bits = (uint64_t)((int)e + 1023) << 52;
	double p;

	memcpy(&p, &bits, 8);
	return (float)((double)t * p);
}

static void tile_init(float acc[MR][NR], const float *c, size_t ldc,
		      bool add)
{
	unsigned int i, j;

	for (i = 0; i < MR; i++)
		for (j = 0; j < NR; j++)
			acc[i][j] = add ? c[i * ldc + j] : 0.0f;
}

static void tile_store(float acc[MR][NR], float *c, size_t ldc)
{
	unsigned int i, j;

	for (i = 0; i < MR; i++)
		for (j = 0; j < NR; j++)
			c[i * ldc + j] = acc[i][j];
}

static void ref_bf16(unsigned int kblocks, const uint32_t *a,
		     const float *ea, const uint32_t *b, const float *eb,
		     float *c, size_t ldc, bool add)
{
	float acc[MR][NR];
	unsigned int kb, p, i, j;

	tile_init(acc, c, ldc, add);
	for (kb = 0; kb < kblocks; kb++) {
		float t[MR][NR] = { { 0 } };

		for (p = 0; p < 16; p++) {
			for (i = 0; i < MR; i++) {
				uint32_t aw = a[p * MR + i];

				for (j = 0; j < NR; j++) {
					uint32_t bw = b[p * NR + j];

					t[i][j] += bf16_lo(aw) * bf16_lo(bw);
					t[i][j] += bf16_hi(aw) * bf16_hi(bw);
				}
			}
		}
		for (i = 0; i < MR; i++)
			for (j = 0; j < NR; j++)
				acc[i][j] += scale(t[i][j], ea[i] + eb[j]);
		a += 16 * MR;
		b += 16 * NR;
		ea += MR;
		eb += NR;
	}
	tile_store(acc, c, ldc);
}

static void ref_i8(unsigned int kblocks, const uint32_t *a, const float *ea,
		   const uint32_t *b, const float *eb, float *c, size_t ldc,
		   bool add)
{
	float acc[MR][NR];
	unsigned int kb, q, i, j, x;

	tile_init(acc, c, ldc, add);
	for (kb = 0; kb < kblocks; kb++) {
		int32_t t[MR][NR] = { { 0 } };

		for (q = 0; q < 8; q++) {
			for (i = 0; i < MR; i++) {
				uint32_t aw = a[q * MR + i];

				for (j = 0; j < NR; j++) {
					uint32_t bw = b[q * NR + j];

					for (x = 0; x < 32; x += 8)
						t[i][j] += (int8_t)(aw >> x) *
							   (int32_t)(uint8_t)(bw >> x);
				}
			}
		}
		/* ea: MR exponents, then MR corrections. */
		for (i = 0; i < MR; i++)
			for (j = 0; j < NR; j++)
				acc[i][j] += scale((float)t[i][j] + ea[MR + i],
						   ea[i] + eb[j]);
		a += 8 * MR;
		b += 8 * NR;
		ea += 2 * MR;
		eb += NR;
	}
	tile_store(acc, c, ldc);
}

const struct cpu_ukernel cpu_uk_ref_bf16 = {
	.name = "ref-bf16",
	.insn = "portable C, fp32 sums of bf16 products",
	.panel = CPU_PANEL_BF16,
	.mr = MR, .nr = NR, .mc = 64, .nc = 128, .kcb = 8,
	.run = ref_bf16,
};

const struct cpu_ukernel cpu_uk_ref_i8 = {
	.name = "ref-int8",
	.insn = "portable C, int32 sums of int8 products",
	.panel = CPU_PANEL_I8,
	.mr = MR, .nr = NR, .mc = 64, .nc = 128, .kcb = 8,
	.run = ref_i8,
};
