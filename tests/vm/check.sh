#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The driver's and the library's tests on one Debian kernel, in one boot:
# build mxaccel.ko against it, put the module and the test programs in a
# payload, boot the kernel (run.sh), run everything there and report TAP.
#
#   e2e/         static end-to-end programs (tests/e2e/*.c)
#   kselftest/   the kselftests and their run.sh (when tests/kselftest has
#                a Makefile), run twice: against the software engine
#                (MXACCEL_ENGINE=software) and against the PCI engine
#                (MXACCEL_ENGINE=hardware), whose device, the device
#                model (tools/devmodel, with its test page), every VM
#                gets; the second pass ends with pci_test, whose last
#                tests lose the device for good
#   libtests/    the library tests (tests/lib) that run on any device
#                (test_open_device()), static, run in a directory holding
#                tests/data/mx_golden and nvfp4_golden with
#                MXACCEL_TEST_DEVICE=accel:0
#   cli/         the dynamic CLI and demo with libmxaccel.so, for
#                tests/e2e/cli_accel.sh and the demo on accel:0 (make
#                vm-demo shows it)
#   bench/       tests/bench/accel_latency, run with --quick (the numbers
#                are make vm-bench's)
#
# Before booting, cli_accel.sh runs here too: without a device, `mxaccel
# info` must say why.  Each program's output is indented under a TAP line
# of its own ("ok N - name").
#
# On 6.12-debug (KASAN, lockdep, kmemleak: debug-kernel.sh) everything runs
# about 6 times slower: the per-program limit is scaled by the guest's
# MXACCEL_TIME_SCALE, the VM's limit is 2400 s instead of 900 s
# (MXACCEL_VM_TIMEOUT overrides either), and no program but the last
# starts in the VM's last 150 s (it is reported as skipped, out of time):
# a run that ends with skips and the detectors' checks says more than one
# killed halfway.  MXACCEL_VM_SKIP='NAME...' skips programs by the first
# word of their TAP name (e.g. 'mxaccel-demo cli_accel.sh'); make check's
# test_vm_6.12-debug.sh sets it and the VM limit to fit its budget.
#
# Usage: tests/vm/check.sh 6.1|6.12|6.12-debug
# Run from the top of the tree after `make all e2e` (make check does both).
# Exit status: 0 when every program passed and the guest dmesg is clean.
set -eu
series=${1:?usage: check.sh 6.1|6.12|6.12-debug}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${MXACCEL_BUILD:-build/rel}

eval "$(tests/vm/kernel.sh "$series")"
make -s module KDIR="$KDIR" >&2

# vgem too where there is one, as a dma-buf exporter for import tests;
# not on 6.1, where mxaccel has a render node rather than an accel node
# and vgem, loaded first, would take renderD128 from it.
modules='drm drm_shmem_helper gpu-sched'
if [ "$series" != 6.1 ] && grep -q '/vgem\.ko' "$MODDIR/modules.dep"; then
	modules="$modules vgem"
fi
# deadline: guest uptime after which only the last program starts; the
# 150 s left are for a program already running, the last one and the
# kmemleak scan.  None on Debian's kernels, which take a fifth of the time.
case $series in
*-debug)
	vm_timeout=${MXACCEL_VM_TIMEOUT:-2400}
	deadline=$((vm_timeout - 150))
	;;
*) vm_timeout=${MXACCEL_VM_TIMEOUT:-900} deadline= ;;
esac

payload=$(mktemp -d)
trap 'rm -rf "$payload"' EXIT
cp "build/module/$KVER/mxaccel.ko" "$payload/"
mkdir -p "$payload/e2e" "$payload/libtests/tests/data" "$payload/bench" \
	"$payload/cli/bin" "$payload/cli/lib"
cp "$build"/e2e/* "$payload/e2e/"
# The device-parametric library tests (those that open the device under
# test); the others are about the cpu alone.
for t in "$build"/e2e-lib/test_*; do
	if grep -q test_open_device "tests/lib/${t##*/}.c" 2>/dev/null; then
		cp "$t" "$payload/libtests/"
	fi
done
cp -r tests/data/mx_golden tests/data/nvfp4_golden \
	"$payload/libtests/tests/data/"
cp "$build"/bench/* "$payload/bench/"
cp "$build/bin/mxaccel" "$build/bin/mxaccel-demo" "$payload/cli/bin/"
cp -a "$build"/lib/libmxaccel.so* "$payload/cli/lib/"
cp tests/e2e/cli_accel.sh tests/e2e/module_lifetime.sh "$payload/"
printf "skip_names='%s'\ndeadline=%s\n" "${MXACCEL_VM_SKIP:-}" "$deadline" \
	>"$payload/check.conf"
if [ -f tests/kselftest/Makefile ]; then
	make -s -C tests/kselftest OUT="$payload/kselftest" >&2
fi

# No device here: the CLI must say why (TAP on stdout like the guest's).
echo "# host: tests/e2e/cli_accel.sh without a device"
host_tap=$(mktemp)
trap 'rm -rf "$payload" "$host_tap"' EXIT
host_status=0
MXACCEL_EXPECT_DEVICE=0 sh tests/e2e/cli_accel.sh "$build/bin/mxaccel" \
	>"$host_tap" 2>&1 || host_status=1
sed 's/^/    /' "$host_tap"

# The guest runs every program, TAP for each, and fails if any failed.
cat >"$payload/run-all.sh" <<'SH'
. /payload/check.conf
params=/sys/module/mxaccel/parameters
# 1 on Debian's kernels; more where the kernel is slower (init.sh).
scale=${MXACCEL_TIME_SCALE:-1}
# A slower kernel gets a longer job timeout (programs that need another
# one set it themselves; run() puts this one back after each), and the
# fuzzer more ioctls: 50000 there (its million is make vm-fuzz, about 12
# minutes alone on 2 cores; MXACCEL_FUZZ_ITERS overrides).
if [ "$scale" -gt 1 ]; then
	echo $((10000 * scale)) >$params/job_timeout_ms
	export MXACCEL_FUZZ_ITERS=${MXACCEL_FUZZ_ITERS:-50000}
fi
hang0=$(cat $params/test_hang 2>/dev/null)
timeout0=$(cat $params/job_timeout_ms 2>/dev/null)
n=0 pass=0 fail=0 skip=0 failed=

# Why NAME is not run, if it is not (nothing if it is).  module_lifetime.sh
# is never out of time: it is short, and unloading is where lifetime
# bugs show.
skip_reason() {
	for s in $skip_names; do
		[ "${1%% *}" != "$s" ] || { echo "MXACCEL_VM_SKIP"; return; }
	done
	{ [ -n "$deadline" ] && [ "$1" != module_lifetime.sh ]; } || return 0
	up=$(cut -d. -f1 /proc/uptime)
	[ "$up" -lt "$deadline" ] || echo "out of time (uptime ${up}s, deadline ${deadline}s)"
}

# run NAME COMMAND...: its output indented, then one TAP line.
run() {
	name=$1
	shift
	n=$((n + 1))
	why=$(skip_reason "$name")
	if [ -n "$why" ]; then
		skip=$((skip + 1))
		echo "ok $n - $name # SKIP $why"
		return
	fi
	echo "# $n: $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	{
		timeout $((300 * scale)) "$@" 2>&1
		echo $? >/tmp/rc
	} | sed 's/^/    /'
	rc=$(cat /tmp/rc)
	secs=$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) pass=$((pass + 1)) && echo "ok $n - $name (${secs}s)" ;;
	# 4: kselftest's KSFT_SKIP; 77: the library tests' (tests/lib).
	4 | 77) skip=$((skip + 1)) && echo "ok $n - $name # SKIP" ;;
	*) fail=$((fail + 1)) failed="$failed $name" &&
		echo "not ok $n - $name (exit $rc, ${secs}s)" ;;
	esac
	# A program that died must not leave jobs hanging for the next.
	[ -z "$hang0" ] || echo "$hang0" >$params/test_hang
	[ -z "$timeout0" ] || echo "$timeout0" >$params/job_timeout_ms
}

for t in /payload/e2e/*; do
	run "e2e/${t##*/}" env MXACCEL_ENGINE=software "$t"
done
# The PCI engine against the library's EMULATED kernels, byte for byte,
# and the device-parametric library tests on it (accel:1: the software
# device registers first), while the device is alive.
run "e2e/device_vs_emulated (PCI engine)" env MXACCEL_ENGINE=hardware \
	/payload/e2e/device_vs_emulated
for t in accel_batch accel_errors accel_two_procs failnth_sweep; do
	run "e2e/$t (PCI engine)" env MXACCEL_E2E_DEVICE=accel:1 \
		"/payload/e2e/$t"
done
cd /payload/libtests
for t in test_*; do
	run "lib/$t on accel:1 (PCI engine)" env MXACCEL_TEST_DEVICE=accel:1 "./$t"
done
cd /payload
if [ -x /payload/kselftest/run.sh ]; then
	run "kselftest (software engine)" env MXACCEL_ENGINE=software \
		/payload/kselftest/run.sh
	run "kselftest (PCI engine)" env MXACCEL_ENGINE=hardware \
		/payload/kselftest/run.sh
fi
cd /payload/libtests
for t in test_*; do
	run "lib/$t on accel:0" env MXACCEL_TEST_DEVICE=accel:0 "./$t"
done
cd /payload
run cli_accel.sh env MXACCEL_EXPECT_DEVICE=1 sh /payload/cli_accel.sh \
	/payload/cli/bin/mxaccel
run "bench/accel_latency --quick" /payload/bench/accel_latency --quick
# One 512x384x1024 GEMM job takes seconds on the software engine under
# TCG: the demo's queues get a longer timeout than the default 10 s.
run "mxaccel-demo --device accel:0" sh -c "echo $((120000 * scale)) >$params/job_timeout_ms &&
	exec /payload/cli/bin/mxaccel-demo --device accel:0"
# Last: it unloads and reloads the module.
run module_lifetime.sh sh /payload/module_lifetime.sh /payload/mxaccel.ko
echo "1..$n"
echo "# $(uname -r): $pass passed, $fail failed, $skip skipped${failed:+ (failed:$failed)}"
[ "$fail" -eq 0 ]
SH
status=0
# iomem=relaxed: pci_test maps the device's BAR through sysfs, which the
# driver has claimed (Debian's kernels set IO_STRICT_DEVMEM).
tests/vm/run.sh --kernel "$series" --payload "$payload" --modules "$modules" \
	--insmod mxaccel.ko --cmd 'sh /payload/run-all.sh' --timeout "$vm_timeout" \
	--devmodel '--test-page' --append 'iomem=relaxed' ||
	status=$?
if [ "$host_status" != 0 ]; then
	echo "# host: cli_accel.sh failed"
	[ "$status" != 0 ] || status=1
fi
exit "$status"
