// SPDX-License-Identifier: MIT
/*
 * The AMX GEMM microkernel (lib/cpu/kernels/amx/uk_amx_bf16.c) and its
 * packer (amx_pack.c) on the C model of the tile instructions
 * (amx_emul.h), so that the tile layouts, the folding of scales and both
 * epilogues (one exponent per row across the call, or per block) are
 * checked on every machine with AVX-512, AMX or not; on an AMX machine
 * the library's GEMM tests run the real instructions.
 *
 * One 32 x 32 tile of C from 32 rows of A and of B, packed by the
 * library's packer, against sums in double from testlib's OCP MX tables:
 * |c - ref| <= (32 kblocks + 2) 2^-24 sum |a b| (the contract's roundings
 * plus the scaling), for every element pair, one to AMX_KCB blocks (runs
 * of fold groups summed in the tiles, or not), rows
 * past the matrix, scales whose spread folds and whose spread does not,
 * and NaN scales (reported in nan_rows, their rows left to the framework).
 */
#define MXA_AMX_EMULATE
#include "../../lib/cpu/kernels/amx/uk_amx_bf16.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "emul_test.h"
#include "testlib.h"

static unsigned int n_sums, n_tiles;
static double worst;

struct host_mx {
	struct mxa_buffer data_buf, scale_buf;
	struct mxa_matrix m;
	uint8_t *code;			/* one code per byte, rows x cols */
};

/*
 * rows x cols of elem, scales around 127 + base within +-spread, or NaN
 * in row nan_row (-1: none); data packed as the library reads it.
 */
static void make_mx(struct host_mx *h, enum mxa_elem elem, uint32_t rows,
		    uint32_t cols, int base, int spread, int nan_row)
{
	uint32_t blocks = cols / 32, r, k;
	size_t row_bytes = elem == MXA_ELEM_E2M1 ? cols / 2 : cols;
	uint8_t *data = emul_test_zalloc(rows * row_bytes);
	uint8_t *sc = emul_test_zalloc(rows * blocks);

	h->code = emul_test_zalloc((size_t)rows * cols);
	for (r = 0; r < rows; r++) {
		for (k = 0; k < cols; k++) {
			uint8_t c = test_rand_code(elem, false);

			h->code[r * cols + k] = c;
			if (elem == MXA_ELEM_E2M1)
				data[r * row_bytes + k / 2] |=
					(uint8_t)(c << (k & 1 ? 4 : 0));
			else
				data[r * row_bytes + k] = c;
		}
		for (k = 0; k < blocks; k++)
			sc[r * blocks + k] = (uint8_t)(127 + base - spread +
					     (int)test_rand_below(2 * spread + 1));
	}
	if (nan_row >= 0)
		sc[nan_row * blocks + test_rand_below(blocks)] = 0xff;
	h->data_buf = (struct mxa_buffer){ .size = rows * row_bytes, .host = data };
	h->scale_buf = (struct mxa_buffer){ .size = rows * blocks, .host = sc };
	h->m = (struct mxa_matrix){
		.data = &h->data_buf, .scale = &h->scale_buf, .elem = elem,
		.scale_layout = MXA_LAYOUT_PLAIN, .rows = rows, .cols = cols,
	};
}

static void free_mx(struct host_mx *h)
{
	free(h->data_buf.host);
	free(h->scale_buf.host);
	free(h->code);
}

static double value(const struct host_mx *h, uint32_t r, uint32_t k)
{
	const uint8_t *sc = h->scale_buf.host;

	return test_elem_value(h->m.elem, h->code[r * h->m.cols + k]) *
	       test_scale_value(sc[r * (h->m.cols / 32) + k / 32]);
}

static void one_tile(enum mxa_elem ea, enum mxa_elem eb, unsigned int kblocks,
		     uint32_t a_rows, int spread, bool nan)
{
	const struct cpu_ukernel *uk = &cpu_uk_amx_bf16_emul;
	uint32_t k = 32 * kblocks, i, j, kk;
	struct host_mx a, b;
	uint32_t *wa = emul_test_zalloc((size_t)kblocks * 16 * 32 * 4);
	uint32_t *wb = emul_test_zalloc((size_t)kblocks * 16 * 32 * 4);
	float *ma = emul_test_zalloc((size_t)kblocks * 32 * 4);
	float *mb = emul_test_zalloc((size_t)kblocks * 32 * 4);
	static float c[32 * 32];
	uint8_t nan_a[32] = { 0 }, nan_b[32] = { 0 };

	/* Scales near 2^0 keep every sum in fp32's normal range. */
	make_mx(&a, ea, a_rows, k, 0, spread, nan ? (int)a_rows - 1 : -1);
	make_mx(&b, eb, 32, k, 0, spread / 2, -1);
	uk->pack(&a.m, false, 0, 32, 0, kblocks, wa, ma, nan_a);
	uk->pack(&b.m, true, 0, 32, 0, kblocks, wb, mb, nan_b);
	uk->task_begin();
	uk->run(kblocks, wa, ma, wb, mb, c, 32, false);
	uk->task_end();
	n_tiles++;
	CHECK(!nan || nan_a[a_rows - 1], "%s x %s: NaN scale of row %u not reported",
	      test_elem(ea)->name, test_elem(eb)->name, a_rows - 1);
	for (i = 0; i < 32; i++) {
		for (j = 0; j < 32; j++) {
			double ref = 0, mag = 0, bound, err;

			if (nan_a[i] || nan_b[j])
				continue;
			for (kk = 0; i < a_rows && kk < k; kk++) {
				double p = value(&a, i, kk) * value(&b, j, kk);

				ref += p;
				mag += fabs(p);
			}
			bound = (k + 2) * ldexp(mag, -24);
			err = fabs(c[i * 32 + j] - ref);
			n_sums++;
			if (bound > 0 && err / bound > worst)
				worst = err / bound;
			CHECK(err <= bound,
			      "%s x %s kblocks %u rows %u spread %d: c[%u][%u] = %.9g, want %.9g (bound %g)",
			      test_elem(ea)->name, test_elem(eb)->name, kblocks,
			      a_rows, spread, i, j, c[i * 32 + j], ref, bound);
		}
	}
	free_mx(&a);
	free_mx(&b);
	free(wa);
	free(wb);
	free(ma);
	free(mb);
}

int main(void)
{
	/* Within a fold group, across groups (with a partial last one). */
	static const unsigned int kbs[] = { 1, 3, AMX_FOLD + 1, 40 };
	static const int spreads[] = { 0, 6, 40 };
	unsigned int x, y, i, s;

	if (!emul_test_cpu_ok())
		return TEST_SKIP;
	test_seed(0x616d7867);
	for (x = 0; x < 5; x++) {
		for (y = 0; y < 5; y++) {
			for (i = 0; i < TEST_ARRAY_SIZE(kbs); i++)
				for (s = 0; s < TEST_ARRAY_SIZE(spreads); s++)
					one_tile(test_elems[x], test_elems[y],
						 kbs[i], 32, spreads[s], false);
			/* Rows past A's end, and a NaN scale. */
			one_tile(test_elems[x], test_elems[y], 2, 19, 3, true);
		}
	}
	printf("%u tiles, %u sums, worst error/bound %.3g\n", n_tiles, n_sums,
	       worst);
	return test_finish();
}
