#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `mxaccel gemm` with NVFP4 operands (NVFP4 x NVFP4, NVFP4 x MX, MX x
# NVFP4; single and two level; plain and swizzled; fp32 and bf16; with and
# without --c-in) against the exact rational reference in
# gemm_nvfp4_ref.py (python3 fractions, no numpy), bit for bit.
#
# Environment: MXACCEL_BUILD (default build/rel), MXACCEL_TEST_SEED.
set -u

build=${MXACCEL_BUILD:-build/rel}
mx=$build/bin/mxaccel
if [ ! -x "$mx" ]; then
	echo "skip: $mx not built (make tools)"
	exit 77
fi
if ! command -v python3 >/dev/null; then
	echo "skip: python3 not installed"
	exit 77
fi
unset MXACCEL_DEBUG MXACCEL_KERNEL MXACCEL_DEVICE

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/gemm_nvfp4_ref.py" "$mx" "$tmp" \
	"${MXACCEL_TEST_SEED:-20261202}"
