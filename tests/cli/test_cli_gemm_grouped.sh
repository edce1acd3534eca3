#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `mxaccel gemm --groups` (grouped GEMM: 2d x 3d and 2d x 2d, ragged and
# empty groups, MX, NVFP4 and mixed, torchao's plain and swizzled
# per-group scale layouts, fp32 and bf16, with and without --c-in) against
# the exact rational reference of gemm_grouped_ref.py (python3 fractions,
# no numpy), bit for bit, group by group.
#
# Environment: MXACCEL_BUILD (default build/rel), MXACCEL_TEST_SEED,
# MXACCEL_TEST_DEVICE (the device `mxaccel gemm` runs on, default cpu).
set -u

. "$(dirname "$0")/lib.sh"
need_python3
unset MXACCEL_KERNEL MXACCEL_DEVICE

python3 "$cli_dir/gemm_grouped_ref.py" "$mx" "$tmp" \
	"${MXACCEL_TEST_SEED:-20261202}"
