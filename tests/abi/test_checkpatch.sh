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
check() {
	local out
	out=$($cp "$@" 2>&1 | grep -v '^total: 0 errors, 0 warnings' || true)
	if [ -n "$out" ]; then
		echo "$out"
		status=1
	fi
}
for f in lib/core/*.[ch] $(git ls-files 'driver/*.[ch]' 'uapi/*.h' 2>/dev/null); do
	check "$f"
done
for f in $(git ls-files 'lib/*.[ch]' 'tools/*.[ch]' 'tests/*.[ch]' 2>/dev/null ||
	   find lib tools tests -name '*.[ch]'); do
	case $f in lib/core/*) continue ;; esac
	check --ignore PREFER_DEFINED_ATTRIBUTE_MACRO "$f"
done
[ $status -eq 0 ] && echo "checkpatch clean"
exit $status
