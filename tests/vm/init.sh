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
	dump_dmesg
	echo "MXACCEL-VM-EXIT $status"
	power_off
}

main "$@"
