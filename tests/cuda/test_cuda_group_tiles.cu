// SPDX-License-Identifier: MIT
/*
 * The grouped GEMM's tile mapping (lib/cuda/cuda_sm90.cuh:
 * sm90_group_raster() and sm90_group_tile(), which gemm_sm90_bf16_kernel's
 * group_tiles policy and the fallback kernel of cuda-grouped-sm90 use) run
 * on the host, where there is no GPU: for random 2d x 3d group layouts
 * (empty groups, a few rows, multiples of the 128-row tile, ragged), with
 * the schedule cuda_gemm_sm90_grouped.cu's pass computes (each group's
 * first row and first tile row), every CTA of the launched upper bound
 * (ceil(M / 128) + groups tile rows by ceil(N / 256)) either exits or
 * takes a tile inside one group (its rows from the group's start in
 * steps of 128, B's rows at the group's place in the stack), and every
 * (row of C, tile column) is computed by exactly one CTA.  And A's
 * scales by tile row (sm90_group_scale_row()): each tile's column in the
 * scale map is 16-byte aligned (the tensor memory accelerator faults with
 * an illegal instruction on an unaligned innermost box start, as the
 * group's first row was on the H200), its 128 rows there are the tile's
 * rows of A, and every row of A is its own group's at exactly one of them.
 * The same coverage for the swapped mapping (sm90_group_unit(): units of
 * 256 rows of A, tiles of 128 rows of B, B's stack row 16-byte aligned in
 * its scale map when N is a multiple of 16).  Built by nvcc as host code where nvcc is found; needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "cuda_sm90.cuh"

const struct mxa_plugin_host *cuda_host;

static uint64_t state = 20261202;

static uint32_t below(uint32_t n)
{
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(state >> 33) % n;
}

/*
 * The schedule pass's: each group's first row (rs) and first unit of
 * `unit` rows (us), count + 1 entries each; returns the units in all.
 */
static uint32_t schedule(const std::vector<int32_t> &ends, uint32_t count, uint32_t unit,
			 std::vector<uint32_t> &rs, std::vector<uint32_t> &us)
{
	uint32_t total = 0;

	for (uint32_t g = 0; g < count; g++) {
		const uint32_t prev = g ? (uint32_t)ends[g - 1] : 0;

		rs[g] = prev;
		us[g] = total;
		total += ((uint32_t)ends[g] - prev + unit - 1) / unit;
	}
	rs[count] = (uint32_t)ends[count - 1];
	us[count] = total;
	return total;
}

/* Every (row, tile) pair computed by exactly one CTA; else says which is not. */
static bool once_each(const std::vector<int> &seen, uint32_t tiles, const char *what)
{
	for (size_t i = 0; i < seen.size(); i++) {
		if (seen[i] != 1) {
			printf("FAIL: %srow %zu, tile %zu computed by %d CTAs\n", what, i / tiles,
			       i % tiles, seen[i]);
			return false;
		}
	}
	return true;
}

/* One layout; returns the number of (row, tile column) pairs, or -1. */
static long check(uint32_t count, uint32_t n, const std::vector<int32_t> &ends)
{
	const uint32_t m = (uint32_t)ends[count - 1];
	const uint32_t tiles_n = (n + SM90_BF16_BN - 1) / SM90_BF16_BN;
	const uint32_t tiles_m = (m + SM90_BF16_BM - 1) / SM90_BF16_BM + count;
	std::vector<uint32_t> rs(count + 1), ts(count + 1);
	std::vector<int> seen((size_t)m * tiles_n, 0), owned(m, 0);
	struct sm90_groups gs = {};
	const uint32_t t = schedule(ends, count, SM90_BF16_BM, rs, ts);
	uint32_t g, bid;
	size_t i;

	gs.row_start = rs.data();
	gs.tile_start = ts.data();
	gs.count = count;
	gs.n = n;
	if (t > tiles_m) {
		printf("FAIL: %u tile rows, more than the launched bound %u\n", t, tiles_m);
		return -1;
	}
	for (bid = 0; bid < tiles_m * tiles_n; bid++) {
		struct sm90_group_tile gt;
		uint32_t u, tn, r;

		if (!sm90_group_raster(t, tiles_n, bid, &u, &tn))
			continue;
		gt = sm90_group_tile(gs, u, tn);
		g = gt.group;
		if (g >= count || gt.m_end != (uint32_t)ends[g] || gt.a_row < rs[g] ||
		    gt.a_row >= gt.m_end || (gt.a_row - rs[g]) % SM90_BF16_BM ||
		    gt.c_col != tn * SM90_BF16_BN || gt.b_row != g * n + gt.c_col ||
		    gt.sa_col != u * SM90_BF16_BM || gt.sa_col % 16) {
			printf("FAIL: CTA %u: group %u rows [%u, %u) column %u B row %u scale column %u (tile row %u); the group's rows are [%u, %d)\n",
			       bid, g, gt.a_row, gt.m_end, gt.c_col, gt.b_row, gt.sa_col, u,
			       g < count ? rs[g] : 0, g < count ? ends[g] : -1);
			return -1;
		}
		for (r = 0; r < SM90_BF16_BM; r++) {
			bool own;
			const uint32_t src = sm90_group_scale_row(gs, gt.sa_col + r, &own);

			if (src != gt.a_row + r || own != (gt.a_row + r < gt.m_end)) {
				printf("FAIL: CTA %u: scale row %u holds row %u of A (own group: %d), the tile's row there is %u (own: %d)\n",
				       bid, gt.sa_col + r, src, own, gt.a_row + r,
				       gt.a_row + r < gt.m_end);
				return -1;
			}
		}
		for (r = gt.a_row; r < gt.a_row + SM90_BF16_BM && r < gt.m_end; r++)
			seen[(size_t)r * tiles_n + tn]++;
	}
	/* Every scale row the scales pass writes: past the tile rows nothing. */
	for (uint32_t o = 0; o < tiles_m * SM90_BF16_BM; o++) {
		bool own;
		const uint32_t src = sm90_group_scale_row(gs, o, &own);

		if (o >= t * SM90_BF16_BM ? src != UINT32_MAX || own : src >= m + SM90_BF16_BM) {
			printf("FAIL: scale row %u of %u tile rows holds row %u of A (own group: %d)\n",
			       o, t, src, own);
			return -1;
		}
		if (own && src < m)
			owned[src]++;
	}
	for (i = 0; i < owned.size(); i++) {
		if (owned[i] != 1) {
			printf("FAIL: row %zu of A is its own group's at %d scale rows\n", i,
			       owned[i]);
			return -1;
		}
	}
	return once_each(seen, tiles_n, "") ? (long)seen.size() : -1;
}

/*
 * The swapped mapping (sm90_group_unit(), group_tiles_swapped): units of
 * 256 rows of A per group, tiles of 128 rows of B; returns the pairs of
 * (row of A, tile of N) covered, each by exactly one CTA, or -1.
 */
static long check_swapped(uint32_t count, uint32_t n, const std::vector<int32_t> &ends)
{
	const uint32_t m = (uint32_t)ends[count - 1];
	const uint32_t tiles_n = (n + SM90_BF16_BM - 1) / SM90_BF16_BM;
	const uint32_t units = (m + SM90_BF16_BN - 1) / SM90_BF16_BN + count;
	std::vector<uint32_t> rs(count + 1), us(count + 1);
	std::vector<int> seen((size_t)m * tiles_n, 0);
	struct sm90_groups gs = {};
	const uint32_t u_total = schedule(ends, count, SM90_BF16_BN, rs, us);
	uint32_t g, bid;

	gs.row_start = rs.data();
	gs.unit_start = us.data();
	gs.count = count;
	gs.n = n;
	if (u_total > units) {
		printf("FAIL: %u units, more than the launched bound %u\n", u_total, units);
		return -1;
	}
	for (bid = 0; bid < units * tiles_n; bid++) {
		struct sm90_group_unit gu;
		uint32_t u, tn, r;

		if (!sm90_group_raster(u_total, tiles_n, bid, &u, &tn))
			continue;
		gu = sm90_group_unit(gs, u, tn);
		g = gu.group;
		if (g >= count || gu.a_end != (uint32_t)ends[g] || gu.a_row < rs[g] ||
		    gu.a_row >= gu.a_end || (gu.a_row - rs[g]) % SM90_BF16_BN ||
		    gu.n0 != tn * SM90_BF16_BM || gu.b_row != g * n + gu.n0 ||
		    (n % 16 == 0 && gu.b_row % 16)) {
			printf("FAIL: swapped CTA %u: group %u rows [%u, %u) N from %u stack row %u (unit %u); the group's rows are [%u, %d)\n",
			       bid, g, gu.a_row, gu.a_end, gu.n0, gu.b_row, u,
			       g < count ? rs[g] : 0, g < count ? ends[g] : -1);
			return -1;
		}
		for (r = gu.a_row; r < gu.a_row + SM90_BF16_BN && r < gu.a_end; r++)
			seen[(size_t)r * tiles_n + tn]++;
	}
	return once_each(seen, tiles_n, "swapped: ") ? (long)seen.size() : -1;
}

int main(void)
{
	long pairs = 0, swapped_pairs = 0, r;
	unsigned int layouts = 0;

	for (int trial = 0; trial < 2000; trial++) {
		const uint32_t count = 1 + below(trial < 1000 ? 20 : 300);
		const uint32_t n = 1 + below(700);
		std::vector<int32_t> ends(count);
		uint32_t m = 0;

		for (uint32_t g = 0; g < count; g++) {
			switch (below(4)) {
			case 0:
				break;				/* empty */
			case 1:
				m += below(5);			/* a few rows */
				break;
			case 2:
				m += SM90_BF16_BM * below(3);	/* whole tiles */
				break;
			default:
				m += below(600);		/* ragged */
			}
			ends[g] = (int32_t)m;
		}
		if (!m)
			continue;
		r = check(count, n, ends);
		if (r < 0)
			return 1;
		pairs += r;
		r = check_swapped(count, n, ends);
		if (r < 0)
			return 1;
		swapped_pairs += r;
		layouts++;
	}
	printf("%u group layouts: each of %ld (row, tile column) pairs computed by exactly one CTA; every tile's A scales at a 16-byte aligned column, each row of A its own group's at one scale row; swapped mapping: each of %ld (row, tile of N) pairs by exactly one CTA\n",
	       layouts, pairs, swapped_pairs);
	return 0;
}
