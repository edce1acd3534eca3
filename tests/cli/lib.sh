# SPDX-License-Identifier: MIT
#
# The preamble every tests/cli script shares.  Sourced, not run (its name
# is not test_*, so the runner and the Makefile leave it alone):
#
#	. "$(dirname "$0")/lib.sh"
#
# It sets
#	cli_dir    the directory of the tests (and of their python3 references);
#	build, mx  $MXACCEL_BUILD (default build/rel) and its mxaccel, or
#	           skips (exit 77) when mxaccel is not built;
#	tmp        a private temporary directory, removed on exit (made
#	           writable first, for tests that take permissions away);
#	failures   0, counted up by fail;
# unsets MXACCEL_DEBUG (the library's debug lines would add to the output
# the tests read), and defines the helpers below.

cli_dir=$(dirname "${BASH_SOURCE[0]}")

build=${MXACCEL_BUILD:-build/rel}
mx=$build/bin/mxaccel
if [ ! -x "$mx" ]; then
	echo "skip: $mx not built (make tools)"
	exit 77
fi
unset MXACCEL_DEBUG

tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

failures=0

# fail MESSAGE...: report one failed check and count it.
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# need_python3: skip (exit 77) when python3, which computes the expected
# values, is not installed.
need_python3() {
	if ! command -v python3 >/dev/null; then
		echo "skip: python3 not installed"
		exit 77
	fi
}

# cmp_f32 GOT WANT: the fp32 files are equal bit for bit, except that a NaN
# matches any NaN (the payload is not ours to check); the first few
# differences on stdout.
cmp_f32() {
	python3 - "$1" "$2" <<'PY'
import struct
import sys

got, want = (open(p, "rb").read() for p in sys.argv[1:3])
if len(got) != len(want):
    print("%s: %d bytes, want %d" % (sys.argv[1], len(got), len(want)))
    sys.exit(1)
n = len(got) // 4
bad = 0
for i, (g, w) in enumerate(zip(struct.unpack("<%dI" % n, got),
                               struct.unpack("<%dI" % n, want))):
    if (g & 0x7FFFFFFF) > 0x7F800000 and (w & 0x7FFFFFFF) > 0x7F800000:
        continue
    if g != w:
        if bad < 5:
            print("  element %d (block %d): 0x%08x, want 0x%08x"
                  % (i, i // 32, g, w))
        bad += 1
if bad:
    print("  %d of %d values differ" % (bad, n))
sys.exit(1 if bad else 0)
PY
}
