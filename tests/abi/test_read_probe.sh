#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/bench/read_probe.cu's arguments, on any machine: sizes it cannot
# read whole (rows not a multiple of 16, row bytes not a multiple of 512,
# zero, shared memory past a CTA's 227 KB) are refused with exit 2 and one
# line naming each argument, before any CUDA call (so no GPU is needed).
# The probe is built where nvcc is found; without it the test skips (77)
# unless MXACCEL_REQUIRE_CUDA=1 (.ci/run sets it).
set -u

probe=${MXACCEL_BUILD:-build/rel}/tests/read_probe
if [ ! -x "$probe" ]; then
	if [ "${MXACCEL_REQUIRE_CUDA:-0}" = 1 ]; then
		echo "FAIL: $probe not built (nvcc required)"
		exit 1
	fi
	echo "skip: $probe not built (no nvcc)"
	exit 77
fi

failures=0
refused() {
	local want=$1 out rc
	shift
	out=$("$probe" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = 2 ] && [ "$out" = "$want" ]; then
		echo "ok: read_probe $* refused"
	else
		echo "FAIL: read_probe $*: exit $rc, stderr '$out' (want exit 2, '$want')"
		failures=$((failures + 1))
	fi
}

msg() {
	echo "read_probe: rows ($1) must be a non-zero multiple of 16, row_bytes ($2) of 512, min_kb ($3) within 0..227"
}
refused "$(msg 15 4096 0)" 15 4096
refused "$(msg 0 4096 0)" 0 4096
refused "$(msg 24 4096 0)" 24 4096
refused "$(msg 16 100 0)" 16 100
refused "$(msg 16 0 0)" 16 0
refused "$(msg 16 768 0)" 16 768
refused "$(msg 14336 4096 228)" 14336 4096 228
refused "$(msg 14336 4096 -1)" 14336 4096 -1 once
[ "$failures" = 0 ]
