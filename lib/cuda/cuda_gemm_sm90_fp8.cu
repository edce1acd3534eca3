// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90-fp8 (and the fp8 kernel the bf16 and decode paths hand
 * their unfoldable tiles to): the kernel and its launcher.
 *
 * The fp8 kernel:
 *
 * Elements become fp8 exactly, scales stay per 32-block and exact:
 *
 * - e4m3 and e5m2 codes are fp8 already and go to the tensor cores as they
 *   are.  e2m3, e3m2 and e2m1 codes are re-encoded as e4m3 bytes whose value
 *   is the element's value times a fixed power of two (2^-6, 2^-4, 2^-6):
 *   the narrow format's exponent and mantissa bits become the low bits of
 *   e4m3's, which maps normals to normals and subnormals to subnormals
 *   without rounding.  The power of two is applied to the final sum.
 * - Per CTA tile (64 or 128 rows of A by 16, 64 or 128 rows of B), a
 *   producer warpgroup streams K in stages of 128 (four MX blocks) with the
 *   tensor memory accelerator (128-byte swizzle), converts fp6/fp4 stages
 *   in shared memory, and turns each block's E8M0 scales into fp32 powers
 *   of two.
 * - Consumer warpgroups run one wgmma m64nNk32 per MX block into a zeroed
 *   fp32 partial and promote it: acc += partial * (2^sa * 2^sb), exact
 *   scaling (in two steps where 2^(sa + sb) is not a normal fp32:
 *   promote_fma()), one fp32 rounding per block (design section 4: fp32
 *   accumulation, any order).  The tile's two column halves alternate, so
 *   that the tensor cores compute one half while the other is promoted.
 * - Small M (<= 64) swaps the operands (C^T = B * A^T) so that the long
 *   dimension fills the 64-row wgmma side and M uses N = 16 or 64.
 *
 * Operands whose data or row stride is not 16-byte aligned (the tensor
 * memory accelerator needs it) are first copied into aligned scratch.
 * Accuracy and limits: Documentation/cuda.rst.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_bf16.h>

#include "cuda_internal.cuh"
#include "cuda_wgmma.cuh"
#include "cuda_sm90.cuh"

namespace {

constexpr int STAGES = 4;

enum conv_kind { CONV_NONE = 0, CONV_E2M3, CONV_E3M2, CONV_E2M1 };

#ifdef SM90_CODE
/* The idx-th tile of this CTA's walk. */
__device__ __forceinline__ void tile_of(const struct sm90_fp8_params &p, uint32_t idx,
					uint32_t *tile_m, uint32_t *tile_n)
{
	if (p.list) {
		uint32_t id = p.list[idx];

		*tile_m = id / p.tiles_n;
		*tile_n = id % p.tiles_n;
	} else {
		/* Grouped raster: eight tile rows share the B tiles in L2. */
		const uint32_t group = 8, per = group * p.tiles_n;
		uint32_t first = idx / per * group;
		uint32_t gm = min(p.tiles_m - first, group);

		*tile_m = first + idx % per % gm;
		*tile_n = idx % per / gm;
	}
}
#endif

/* BM = 64 * WM rows of A by BN rows of B per CTA. */
template <int BN, int WM> struct layout {
	static constexpr int BM = 64 * WM;
	static constexpr int A_BYTES = BM * 128;
	static constexpr int B_BYTES = BN * 128;
	static constexpr int STA_BYTES = BM * 64;
	static constexpr int STB_BYTES = BN * 64;
	static constexpr int A_OFF = 0;
	static constexpr int B_OFF = A_OFF + STAGES * A_BYTES;
	static constexpr int STA_OFF = B_OFF + STAGES * B_BYTES;
	static constexpr int STB_OFF = STA_OFF + STAGES * STA_BYTES;
	static constexpr int SFA_OFF = STB_OFF + STAGES * STB_BYTES;
	static constexpr int SFB_OFF = SFA_OFF + STAGES * 4 * BM * 4;
	/* E8M0 bytes as the tensor memory accelerator brings them. */
	static constexpr int SRA_OFF = SFB_OFF + STAGES * 4 * BN * 4;
	static constexpr int SRB_OFF = SRA_OFF + STAGES * 4 * BM;
	static constexpr int BAR_OFF = SRB_OFF + STAGES * ((4 * BN + 127) / 128 * 128);
	static constexpr int BYTES = BAR_OFF + 3 * STAGES * 8;
	/* Dynamic shared memory: the layout plus room to align it to 1024. */
	static constexpr int SMEM = BYTES + 1024;
	static_assert(B_BYTES % 1024 == 0 && STB_BYTES % 1024 == 0,
		      "swizzle atoms need 1024-byte alignment");
};

#ifdef SM90_CODE

/* Registers per thread after setmaxnreg, with two consumer warpgroups. */
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;

/* R rows x 4 blocks of E8M0 bytes -> fp32, by n threads. */
template <int R>
__device__ __forceinline__ void convert_scales(const uint8_t *raw, float *sf,
					       int tid, int n)
{
	for (int i = tid; i < R; i += n) {
		uint32_t w = *(const uint32_t *)(raw + 4 * i);

		sf[4 * i + 0] = e8m0_to_f32(w & 0xff);
		sf[4 * i + 1] = e8m0_to_f32((w >> 8) & 0xff);
		sf[4 * i + 2] = e8m0_to_f32((w >> 16) & 0xff);
		sf[4 * i + 3] = e8m0_to_f32(w >> 24);
	}
}

/* Make a stage of R rows into e4m3 in place (fp6) or from staging (fp4). */
template <int R>
__device__ __forceinline__ void stage_convert(int conv, uint8_t *dst,
					      const uint8_t *staging, int tid, int n)
{
	if (conv == CONV_E2M1) {
		for (int i = tid; i < R * 8; i += n) {
			int r = i / 8, c = i % 8;
			uint2 v = *(const uint2 *)(staging + r * 64 + c * 8);
			uint2 lo = e2m1x8_to_e4m3(v.x), hi = e2m1x8_to_e4m3(v.y);

			*(uint4 *)(dst + r * 128 + ((c ^ (r & 7)) * 16)) =
				make_uint4(lo.x, lo.y, hi.x, hi.y);
		}
	} else if (conv != CONV_NONE) {
		for (int i = tid; i < R * 8; i += n) {
			uint4 *q = (uint4 *)(dst + i * 16);
			uint4 v = *q;

			if (conv == CONV_E2M3)
				v = make_uint4(e2m3_to_e4m3(v.x), e2m3_to_e4m3(v.y),
					       e2m3_to_e4m3(v.z), e2m3_to_e4m3(v.w));
			else
				v = make_uint4(e3m2_to_e4m3(v.x), e3m2_to_e4m3(v.y),
					       e3m2_to_e4m3(v.z), e3m2_to_e4m3(v.w));
			*q = v;
		}
	}
}

/* acc += p * (2^sa(row) * 2^sb(col)) for one MX block (promote_fma()). */
template <int BN>
__device__ __forceinline__ void promote(float *acc, const float *p,
					const float *sfa, const float *sfb,
					int r0, int lane)
{
	float sa0 = sfa[r0], sa1 = sfa[r0 + 8];

#pragma unroll
	for (int i = 0; i < BN / 8; i++) {
		float2 sb = *(const float2 *)(sfb + 8 * i + 2 * (lane % 4));

		acc[4 * i + 0] = promote_fma(p[4 * i + 0], sa0, sb.x, acc[4 * i + 0]);
		acc[4 * i + 1] = promote_fma(p[4 * i + 1], sa0, sb.y, acc[4 * i + 1]);
		acc[4 * i + 2] = promote_fma(p[4 * i + 2], sa1, sb.x, acc[4 * i + 2]);
		acc[4 * i + 3] = promote_fma(p[4 * i + 3], sa1, sb.y, acc[4 * i + 3]);
	}
}

__device__ __forceinline__ void store_c(const struct sm90_fp8_params &p, uint32_t i,
					uint32_t j, float v)
{
	uint64_t at;

	if (i >= p.a.rows || j >= p.b.rows)
		return;
	at = p.transposed ? (uint64_t)j * p.out.stride + i :
			    (uint64_t)i * p.out.stride + j;
	store_c_value(p.out, at, v * p.post);
}

#endif /* SM90_CODE */

/*
 * WM x WN consumer warpgroups, each 64 rows by BN / WN columns; DBUF: two
 * partials in flight (block j + 1 on the tensor cores while block j is
 * promoted).
 */
template <int BN, int WM, int WN, int TA, int TB, bool DBUF>
__global__ void __launch_bounds__((WM * WN + 1) * 128, 1)
gemm_sm90_kernel(const __grid_constant__ CUtensorMap tma_a,
		 const __grid_constant__ CUtensorMap tma_b,
		 const __grid_constant__ CUtensorMap tma_sa,
		 const __grid_constant__ CUtensorMap tma_sb,
		 const struct sm90_fp8_params p)
{
#if defined(__CUDA_ARCH__) && defined(SM90_CODE)
	using L = layout<BN, WM>;
	constexpr int NC = WM * WN;
	constexpr int BM = L::BM;
	extern __shared__ uint8_t smem_raw[];
	uint8_t *smem = smem_align1024(smem_raw);
	uint64_t *tmafull = (uint64_t *)(smem + L::BAR_OFF);
	uint64_t *full = tmafull + STAGES;
	uint64_t *empty = full + STAGES;
	const int wg = threadIdx.x / 128;
	const uint32_t blocks = p.a.blocks;
	const uint32_t kt = (blocks + 3) / 4;
	/* One tile per CTA, or a persistent walk of the list. */
	const uint32_t first = p.list ? blockIdx.x : 0;
	const uint32_t ntiles = p.list ? *p.list_count : 1;
	const uint32_t stride = p.list ? gridDim.x : 1;
	uint32_t tile_m, tile_n;

	if (first >= ntiles)
		return;

	if (threadIdx.x == 0) {
		/* full: the 96 threads that convert a stage arrive on it when done. */
		for (int s = 0; s < STAGES; s++)
			mbar_init(&full[s], 96);
		init_pipeline(tmafull, empty, STAGES, NC * 128);
	}
	__syncthreads();

	if (wg == NC) {
		/*
		 * Producer warpgroup.  Warp 0 issues the tensor memory
		 * accelerator's copies as far ahead as the stages allow; warps
		 * 1-3 turn each stage, once it has landed, into what the
		 * consumers read: scales as fp32, fp6/fp4 codes as e4m3.
		 */
		const int tid = threadIdx.x - NC * 128;
		const bool fp4a = p.a.conv == CONV_E2M1, fp4b = p.b.conv == CONV_E2M1;
		const uint32_t bytes = (fp4a ? 64 : 128) * BM + (fp4b ? 64 : 128) * BN +
				       4 * BM + 4 * BN;

		if (NC == 2)
			asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(PRODUCER_REGS));
		if (tid == 0) {
			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_a) : "memory");
			asm volatile("prefetch.tensormap [%0];" :: "l"((uint64_t)&tma_b) : "memory");
			for (uint32_t idx = first, g0 = 0; idx < ntiles; idx += stride, g0 += kt) {
				tile_of(p, p.list ? idx : blockIdx.x, &tile_m, &tile_n);
				const uint32_t row_a = tile_m * BM, row_b = tile_n * BN;

				for (uint32_t it = 0; it < kt; it++) {
					const int s = (g0 + it) % STAGES;
					const uint32_t ph = ((g0 + it) / STAGES) & 1;

					mbar_wait(&empty[s], ph ^ 1);
					mbar_expect_tx(&tmafull[s], bytes);
					tma_load_2d(smem + (fp4a ? L::STA_OFF + s * L::STA_BYTES :
							       L::A_OFF + s * L::A_BYTES),
						    &tma_a, &tmafull[s],
						    (int)(it * (fp4a ? 64 : 128)), (int)row_a);
					tma_load_2d(smem + (fp4b ? L::STB_OFF + s * L::STB_BYTES :
							       L::B_OFF + s * L::B_BYTES),
						    &tma_b, &tmafull[s],
						    (int)(it * (fp4b ? 64 : 128)), (int)row_b);
					tma_load_2d(smem + L::SRA_OFF + s * 4 * BM, &tma_sa,
						    &tmafull[s], (int)row_a, (int)(it * 4));
					tma_load_2d(smem + L::SRB_OFF + s * ((4 * BN + 127) / 128 * 128),
						    &tma_sb, &tmafull[s], (int)row_b, (int)(it * 4));
				}
			}
		} else if (tid >= 32) {
			const int ct = tid - 32;

			for (uint32_t g = 0; g < (ntiles - first + stride - 1) / stride * kt; g++) {
				const int s = g % STAGES;
				const uint32_t ph = (g / STAGES) & 1;

				mbar_wait(&tmafull[s], ph);
				convert_scales<BM>(smem + L::SRA_OFF + s * 4 * BM,
						   (float *)(smem + L::SFA_OFF) + s * 4 * BM,
						   ct, 96);
				convert_scales<BN>(smem + L::SRB_OFF +
						   s * ((4 * BN + 127) / 128 * 128),
						   (float *)(smem + L::SFB_OFF) + s * 4 * BN,
						   ct, 96);
				if (p.a.conv != CONV_NONE || p.b.conv != CONV_NONE) {
					stage_convert<BM>(p.a.conv,
							  smem + L::A_OFF + s * L::A_BYTES,
							  smem + L::STA_OFF + s * L::STA_BYTES,
							  ct, 96);
					stage_convert<BN>(p.b.conv,
							  smem + L::B_OFF + s * L::B_BYTES,
							  smem + L::STB_OFF + s * L::STB_BYTES,
							  ct, 96);
					fence_proxy_async();
				}
				mbar_arrive(&full[s]);
			}
		}
	} else {
		/* Consumers: wgmma per MX block, fp32 promotion. */
		constexpr int HN = BN / WN;		/* wgmma N */
		constexpr int HR = HN / 2;		/* floats per thread */
		const int wm = wg % WM, wn = wg / WM;
		const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
		const int r0 = wm * 64 + warp * 16 + lane / 4;
		float acc[HR], p0[HR], p1[DBUF ? HR : 1];

		if (NC == 2)
			asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(CONSUMER_REGS));
		for (uint32_t idx = first, g0 = 0; idx < ntiles; idx += stride, g0 += kt) {
			tile_of(p, p.list ? idx : blockIdx.x, &tile_m, &tile_n);
#pragma unroll
			for (int i = 0; i < HR; i++)
				acc[i] = p0[i] = 0.0f;
#pragma unroll
			for (int i = 0; i < (DBUF ? HR : 1); i++)
				p1[i] = 0.0f;

			for (uint32_t it = 0; it < kt; it++) {
				const int s = (g0 + it) % STAGES;
				const uint32_t ph = ((g0 + it) / STAGES) & 1;
				const uint32_t nb = min(blocks - it * 4, 4u);
				const float *sfa = (const float *)(smem + L::SFA_OFF) + s * 4 * BM;
				const float *sfb = (const float *)(smem + L::SFB_OFF) + s * 4 * BN +
						   wn * HN;
				/* Block j is 32 bytes into each row: +2 in a descriptor. */
				const uint64_t da = make_desc(smem_addr(smem + L::A_OFF + s * L::A_BYTES +
									wm * 64 * 128));
				const uint64_t db = make_desc(smem_addr(smem + L::B_OFF + s * L::B_BYTES +
									wn * HN * 128));

				mbar_wait(&tmafull[s], ph);
				mbar_wait(&full[s], ph);
				if constexpr (DBUF) {
					if (nb == 4) {
						fence_regs<HR>(p0);
						fence_regs<HR>(p1);
						wgmma_fence();
						wgmma_fp8<HN, TA, TB>::mma(p0, da, db);
						wgmma_commit();
						wgmma_fp8<HN, TA, TB>::mma(p1, da + 2, db + 2);
						wgmma_commit();
						wgmma_wait<1>();
						fence_regs<HR>(p0);
						promote<HN>(acc, p0, sfa, sfb, r0, lane);
						fence_regs<HR>(p0);
						wgmma_fence();
						wgmma_fp8<HN, TA, TB>::mma(p0, da + 4, db + 4);
						wgmma_commit();
						wgmma_wait<1>();
						fence_regs<HR>(p1);
						promote<HN>(acc, p1, sfa + BM, sfb + BN, r0, lane);
						fence_regs<HR>(p1);
						wgmma_fence();
						wgmma_fp8<HN, TA, TB>::mma(p1, da + 6, db + 6);
						wgmma_commit();
						wgmma_wait<1>();
						fence_regs<HR>(p0);
						promote<HN>(acc, p0, sfa + 2 * BM, sfb + 2 * BN, r0, lane);
						wgmma_wait<0>();
						fence_regs<HR>(p1);
						promote<HN>(acc, p1, sfa + 3 * BM, sfb + 3 * BN, r0, lane);
						mbar_arrive(&empty[s]);
						continue;
					}
				}
				/* One partial at a time (and the last, short stage). */
				for (uint32_t j = 0; j < nb; j++) {
					fence_regs<HR>(p0);
					wgmma_fence();
					wgmma_fp8<HN, TA, TB>::mma(p0, da + 2 * j, db + 2 * j);
					wgmma_commit();
					wgmma_wait<0>();
					fence_regs<HR>(p0);
					promote<HN>(acc, p0, sfa + j * BM, sfb + j * BN, r0, lane);
				}
				mbar_arrive(&empty[s]);
			}

			/* Epilogue: thread holds rows r0, r0 + 8 and column pairs. */
			{
				const uint32_t gi = tile_m * BM + r0;
				const uint32_t gj = tile_n * BN + wn * HN + 2 * (lane % 4);

#pragma unroll
				for (int i = 0; i < HN / 8; i++) {
					store_c(p, gi, gj + 8 * i, acc[4 * i + 0]);
					store_c(p, gi, gj + 8 * i + 1, acc[4 * i + 1]);
					store_c(p, gi + 8, gj + 8 * i, acc[4 * i + 2]);
					store_c(p, gi + 8, gj + 8 * i + 1, acc[4 * i + 3]);
				}
			}
		}
	}
#endif
}

int conv_of(enum mxa_elem e)
{
	switch (e) {
	case MXA_ELEM_E2M3:
		return CONV_E2M3;
	case MXA_ELEM_E3M2:
		return CONV_E3M2;
	case MXA_ELEM_E2M1:
		return CONV_E2M1;
	default:
		return CONV_NONE;
	}
}

template <int BN, int WM, int WN, int TA, int TB, bool DBUF>
int launch_inst(struct cuda_device *cd, const CUtensorMap &ma,
		const CUtensorMap &mb, const CUtensorMap &msa,
		const CUtensorMap &msb, const struct sm90_fp8_params &p)
{
	using L = layout<BN, WM>;
	static_assert(L::SMEM <= 227 * 1024, "more shared memory than a block gets");
	static unsigned long long configured;
	auto kernel = gemm_sm90_kernel<BN, WM, WN, TA, TB, DBUF>;
	int ret = sm90_allow_smem(cd, kernel, L::SMEM, &configured);

	if (ret)
		return ret;
	/* A list of tiles is walked by at most one CTA per SM. */
	kernel<<<p.list ? min(p.tiles_m * p.tiles_n, (uint32_t)cd->sms) :
			  p.tiles_m * p.tiles_n,
		 (WM * WN + 1) * 128, L::SMEM, cd->stream>>>(
		ma, mb, msa, msb, p);
	return 0;
}

typedef int (*launch_fn)(struct cuda_device *, const CUtensorMap &,
			 const CUtensorMap &, const CUtensorMap &,
			 const CUtensorMap &, const struct sm90_fp8_params &);

/*
 * [config][ta][tb].  Configs: 128 x 128 tiles with two consumer
 * warpgroups (64 x 128 each) and two partials in flight, the same with one
 * partial, four consumer warpgroups of 64 x 64 each, and the swapped
 * small-M tiles 64 x 64 and 64 x 16.
 */
#define LAUNCHERS(bn, wm, wn, dbuf) \
	{ { launch_inst<bn, wm, wn, 0, 0, dbuf>, launch_inst<bn, wm, wn, 0, 1, dbuf> }, \
	  { launch_inst<bn, wm, wn, 1, 0, dbuf>, launch_inst<bn, wm, wn, 1, 1, dbuf> } }

const launch_fn launchers[5][2][2] = {
	LAUNCHERS(128, 2, 1, true),
	LAUNCHERS(128, 2, 1, false),
	LAUNCHERS(128, 2, 2, false),
	LAUNCHERS(64, 1, 1, true),
	LAUNCHERS(16, 1, 1, true),
};

const int config_bn[5] = { 128, 128, 128, 64, 16 };
const int config_bm[5] = { 128, 128, 128, 64, 64 };

} /* namespace */

struct sm90_fp8_operand sm90_fp8_operand_of(const struct mxa_matrix *m)
{
	struct sm90_fp8_operand o;

	o.rows = m->rows;
	o.blocks = m->cols / 32;
	o.conv = conv_of(m->elem);
	return o;
}

int sm90_fp8_tile_m(int cfg)
{
	return config_bm[cfg];
}

int sm90_fp8_tile_n(int cfg)
{
	return config_bn[cfg];
}

int sm90_fp8_smem(void)
{
	return layout<128, 2>::SMEM;
}

int sm90_launch_fp8(struct cuda_device *cd, int cfg, bool e5m2_a, bool e5m2_b,
		    const CUtensorMap *maps, const struct sm90_fp8_params &p)
{
	return launchers[cfg][e5m2_a][e5m2_b](cd, maps[0], maps[1], maps[2],
					      maps[3], p);
}
