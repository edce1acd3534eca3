#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install the Debian packages the build and the tests need, when missing.
# Only root can install; anyone else gets the list of what is missing.
set -eu
pkgs="gcc make libc6-dev binutils coreutils python3 pkg-config libdrm-dev libopenblas-dev libdnnl-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing Debian packages:$missing (run 'make deps' as root)" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
