#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `mxaccel gemm` against an independent exact computation.
#
# For every element pair (5 x 5) random MX inputs are generated with normal
# rows, rows with extreme scales (E8M0 0, 1, 254, 255), rows whose large
# blocks cancel exactly, rows with special codes (NaN, +-Inf, zeros) and
# NaN-scale rows.  The expected C is computed by gemm_mx_ref.py (python3,
# fractions.Fraction, the shared exact reference of mxref.py) from the
# element definitions of OCP MX v1.0 (design.md section 3: codes decoded by
# hand, not by the library) and the GEMM rules of section 4: the exact sum
# rounded once (round half to even, overflow to +-Inf, exact zero to +0),
# NaN if any contributing scale is 0xFF or element is NaN, Inf * 0 = NaN,
# +Inf + -Inf = NaN.
#
#   --kernel emulated   must match bit for bit (NaN as NaN): fp32 and bf16
#                       output, with and without --c-in, plain and swizzled
#                       scales;
#   --explain           prints device, kernel, support, exact and reason;
#   --kernel native     on the finite normal rows must lie within
#                       (K+1) * 2^-24 * (sum |a*b| + |c_in|) plus half an
#                       output ulp of the exact result, and must give NaN
#                       where a scale is NaN.
#
# Environment: MXACCEL_BUILD (default build/rel), MXACCEL_TEST_SEED.
set -u

. "$(dirname "$0")/lib.sh"
need_python3

python3 "$cli_dir/gemm_mx_ref.py" "$mx" "$tmp" \
	"${MXACCEL_TEST_SEED:-20251129}"
