#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Smoke test of the MX accelerator PCI device in a VM, without the driver:
# run.sh --devmodel starts tools/mxaccel-devmodel and gives the guest
# qemu's ivshmem-doorbell; a busybox script in the guest then drives the
# device by hand through /dev/mem (devmem) and checks that
#   1. the PCI function 1af4:1110 is there with a BAR2 of the size asked;
#   2. BAR2 starts with the MX header (magic "MXHW", version 1.0, the ring
#      count, the test page feature and offset) and BAR0's IVPosition is
#      the guest's peer id (1);
#   3. the test page works both ways: a command written by the guest is
#      acknowledged by the device model;
#   4. hello through the control block and BAR0's doorbell register is
#      answered (dev_gen, status READY);
#   5. one exact GEMM (1 x 1 x 32, e4m3 ones: C = 32.0) written into ring 0
#      by hand runs: its completion record and C are right;
# and on the host that run.sh exits 0 and prints the device model's
# summary line (1 job, 1 hello, exit 0 once qemu is gone).  MSI-X is not
# enabled in the guest (no driver), so qemu drops the device's
# interrupts, as the recipe says it does.
#
# Usage: tests/vm/devmodel-smoke.sh [6.1] [6.12]  (default: 6.12)
# Needs `make tools` (MXACCEL_BUILD, default build/rel).  Prints TAP; exits
# non-zero if a check failed.  About 10 s per kernel.

set -eu
. "$(dirname "$0")/lib.sh"

SIZE=$((64 << 20))

write_guest_script() {
	cat >"$1/devmodel-guest.sh" <<-'EOF'
		#!/bin/sh
		# In the guest: the MX device by hand, through /dev/mem.
		size=$1
		n=0
		fail=0
		tap() {
			n=$((n + 1))
			if [ "$1" = 0 ]; then echo "ok $n - $2"
			else echo "not ok $n - $2"; fail=$((fail + 1)); fi
		}
		at() { printf '0x%x' $(($1)); }
		rd() { echo $(($(devmem "$(at "$1")" 32))); }
		wr() { devmem "$(at "$1")" 32 $(($2)); }
		wr8() { devmem "$(at "$1")" 8 $(($2)); }
		# poll ADDR VALUE: up to 5 s
		poll() {
			i=0
			while [ $i -lt 500 ]; do
				[ "$(rd "$1")" = $(($2)) ] && return 0
				i=$((i + 1))
				usleep 10000
			done
			return 1
		}
		finish() { echo "1..$n"; [ $fail = 0 ]; exit $?; }

		dev=
		for d in /sys/bus/pci/devices/*; do
			[ "$(cat "$d/vendor")" = 0x1af4 ] &&
				[ "$(cat "$d/device")" = 0x1110 ] && dev=$d
		done
		[ -n "$dev" ]
		tap $? "PCI function 1af4:1110 (${dev##*/})"
		[ -n "$dev" ] || finish
		echo 1 >"$dev/enable"
		bar0=$(sed -n 1p "$dev/resource" | cut -d' ' -f1)
		bar2=$(sed -n 3p "$dev/resource" | cut -d' ' -f1)
		bar2_end=$(sed -n 3p "$dev/resource" | cut -d' ' -f2)
		[ $((bar2_end - bar2 + 1)) = "$size" ]
		tap $? "BAR2 at $bar2, $((bar2_end - bar2 + 1)) bytes"

		magic=$(rd $bar2)
		[ "$magic" = $((0x5748584d)) ] && [ "$(rd $((bar2 + 4)))" = 1 ] &&
			[ "$(rd $((bar2 + 16)))" = 4 ] && [ "$(rd $((bar2 + 80)))" = 1 ] &&
			[ "$(rd $((bar2 + 128)))" = $((0x2000)) ]
		tap $? "MX header: magic $(at "$magic"), version 1.0, 4 rings, test page at 0x2000"
		[ "$(rd $((bar0 + 8)))" = 1 ]
		tap $? "IVPosition (our peer id) is 1"

		peer=$(rd $((bar2 + 12)))
		ctrl=$((bar2 + $(rd $((bar2 + 88)))))
		test=$((bar2 + $(rd $((bar2 + 128)))))
		ring=$((bar2 + $(rd $((bar2 + 96)))))
		depth=$(rd $((bar2 + 20)))
		heap=$((bar2 + $(rd $((bar2 + 112)))))
		heap_off=$(rd $((bar2 + 112)))

		# test page: clear (cmd 0), cmd_seq 1; the device sets ack_seq
		wr $((test + 4)) 0
		wr $((test + 8)) 0
		wr $test 1
		poll $((test + 64)) 1
		tap $? "test page command acknowledged"

		# hello: drv_gen 1, drv_cmd HELLO, doorbell (peer << 16) | 0
		wr $((ctrl + 4)) 1
		wr $ctrl 1
		wr $((bar0 + 12)) $((peer << 16))
		poll $((ctrl + 68)) 1 && [ "$(rd $((ctrl + 64)))" = 1 ]
		tap $? "hello answered: dev_gen 1, status READY"

		# 1 x 1 x 32 e4m3 GEMM of ones (0x38, scale 127): C = 32.0
		for o in 0 4 8 12 16 20 24 28; do
			wr $((heap + o)) 0x38383838
			wr $((heap + 128 + o)) 0x38383838
		done
		wr8 $((heap + 64)) 127
		wr8 $((heap + 192)) 127
		wr $((heap + 256)) 0xcccccccc
		sq=$((ring + 128))
		for o in $(seq 0 4 252); do wr $((sq + o)) 0; done
		wr $sq 7                          # seq
		wr $((sq + 8)) 1                  # kind GEMM
		wr $((sq + 12)) 2                 # flags EXACT
		wr $((sq + 16)) 1                 # m
		wr $((sq + 20)) 1                 # n
		wr $((sq + 24)) 32                # k
		wr $((sq + 36)) 1                 # op_count
		wr $((sq + 40)) $heap_off         # a.data_addr
		wr $((sq + 56)) $((heap_off + 64))   # a.scale_addr
		wr $((sq + 72)) 1                 # a.elem e4m3
		wr $((sq + 80)) $((heap_off + 128))  # b.data_addr
		wr $((sq + 96)) $((heap_off + 192))  # b.scale_addr
		wr $((sq + 112)) 1                # b.elem e4m3
		wr $((sq + 120)) $((heap_off + 256)) # c.addr, f32
		wr $ring 1                        # sq_tail
		wr $((bar0 + 12)) $(((peer << 16) | 1))
		poll $((ring + 68)) 1
		tap $? "ring 0: cq_tail 1"
		cpl=$((ring + 128 + depth * 256))
		[ "$(rd $cpl)" = 7 ] && [ "$(rd $((cpl + 8)))" = 0 ] &&
			[ "$(rd $((cpl + 12)))" = 1 ] && [ "$(rd $((ring + 64)))" = 1 ]
		tap $? "completion record: seq 7, status 0, 1 op done; sq_head 1"
		c=$(rd $((heap + 256)))
		[ "$c" = $((0x42000000)) ]
		tap $? "C = $(at "$c") (32.0)"
		finish
	EOF
}

run_one() {
	local series=$1 payload out err status
	payload=$(mktemp -d)
	out=$payload.out err=$payload.err
	write_guest_script "$payload"
	status=0
	"$VM_DIR/run.sh" --kernel "$series" --payload "$payload" --modules '' \
		--cmd "sh devmodel-guest.sh $SIZE" --timeout 180 \
		--devmodel "--test-page --size $SIZE" >"$out" 2>"$err" || status=$?
	sed 's/^/# /' "$out"
	[ "$status" = 0 ] && ! grep -q '^not ok' "$out" && grep -q '^ok 9 ' "$out"
	tap $? "$series: the guest drives the device by hand (9 checks)"
	grep -q 'device model: exit 0; summary: the client disconnected; jobs 1 (failed 0), ops 1, .*hellos 1,' "$err"
	tap $? "$series: run.sh exit $status; the device model exited 0 after qemu: 1 job, 1 hello"
	if [ "$FAILED" != 0 ]; then
		sed 's/^/#   /' "$err"
	fi
	rm -rf "$payload" "$out" "$err"
}

main() {
	local series
	[ $# -gt 0 ] || set -- 6.12
	for series in "$@"; do
		case $series in
		6.1 | 6.12) run_one "$series" ;;
		*) die "usage: $0 [6.1] [6.12]" ;;
		esac
	done
	echo "1..$N"
	[ "$FAILED" = 0 ]
}

main "$@"
