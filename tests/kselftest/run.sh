#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the mxaccel kselftests in order, the way the kernel's kselftest
# runner does: one TAP line per program, each program's own TAP (from the
# kselftest harness) nested below it as "# " comment lines.  A program that
# exits 4 (KSFT_SKIP: no mxaccel device) is a skip, not a failure.
#
# Usage: run.sh [PROGRAM...]	(default: all, from this script's directory)
# Exit status: 0 if no program failed, 1 otherwise.
#
# POSIX sh only: it also runs under busybox in the test VM.

dir=$(cd "$(dirname "$0")" && pwd)
# module_test removes and reloads the module (from $MXACCEL_KO, default
# /payload/mxaccel.ko); pci_test (PCI devices only) ends by losing the
# device for good: they stay last.
[ $# -gt 0 ] || set -- param_test bo_test queue_test isolation_test \
	submit_test compute_test nvfp4_test sync_test hang_test limits_test \
	core_test import_test fuzz_test module_test pci_test
rcfile=$(mktemp "${TMPDIR:-/tmp}/mxaccel-kselftest.XXXXXX") || exit 1
trap 'rm -f "$rcfile"' EXIT

echo "TAP version 13"
echo "1..$#"

n=0
pass=0
fail=0
skip=0
failed=
for t in "$@"; do
	n=$((n + 1))
	echo "# selftests: mxaccel: $t"
	if [ -x "$dir/$t" ]; then
		{
			"$dir/$t" 2>&1
			echo $? >"$rcfile"
		} | sed 's/^/# /'
		rc=$(cat "$rcfile")
	else
		echo "# no executable $dir/$t"
		rc=127
	fi
	case $rc in
	0)
		pass=$((pass + 1))
		echo "ok $n selftests: mxaccel: $t"
		;;
	4)
		skip=$((skip + 1))
		echo "ok $n selftests: mxaccel: $t # SKIP"
		;;
	*)
		fail=$((fail + 1))
		failed="$failed $t"
		echo "not ok $n selftests: mxaccel: $t # exit=$rc"
		;;
	esac
done

echo "# mxaccel kselftests: $pass passed, $fail failed, $skip skipped${failed:+ (failed:$failed)}"
[ "$fail" -eq 0 ]
