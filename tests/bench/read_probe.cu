// SPDX-License-Identifier: MIT
/*
 * How fast can a GPU read a row-major weight matrix in the order a decode
 * GEMM wants it?  The skinny kernel (lib/cuda/cuda_gemm_sm90_skinny.cu)
 * reads 16 rows at a time, a span of each row per stage, while a copy
 * reads memory in order.  This probe times the two orders with the same
 * machinery (per-warp cp.async rings, nothing computed), so that a
 * kernel's share of copy bandwidth can be split into what the access
 * order costs and what the kernel adds.
 *
 *   nvcc -O3 -arch=sm_90a -o read_probe tests/bench/read_probe.cu
 *   ./read_probe [rows] [row_bytes] [min_kb] [once]
 *
 * rows x row_bytes (multiples of 16 and of 512) defaults to 14336 x 4096
 * (MXFP8 weights); min_kb (0 to 227) pads each CTA's shared memory (the
 * skinny kernel's 64 KB: three CTAs per SM and the L1 cache that leaves).
 *
 * Orders: "rows" (16 rows, a span of each per stage), "swz" (the same into
 * the skinny kernel's swizzled layout), "fill" (that, with the zero-fill
 * form of cp.async), "bulk" (each row's span by the bulk-copy engine
 * instead of cp.async), "seq" (the same bytes in memory order).
 *
 * Every variant reads the whole matrix once per launch, rotating among
 * enough copies that they do not fit in L2; GB/s are the matrix's bytes
 * over the median launch time (cudaEvent, 30 launches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(x)							\
	do {								\
		cudaError_t e_ = (x);					\
		if (e_ != cudaSuccess) {				\
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__,	\
				__LINE__, #x, cudaGetErrorString(e_));	\
			exit(1);					\
		}							\
	} while (0)

constexpr int WARPS = 8;

__device__ __forceinline__ void cp16(uint32_t dst, const void *src)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src)
		     : "memory");
}

__device__ __forceinline__ void commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* The zero-filling form (source size in a register), as kernels use at edges. */
__device__ __forceinline__ void cp16_fill(uint32_t dst, const void *src, uint32_t n)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src),
		     "r"(n) : "memory");
}

/* A row's span by the bulk-copy (TMA) engine, counted on an mbarrier. */
__device__ __forceinline__ void bulk(uint32_t dst, const void *src, uint32_t n, uint32_t bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1], %2, [%3];" :: "r"(dst), "l"(src), "r"(n), "r"(bar)
		     : "memory");
}

__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity)
{
	uint32_t done;

	do {
		asm volatile("{\n.reg .pred p;\n"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
	} while (!done);
}

template <int N> __device__ __forceinline__ void wait_group(void)
{
	asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

/*
 * Each warp: 16 rows (ROWS mode) or a contiguous piece of the matrix of
 * the same size (SEQ mode), split in `ranges` along the row; a stage is 16
 * x S bytes, STAGES stages in the ring.  rot: warps start their range at
 * different stages (as the skinny kernel does).
 */
template <int S, int STAGES, bool SEQ, bool SWZ, bool FILL, bool BULK>
__global__ void __launch_bounds__(32 * WARPS)
probe(const uint8_t *m, uint32_t rows, uint32_t row_bytes, uint32_t ranges, int rot,
      uint32_t *sink)
{
	constexpr uint32_t STAGE = 16 * S, PER_LANE = STAGE / 16 / 32;
	extern __shared__ __align__(16) uint8_t smem[];
	const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const uint32_t gw = blockIdx.x * WARPS + warp;
	const uint32_t group = gw / ranges, part = gw % ranges;
	const uint32_t range = (row_bytes + ranges - 1) / ranges / S * S;
	const uint32_t c0 = part * range;
	const uint32_t c1 = part == ranges - 1 ? row_bytes : c0 + range;
	const uint32_t iters = (c1 - c0) / S;
	uint8_t *ring = smem + warp * STAGES * STAGE;
	const uint32_t ring_s = (uint32_t)__cvta_generic_to_shared(ring);
	uint32_t acc = 0;

	if (group * 16 >= rows || !iters)
		return;
	const uint32_t r0 = rot ? (gw * 5) % iters : 0;
	auto src = [&](uint32_t it, uint32_t u) -> const uint8_t * {
		const uint32_t unit = u * 32 + lane;	/* 16-byte units of the stage */
		it = it + r0 < iters ? it + r0 : it + r0 - iters;
		if (SEQ) {
			/* The same bytes as 16 rows x [c0, c1), read in order. */
			const uint64_t base = (uint64_t)group * 16 * row_bytes +
					      (uint64_t)part * 16 * range;
			return m + base + (uint64_t)it * STAGE + unit * 16;
		}
		const uint32_t h = unit / (S / 16), off = unit % (S / 16) * 16;
		return m + (uint64_t)(group * 16 + h) * row_bytes + c0 + it * S + off;
	};
	/* SWZ: the skinny kernel's layout (16-byte units XOR the row). */
	auto dst = [&](uint32_t it, uint32_t u) {
		const uint32_t unit = u * 32 + lane;
		const uint32_t h = unit / (S / 16), c = unit % (S / 16);

		return ring_s + (it % STAGES) * STAGE +
		       (SWZ ? h * S + ((c ^ (h & 7)) << 4) : unit * 16);
	};
	/* BULK: lanes 0-15 copy a row each, the stage counted on its mbarrier. */
	const uint32_t bars = (uint32_t)__cvta_generic_to_shared(smem + WARPS * STAGES * STAGE) +
			      warp * STAGES * 8;
	auto issue = [&](uint32_t it) {
		if (BULK) {
			const uint32_t b = bars + (it % STAGES) * 8;

			if (lane == 0)
				asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
					     :: "r"(b), "r"(16 * S) : "memory");
			const uint32_t at = ring_s + (it % STAGES) * STAGE + lane * S;

			__syncwarp();
			it = it + r0 < iters ? it + r0 : it + r0 - iters;
			if (lane < 16)
				bulk(at, m + (uint64_t)(group * 16 + lane) * row_bytes + c0 + it * S,
				     S, b);
		} else {
			for (uint32_t u = 0; u < PER_LANE; u++) {
				if (FILL)	/* a size the compiler cannot fold */
					cp16_fill(dst(it, u), src(it, u), rows ? 16 : 0);
				else
					cp16(dst(it, u), src(it, u));
			}
		}
	};
	if (BULK && lane < STAGES) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bars + lane * 8)
			     : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncwarp();
	for (uint32_t it = 0; it < STAGES - 1; it++) {
		if (it < iters)
			issue(it);
		commit();
	}
	for (uint32_t it = 0; it < iters; it++) {
		__syncwarp();
		if (it + STAGES - 1 < iters)
			issue(it + STAGES - 1);
		commit();
		if (BULK)
			bar_wait(bars + (it % STAGES) * 8, (it / STAGES) & 1);
		else
			wait_group<STAGES - 1>();
		__syncwarp();
		acc ^= *(const uint32_t *)(ring + (it % STAGES) * STAGE + lane * 4);
	}
	wait_group<0>();
	if (acc == 0x12345678u)
		sink[gw] = acc;
}

struct variant {
	const char *name;
	void *fn;
	int s, stages;
};

template <int S, int STAGES, bool SEQ = false, bool SWZ = false, bool FILL = false,
	  bool BULK = false>
struct variant make(const char *name)
{
	return { name, (void *)probe<S, STAGES, SEQ, SWZ, FILL, BULK>, S, STAGES };
}

/*
 * Median milliseconds of run(i) for i = 0 .. 32, each between two events,
 * the first three not counted; with once, run(0) alone.
 */
template <class F> float median_ms(bool once, cudaEvent_t e0, cudaEvent_t e1, F run)
{
	std::vector<float> ms;

	for (int i = 0; i < (once ? 1 : 33); i++) {
		float t;

		CHECK(cudaEventRecord(e0));
		run(i);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&t, e0, e1));
		if (i >= 3 || once)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	return ms[ms.size() / 2];
}

int main(int argc, char **argv)
{
	/* "once": one launch per variant (for a profiler). */
	const bool once = argc > 1 && !strcmp(argv[argc - 1], "once");
	const int nargs = argc - once;
	const uint32_t rows = nargs > 1 ? atoi(argv[1]) : 14336;
	const uint32_t row_bytes = nargs > 2 ? atoi(argv[2]) : 4096;
	/* Shared memory per CTA at least this (KB): fewer CTAs, less L1. */
	const int min_kb = nargs > 3 ? atoi(argv[3]) : 0;
	const size_t bytes = (size_t)rows * row_bytes;

	/* Whole 16-row groups and whole 512-byte spans: nothing read past the end. */
	if (!rows || rows % 16 || !row_bytes || row_bytes % 512 || min_kb < 0 || min_kb > 227) {
		fprintf(stderr, "read_probe: rows (%u) must be a non-zero multiple of 16, "
			"row_bytes (%u) of 512, min_kb (%d) within 0..227\n",
			rows, row_bytes, min_kb);
		return 2;
	}
	const int copies = std::max<int>(2, (int)((256u << 20) / bytes + 1));
	const struct variant v[] = {
		make<128, 2>("rows"),
		make<128, 2, false, true>("swz"),
		make<128, 2, false, true, true>("fill"),
		make<128, 2, false, false, false, true>("bulk"),
		make<128, 3, false, false, false, true>("bulk"),
		make<128, 4, false, false, false, true>("bulk"),
		make<128, 4, false, true>("swz"),
		make<128, 4>("rows"),
		make<128, 8>("rows"),
		make<256, 2>("rows"),
		make<256, 4>("rows"),
		make<512, 2>("rows"),
		make<512, 3>("rows"),
		make<128, 2, true>("seq"),
		make<128, 4, true>("seq"),
		make<256, 4, true>("seq"),
		make<512, 2, true>("seq"),
	};
	std::vector<uint8_t *> mats(copies);
	uint32_t *sink;
	cudaEvent_t e0, e1;
	int sms;

	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	for (auto &p : mats) {
		CHECK(cudaMalloc(&p, bytes));
		CHECK(cudaMemset(p, 0x5a, bytes));
	}
	CHECK(cudaMalloc(&sink, 1 << 20));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	printf("%u x %u bytes (%.1f MB), %d copies rotated, %d SMs\n", rows, row_bytes,
	       bytes / 1e6, copies, sms);
	printf("%-5s %5s %6s %6s %4s %5s %8s %8s\n", "order", "span", "stages", "ranges", "rot",
	       "occ", "us", "GB/s");
	for (auto &x : v) {
		const int smem = std::max(WARPS * x.stages * (16 * x.s + 8), min_kb * 1024);

		if (smem > 227 * 1024)
			continue;
		CHECK(cudaFuncSetAttribute(x.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   smem));
		for (uint32_t ranges = 1; ranges <= 4; ranges++) {
			if (row_bytes / ranges < (uint32_t)x.s * 2)
				continue;
			for (int rot = 0; rot < 2; rot++) {
				const uint32_t warps = (rows + 15) / 16 * ranges;
				const uint32_t ctas = (warps + WARPS - 1) / WARPS;
				int occ;

				CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, x.fn,
										    32 * WARPS, smem));
				const float ms = median_ms(once, e0, e1, [&](int i) {
					void *args[] = { &mats[i % copies], (void *)&rows,
							 (void *)&row_bytes, &ranges, &rot, &sink };

					CHECK(cudaLaunchKernel(x.fn, ctas, 32 * WARPS, args, smem, 0));
				});
				printf("%-5s %5d %6d %6u %4d %5d %8.1f %8.0f\n", x.name, x.s,
				       x.stages, ranges, rot, occ, ms * 1e3, bytes / (ms * 1e-3) / 1e9);
			}
		}
	}
	/*
	 * Device-to-device copies, for reference: of the same bytes among the
	 * matrix's copies, and of 1 GiB between two buffers.
	 */
	if (once)
		return 0;
	std::vector<uint8_t *> big(2);

	for (auto &p : big)
		CHECK(cudaMalloc(&p, (size_t)1 << 30));
	for (auto *bufs : { &mats, &big }) {
		const size_t n = bufs == &mats ? bytes : (size_t)1 << 30;
		const float ms = median_ms(false, e0, e1, [&](int i) {
			CHECK(cudaMemcpyAsync((*bufs)[(i + 1) % bufs->size()],
					      (*bufs)[i % bufs->size()], n,
					      cudaMemcpyDeviceToDevice));
		});

		printf("copy  %.1f MB: %.1f us, %.0f GB/s (read + written)\n", n / 1e6, ms * 1e3,
		       2 * n / (ms * 1e-3) / 1e9);
	}
	for (auto p : big)
		CHECK(cudaFree(p));
	return 0;
}
