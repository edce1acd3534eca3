// SPDX-License-Identifier: MIT
/*
 * The NVFP4 rows for AVX-512: one block of 16 is one zmm of fp32.
 * Quantization is bit-exact with the core's mxcore_nvfp4_quantize_block()
 * (torchao's nvfp4_quantize()), whose steps it follows in hardware fp32:
 *
 * - amax: integer maximum of |x| per block, 16 blocks at a time by a
 *   transpose tree of two-vector shuffles (a bf16 row compares its
 *   elements two to a 32-bit lane, two blocks to a load); the 16 then go
 *   through the scale steps as one vector;
 * - the block scale amax / 6 (and / tensor_scale) by vdivps: IEEE
 *   division rounded to nearest even, the very operation torchao runs in
 *   fp32 and the core reproduces on integers (it must be freestanding);
 *   callers run with MXCSR at its default (cpu_fpenv.h), so subnormal
 *   quotients are neither flushed nor read as zero;
 * - torch.clamp() to [2^-6, 448] on the bits, as unsigned integers (as
 *   the core's clamp_pos(): a negative quotient clamps to 448), then the
 *   core's round to nearest even into UE4M3 (always normal here) and the
 *   exact fp32 value of the code;
 * - the reciprocal 1 / s, or (1 / tensor_scale) / s, by vdivps, and the
 *   elements x * r by vmulps;
 * - e2m1 codes: +-6 and above saturate, below 1.0 adding 2^22 in fp32
 *   rounds to a multiple of 0.5 with ties to even (the core's
 *   subnormal_code()), the rest by the core's integer rounding; nibbles
 *   packed (odd << 4 | even).  A bf16 row takes two blocks at a time,
 *   its even elements widened by a shift and its odd ones by a mask, so
 *   that each lane's two codes make its byte.
 *
 * What takes NaN bits into account is left to the core: a block with a
 * NaN (NaN amax), a block where x * r is NaN (0 * Inf after a tensor
 * scale whose reciprocal overflows), and a row whose tensor scale is NaN,
 * infinite or -0 go through mxcore_nvfp4_quantize_block(), since NaN
 * payloads and signs from the hardware need not be the core's.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "../../cpu_quant.h"

#define NV_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define NV __attribute__((always_inline, \
	target("avx512f,avx512bw,avx512vl,avx512dq")))

#define F32_ABS		0x7fffffff
#define F32_INF		0x7f800000
#define F32_SIX		0x40c00000
#define F32_E4M3_TINY	0x3c800000	/* 2^-6 */
#define F32_E4M3_MAX	0x43e00000	/* 448 */
#define F32_ONE		0x3f800000
#define NV_BLOCK	MXCORE_NVFP4_BLOCK

/* Elements [i0, i0 + 16) of an fp32 or bf16 row, as fp32 bits. */
static inline NV __m512i nv_load(const uint8_t *in, bool bf16, size_t i0)
{
	if (bf16)
		return _mm512_slli_epi32(_mm512_cvtepu16_epi32(
			_mm256_loadu_si256((const void *)(in + 2 * i0))), 16);
	return _mm512_loadu_si512(in + 4 * i0);
}

/*
 * A constant the compiler must keep in a register: GCC otherwise makes
 * each splat again inside the block loop from a general register, a
 * shuffle-port uop per constant per block (quant_body.h's qv_pin()).
 */
static inline NV __m512i nv_pin(__m512i x)
{
	__asm__("" : "+v"(x));
	return x;
}

/* The e2m1 encoder's constants, made once per row. */
struct nv_enc {
	__m512i abs, sign, magic, round, one, f32_one, six, seven;
};

static inline NV void nv_enc_init(struct nv_enc *k)
{
	k->abs = nv_pin(_mm512_set1_epi32(F32_ABS));
	k->sign = nv_pin(_mm512_set1_epi32(0x80000000u));
	k->magic = nv_pin(_mm512_set1_epi32((127 - 1 + 23) << 23));
	/* the core's encode_floatx(): bias 1, one mantissa bit */
	k->round = nv_pin(_mm512_set1_epi32((int)(((1u - 127) << 23) +
						 (1u << 21) - 1)));
	k->one = nv_pin(_mm512_set1_epi32(1));
	k->f32_one = nv_pin(_mm512_set1_epi32(F32_ONE));
	k->six = nv_pin(_mm512_set1_epi32(F32_SIX));
	k->seven = nv_pin(_mm512_set1_epi32(7));
}

/* e2m1 codes (low nibble of each lane) of 16 non-NaN fp32 values. */
static inline NV __m512i nv_encode_e2m1(const struct nv_enc *k, __m512i y)
{
	__m512i ay = _mm512_and_si512(y, k->abs);
	__m512i sign = _mm512_srli_epi32(_mm512_and_si512(y, k->sign), 28);
	__m512i sub, nrm, code;

	sub = _mm512_sub_epi32(_mm512_castps_si512(_mm512_add_ps(
		_mm512_castsi512_ps(ay), _mm512_castsi512_ps(k->magic))),
		k->magic);
	nrm = _mm512_add_epi32(ay, k->round);
	nrm = _mm512_add_epi32(nrm, _mm512_and_si512(_mm512_srli_epi32(ay, 22),
						     k->one));
	nrm = _mm512_srli_epi32(nrm, 22);
	code = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(ay, k->f32_one),
				       nrm, sub);
	code = _mm512_mask_blend_epi32(_mm512_cmpge_epu32_mask(ay, k->six),
				       code, k->seven);
	return _mm512_or_si512(code, sign);
}

/* pack_uint4(): lanes 2i, 2i + 1 to byte i, (odd << 4 | even). */
static inline NV void nv_store_codes(__m512i code, uint8_t *out)
{
	__m512i p = _mm512_or_si512(code, _mm512_srli_epi64(code, 28));

	_mm_storel_epi64((void *)out, _mm512_cvtepi64_epi8(p));
}

/* One block by the core (the NaN cases of the comment above). */
static uint8_t nv_block_core(const uint8_t *in, bool bf16, size_t i0,
			     uint32_t ts, uint8_t *out)
{
	uint32_t x[NV_BLOCK];
	unsigned int i;

	for (i = 0; i < NV_BLOCK; i++) {
		if (bf16) {
			uint16_t h;

			memcpy(&h, in + 2 * (i0 + i), 2);
			x[i] = (uint32_t)h << 16;
		} else {
			memcpy(&x[i], in + 4 * (i0 + i), 4);
		}
	}
	return mxcore_nvfp4_quantize_block(x, ts, out);
}

/* max(shuffle(a, b, lo), shuffle(a, b, hi)): one level of the tree. */
static inline NV __m512i nv_fold(__m512i a, __m512i b, __m512i lo, __m512i hi)
{
	return _mm512_max_epu32(_mm512_permutex2var_epi32(a, lo, b),
				_mm512_permutex2var_epi32(a, hi, b));
}

/*
 * Lane b of the result: the maximum of the lanes of block b's vector,
 * for 16 vectors (one per block), by a tree of two-vector shuffles.  The
 * tree's first level leaves, per pair of vectors, blocks 2i and 2i + 1
 * reduced to lanes 0-7 and 8-15 of one vector: where the input already
 * has that shape (bf16 rows, two blocks to a load) it starts at r[].
 */
static inline NV __m512i nv_tree_max(const __m512i *r)
{
	__m512i q[4], p[2];
	unsigned int i;

	for (i = 0; i < 4; i++)
		q[i] = nv_fold(r[2 * i], r[2 * i + 1],
			       _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16,
						 17, 18, 19, 24, 25, 26, 27),
			       _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20,
						 21, 22, 23, 28, 29, 30, 31));
	for (i = 0; i < 2; i++)
		p[i] = nv_fold(q[2 * i], q[2 * i + 1],
			       _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 16,
						 17, 20, 21, 24, 25, 28, 29),
			       _mm512_setr_epi32(2, 3, 6, 7, 10, 11, 14, 15, 18,
						 19, 22, 23, 26, 27, 30, 31));
	return nv_fold(p[0], p[1],
		       _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
					 22, 24, 26, 28, 30),
		       _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21,
					 23, 25, 27, 29, 31));
}

/*
 * Blocks 2j and 2j + 1 of a bf16 row from element at (64 bytes; only the
 * first 32 when the second block is past nb): the bf16 pairs as they are.
 */
static inline NV __m512i nv_load_pair(const uint8_t *in, size_t at, bool both)
{
	return _mm512_maskz_loadu_epi32(both ? 0xffff : 0x00ff, in + 2 * at);
}

/*
 * Lane b: the largest magnitude (fp32 bits) of block b0 + b, for blocks
 * [b0, b0 + nb); lanes past nb 0.
 */
static inline NV __m512i nv_chunk_amax(const uint8_t *in, bool bf16,
				       uint32_t b0, uint32_t nb)
{
	const __m512i abs = _mm512_set1_epi32(F32_ABS);
	__m512i r[NV_BLOCK / 2];
	unsigned int i;

	if (bf16) {
		/* each lane: the larger of its two bf16 magnitudes */
		for (i = 0; i < NV_BLOCK / 2; i++) {
			__m512i x = _mm512_setzero_si512();

			if (2 * i < nb)
				x = _mm512_and_si512(nv_load_pair(in,
					(size_t)(b0 + 2 * i) * NV_BLOCK,
					2 * i + 1 < nb),
					_mm512_set1_epi32(0x7fff7fff));
			r[i] = _mm512_max_epu32(_mm512_and_si512(x,
						_mm512_set1_epi32(0xffff)),
						_mm512_srli_epi32(x, 16));
		}
		return _mm512_slli_epi32(nv_tree_max(r), 16);
	}
	/* the tree's first level as the blocks are read: fewer live vectors */
	for (i = 0; i < NV_BLOCK / 2; i++) {
		__m512i m[2];
		unsigned int h;

		for (h = 0; h < 2; h++)
			m[h] = 2 * i + h < nb ?
			       _mm512_and_si512(nv_load(in, false,
					(size_t)(b0 + 2 * i + h) * NV_BLOCK),
					abs) :
			       _mm512_setzero_si512();
		r[i] = nv_fold(m[0], m[1],
			       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17,
						 18, 19, 20, 21, 22, 23),
			       _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15,
						 24, 25, 26, 27, 28, 29, 30, 31));
	}
	return nv_tree_max(r);
}

/*
 * UE4M3 scale codes and fp32 reciprocals of 16 blocks from their amax
 * (non-NaN lanes; NaN ones yield garbage and go through the core).
 */
static inline NV __m512i nv_scales(__m512i amax, uint32_t ts,
				  float rcp[NV_BLOCK])
{
	__m512 s = _mm512_div_ps(_mm512_castsi512_ps(amax),
				 _mm512_castsi512_ps(_mm512_set1_epi32(F32_SIX)));
	__m512 one = _mm512_castsi512_ps(_mm512_set1_epi32(F32_ONE));
	__m512i si, code;

	if (ts)
		s = _mm512_div_ps(s, _mm512_castsi512_ps(_mm512_set1_epi32((int)ts)));
	si = _mm512_max_epu32(_mm512_castps_si512(s),
			      _mm512_set1_epi32(F32_E4M3_TINY));
	si = _mm512_min_epu32(si, _mm512_set1_epi32(F32_E4M3_MAX));
	/* encode_fp8(), normal range: bias 7, three mantissa bits */
	code = _mm512_add_epi32(si, _mm512_set1_epi32((int)(((7u - 127) << 23) +
							    (1u << 19) - 1)));
	code = _mm512_add_epi32(code, _mm512_and_si512(_mm512_srli_epi32(si, 20),
						       _mm512_set1_epi32(1)));
	code = _mm512_srli_epi32(code, 20);
	/* mxcore_e4m3_to_f32() of a normal code: exact */
	s = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(code, 20),
				_mm512_set1_epi32((127 - 7) << 23)));
	if (ts)
		one = _mm512_div_ps(one, _mm512_castsi512_ps(
					    _mm512_set1_epi32((int)ts)));
	_mm512_storeu_ps(rcp, _mm512_div_ps(one, s));
	return code;
}

/* Elements read ahead: two chunks of NV_BLOCK blocks. */
#define NV_AHEAD (2 * NV_BLOCK * NV_BLOCK)

/*
 * Blocks 2j and 2j + 1 of a bf16 row (the second only when both), their
 * reciprocals in lanes 0-7 and 8-15 of r2: the even elements widened by
 * a shift and the odd ones by a mask, each encoded as an fp32 row's, then
 * one byte a lane (odd << 4 | even), lanes 0-7 the first block's 8 bytes.
 * False if a product is NaN (only with a non-finite reciprocal), nothing
 * stored then.
 */
static inline NV bool nv_encode_pair(const struct nv_enc *k,
				     const uint8_t *in, size_t at, bool both,
				     __m512 r2, bool rcp_finite, uint8_t *out)
{
	__m512i raw = nv_load_pair(in, at, both);
	__m512 ye = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(raw,
								      16)), r2);
	__m512 yo = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(raw,
				  _mm512_set1_epi32(0xffff0000u))), r2);
	__m128i b;

	if (!rcp_finite && (_mm512_cmp_ps_mask(ye, ye, _CMP_UNORD_Q) |
			    _mm512_cmp_ps_mask(yo, yo, _CMP_UNORD_Q)))
		return false;
	b = _mm512_cvtepi32_epi8(_mm512_or_si512(
		nv_encode_e2m1(k, _mm512_castps_si512(ye)),
		_mm512_slli_epi32(nv_encode_e2m1(k, _mm512_castps_si512(yo)),
				  4)));
	if (both)
		_mm_storeu_si128((void *)out, b);
	else
		_mm_storel_epi64((void *)out, b);
	return true;
}

NV_TARGET void cpu_nvfp4_quantize_row_avx512(const void *src, bool bf16,
					     uint32_t cols,
					     uint32_t tensor_scale,
					     uint8_t *codes, uint8_t *scales)
{
	const uint8_t *in = src;
	uint32_t blocks = cols / NV_BLOCK, b0, nb, i;
	uint32_t ats = tensor_scale & F32_ABS;
	struct nv_enc k;

	if (tensor_scale && (!ats || ats >= F32_INF)) {
		cpu_nvfp4_quantize_row_ref(src, bf16, cols, tensor_scale,
					   codes, scales);
		return;
	}
	nv_enc_init(&k);
	for (b0 = 0; b0 < blocks; b0 += nb) {
		float rcp[NV_BLOCK];
		__mmask16 nan, live;
		__m512i a, sc;
		__m512 rv;
		bool rcp_finite;

		nb = blocks - b0 < NV_BLOCK ? blocks - b0 : NV_BLOCK;
		live = (__mmask16)((1u << nb) - 1);
		a = nv_chunk_amax(in, bf16, b0, nb);
		nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(F32_INF));
		sc = nv_scales(a, tensor_scale, rcp);
		_mm512_mask_cvtepi32_storeu_epi8(scales + b0, live, sc);
		/* then x * r is never NaN for a non-NaN x */
		rv = _mm512_loadu_ps(rcp);
		rcp_finite = !(_mm512_cmpeq_epi32_mask(_mm512_and_si512(
				_mm512_castps_si512(rv),
				_mm512_set1_epi32(F32_INF)),
				_mm512_set1_epi32(F32_INF)) & live);
		for (i = 0; i < nb; i += bf16 ? 2 : 1) {
			size_t at = (size_t)(b0 + i) * NV_BLOCK;
			uint8_t *out = codes + (size_t)(b0 + i) * 8;
			bool both = i + 1 < nb;
			unsigned int j;
			__m512 y;

			/*
			 * The input two chunks ahead into L1 while this one
			 * encodes from it, as quant_body.h's rows do: else
			 * the next chunk's reads wait for this encoding.
			 */
			_mm_prefetch((const char *)in + (at + NV_AHEAD) *
				     (bf16 ? 2 : 4), _MM_HINT_T0);
			if (bf16) {
				/* lanes 0-7 block i's reciprocal, 8-15 the next's */
				__m512 r2 = _mm512_permutexvar_ps(
					_mm512_add_epi32(_mm512_set1_epi32((int)i),
						_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0,
								  1, 1, 1, 1, 1, 1, 1, 1)),
					rv);
				unsigned int pair = both ? 3 : 1;

				if (!((nan >> i) & pair) &&
				    nv_encode_pair(&k, in, at, both, r2,
						   rcp_finite, out))
					continue;
				/* a NaN block (or product): each by the core */
				for (j = 0; j < (both ? 2u : 1u); j++)
					scales[b0 + i + j] = nv_block_core(in, true,
						at + j * NV_BLOCK, tensor_scale,
						out + 8 * j);
				continue;
			}
			if (!(nan & (1u << i))) {
				y = _mm512_mul_ps(_mm512_castsi512_ps(
						nv_load(in, false, at)),
						  _mm512_set1_ps(rcp[i]));
				if (rcp_finite ||
				    !_mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q)) {
					nv_store_codes(nv_encode_e2m1(&k,
						_mm512_castps_si512(y)), out);
					continue;
				}
			}
			scales[b0 + i] = nv_block_core(in, false, at,
						       tensor_scale, out);
		}
	}
}

/*
 * Dequantization, as mxcore_nvfp4_dequantize(): the block's total scale
 * (the UE4M3 value, times the tensor scale by one fp32 multiply) times
 * each element's exact e2m1 value (a table lookup), one fp32 multiply,
 * then bf16 by rounding to nearest even.  A NaN scale, or an element that
 * makes NaN (0 * Inf), sends the block to the core.
 *
 * The fp32 value of a UE4M3 code other than NaN (0x7f, 0xff): exact.
 */
static inline NV float nv_e4m3(uint8_t c)
{
	uint32_t e = (c >> 3) & 0xf, m = c & 7, bits = (e + 120) << 23 | m << 20;
	float v;

	if (e)
		memcpy(&v, &bits, 4);
	else
		v = (float)m * 0x1p-9f;		/* subnormal: m * 2^-9 */
	return c & 0x80 ? -v : v;
}

/* One block of 16 to o; false (nothing stored) if it needs the core. */
static inline NV bool nv_dequant_block(const uint8_t *codes, uint8_t scale,
				       uint32_t tensor_scale, bool bf16,
				       uint8_t *o)
{
	/* e2m1 codes 0-15: +-0, 0.5, 1, 1.5, 2, 3, 4, 6 */
	const __m512 e2m1 = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f,
					   4.0f, 6.0f, -0.0f, -0.5f, -1.0f,
					   -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
	__m128i raw, lo, hi;
	float total, ts;
	__m512i v;

	if ((scale & 0x7f) == 0x7f)
		return false;
	total = nv_e4m3(scale);
	if (tensor_scale) {
		memcpy(&ts, &tensor_scale, 4);
		total = ts * total;
	}
	raw = _mm_loadl_epi64((const void *)codes);
	lo = _mm_and_si128(raw, _mm_set1_epi8(0xf));
	hi = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0xf));
	v = _mm512_castps_si512(_mm512_mul_ps(_mm512_permutexvar_ps(
		_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi)), e2m1),
		_mm512_set1_ps(total)));
	if (_mm512_cmp_ps_mask(_mm512_castsi512_ps(v), _mm512_castsi512_ps(v),
			       _CMP_UNORD_Q))
		return false;
	if (!bf16) {
		_mm512_storeu_si512(o, v);
		return true;
	}
	v = _mm512_add_epi32(v, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
		_mm512_and_si512(_mm512_srli_epi32(v, 16),
				 _mm512_set1_epi32(1))));
	_mm256_storeu_si256((void *)o, _mm512_cvtepi32_epi16(
		_mm512_srli_epi32(v, 16)));
	return true;
}

NV_TARGET void cpu_nvfp4_dequantize_row_avx512(const uint8_t *codes,
					       const uint8_t *scales,
					       uint32_t cols,
					       uint32_t tensor_scale,
					       bool bf16, void *dst)
{
	size_t es = bf16 ? 2 : 4;
	uint8_t *out = dst;
	uint32_t b;

	for (b = 0; b < cols / NV_BLOCK; b++) {
		const uint8_t *c = codes + (size_t)b * 8;
		uint8_t *o = out + (size_t)b * NV_BLOCK * es;

		if (!nv_dequant_block(c, scales[b], tensor_scale, bf16, o))
			cpu_nvfp4_dequantize_row_ref(c, &scales[b], NV_BLOCK,
						     tensor_scale, bf16, o);
	}
}
#endif
