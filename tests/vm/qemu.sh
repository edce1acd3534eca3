#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch the qemu that runs the test VMs.
#
# Usage: tests/vm/qemu.sh
#
# Why not Debian 12's own qemu (7.2): under TCG with two vCPUs it can
# segfault when the guest changes its memory map (a PCI BAR switched off
# by a driver's remove, unbind or rescan) while the other vCPU does MMIO:
# memory_region_dispatch_write() with a NULL region, seen in make check's
# pci_test (remove_and_rescan) on 6.1.  That is the race between a
# memory-map commit and a running vCPU's TLB that QEMU fixed in 8.2 by
# running tcg_commit's update on each vCPU itself.  bookworm-backports
# carries a newer qemu, built for bookworm.
#
# What it does:
#   - uses the host's qemu-system-x86_64 when it is 8.2 or newer (e.g. on
#     Debian 13), downloading nothing;
#   - otherwise apt-get downloads qemu-system-x86, qemu-system-data and
#     seabios from bookworm-backports and dpkg -x them into
#     $MXACCEL_CACHE/qemu/<version without epoch>/ (nothing qemu-specific is installed
#     on the host), and apt-get installs the libraries the binary links
#     against, all from bookworm;
#   - offline, the newest complete tree in the cache serves.
#
# Output on stdout (progress goes to stderr), one KEY=VALUE per line:
#   QEMU_BIN=<path of qemu-system-x86_64>
#   QEMU_ROOT=<the extracted tree, '' for the host's qemu>
#   QEMU_VERSION=<its version, as qemu -version says>
#
# Environment: MXACCEL_QEMU (a qemu-system-x86_64 to use as it is, no
# version check), MXACCEL_CACHE (lib.sh).
# Idempotent: a warm cache costs one apt-cache call.

set -eu
. "$(dirname "$0")/lib.sh"

# The first upstream release with the fixed tcg_commit.
MIN_VERSION=8.2

# x.y[.z] of a qemu-system-x86_64 binary ("QEMU emulator version 7.2.19 (...)").
binary_version() {
	"$1" -version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p'
}

version_at_least() {
	dpkg --compare-versions "$1" ge "$2"
}

# The bookworm-backports version of qemu-system-x86 in the apt lists ('' if
# none), e.g. 1:10.0.2+ds-2+deb13u1~bpo12+1.
backports_version() {
	apt-cache madison qemu-system-x86 2>/dev/null |
		awk -F'|' '$3 ~ /bookworm-backports/ { gsub(/ /, "", $2); print $2; exit }'
}

# The libraries qemu-system-x86_64 links against: its package's Depends
# without the qemu and firmware packages (which are in the tree), taken
# from bookworm.
library_packages() {
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/[ (|].*//' |
		grep -Ev '^(qemu-|seabios$|ipxe-qemu$)' | sort -u
}

# Download and extract into a temporary directory and rename it into
# place, so an interrupted run never leaves a tree that looks complete.
fetch_qemu_tree() {
	local version=$1 dest=$2 tmp deb
	[ -e "$dest/.complete" ] && return 0
	tmp=$(mktemp -d "$CACHE/qemu/.tmp.XXXXXX")
	chmod 755 "$tmp" # so that _apt can reach deb/
	log "downloading qemu $version from bookworm-backports"
	# seabios: the backports qemu wants the newer one (>> 1.16.3).
	download_packages "$tmp/deb" "qemu-system-x86=$version" \
		"qemu-system-data=$version" seabios/bookworm-backports ||
		die "apt-get download failed"
	for deb in "$tmp"/deb/*.deb; do
		log "extracting $(basename "$deb") ($(du -h "$deb" | cut -f1))"
		dpkg -x "$deb" "$tmp/root"
	done
	library_packages "$tmp"/deb/qemu-system-x86_*.deb >"$tmp/root/.libraries"
	rm -rf "$tmp/deb"
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
	rmdir "$tmp"
	touch "$dest/.complete"
}

# The newest complete tree in the cache, for a run without apt lists.
newest_cached() {
	local d best=
	for d in "$CACHE"/qemu/*/; do
		[ -e "$d/.complete" ] || continue
		d=${d%/}
		if [ -z "$best" ] || version_at_least "${d##*/}" "${best##*/}"; then
			best=$d
		fi
	done
	echo "$best"
}

print_result() { # BIN ROOT
	local v
	v=$(binary_version "$1")
	[ -n "$v" ] || die "$1 does not run (qemu -version printed no version)"
	echo "QEMU_BIN=$1"
	echo "QEMU_ROOT=$2"
	echo "QEMU_VERSION=$v"
}

main() {
	[ $# -eq 0 ] || { sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
	local host host_version='' version root
	if [ -n "${MXACCEL_QEMU:-}" ]; then
		[ -x "$MXACCEL_QEMU" ] || die "MXACCEL_QEMU=$MXACCEL_QEMU is not an executable"
		print_result "$MXACCEL_QEMU" ''
		return
	fi
	host=$(command -v qemu-system-x86_64 || true)
	[ -z "$host" ] || host_version=$(binary_version "$host")
	if [ -n "$host_version" ] && version_at_least "$host_version" "$MIN_VERSION"; then
		print_result "$host" ''
		return
	fi
	mkdir -p "$CACHE/qemu"
	version=$(backports_version)
	if [ -z "$version" ] || [ ! -e "$CACHE/qemu/${version#*:}/.complete" ]; then
		ensure_backports_source
		apt_update_once
		version=$(backports_version)
	fi
	if [ -n "$version" ]; then
		# No epoch in the name: a ':' in a path is asking for trouble.
		root=$CACHE/qemu/${version#*:}
		with_lock "$root.lock" fetch_qemu_tree "$version" "$root"
	else
		root=$(newest_cached)
		[ -n "$root" ] || die "no qemu >= $MIN_VERSION: the host's is" \
			"${host:-none}${host_version:+ ($host_version)}, the apt lists name" \
			"no bookworm-backports one, and $CACHE/qemu has none; set MXACCEL_QEMU"
		log "no bookworm-backports qemu in the apt lists: using ${root##*/} from the cache"
	fi
	# shellcheck disable=SC2046 # one package name per word
	ensure_pkgs $(cat "$root/.libraries")
	print_result "$root/usr/bin/qemu-system-x86_64" "$root"
}

main "$@"
