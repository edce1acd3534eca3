// SPDX-License-Identifier: MIT
/*
 * The CUDA span kernel's fp6/fp4 encoders (lib/cuda/cuda_quant_encode.cuh)
 * run on the host against the CPU library's quantization (the core's
 * integer rounding, which the golden vectors tie to torchao), so that the
 * arithmetic argument behind them is checked where there is no GPU:
 *
 * - fp32 sources, encode_small(): every exponent below the point where a
 *   block's scale would change, every 12 high mantissa bits, the 11 low
 *   ones 0, 1, 0x3ff, 0x400, 0x401 and 0x7ff (the rounding point of fp6
 *   and fp4 lies in the high bits, the low ones are its sticky bits), both
 *   signs;
 * - bf16 sources, encode_small_bf16x2(): every bf16 value under every
 *   scale whose blocks can hold it.
 *
 * Each block carries an anchor element that fixes its FLOOR scale, so the
 * CPU's codes for the other 31 elements are the reference.  The GPU runs
 * the same encoders in tests/cuda/test_cuda_quant.c.  Built by nvcc as
 * host code where nvcc is found; needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "mxaccel.h"
#include "cuda_quant_encode.cuh"

static unsigned int failures;
static unsigned long long compared;

/* The CPU's FLOOR quantization of rows x 32 elements: one code per element. */
static void cpu_quantize(struct mxa_device *cpu, enum mxa_elem elem, enum mxa_dtype dt,
			 const void *src, uint32_t rows, std::vector<uint8_t> &codes)
{
	const size_t es = dt == MXA_DTYPE_BF16 ? 2 : 4;
	const size_t cbytes = (size_t)rows * (elem == MXA_ELEM_E2M1 ? 16 : 32);
	struct mxa_buffer *bs = NULL, *bc = NULL, *bsc = NULL;
	std::vector<uint8_t> raw(cbytes);
	int ret;

	ret = mxa_buffer_alloc(cpu, (size_t)rows * 32 * es, &bs);
	if (!ret)
		ret = mxa_buffer_write(bs, 0, src, (size_t)rows * 32 * es);
	if (!ret)
		ret = mxa_buffer_alloc(cpu, cbytes, &bc);
	if (!ret)
		ret = mxa_buffer_alloc(cpu, rows, &bsc);
	if (!ret) {
		struct mxa_dense d = { bs, 0, 0, dt, rows, 32 };
		struct mxa_matrix m = {};

		m.data = bc;
		m.scale = bsc;
		m.elem = elem;
		m.rows = rows;
		m.cols = 32;
		ret = mxa_quantize(cpu, &d, &m, MXA_SCALE_FLOOR, MXA_PREF_AUTO);
	}
	if (!ret)
		ret = mxa_buffer_read(bc, 0, raw.data(), cbytes);
	if (ret) {
		fprintf(stderr, "FAIL: quantize on cpu: %d (%s)\n", ret, mxa_strerror(ret));
		exit(1);
	}
	codes.resize((size_t)rows * 32);
	for (size_t i = 0; i < codes.size(); i++)
		codes[i] = elem == MXA_ELEM_E2M1 ? (raw[i / 2] >> (4 * (i % 2))) & 15 : raw[i];
	mxa_buffer_free(bs);
	mxa_buffer_free(bc);
	mxa_buffer_free(bsc);
}

static void mismatch(const char *what, int elem, uint32_t x, unsigned int scale,
		     uint32_t got, uint32_t want)
{
	if (failures++ < 10)
		fprintf(stderr, "FAIL: %s elem %d input 0x%08x scale %u: code 0x%02x, cpu 0x%02x\n",
			what, elem, x, scale, got, want);
}

/* Blocks of an anchor and 31 values from vals; the anchor's element is skipped. */
/* Whether element i of fill_blocks()' output is a value (not an anchor or padding). */
static bool is_value(size_t i, size_t n)
{
	return i % 32 != 0 && (i / 32) * 31 + i % 32 - 1 < n;
}

template <typename T>
static uint32_t fill_blocks(const std::vector<T> &vals, T anchor, std::vector<T> &src)
{
	const uint32_t rows = (uint32_t)((vals.size() + 30) / 31);

	src.assign((size_t)rows * 32, 0);
	for (uint32_t r = 0; r < rows; r++) {
		src[(size_t)r * 32] = anchor;
		for (uint32_t i = 0; i < 31 && (size_t)r * 31 + i < vals.size(); i++)
			src[(size_t)r * 32 + 1 + i] = vals[(size_t)r * 31 + i];
	}
	return rows;
}

template <int E>
static void check_f32(struct mxa_device *cpu)
{
	typedef qelem<E> F;
	/* |x| < 2^(emax + 1) keeps the anchor 2^emax the block's amax binade: scale 2^0. */
	const uint32_t anchor = (uint32_t)(127 + F::emax) << 23;
	static const uint32_t low[] = { 0, 1, 0x3ff, 0x400, 0x401, 0x7ff };
	std::vector<uint32_t> vals, src;
	std::vector<uint8_t> codes;

	for (uint32_t ex = 0; ex <= (uint32_t)(127 + F::emax); ex++) {
		vals.clear();
		for (uint32_t hi = 0; hi < 4096; hi++)
			for (uint32_t l = 0; l < sizeof(low) / sizeof(low[0]); l++)
				for (uint32_t sign = 0; sign < 2; sign++)
					vals.push_back(sign << 31 | ex << 23 | hi << 11 | low[l]);
		uint32_t rows = fill_blocks(vals, anchor, src);

		cpu_quantize(cpu, (enum mxa_elem)E, MXA_DTYPE_F32, src.data(), rows, codes);
		for (size_t i = 0; i < src.size(); i++) {
			uint32_t x = src[i], got;

			if (!is_value(i, vals.size()))
				continue;
			/* The kernel: the reciprocal is 1, y is x; the sign rides along. */
			got = encode_small<E>(x) >> F::shift | x >> 31 << F::sign_bit;
			compared++;
			if (got != codes[i])
				mismatch("fp32", E, x, 127, got, codes[i]);
		}
	}
}

template <int E>
static void check_bf16(struct mxa_device *cpu)
{
	typedef qelem<E> F;
	std::vector<uint16_t> vals, src;
	std::vector<uint8_t> codes;

	/* Scale s: anchor 2^(s - 127 + emax), which bf16 must hold. */
	for (int s = 0; s + F::emax <= 254; s++) {
		const uint16_t anchor = (uint16_t)((s + F::emax) << 7);
		/* The kernel's reciprocal 2^(127 - s) as bf16 in both halves (qscale_rcp()). */
		const uint32_t rcp = s == 254 ? 0x00400000u : (uint32_t)(254 - s) << 23;
		const uint32_t rcp2 = bf16x2_dup(rcp);
		const uint32_t limit = (uint32_t)(s + F::emax + 1) << 7;

		vals.clear();
		for (uint32_t v = 0; v < 0x10000; v++)
			if ((v & 0x7fff) < limit)
				vals.push_back((uint16_t)v);
		uint32_t rows = fill_blocks(vals, anchor, src);

		cpu_quantize(cpu, (enum mxa_elem)E, MXA_DTYPE_BF16, src.data(), rows, codes);
		for (size_t i = 0; i + 1 < src.size(); i += 2) {
			uint32_t w = src[i] | (uint32_t)src[i + 1] << 16;
			uint32_t m = encode_small_bf16x2<E>(w, w & 0x7fff7fffu, rcp2);

			for (int h = 0; h < 2; h++) {
				size_t at = i + h;
				uint32_t got = m >> (16 * h) & 0xffffu;

				if (!is_value(at, vals.size()))
					continue;
				compared++;
				if (got != codes[at])
					mismatch("bf16", E, src[at], (unsigned int)s, got, codes[at]);
			}
		}
	}
}

int main(void)
{
	struct mxa_device *cpu = NULL;
	int ret = mxa_device_open("cpu", &cpu);

	if (ret) {
		fprintf(stderr, "FAIL: mxa_device_open(\"cpu\") = %d (%s)\n", ret,
			mxa_strerror(ret));
		return 1;
	}
	check_f32<MXCORE_E2M3>(cpu);
	check_f32<MXCORE_E3M2>(cpu);
	check_f32<MXCORE_E2M1>(cpu);
	check_bf16<MXCORE_E2M3>(cpu);
	check_bf16<MXCORE_E3M2>(cpu);
	check_bf16<MXCORE_E2M1>(cpu);
	mxa_device_close(cpu);
	printf("%llu codes of the span kernel's fp6/fp4 encoders compared with the cpu: %u differ\n",
	       compared, failures);
	return failures ? 1 : 0;
}
