#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Run test programs, each under a timeout, and print one TAP-like line per
# test and a final "N passed, N failed, N skipped".  Exit status: 0 pass,
# 77 or 4 skip, anything else fail.  MXACCEL_TEST_TIMEOUT overrides the
# per-test limit in seconds.
set -u
timeout_s=${MXACCEL_TEST_TIMEOUT:-900}
logdir=${MXACCEL_BUILD:-build/rel}/test-logs
mkdir -p "$logdir"
pass=0 fail=0 skip=0 n=0
for t in "$@"; do
	n=$((n + 1))
	name=$(basename "$t")
	log="$logdir/$name.log"
	start=$(date +%s.%N)
	timeout --kill-after=10 "$timeout_s" "$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n - $name (${secs}s)" ;;
	77|4) skip=$((skip + 1)); echo "ok $n - $name # SKIP $(tail -n 1 "$log")" ;;
	124|137) fail=$((fail + 1)); echo "not ok $n - $name # TIMEOUT after ${timeout_s}s"
		sed 's/^/#   /' "$log" | tail -n 20 ;;
	*) fail=$((fail + 1)); echo "not ok $n - $name (exit $rc)"
		sed 's/^/#   /' "$log" | tail -n 40 ;;
	esac
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
