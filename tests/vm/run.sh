#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot a Debian (or the debug) kernel in qemu, run a payload there, report
# its result.
#
# Usage: tests/vm/run.sh --kernel SERIES --payload DIR --cmd 'COMMAND' [options]
#
#   --kernel SERIES     guest kernel series: 6.1 (bookworm), 6.12
#                       (bookworm-backports) or 6.12-debug (KASAN, lockdep,
#                       kmemleak; built from linux-source-6.12); fetched or
#                       built, and cached, by kernel.sh
#   --payload DIR       copied into the guest as /payload (with the shared
#                       libraries its binaries need); e.g. mxaccel.ko, test
#                       binaries, a run script.  Scripts must be /bin/sh
#                       (busybox), there is no bash in the guest.
#   --cmd 'COMMAND'     run with sh in /payload after the modules are loaded;
#                       its stdout/stderr is printed here, its status is ours
#   --timeout S         kill the VM after S seconds, boot included (default 300)
#   --modules 'A B'     kernel modules to load first, by name, dependencies
#                       resolved from modules.dep
#                       (default 'drm drm_shmem_helper gpu-sched'; '' for none)
#   --insmod 'P [ARGS]' a module in the payload (path relative to DIR) to
#                       insmod after --modules, with optional parameters;
#                       may be repeated, loaded in order
#   --append 'ARGS'     extra kernel command line arguments
#   --log FILE          where to keep the console log (default
#                       $MXACCEL_CACHE/logs/run-<series>-<time>-<pid>.log;
#                       logs older than 7 days there are pruned)
#   --devmodel 'ARGS'   give the guest the MX accelerator PCI device: start
#                       $MXACCEL_BUILD/tools/mxaccel-devmodel (default
#                       build/rel) with --socket in the run's temporary
#                       directory, ARGS (words, e.g. '--test-page --rings 2';
#                       '' for the defaults) and --log beside the console
#                       log (devmodel-<its name>); wait (10 s at most) for
#                       its socket, add qemu's ivshmem-doorbell with
#                       vectors = 1 + --rings (4 unless ARGS say); after
#                       qemu, wait 5 s for it to exit, then kill it.  Its
#                       summary line goes to stderr, its log tail too when
#                       the run or the device model failed.  The device is
#                       id mxhw0; a line MXACCEL-VM-DEVICE-DEL on the
#                       guest's console makes run.sh hot-unplug it (qemu's
#                       device_del, through a QMP socket).
#   -v, --verbose       also stream the whole console to stderr
#
# Output: the payload's output (TAP) on stdout as it runs; errors, the
# console tail on a crash or timeout, and a timing summary on stderr.
#
# After the run, the guest's dmesg from the start of /init on is scanned
# for BUG:, WARNING:, Oops, general protection, KFENCE, lockdep and
# Call Trace; the matching lines are printed and fail the run.  On
# 6.12-debug also for the detectors' own messages (KASAN, kmemleak,
# lockdep, hung tasks, soft lockups, UBSAN, ODEBUG: lib.sh's
# series_settings), and /init scans for leaks and checks that lockdep is
# still on at the end (init.sh).  The payload sees MXACCEL_TIME_SCALE
# (1 on Debian's kernels, 8 on 6.12-debug) to scale its own timeouts.
#
# Exit status:
#   the payload's status (from the MXACCEL-VM-EXIT marker) if dmesg is clean
#   1    the payload passed but dmesg has a splat, or /init's kmemleak or
#        lockdep check failed (the payload's status if it failed as well)
#   124  timeout
#   125  no exit marker (guest crashed, panicked, qemu failed) or a module
#        failed to load, or the device model (--devmodel) did not start
#   1    also: the payload passed but the device model did not exit 0
#   2    usage error
#
# Environment: MXACCEL_CACHE, MXACCEL_VM_ACCEL=kvm (use KVM with -cpu host
# instead of TCG), MXACCEL_VM_MEM (MiB, 1024; 2048 on 6.12-debug),
# MXACCEL_VM_SMP (2), MXACCEL_TIME_SCALE (see lib.sh), MXACCEL_BUILD (the
# build tree of --devmodel).

set -eu
shopt -s lastpipe # follow_console sets timing variables from a pipeline
shopt -s extglob  # for the escape-sequence pattern in follow_console
. "$(dirname "$0")/lib.sh"

SERIES=
PAYLOAD=
CMD=
TIMEOUT=300
MODULES='drm drm_shmem_helper gpu-sched'
INSMOD_ARGS=()
APPEND=
LOG=
VERBOSE=0
DEVMODEL=0
DEVMODEL_ARGS=
DM_PID=
DM_LOG=

SPLAT_RE='BUG:|WARNING:|Oops|general protection|KFENCE|lockdep|Call Trace'

usage() {
	sed -n '4,/^#   -v, --verbose/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		-v | --verbose) VERBOSE=1; shift; continue ;;
		-h | --help) usage ;;
		esac
		[ $# -ge 2 ] || usage
		case $1 in
		--kernel) SERIES=$2 ;;
		--payload) PAYLOAD=$2 ;;
		--cmd) CMD=$2 ;;
		--timeout) TIMEOUT=$2 ;;
		--modules) MODULES=$2 ;;
		--insmod) INSMOD_ARGS+=(--insmod "$2") ;;
		--append) APPEND=$2 ;;
		--log) LOG=$2 ;;
		--devmodel) DEVMODEL=1 DEVMODEL_ARGS=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	is_series "$SERIES" || usage
	if [ -z "$PAYLOAD" ] || [ -z "$CMD" ]; then usage; fi
	case $TIMEOUT in '' | *[!0-9]*) usage ;; esac
}

default_log() {
	mkdir -p "$CACHE/logs"
	find "$CACHE/logs" -name '*.log' -mtime +7 -delete 2>/dev/null || true
	echo "$CACHE/logs/run-$SERIES-$(date +%Y%m%d-%H%M%S)-$$.log"
}

is_kernel_line() {
	[[ $1 =~ ^\[\ *[0-9]+\.[0-9]+\]\  ]]
}

# Copy the console to the log and print the payload's lines as they
# arrive.  Kernel console lines in between (errors: quiet hides the rest)
# stay out of stdout so that it is pure payload output; they are in the
# log, in the dmesg scan, and in the console tail printed on a crash.
follow_console() {
	local line in_payload=0
	exec 3>"$LOG"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		# SeaBIOS clears the screen; keep its escapes out of the log.
		line=${line//$'\e'c/}
		line=${line//$'\e['*([0-9;?])[a-zA-Z]/}
		printf '%s\n' "$line" >&3
		[ "$VERBOSE" = 0 ] || printf '%s\n' "$line" >&2
		case $line in
		*MXACCEL-VM-INIT*) T_INIT=$(now) ;;
		*MXACCEL-VM-PAYLOAD-BEGIN*) in_payload=1 T_PAYLOAD=$(now) ;;
		*MXACCEL-VM-PAYLOAD-END*)
			# Output without a final newline shares the marker's line.
			[ -z "${line%%MXACCEL-VM-PAYLOAD-END*}" ] ||
				printf '%s\n' "${line%%MXACCEL-VM-PAYLOAD-END*}"
			in_payload=0 T_PAYLOAD_END=$(now)
			;;
		*MXACCEL-VM-ERROR*) printf '%s\n' "${line#*MXACCEL-VM-ERROR }" >&2 ;;
		*MXACCEL-VM-DEVICE-DEL*) qmp_device_del ;;
		*)
			[ "$in_payload" = 1 ] || continue
			is_kernel_line "$line" || printf '%s\n' "$line"
			;;
		esac
	done
	exec 3>&-
}

# The guest asked (MXACCEL-VM-DEVICE-DEL on its console) for the PCI
# device's hot-unplug: qemu's device_del through QMP, as an operator would.
qmp_device_del() {
	local reply
	[ -S "$WORK/qmp.sock" ] || { log "device_del: no QMP socket (no --devmodel)"; return; }
	reply=$(python3 - "$WORK/qmp.sock" <<'PY' 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.readline()
for cmd in ({"execute": "qmp_capabilities"},
            {"execute": "device_del", "arguments": {"id": "mxhw0"}}):
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            break
print(json.dumps(r))
PY
	)
	log "device_del mxhw0: $reply"
}

# qemu's own messages go to a separate file (not into the payload output)
# and are appended to the log afterwards.
append_qemu_messages() {
	[ -s "$WORK/qemu.err" ] || return 0
	{
		echo "--- qemu stderr ---"
		cat "$WORK/qemu.err"
	} >>"$LOG"
}

print_console_tail() {
	echo "${0##*/}: $1; console tail (log: $LOG):" >&2
	tail -n 40 "$LOG" | sed 's/^/  /' >&2
}

exit_marker_status() {
	sed -n 's/.*MXACCEL-VM-EXIT \([0-9][0-9]*\).*/\1/p' "$LOG" | tail -n1
}

# The guest's own dmesg dump from "mxaccel-vm: init" on (all of it if that
# line has scrolled out of the ring buffer); if the guest died before
# dumping it, whatever the kernel printed on the console.
kernel_lines_to_scan() {
	local section
	if grep -q 'MXACCEL-VM-DMESG-END' "$LOG"; then
		section=$(sed -n '/MXACCEL-VM-DMESG-BEGIN/,/MXACCEL-VM-DMESG-END/p' "$LOG")
		if grep -q 'mxaccel-vm: init' <<<"$section"; then
			section=$(sed -n '/mxaccel-vm: init/,$p' <<<"$section")
		fi
	else
		section=$(cat "$LOG")
	fi
	grep -E '^\[ *[0-9]+\.[0-9]+\] ' <<<"$section" || true
}

# Prints the offending lines; succeeds when there are none.
dmesg_is_clean() {
	local splats
	splats=$(kernel_lines_to_scan | grep -E "$SPLAT_RE${VM_SPLAT_RE:+|$VM_SPLAT_RE}" || true)
	[ -z "$splats" ] && return 0
	echo "${0##*/}: guest kernel reported problems (full log: $LOG):" >&2
	printf '%s\n' "$splats" | head -n 50 >&2
	return 1
}

# --devmodel: the --rings of ARGS (the device model's default: 4).
devmodel_rings() {
	local rings=4 prev='' w
	for w in $DEVMODEL_ARGS; do
		case $w in --rings=*) rings=${w#--rings=} ;; esac
		[ "$prev" != --rings ] || rings=$w
		prev=$w
	done
	case $rings in '' | *[!0-9]*) die "--devmodel '$DEVMODEL_ARGS': bad --rings" ;; esac
	echo "$rings"
}

print_devmodel_tail() {
	echo "${0##*/}: $1; device model log tail ($DM_LOG):" >&2
	tail -n 20 "$DM_LOG" 2>/dev/null | sed 's/^/  /' >&2 || true
}

# Start the device model and add its device to QEMU; its socket appears
# only once it listens, so qemu may connect as soon as it is there.
start_devmodel() {
	local build=${MXACCEL_BUILD:-$VM_DIR/../../build/rel}
	local bin=$build/tools/mxaccel-devmodel sock=$WORK/mxhw.sock i rings
	rings=$(devmodel_rings)
	[ -x "$bin" ] || die "--devmodel: $bin not found (make tools, or set MXACCEL_BUILD)"
	DM_LOG=$(dirname "$LOG")/devmodel-$(basename "$LOG")
	# shellcheck disable=SC2086 # ARGS are words
	"$bin" --socket "$sock" $DEVMODEL_ARGS --log "$DM_LOG" \
		</dev/null >>"$DM_LOG" 2>&1 &
	DM_PID=$!
	for ((i = 0; i < 1000; i++)); do
		[ ! -S "$sock" ] || break
		if ! kill -0 "$DM_PID" 2>/dev/null; then
			wait "$DM_PID" || true
			DM_PID=
			print_devmodel_tail "the device model exited at start"
			exit 125
		fi
		sleep 0.01
	done
	if [ ! -S "$sock" ]; then
		print_devmodel_tail "no device model socket after 10 s"
		exit 125
	fi
	# id=mxhw0 and the QMP socket: the guest may ask for a hot-unplug
	# (MXACCEL-VM-DEVICE-DEL on its console, see follow_console).
	QEMU+=(-chardev "socket,path=$sock,id=mxhw"
		-device "ivshmem-doorbell,id=mxhw0,chardev=mxhw,vectors=$((1 + rings))"
		-qmp "unix:$WORK/qmp.sock,server=on,wait=off")
	log "device model: $bin${DEVMODEL_ARGS:+ $DEVMODEL_ARGS}, $rings rings (vectors=$((1 + rings))), log $DM_LOG"
}

# After qemu: the device model exits when qemu disconnects.  Returns its
# exit status (137 or 143 when it had to be killed).
stop_devmodel() {
	local i st=0 line
	for ((i = 0; i < 500; i++)); do
		kill -0 "$DM_PID" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$DM_PID" 2>/dev/null; then
		log "device model still running 5 s after qemu: killing it"
		kill -TERM "$DM_PID" 2>/dev/null || true
		sleep 1
		kill -KILL "$DM_PID" 2>/dev/null || true
		wait "$DM_PID" || true
		st=137
	else
		wait "$DM_PID" || st=$?
	fi
	DM_PID=
	line=$(grep 'summary:' "$DM_LOG" 2>/dev/null | tail -n 1 || true)
	log "device model: exit $st${line:+; ${line#*] }}"
	return "$st"
}

cleanup() {
	if [ -n "$DM_PID" ]; then
		kill -KILL "$DM_PID" 2>/dev/null || true
		wait "$DM_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}

seconds() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "?"; else printf "%.1f", b - a }'
}

main() {
	local t0 t_kernel t_initrd t_boot t_end status qemu_status marker dm_status=0
	local boots=1
	t0=$(now)
	parse_args "$@"
	[ -d "$PAYLOAD" ] || die "payload $PAYLOAD is not a directory"
	series_settings "$SERIES"
	ensure_host_tools
	fetch_kernel "$SERIES"
	fetch_qemu
	t_kernel=$(now)

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/mxaccel-vm.XXXXXX")
	trap cleanup EXIT
	"$VM_DIR/initramfs.sh" --moddir "$MODDIR" --out "$WORK/initrd.gz" \
		--modules "$MODULES" --payload "$PAYLOAD" --cmd "$CMD" \
		--env "MXACCEL_TIME_SCALE=$VM_TIME_SCALE" \
		${INSMOD_ARGS[@]+"${INSMOD_ARGS[@]}"}
	t_initrd=$(now)

	[ -n "$LOG" ] || LOG=$(default_log)
	while :; do
		# Afresh each boot: start_devmodel adds its device to it.
		build_qemu_cmd "$VMLINUZ" "$WORK/initrd.gz" "$APPEND"
		[ "$DEVMODEL" = 0 ] || start_devmodel
		log "booting $KVER on qemu $QEMU_VERSION (timeout ${TIMEOUT} s, ${VM_MEM} MiB${VM_APPEND:+, $VM_APPEND})"
		T_INIT='' T_PAYLOAD='' T_PAYLOAD_END=''
		t_boot=$(now)
		timeout -k 5 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>"$WORK/qemu.err" | follow_console
		qemu_status=${PIPESTATUS[0]}
		t_end=$(now)
		append_qemu_messages
		dm_status=0
		[ "$DEVMODEL" = 0 ] || stop_devmodel || dm_status=$?
		marker=$(exit_marker_status)
		# A guest kernel that dies before it runs our /init (no
		# MXACCEL-VM-INIT) ran none of our code: seen once as an int3
		# Oops in sched_clock_idle_wakeup_event during boot, qemu
		# TCG's race with the kernel's text patching on two vCPUs.
		# Boot it once more; a second death is reported as usual.
		if [ "$boots" = 1 ] && [ -z "$T_INIT" ] && [ -z "$marker" ] &&
		   [ "$qemu_status" != 124 ] && [ "$qemu_status" != 137 ]; then
			print_console_tail "the guest kernel died before /init ran (none of our code); booting once more"
			mv "$LOG" "${LOG%.log}-boot1.log"
			boots=2
			continue
		fi
		break
	done
	if [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
		print_console_tail "timed out after $TIMEOUT s"
		status=124
	elif [ -z "$marker" ] && [ "$qemu_status" -gt 128 ]; then
		# qemu itself crashed (a signal), not the guest.
		print_console_tail "qemu $QEMU_VERSION died of signal $((qemu_status - 128)), no exit marker"
		status=125
	elif [ -z "$marker" ]; then
		print_console_tail "no exit marker (guest crashed?), qemu status $qemu_status"
		status=125
	else
		status=$marker
	fi
	if ! dmesg_is_clean && [ "$status" = 0 ]; then
		status=1
	fi
	if [ "$DEVMODEL" = 1 ]; then
		[ "$dm_status" = 0 ] || [ "$status" != 0 ] || status=1
		[ "$dm_status" = 0 ] && [ "$status" = 0 ] ||
			print_devmodel_tail "device model exit $dm_status, run status $status"
	fi

	log "$KVER: kernel $(seconds "$t0" "$t_kernel") s, initramfs $(seconds "$t_kernel" "$t_initrd") s," \
		"boot to /init $(seconds "$t_boot" "$T_INIT") s, payload $(seconds "$T_PAYLOAD" "$T_PAYLOAD_END") s," \
		"VM total $(seconds "$t_boot" "$t_end") s; qemu $QEMU_VERSION exit $qemu_status;" \
		"exit $status; log $LOG"
	exit "$status"
}

main "$@"
