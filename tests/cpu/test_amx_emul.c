// SPDX-License-Identifier: MIT
/*
 * The AMX decode kernel (lib/cpu/kernels/amx/amx_decode.c) on a C model of
 * the tile instructions (amx_emul.h), so that its data layouts (A's
 * pair-interleaved tiles, B's decoded rows, the accumulator rotation, the
 * transposed store) are checked on every machine with AVX-512, AMX or not.
 * On an AMX machine the library's tests run the real instructions too
 * (test_weight_only on the amx level).  The kernel's AVX512_BF16 form
 * (kernels/avx512/uk_decode_tiles.c, the same walk with the multiplies in
 * registers) runs for real beside it, up to 16 rows of A, wherever the
 * CPU has AVX512_BF16, against the same reference and bound.
 *
 * Each sum is compared with one computed here in double from the OCP MX
 * tables (testlib) and float8_e4m3fn's definition, independently of the
 * library: |c - ref| <= (K + 2) 2^-24 sum |a b| + (K + 2) 2^-126, NaN
 * and Inf exactly.  Shapes: every element type, E8M0 (the e2m1 fast path
 * and, with a NaN scale, the generic one) and UE4M3 blocks of 16 with K
 * an odd number of 16s; 1 to 64 rows of A (one to four tiles, one to four
 * accumulators each); 1 to 128 rows of B (one to eight groups of 16); K
 * in one or several chunks; padded strides.
 */
#define MXA_AMX_EMULATE
#include "../../lib/cpu/kernels/amx/amx_decode.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emul_test.h"
#include "testlib.h"

static unsigned int n_sums, n_special;
static double worst;

/* Exponent of an element's unit (values are integers times 2^k_exp). */
static int k_exp(enum mxa_elem e)
{
	static const int v[] = { 0, -9, -16, -3, -4, -1 };

	return v[e];
}

/* float8_e4m3fn, from its definition. */
static double ue4m3_value(uint8_t s)
{
	int e = s >> 3 & 15, m = s & 7;
	double v;

	if ((s & 0x7f) == 0x7f)
		return NAN;
	v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
	return s & 0x80 ? -v : v;
}

/* A random bf16 normal of magnitude 2^-3 .. 2^3 as a float. */
static float rand_a(void)
{
	float f = ldexpf(1.0f + (float)test_rand_below(128) / 128.0f,
			 (int)test_rand_below(7) - 3);

	return test_rand_below(2) ? -f : f;
}

static void one_case(enum mxa_elem elem, bool nv, bool nan_scale,
		     bool specials, unsigned int m, unsigned int rows,
		     uint32_t k)
{
	unsigned int bs = nv ? 16 : 32, blocks = k / bs;
	size_t dstride = (elem == MXA_ELEM_E2M1 ? k / 2 : k) + 64;
	size_t sstride = blocks + 3;
	uint8_t *codes = emul_test_zalloc(rows * dstride);
	uint8_t *scales = emul_test_zalloc(rows * sstride);
	uint8_t *code = emul_test_zalloc((size_t)rows * k);
	float *a = emul_test_zalloc((size_t)m * k * 4);
	uint32_t *tiles = emul_test_zalloc(cpu_decode_amx_a_words(m, k) * 4);
	/* The AMX kernel on the C model, and the AVX512_BF16 form for real. */
	static float outs[2][64 * 128];
	bool avx = m <= CPU_DECODE_TILES_AVX512_MAX_M &&
		   __builtin_cpu_supports("avx512bf16");
	static const char *const names[] = { "amx", "avx512bf16" };
	unsigned int o;
	float table[256];
	uint8_t cfg[64] __attribute__((aligned(64)));
	struct cpu_decode_amx_args d = {
		.elem = (enum mxcore_elem)elem, .ue4m3 = nv, .bs = bs, .k = k,
		.a = tiles, .m = m, .table = table, .cfg = cfg,
	};
	unsigned int i, r, s;
	uint32_t kk;

	for (s = 0; s < 256; s++)
		table[s] = nv ? (float)ue4m3_value((uint8_t)s) : NAN;
	for (r = 0; r < rows; r++) {
		for (kk = 0; kk < k; kk++) {
			uint8_t c = test_rand_code(elem, specials &&
						   !test_rand_below(50));

			code[r * k + kk] = c;
			if (elem == MXA_ELEM_E2M1)
				codes[r * dstride + kk / 2] |=
					(uint8_t)(c << (kk & 1 ? 4 : 0));
			else
				codes[r * dstride + kk] = c;
		}
		for (i = 0; i < blocks; i++) {
			/* E8M0: the rows the framework sends here, no overflow. */
			int lo = 1 - k_exp(elem), hi = 127 + 40;

			scales[r * sstride + i] = nv ?
				(uint8_t)(1 + test_rand_below(0x7e)) :
				(uint8_t)(lo + (int)test_rand_below(hi - lo + 1));
		}
	}
	if (nan_scale)
		scales[(rows - 1) * sstride + test_rand_below(blocks)] =
			nv ? 0x7f : 0xff;
	for (i = 0; i < m; i++) {
		for (kk = 0; kk < k; kk++)
			a[(size_t)i * k + kk] = rand_a();
		cpu_decode_amx_put_a(tiles, m, k, i, a + (size_t)i * k);
	}
	cpu_decode_amx_config(cfg, m);
	cpu_decode_amx(&d, codes, dstride, scales, sstride, rows, outs[0], 128);
	if (avx)
		cpu_decode_tiles_avx512bf16(&d, codes, dstride, scales, sstride,
					    rows, outs[1], 128);

	/* Each sum once in double, then both kernels' outputs against it. */
	for (i = 0; i < m; i++) {
		for (r = 0; r < rows; r++) {
			double ref = 0, mag = 0, bound;

			for (kk = 0; kk < k; kk++) {
				uint8_t sb = scales[r * sstride + kk / bs];
				double sv = nv ? ue4m3_value(sb) : test_scale_value(sb);
				double p = a[(size_t)i * k + kk] *
					   test_elem_value(elem, code[r * k + kk]) * sv;

				ref += p;
				mag += fabs(p);
			}
			bound = (k + 2) * ldexp(mag, -24) + (k + 2) * ldexp(1, -126);
			for (o = 0; o < (avx ? 2u : 1u); o++) {
				double got = outs[o][i * 128 + r], err;

				n_sums++;
				if (isnan(ref) || isinf(ref)) {
					n_special++;
					CHECK(isnan(ref) ? isnan(got) : got == ref,
					      "%s: %s%s m %u rows %u k %u: [%u][%u] = %g, want %g",
					      names[o], test_elem(elem)->name, nv ? " nvfp4" : "",
					      m, rows, k, i, r, got, ref);
					continue;
				}
				err = fabs(got - ref);
				if (bound > 0 && err / bound > worst)
					worst = err / bound;
				CHECK(err <= bound,
				      "%s: %s%s m %u rows %u k %u: [%u][%u] = %.9g, want %.9g (bound %g)",
				      names[o], test_elem(elem)->name, nv ? " nvfp4" : "", m,
				      rows, k, i, r, got, ref, bound);
			}
		}
	}
	free(codes);
	free(scales);
	free(code);
	free(a);
	free(tiles);
}

int main(void)
{
	static const unsigned int ms[] = { 1, 2, 7, 16, 17, 32, 40, 64 };
	static const unsigned int rows[] = { 16, 1, 9, 128, 37 };
	unsigned int e, mi, ri;

	if (!emul_test_cpu_ok())
		return TEST_SKIP;
	test_seed(0x616d78);
	for (mi = 0; mi < TEST_ARRAY_SIZE(ms); mi++) {
		for (ri = 0; ri < TEST_ARRAY_SIZE(rows); ri++) {
			unsigned int m = ms[mi], n = rows[ri];

			for (e = 0; e < 5; e++) {
				enum mxa_elem el = test_elems[e];

				one_case(el, false, false, true, m, n, 128);
				one_case(el, false, true, false, m, n, 96);
			}
			/* Several chunks of K, each kept in the accumulators. */
			one_case(MXA_ELEM_E4M3, false, false, false, m, n, 1024);
			/* MXFP4's fast path over a long K (ring wrap, rotation). */
			one_case(MXA_ELEM_E2M1, false, false, false, m, n, 1024);
			one_case(MXA_ELEM_E2M1, true, false, false, m, n, 16 * 13);
			one_case(MXA_ELEM_E2M1, true, true, false, m, n, 64);
		}
	}
	printf("%u sums (%u special), worst error/bound %.3g\n", n_sums,
	       n_special, worst);
	return test_finish();
}
