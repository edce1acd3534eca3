#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Fetch the kernel's own tools that headers packages lack (checkpatch.pl and
# its data files, the kselftest harness headers) from Debian's
# linux-source package, extracting only those files, cached outside the
# repository.  Prints the directory that holds them.
set -eu
cache=${MXACCEL_CACHE:-/var/cache/mxaccel}
ver=${MXACCEL_LINUX_SOURCE:-6.1}
dir=$cache/linux-tools-$ver
files="scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
tools/testing/selftests/kselftest_harness.h tools/testing/selftests/kselftest.h"

if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$cache"
deb=$(ls "$cache"/linux-source-"$ver"_*.deb 2>/dev/null | tail -n 1 || true)
if [ -z "$deb" ]; then
	echo "fetching linux-source-$ver from the Debian archive" >&2
	(cd "$cache" && apt-get download -q "linux-source-$ver" >&2)
	deb=$(ls "$cache"/linux-source-"$ver"_*.deb | tail -n 1)
fi
tmp=$(mktemp -d "$cache/extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "extracting checkpatch and kselftest headers from $(basename "$deb")" >&2
dpkg-deb --fsys-tarfile "$deb" |
	tar -x -C "$tmp" --wildcards './usr/src/linux-source-*.tar.*'
src=$(ls "$tmp"/usr/src/linux-source-*.tar.*)
top=$(basename "$src" | sed 's/\.tar\..*//')
# shellcheck disable=SC2086
tar -x -C "$tmp" -f "$src" $(for f in $files; do echo "$top/$f"; done)
rm -rf "$dir"
mkdir -p "$dir"
cp -r "$tmp/$top/." "$dir/"
touch "$dir/.complete"
echo "$dir"
