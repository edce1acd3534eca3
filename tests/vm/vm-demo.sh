#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make vm-demo, inside the VM (busybox sh, in /payload): what the library
# sees with the mxaccel module loaded and the MX PCI device (the device
# model behind qemu's ivshmem) present, how it plans a GEMM for auto,
# accel:0 and accel:1, and the demo on the PCI device and on accel:0.
#
# auto picks the PCI device, accel:1: a hardware engine with native
# kernels.  It never picks accel:0 (design section 5): the software engine
# is a conformance device, exact but slower than the cpu's native kernel;
# named, it runs every GEMM and quantization on the device's exact engine.  One
# 512x384x1024 GEMM takes seconds there under qemu's TCG, so make vm-demo
# loads the module with a longer job timeout than the default 10 s.
mx=/payload/bin/mxaccel
tmp=$(mktemp -d)

echo "=== mxaccel info"
$mx info || exit 1

# Random mxfp4 operands with scales near 1 for the plans.
dd if=/dev/urandom of="$tmp/a" bs=128 count=128 2>/dev/null
dd if=/dev/urandom of="$tmp/b" bs=128 count=96 2>/dev/null
r='\170-\207'
for x in a b; do
	dd if=/dev/urandom bs=8 count=128 2>/dev/null |
		tr '\000-\377' "$r$r$r$r$r$r$r$r$r$r$r$r$r$r$r$r" >"$tmp/$x.s"
done
truncate -s 768 "$tmp/b.s"
for dev in auto accel:1 accel:0; do
	echo
	echo "=== mxaccel gemm --device $dev --explain (mxfp4, 128x96x256)"
	$mx gemm --m 128 --n 96 --k 256 --a "$tmp/a" --a-scale "$tmp/a.s" \
		--a-elem e2m1 --b "$tmp/b" --b-scale "$tmp/b.s" --b-elem e2m1 \
		--out "$tmp/c.$dev" --device $dev --explain || exit 1
done
echo
echo "=== mxaccel-demo --device accel:1 (the PCI device)"
/payload/bin/mxaccel-demo --device accel:1 || exit 1
echo
echo "=== mxaccel-demo --device accel:0"
/payload/bin/mxaccel-demo --device accel:0
