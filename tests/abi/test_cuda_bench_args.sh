#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/cuda/cuda_bench.c's --recipes, on any machine: a list naming
# anything but its recipes (misspelt, empty, a prefix) is refused with exit
# 2 and one line naming the first bad name, before any device is opened
# (so no GPU is needed); before, such a list benchmarked nothing, silently.
set -u

bench=${MXACCEL_BUILD:-build/rel}/tests/cuda_bench
if [ ! -x "$bench" ]; then
	echo "FAIL: $bench not built"
	exit 1
fi

failures=0
refused() {
	local bad=$1 out rc
	shift
	out=$("$bench" --recipes "$@" 2>&1 >/dev/null)
	rc=$?
	want="cuda_bench: --recipes: '$bad' is not one of mxfp8, mxfp6_e2m3, mxfp6_e3m2, mxfp4, nvfp4, nvfp4xmxfp8, mxfp8xnvfp4"
	if [ "$rc" = 2 ] && [ "$out" = "$want" ]; then
		echo "ok: cuda_bench --recipes $* refused"
	else
		echo "FAIL: cuda_bench --recipes $*: exit $rc, stderr '$out' (want exit 2, '$want')"
		failures=$((failures + 1))
	fi
}

refused mxfp5 mxfp5
refused mxfp6 mxfp6
refused mxfp8x mxfp8x
refused mxfp4_ mxfp8,mxfp4_
refused "" mxfp8,,mxfp4
refused "" ""
refused "" mxfp4,
# --wo-recipes (weight-only) names its own option.
out=$("$bench" --wo-recipes mxfp4,fp4 2>&1 >/dev/null)
rc=$?
want="cuda_bench: --wo-recipes: 'fp4' is not one of mxfp8, mxfp6_e2m3, mxfp6_e3m2, mxfp4, nvfp4, nvfp4xmxfp8, mxfp8xnvfp4"
if [ "$rc" = 2 ] && [ "$out" = "$want" ]; then
	echo "ok: cuda_bench --wo-recipes mxfp4,fp4 refused"
else
	echo "FAIL: cuda_bench --wo-recipes mxfp4,fp4: exit $rc, stderr '$out' (want exit 2, '$want')"
	failures=$((failures + 1))
fi
# Mixed recipes are GEMM recipes only.
out=$("$bench" --grouped-recipes mxfp8,nvfp4xmxfp8 2>&1 >/dev/null)
rc=$?
want="cuda_bench: --grouped-recipes: 'nvfp4xmxfp8' is mixed: --recipes only"
if [ "$rc" = 2 ] && [ "$out" = "$want" ]; then
	echo "ok: cuda_bench --grouped-recipes mxfp8,nvfp4xmxfp8 refused"
else
	echo "FAIL: cuda_bench --grouped-recipes mxfp8,nvfp4xmxfp8: exit $rc, stderr '$out' (want exit 2, '$want')"
	failures=$((failures + 1))
fi
[ "$failures" = 0 ]
