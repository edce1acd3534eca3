#!/bin/bash
# SPDX-License-Identifier: MIT
# kselftests and end-to-end tests inside a VM booting our 6.12 debug kernel
# (KASAN, KFENCE, lockdep, kmemleak; tests/vm/debug-kernel.sh).
#
# make check builds that kernel before the tests start (make
# check-debug-kernel): its cold build takes ~11 minutes, which must not
# count against tests/run-tests.sh's per-test limit.  So this script never
# builds it: on a cache miss it fails at once, saying so.
#
# Everything must also fit that limit (MXACCEL_TEST_TIMEOUT, 900 s): the
# VM gets 90 s less (check.sh needs ~30 s before it boots), so that a slow
# run ends with its TAP and the detectors' checks, check.sh starting no
# program in the VM's last 150 s.  And two programs are skipped that
# exercise the driver only as the library tests do, with GEMMs that the
# software engine, KASAN-instrumented, takes long over: the demo (90 s
# here) and cli_accel.sh (125-160 s); the Debian kernels and make vm-debug
# run them.  Measured with them: 807 s of VM; 790 s without the demo on a
# machine shared with a second make check.
export MXACCEL_VM_NO_BUILD=1
export MXACCEL_VM_TIMEOUT=${MXACCEL_VM_TIMEOUT:-$((${MXACCEL_TEST_TIMEOUT:-900} - 90))}
export MXACCEL_VM_SKIP=${MXACCEL_VM_SKIP-mxaccel-demo cli_accel.sh}
exec "$(dirname "$0")/check.sh" 6.12-debug
