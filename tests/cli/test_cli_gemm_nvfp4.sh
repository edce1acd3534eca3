#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `mxaccel gemm` with NVFP4 operands (NVFP4 x NVFP4, NVFP4 x MX, MX x
# NVFP4; single and two level; plain and swizzled; fp32 and bf16; with and
# without --c-in) against the exact rational reference in
# gemm_nvfp4_ref.py (python3 fractions, no numpy), bit for bit.
#
# Environment: MXACCEL_BUILD (default build/rel), MXACCEL_TEST_SEED,
# MXACCEL_TEST_DEVICE (the device `mxaccel gemm` runs on, default cpu).
set -u

. "$(dirname "$0")/lib.sh"
need_python3
unset MXACCEL_KERNEL MXACCEL_DEVICE

python3 "$cli_dir/gemm_nvfp4_ref.py" "$mx" "$tmp" \
	"${MXACCEL_TEST_SEED:-20261202}"
