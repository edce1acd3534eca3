#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The driver's tests on one Debian kernel: build mxaccel.ko against it, put
# the module, the kselftests and the end-to-end tests (all static) in a
# payload, boot the kernel (run.sh), run everything there and report TAP.
#
# Usage: tests/vm/check.sh 6.1|6.12
# Run from the top of the tree after `make e2e` (make check does both).
# Exit status: 0 when every program passed and the guest dmesg is clean.
set -eu
series=${1:?usage: check.sh 6.1|6.12}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${MXACCEL_BUILD:-build/rel}

eval "$(tests/vm/kernel.sh "$series")"
make -s module KDIR="$KDIR" >&2

payload=$(mktemp -d)
trap 'rm -rf "$payload"' EXIT
cp "build/module/$KVER/mxaccel.ko" "$payload/"
mkdir -p "$payload/bin"
cp "$build"/e2e/* "$payload/bin/"
if [ -f tests/kselftest/Makefile ]; then
	make -s -C tests/kselftest OUT="$payload/bin" >&2
fi

# The guest runs every program, TAP from each, and fails if any failed.
cat >"$payload/run-all.sh" <<'SH'
status=0
for t in /payload/bin/*; do
	echo "# === $(basename "$t")"
	"$t"
	rc=$?
	case $rc in
	0) echo "# PASS $(basename "$t")" ;;
	4) echo "# SKIP $(basename "$t")" ;;
	*) echo "# FAIL $(basename "$t") (exit $rc)"; status=1 ;;
	esac
done
exit $status
SH
tests/vm/run.sh --kernel "$series" --payload "$payload" \
	--insmod mxaccel.ko --cmd 'sh /payload/run-all.sh' --timeout 900
