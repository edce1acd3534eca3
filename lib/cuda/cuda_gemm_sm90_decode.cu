// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90-decode: C = A B^T with 32 < M <= 64 (any M <= 64 when
 * forced by MXACCEL_KERNEL), reading B's codes once and converting them in
 * registers.
 *
 * Decode is bound by the bytes of the long operand (B, weights), so B gets
 * no pre-pass and no shared memory conversion.  The operands are swapped
 * (X = B, N rows; Y = A, M rows padded to 64; C^T = X Y^T), and each CTA
 * takes 64 rows of X over all of K:
 *
 * - Y is converted to bf16 with its scales folded in by the bf16 kernel's
 *   pre-pass (sm90_prep_bf16()), a few KB, so that its tiles come by the
 *   tensor memory accelerator ready for wgmma (converting it in the kernel
 *   put global memory latency on every chunk);
 * - warp 0 of the producer warpgroup streams X's codes (64-byte or 32-byte
 *   swizzle) and Y's bf16 (128-byte swizzle), eight stages deep;
 * - the consumer warpgroup computes its rows' maximum scales from X's
 *   scale bytes (read where they are, plain or swizzled), converts X's
 *   codes in registers and runs wgmma m64n64k16 with A from registers, two
 *   chunks of 64 per synchronization.
 *
 * M <= 32 goes to the skinny kernel (cuda_gemm_sm90_skinny.cu), measured
 * faster; without it the fp8 kernel took M <= 16.
 *
 * Exactness is the bf16 kernel's (Documentation/cuda.rst); a tile with
 * NaN/Inf codes, a NaN scale or a scale span too wide writes nothing and
 * goes on the fp8 kernel's list (its swapped tiles are these tiles).
 */
#include <errno.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_bf16.h>

#include "cuda_internal.cuh"
#include "cuda_wgmma.cuh"
#include "cuda_sm90.cuh"
#include "cuda_sm90_fold.cuh"

namespace {

constexpr int BM = 64, KC = 64, STAGES = 8;

template <int BN> struct layout {
	static constexpr int YB_BYTES = BN * KC * 2;
	static constexpr int XR_BYTES = BM * KC;
	static constexpr int YB_OFF = 0;
	static constexpr int XR_OFF = YB_OFF + STAGES * YB_BYTES;
	static constexpr int BAR_OFF = XR_OFF + STAGES * XR_BYTES;
	static constexpr int BAD_OFF = BAR_OFF + 2 * STAGES * 8;
	static constexpr int BYTES = BAD_OFF + 16;
	static constexpr int SMEM = BYTES + 1024;
	static_assert(YB_BYTES % 1024 == 0 && XR_OFF % 1024 == 0,
		      "swizzle atoms need 1024-byte alignment");
};

#ifdef SM90_CODE

/* Byte of an operand's scale for row r, block kb (plain or swizzled). */
__device__ __forceinline__ uint32_t scale_at(const struct sm90_mx_operand &o,
					     uint32_t r, uint32_t kb)
{
	return o.scale[sm90_scale_index(o.swizzled, o.scale_stride, o.swz_tiles, r, kb)];
}

/* 1 if row r has a NaN UE4M3 scale (0x7f, 0xff) in blocks q, q + step, ... */
__device__ __forceinline__ uint32_t row_nan(const struct sm90_mx_operand &o,
					    uint32_t blocks, uint32_t r, uint32_t q,
					    uint32_t step)
{
	uint32_t n = 0;

	if (r >= o.rows)
		return 0;
	for (uint32_t kb = q; kb < blocks; kb += step)
		n |= (scale_at(o, r, kb) & 0x7f) == 0x7f;
	return n;
}

/* Largest scale but NaN of row r over blocks q, q + step, ... */
__device__ __forceinline__ uint32_t row_max(const struct sm90_mx_operand &o,
					    uint32_t blocks, uint32_t r, uint32_t q,
					    uint32_t step)
{
	uint32_t m = 0;

	if (r >= o.rows)
		return 0;
	for (uint32_t kb = q; kb < blocks; kb += step) {
		uint32_t s = scale_at(o, r, kb);

		m = s != 0xff && s > m ? s : m;
	}
	return m;
}

/* What a consumer thread's main loop needs. */
struct consumer {
	uint8_t *smem;
	uint64_t *tmafull, *empty;
	const struct sm90_decode_args *p;
	uint32_t kt, row0;
	int r0, q;
	uint32_t ra[2];
};

/*
 * This thread's X fragment of chunk it: rows r0 and r0 + 8 of the tile
 * (frag_row()), scales from global memory.  NV (NVFP4): elements 16q to
 * 16q + 15 of the chunk are UE4M3 block 4 it + q, folded exactly by
 * ue4m3_multiplier() (NaN scales give 0: the row's flag makes C NaN).
 */
template <int EX, int BN, bool NV>
__device__ __forceinline__ void load_frag(const struct consumer &c, uint32_t it,
					  uint32_t *f, uint32_t *flag)
{
	using L = layout<BN>;
	const int s = it % STAGES;
	const uint32_t ph = (it / STAGES) & 1;
	const uint8_t *raw = c.smem + L::XR_OFF + s * L::XR_BYTES;
	const uint32_t kb = NV ? it * 4 + c.q : it * 2 + (c.q >> 1);
	const bool valid = kb < (NV ? c.p->blocks16 : c.p->blocks);
	uint32_t sc[2];

	for (int h = 0; h < 2; h++) {
		uint32_t r = c.row0 + c.r0 + 8 * h;

		sc[h] = valid && r < c.p->x.rows ? scale_at(c.p->x, r, kb) : NV ? 0 : c.ra[h];
	}
	mbar_wait(&c.tmafull[s], ph);
#pragma unroll
	for (int h = 0; h < 2; h++) {
		uint32_t nan = 0;
		const uint32_t m = NV ? ue4m3_multiplier(sc[h], &nan) :
				   multiplier(EX, sc[h], c.ra[h], valid, flag);

		*flag |= frag_row<EX>(raw, c.r0 + 8 * h, c.q, h, m, f);
	}
}

/*
 * Chunks 2 pr and 2 pr + 1 on the tensor cores; then the fragments of the
 * next pair.  Two chunks per step: the work between synchronizations is
 * small at N = 16, so a pair halves their cost and lets the conversions
 * of two chunks overlap.
 */
template <int EX, int BN, bool NV>
__device__ __forceinline__ void step(const struct consumer &c, uint32_t pr,
				     float *acc, uint32_t *cur, uint32_t *nxt,
				     uint32_t *flag)
{
	using L = layout<BN>;
	const uint32_t a = 2 * pr, b = a + 1;
	const uint64_t da = make_desc(smem_addr(c.smem + L::YB_OFF + (a % STAGES) * L::YB_BYTES));
	const uint64_t db = make_desc(smem_addr(c.smem + L::YB_OFF + (b % STAGES) * L::YB_BYTES));

	fence_regs<BN / 2>(acc);
	fence_u32<32>(cur);
	wgmma_fence();
#pragma unroll
	for (int sl = 0; sl < 4; sl++)
		wgmma_bf16_rs<BN>::mma(acc, cur + 4 * sl, da + 2 * sl);
#pragma unroll
	for (int sl = 0; sl < 4; sl++)
		wgmma_bf16_rs<BN>::mma(acc, cur + 16 + 4 * sl, db + 2 * sl);
	wgmma_commit();
	wgmma_wait<1>();
	fence_regs<BN / 2>(acc);
	fence_u32<32>(nxt);
	if (pr > 0) {
		mbar_arrive(&c.empty[(a - 2) % STAGES]);
		mbar_arrive(&c.empty[(a - 1) % STAGES]);
	}
	if (a + 2 < c.kt) {
		load_frag<EX, BN, NV>(c, a + 2, nxt, flag);
		load_frag<EX, BN, NV>(c, a + 3, nxt + 16, flag);
	}
}

/* C[j][i] = D[i][j] * 2^(R_x[i] + R_y[j] - 254) (+ C_in), rounded once. */
__device__ __forceinline__ void store_t(const struct sm90_decode_args &p,
					uint32_t i, uint32_t j, float v, int e)
{
	uint64_t at;

	if (i >= p.x.rows || j >= p.y.rows)
		return;
	at = (uint64_t)j * p.out.stride + i;
	store_c_value(p.out, at, scale_pow2(v, e));
}

/* NVFP4: C[j][i] = D[i][j] * 2^16 * t1 * t2 (+ C_in), NaN where flagged. */
__device__ __forceinline__ void store_nv(const struct sm90_decode_args &p,
					 uint32_t i, uint32_t j, float v, uint32_t nan)
{
	if (i >= p.x.rows || j >= p.y.rows)
		return;
	store_c_value(p.out, (uint64_t)j * p.out.stride + i,
		      nan ? __uint_as_float(0x7fc00000u) : v * 0x1p16f * p.t1 * p.t2);
}

#endif /* SM90_CODE */

template <int EX, int BN, bool NV>
__global__ void __launch_bounds__(256, 2)
gemm_sm90_decode_kernel(const __grid_constant__ CUtensorMap tma_x,
			const __grid_constant__ CUtensorMap tma_y,
			const struct sm90_decode_args p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = layout<BN>;
	extern __shared__ uint8_t smem_raw[];
	uint8_t *smem = smem_align1024(smem_raw);
	uint64_t *tmafull = (uint64_t *)(smem + L::BAR_OFF);
	uint64_t *empty = tmafull + STAGES;
	volatile uint32_t *bad = (volatile uint32_t *)(smem + L::BAD_OFF);
	/* Chunks of 64, an even number (past K the copies are zero). */
	const uint32_t kt = ((p.blocks + 1) / 2 + 1) & ~1u;
	const uint32_t tile = blockIdx.x, row0 = tile * BM;

	/* Y cannot be done exactly here: the whole product is the fp8 kernel's. */
	if (*p.bad_y) {
		if (threadIdx.x == 0)
			p.list[atomicAdd(p.list_count, 1)] = tile;
		return;
	}
	if (threadIdx.x == 0) {
		init_pipeline(tmafull, empty, STAGES, 128);
		*bad = 0;
	}
	__syncthreads();

	if (threadIdx.x >= 128) {
		if (threadIdx.x == 128) {
			constexpr int cbx = EX == SM90_E2M1 ? KC / 2 : KC;

			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_x) : "memory");
			for (uint32_t it = 0; it < kt; it++) {
				const int s = it % STAGES;
				const uint32_t ph = (it / STAGES) & 1;

				mbar_wait(&empty[s], ph ^ 1);
				mbar_expect_tx(&tmafull[s], cbx * BM + L::YB_BYTES);
				tma_load_2d(smem + L::XR_OFF + s * L::XR_BYTES, &tma_x,
					    &tmafull[s], (int)(it * cbx), (int)row0);
				tma_load_2d(smem + L::YB_OFF + s * L::YB_BYTES, &tma_y,
					    &tmafull[s], (int)(it * KC * 2), 0);
			}
		}
	} else {
		const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
		const int q = lane % 4, r0 = warp * 16 + lane / 4;
		uint32_t ra[2], flag = 0;
		float acc[BN / 2];
		uint32_t fa[32], fb[32];

		/*
		 * Row maxima (NVFP4: NaN-scale flags): each of a row's four
		 * threads takes every fourth block.
		 */
		for (int h = 0; h < 2; h++) {
			uint32_t m = NV ? row_nan(p.x, p.blocks16, row0 + r0 + 8 * h, q, 4) :
					  row_max(p.x, p.blocks, row0 + r0 + 8 * h, q, 4);

			m = max(m, __shfl_xor_sync(0xffffffffu, m, 1));
			ra[h] = max(m, __shfl_xor_sync(0xffffffffu, m, 2));
		}
		const struct consumer cs = {
			smem, tmafull, empty, &p, kt, row0, r0, q, { ra[0], ra[1] },
		};

#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			acc[i] = 0.0f;
		const uint32_t kp = kt / 2;

		load_frag<EX, BN, NV>(cs, 0, fa, &flag);
		load_frag<EX, BN, NV>(cs, 1, fa + 16, &flag);
		for (uint32_t pr = 0; pr < kp; pr += 2) {
			step<EX, BN, NV>(cs, pr, acc, fa, fb, &flag);
			if (pr + 1 < kp)
				step<EX, BN, NV>(cs, pr + 1, acc, fb, fa, &flag);
		}
		wgmma_wait<0>();
		fence_regs<BN / 2>(acc);
		fence_u32<32>(fa);
		fence_u32<32>(fb);
		mbar_arrive(&empty[(kt - 2) % STAGES]);
		mbar_arrive(&empty[(kt - 1) % STAGES]);

		/* All or nothing per tile: the fp8 kernel redoes a bad one. */
		if (flag)
			*bad = 1;
		asm volatile("bar.sync 1, 128;" ::: "memory");
		if (*bad) {
			if (threadIdx.x == 0)
				p.list[atomicAdd(p.list_count, 1)] = tile;
			return;
		}
		if constexpr (NV) {
#pragma unroll
			for (int i = 0; i < BN / 8; i++) {
				const uint32_t j = 8 * i + 2 * q;
				const uint32_t n0 = j < p.y.rows ? p.rmax_y[j] : 0;
				const uint32_t n1 = j + 1 < p.y.rows ? p.rmax_y[j + 1] : 0;

				store_nv(p, row0 + r0, j, acc[4 * i + 0], ra[0] | n0);
				store_nv(p, row0 + r0, j + 1, acc[4 * i + 1], ra[0] | n1);
				store_nv(p, row0 + r0 + 8, j, acc[4 * i + 2], ra[1] | n0);
				store_nv(p, row0 + r0 + 8, j + 1, acc[4 * i + 3], ra[1] | n1);
			}
		} else {
#pragma unroll
			for (int i = 0; i < BN / 8; i++) {
				const uint32_t j = 8 * i + 2 * q;
				const int e0 = j < p.y.rows ? (int)p.rmax_y[j] : 0;
				const int e1 = j + 1 < p.y.rows ? (int)p.rmax_y[j + 1] : 0;

				store_t(p, row0 + r0, j, acc[4 * i + 0], (int)ra[0] + e0 - 254);
				store_t(p, row0 + r0, j + 1, acc[4 * i + 1], (int)ra[0] + e1 - 254);
				store_t(p, row0 + r0 + 8, j, acc[4 * i + 2], (int)ra[1] + e0 - 254);
				store_t(p, row0 + r0 + 8, j + 1, acc[4 * i + 3], (int)ra[1] + e1 - 254);
			}
		}
	}
#endif
}

template <int EX, int BN, bool NV = false>
int launch_inst(struct cuda_device *cd, const CUtensorMap *maps,
		const struct sm90_decode_args &p)
{
	using L = layout<BN>;
	static unsigned long long configured;
	int ret = sm90_allow_smem(cd, gemm_sm90_decode_kernel<EX, BN, NV>, L::SMEM, &configured);

	if (ret)
		return ret;
	gemm_sm90_decode_kernel<EX, BN, NV><<<p.tiles, 256, L::SMEM, cd->stream>>>(
		maps[0], maps[1], p);
	return 0;
}

template <int BN>
int launch_bn(struct cuda_device *cd, const CUtensorMap *maps,
	      const struct sm90_decode_args &p)
{
	if (p.nvfp4)
		return launch_inst<SM90_E2M1, BN, true>(cd, maps, p);
	switch (p.x.elem) {
	case SM90_E5M2:
		return launch_inst<SM90_E5M2, BN>(cd, maps, p);
	case SM90_E2M3:
		return launch_inst<SM90_E2M3, BN>(cd, maps, p);
	case SM90_E3M2:
		return launch_inst<SM90_E3M2, BN>(cd, maps, p);
	case SM90_E2M1:
		return launch_inst<SM90_E2M1, BN>(cd, maps, p);
	default:
		return launch_inst<SM90_E4M3, BN>(cd, maps, p);
	}
}

} /* namespace */

int sm90_launch_decode(struct cuda_device *cd, const CUtensorMap *maps,
		       const struct sm90_decode_args &p)
{
	return launch_bn<64>(cd, maps, p);
}
