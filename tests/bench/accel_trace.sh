#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Where the time of a one-ioctl submit+wait goes, per hop: run in the test
# VM (make vm-trace), it traces the driver's SUBMIT with the function_graph
# tracer while accel_latency --trace runs ten 1x1x32 and ten 32x32x32 jobs,
# and prints the call graph of the last job of each size with the time of
# every call (the tracer's own overhead inflates small calls; compare
# hops with each other, not with the untraced medians).
#
# Usage (in the guest): accel_trace.sh /path/to/accel_latency
# POSIX sh (busybox).
set -eu
bin=${1:?usage: accel_trace.sh ACCEL_LATENCY}
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null ||
	mount -t debugfs nodev /sys/kernel/debug
[ -d $t/events ] || t=/sys/kernel/debug/tracing
if [ ! -w $t/current_tracer ] || ! grep -qw function_graph $t/available_tracers; then
	echo "accel_trace: no function_graph tracer in this kernel"
	exit 4
fi
echo 0 >$t/tracing_on
echo >$t/trace
echo mxaccel_ioctl_submit >$t/set_graph_function
echo 6 >$t/max_graph_depth
echo function_graph >$t/current_tracer
echo funcgraph-duration >$t/trace_options 2>/dev/null || true
echo 1 >$t/tracing_on
"$bin" --trace
echo 0 >$t/tracing_on
# Each SUBMIT is one top-level block; keep the 10th and the 20th.
awk '/mxaccel_ioctl_submit.*[{]$/ { n++ } n == 10 || n == 20 { print }' $t/trace |
	sed 's/^/  /'
echo nop >$t/current_tracer
echo >$t/set_graph_function
