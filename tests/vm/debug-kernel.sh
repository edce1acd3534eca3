#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build the 6.12-debug VM test kernel, or reuse it from the cache.
#
# Usage: tests/vm/debug-kernel.sh        (kernel.sh 6.12-debug runs this)
#
# A Linux 6.12 from Debian's linux-source-6.12 (bookworm-security), made
# from tinyconfig plus KASAN, KFENCE, lockdep (PROVE_LOCKING, PROVE_RCU),
# kmemleak, debug objects and fault injection (debug-config.sh; checked
# against debug-want.txt), release string <version>-mxaccel-debug.
#
# Cache: $MXACCEL_CACHE/kernels/debug-<version>-<key>/, where <key> is a
# sha256 over debug-config.sh, debug-want.txt, the linux-source-6.12
# package version, the compiler's version line and LAYOUT below.  It holds
# only what a test run needs (77 MB), not the 1.5 GB build tree:
#   boot/vmlinuz-<kver>, boot/config-<kver>, boot/System.map-<kver>
#   lib/modules/<kver>/       modules_install output, with modules.dep
#   build/                    the external-module build dir (what Debian's
#                             linux-headers package holds): the KDIR
#   build.log                 the full log of the build
#   .complete                 written last
# The build happens in kernels/.tmp-debug.*/ and the result is renamed into
# place under a lock, so an interrupted build never looks complete; its log
# is kernels/debug-<version>-<key>.log until then.
#
# A cold build takes 8 to 12 minutes on 2 cores (7 min 50 s measured, 6.5
# of them make -j$(nproc); MXACCEL_KERNEL_JOBS overrides); a warm cache
# costs one apt-cache query.
# Needs root on a cold cache (apt-get).  MXACCEL_VM_NO_BUILD=1: fail on a
# cache miss instead of building (test_vm_6.12-debug.sh, whose time limit
# has no room for the build; make check builds it first).
#
# Output on stdout, as kernel.sh:
#   KVER=6.12.117-mxaccel-debug
#   VMLINUZ=<entry>/boot/vmlinuz-<kver>
#   MODDIR=<entry>/lib/modules/<kver>
#   KDIR=<entry>/build

set -eu
. "$(dirname "$0")/lib.sh"

SRC_PKG=linux-source-6.12
# Bump when the layout of a cache entry changes: old entries are then
# ignored instead of being misread.
LAYOUT=1
BUILD_DEPS=(build-essential flex bison bc libelf-dev kmod cpio xz-utils)
JOBS=${MXACCEL_KERNEL_JOBS:-$(nproc)}
# Objects the build compiles (CC lines in the log), for the progress line.
EXPECTED_OBJECTS=1400

# The linux-source-6.12 version to build: the installed one if the package
# is installed (its tarball is already in /usr/src), else apt's candidate.
source_version() {
	local v
	if is_installed "$SRC_PKG"; then
		dpkg-query -W -f='${Version}' "$SRC_PKG"
		return
	fi
	v=$(candidate_version)
	if [ -z "$v" ]; then
		apt_update_once
		v=$(candidate_version)
	fi
	[ -n "$v" ] || die "no $SRC_PKG in the apt sources (bookworm-security has it)"
	echo "$v"
}

candidate_version() {
	apt-cache policy "$SRC_PKG" 2>/dev/null | sed -n 's/^ *Candidate: \([0-9].*\)$/\1/p'
}

cache_key() {
	{
		echo "layout=$LAYOUT"
		echo "$SRC_PKG=$1"
		gcc --version | head -n1
		cat "$VM_DIR/debug-config.sh" "$VM_DIR/debug-want.txt"
	} | sha256sum | cut -c1-16
}

# Fails listing every line of debug-want.txt that .config does not match.
check_config() {
	local config=$1 line name missing=()
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		case $line in
		!*)
			name=${line#!}
			grep -q "^CONFIG_$name=" "$config" && missing+=("$line (is $(grep "^CONFIG_$name=" "$config"))")
			;;
		*)
			name=${line%%=*}
			grep -qxF "CONFIG_$line" "$config" ||
				missing+=("$line (is $(grep -E "^CONFIG_$name=|^# CONFIG_$name is not set" "$config" || echo absent))")
			;;
		esac
	done <"$VM_DIR/debug-want.txt"
	if [ ${#missing[@]} -gt 0 ]; then
		printf '  wanted %s\n' "${missing[@]}" >&2
		die "${#missing[@]} option(s) of debug-want.txt not set after olddefconfig (dependency missing?)"
	fi
	log "config: all $(grep -cvE '^(#|$)' "$VM_DIR/debug-want.txt") wanted options set"
}

# Run a build step with its output appended to the log; on failure print
# the log's tail and stop.
step() {
	local what=$1 t0
	shift
	t0=$(now)
	log "$what"
	echo "=== $what: $*" >>"$BUILD_LOG"
	if ! "$@" >>"$BUILD_LOG" 2>&1; then
		tail -n 40 "$BUILD_LOG" | sed 's/^/  /' >&2
		die "$what failed (full log: $BUILD_LOG)"
	fi
	echo "=== $what: done in $(elapsed_since "$t0") s" >>"$BUILD_LOG"
}

# The kernel's make must not inherit the project make's command-line
# variables (CC=, CFLAGS=, V=) or its jobserver through MAKEFLAGS.
kmake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make "$@"
}

# The long step, in the background, with a line of progress a minute.
build_tree() {
	local tree=$1 pid rc=0 t0 n
	t0=$(now)
	log "make -j$JOBS (7 to 12 min on 2 cores; progress every minute)"
	echo "=== make -j$JOBS" >>"$BUILD_LOG"
	kmake -C "$tree" -j"$JOBS" >>"$BUILD_LOG" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		# One line a minute, from the loop's own clock: cheap and no fork.
		if [ $((${EPOCHREALTIME%.*} - ${t0%.*})) -ge $((${LAST_PROGRESS:-0} + 60)) ]; then
			LAST_PROGRESS=$((${EPOCHREALTIME%.*} - ${t0%.*}))
			n=$(grep -c '^  CC' "$BUILD_LOG" || true)
			log "make: $((LAST_PROGRESS / 60)) min, $n of ~$EXPECTED_OBJECTS objects compiled"
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 40 "$BUILD_LOG" | sed 's/^/  /' >&2
		die "kernel build failed, status $rc (full log: $BUILD_LOG)"
	fi
	log "make done in $(elapsed_since "$t0") s"
	echo "=== make: done in $(elapsed_since "$t0") s" >>"$BUILD_LOG"
}

# The source tarball: /usr/src's if the package is installed at this
# version, else downloaded (apt-get download + dpkg -x, nothing installed).
source_tarball() {
	local version=$1 tmp=$2
	local installed=/usr/src/$SRC_PKG.tar.xz
	if is_installed "$SRC_PKG" && [ -f "$installed" ] &&
		[ "$(dpkg-query -W -f='${Version}' "$SRC_PKG")" = "$version" ]; then
		echo "$installed"
		return
	fi
	step "downloading $SRC_PKG $version (~150 MB)" \
		download_packages "$tmp/deb" "$SRC_PKG=$version"
	step "unpacking the .deb" unpack_debs "$tmp/deb" "$tmp/pkg"
	echo "$tmp/pkg/usr/src/$SRC_PKG.tar.xz"
}

unpack_debs() {
	local deb
	for deb in "$1"/*.deb; do
		dpkg -x "$deb" "$2"
	done
}

# Run from the tree: the script reads include/config/auto.conf relatively.
# CC and HOSTCC equal, so that it copies the host programs rather than
# rebuilding them.
install_extmod_build() {
	(cd "$1" && srctree=. SRCARCH=x86 CC=gcc HOSTCC=gcc \
		sh scripts/package/install-extmod-build "$2")
}

remove_tmp() {
	[ -z "${BUILD_TMP:-}" ] || rm -rf "$BUILD_TMP"
}

# Everything below runs under the entry's lock.
build_entry() {
	local version=$1 dest=$2 tree out tarball kver t0 stale
	[ -e "$dest/.complete" ] && return 0
	t0=$(now)
	# Under the lock nobody else is building: leftovers are from killed runs.
	for stale in "$CACHE"/kernels/.tmp-debug.*; do
		[ -e "$stale" ] || continue
		log "removing $stale (an interrupted build)"
		rm -rf "$stale"
	done
	BUILD_TMP=$(mktemp -d "$CACHE/kernels/.tmp-debug.XXXXXX")
	chmod 755 "$BUILD_TMP" # so that apt-get download (_apt) reaches deb/
	trap remove_tmp EXIT
	BUILD_LOG=$dest.log
	: >"$BUILD_LOG"
	log "building the 6.12-debug kernel from $SRC_PKG $version into $dest (log: $BUILD_LOG)"
	tarball=$(source_tarball "$version" "$BUILD_TMP")
	step "extracting $(basename "$tarball")" tar -C "$BUILD_TMP" -xf "$tarball"
	rm -rf "$BUILD_TMP/deb" "$BUILD_TMP/pkg"
	tree=$BUILD_TMP/$SRC_PKG
	[ -f "$tree/Makefile" ] || die "no $SRC_PKG/ in $tarball"
	step "configuring (debug-config.sh)" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		-u MAKEOVERRIDES "$VM_DIR/debug-config.sh" "$tree"
	check_config "$tree/.config"
	build_tree "$tree"
	kver=$(cat "$tree/include/config/kernel.release")
	out=$BUILD_TMP/out
	mkdir -p "$out/boot"
	step "modules_install" kmake -C "$tree" -s modules_install \
		INSTALL_MOD_PATH="$out" INSTALL_MOD_STRIP=1
	# Links back into the build tree, which is about to go.
	rm -f "$out/lib/modules/$kver/build" "$out/lib/modules/$kver/source"
	# The same script Debian's linux-headers packages are made with: the
	# headers, .config, Module.symvers and the host programs (modpost,
	# objtool) that an out-of-tree build needs.
	step "install-extmod-build" install_extmod_build "$tree" "$out/build"
	cp "$tree/arch/x86/boot/bzImage" "$out/boot/vmlinuz-$kver"
	cp "$tree/.config" "$out/boot/config-$kver"
	cp "$tree/System.map" "$out/boot/System.map-$kver"
	echo "$kver" >"$out/kernel.release"
	echo "$SRC_PKG=$version" >"$out/source-version"
	[ -f "$out/lib/modules/$kver/modules.dep" ] || die "modules_install wrote no modules.dep"
	grep -q "\"$kver\"" "$out/build/include/generated/utsrelease.h" ||
		die "the extmod build dir has no utsrelease.h for $kver"
	echo "=== total: $(elapsed_since "$t0") s" >>"$BUILD_LOG"
	mv "$BUILD_LOG" "$out/build.log"
	BUILD_LOG=$out/build.log
	rm -rf "$dest"
	mv "$out" "$dest"
	touch "$dest/.complete"
	rm -rf "$BUILD_TMP"
	trap - EXIT
	log "6.12-debug kernel $kver built in $(elapsed_since "$t0") s ($(du -sh "$dest" | cut -f1) cached)"
}

main() {
	[ $# -eq 0 ] || { sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
	local version key dest kver t0
	t0=$(now)
	ensure_pkgs "${BUILD_DEPS[@]}"
	version=$(source_version)
	key=$(cache_key "$version")
	dest=$CACHE/kernels/debug-${version%%-*}-$key
	mkdir -p "$CACHE/kernels"
	if [ ! -e "$dest/.complete" ]; then
		[ "${MXACCEL_VM_NO_BUILD:-0}" != 1 ] ||
			die "the 6.12-debug kernel is not in the cache ($dest) and MXACCEL_VM_NO_BUILD=1: build it with make debug-kernel"
		[ "$(id -u)" = 0 ] || die "need root to build the debug kernel (cache $dest)"
		with_lock "$dest.lock" build_entry "$version" "$dest"
	fi
	kver=$(cat "$dest/kernel.release")
	log "kernel $kver ready in $(elapsed_since "$t0") s ($dest)"
	echo "KVER=$kver"
	echo "VMLINUZ=$dest/boot/vmlinuz-$kver"
	echo "MODDIR=$dest/lib/modules/$kver"
	echo "KDIR=$dest/build"
}

main "$@"
