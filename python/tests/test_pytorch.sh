#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Python package's tests (pytest) against the real torch and torchao,
# in the cached environment scripts/python-env.sh creates on first use
# (outside the repository; about two minutes cold, under a second warm).
# Run by `make check` (not the SANITIZE=1 pass: the sanitizer runtime
# cannot be loaded into Python).  Exit 0 when every test passed, else 1.
set -eu
cd "$(dirname "$0")/../.."
build=${MXACCEL_BUILD:-build/rel}
env_dir=$(scripts/python-env.sh)
export MXACCEL_LIBRARY=${MXACCEL_LIBRARY:-$PWD/$build/lib/libmxaccel.so.0}
cd python
exec "$env_dir/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
