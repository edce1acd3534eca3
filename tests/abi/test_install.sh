#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make install` into a staging root yields a usable library: a program
# built with `pkg-config --cflags --libs libmxaccel` links the shared
# library, one built against libmxaccel.a links statically, and both run.
set -eu
build=${MXACCEL_BUILD:-build/rel}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
san=
case $build in *san*) san="SANITIZE=1" ;; esac

make -s install $san DESTDIR="$tmp/root" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }
root=$tmp/root
for f in usr/include/mxaccel.h usr/lib/libmxaccel.so.0 usr/lib/libmxaccel.a \
	 usr/lib/pkgconfig/libmxaccel.pc usr/bin/mxaccel; do
	[ -e "$root/$f" ] || { echo "not installed: $f"; exit 1; }
done

cat >"$tmp/prog.c" <<'C'
#include <stdio.h>
#include <mxaccel.h>
int main(void)
{
	struct mxa_recipe r;
	struct mxa_device *dev;

	if (mxa_recipe_parse("mxfp4_rceil", &r) || mxa_device_open("cpu", &dev))
		return 1;
	printf("%s %s\n", mxa_version(), mxa_recipe_name(&r));
	mxa_device_close(dev);
	return 0;
}
C
export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs libmxaccel)
san_flags=
[ -n "$san" ] && san_flags="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc $san_flags "$tmp/prog.c" $flags -o "$tmp/prog-shared"
LD_LIBRARY_PATH=$root/usr/lib "$tmp/prog-shared" | grep -qx "0.2.0 mxfp4_rceil"
# shellcheck disable=SC2086
cc $san_flags -I"$root/usr/include" "$tmp/prog.c" "$root/usr/lib/libmxaccel.a" \
	-ldrm -pthread -ldl -lm -o "$tmp/prog-static"
"$tmp/prog-static" | grep -qx "0.2.0 mxfp4_rceil"
echo "installed, pkg-config and static link work"
