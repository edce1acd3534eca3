/* SPDX-License-Identifier: MIT */
/*
 * Operand geometry, stated once: where the element codes and the block
 * scales of a block-scaled operand live, how many bytes it spans, which
 * shapes and strides are legal, and the same for a dense operand.  The
 * library's validation and kernels, mxaccel.ko's SUBMIT checks and
 * software engine, the CUDA plugin (host and device code) and the CLI all
 * use these functions, so that no two of them can disagree about a byte.
 *
 * Header-only and freestanding (integers only, no libc): MXCORE_GEOM_FN
 * is empty in C and "__host__ __device__" in the CUDA plugin, whose host
 * and device code both use it.
 *
 * An operand is rows x cols elements, cols (K) contiguous, cut into blocks
 * of block elements along K, each block with one scale byte:
 *
 *   E8M0   (OCP MX)  2^(s - 127), s = 255 NaN; blocks of 32
 *   UE4M3  (NVFP4)   an unsigned float8_e4m3fn; blocks of 16
 *
 * Codes of row r start at r * data_stride; e2m1 packs two per byte,
 * element 2i in the low nibble.  Scale (r, b) is at r * scale_stride + b
 * in the plain layout, or where cuBLAS's 128x4 tiles (torchao's
 * to_blocked() on the [rows, cols / block] scale matrix) put it.
 * A stride of 0 means packed rows.
 */
#ifndef MXCORE_GEOM_H
#define MXCORE_GEOM_H

#include "mxcore.h"

/* The CUDA plugin's build defines it as "__host__ __device__" (Makefile). */
#ifndef MXCORE_GEOM_FN
#define MXCORE_GEOM_FN
#endif

/* enum mxcore_scale_type: mxcore.h. */

/* Values match enum mxa_scale_layout and the uapi. */
enum mxcore_layout {
	MXCORE_LAYOUT_PLAIN = 0,
	MXCORE_LAYOUT_SWIZZLED = 1,
};

/* The block size of a scale type: the only one it is defined for. */
static inline MXCORE_GEOM_FN uint32_t
mxcore_scale_block(enum mxcore_scale_type type)
{
	return type == MXCORE_SCALE_UE4M3 ? 16 : 32;
}

/* Bytes of n consecutive codes (n even for e2m1): one row of n elements. */
static inline MXCORE_GEOM_FN uint64_t mxcore_row_bytes(uint32_t elem,
							 uint64_t n)
{
	return elem == MXCORE_E2M1 ? n / 2 : n;
}

/* Byte index of scale (row, block) in the swizzled layout. */
static inline MXCORE_GEOM_FN uint64_t
mxcore_swizzle_index(uint64_t rows, uint64_t blocks, uint64_t row,
		     uint64_t block)
{
	uint64_t cp = (blocks + 3) / 4 * 4;

	(void)rows;
	return ((row / 128) * (cp / 4) + block / 4) * 512 + (row % 32) * 16 +
	       ((row % 128) / 32) * 4 + block % 4;
}

/* Bytes of a swizzled scale buffer: rows and blocks padded to 128 x 4. */
static inline MXCORE_GEOM_FN uint64_t mxcore_swizzle_bytes(uint64_t rows,
							   uint64_t blocks)
{
	return (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
}

/* A block-scaled operand as a caller describes it (strides 0 = packed). */
struct mxcore_geom {
	uint64_t rows;
	uint64_t cols;
	uint64_t data_stride;	/* bytes between rows of codes */
	uint64_t scale_stride;	/* bytes between rows of scales (plain) */
	uint32_t elem;		/* enum mxcore_elem */
	uint32_t scale_type;	/* enum mxcore_scale_type */
	uint32_t block;		/* elements per scale; 0 = the type's */
	uint32_t layout;	/* enum mxcore_layout */
};

static inline MXCORE_GEOM_FN uint32_t
mxcore_geom_block(const struct mxcore_geom *g)
{
	return g->block ? g->block :
	       mxcore_scale_block((enum mxcore_scale_type)g->scale_type);
}

/* Scales per row. */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_blocks(const struct mxcore_geom *g)
{
	return g->cols / mxcore_geom_block(g);
}

/* Bytes of one row's codes, and of one block's. */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_row_bytes(const struct mxcore_geom *g)
{
	return mxcore_row_bytes(g->elem, g->cols);
}

static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_block_bytes(const struct mxcore_geom *g)
{
	return mxcore_row_bytes(g->elem, mxcore_geom_block(g));
}

static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_data_stride(const struct mxcore_geom *g)
{
	return g->data_stride ? g->data_stride : mxcore_geom_row_bytes(g);
}

/*
 * Bytes between rows of plain scales.  Swizzled scales have no row stride
 * (their rows interleave in tiles); for them this is the blocks per row,
 * the stride a plain copy of them has, which kernels that unswizzle into
 * plain scratch use.
 */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_scale_stride(const struct mxcore_geom *g)
{
	return g->scale_stride ? g->scale_stride : mxcore_geom_blocks(g);
}

/* Byte offset of row's codes in the data buffer. */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_data_offset(const struct mxcore_geom *g, uint64_t row)
{
	return row * mxcore_geom_data_stride(g);
}

/* Byte offset of scale (row, block) in the scale buffer. */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_scale_index(const struct mxcore_geom *g, uint64_t row,
			uint64_t block)
{
	if (g->layout == MXCORE_LAYOUT_SWIZZLED)
		return mxcore_swizzle_index(g->rows, mxcore_geom_blocks(g), row,
					    block);
	return row * mxcore_geom_scale_stride(g) + block;
}

/*
 * Bytes from scale (row, block) to (row, block + 4 n), the same for every
 * row and block in both layouts: plain scales are a row's blocks in
 * order, swizzled ones tiles of 4 blocks (512 bytes for 128 rows) in
 * order along a row of tiles.  Kernels that walk a row's scales 4 blocks
 * at a time step by it instead of finding each.
 */
static inline MXCORE_GEOM_FN uint64_t
mxcore_geom_scale_step4(const struct mxcore_geom *g, uint64_t n)
{
	return mxcore_geom_scale_index(g, 0, 4 * n) -
	       mxcore_geom_scale_index(g, 0, 0);
}

/*
 * Bytes from the start of the data (scale) buffer's operand to its end:
 * (rows - 1) * stride + one row, or the padded swizzled size.  false
 * when that overflows 64 bits (only after mxcore_geom_check() passed is
 * the answer meaningful).
 */
static inline MXCORE_GEOM_FN bool
mxcore_geom_data_span(const struct mxcore_geom *g, uint64_t *out)
{
	uint64_t stride = mxcore_geom_data_stride(g);

	if (g->rows && stride &&
	    g->rows - 1 > (~0ull - mxcore_geom_row_bytes(g)) / stride)
		return false;
	*out = (g->rows - 1) * stride + mxcore_geom_row_bytes(g);
	return true;
}

static inline MXCORE_GEOM_FN bool
mxcore_geom_scale_span(const struct mxcore_geom *g, uint64_t *out)
{
	uint64_t stride = mxcore_geom_scale_stride(g);
	uint64_t blocks = mxcore_geom_blocks(g);

	if (g->layout == MXCORE_LAYOUT_SWIZZLED) {
		/* rows, blocks < 2^32 each: the padded product fits. */
		*out = mxcore_swizzle_bytes(g->rows, blocks);
		return g->rows < (1ull << 32) && blocks < (1ull << 32);
	}
	if (g->rows && stride && g->rows - 1 > (~0ull - blocks) / stride)
		return false;
	*out = (g->rows - 1) * stride + blocks;
	return true;
}

/* What mxcore_geom_check() found wrong; MXCORE_GEOM_OK is 0. */
enum mxcore_geom_fault {
	MXCORE_GEOM_OK = 0,
	MXCORE_GEOM_ELEM,		/* unknown element type */
	MXCORE_GEOM_SCALE_TYPE,		/* unknown scale type */
	MXCORE_GEOM_BLOCK,		/* block size not the scale type's */
	MXCORE_GEOM_PAIRING,		/* UE4M3 scales with elements other than e2m1 */
	MXCORE_GEOM_LAYOUT,		/* unknown scale layout */
	MXCORE_GEOM_EMPTY,		/* rows or cols 0 */
	MXCORE_GEOM_COLS,		/* cols not a multiple of the block */
	MXCORE_GEOM_DATA_STRIDE,	/* data_stride below one row */
	MXCORE_GEOM_SCALE_STRIDE,	/* scale_stride below one row */
	MXCORE_GEOM_SWIZZLED_STRIDE,	/* scale_stride with swizzled scales */
};

/*
 * The first rule g breaks, with the offending value and its limit for
 * the caller's message (mxcore_geom_fault_text() says which rule):
 * value/limit are the element, scale type, block / its required size,
 * layout, rows / cols, cols / block, stride / row bytes, stride / blocks.
 */
static inline MXCORE_GEOM_FN enum mxcore_geom_fault
mxcore_geom_check(const struct mxcore_geom *g, uint64_t *value,
		  uint64_t *limit)
{
	uint32_t block;

	*value = 0;
	*limit = 0;
	if (g->elem < MXCORE_ELEM_FIRST || g->elem > MXCORE_ELEM_LAST) {
		*value = g->elem;
		return MXCORE_GEOM_ELEM;
	}
	if (g->scale_type > MXCORE_SCALE_TYPE_LAST) {
		*value = g->scale_type;
		return MXCORE_GEOM_SCALE_TYPE;
	}
	block = mxcore_scale_block((enum mxcore_scale_type)g->scale_type);
	if (g->block && g->block != block) {
		*value = g->block;
		*limit = block;
		return MXCORE_GEOM_BLOCK;
	}
	if (g->scale_type == MXCORE_SCALE_UE4M3 && g->elem != MXCORE_E2M1) {
		*value = g->elem;
		*limit = MXCORE_E2M1;
		return MXCORE_GEOM_PAIRING;
	}
	if (g->layout != MXCORE_LAYOUT_PLAIN &&
	    g->layout != MXCORE_LAYOUT_SWIZZLED) {
		*value = g->layout;
		return MXCORE_GEOM_LAYOUT;
	}
	if (!g->rows || !g->cols) {
		*value = g->rows;
		*limit = g->cols;
		return MXCORE_GEOM_EMPTY;
	}
	if (g->cols % block) {
		*value = g->cols;
		*limit = block;
		return MXCORE_GEOM_COLS;
	}
	if (mxcore_geom_data_stride(g) < mxcore_geom_row_bytes(g)) {
		*value = g->data_stride;
		*limit = mxcore_geom_row_bytes(g);
		return MXCORE_GEOM_DATA_STRIDE;
	}
	if (g->layout == MXCORE_LAYOUT_SWIZZLED) {
		if (g->scale_stride) {
			*value = g->scale_stride;
			return MXCORE_GEOM_SWIZZLED_STRIDE;
		}
	} else if (mxcore_geom_scale_stride(g) < mxcore_geom_blocks(g)) {
		*value = g->scale_stride;
		*limit = mxcore_geom_blocks(g);
		return MXCORE_GEOM_SCALE_STRIDE;
	}
	return MXCORE_GEOM_OK;
}

/*
 * The rule, as a printf format for the value and the limit (passed as two
 * unsigned long long; a format that names one ignores the other, as C's
 * printf allows), for messages such as "gemm a: <text>".
 */
static inline MXCORE_GEOM_FN const char *
mxcore_geom_fault_text(enum mxcore_geom_fault f)
{
	switch (f) {
	case MXCORE_GEOM_OK:
		return "ok (%llu, %llu)";
	case MXCORE_GEOM_ELEM:
		return "unknown element type %llu";
	case MXCORE_GEOM_SCALE_TYPE:
		return "unknown scale type %llu";
	case MXCORE_GEOM_BLOCK:
		return "block_size %llu: this scale type has blocks of %llu";
	case MXCORE_GEOM_PAIRING:
		return "element type %llu with UE4M3 scales: only e2m1 (%llu, NVFP4) has them";
	case MXCORE_GEOM_LAYOUT:
		return "unknown scale layout %llu";
	case MXCORE_GEOM_EMPTY:
		return "rows (%llu) and cols (%llu) must be > 0";
	case MXCORE_GEOM_COLS:
		return "cols (K) = %llu is not a multiple of the block size %llu";
	case MXCORE_GEOM_DATA_STRIDE:
		return "data_stride %llu is less than a row (%llu bytes)";
	case MXCORE_GEOM_SCALE_STRIDE:
		return "scale_stride %llu is less than a row of scales (%llu)";
	case MXCORE_GEOM_SWIZZLED_STRIDE:
		return "scale_stride %llu must be 0 for the swizzled layout";
	}
	return "unknown fault (%llu, %llu)";
}

/* --- dense operands ------------------------------------------------------- */

/* Bytes of one element of a dense dtype (enum mxcore_dtype). */
static inline MXCORE_GEOM_FN uint32_t mxcore_dtype_size(uint32_t dtype)
{
	return dtype == MXCORE_BF16 ? 2 : 4;
}

static inline MXCORE_GEOM_FN uint64_t mxcore_dense_stride(uint32_t dtype,
							  uint64_t cols,
							  uint64_t stride)
{
	return stride ? stride : cols * mxcore_dtype_size(dtype);
}

#endif /* MXCORE_GEOM_H */
