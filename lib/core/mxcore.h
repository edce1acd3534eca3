/* SPDX-License-Identifier: MIT */
/*
 * The freestanding MX core: element codecs, E8M0 scales, torchao-exact
 * quantization, and exact block-scaled dot products with a wide fixed-point
 * accumulator.  It uses no libc and no floating point, so the same source is
 * compiled into libmxaccel and into mxaccel.ko, and both produce
 * bit-identical results.  Floats cross this interface as their bit patterns.
 */
#ifndef MXCORE_H
#define MXCORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#ifndef __SIZEOF_INT128__
#error "the MX core needs a compiler with 128-bit integers (64-bit targets)"
#endif

/*
 * Every function of the core is marked MXCORE_FN and every table
 * MXCORE_TABLE.  Both are empty in C; the CUDA plugin defines them as
 * __device__ and compiles the same source for the GPU, so that its
 * quantization and exact GEMM are the core's own code.
 */
#ifndef MXCORE_FN
#define MXCORE_FN
#endif
#ifndef MXCORE_TABLE
#define MXCORE_TABLE
#endif

#define MXCORE_BLOCK 32

/* Values match enum mxa_elem and the uapi. */
enum mxcore_elem {
	MXCORE_E4M3 = 1,
	MXCORE_E5M2 = 2,
	MXCORE_E2M3 = 3,
	MXCORE_E3M2 = 4,
	MXCORE_E2M1 = 5,
};

#define MXCORE_ELEM_FIRST MXCORE_E4M3
#define MXCORE_ELEM_LAST MXCORE_E2M1

enum mxcore_mode {
	MXCORE_FLOOR = 0,
	MXCORE_RCEIL = 1,
	MXCORE_CEIL = 2,
	MXCORE_EVEN = 3,
};

#define MXCORE_MODE_LAST MXCORE_EVEN

enum mxcore_dtype {
	MXCORE_F32 = 0,
	MXCORE_BF16 = 1,
};

#define MXCORE_SCALE_NAN 0xff

/* Special-value flags of a dot product or an accumulator. */
#define MXCORE_NAN	0x1
#define MXCORE_PINF	0x2
#define MXCORE_NINF	0x4

struct mxcore_format {
	uint8_t ebits;
	uint8_t mbits;
	uint8_t bias;
	uint8_t emax;		/* exponent of the largest power of two <= max */
	uint8_t code_bits;	/* 8, 6 or 4 */
	uint8_t max_code;	/* largest finite positive code */
	int8_t k_exp;		/* a code's value is k * 2^k_exp, k an integer */
	uint32_t max_f32;	/* fp32 bits of the largest finite value */
};

MXCORE_FN bool mxcore_elem_valid(unsigned int elem);
MXCORE_FN const struct mxcore_format *mxcore_format(enum mxcore_elem elem);

/*
 * Decode an element code to its exact value k * 2^k_exp (k signed).
 * Returns 0, or MXCORE_NAN / MXCORE_PINF / MXCORE_NINF for special codes
 * (k is then 0).
 */
MXCORE_FN unsigned int mxcore_decode(enum mxcore_elem elem, uint8_t code, int64_t *k);

/* Read element i of a row (handles fp4 nibble packing). */
static inline MXCORE_FN uint8_t mxcore_get_code(enum mxcore_elem elem,
						const uint8_t *row, uint32_t i)
{
	if (elem == MXCORE_E2M1)
		return (row[i >> 1] >> ((i & 1) * 4)) & 0xf;
	return row[i];
}

/* --- floating-point bit patterns, emulated with integers --------------- */

/*
 * Round (-1)^neg * (mag + s) * 2^exp to a float with mbits mantissa bits and
 * fp32's exponent range (mbits 23: fp32, 7: bf16), round to nearest even,
 * overflow to Inf.  s is 0 < s < 1 ulp of mag when sticky, else 0.  Returns
 * the bit pattern (16 bits for bf16).
 */
MXCORE_FN uint32_t mxcore_round_float(bool neg, uint64_t mag, int exp, bool sticky,
				      unsigned int mbits);
/* fp32 a*b rounded to nearest even; NaN results are 0x7fffffff. */
MXCORE_FN uint32_t mxcore_f32_mul(uint32_t a, uint32_t b);
/* fp32 a/b rounded to nearest even; NaN results are 0x7fffffff. */
MXCORE_FN uint32_t mxcore_f32_div(uint32_t a, uint32_t b);
static inline MXCORE_FN bool mxcore_f32_isnan(uint32_t x)
{
	return (x & 0x7fffffffu) > 0x7f800000u;
}

/* --- scales and quantization (bit-exact with torchao to_mx) ------------ */

/* E8M0 scale of a block whose largest |x| has fp32 bits amax. */
MXCORE_FN uint8_t mxcore_scale(enum mxcore_elem elem, enum mxcore_mode mode,
			       uint32_t amax);
/*
 * Quantize 32 fp32 values (bit patterns).  Writes 32 codes to out (fp4: 16
 * packed bytes, element 2i in the low nibble) and returns the E8M0 scale.
 */
MXCORE_FN uint8_t mxcore_quantize_block(enum mxcore_elem elem, enum mxcore_mode mode,
					const uint32_t x[MXCORE_BLOCK], uint8_t *out);
/*
 * NVFP4 (torchao nvfp4_quantize / NVFP4Tensor.dequantize): 16 e2m1
 * elements with one UE4M3 scale, and an optional fp32 per-tensor scale
 * (bits; 0 = single level).  Quantize 16 fp32 values (bit patterns) to 8
 * packed bytes (element 2i low) and return the scale's e4m3 code:
 *   s   = e4m3(clamp(amax / 6 [/ tensor_scale], 2^-6, 448))   (RNE)
 *   out = e2m1(clamp(x * r, -6, 6)),  r = 1 / s, or (1 / tensor_scale) / s
 * every operation one fp32 rounding to nearest even.
 */
#define MXCORE_NVFP4_BLOCK 16
MXCORE_FN uint8_t mxcore_nvfp4_quantize_block(const uint32_t x[MXCORE_NVFP4_BLOCK],
					      uint32_t tensor_scale, uint8_t *out);
/*
 * Dequantize one NVFP4 element: e2m1 * (s, or tensor_scale * s), each
 * product rounded to fp32, then to dtype.
 */
MXCORE_FN uint32_t mxcore_nvfp4_dequantize(uint8_t code, uint8_t scale,
					   uint32_t tensor_scale,
					   enum mxcore_dtype dtype);
/* The fp32 bits of a float8_e4m3fn code (exact; NaN codes 0x7fc00000). */
MXCORE_FN uint32_t mxcore_e4m3_to_f32(uint8_t code);

/* Dequantize one element: value * 2^(scale-127) rounded to dtype. */
MXCORE_FN uint32_t mxcore_dequantize(enum mxcore_elem elem, uint8_t code, uint8_t scale,
				     enum mxcore_dtype dtype);

/* Sizes, strides and scale positions of operands: mxcore_geom.h. */

/* --- exact GEMM arithmetic ---------------------------------------------- */

/*
 * Exact wide fixed-point accumulator: two's complement, least significant
 * bit 2^-MXCORE_ACC_LSB.  704 bits hold every product the core adds
 * exactly:
 *   MX x MX                       2^-286 .. 2^291 per block of 32
 *   NVFP4 x NVFP4, two subnormal  2^-318 (e2m1 2^-1 * UE4M3 2^-9 *
 *   fp32 tensor scales               fp32 2^-149, per side) .. 2^283
 *   fp32 x MX or NVFP4 (weight    2^-308 (fp32 2^-149 * 2^-159) .. 2^281
 *   only)
 *   fp32 / bf16 C                 2^-149 .. 2^128
 * and leaves 2^54 blocks of carries above the largest product before the
 * sign bit (2^373).
 */
#define MXCORE_ACC_LIMBS 11
#define MXCORE_ACC_LSB 330

struct mxcore_acc {
	uint64_t limb[MXCORE_ACC_LIMBS];
	unsigned int flags;
};

MXCORE_FN void mxcore_acc_init(struct mxcore_acc *acc);
/* acc += v * 2^exp, exp >= -MXCORE_ACC_LSB. */
MXCORE_FN void mxcore_acc_add(struct mxcore_acc *acc, __int128 v, int exp);
/* acc += an fp32 (mbits 23) or bf16 (mbits 7, bits in the low half) value. */
MXCORE_FN void mxcore_acc_add_float(struct mxcore_acc *acc, uint32_t bits,
				    enum mxcore_dtype dtype);
/* The exact sum rounded once to dtype (NaN: 0x7fc00000 / 0x7fc0). */
MXCORE_FN uint32_t mxcore_acc_round(const struct mxcore_acc *acc,
				    enum mxcore_dtype dtype);

/* Decode a block of 32 codes; returns the OR of their special flags. */
MXCORE_FN unsigned int mxcore_decode_block(enum mxcore_elem elem, const uint8_t *codes,
					   int64_t k[MXCORE_BLOCK]);

/*
 * acc += (sum ka[i] * kb[i]) * 2^exp for two decoded blocks without special
 * codes; exp = k_exp(a) + k_exp(b) + sa - 127 + sb - 127.
 */
MXCORE_FN void mxcore_acc_dot_decoded(struct mxcore_acc *acc, const int64_t *ka,
				      const int64_t *kb, int exp);

/*
 * acc += the exact dot product of one 32-element block of a (codes at a,
 * scale sa) with one of b.  Special values set acc->flags.
 */
MXCORE_FN void mxcore_acc_block_dot(struct mxcore_acc *acc,
				    enum mxcore_elem ea, const uint8_t *a, uint8_t sa,
				    enum mxcore_elem eb, const uint8_t *b, uint8_t sb);

/* --- exact GEMM with UE4M3 (NVFP4) scales, mixed blocks, dense fp32 ---- */

/*
 * A block scale is an exact value sig * 2^exp: E8M0 s is 1 * 2^(s - 127),
 * a UE4M3 code (float8_e4m3fn; a set sign bit makes it negative, as in
 * dequantization) is its 4-bit significand times 2^(e - 10), subnormals
 * m * 2^-9.  An fp32 per-tensor scale is its 24-bit significand times a
 * power of two.  Products of elements, block scales
 * and tensor scales are therefore integers times powers of two, and the
 * core adds them exactly: nothing is rounded before mxcore_acc_round().
 */
enum mxcore_scale_type {
	MXCORE_SCALE_E8M0 = 0,	/* values match enum mxa_scale_type, uapi */
	MXCORE_SCALE_UE4M3 = 1,
};

#define MXCORE_SCALE_TYPE_LAST MXCORE_SCALE_UE4M3

/* How one operand's values are made: value = code * scale [* tensor]. */
struct mxcore_scaling {
	uint32_t elem;		/* enum mxcore_elem */
	uint32_t scale_type;	/* enum mxcore_scale_type */
	uint32_t tensor_scale;	/* fp32 bits; 0 = none (UE4M3 two-level) */
};

/*
 * Decode a scale byte to sig * 2^exp.  Returns MXCORE_NAN for NaN scales
 * (E8M0 0xff, UE4M3 0x7f and 0xff; sig is then 0), else 0.
 */
MXCORE_FN unsigned int mxcore_scale_decode(unsigned int scale_type, uint8_t s,
					   int64_t *sig, int *exp);
/*
 * Decode fp32 bits to sig * 2^exp (sig signed, 24 bits at most, 0 for
 * zeros).  Returns MXCORE_NAN / MXCORE_PINF / MXCORE_NINF for non-finite
 * values (sig 0), else 0.
 */
MXCORE_FN unsigned int mxcore_f32_decode(uint32_t bits, int64_t *sig, int *exp);
/*
 * The factor a tensor scale contributes: its decoded value, or 1 * 2^0
 * for 0 (single level).  A non-finite tensor scale returns its flag;
 * callers treat it as NaN (library and driver reject it first).
 */
MXCORE_FN unsigned int mxcore_tensor_scale_decode(uint32_t bits, int64_t *sig,
						  int *exp);

/*
 * acc += (sum_{i<n} ka[i] * kb[i]) * sig * 2^exp for decoded codes without
 * special values.  Exact when |sum| * |sig| < 2^126: n <= 32 codes of the
 * core's formats (|k| < 2^32) with |sig| < 2^56 (two UE4M3 scales times
 * two fp32 significands) whenever either side has 16-element segments,
 * or sig = 1 for MX x MX blocks of 32.
 */
MXCORE_FN void mxcore_acc_dot_scaled(struct mxcore_acc *acc, const int64_t *ka,
				     const int64_t *kb, unsigned int n,
				     int64_t sig, int exp);

/*
 * acc += the exact dot product of n consecutive elements (a segment: 16
 * when either side has UE4M3 scales, else 32) of a and b, each lying in
 * one block: codes at a (e2m1: the segment starts on a byte) with block
 * scale sa, and likewise b.  Handles special codes and NaN scales (a NaN
 * scale makes the result NaN, as a NaN E8M0 scale does; Inf * 0 is NaN,
 * with zero meaning a zero code, scale or tensor scale).
 */
MXCORE_FN void mxcore_acc_seg_dot(struct mxcore_acc *acc, unsigned int n,
				  const struct mxcore_scaling *fa,
				  const uint8_t *a, uint8_t sa,
				  const struct mxcore_scaling *fb,
				  const uint8_t *b, uint8_t sb);

/*
 * Weight-only GEMM: acc += sum_{i<n} x[i] * value(b_i), x fp32 bits (bf16
 * widened by << 16), b_i element i of the codes at b (n <= the block; one
 * block scale sb), value(b_i) = code * scale [* tensor scale].  Exact,
 * with IEEE special values (NaN, Inf * 0 = NaN, signed Inf).
 */
MXCORE_FN void mxcore_acc_dense_dot(struct mxcore_acc *acc, const uint32_t *x,
				    unsigned int n,
				    const struct mxcore_scaling *fb,
				    const uint8_t *b, uint8_t sb);
/*
 * The same on pre-decoded weights without special values: kb[i] the
 * codes' integers, sig * 2^exp the product of code unit, block scale and
 * tensor scale (k_exp + scale exp [+ tensor exp]).  x may hold NaN/Inf.
 */
MXCORE_FN void mxcore_acc_dense_dot_decoded(struct mxcore_acc *acc,
					    const uint32_t *x, const int64_t *kb,
					    unsigned int n, int64_t sig, int exp);

#endif /* MXCORE_H */
