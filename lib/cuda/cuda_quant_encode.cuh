/* SPDX-License-Identifier: MIT */
/*
 * The span quantize kernel's fp6/fp4 encoders (cuda_core.cu): fp32 (or
 * packed bf16) arithmetic in place of the core's integer rounding.  Host
 * and device code, so that tests/cuda/test_cuda_encode.cu checks them
 * against the CPU library's quantization on machines without a GPU.
 */
#ifndef MXA_CUDA_QUANT_ENCODE_CUH
#define MXA_CUDA_QUANT_ENCODE_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mxcore.h"

#define QE_FN static __host__ __device__ __forceinline__

QE_FN float qe_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
	return __uint_as_float(u);
#else
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
#endif
}

QE_FN uint32_t qe_bits(float f)
{
#ifdef __CUDA_ARCH__
	return __float_as_uint(f);
#else
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
#endif
}

/* a * b + c and a * b, rounded once to nearest even, subnormals kept. */
QE_FN float qe_fma(float a, float b, float c)
{
#ifdef __CUDA_ARCH__
	return __fmaf_rn(a, b, c);
#else
	return fmaf(a, b, c);
#endif
}

QE_FN float qe_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
	return __fmul_rn(a, b);
#else
	return a * b;
#endif
}

/*
 * Element constants as compile-time values (lib/core/mxcore_elem.c, and
 * rcp_max_f32[] of lib/core/mxcore_quant.c for RCEIL).
 */
template <int E> struct qelem {
	static constexpr int mbits = E == MXCORE_E4M3 || E == MXCORE_E2M3 ? 3 :
				     E == MXCORE_E2M1 ? 1 : 2;
	static constexpr int bias = E == MXCORE_E4M3 ? 7 : E == MXCORE_E5M2 ? 15 :
				    E == MXCORE_E3M2 ? 3 : 1;
	static constexpr int emax = E == MXCORE_E4M3 ? 8 : E == MXCORE_E5M2 ? 15 :
				    E == MXCORE_E3M2 ? 4 : 2;
	static constexpr int code_bits = E == MXCORE_E2M1 ? 4 :
					 E == MXCORE_E4M3 || E == MXCORE_E5M2 ? 8 : 6;
	static constexpr uint32_t max_f32 = E == MXCORE_E4M3 ? 0x43e00000u :
					    E == MXCORE_E5M2 ? 0x47600000u :
					    E == MXCORE_E2M3 ? 0x40f00000u :
					    E == MXCORE_E3M2 ? 0x41e00000u : 0x40c00000u;
	static constexpr uint32_t rcp_max = E == MXCORE_E4M3 ? 0x3b124925u :
					    E == MXCORE_E5M2 ? 0x37924925u :
					    E == MXCORE_E2M3 ? 0x3e088889u :
					    E == MXCORE_E3M2 ? 0x3d124925u : 0x3e2aaaabu;
	/* Where encode_small() leaves the code, and the code's sign bit. */
	static constexpr int shift = 23 - mbits;
	static constexpr int sign_bit = code_bits - 1;
	/* fp32 bits of the smallest normal, 2^(1 - bias). */
	static constexpr uint32_t min_normal = (uint32_t)(127 + 1 - bias) << 23;
	/* 2^(bias - 127): maps the smallest normal to fp32's. */
	static constexpr uint32_t code_scale = (uint32_t)bias << 23;
	/*
	 * encode_floatx() of a NaN.  The only NaN a block's products can be
	 * is 0x7fffffff, the GPU's (and mxcore_f32_mul()'s): a NaN or Inf in
	 * the block makes the scale NaN, its reciprocal NaN and every product
	 * 0x7fffffff; otherwise no product is a NaN.  encode_floatx() takes
	 * it through its normal branch, with wrapping integer arithmetic.
	 */
	static constexpr uint32_t nan_code =
		((0x7fffffffu + ((uint32_t)(bias - 127) << 23) +
		  ((1u << (shift - 1)) - 1) + ((0x7fffffffu >> shift) & 1)) >> shift) & 0xff;
};

/*
 * |y| as an fp6/fp4 code, as encode_floatx() rounds it (to nearest, ties
 * to even code, saturating at the largest finite value) for every y but a
 * NaN, returned shifted up by qelem<E>::shift with no other bit set.
 *
 * Integer rounding of the bit pattern needs a case for the element's
 * subnormals, one for saturation and several operations per element; here
 * fp32 arithmetic does it: p is 2^(exponent of |y|), at least the smallest
 * normal, so p * 2^(23 - mbits) has an ulp of the element's spacing in
 * |y|'s binade (or among its subnormals), and adding it rounds |y| to that
 * spacing once, to nearest even; taking it away again is exact.  The
 * rounded value times 2^(bias - 127) lands the element's smallest normal
 * on fp32's, so that its bits are the code's, shifted up by 23 - mbits.
 */
template <int E>
QE_FN uint32_t encode_small(uint32_t y)
{
	typedef qelem<E> F;
	const float k = (float)(1u << F::shift);
	float a = fminf(fabsf(qe_f32(y)), qe_f32(F::max_f32));
	float p = qe_f32(qe_bits(fmaxf(a, qe_f32(F::min_normal))) & 0x7f800000u);
	float t = qe_fma(p, k, a);

	return qe_bits(qe_mul(qe_fma(p, -k, t), qe_f32(F::code_scale)));
}

/*
 * Two bf16 in one register, both halves at once.  On the host (the
 * encoder test) each half is computed in double, exactly, and rounded
 * once to bf16; NaNs are not modelled.
 */
#ifndef __CUDA_ARCH__
static double qe_bf16_value(uint32_t h)
{
	return (double)qe_f32((h & 0xffffu) << 16);
}

/* x rounded to nearest even bf16 (subnormals down to 2^-133), as bits. */
static uint32_t qe_bf16_round(double x)
{
	double ax = fabs(x), r;
	int e, q;

	if (ax == 0.0)
		return signbit(x) ? 0x8000u : 0;
	frexp(ax, &e);
	q = e - 8 < -133 ? -133 : e - 8;
	r = nearbyint(ldexp(ax, -q));
	return (qe_bits((float)ldexp(r, q)) >> 16) | (x < 0 ? 0x8000u : 0);
}

static uint32_t qe_bf16x2_apply(uint32_t a, uint32_t b, uint32_t c, int op)
{
	uint32_t d = 0;

	for (int h = 0; h < 32; h += 16) {
		double x = qe_bf16_value(a >> h), y = qe_bf16_value(b >> h);
		uint32_t r;

		if (op == 0)
			r = qe_bf16_round(x * y + qe_bf16_value(c >> h));
		else
			r = ((op < 0) == (x < y) ? a : b) >> h & 0xffffu;
		d |= r << h;
	}
	return d;
}
#endif

QE_FN uint32_t bf16x2_fma(uint32_t a, uint32_t b, uint32_t c)
{
#ifdef __CUDA_ARCH__
	uint32_t d;

	asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
	return d;
#else
	return qe_bf16x2_apply(a, b, c, 0);
#endif
}

QE_FN uint32_t bf16x2_min(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
	uint32_t d;

	asm("min.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
	return d;
#else
	return qe_bf16x2_apply(a, b, 0, -1);
#endif
}

QE_FN uint32_t bf16x2_max(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
	uint32_t d;

	asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
	return d;
#else
	return qe_bf16x2_apply(a, b, 0, 1);
#endif
}

/* The bf16 bits of fp32 bits x (exact: x is a bf16 value) in both halves. */
static constexpr __host__ __device__ uint32_t bf16x2_dup(uint32_t x)
{
	return (x >> 16) * 0x10001u;
}

/*
 * encode_small() of two bf16 elements at once, with their signs, for bf16
 * sources (fp32 arithmetic per element costs too many instructions there
 * to keep up with memory): w holds the elements (the even one in the low
 * half), a is w without its sign bits and rcp2 the scale's reciprocal as
 * bf16 in both halves.  Returns each element's code with its sign bit in
 * the low code_bits of its half.
 *
 * A bf16 times a power of two is exact in bf16 unless it falls below
 * 2^-126; there it and the fp32 product are both far below half the
 * element's smallest subnormal, so code 0 either way.  Otherwise the bf16
 * product is the fp32 product, and encode_small()'s steps work in bf16 as
 * they do in fp32: with bf16's 7 mantissa bits, p * 2^(7 - mbits) has the
 * element's spacing as its ulp, the fused multiply-adds round once, and the
 * final product lands on bf16's subnormals as it does on fp32's.  The sign
 * rides on that product (the rounded |y| is never negative; 0 times -2^k
 * is -0), so that the code sits under bf16's sign bit, ready to shift.
 */
template <int E>
QE_FN uint32_t encode_small_bf16x2(uint32_t w, uint32_t a,
							       uint32_t rcp2)
{
	typedef qelem<E> F;
	constexpr uint32_t k = bf16x2_dup((uint32_t)(127 + 7 - F::mbits) << 23);
	constexpr uint32_t neg_k = k | 0x80008000u;
	constexpr uint32_t neg_zero = 0x80008000u;	/* x * y + -0 is x * y */
	uint32_t y = bf16x2_fma(a, rcp2, neg_zero);
	uint32_t p, t, c;

	y = bf16x2_min(y, bf16x2_dup(F::max_f32));
	p = bf16x2_max(y, bf16x2_dup(F::min_normal)) & 0x7f807f80u;
	t = bf16x2_fma(p, k, y);
	c = bf16x2_fma(bf16x2_fma(p, neg_k, t),
		       (w & 0x80008000u) | bf16x2_dup(F::code_scale), neg_zero);
	/* Code bits below bf16's exponent's top bits, which are 0; sign at 15. */
	return ((c >> (7 - F::mbits)) | (c >> (15 - F::sign_bit))) &
	       (((1u << F::code_bits) - 1) * 0x10001u);
}

#endif /* MXA_CUDA_QUANT_ENCODE_CUH */
