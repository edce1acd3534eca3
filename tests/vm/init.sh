#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the VM test initramfs (busybox sh, PID 1).  Built into the
# image by initramfs.sh; configured by the files it writes:
#
#   /etc/mxaccel-vm/modules  one module per line, in load order:
#                            "/path/x.ko [param=value ...]"
#   /etc/mxaccel-vm/cmd      the payload command (a sh script), run in /payload
#   /etc/mxaccel-vm/env      sourced before the payload (LD_LIBRARY_PATH...)
#   /etc/mxaccel-vm/mode     "run" (default) or "shell"
#
# Console protocol read by run.sh (one marker per line):
#   MXACCEL-VM-INIT <uptime>          /init started (guest seconds)
#   MXACCEL-VM-ERROR <text>           infrastructure failure (e.g. insmod)
#   MXACCEL-VM-PAYLOAD-BEGIN / -END   the payload's stdout+stderr between
#   MXACCEL-VM-DMESG-BEGIN / -END     the guest's dmesg between
#   MXACCEL-VM-EXIT <status>          payload status; 125 = infrastructure
#
# On a debug kernel (6.12-debug: kmemleak, lockdep) the payload is followed
# by a kmemleak scan, whose "kmemleak: N new suspected memory leaks" line
# in dmesg fails the run, and a check that lockdep is still on.
#
# No `set -e`: PID 1 exiting panics the kernel, and a failed step must still
# reach the dmesg dump and the exit marker.

CONF=/etc/mxaccel-vm
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
export HOME=/tmp TMPDIR=/tmp MXACCEL_VM=1

mount_filesystems() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	# The initramfs may lack /dev/console (built without root); devtmpfs
	# has it, so reopen the console now that it exists.
	exec </dev/console >/dev/console 2>&1
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	mount -t tmpfs tmpfs /tmp
	# Drivers expose state there; absent is fine.
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
}

# run.sh scans dmesg for splats only after "mxaccel-vm: init", so that
# boot noise unrelated to the modules under test does not fail the run.
mark_kmsg() {
	echo "mxaccel-vm: $*" >/dev/kmsg
}

# Each line is "path [params]"; word splitting of $line is intended.
load_modules() {
	[ -s $CONF/modules ] || return 0
	mark_kmsg "loading modules"
	while read -r line; do
		[ -n "$line" ] || continue
		# shellcheck disable=SC2086
		if ! err=$(insmod $line 2>&1); then
			echo "MXACCEL-VM-ERROR insmod $line: $err"
			dmesg | tail -n 5 | sed 's/^/MXACCEL-VM-ERROR   /'
			return 1
		fi
	done <$CONF/modules
}

run_payload() {
	cd /payload 2>/dev/null || cd /
	echo "MXACCEL-VM-PAYLOAD-BEGIN"
	# stdin is /dev/null so that a test reading input cannot hang the run.
	sh $CONF/cmd </dev/null 2>&1
	status=$?
	echo "MXACCEL-VM-PAYLOAD-END"
	cd /
	return $status
}

# kmemleak ignores objects younger than 5 s and reports an object only on
# the second scan that finds it unreferenced (the first records its
# checksum), so: wait, scan twice.  The scan itself prints "kmemleak: N
# new suspected memory leaks" to dmesg, which run.sh's scan catches; the
# report (allocation stacks) goes to the console for the log and stderr.
check_kmemleak() {
	kl=/sys/kernel/debug/kmemleak
	[ -e $kl ] || return 0
	sleep 6
	if ! { echo scan >$kl && echo scan >$kl; }; then
		echo "MXACCEL-VM-ERROR kmemleak: scan failed (disabled after an error?)"
		return 1
	fi
	report=$(cat $kl)
	[ -n "$report" ] || return 0
	echo "MXACCEL-VM-ERROR kmemleak: suspected leaks (first 100 lines):"
	printf '%s\n' "$report" | head -n 100 | sed 's/^/MXACCEL-VM-ERROR   /'
	return 1
}

# Lockdep switches itself off for good after its first report, after a
# KASAN report (taint) or when it runs out of table space; a run that
# ends with debug_locks 0 was not checked to the end.
check_lockdep() {
	[ -r /proc/lockdep_stats ] || return 0
	dl=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)
	[ "$dl" = 1 ] && return 0
	echo "MXACCEL-VM-ERROR lockdep: debug_locks is ${dl:-missing} at the end, not 1: lockdep turned itself off (see the first report in dmesg)"
	return 1
}

# Both always run (one failing must not hide the other's report).
debug_checks() {
	ok=0
	check_kmemleak || ok=1
	check_lockdep || ok=1
	return $ok
}

dump_dmesg() {
	echo "MXACCEL-VM-DMESG-BEGIN"
	dmesg
	echo "MXACCEL-VM-DMESG-END"
}

interactive_shell() {
	echo "mxaccel-vm: shell on $(uname -r); 'poweroff -f' or exit to quit"
	# cttyhack gives the shell a real controlling tty, so ^C works.
	cd /payload 2>/dev/null || true
	setsid cttyhack sh -l
	cd /
}

power_off() {
	sync
	poweroff -f
	# Not reached; if it were, PID 1 exiting panics and panic=-1 reboots,
	# which -no-reboot turns into qemu exiting.
	sleep 5
}

main() {
	mount_filesystems
	mark_kmsg init
	echo "MXACCEL-VM-INIT $(cut -d' ' -f1 /proc/uptime)"
	mode=$(cat $CONF/mode 2>/dev/null || echo run)
	# shellcheck disable=SC1091 # written by initramfs.sh
	[ -f $CONF/env ] && . $CONF/env
	# 1 unless run.sh says the kernel is slower (6.12-debug).
	export MXACCEL_TIME_SCALE="${MXACCEL_TIME_SCALE:-1}"
	status=125
	if load_modules; then
		if [ -s $CONF/cmd ]; then
			run_payload
			status=$?
		else
			status=0
		fi
	fi
	[ "$mode" = shell ] && interactive_shell
	# A detector's finding fails a run that passed (status 1, as for a
	# splat in dmesg); a failed run keeps its own status.
	if ! debug_checks && [ "$status" = 0 ]; then
		status=1
	fi
	dump_dmesg
	echo "MXACCEL-VM-EXIT $status"
	power_off
}

main "$@"
