// SPDX-License-Identifier: MIT
/*
 * MX element codes and E8M0 scales to fp32, through tables built once.
 * Every element value is exact in fp32; scales are exact powers of two
 * (2^-127 is an fp32 subnormal) or NaN.
 */
#include <math.h>
#include <pthread.h>

#include "cpu_pack.h"

static float elem_value[MXCORE_ELEM_LAST + 1][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

float cpu_pow2_lo[CPU_POW2_SLOTS];
float cpu_pow2_hi[CPU_POW2_SLOTS];

static void build_tables(void)
{
	unsigned int e, c;

	for (e = MXCORE_ELEM_FIRST; e <= MXCORE_ELEM_LAST; e++) {
		const struct mxcore_format *f = mxcore_format(e);

		/* All 256 bytes: decoding ignores bits above the code. */
		for (c = 0; c < 256; c++) {
			int64_t k;
			unsigned int sp = mxcore_decode(e, (uint8_t)c, &k);

			if (sp & MXCORE_NAN)
				elem_value[e][c] = NAN;
			else if (sp)
				elem_value[e][c] = sp & MXCORE_NINF ?
						   -INFINITY : INFINITY;
			else
				elem_value[e][c] = ldexpf((float)k, f->k_exp);
		}
	}
	for (c = 0; c < CPU_POW2_SLOTS; c++) {
		int x = (int)c - 254;
		/* floor(x / 2) and the rest: both within [-127, 127] */
		int lo = x >= 0 ? x / 2 : -((-x + 1) / 2);

		if (x > 254) {
			cpu_pow2_lo[c] = NAN;
			cpu_pow2_hi[c] = NAN;
		} else {
			cpu_pow2_lo[c] = ldexpf(1.0f, lo);
			cpu_pow2_hi[c] = ldexpf(1.0f, x - lo);
		}
	}
}

void cpu_pack_panel(const struct mxa_matrix *m, uint32_t row0,
		    unsigned int width, uint32_t kb0, unsigned int kblocks,
		    float *vals, int16_t *scales)
{
	enum mxcore_elem elem = (enum mxcore_elem)m->elem;
	const float *tab;
	unsigned int r, kb, k;

	pthread_once(&tables_once, build_tables);
	tab = elem_value[elem];
	for (r = 0; r < width; r++) {
		uint32_t row = row0 + r;
		const uint8_t *data;

		if (row >= m->rows) {
			for (kb = 0; kb < kblocks; kb++) {
				scales[kb * width + r] = 0;
				for (k = 0; k < 32; k++)
					vals[(kb * 32 + k) * width + r] = 0.0f;
			}
			continue;
		}
		data = cpu_data(m) + (size_t)row * mxa__data_stride(m);
		for (kb = 0; kb < kblocks; kb++) {
			uint32_t col0 = (kb0 + kb) * 32;
			uint8_t s = cpu_scales(m)[cpu_scale_index(m, row,
								  kb0 + kb)];

			scales[kb * width + r] = s == MXCORE_SCALE_NAN ?
						 CPU_SCALE_NAN : s - 127;
			for (k = 0; k < 32; k++)
				vals[(kb * 32 + k) * width + r] =
					tab[mxcore_get_code(elem, data,
							    col0 + k)];
		}
	}
}
