#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make vm-bench-pci: the MX PCI device (the device model behind qemu's
# ivshmem, Documentation/pci-device.rst) against the same kernels called
# directly on the host, in one run:
#
#   host     mxaccel bench --op gemm on the cpu device, one thread, NATIVE
#            and EMULATED: what the device model's ring worker (one thread
#            per ring, the same libmxaccel kernels) computes at best
#   guest    the same GEMM on accel:1 (the PCI device) through the driver,
#            NATIVE (the device's own kernel) and EMULATED
#            (DRM_MXACCEL_OP_EXACT); then accel_latency on accel:1 (submit
#            to completion interrupt, against a null ioctl), again with
#            SUBMIT_WAIT polling the ring (module parameter poll_us), and
#            on accel:0 (the software engine) for scale
#
# Usage: tests/bench/pci_bench.sh [SERIES] (default 6.12).  Run from the top
# of the tree after `make all e2e`.  Shape: PCI_BENCH_SHAPE ("M N K",
# default "256 256 1024"), recipe PCI_BENCH_RECIPE (mxfp8).
set -eu
series=${1:-6.12}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${MXACCEL_BUILD:-build/rel}
read -r m n k <<<"${PCI_BENCH_SHAPE:-256 256 1024}"
recipe=${PCI_BENCH_RECIPE:-mxfp8}
shape="--op gemm --recipe $recipe --m $m --n $n --k $k"

echo "# pci_bench: $(date -u +%FT%TZ), host $(uname -r), $(nproc) CPUs," \
	"$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
for kernel in native emulated; do
	echo "## host: mxaccel bench $shape --device cpu --threads 1 --kernel $kernel"
	"$build/bin/mxaccel" bench $shape --device cpu --threads 1 \
		--kernel $kernel | grep "^gemm"
done

eval "$(tests/vm/kernel.sh "$series")"
make -s module KDIR="$KDIR" >&2
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
mkdir -p "$p/bin" "$p/lib"
cp "build/module/$KVER/mxaccel.ko" "$build/bench/accel_latency" "$p/"
cp "$build/bin/mxaccel" "$p/bin/"
cp -a "$build"/lib/libmxaccel.so* "$p/lib/"
cat >"$p/run.sh" <<SH
cd /payload
for kernel in native emulated; do
	echo "## guest: mxaccel bench $shape --device accel:1 --kernel \$kernel"
	bin/mxaccel bench $shape --device accel:1 --kernel \$kernel | grep "^gemm"
done
echo "## guest: accel_latency --device accel:1 (the PCI device, interrupts)"
./accel_latency --device accel:1
echo "## guest: accel_latency --device accel:1 (the PCI device, polled: poll_us=2000)"
echo 2000 >/sys/module/mxaccel/parameters/poll_us
./accel_latency --device accel:1
echo 0 >/sys/module/mxaccel/parameters/poll_us
echo "## guest: accel_latency --device accel:0 (the software engine)"
./accel_latency --device accel:0
SH
MXACCEL_VM_SMP=${MXACCEL_VM_SMP:-1} \
	tests/vm/run.sh --kernel "$series" --payload "$p" --insmod mxaccel.ko \
	--devmodel '' --cmd 'sh /payload/run.sh' --timeout 900
