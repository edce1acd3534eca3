#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Python environment of the PyTorch bridge's tests: a virtual
# environment with torch and torchao from the package index, cached outside
# the repository (like the VM runner's kernels) and reused while its key,
# the pinned versions below, is unchanged.  Prints the environment's
# directory on stdout; progress goes to stderr.
#
# Why not a plain `pip install torch`: PyPI's Linux torch wheel is the CUDA
# build and pulls ~2.5 GB of nvidia-* wheels.  The CPU code of that wheel
# only needs the CUDA libraries to be loadable, and this project's machines
# carry the CUDA 13.0 toolkit (for nvcc), which is what torch 2.11.0 was
# built against.  So torch is installed without dependencies, plus its
# pure-Python requirements, plus the three CUDA libraries the toolkit lacks
# (cuFile, cuSPARSELt, NVSHMEM: ~0.3 GB).  Where `import torch` still fails
# (a machine without the toolkit), torch's full dependency set is installed.
#
# torch 2.11.0: the oldest torch torchao 0.18.0 supports with its C++
# extensions, and the version on the H200 machine, so the same torchao
# wheel runs in both places.
#
# Environment: MXACCEL_PYENV_CACHE (default /var/cache/mxaccel, else
# ~/.cache/mxaccel when that is not writable), MXACCEL_PYTHON (default
# python3).
set -euo pipefail

TORCH_VERSION=2.11.0
TORCHAO_VERSION=0.18.0
# torch's own requirements that are pure Python (torch 2.11.0's METADATA;
# setuptools new enough to build a wheel by itself, for `pip install`),
# and the test runner.
PURE_DEPS=(filelock==4.3.1 typing-extensions==4.16.0 'setuptools>=70.1,<82'
	   sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1 jinja2==3.1.6
	   markupsafe==3.0.4 fsspec==2026.9.0 numpy==2.4.6 pytest==9.2.0)
# The CUDA libraries libtorch_cuda.so needs that the CUDA 13.0 toolkit
# does not ship, at the versions torch 2.11.0 names.
CUDA_GAP_DEPS=('nvidia-cufile==1.15.*' nvidia-cusparselt-cu13==0.8.0
	       nvidia-nvshmem-cu13==3.4.5)

python=${MXACCEL_PYTHON:-python3}
pytag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
key="$pytag-torch$TORCH_VERSION-torchao$TORCHAO_VERSION-v2"

cache=${MXACCEL_PYENV_CACHE:-/var/cache/mxaccel}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/mxaccel
	mkdir -p "$cache"
fi
env_dir="$cache/pyenv-$key"

log() { echo "python-env: $*" >&2; }

torch_imports() {
	"$env_dir/bin/python" -c 'import torch, torchao' >/dev/null 2>&1
}

# One creator at a time (parallel make, two worktrees); the others wait
# and then find the finished environment.
exec 9>"$cache/pyenv.lock"
flock 9

if [ -e "$env_dir/.complete" ]; then
	echo "$env_dir"
	exit 0
fi

start=$(date +%s)
rm -rf "$env_dir"
log "creating $env_dir"
if ! "$python" -m venv "$env_dir" >&2; then
	# Debian's python3 keeps venv (ensurepip) in its own package.
	rm -rf "$env_dir"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		log "installing python3-venv"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >&2
		"$python" -m venv "$env_dir" >&2
	else
		log "$python -m venv failed and python3-venv cannot be installed here"
		exit 1
	fi
fi
pip=("$env_dir/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --no-deps "torch==$TORCH_VERSION" \
	"torchao==$TORCHAO_VERSION" >&2
"${pip[@]}" install "${PURE_DEPS[@]}" >&2
if ! torch_imports; then
	log "torch needs CUDA libraries the system lacks: adding ${CUDA_GAP_DEPS[*]}"
	"${pip[@]}" install --no-deps "${CUDA_GAP_DEPS[@]}" >&2
fi
if ! torch_imports; then
	log "no usable CUDA toolkit here: installing torch's full dependency set"
	"${pip[@]}" install "torch==$TORCH_VERSION" >&2
fi
if ! torch_imports; then
	"$env_dir/bin/python" -c 'import torch, torchao' >&2 || true
	log "torch $TORCH_VERSION does not import in $env_dir"
	exit 1
fi
touch "$env_dir/.complete"
log "created in $(($(date +%s) - start)) s ($(du -sh "$env_dir" | cut -f1))"
echo "$env_dir"
