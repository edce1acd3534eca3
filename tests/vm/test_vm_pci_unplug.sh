#!/bin/bash
# SPDX-License-Identifier: MIT
#
# qemu hot-unplugs the MX PCI device (device_del through QMP) while the
# driver has a job on it, a mapping of its memory and an open file:
# tests/kselftest/pci_unplug_test.c in its own boot of Debian's 6.12 kernel
# (the device is gone for good afterwards), with run.sh's dmesg scan.
# About 20 s.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
eval "$(tests/vm/kernel.sh 6.12)"
make -s module KDIR="$KDIR" >&2
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cp "build/module/$KVER/mxaccel.ko" "$p/"
make -s -C tests/kselftest OUT="$p/kselftest" >&2
status=0
tests/vm/run.sh --kernel 6.12 --payload "$p" --insmod mxaccel.ko \
	--devmodel '--test-page' --append 'iomem=relaxed' --timeout 300 \
	--cmd 'MXACCEL_VM_DEVICE_DEL=1 ./kselftest/pci_unplug_test' || status=$?
# The harness's skip (4) is the runner's skip (77).
[ "$status" != 4 ] || exit 77
exit "$status"
