// SPDX-License-Identifier: MIT
/*
 * cuda-mx-sm90-*: the fused MX x MX GEMM for Hopper (sm_90a): the
 * operands' preparation, each path's launch sequence, and the fp8 kernel.
 *
 * The paths are kernel-table entries; cuda_sm90_select.cu says which
 * shapes each runs and which the dispatch walk picks.  The skinny kernel
 * (cuda_gemm_sm90_skinny.cu) does everything itself.  The bf16 kernel
 * (cuda_gemm_sm90_bf16.cu, the smaller operand as its pre-converted B)
 * and the decode kernel (cuda_gemm_sm90_decode.cu) leave the tiles they
 * cannot do exactly (NaN/Inf codes, NaN scales, scale spans too wide) to
 * the fp8 kernel below, which walks their list.  The fp8 paths run the
 * fp8 kernel alone.
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
#include <math.h>

#include "cuda_internal.cuh"
#include "cuda_wgmma.cuh"
#include "cuda_sm90.cuh"

namespace {

constexpr int STAGES = 4;

enum conv_kind { CONV_NONE = 0, CONV_E2M3, CONV_E3M2, CONV_E2M1 };

struct operand {
	uint32_t rows, blocks;
	int conv;
};

struct params {
	struct operand a, b;		/* as the kernel sees them (swapped) */
	struct sm90_c out;
	uint32_t tiles_m, tiles_n;
	int transposed;			/* C[j][i] = D[i][j] */
	float post;			/* 2^(fa + fb) */
	/*
	 * Where not NULL: compute only the *list_count tiles in list (m *
	 * tiles_n + n), those the bf16 kernel left, with a persistent grid.
	 */
	const uint32_t *list, *list_count;
};

#ifdef SM90_CODE
/* The idx-th tile of this CTA's walk. */
__device__ __forceinline__ void tile_of(const struct params &p, uint32_t idx,
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

__device__ __forceinline__ void store_c(const struct params &p, uint32_t i,
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
		 const struct params p)
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

/*
 * The scales of an operand as bytes [blocks][rows_pad], K-major, so that a
 * stage's scales are one 2D box for the tensor memory accelerator.  Any
 * plain or swizzled layout goes in; rows past the matrix are 0.  A 32 x
 * SK_COLS tile through shared memory keeps reads and writes coalesced;
 * each thread has 16 loads in flight per tile (32 x 32 tiles, four loads
 * per thread, took 8 us for the row maxima of 8192 x 256 scales: a round
 * trip per tile).
 */
constexpr uint32_t SK_COLS = 128;

struct scale_src {
	const uint8_t *scale;
	uint64_t stride;
	uint32_t rows, blocks, rows_pad;
	uint32_t swz_tiles;		/* Cp / 4 of the swizzled layout */
	int swizzled;
	/* Where not NULL: per row (rows_pad), the largest scale but NaN. */
	uint32_t *rmax;
	/* Where not NULL: nothing to do unless *only_if (a tile list count). */
	const uint32_t *only_if;
};

__global__ void scales_kmajor_kernel(const struct scale_src p, uint8_t *out)
{
	__shared__ uint8_t tile[32][SK_COLS + 4];
	const uint32_t r0 = blockIdx.x * 32;
	const int tx = threadIdx.x, ty = threadIdx.y;
	uint32_t m[4] = { 0, 0, 0, 0 };

	if (p.only_if && !*p.only_if)
		return;
	/*
	 * CTAs over 32 rows by SK_COLS-block column groups; with rmax one CTA walks
	 * a row group's blocks (gridDim.y = 1), so maxima need no atomics.
	 */
	for (uint32_t kb0 = blockIdx.y * SK_COLS; kb0 < p.blocks; kb0 += gridDim.y * SK_COLS) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int i = ty + 8 * j;

#pragma unroll
			for (uint32_t c = 0; c < SK_COLS; c += 32) {
				uint32_t r = r0 + i, kb = kb0 + c + tx;
				uint8_t v = 0;

				if (r < p.rows && kb < p.blocks) {
					v = p.scale[sm90_scale_index(p.swizzled, p.stride,
								 p.swz_tiles, r, kb)];
				}
				tile[i][c + tx] = v;
				m[j] = max(m[j], v == 0xff ? 0u : (uint32_t)v);
			}
		}
		__syncthreads();
		for (uint32_t i = ty; i < SK_COLS; i += 8) {
			uint32_t kb = kb0 + i, r = r0 + tx;

			if (kb < p.blocks && r < p.rows_pad)
				out[(uint64_t)kb * p.rows_pad + r] = tile[tx][i];
		}
		__syncthreads();
	}
	if (p.rmax) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const uint32_t i = ty + 8 * j, v = __reduce_max_sync(0xffffffffu, m[j]);

			if (tx == 0 && r0 + i < p.rows_pad)
				p.rmax[r0 + i] = v;
		}
	}
}

/* --- host side ------------------------------------------------------------------ */

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t,
			      void *, const cuuint64_t *, const cuuint64_t *,
			      const cuuint32_t *, const cuuint32_t *,
			      CUtensorMapInterleave, CUtensorMapSwizzle,
			      CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

pthread_once_t encode_once = PTHREAD_ONCE_INIT;
encode_fn encode;

void encode_load(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = NULL;

	if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
					     12000, cudaEnableDefault,
					     &q) == cudaSuccess &&
	    q == cudaDriverEntryPointSuccess)
		encode = (encode_fn)fn;
}

/*
 * The PTX version this file's kernels were loaded from: 90 for the sm_90a
 * code, 80 where the driver JIT-compiles the compute_80 PTX instead (whose
 * GEMM kernels are empty), as under CUDA_FORCE_PTX_JIT=1.
 */
pthread_once_t code_once = PTHREAD_ONCE_INIT;
int code_ptx;

void code_probe(void)
{
	cudaFuncAttributes a;

	if (cudaFuncGetAttributes(&a, scales_kmajor_kernel) == cudaSuccess)
		code_ptx = a.ptxVersion;
}

/* rows x row_bytes bytes, row stride `stride`, boxes of box_x x box_y. */
int make_map(CUtensorMap *map, const uint8_t *base, uint64_t row_bytes,
	     uint64_t rows, uint64_t stride, uint32_t box_x, uint32_t box_y,
	     CUtensorMapSwizzle swizzle)
{
	cuuint64_t dims[2] = { row_bytes, rows };
	cuuint64_t strides[1] = { stride };
	cuuint32_t box[2] = { box_x, box_y };
	cuuint32_t estr[2] = { 1, 1 };
	CUresult r;

	r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, (void *)base, dims,
		   strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
		   swizzle,
		   CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
		   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		return cuda_err(-EIO, "cuda-mx-sm90: cuTensorMapEncodeTiled: error %d (rows %llu, row bytes %llu, stride %llu)",
				(int)r, (unsigned long long)rows,
				(unsigned long long)row_bytes,
				(unsigned long long)stride);
	return 0;
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

/* log2 of element value / e4m3 byte value after conversion. */
int shift_of(enum mxa_elem e)
{
	switch (e) {
	case MXA_ELEM_E2M3:
	case MXA_ELEM_E2M1:
		return 6;
	case MXA_ELEM_E3M2:
		return 4;
	default:
		return 0;
	}
}

/*
 * An operand's data, 16-byte aligned: in place when it is, else copied into
 * stream-ordered scratch (*scratch, freed by the caller after the launch).
 */
int aligned_data(struct cuda_device *cd, const struct mxa_matrix *m,
		 const uint8_t **data, uint64_t *stride, void **scratch)
{
	const uint8_t *d = cuda_ptr(m->data, m->data_offset);
	struct mxcore_geom g = mxa__geom(m);
	uint64_t s = mxcore_geom_data_stride(&g);
	uint64_t row = mxcore_geom_row_bytes(&g);
	cudaError_t e;

	*scratch = NULL;
	if (!((uintptr_t)d & 15) && !(s & 15)) {
		*data = d;
		*stride = s;
		return 0;
	}
	e = cudaMallocAsync(scratch, row * m->rows, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemcpy2DAsync(*scratch, row, d, s, row, m->rows,
				      cudaMemcpyDeviceToDevice, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: aligned copy");
	*data = (const uint8_t *)*scratch;
	*stride = row;
	return 0;
}

struct operand make_operand(const struct mxa_matrix *m)
{
	struct operand o;

	o.rows = m->rows;
	o.blocks = m->cols / 32;
	o.conv = conv_of(m->elem);
	return o;
}

/*
 * An operand's scales K-major, [blocks][rows_pad], in stream-ordered
 * scratch (*scratch, freed by the caller after the launches); with rmax,
 * also each row's largest scale but NaN, in the same scratch after them.
 */
int kmajor_scales(struct cuda_device *cd, const struct mxa_matrix *m,
		  bool rmax, const uint32_t *only_if, void **scratch,
		  uint32_t *rows_pad)
{
	struct scale_src src;
	size_t bytes, rmax_off;
	cudaError_t e;

	src.scale = cuda_ptr(m->scale, m->scale_offset);
	src.stride = mxa__scale_stride(m);
	src.rows = m->rows;
	src.blocks = m->cols / 32;
	src.rows_pad = (m->rows + 15) / 16 * 16;
	src.swz_tiles = (src.blocks + 3) / 4;
	src.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	rmax_off = ((size_t)src.rows_pad * src.blocks + 15) / 16 * 16;
	bytes = rmax_off + (rmax ? (size_t)src.rows_pad * 4 : 0);
	*rows_pad = src.rows_pad;
	e = cudaMallocAsync(scratch, bytes, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: scale scratch");
	src.rmax = rmax ? (uint32_t *)((uint8_t *)*scratch + rmax_off) : NULL;
	src.only_if = only_if;
	scales_kmajor_kernel<<<dim3((src.rows_pad + 31) / 32,
				    rmax ? 1 : (src.blocks + SK_COLS - 1) / SK_COLS),
			       dim3(32, 8), 0, cd->stream>>>(src, (uint8_t *)*scratch);
	return 0;
}

const uint32_t *rmax_of(const void *scratch, const struct mxa_matrix *m)
{
	uint32_t rows_pad = (m->rows + 15) / 16 * 16;

	return (const uint32_t *)((const uint8_t *)scratch +
				  ((size_t)rows_pad * (m->cols / 32) + 15) / 16 * 16);
}

template <int BN, int WM, int WN, int TA, int TB, bool DBUF>
int launch_inst(struct cuda_device *cd, const CUtensorMap &ma,
		const CUtensorMap &mb, const CUtensorMap &msa,
		const CUtensorMap &msb, const struct params &p)
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
			 const CUtensorMap &, const struct params &);

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

enum sm90_elem sm90_elem_of(enum mxa_elem e)
{
	switch (e) {
	case MXA_ELEM_E5M2:
		return SM90_E5M2;
	case MXA_ELEM_E2M3:
		return SM90_E2M3;
	case MXA_ELEM_E3M2:
		return SM90_E3M2;
	case MXA_ELEM_E2M1:
		return SM90_E2M1;
	default:
		return SM90_E4M3;
	}
}

uint64_t row_bytes(const struct mxa_matrix *m)
{
	struct mxcore_geom g = mxa__geom(m);

	return mxcore_geom_row_bytes(&g);
}

/*
 * m's codes at data (row stride bytes) in boxes of KC elements by
 * box_rows rows, swizzled as the bf16 kernels' A and the decode kernel's
 * X read them.
 */
int map_codes(CUtensorMap *map, const struct mxa_matrix *m, const uint8_t *data,
	      uint64_t stride, uint32_t box_rows)
{
	const bool fp4 = m->elem == MXA_ELEM_E2M1;

	return make_map(map, data, row_bytes(m), m->rows, stride,
			fp4 ? SM90_BF16_KC / 2 : SM90_BF16_KC, box_rows,
			fp4 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_64B);
}

/* The bf16 operand sm90_prep_bf16(p) writes, in boxes of KC by box_rows. */
int map_prepped(CUtensorMap *map, const struct sm90_prep_args &p, uint32_t box_rows)
{
	const uint64_t bytes = (uint64_t)(p.blocks + 1) / 2 * SM90_BF16_KC * 2;

	return make_map(map, p.out, bytes, p.rows, bytes, SM90_BF16_KC * 2, box_rows,
			CU_TENSOR_MAP_SWIZZLE_128B);
}

/*
 * The bf16 kernel's scratch: B in bf16 (rows x 128 bytes per chunk of
 * 64), then a flag per tile column and per tile row, then the count and
 * list of the fp8 kernel's tiles (128 x 128) left to it, then A in bf16
 * (at a_offset()).
 */
/*
 * sm90_prep_bf16()'s arguments for y (codes at yd, row stride ys; scales
 * K-major at ysc with row maxima rmax): bf16 into out, a flag per
 * 2^tile_shift rows in bad_tiles.
 */
struct sm90_prep_args prep_args(const struct mxa_matrix *y, const uint8_t *yd, uint64_t ys,
				const void *ysc, const uint32_t *rmax, uint8_t *out,
				uint32_t *bad_tiles, uint32_t tile_shift)
{
	struct sm90_prep_args pb;

	pb.data = yd;
	pb.stride = ys;
	pb.rows = y->rows;
	pb.blocks = y->cols / 32;
	pb.rows_pad = (y->rows + 15) / 16 * 16;
	pb.elem = sm90_elem_of(y->elem);
	pb.scales = (const uint8_t *)ysc;
	pb.rmax = rmax;
	pb.out = out;
	pb.bad_tiles = bad_tiles;
	pb.tile_shift = tile_shift;
	return pb;
}

size_t bf16_b_bytes(const struct mxa_matrix *y)
{
	return (size_t)y->rows * ((y->cols / 32 + 1) / 2) * SM90_BF16_KC * 2;
}

size_t list_offset(const struct mxa_matrix *x, const struct mxa_matrix *y)
{
	return bf16_b_bytes(y) + (y->rows + SM90_BF16_BN - 1) / SM90_BF16_BN * 4 +
	       (x->rows + SM90_BF16_BM - 1) / SM90_BF16_BM * 4;
}

size_t a_offset(const struct mxa_matrix *x, const struct mxa_matrix *y, uint32_t fp_tiles)
{
	return (list_offset(x, y) + 4 + (size_t)fp_tiles * 4 + 1023) / 1024 * 1024;
}

/*
 * B (and A, with prep_a: the cuda-mx-sm90-bf16-ss kernel) to bf16, then
 * the bf16 kernel: x, y as the
 * fp8 kernel takes them (A and B), their codes 16-byte aligned, their
 * scales K-major with row maxima (kmajor_scales()).  The list of tiles it
 * leaves for the fp8 kernel is at list_offset() in *scratch (freed by the
 * caller after the launches).
 */
int launch_bf16(struct cuda_device *cd, const struct mxa_matrix *x,
		const uint8_t *xd, uint64_t xs, const void *xsc,
		const struct mxa_matrix *y, const uint8_t *yd, uint64_t ys,
		const void *ysc, const struct params &fp, bool prep_a, void **scratch)
{
	const uint32_t xpad = (x->rows + 15) / 16 * 16;
	const size_t a_off = a_offset(x, y, fp.tiles_m * fp.tiles_n);
	struct sm90_bf16_args b;
	struct sm90_prep_args pa, pb;
	size_t flags;
	CUtensorMap maps[3];
	cudaError_t e;
	int ret;

	b.m = x->rows;
	b.n = y->rows;
	b.blocks = x->cols / 32;
	b.elem_a = sm90_elem_of(x->elem);
	b.out = fp.out;
	b.transposed = fp.transposed;
	b.tiles_m = (b.m + SM90_BF16_BM - 1) / SM90_BF16_BM;
	b.tiles_n = (b.n + SM90_BF16_BN - 1) / SM90_BF16_BN;
	b.rmax_a = rmax_of(xsc, x);
	b.rmax_b = rmax_of(ysc, y);
	b.tiles_n8 = fp.tiles_n;
	flags = list_offset(x, y) + 4 - bf16_b_bytes(y);
	e = cudaMallocAsync(scratch, prep_a ? a_off + bf16_b_bytes(x) : a_off, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync((uint8_t *)*scratch + bf16_b_bytes(y), 0, flags,
				    cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: bf16 scratch");
	b.bad_cols = (const uint32_t *)((uint8_t *)*scratch + bf16_b_bytes(y));
	b.bad_rows = b.bad_cols + b.tiles_n;
	b.list_count = (uint32_t *)((uint8_t *)*scratch + list_offset(x, y));
	b.list = b.list_count + 1;

	static_assert(SM90_BF16_BN == 1 << 8 && SM90_BF16_BM == 1 << 7,
		      "flags per tile by shifts");
	pb = prep_args(y, yd, ys, ysc, b.rmax_b, (uint8_t *)*scratch,
		       (uint32_t *)b.bad_cols, 8);
	ret = sm90_prep_bf16(cd, pb);
	if (!ret && prep_a) {
		pa = prep_args(x, xd, xs, xsc, b.rmax_a, (uint8_t *)*scratch + a_off,
			       (uint32_t *)b.bad_rows, 7);
		ret = sm90_prep_bf16(cd, pa);
	}
	if (!ret)
		ret = prep_a ? map_prepped(&maps[0], pa, SM90_BF16_BM) :
			       map_codes(&maps[0], x, xd, xs, SM90_BF16_BM);
	if (!ret)
		ret = map_prepped(&maps[1], pb, SM90_BF16_BN);
	if (!ret && !prep_a)
		ret = make_map(&maps[2], (const uint8_t *)xsc, xpad, x->cols / 32,
			       xpad, SM90_BF16_BM, 2, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret)
		ret = prep_a ? sm90_launch_bf16_ss(cd, maps, b) : sm90_launch_bf16(cd, maps, b);
	return ret;
}

/* With MXACCEL_DEBUG: how many tiles the fp8 kernel had to redo (syncs). */
void report_redo(struct cuda_device *cd, const struct params &p)
{
	uint32_t n = 0;

	if (cudaMemcpyAsync(&n, p.list_count, 4, cudaMemcpyDeviceToHost,
			    cd->stream) == cudaSuccess &&
	    cudaStreamSynchronize(cd->stream) == cudaSuccess)
		cuda_dbg("cuda-mx-sm90: %u of %u tiles of the fp8 kernel left to it by the bf16 kernels (NaN/Inf codes, NaN scales or scale spans too wide for exact bf16 operands)",
			 n, p.tiles_m * p.tiles_n);
}

/* The job's C as the kernels write it. */
struct sm90_c c_of(const struct mxa_job *job)
{
	struct sm90_c o;

	o.c = cuda_ptr(job->dense.buf, job->dense.offset);
	o.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	o.stride = mxa__dense_stride(&job->dense) / (o.bf16 ? 2 : 4);
	o.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	return o;
}

/* One operand as the decode and skinny kernels read it. */
struct sm90_mx_operand mx_operand(const struct mxa_matrix *m,
					  const uint8_t *data, uint64_t stride)
{
	struct sm90_mx_operand o;

	o.data = data;
	o.stride = stride;
	o.scale = cuda_ptr(m->scale, m->scale_offset);
	o.scale_stride = mxa__scale_stride(m);
	o.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	o.swz_tiles = (m->cols / 32 + 3) / 4;
	o.rows = m->rows;
	o.elem = sm90_elem_of(m->elem);
	return o;
}

/*
 * The decode kernel (M <= 64): x = B, y = A, their codes 16-byte aligned,
 * y's scales K-major with row maxima (kmajor_scales()).  Y goes to bf16
 * first (sm90_prep_bf16()).  *scratch holds the count and list of tiles left
 * to the fp8 kernel, then Y's flag and bf16 (freed by the caller after
 * the launches).
 */
int launch_decode(struct cuda_device *cd, const struct mxa_matrix *x,
		  const uint8_t *xd, uint64_t xs, const struct mxa_matrix *y,
		  const uint8_t *yd, uint64_t ys, const void *ysc, uint32_t tiles,
		  const struct mxa_job *job, void **scratch)
{
	const uint32_t bn = 64, kt = (x->cols / 32 + 1) / 2;
	const size_t head = (8 + (size_t)tiles * 4 + 1023) / 1024 * 1024;
	struct sm90_decode_args d;
	struct sm90_prep_args pb;
	CUtensorMap maps[2];
	cudaError_t e;
	int ret;

	e = cudaMallocAsync(scratch, head + (size_t)y->rows * kt * SM90_BF16_KC * 2,
			    cd->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(*scratch, 0, 8, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: decode scratch");
	d.x = mx_operand(x, xd, xs);
	d.y = mx_operand(y, yd, ys);
	d.blocks = x->cols / 32;
	d.out = c_of(job);
	d.tiles = tiles;
	d.list_count = (uint32_t *)*scratch;
	d.bad_y = d.list_count + 1;
	d.list = d.list_count + 2;
	d.rmax_y = rmax_of(ysc, y);

	pb = prep_args(y, yd, ys, ysc, d.rmax_y, (uint8_t *)*scratch + head,
		       (uint32_t *)d.bad_y, 8);
	ret = sm90_prep_bf16(cd, pb);
	if (!ret)
		ret = map_codes(&maps[0], x, xd, xs, 64);
	if (!ret)
		ret = map_prepped(&maps[1], pb, bn);
	return ret ? ret : sm90_launch_decode(cd, maps, d);
}

/*
 * The skinny kernel (M <= SM90_SKINNY_M): x = B, read in place (16-byte
 * aligned), y = A, read by its pre-pass.
 */
int launch_skinny(struct cuda_device *cd, const struct mxa_job *job)
{
	const struct mxa_matrix *x = &job->b, *y = &job->a;
	struct sm90_skinny_args s;
	const uint8_t *xd;
	void *xscratch;
	uint64_t xs;
	int ret;

	ret = aligned_data(cd, x, &xd, &xs, &xscratch);
	if (ret)
		return ret;
	s.x = mx_operand(x, xd, xs);
	s.y = mx_operand(y, cuda_ptr(y->data, y->data_offset), mxa__data_stride(y));
	s.blocks = x->cols / 32;
	s.out = c_of(job);
	s.x_scale_words = !((uintptr_t)s.x.scale & 3) && (s.x.swizzled || !(s.x.scale_stride & 3));
	s.post = ldexpf(1.0f, shift_of(x->elem) + shift_of(y->elem));
	ret = sm90_launch_skinny(cd, s);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	return ret;
}

/*
 * Variables of earlier versions that chose kernels here: set, they are an
 * error (the choice is MXACCEL_KERNEL's now), never silently ignored.
 */
int check_env(void)
{
	static const char *const gone[][2] = {
		{ "MXACCEL_CUDA_TILE", "MXACCEL_KERNEL=cuda-mx-sm90-fp8, -fp8-single, -fp8-quad, -bf16 or -bf16-ss" },
		{ "MXACCEL_CUDA_SKINNY", "MXACCEL_KERNEL=cuda-mx-sm90-decode or cuda-mx-sm90-fp8" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		const char *v = getenv(gone[i][0]);

		if (v)
			return cuda_err(-EINVAL,
					"%s='%s' is no longer read: choose the kernel with %s",
					gone[i][0], v, gone[i][1]);
	}
	return 0;
}

} /* namespace */

const char *cuda_sm90_reject(struct cuda_device *cd)
{
	pthread_once(&encode_once, encode_load);
	if (cd->cc_major != 9 || cd->cc_minor != 0)
		return "the fused MX GEMM is built for sm_90a (Hopper) only";
	if (!encode)
		return "the driver has no cuTensorMapEncodeTiled";
	if (cd->smem_optin < (size_t)layout<128, 2>::SMEM || !sm90_bf16_fits(cd))
		return "the device has too little shared memory per block";
	pthread_once(&code_once, code_probe);
	if (code_ptx < 90)
		return "its sm_90a code is not loaded (the driver runs the compute_80 PTX, e.g. under CUDA_FORCE_PTX_JIT)";
	return NULL;
}

int cuda_launch_gemm_sm90(struct cuda_device *cd, const struct mxa_job *job,
			  enum sm90_path path)
{
	/*
	 * Small M: C^T = B * A^T, B's rows on the 64-row side of wgmma, with
	 * 64- or 16-wide tiles.  The bf16 kernel converts its B in a
	 * pre-pass: the smaller operand.  Which path runs is the kernel
	 * table's choice (cuda_sm90_select.cu).
	 */
	bool small = job->a.rows <= 64;
	int cfg = small ? (job->a.rows > 16 ? 3 : 4) :
		  path == SM90_PATH_FP8_SINGLE ? 1 :
		  path == SM90_PATH_FP8_QUAD ? 2 : 0;
	bool bf16 = path == SM90_PATH_BF16 || path == SM90_PATH_BF16_SS;
	bool decode = path == SM90_PATH_DECODE;
	bool swap = small || (bf16 && job->b.rows > job->a.rows);
	const struct mxa_matrix *x = swap ? &job->b : &job->a;
	const struct mxa_matrix *y = swap ? &job->a : &job->b;
	const uint8_t *xd, *yd;
	uint64_t xs, ys;
	void *xscratch = NULL, *yscratch = NULL, *xs_scratch = NULL, *ys_scratch = NULL;
	void *bscratch = NULL;
	uint32_t xpad, ypad;
	CUtensorMap ma, mb, msa, msb;
	struct params p;
	int ret;

	ret = check_env();
	if (ret)
		return ret;
	if (cuda_sm90_reject(cd))
		return cuda_err(-EOPNOTSUPP, "cuda-mx-sm90: %s", cuda_sm90_reject(cd));
	/* The table's predicates keep every path inside its range. */
	if ((path == SM90_PATH_SKINNY && job->a.rows > SM90_SKINNY_M) ||
	    ((bf16 || cfg == 1 || cfg == 2) && small) || (decode && !small))
		return cuda_err(-EINVAL, "cuda-mx-sm90: path %d cannot run M = %u",
				(int)path, job->a.rows);
	if (path == SM90_PATH_SKINNY)
		return launch_skinny(cd, job);
	ret = aligned_data(cd, x, &xd, &xs, &xscratch);
	if (!ret)
		ret = aligned_data(cd, y, &yd, &ys, &yscratch);
	if (!ret)
		ret = make_map(&ma, xd, row_bytes(x), x->rows, xs,
			       x->elem == MXA_ELEM_E2M1 ? 64 : 128, config_bm[cfg],
			       x->elem == MXA_ELEM_E2M1 ? CU_TENSOR_MAP_SWIZZLE_NONE :
							  CU_TENSOR_MAP_SWIZZLE_128B);
	if (!ret)
		ret = make_map(&mb, yd, row_bytes(y), y->rows, ys,
			       y->elem == MXA_ELEM_E2M1 ? 64 : 128, config_bn[cfg],
			       y->elem == MXA_ELEM_E2M1 ? CU_TENSOR_MAP_SWIZZLE_NONE :
							  CU_TENSOR_MAP_SWIZZLE_128B);
	/*
	 * Decode: Y's scales first (the kernel's pre-pass needs them), X's for
	 * the fp8 kernel only if it has tiles to do.
	 */
	if (!ret && decode)
		ret = kmajor_scales(cd, y, true, NULL, &ys_scratch, &ypad);
	if (!ret && decode)
		ret = launch_decode(cd, x, xd, xs, y, yd, ys, ys_scratch,
				    (x->rows + config_bm[cfg] - 1) / config_bm[cfg], job,
				    &bscratch);
	if (!ret)
		ret = kmajor_scales(cd, x, bf16, decode ? (uint32_t *)bscratch : NULL,
				    &xs_scratch, &xpad);
	if (!ret && !decode)
		ret = kmajor_scales(cd, y, bf16, NULL, &ys_scratch, &ypad);
	if (!ret)
		ret = make_map(&msa, (const uint8_t *)xs_scratch, xpad, x->cols / 32,
			       xpad, config_bm[cfg], 4, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret)
		ret = make_map(&msb, (const uint8_t *)ys_scratch, ypad, y->cols / 32,
			       ypad, config_bn[cfg], 4, CU_TENSOR_MAP_SWIZZLE_NONE);
	if (!ret) {
		p.a = make_operand(x);
		p.b = make_operand(y);
		p.out = c_of(job);
		p.tiles_m = (x->rows + config_bm[cfg] - 1) / config_bm[cfg];
		p.tiles_n = (y->rows + config_bn[cfg] - 1) / config_bn[cfg];
		p.transposed = swap;
		p.post = ldexpf(1.0f, shift_of(x->elem) + shift_of(y->elem));
		p.list = NULL;
		p.list_count = NULL;
	}
	if (!ret && bf16)
		ret = launch_bf16(cd, x, xd, xs, xs_scratch, y, yd, ys, ys_scratch,
				  p, path == SM90_PATH_BF16_SS, &bscratch);
	/* The fp8 kernel for the marked tiles; the others return at once. */
	if (!ret && bf16) {
		p.list_count = (const uint32_t *)((uint8_t *)bscratch + list_offset(x, y));
		p.list = p.list_count + 1;
	}
	if (!ret && decode) {
		p.list_count = (const uint32_t *)bscratch;
		p.list = p.list_count + 2;
	}
	if (!ret)
		ret = launchers[cfg][x->elem == MXA_ELEM_E5M2][y->elem == MXA_ELEM_E5M2](
			cd, ma, mb, msa, msb, p);
	if (!ret && (bf16 || decode) && cuda_host->debug())
		report_redo(cd, p);
	if (bscratch)
		cudaFreeAsync(bscratch, cd->stream);
	if (xs_scratch)
		cudaFreeAsync(xs_scratch, cd->stream);
	if (ys_scratch)
		cudaFreeAsync(ys_scratch, cd->stream);
	if (xscratch)
		cudaFreeAsync(xscratch, cd->stream);
	if (yscratch)
		cudaFreeAsync(yscratch, cd->stream);
	return ret;
}
