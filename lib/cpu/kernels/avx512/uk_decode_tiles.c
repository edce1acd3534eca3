// SPDX-License-Identifier: MIT
/*
 * The decode GEMM's bf16 path in AVX512_BF16 registers (contract in
 * cpu_decode.h): the tile walk of kernels/decode_tiles.h, 16 rows of B
 * decoded once per block for every row of A, for up to 16 rows of A.
 *
 * The row kernel (uk_decode.c) dots each B row with each row of A, 16
 * lanes along K, and adds the lanes at the end of every chunk of K: at 16
 * rows of A those horizontal sums cost about as much as the dots.  Here
 * the lanes run along A's rows instead: accumulator r holds B row r's
 * sums for A rows 0..15, and each vdpbf16ps takes one K pair of A (a zmm
 * of A's tile: pair q of every row) and B row r's pair q broadcast from
 * the decoded tile, so no sum is ever split across lanes.  A block is 16
 * loads of A and 256 vdpbf16ps with a broadcast operand for 16 rows of B.
 *
 * Each output is B row r's products added in K order, a pair per
 * instruction (both products exact, each addition rounded once in fp32,
 * sums below 2^-126 flushed to zero): the error model of the AMX form.
 */
#if defined(__x86_64__)
#include <immintrin.h>

#include "../../cpu_decode.h"

#define TD_ISA "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"
#define TD_INLINE __attribute__((target(TD_ISA), always_inline))

/* Accumulator r: B row r of the group, lane j: A row j. */
struct td_state {
	__m512 c[16];
};

#include "../decode_tiles.h"

TD_INLINE static inline unsigned int td_parts(unsigned int mt)
{
	(void)mt;
	return 1;
}

TD_INLINE static inline void td_begin(struct td_state *st,
				      float (*acc)[16][16], unsigned int mt,
				      bool first)
{
	unsigned int r;

	(void)mt;
	#pragma GCC unroll 16
	for (r = 0; r < 16; r++)
		st->c[r] = first ? _mm512_setzero_ps() : _mm512_load_ps(acc[0][r]);
}

TD_INLINE static inline void td_end(struct td_state *st,
				    float (*acc)[16][16], unsigned int mt)
{
	unsigned int r;

	(void)mt;
	#pragma GCC unroll 16
	for (r = 0; r < 16; r++)
		_mm512_store_ps(acc[0][r], st->c[r]);
}

/*
 * A's tile at: pair q of A row j at at[q * nc + j] (nc <= 16 rows, one
 * tile); lanes past nc load as zeros and are never stored out.  The
 * decoded tile bt: B row r's pair q at bt[32 r + 2 q].
 */
TD_INLINE static inline void td_multiply(struct td_state *st,
					 const uint16_t *bt,
					 const uint32_t *at, unsigned int mt,
					 unsigned int nc, uint32_t b)
{
	const __mmask16 rows = (__mmask16)((1u << nc) - 1);
	unsigned int q, r;

	(void)mt;
	(void)b;
	for (q = 0; q < 16; q++) {
		__m512bh a = (__m512bh)_mm512_maskz_loadu_epi32(rows, at + q * nc);

		#pragma GCC unroll 16
		for (r = 0; r < 16; r++) {
			uint32_t w;

			memcpy(&w, bt + 32 * r + 2 * q, 4);
			st->c[r] = _mm512_dpbf16_ps(st->c[r],
				(__m512bh)_mm512_set1_epi32((int)w), a);
		}
	}
}

__attribute__((target(TD_ISA)))
void cpu_decode_tiles_avx512bf16(const struct cpu_decode_amx_args *d,
				 const uint8_t *codes, size_t dstride,
				 const uint8_t *scales, size_t sstride,
				 unsigned int rows, float *out, size_t ldo)
{
	struct rows_view v;

	rows_view_init(&v, d, codes, dstride, scales, sstride, rows);
	run(d, &v, 1, rows, out, ldo);
}
#endif
