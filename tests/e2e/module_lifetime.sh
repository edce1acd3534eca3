#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Module lifetime in the test VM (busybox sh): rmmod while a file is open
# is refused, not a crash; after the last close it unloads; it loads again
# with several software devices and unloads cleanly.  The VM runner fails
# the run on any BUG/WARNING/KFENCE in dmesg.
# Usage: module_lifetime.sh PATH/mxaccel.ko
set -u
ko=${1:?usage: module_lifetime.sh mxaccel.ko}
fail=0

node() {
	for n in /dev/accel/accel0 /dev/dri/renderD128; do
		[ -e "$n" ] && { echo "$n"; return; }
	done
}

check() {
	if "$@"; then echo "ok - $desc"; else echo "not ok - $desc"; fail=1; fi
}

dev=$(node)
[ -n "$dev" ] || { echo "not ok - no mxaccel node"; exit 1; }

exec 3<>"$dev"
desc="rmmod with $dev open is refused"
check sh -c '! rmmod mxaccel 2>/dev/null'
desc="the module is still loaded and the node still there"
check test -e "$dev"
exec 3>&-

desc="rmmod after the last close succeeds"
check rmmod mxaccel
desc="insmod num_devices=3 gives three devices"
check sh -c "insmod '$ko' num_devices=3 &&
	[ \$(ls /dev/accel/accel* /dev/dri/renderD* 2>/dev/null | wc -l) -ge 3 ]"
desc="insmod num_devices=9 is refused (max 8)"
check sh -c "rmmod mxaccel && ! insmod '$ko' num_devices=9 2>/dev/null"
desc="load and unload again"
check sh -c "insmod '$ko' && rmmod mxaccel && insmod '$ko'"
exit $fail
