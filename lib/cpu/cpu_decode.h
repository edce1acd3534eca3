/* SPDX-License-Identifier: MIT */
/*
 * The decode (weight-streaming) GEMM: C (+)= A * B^T for few rows of A,
 * reading B's codes and scales once, where they lie (cpu_decode.c), and
 * the row kernels it calls for one B row and one chunk of K.
 *
 * Kernel contract.  For i < m, sums[i] = the fp32 sum over k < kn of
 * a[i * lda + k] * value(k), where value(k) is B's element k of the
 * chunk times its block's scale, and a is A in fp32, already in the
 * kernel's K order: for e2m1 B every group of 32 (a final group of 16)
 * holds the even k of the group first, then the odd k (the order the
 * nibbles come out of a byte vector); every other element type keeps K's
 * order.  kn is a multiple of 32, or of 16 for blocks of 16.  scales[b]
 * is the raw scale byte of the chunk's block b; table[s] says what scale
 * byte s means to the vector kernel: for E8M0 the exponent s - 127 plus
 * the kernel's element adjustment (NaN for 255), for UE4M3 the scale's
 * value.  The chunk's B values must be finite in fp32 (the framework
 * sends rows with larger scales to cpu_decode_rows_ref()).
 *
 * cpu_decode_rows_ref() computes each sum in double, where every product
 * is exact, and rounds it to fp32 once; the AVX-512 kernel sums in fp32
 * with FMA (each product rounded once with its addition), 16 lanes along
 * K, then adds the lanes.
 *
 * The AVX512_BF16 kernel reads A as bf16 (ab, the same order and row
 * pitch) and dots pairs with vdpbf16ps: it is for chunks where A's
 * values are bf16 normals (or zeros) and B's values, code times scale,
 * are bf16 normals (scales at least 1 - k_exp, cpu_decode.c checks), so
 * every product is exact; the instruction flushes sums below 2^-126 to
 * zero, an absolute error of at most 2^-126 per addition.
 */
#ifndef MXA_CPU_DECODE_H
#define MXA_CPU_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxcore.h"

struct cpu_decode_args {
	enum mxcore_elem elem;		/* B's element type */
	bool ue4m3;			/* scale type: UE4M3 (else E8M0) */
	unsigned int bs;		/* block size: 32 or 16 */
	uint32_t kn;			/* K of the chunk */
	const float *a;			/* A at the chunk's first column */
	const uint16_t *ab;		/* the same in bf16 (bf16 kernel) */
	size_t lda;			/* floats */
	unsigned int m;			/* rows of A */
	const float *table;		/* 256 entries, see above */
};

typedef void cpu_decode_fn(const struct cpu_decode_args *d,
			   const uint8_t *codes, const uint8_t *scales,
			   float *sums);

/* The element adjustment table[] carries for E8M0 scales. */
int cpu_decode_adjust(enum mxcore_elem elem);

/* Portable, in double (every ISA level; rows with extreme scales). */
void cpu_decode_rows_ref(const struct cpu_decode_args *d,
			 const uint8_t *codes, const uint8_t *scales,
			 float *sums);
/* AVX-512 F/BW/VL/DQ (kernels/avx512/uk_decode.c), x86-64 only. */
void cpu_decode_rows_avx512(const struct cpu_decode_args *d,
			    const uint8_t *codes, const uint8_t *scales,
			    float *sums);
/* ... + AVX512_BF16: vdpbf16ps on bf16 A (see above). */
void cpu_decode_rows_avx512bf16(const struct cpu_decode_args *d,
				const uint8_t *codes, const uint8_t *scales,
				float *sums);
/*
 * The same for two B rows at once (each load of A feeds both); the sums
 * are those of two cpu_decode_rows_avx512bf16() calls, bit for bit.
 */
void cpu_decode_rows2_avx512bf16(const struct cpu_decode_args *d,
				 const uint8_t *codes0, const uint8_t *scales0,
				 const uint8_t *codes1, const uint8_t *scales1,
				 float *sums0, float *sums1);

/*
 * The AMX form of the bf16 path (kernels/amx/amx_decode.c): up to
 * CPU_DECODE_AMX_MAX_ROWS rows of B in groups of 16 rows per tile, over
 * all of K.  Each block of a row is decoded to bf16 words in
 * K order with its scale folded in (the rows the bf16 kernel takes: their
 * values are bf16 normals, so the fold is exact) and stored as one 64-byte
 * row of a tile; TDPBF16PS multiplies the tiles by A's rows, which
 * cpu_decode_amx_put_a() lays out in AMX's pair-interleaved form.  Every
 * product is exact and every addition rounds once in fp32, sums below
 * 2^-126 flushed to zero: the error model of the bf16 row kernel, with the
 * additions in another order.  Each call loads the tile configuration cfg
 * (from cpu_decode_amx_config() for m) and releases the tiles at its end.
 *
 * out[i * ldo + r] = the sum for A row i < m and B row r < rows (rows at
 * most CPU_DECODE_AMX_MAX_ROWS; codes and scales of row r at
 * codes + r * dstride and scales + r * sstride, one scale byte per block
 * of bs).
 */
#define CPU_DECODE_AMX_GROUP 16
#define CPU_DECODE_AMX_MAX_ROWS 128
#define CPU_DECODE_AMX_MAX_M 64

struct cpu_decode_amx_args {
	enum mxcore_elem elem;		/* B's element type */
	bool ue4m3;			/* scale type: UE4M3 (else E8M0) */
	unsigned int bs;		/* block size: 32 or 16 */
	uint32_t k;			/* K, a multiple of bs */
	const uint32_t *a;		/* A from cpu_decode_amx_put_a() */
	unsigned int m;			/* rows of A, 1..64 */
	const float *table;		/* as struct cpu_decode_args's */
	const void *cfg;		/* 64 bytes, 64-byte aligned */
};

/* Words of A's tiles for m rows and K = k (tiles of 16 pairs x cols). */
size_t cpu_decode_amx_a_words(unsigned int m, uint32_t k);
/* Row i of A (k fp32 values holding bf16 ones) into those tiles. */
void cpu_decode_amx_put_a(uint32_t *tiles, unsigned int m, uint32_t k,
			  unsigned int i, const float *row);
/* The 64-byte tile configuration for m rows of A. */
void cpu_decode_amx_config(void *cfg, unsigned int m);
typedef void cpu_decode_tiles_fn(const struct cpu_decode_amx_args *d,
				 const uint8_t *codes, size_t dstride,
				 const uint8_t *scales, size_t sstride,
				 unsigned int rows, float *out, size_t ldo);
cpu_decode_tiles_fn cpu_decode_amx;

/*
 * The same contract on AVX512_BF16 registers (kernels/avx512/
 * uk_decode_tiles.c), for 1 <= m <= CPU_DECODE_TILES_AVX512_MAX_M (cfg is
 * not read): 16 B rows per accumulator set, one lane per row of A, each
 * output added in K order a pair at a time.  Its time hardly depends on
 * m (256 multiplies a block for 16 B rows, lanes past m idle): the call
 * site takes it from CPU_DECODE_TILES_AVX512_MIN_M rows of A on, where it
 * measured faster than the row kernel's dots and horizontal sums (a tie
 * at 6 rows, slower at 4; Documentation/bench-cpu.rst), more rows in
 * stripes of CPU_DECODE_TILES_AVX512_MAX_M.
 */
#define CPU_DECODE_TILES_AVX512_MIN_M 7
#define CPU_DECODE_TILES_AVX512_MAX_M 16
cpu_decode_tiles_fn cpu_decode_tiles_avx512bf16;

#endif /* MXA_CPU_DECODE_H */
