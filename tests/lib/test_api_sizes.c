// SPDX-License-Identifier: MIT
/*
 * Size arithmetic of the public API: mxa_data_row_bytes() and
 * mxa_scale_bytes() for plain and swizzled scales, their -EINVAL on a K
 * that is not a multiple of 32, unknown enums and NULL outputs, and
 * mxa_swizzle_index() against design section 3's formula at its corners.
 *
 * Pure functions of the library, the same on every device: this program
 * opens none and runs on the host only.
 */
#include <errno.h>
#include <stddef.h>

#include "testlib.h"

static void test_sizes(void)
{
	size_t n = 12345;

	CHECK(!mxa_data_row_bytes(MXA_ELEM_E2M1, 64, &n) && n == 32,
	      "e2m1 row of 64: %zu", n);
	CHECK(!mxa_data_row_bytes(MXA_ELEM_E4M3, 64, &n) && n == 64,
	      "e4m3 row of 64: %zu", n);
	CHECK(!mxa_data_row_bytes(MXA_ELEM_E3M2, 96, &n) && n == 96,
	      "e3m2 row of 96: %zu", n);
	CHECK_RET(mxa_data_row_bytes(MXA_ELEM_E4M3, 33, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(0, 32, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(6, 32, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(MXA_ELEM_E4M3, 32, NULL), -EINVAL);

	CHECK(!mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 96, &n) && n == 9,
	      "plain 3 x 96: %zu", n);
	CHECK(!mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, 3, 96, &n) && n == 512,
	      "swizzled 3 x 96: %zu", n);
	CHECK(!mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, 129, 160, &n) &&
	      n == 256 * 8, "swizzled 129 x 160: %zu", n);
	CHECK_RET(mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 95, &n), -EINVAL);
	CHECK_RET(mxa_scale_bytes(2, 3, 96, &n), -EINVAL);
	CHECK_RET(mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 96, NULL), -EINVAL);

	/* Design section 3's formula at a few corners. */
	CHECK(mxa_swizzle_index(1, 1, 0, 0) == 0, "swizzle (0, 0)");
	CHECK(mxa_swizzle_index(200, 5, 31, 3) == 31 * 16 + 3,
	      "swizzle (31, 3)");
	CHECK(mxa_swizzle_index(200, 5, 32, 0) == 4, "swizzle (32, 0)");
	CHECK(mxa_swizzle_index(200, 5, 0, 4) == 512, "swizzle (0, 4)");
	CHECK(mxa_swizzle_index(200, 5, 128, 0) == 2 * 512,
	      "swizzle (128, 0)");
	CHECK(mxa_swizzle_index(200, 5, 199, 4) ==
	      (1 * 2 + 1) * 512 + (199 % 32) * 16 + (71 / 32) * 4 + 0,
	      "swizzle (199, 4)");
}

int main(void)
{
	test_sizes();
	return test_finish();
}
