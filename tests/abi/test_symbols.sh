#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The shared library exports exactly lib/libmxaccel-symbols.txt: every
# symbol with its version (NAME@@NODE the default programs link against,
# NAME@NODE an older version kept for programs built against it, see
# lib/libmxaccel.map).  An export added, lost or moved to another node is
# an ABI change that must be made on purpose (update both files).
set -eu
so=${MXACCEL_BUILD:-build/rel}/lib/libmxaccel.so
[ -e "$so" ] || { echo "no $so"; exit 1; }
actual=$(nm -D --defined-only "$so" | awk '$3 !~ /^MXACCEL_/ {print $3}' | sort)
unversioned=$(printf '%s\n' "$actual" | grep -v '@MXACCEL_' || true)
if [ -n "$unversioned" ]; then
	echo "exported without a version node:"; echo "$unversioned"; exit 1
fi
if ! diff -u lib/libmxaccel-symbols.txt <(printf '%s\n' "$actual"); then
	echo "exported symbols differ from lib/libmxaccel-symbols.txt"; exit 1
fi
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
[ "$soname" = libmxaccel.so.0 ] || { echo "soname is '$soname'"; exit 1; }
echo "$(grep -c @@ lib/libmxaccel-symbols.txt) symbols, $(grep -vc @@ lib/libmxaccel-symbols.txt) older versions, soname $soname"
