/* SPDX-License-Identifier: MIT */
/*
 * What the two sm_90a MX GEMM kernels share: the PTX they are built from
 * (mbarriers, the tensor memory accelerator, wgmma fences and shared memory
 * descriptors), the exact re-encoding of narrow elements as e4m3 bytes, and
 * the host-side preparation of operands (cuda_gemm_sm90.cu).
 */
#ifndef MXA_CUDA_SM90_CUH
#define MXA_CUDA_SM90_CUH

#include <stdint.h>
#include <cuda.h>
#include <cuda_bf16.h>

#include "cuda_internal.cuh"


/*
 * The device code exists for sm_90a only; the compute_80 PTX of this file
 * holds empty kernels (cuda_sm90_reject() keeps them from running).
 */
#if !defined(__CUDA_ARCH__) || \
	(__CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL))
#define SM90_CODE 1
#endif

/*
 * Offset of the E8M0 scale of row r, block kb: plain (row stride bytes)
 * or swizzled (to_blocked(): 128 x 4 tiles of 512 bytes, swz_tiles per
 * row of tiles).
 */
static __device__ __forceinline__ uint64_t sm90_scale_index(bool swizzled, uint64_t stride,
							uint32_t swz_tiles, uint32_t r,
							uint32_t kb)
{
	return swizzled ? ((uint64_t)(r / 128) * swz_tiles + kb / 4) * 512 +
			  (r % 32) * 16 + ((r % 128) / 32) * 4 + kb % 4 :
			  r * stride + kb;
}

/* A GEMM's C as every kernel writes it. */
struct sm90_c {
	uint8_t *c;
	uint64_t stride;		/* elements */
	int bf16, accumulate;		/* bf16 (else fp32) elements; C += */
};

/* C[at] = v (+ C[at]), rounded once to fp32 or bf16. */
static __device__ __forceinline__ void store_c_value(const struct sm90_c &o, uint64_t at,
						     float v)
{
	if (o.bf16) {
		__nv_bfloat16 *cb = (__nv_bfloat16 *)o.c + at;

		if (o.accumulate)
			v += __bfloat162float(*cb);
		*cb = __float2bfloat16_rn(v);
	} else {
		float *cf = (float *)o.c + at;

		if (o.accumulate)
			v += *cf;
		*cf = v;
	}
}

/*
 * Set a kernel's attribute once per device (an attribute belongs to the
 * function in one device's context); *done holds a bit per device ordinal.
 */
template <typename K>
static inline int sm90_func_attr(struct cuda_device *cd, K kernel, cudaFuncAttribute attr,
				 int value, unsigned long long *done, const char *what)
{
	const unsigned long long bit = 1ull << (cd->ordinal & 63);
	cudaError_t e;

	if (__atomic_load_n(done, __ATOMIC_ACQUIRE) & bit)
		return 0;
	e = cudaFuncSetAttribute(kernel, attr, value);
	if (e != cudaSuccess)
		return cuda_fail(e, what);
	__atomic_fetch_or(done, bit, __ATOMIC_RELEASE);
	return 0;
}

/* Let a kernel use `bytes` of dynamic shared memory on cd's device. */
template <typename K>
static inline int sm90_allow_smem(struct cuda_device *cd, K kernel, int bytes,
				  unsigned long long *done)
{
	return sm90_func_attr(cd, kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes,
			      done, "cuda-mx-sm90: shared memory");
}

/*
 * Ask for the largest shared-memory carveout for a kernel that runs
 * beside one that needs it (a programmatic launch's primary): an SM whose
 * carveout is small takes none of the other kernel's CTAs until it idles.
 */
template <typename K>
static inline int sm90_prefer_shared(struct cuda_device *cd, K kernel, unsigned long long *done)
{
	return sm90_func_attr(cd, kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
			      cudaSharedmemCarveoutMaxShared, done,
			      "cuda-mx-sm90: shared memory carveout");
}

#ifdef SM90_CODE

/* --- PTX ------------------------------------------------------------------------ */

static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/*
 * p rounded up to 1024 bytes (the 128-byte swizzle's atom) by pointer
 * arithmetic: through an integer cast the compiler no longer knows the
 * result is shared memory and loads from it with generic instructions
 * (longer latency, 64-bit address arithmetic in the main loops).
 */
static __device__ __forceinline__ uint8_t *smem_align1024(uint8_t *p)
{
	return p + ((1024 - (smem_addr(p) & 1023)) & 1023);
}

static __device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
		     :: "r"(smem_addr(bar)), "r"(count) : "memory");
}

static __device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
		     :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];"
		     :: "r"(smem_addr(bar)) : "memory");
}

static __device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
	uint32_t done;

	do {
		asm volatile("{\n.reg .pred p;\n"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity)
			     : "memory");
	} while (!done);
}

static __device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map,
					    uint64_t *bar, int x, int y)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];"
		     :: "r"(smem_addr(dst)), "l"((uint64_t)map), "r"(x), "r"(y),
			"r"(smem_addr(bar))
		     : "memory");
}

static __device__ __forceinline__ void fence_proxy_async(void)
{
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/*
 * Shared memory to box (x, y, z) of a 3D map (a TMA store; boxes past the
 * map's dimensions are clipped).  The writes after fence_proxy_async().
 */
static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, const void *src,
						    int x, int y, int z)
{
	asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
		     " [%0, {%2, %3, %4}], [%1];"
		     :: "l"((uint64_t)map), "r"(smem_addr(src)), "r"(x), "r"(y), "r"(z)
		     : "memory");
}

/*
 * The TMA stores issued so far as one group, waited for until they have
 * read shared memory (which may then be reused or released); their writes
 * to global memory complete on their own.
 */
static __device__ __forceinline__ void tma_store_wait_read(void)
{
	asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;" ::: "memory");
}

/*
 * A TMA pipeline's barriers, by the caller's thread 0: per stage one
 * `full` (the producer's arrival plus the copies' bytes) and one `empty`
 * (`consumers` arrivals); then the fences that make them visible to the
 * copy engine.  The caller's __syncthreads() makes them visible to the
 * other threads.
 */
static __device__ __forceinline__ void init_pipeline(uint64_t *full, uint64_t *empty,
						     int stages, uint32_t consumers)
{
	for (int s = 0; s < stages; s++) {
		mbar_init(&full[s], 1);
		mbar_init(&empty[s], consumers);
	}
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	fence_proxy_async();
}

static __device__ __forceinline__ void wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N> static __device__ __forceinline__ void wgmma_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

/* Keep the compiler from moving register accesses across wgmma. */
template <int R> static __device__ __forceinline__ void fence_regs(float *r)
{
#pragma unroll
	for (int i = 0; i < R; i++)
		asm volatile("" : "+f"(r[i]) :: "memory");
}

/*
 * Shared memory matrix descriptor: K-major rows of 128 bytes, 128-byte
 * swizzle (layout type 1), 8-row atoms 1024 bytes apart.
 */
static __device__ __forceinline__ uint64_t make_desc(uint32_t addr)
{
	return (uint64_t)((addr & 0x3ffff) >> 4) |
	       ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

/* --- element and scale conversion ----------------------------------------------- */

/* 2^(s - 127) as fp32: byte 0 is the subnormal 2^-127, 0xff NaN. */
static __device__ __forceinline__ float e8m0_to_f32(uint32_t s)
{
	return __uint_as_float(s == 0 ? 0x00400000u :
			       s == 0xff ? 0x7fc00000u : s << 23);
}

/*
 * acc + p * (sa * sb), sa and sb E8M0 scales as e8m0_to_f32() gives them:
 * the promotion of one MX block's partial.  Where the scale product is a
 * normal fp32 it is one exact factor.  Else (2^254 overflows, 2^-254 and
 * 2^-127 * 1 are not normal, a NaN scale) p is scaled in two steps, sa
 * first: a zero block stays 0 and an infinite one infinite, a finite
 * result overflows only where p * 2^(sa + sb) does, and one below fp32's
 * normal range loses only what its own rounding there loses (sb <= 1
 * then).  Selects, not a branch: the consumers stay converged.
 */
static __device__ __forceinline__ float promote_fma(float p, float sa, float sb,
						    float acc)
{
	const float s = sa * sb;
	const bool one = s >= 0x1p-126f && s <= 0x1p127f;

	return fmaf(one ? p : p * sa, one ? s : sb, acc);
}

/* e2m3 (bits 0-5) -> e4m3 byte of value 2^-6 times; four per word. */
static __device__ __forceinline__ uint32_t e2m3_to_e4m3(uint32_t x)
{
	return ((x & 0x20202020u) << 2) | (x & 0x1f1f1f1fu);
}

/* e3m2 -> e4m3 byte of value 2^-4 times. */
static __device__ __forceinline__ uint32_t e3m2_to_e4m3(uint32_t x)
{
	return ((x & 0x20202020u) << 2) | ((x & 0x1f1f1f1fu) << 1);
}

/* One e2m1 code per byte (low nibble) -> e4m3 byte of value 2^-6 times. */
static __device__ __forceinline__ uint32_t e2m1_bytes_to_e4m3(uint32_t x)
{
	return ((x & 0x08080808u) << 4) | ((x & 0x07070707u) << 2);
}

/* Eight packed e2m1 codes (element 2i in the low nibble) -> 8 e4m3 bytes. */
static __device__ __forceinline__ uint2 e2m1x8_to_e4m3(uint32_t v)
{
	uint32_t even = e2m1_bytes_to_e4m3(v & 0x0f0f0f0fu);
	uint32_t odd = e2m1_bytes_to_e4m3((v >> 4) & 0x0f0f0f0fu);

	return make_uint2(__byte_perm(even, odd, 0x5140),
			  __byte_perm(even, odd, 0x7362));
}

#endif /* SM90_CODE */

/* --- the bf16 kernel (cuda_gemm_sm90_bf16.cu) ----------------------------------- */

/*
 * Tile of the bf16 kernel: BM rows of A by BN rows of B, K in chunks of
 * KC elements (two MX blocks).
 */
/* --- the fp8 kernel (cuda_gemm_sm90_fp8.cu) ---------------------------------------- */

struct sm90_fp8_operand {
	uint32_t rows, blocks;
	int conv;
};

struct sm90_fp8_params {
	struct sm90_fp8_operand a, b;		/* as the kernel sees them (swapped) */
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

/* An operand as the fp8 kernel sees it (its fp6/fp4 re-encoding). */
struct sm90_fp8_operand sm90_fp8_operand_of(const struct mxa_matrix *m);
/*
 * Tile configurations: 0 two consumer warpgroups with two partials in
 * flight (128 x 128), 1 the same with one partial, 2 four consumer
 * warpgroups of 64 x 64, 3 and 4 the swapped small-M tiles 64 x 64 and
 * 64 x 16.  Rows of A and of B per tile:
 */
int sm90_fp8_tile_m(int cfg);
int sm90_fp8_tile_n(int cfg);
/* Dynamic shared memory of the largest configuration. */
int sm90_fp8_smem(void);
/* maps: A's and B's codes, A's and B's K-major scales. */
int sm90_launch_fp8(struct cuda_device *cd, int cfg, bool e5m2_a, bool e5m2_b,
		    const CUtensorMap *maps, const struct sm90_fp8_params &p);

enum { SM90_BF16_BM = 128, SM90_BF16_BN = 256, SM90_BF16_KC = 64 };

/* Element types as the bf16 kernel converts them. */
enum sm90_elem { SM90_E4M3, SM90_E5M2, SM90_E2M3, SM90_E3M2, SM90_E2M1 };

/*
 * A grouped GEMM's groups (2d x 3d: groups of A's rows, one B of n rows
 * each) as the grouped launcher's schedule pre-pass leaves them in device
 * memory (cuda_gemm_sm90_grouped.cu); all zero for a dense GEMM.
 */
struct sm90_groups {
	const uint32_t *row_start;	/* count + 1: first row of A per group */
	const uint32_t *tile_start;	/* count + 1: first tile row per group */
	/*
	 * count + 1: first unit of 256 rows of A per group, for the mapping
	 * with the operands swapped (sm90_group_unit()); NULL for the other.
	 */
	const uint32_t *unit_start;
	uint32_t count;
	uint32_t n;			/* rows of B (columns of C) per group */
	/* Per row of the pre-passed operand (the B stack, or A swapped): not foldable. */
	const uint32_t *bad_b;
	uint32_t *list, *list_count;	/* tiles left to the fallback kernel */
};

/*
 * A grouped GEMM along K (2d x 2d), as its schedule pass made it from the
 * device-side offsets (cuda_gemm_sm90_grouped_k.cu): group g's blocks (of
 * 32, NVFP4 16) are [block0[g], block0[g + 1]), its chunks of 64 in the
 * pre-passed operands (each group padded to whole chunks) start at
 * chunk0[g].
 */
struct sm90_kgroups {
	const uint32_t *block0, *chunk0;	/* count + 1 each */
	/* count + 1: where each group's swizzled scales start, in columns of 4 blocks */
	const uint32_t *swz0;
	uint32_t count;
	const uint32_t *status;		/* non-zero: malformed offsets, run nothing */
	const uint32_t *bad;		/* per group and tile column: B cannot fold */
	uint32_t *list, *list_count;	/* tiles left to the fallback kernel */
};

struct sm90_bf16_args {
	uint32_t m, n, blocks;		/* rows of A, rows of B, K / 32 */
	int elem_a;			/* enum sm90_elem */
	struct sm90_c out;
	int transposed;			/* C[j][i] = D[i][j]: A, B swapped */
	uint32_t tiles_m, tiles_n;
	/* Per row of A / B: the largest E8M0 scale other than NaN (0xff). */
	const uint32_t *rmax_a, *rmax_b;
	/*
	 * Per tile column: B's rows there cannot be done (sm90_prep_bf16());
	 * per tile row the same for A (sm90_launch_bf16_ss() only).
	 */
	const uint32_t *bad_cols, *bad_rows;
	/*
	 * The tiles of the fp8 kernel (128 x 128, tiles_n8 per row) that
	 * this kernel left to it: appended to list, counted in *list_count.
	 */
	uint32_t *list, *list_count;
	uint32_t tiles_n8;
	/*
	 * NVFP4 (sm90_prep_nvfp4() made both operands): rmax_a / rmax_b are
	 * then per-row NaN-scale flags and C = acc * 2^16 * t1 * t2, three
	 * fp32 multiplies in that order (launch_nvfp4() in cuda_gemm_sm90.cu
	 * says how t1 and t2 come from the tensor scales).
	 */
	int nvfp4;
	float t1, t2;
	struct sm90_groups groups;	/* the grouped kernel's (tiles_m: its bound) */
	/*
	 * The K-grouped kernel's (sm90_launch_bf16_grouped_k()): count x
	 * tiles_m x tiles_n CTAs; rmax_a, rmax_b per group (count x m, count
	 * x n).  count 0 everywhere else.
	 */
	struct sm90_kgroups kgroups;
	/*
	 * The K-grouped kernel stores C by TMA (maps[3]: C as count planes of
	 * m x n, 128-byte boxes of 128 rows, 128-byte swizzle; C not
	 * accumulated, 16-byte aligned rows).
	 */
	int c_tma;
};

/*
 * The group that x belongs to, given each group's first x (starts, count
 * entries, not decreasing): the last g with starts[g] <= x, so that empty
 * groups (starting where the next one does) are passed over.  A binary
 * search, log2(count) steps.
 */
static __host__ __device__ __forceinline__ uint32_t sm90_group_of(const uint32_t *starts,
								  uint32_t count, uint32_t x)
{
	uint32_t lo = 0, hi = count;

	while (hi - lo > 1) {
		const uint32_t mid = lo + (hi - lo) / 2;

		if (starts[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Why a grouped launcher's schedule pass refused the device-side offsets
 * (status word 0; word 1 the index, word 2 the value): the refusals both
 * passes share, then each pass's own from SM90_SCHED_OWN on.
 */
enum sm90_sched_error {
	SM90_SCHED_OK,
	SM90_SCHED_DECREASING,	/* ends[i] < ends[i - 1], or < 0 */
	SM90_SCHED_BEYOND,	/* ends[i] > the total (M or K) */
	SM90_SCHED_LAST,	/* the last end != the total */
	SM90_SCHED_BLOCK,	/* ends[i] not a multiple of the block size */
	SM90_SCHED_OWN,
};

/* End g against the one before (and its block size): ~0, or g << 8 | the refusal. */
static __device__ __forceinline__ unsigned long long sm90_end_fault(const int32_t *ends, uint32_t g,
								    uint32_t extent, uint32_t block)
{
	const int32_t prev = g ? ends[g - 1] : 0, end = ends[g];
	uint32_t why = SM90_SCHED_OK;

	if (end < prev)
		why = SM90_SCHED_DECREASING;
	else if ((uint32_t)end > extent)
		why = SM90_SCHED_BEYOND;
	else if ((uint32_t)end % block)
		why = SM90_SCHED_BLOCK;
	return why ? (unsigned long long)g << 8 | why : ~0ull;
}

/*
 * The CTA's first refusal, lowest index first (as the host reports): each
 * thread's own (~0 for none) and, from thread 0, the last end's, into
 * *first (shared, ~0 before), read after the caller's next barrier.
 */
static __device__ __forceinline__ void sm90_vote_fault(unsigned long long *first,
						       unsigned long long bad, const int32_t *ends,
						       uint32_t count, uint32_t extent)
{
	if (threadIdx.x == 0 && ends[count - 1] != (int32_t)extent)
		bad = min(bad, (unsigned long long)(count - 1) << 8 | SM90_SCHED_LAST);
	if (bad != ~0ull)
		atomicMin(first, bad);
}

/* Tile (u, tn) of a grouped GEMM: tile row u of all groups', column tn. */
struct sm90_group_tile {
	uint32_t group;
	uint32_t a_row, m_end;		/* A's (C's) rows [a_row, m_end) at most */
	uint32_t b_row, c_col;		/* B's row in the stack, C's column */
	uint32_t sa_col;		/* A's scales in the map: u * 128 (sm90_group_scale_row()) */
};

/*
 * CTA bid's tile of a grouped GEMM: tile row u of the rows real ones,
 * column tn, in the dense kernel's raster (eight tile rows share B's
 * tiles in L2); false for CTAs past the last tile.
 */
static __host__ __device__ __forceinline__ bool sm90_group_raster(uint32_t rows,
								  uint32_t tiles_n,
								  uint32_t bid, uint32_t *u,
								  uint32_t *tn)
{
	const uint32_t group = 8, per = group * tiles_n;
	uint32_t first, gm;

	if (bid >= rows * tiles_n)
		return false;
	first = bid / per * group;
	gm = rows - first < group ? rows - first : group;
	*u = first + bid % per % gm;
	*tn = bid % per / gm;
	return true;
}

/* The tile of tile row u (< tile_start[count]) in column tn. */
static __host__ __device__ __forceinline__ struct sm90_group_tile
sm90_group_tile(const struct sm90_groups &g, uint32_t u, uint32_t tn)
{
	const uint32_t lo = sm90_group_of(g.tile_start, g.count, u);
	struct sm90_group_tile t;

	t.group = lo;
	t.a_row = g.row_start[lo] + (u - g.tile_start[lo]) * SM90_BF16_BM;
	t.m_end = g.row_start[lo + 1];
	t.c_col = tn * SM90_BF16_BN;
	t.b_row = lo * g.n + t.c_col;
	t.sa_col = u * SM90_BF16_BM;
	return t;
}

/*
 * The grouped GEMM with the operands swapped (C^T = B A^T per group: the
 * B stack's codes as the kernel's 128-row operand, converted in
 * registers, A's rows from the pre-pass as its 256-row one): unit u of
 * 256 rows of A of all groups' (< unit_start[count]), tile tn of 128 rows
 * of B.  A's rows [a_row, a_end) at most, the B stack's rows from b_row,
 * C's columns from n0 (the group's N ends them).
 */
struct sm90_group_unit {
	uint32_t group;
	uint32_t a_row, a_end;
	uint32_t b_row, n0;
};

static __host__ __device__ __forceinline__ struct sm90_group_unit
sm90_group_unit(const struct sm90_groups &g, uint32_t u, uint32_t tn)
{
	const uint32_t lo = sm90_group_of(g.unit_start, g.count, u);
	struct sm90_group_unit t;

	t.group = lo;
	t.a_row = g.row_start[lo] + (u - g.unit_start[lo]) * SM90_BF16_BN;
	t.a_end = g.row_start[lo + 1];
	t.n0 = tn * SM90_BF16_BM;
	t.b_row = lo * g.n + t.n0;
	return t;
}

/*
 * A's K-major scales for the grouped kernel are laid out by tile row:
 * tile row u's 128 rows at u * 128, because the scale map's box starts at
 * its tile in the innermost dimension and the tensor memory accelerator
 * faults (illegal instruction) on an innermost start that is not 16-byte
 * aligned, which a group's first row need not be.  Row o there holds the
 * scales of the row of A returned (rows past the group's end are the next
 * group's, as the tile's codes are), UINT32_MAX past the last tile row;
 * *own: that row is in o's own group (true for exactly one o per row of A).
 */
static __host__ __device__ __forceinline__ uint32_t
sm90_group_scale_row(const struct sm90_groups &g, uint32_t o, bool *own)
{
	const uint32_t u = o / SM90_BF16_BM;
	struct sm90_group_tile t;

	*own = false;
	if (u >= g.tile_start[g.count])
		return UINT32_MAX;
	t = sm90_group_tile(g, u, 0);
	*own = t.a_row + o % SM90_BF16_BM < t.m_end;
	return t.a_row + o % SM90_BF16_BM;
}

/* An operand (rows x 32 blocks) to bf16 for the bf16 kernels. */
struct sm90_prep_args {
	const uint8_t *data;
	uint64_t stride;		/* bytes */
	uint32_t rows, blocks, rows_pad;
	int elem;			/* enum sm90_elem */
	const uint8_t *scales;		/* K-major, [blocks][rows_pad] */
	const uint32_t *rmax;
	uint8_t *out;			/* rows x 2 * 64 * ceil(blocks / 2) bytes */
	uint32_t *bad_tiles;		/* per 2^tile_shift rows, zeroed */
	uint32_t tile_shift;
};

int sm90_prep_bf16(struct cuda_device *cd, const struct sm90_prep_args &p);
/*
 * The same for a K-grouped operand (k: the schedule pass's): each group's
 * blocks from its own first block into its own whole chunks (chunks of
 * them in all, p.blocks the operand's), with the group's row maxima
 * (p.rmax + g x p.rows) and flags (p.bad_tiles + g x bad_stride).
 * Nothing runs if *k.status.
 */
int sm90_prep_bf16_grouped_k(struct cuda_device *cd, const struct sm90_prep_args &p,
			     const struct sm90_kgroups &k, uint32_t chunks, uint32_t bad_stride);

/*
 * An NVFP4 operand (e2m1, a UE4M3 scale per 16) to bf16 for
 * gemm_sm90_bf16_ss_kernel: b'[n][k] = b[n][k] * s[n][k / 16] * 2^-8,
 * exact, in the layout sm90_prep_bf16() writes (rows x 128 bytes per chunk
 * of 64).  A row with a NaN scale (0x7f, 0xff) gets row_nan[row] = 1 and
 * zeros in its blocks.
 */
struct sm90_nvfp4_prep_args {
	const uint8_t *data;		/* codes, 16-byte aligned rows */
	uint64_t stride;		/* bytes */
	uint32_t rows, blocks;		/* blocks: K / 16 */
	const uint8_t *scale;		/* UE4M3, as the matrix has them */
	uint64_t scale_stride;
	int swizzled;
	uint32_t swz_tiles;		/* Cp / 4 of the swizzled layout */
	uint8_t *out;
	uint32_t *row_nan;		/* per row, zeroed */
};

int sm90_prep_nvfp4(struct cuda_device *cd, const struct sm90_nvfp4_prep_args &p);
/*
 * The same for a K-grouped operand (k: the schedule pass's, chunks of 64
 * in all): each group's blocks from its own first one into its own whole
 * chunks, NaN-scale flags per group (p.row_nan + g x p.rows).  Nothing
 * runs if *k.status.
 */
int sm90_prep_nvfp4_grouped_k(struct cuda_device *cd, const struct sm90_nvfp4_prep_args &p,
			      const struct sm90_kgroups &k, uint32_t chunks);

/*
 * Queue the bf16 kernel.  maps: A's codes (boxes of BM rows by KC
 * elements), B as sm90_prep_bf16() made it (boxes of BN rows by KC), A's
 * scales K-major (BM rows by 2 blocks).
 */
int sm90_launch_bf16(struct cuda_device *cd, const CUtensorMap *maps,
		     const struct sm90_bf16_args &p);
/*
 * The same with A too as sm90_prep_bf16() made it: maps A (boxes of BM rows
 * by KC), B (BN rows by KC).
 */
int sm90_launch_bf16_ss(struct cuda_device *cd, const CUtensorMap *maps,
			const struct sm90_bf16_args &p);
/* Whether the device can run them (shared memory). */
bool sm90_bf16_fits(struct cuda_device *cd);
/*
 * The grouped bf16 kernel: the same main loop over the tiles of every
 * group (p.groups; p.tiles_m x p.tiles_n CTAs, an upper bound), maps as
 * for sm90_launch_bf16() with B the bf16 stack of all groups.
 */
/*
 * The same over sm90_group_unit()'s mapping (p.transposed, fp8 codes of
 * the B stack in maps[0] and its K-major scales in maps[2], A from the
 * pre-pass in maps[1]).
 */
int sm90_launch_bf16_grouped_swapped(struct cuda_device *cd, const CUtensorMap *maps,
				     const struct sm90_bf16_args &p);
int sm90_launch_bf16_grouped(struct cuda_device *cd, const CUtensorMap *maps,
			     const struct sm90_bf16_args &p);
/*
 * The K-grouped bf16 kernel (p.kgroups): each group's tiles over its own
 * blocks into its own C (rows g x p.m on); maps as for sm90_launch_bf16()
 * with B from sm90_prep_bf16_grouped_k() and A's K-major scales of all
 * of K.
 */
int sm90_launch_bf16_grouped_k(struct cuda_device *cd, const CUtensorMap *maps,
			       const struct sm90_bf16_args &p);
/*
 * The grouped NVFP4 kernel: sm90_launch_bf16_ss()'s over every group's
 * tiles, A and the B stack as sm90_prep_nvfp4() made them, p.nvfp4 set.
 */
int sm90_launch_bf16_ss_grouped(struct cuda_device *cd, const CUtensorMap *maps,
				const struct sm90_bf16_args &p);
/*
 * The same over a K-grouped GEMM's tiles (p.kgroups, p.nvfp4), A and B as
 * sm90_prep_nvfp4_grouped_k() made them.
 */
int sm90_launch_bf16_ss_grouped_k(struct cuda_device *cd, const CUtensorMap *maps,
				  const struct sm90_bf16_args &p);

/* An MX operand read in place (the decode and skinny kernels). */
struct sm90_mx_operand {
	const uint8_t *data;		/* codes, 16-byte aligned rows */
	uint64_t stride;		/* bytes */
	const uint8_t *scale;		/* E8M0, as the matrix has them */
	uint64_t scale_stride;
	int swizzled;
	uint32_t swz_tiles;		/* Cp / 4 of the swizzled layout */
	uint32_t rows;
	int elem;			/* enum sm90_elem */
};

/* --- the decode kernel (cuda_gemm_sm90_decode.cu) ------------------------------ */

/*
 * C (y.rows x x.rows, y.rows <= 64) = Y X^T: x is B (the long operand,
 * 64 rows per CTA), y is A.  Tiles left to the fp8 kernel (its swapped
 * tiles of 64 rows, the same ones) are appended to list.
 */
struct sm90_decode_args {
	struct sm90_mx_operand x, y;
	/* Y's row maxima and exactness flag, from the pre-passes. */
	const uint32_t *rmax_y, *bad_y;
	uint32_t blocks;		/* K / 32 (NVFP4: ceil(K / 32), chunks) */
	struct sm90_c out;
	uint32_t tiles;
	uint32_t *list, *list_count;
	/*
	 * NVFP4 (x's codes folded with its UE4M3 scales in registers, y made
	 * by sm90_prep_nvfp4()): blocks16 = K / 16, rmax_y are y's NaN-scale
	 * flags, C = acc * 2^16 * t1 * t2 as in struct sm90_bf16_args.
	 */
	int nvfp4;
	uint32_t blocks16;
	float t1, t2;
};

/*
 * maps: X's codes (boxes of 64 rows by 64 elements, 64/32-byte swizzle),
 * Y as sm90_prep_bf16() made it (all its rows padded to 16 or 64 by 64).
 */
int sm90_launch_decode(struct cuda_device *cd, const CUtensorMap *maps,
		       const struct sm90_decode_args &p);

/* --- the skinny kernel (cuda_gemm_sm90_skinny.cu) ------------------------------ */

/* The most rows of A it takes. */
enum { SM90_SKINNY_M = 32 };

/*
 * C (y.rows x x.rows, y.rows <= SM90_SKINNY_M) = Y X^T: x is B (the long
 * operand), y is A.
 */
struct sm90_skinny_args {
	struct sm90_mx_operand x, y;
	uint32_t blocks;		/* K / 32 */
	struct sm90_c out;
	float post;			/* 2^(fa + fb) of the e4m3 re-encoding */
	/* x's scales can be read four blocks at a time (4-byte aligned). */
	int x_scale_words;
	/*
	 * NVFP4 x NVFP4 (both operands' scales UE4M3 per 16, K a multiple
	 * of 32): C = acc * post * t1 * t2, t1 and t2 from the tensor scales
	 * (sm90_nvfp4_factors()).
	 */
	int nvfp4;
	float t1, t2;
	/*
	 * Grouped 2d x 3d (cuda-grouped-sm90-skinny): x is the stack of
	 * every group's B (group_n rows each) and y all of A; row r of x
	 * belongs to group r / group_n, whose rows of A are [group_row[g],
	 * group_row[g + 1]) (the schedule pass's), and only those results
	 * are stored, in column r % group_n; nothing is stored when
	 * *group_status is non-zero (malformed offsets).  NULL: dense.
	 */
	const uint32_t *group_row, *group_status;
	uint32_t group_n;
};

int sm90_launch_skinny(struct cuda_device *cd, const struct sm90_skinny_args &p);


/* --- the operand view (cuda_sm90_operand.cu) --------------------------------------- */

/* NULL if the driver can encode tensor maps and runs the sm_90a code. */
const char *sm90_operand_reject(void);
/* rows x row_bytes bytes, row stride `stride`, boxes of box_x x box_y. */
int sm90_make_map(CUtensorMap *map, const uint8_t *base, uint64_t row_bytes,
		  uint64_t rows, uint64_t stride, uint32_t box_x, uint32_t box_y,
		  CUtensorMapSwizzle swizzle);
/* The same over planes of rows (plane_stride bytes apart), boxes one plane deep. */
int sm90_make_map_3d(CUtensorMap *map, const uint8_t *base, uint64_t row_bytes,
		     uint64_t rows, uint64_t planes, uint64_t stride, uint64_t plane_stride,
		     uint32_t box_x, uint32_t box_y, CUtensorMapSwizzle swizzle);
/* log2 of element value / e4m3 byte value after the fp6/fp4 re-encoding. */
int sm90_shift_of(enum mxa_elem e);
/*
 * m's codes 16-byte aligned: in place when they are, else copied into
 * stream-ordered scratch (*scratch, freed by the caller after the launch).
 */
int sm90_aligned_data(struct cuda_device *cd, const struct mxa_matrix *m,
		      const uint8_t **data, uint64_t *stride, void **scratch);
/*
 * m's scales K-major, [blocks][rows_pad], in stream-ordered scratch (freed
 * by the caller); with rmax each row's largest scale but NaN after them
 * (sm90_rmax_of()); nothing is done unless *only_if where only_if is set.
 */
int sm90_kmajor_scales(struct cuda_device *cd, const struct mxa_matrix *m,
		       bool rmax, const uint32_t *only_if, void **scratch,
		       uint32_t *rows_pad);
const uint32_t *sm90_rmax_of(const void *scratch, const struct mxa_matrix *m);
enum sm90_elem sm90_elem_of(enum mxa_elem e);
uint64_t sm90_row_bytes(const struct mxa_matrix *m);
/* m's codes in boxes of SM90_BF16_KC elements by box_rows rows. */
int sm90_map_codes(CUtensorMap *map, const struct mxa_matrix *m,
		   const uint8_t *data, uint64_t stride, uint32_t box_rows);
/* The bf16 operand sm90_prep_bf16(p) writes, in boxes of KC by box_rows. */
int sm90_map_prepped(CUtensorMap *map, const struct sm90_prep_args &p,
		     uint32_t box_rows);
struct sm90_prep_args sm90_prep_args_of(const struct mxa_matrix *y,
					const uint8_t *yd, uint64_t ys,
					const void *ysc, const uint32_t *rmax,
					uint8_t *out, uint32_t *bad_tiles,
					uint32_t tile_shift);
/* The job's C as the kernels write it. */
struct sm90_c sm90_c_of(const struct mxa_job *job);

/*
 * The NVFP4 epilogue's factors t1, t2 (C = acc * 2^16 * t1 * t2) from the
 * operands' tensor scales, so that only a true overflow or underflow
 * leaves fp32's range (cuda_sm90_operand.cu says how).
 */
void sm90_nvfp4_factors(const struct mxa_matrix *a, const struct mxa_matrix *b, float *t1,
			float *t2);
/* The same split for the product of two scales ta * tb (both > 0). */
void sm90_nvfp4_factors_of(float ta, float tb, float *t1, float *t2);
/* sm90_prep_nvfp4()'s arguments for m (codes at data, row stride stride). */
struct sm90_nvfp4_prep_args sm90_nvfp4_prep_args_of(const struct mxa_matrix *m,
						    const uint8_t *data, uint64_t stride,
						    uint8_t *out, uint32_t *row_nan);
/*
 * The bf16 kernels' flag block where the launcher owns the row flags (the
 * NVFP4 pre-pass's NaN rows, the weight-only activations'): a word per row
 * of x (b.m) and of y (b.n), per tile row and tile column, then the count
 * and list of the fp8 kernel's tiles.  _bytes() needs b's sizes and tile
 * counts; _at() points b's flags into the (zeroed) block.
 */
size_t sm90_bf16_flags_bytes(const struct sm90_bf16_args &b);
void sm90_bf16_flags_at(struct sm90_bf16_args *b, uint32_t *flags);
/*
 * Stream-ordered scratch of head bytes (the launcher's) and then b's flag
 * block, zeroed, b's flags pointed into it; freed by the caller (also on
 * failure, where *scratch is not NULL).  what: the failure's message.
 */
int sm90_bf16_scratch(struct cuda_device *cd, struct sm90_bf16_args *b, size_t head,
		      void **scratch, const char *what);
/*
 * The grouped launchers' verdict on device-side offsets: whether the call
 * waits for its stream anyway (the device's own stream, or MXACCEL_DEBUG;
 * on a caller's stream nothing synchronises), and then the schedule
 * pass's four status words and the count of tiles left to the fallback,
 * read after the stream's work (cuda_gemm_sm90_grouped.cu).
 */
bool sm90_grouped_waits(struct cuda_device *cd);
/*
 * The shared refusals of the offsets (status words st, SM90_SCHED_OK to
 * SM90_SCHED_BLOCK) as the host's checks word them: dim "M" or "K", its
 * total extent, the block size K boundaries need.
 */
int sm90_offsets_verdict(const uint32_t *st, const char *dim, uint32_t extent, uint32_t block);
int sm90_grouped_verdict(struct cuda_device *cd, const void *status, const uint32_t *list_count,
			 uint32_t *st, uint32_t *left);
/* The job as a GEMM's op descriptor, for the paths' reject() and rank(). */
struct mxa_op_desc sm90_desc_of(const struct mxa_job *job);
/*
 * The skinny kernel's arguments for C = A B^T with x (B's rows) and y
 * (A's) as the kernel reads them; dense (no groups).
 */
struct sm90_skinny_args sm90_skinny_args_of(const struct mxa_job *job,
					    const struct sm90_mx_operand &x,
					    const struct sm90_mx_operand &y);
/* One operand as the decode and skinny kernels read it. */
struct sm90_mx_operand sm90_mx_operand_of(const struct mxa_matrix *m,
					  const uint8_t *data, uint64_t stride);

#endif /* MXA_CUDA_SM90_CUH */
