#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot the VM test kernel with an interactive busybox shell on the console
# (for `make vm-shell`): the same kernel, modules and payload as run.sh.
#
# Usage: tests/vm/shell.sh --kernel 6.1|6.12|6.12-debug [options]
#
#   --kernel SERIES     guest kernel series (see run.sh)
#   --payload DIR       copied into the guest as /payload (optional)
#   --modules 'A B'     kernel modules to load first (default
#                       'drm drm_shmem_helper gpu-sched'; '' for none)
#   --insmod 'P [ARGS]' a payload module to load after them; may be repeated
#   --cmd 'COMMAND'     run in /payload before the shell starts
#   --append 'ARGS'     extra kernel command line arguments
#
# Quit with `poweroff -f` or `exit` in the shell (the guest's dmesg is
# printed on the way out), or Ctrl-A X in qemu.  No timeout.
# Environment: as run.sh.

set -eu
. "$(dirname "$0")/lib.sh"

SERIES=
PAYLOAD=
CMD=
MODULES='drm drm_shmem_helper gpu-sched'
INSMOD_ARGS=()
APPEND=

usage() {
	sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in -h | --help) usage ;; esac
		[ $# -ge 2 ] || usage
		case $1 in
		--kernel) SERIES=$2 ;;
		--payload) PAYLOAD=$2 ;;
		--cmd) CMD=$2 ;;
		--modules) MODULES=$2 ;;
		--insmod) INSMOD_ARGS+=(--insmod "$2") ;;
		--append) APPEND=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	is_series "$SERIES" || usage
}

main() {
	parse_args "$@"
	series_settings "$SERIES"
	ensure_host_tools
	fetch_kernel "$SERIES"
	fetch_qemu
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/mxaccel-vm.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	"$VM_DIR/initramfs.sh" --moddir "$MODDIR" --out "$WORK/initrd.gz" \
		--mode shell --modules "$MODULES" --cmd "$CMD" \
		--env "MXACCEL_TIME_SCALE=$VM_TIME_SCALE" \
		${PAYLOAD:+--payload "$PAYLOAD"} ${INSMOD_ARGS[@]+"${INSMOD_ARGS[@]}"}
	build_qemu_cmd "$VMLINUZ" "$WORK/initrd.gz" "$APPEND"
	log "booting $KVER; Ctrl-A X quits qemu"
	# Not exec: the trap must remove the initramfs afterwards.
	"${QEMU[@]}"
}

main "$@"
