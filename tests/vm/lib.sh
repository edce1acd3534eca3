#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Helpers shared by the VM test scripts (sourced, not run).
#
# Environment:
#   MXACCEL_CACHE   where downloads, extracted kernels and qemu live
#                   (default /var/cache/mxaccel/vm; kept outside the repo so
#                   `git clean` and fresh checkouts do not re-download ~150 MB)
#   MXACCEL_VM_QUIET=1  silence progress messages
#   MXACCEL_VM_ACCEL    tcg (default) or kvm
#   MXACCEL_QEMU        the qemu-system-x86_64 to run (default: qemu.sh's)
#   MXACCEL_VM_MEM      guest memory in MiB (default 1024; 2048 on
#                       6.12-debug, whose KASAN shadow takes 1/8 of it)
#   MXACCEL_VM_SMP      guest CPUs (default 2)
#   MXACCEL_TIME_SCALE  how much slower than a Debian kernel the guest
#                       runs (integer; default 1, 8 on 6.12-debug); passed
#                       into the guest for the payload to scale timeouts

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
CACHE=${MXACCEL_CACHE:-/var/cache/mxaccel/vm}

# The apt source for bookworm-backports: the 6.12 kernel lives there.
BACKPORTS_SOURCES=/etc/apt/sources.list.d/mxaccel-backports.sources

log() {
	[ "${MXACCEL_VM_QUIET:-0}" = 1 ] || printf '%s: %s\n' "${0##*/}" "$*" >&2
}

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# Seconds since the epoch with microseconds, for step timings (no fork).
now() {
	echo "$EPOCHREALTIME"
}

elapsed_since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# Other engineers (and parallel CI jobs) run apt on the same machine:
# wait for the dpkg lock instead of failing immediately.
apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300 "$@"
}

# apt lists may be missing (fresh container) or stale (a package
# version vanished from the archive); one update per script run is enough.
APT_UPDATED=0
apt_update_once() {
	[ "$APT_UPDATED" = 1 ] && return 0
	log "apt-get update"
	# A failing third-party source need not stop us; a missing package
	# reports itself later.
	apt_get update >&2 || log "warning: apt-get update failed"
	APT_UPDATED=1
}

is_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# Install the packages that are not installed yet; retry once after an
# update because a fresh machine has no lists and an old one stale ones.
ensure_pkgs() {
	local missing=() p
	for p in "$@"; do
		is_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "need root to install: ${missing[*]}"
	log "installing ${missing[*]}"
	# Never with -t bookworm-backports: that target makes apt take every
	# dependency it touches from backports (systemd, udev, linux-libc-dev).
	if ! apt_get install -y --no-install-recommends "${missing[@]}" >&2; then
		apt_update_once
		apt_get install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "apt-get install ${missing[*]} failed"
	fi
}

# Host tools that the scripts use (qemu: fetch_qemu).  Only checked by
# command name so that a dynamically linked busybox (package busybox) is
# not swapped for -static.
ensure_host_tools() {
	local need=()
	command -v busybox >/dev/null || need+=(busybox-static)
	command -v cpio >/dev/null || need+=(cpio)
	command -v xz >/dev/null || need+=(xz-utils)
	command -v zstd >/dev/null || need+=(zstd)
	command -v depmod >/dev/null || need+=(kmod)
	[ ${#need[@]} -eq 0 ] || ensure_pkgs "${need[@]}"
}

ensure_backports_source() {
	[ -e "$BACKPORTS_SOURCES" ] && return 0
	# Already configured elsewhere: a second entry only earns apt warnings.
	grep -rqs --include='*.list' --include='*.sources' '^[^#]*bookworm-backports' \
		/etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	log "adding apt source $BACKPORTS_SOURCES"
	cat >"$BACKPORTS_SOURCES" <<-EOF
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	APT_UPDATED=0
	apt_update_once
}

# apt-get download drops privileges to _apt; give it a directory it may write.
download_packages() {
	local dir=$1
	shift
	mkdir -p "$dir"
	if id _apt >/dev/null 2>&1; then chown _apt "$dir"; fi
	(cd "$dir" && apt_get download "$@" >&2)
}

# The kernel series the VM scripts know (kernel.sh fetches or builds them).
VM_SERIES='6.1 6.12 6.12-debug'

is_series() {
	case " $VM_SERIES " in *" $1 "*) return 0 ;; esac
	return 1
}

# Guest settings of a series: sets VM_MEM (MiB), VM_APPEND (kernel
# arguments added to BOOT_APPEND), VM_TIME_SCALE and VM_SPLAT_RE (what
# run.sh's dmesg scan looks for beyond its own list; '' for none).
series_settings() {
	VM_MEM=1024 VM_APPEND='' VM_TIME_SCALE=1 VM_SPLAT_RE=''
	case $1 in
	6.12-debug)
		# KASAN's shadow is 1/8 of memory and its quarantine holds
		# freed objects back: 1 GiB gets tight over the whole suite.
		VM_MEM=2048
		# QEMU's i440fx _PRT is an AML While loop that ACPICA, KASAN-
		# instrumented under TCG, cannot finish within its 30 s loop
		# limit: a 30 s stall at boot.  virtio uses MSI-X anyway.
		# Deliberately no kasan_multi_shot: the first report is what
		# fails the run, and after it lockdep is off anyway.
		VM_APPEND='acpi=noirq'
		# check.sh's suite takes 6 times as long as on Debian's 6.12
		# (760 s against 124 s: KASAN inline, lockdep, debug objects,
		# all under TCG); single programs 2 to 30 times, the GEMM-heavy
		# ones (the software engine's inner loops) the most.
		VM_TIME_SCALE=8
		# The detectors' own words; most also say BUG: or WARNING:,
		# but lockdep's, kmemleak's and the hung-task ones need not.
		VM_SPLAT_RE='BUG: KASAN|kmemleak: [0-9]+ new suspected|possible circular locking'
		VM_SPLAT_RE+='|INFO: possible|inconsistent lock state|suspicious RCU usage'
		VM_SPLAT_RE+='|DEBUG_LOCKS_WARN_ON|soft lockup|hung task|blocked for more than'
		VM_SPLAT_RE+='|KFENCE|UBSAN|ODEBUG'
		;;
	esac
	VM_MEM=${MXACCEL_VM_MEM:-$VM_MEM}
	VM_TIME_SCALE=${MXACCEL_TIME_SCALE:-$VM_TIME_SCALE}
	case $VM_TIME_SCALE in '' | 0 | *[!0-9]*) die "MXACCEL_TIME_SCALE must be a positive integer" ;; esac
}

# Serialise work on one cache entry between concurrent runs (two CI jobs
# fetching the same kernel must not extract over each other).
with_lock() {
	local lock=$1
	shift
	mkdir -p "$(dirname "$lock")"
	(
		flock 9
		"$@"
	) 9>"$lock"
}

# Run kernel.sh and set KVER, VMLINUZ, MODDIR, KDIR from its KEY=VALUE lines
# (read, not eval'd: the values come from package contents).
fetch_kernel() {
	local out key value
	out=$("$VM_DIR/kernel.sh" "$1") || die "kernel.sh $1 failed"
	while IFS='=' read -r key value; do
		case $key in KVER | VMLINUZ | MODDIR | KDIR) printf -v "$key" '%s' "$value" ;; esac
	done <<<"$out"
	if [ -z "${VMLINUZ:-}" ] || [ -z "${MODDIR:-}" ]; then
		die "kernel.sh $1 printed no kernel"
	fi
}

# Run qemu.sh and set QEMU_BIN, QEMU_ROOT and QEMU_VERSION from its
# KEY=VALUE lines.
fetch_qemu() {
	local out key value
	out=$("$VM_DIR/qemu.sh") || die "qemu.sh failed"
	while IFS='=' read -r key value; do
		case $key in QEMU_BIN | QEMU_ROOT | QEMU_VERSION) printf -v "$key" '%s' "$value" ;; esac
	done <<<"$out"
	[ -n "${QEMU_BIN:-}" ] || die "qemu.sh printed no qemu"
}

# quiet: only errors reach the console, so payload output stays readable
#   (the full log is dumped with dmesg at the end anyway);
# panic=-1 + oops=panic: any oops reboots at once, which -no-reboot turns
#   into qemu exiting, instead of a hung guest waiting for the timeout;
# kfence.sample_interval=1: sample an allocation every 1 ms so that KFENCE
#   (6.12 has it; 6.1 ignores the parameter) catches more in a short run;
# log_buf_len=4M: quiet keeps WARNINGs off the console, so the dmesg dump
#   is the only record of them; a chatty test must not rotate them out of
#   the default 128 KiB ring.
BOOT_APPEND='console=ttyS0 quiet panic=-1 oops=panic kfence.sample_interval=1 log_buf_len=4M'

# TCG by default: /dev/kvm can exist and still abort qemu (nested KVM on
# this kind of machine: "failed to set MSR 0x10a", an assertion, exit 134),
# so KVM is opt-in with MXACCEL_VM_ACCEL=kvm.  -cpu max gives TCG every
# feature it emulates, so the Debian kernels take their usual code paths.
accel_args() {
	case ${MXACCEL_VM_ACCEL:-tcg} in
	kvm) echo "-accel kvm -cpu host" ;;
	tcg) echo "-accel tcg -cpu max" ;;
	*) die "MXACCEL_VM_ACCEL must be tcg or kvm" ;;
	esac
}

# Sets QEMU (an array) for VMLINUZ INITRD [EXTRA_APPEND], with the memory
# and kernel arguments of series_settings and the qemu of fetch_qemu
# (both called first).  An extracted qemu finds its firmware through -L,
# ahead of the host's.  -nic none: no network is needed, and no NIC means
# no option ROM to load.
build_qemu_cmd() {
	local append=$BOOT_APPEND${VM_APPEND:+ $VM_APPEND}${3:+ $3}
	local firmware=()
	[ -z "$QEMU_ROOT" ] ||
		firmware=(-L "$QEMU_ROOT/usr/share/qemu" -L "$QEMU_ROOT/usr/share/seabios")
	# shellcheck disable=SC2034,SC2207 # used by callers; separate words
	QEMU=("$QEMU_BIN" "${firmware[@]}" -m "${VM_MEM:-${MXACCEL_VM_MEM:-1024}}" -smp "${MXACCEL_VM_SMP:-2}"
		$(accel_args) -nographic -no-reboot -nic none
		-kernel "$1" -initrd "$2" -append "$append")
}

# TAP for the hand-driven checks (smoke.sh, devmodel-smoke.sh): one line
# per check, N counts them, FAILED the failures.
N=0
FAILED=0

tap() { # STATUS(0=ok) DESCRIPTION
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		echo "ok $N - $2"
	else
		echo "not ok $N - $2"
		FAILED=$((FAILED + 1))
	fi
}
