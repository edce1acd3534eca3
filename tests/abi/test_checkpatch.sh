#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# All C sources follow the kernel coding style, checked by the kernel's own
# checkpatch.pl (fetched by scripts/kernel-tools.sh).  The freestanding core
# and the driver are kernel code and get no exemptions; user-space code is excused only
# from preferring kernel-only macros (__printf and friends do not exist
# outside the kernel).
set -eu
if ! tools=$(scripts/kernel-tools.sh); then
	echo "cannot fetch checkpatch.pl from Debian's linux-source package"
	exit 77
fi
cp="perl $tools/scripts/checkpatch.pl --no-tree --terse --file --show-types --max-line-length=100"
status=0
# One checkpatch run per group of files: starting perl and reading
# checkpatch.pl costs about half a second, once per file before.  With
# --terse every problem is a "file:line: TYPE: ..." line; the per-file
# "total:" summaries are dropped (a file with problems shows its lines).
check() {
	local out
	out=$($cp "$@" 2>&1 | grep -v '^total: ' || true)
	if [ -n "$out" ]; then
		echo "$out"
		status=1
	fi
}
kernel_files=$(ls lib/core/*.[ch]; git ls-files 'driver/*.[ch]' 'uapi/*.h' 2>/dev/null)
user_files=$( (git ls-files 'lib/*.[ch]' 'tools/*.[ch]' 'tests/*.[ch]' 2>/dev/null ||
	      find lib tools tests -name '*.[ch]') | grep -v '^lib/core/')
# shellcheck disable=SC2086 # word splitting of the file lists is wanted
check $kernel_files
# shellcheck disable=SC2086
check --ignore PREFER_DEFINED_ATTRIBUTE_MACRO $user_files
[ $status -eq 0 ] && echo "checkpatch clean"
exit $status
