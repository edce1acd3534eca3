#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CUDA plugin as CI builds it: with the local nvcc, on a machine that
# has no GPU and no NVIDIA driver.  One line per check, "ok:", "FAIL:" or
# "skip:"; exit 1 if any check failed.
#
# Always (plugin built or not):
# - libmxaccel.so.0 links no CUDA library (readelf -d NEEDED);
# - `mxaccel info` explains why the cuda backend is unavailable (no GPU),
#   or lists a cuda device (GPU present: `nvidia-smi -L` succeeds);
# - without a GPU, `mxaccel gemm --device cuda:0` fails cleanly (exit 2,
#   one line on stderr naming cuda:0, no output file); the tests/cuda
#   programs skip (77) and say why, MXACCEL_TEST_DEVICE or not; and a
#   library test told MXACCEL_TEST_DEVICE=cuda:0 fails rather than skips
#   (a device that was asked for is not optional).  With a GPU,
#   `mxaccel gemm --device cuda:0` runs instead.
#
# When nvcc is found (the Makefile's lookup: make passes its $(NVCC) as
# MXACCEL_NVCC, so `make check NVCC=` means none; run by hand: $NVCC, else
# nvcc on the PATH, else /usr/local/cuda/bin/nvcc), the plugin must have
# been built in the same tree, $MXACCEL_BUILD/lib: an ELF shared object
# with soname libmxaccel-cuda.so.0 that exports exactly the global symbols
# of lib/cuda/libmxaccel-cuda.map, carries sm_90a machine code (the
# default CUDA_GENCODE; listed by cuobjdump, or without cuobjdump read
# from the ptxas note of each uncompressed cubin in .nv_fatbin) and does
# not link libcudart (static) or cuBLAS (dlopen'ed) dynamically.
#
# Without nvcc the test skips (77) after the checks above, unless
# MXACCEL_REQUIRE_CUDA=1 (.ci/run sets it): then a missing nvcc fails.
#
# Both build trees: the Makefile builds the plugin in build/rel and in
# build/san alike (nvcc's code is not instrumented; the ASan/UBSan library
# dlopens the same plain plugin), so both variants get the same checks, and
# the sanitizer pass also covers loading the plugin and failing its probe.
set -u

build=${MXACCEL_BUILD:-build/rel}
lib=$build/lib
mx=$build/bin/mxaccel
map=lib/cuda/libmxaccel-cuda.map
plugin=$lib/libmxaccel-cuda.so.0
# The library's debug lines and forced devices or kernels would change
# what the commands below print.
unset MXACCEL_DEBUG MXACCEL_KERNEL MXACCEL_DEVICE MXACCEL_TEST_DEVICE

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

checks=0
failures=0
ok() {
	checks=$((checks + 1))
	echo "ok: $*"
}
fail() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "FAIL: $*"
}
skip() {
	echo "skip: $*"
}

# NEEDED entries of an ELF file, space separated.
needed() {
	readelf -d "$1" 2>/dev/null |
		sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//'
}

# --- the core library never links CUDA ---------------------------------------
core=$lib/libmxaccel.so.0
if [ ! -e "$core" ]; then
	fail "$core not built (make lib)"
else
	deps=$(needed "$core")
	if tr ' ' '\n' <<<"$deps" | grep -Eq '^lib(cuda|cudart|cublas)'; then
		fail "libmxaccel.so.0 links CUDA: NEEDED $deps"
	else
		ok "libmxaccel.so.0 links no CUDA library (NEEDED: $deps)"
	fi
fi

# --- nvcc, as the Makefile finds it ------------------------------------------
if [ -n "${MXACCEL_NVCC+set}" ]; then
	nvcc=$MXACCEL_NVCC
	where="make's NVCC is empty"
elif [ -n "${NVCC+set}" ]; then
	nvcc=$NVCC
	where="\$NVCC"
else
	nvcc=$(command -v nvcc 2>/dev/null)
	[ -z "$nvcc" ] && [ -e /usr/local/cuda/bin/nvcc ] &&
		nvcc=/usr/local/cuda/bin/nvcc
	where="PATH, /usr/local/cuda/bin/nvcc"
fi
no_nvcc=
if [ -z "$nvcc" ]; then
	if [ "${MXACCEL_REQUIRE_CUDA:-0}" = 1 ]; then
		fail "CI must build the CUDA plugin: nvcc not found ($where; MXACCEL_REQUIRE_CUDA=1)"
	else
		no_nvcc="nvcc not found ($where): the CUDA plugin is not built"
		skip "plugin checks: $no_nvcc"
	fi
elif [ ! -e "$plugin" ]; then
	fail "$plugin not built although nvcc is $nvcc (make cuda)"
else
	ok "nvcc $nvcc; plugin $(readlink -f "$plugin")"

	if LC_ALL=C readelf -h "$plugin" 2>/dev/null |
	   grep -Eq '^ *Type: *DYN '; then
		ok "plugin is an ELF shared object"
	else
		fail "plugin is not an ELF shared object: $(file -b "$plugin" 2>/dev/null)"
	fi

	soname=$(readelf -d "$plugin" 2>/dev/null |
		 sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	if [ "$soname" = libmxaccel-cuda.so.0 ]; then
		ok "plugin soname $soname"
	else
		fail "plugin soname is '$soname', want libmxaccel-cuda.so.0"
	fi

	# The map's global: names, up to local:.
	allowed=$(sed -e 's|/\*.*\*/||' "$map" |
		  awk '/global:/ {g = 1; next} /local:/ {g = 0}
		       g { gsub(/[ \t;]/, ""); if ($0 != "") print }' | sort)
	exported=$(nm -D --defined-only "$plugin" | awk '{print $3}' |
		   sed 's/@.*//' | sort -u)
	if [ -z "$allowed" ]; then
		fail "no global symbols found in $map"
	elif [ "$exported" = "$allowed" ]; then
		ok "plugin exports only $map's globals: $(paste -sd ' ' <<<"$exported")"
	else
		fail "plugin exports differ from $map's globals:"
		diff -u <(printf '%s\n' "$allowed") <(printf '%s\n' "$exported") |
			sed 's/^/    /'
	fi

	deps=$(needed "$plugin")
	if tr ' ' '\n' <<<"$deps" | grep -Eq '^lib(cudart|cublas)'; then
		fail "plugin links libcudart or cuBLAS dynamically: NEEDED $deps"
	else
		ok "plugin does not link libcudart or cuBLAS (NEEDED: $deps)"
	fi

	cuobjdump=
	for c in "$(dirname "$nvcc")/cuobjdump" "$(command -v cuobjdump 2>/dev/null)" \
		 /usr/local/cuda/bin/cuobjdump; do
		[ -n "$c" ] && [ -x "$c" ] && { cuobjdump=$c; break; }
	done
	if [ -n "$cuobjdump" ]; then
		elfs=$("$cuobjdump" --list-elf "$plugin" 2>&1)
		if grep -q 'sm_90a' <<<"$elfs"; then
			ok "sm_90a device code ($cuobjdump: $(grep -c 'sm_90a' <<<"$elfs") cubin(s))"
		else
			fail "no sm_90a cubin in the plugin; $cuobjdump --list-elf says:"
			"$cuobjdump" --list-elf "$plugin" 2>&1 | sed 's/^/    /'
		fi
	elif ! objcopy -O binary --only-section=.nv_fatbin "$plugin" \
		 "$tmp/fatbin" 2>/dev/null || [ ! -s "$tmp/fatbin" ]; then
		fail "plugin has no .nv_fatbin section (no device code)"
	elif LC_ALL=C grep -aq -e '-arch sm_90a ' "$tmp/fatbin"; then
		ok "sm_90a device code (ptxas note of a cubin in .nv_fatbin; no cuobjdump)"
	else
		skip "sm_90a device code: no cuobjdump, and no uncompressed cubin in .nv_fatbin names sm_90a"
	fi
fi

# --- a GPU or not ------------------------------------------------------------
gpu=
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	gpu=$(nvidia-smi -L 2>/dev/null | head -n 1)
	echo "# GPU present: $gpu"
else
	echo "# no GPU (nvidia-smi -L lists none)"
fi

# --- mxaccel info --------------------------------------------------------------
if [ ! -x "$mx" ]; then
	fail "$mx not built (make tools)"
else
	"$mx" info >"$tmp/info" 2>"$tmp/info.err"
	rc=$?
	line=$(grep -E '^ +cuda ' "$tmp/info" | head -n 1 | tr -s ' ' |
	       sed 's/^ //')
	if [ "$rc" -ne 0 ]; then
		fail "mxaccel info exited $rc: $(head -n 3 "$tmp/info.err")"
	elif [ -n "$gpu" ]; then
		if grep -Eq '^cuda +[1-9][0-9]* devices?$' <<<"$line" &&
		   grep -q '^device cuda:0 ' "$tmp/info"; then
			ok "mxaccel info lists the GPU: $line; $(grep -m 1 '^device cuda:0 ' "$tmp/info")"
		else
			fail "mxaccel info lists no cuda device with a GPU present: '$line'"
		fi
	elif grep -Eq '^cuda +unavailable: .*[[:alnum:]]' <<<"$line"; then
		ok "mxaccel info says why: $line"
	else
		fail "mxaccel info does not explain why cuda is unavailable: '$line'"
	fi
fi

# --- an explicit cuda:0 request ------------------------------------------------
# A GEMM M=3 N=5 K=64 of e4m3 zeros (the CLI tests' smallest case).
head -c 192 /dev/zero >"$tmp/a"
head -c 6 /dev/zero >"$tmp/as"
head -c 320 /dev/zero >"$tmp/b"
head -c 10 /dev/zero >"$tmp/bs"
gemm=(gemm --m 3 --n 5 --k 64 --a "$tmp/a" --a-scale "$tmp/as" --a-elem e4m3
      --b "$tmp/b" --b-scale "$tmp/bs" --b-elem e4m3 --out "$tmp/c"
      --device cuda:0)
if [ -x "$mx" ]; then
	"$mx" "${gemm[@]}" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	msg=$(head -n 1 "$tmp/err")
	if [ -n "$gpu" ]; then
		if [ "$rc" -eq 0 ] && [ "$(stat -c %s "$tmp/c" 2>/dev/null)" = 60 ]; then
			ok "mxaccel gemm --device cuda:0 runs on the GPU"
		else
			fail "mxaccel gemm --device cuda:0 with a GPU: exit $rc: $msg"
		fi
	elif [ "$rc" -ne 2 ]; then
		fail "mxaccel gemm --device cuda:0 without a GPU: exit $rc, want 2: $msg"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -s "$tmp/out" ]; then
		fail "mxaccel gemm --device cuda:0: want one line on stderr and none on stdout: $(head -n 3 "$tmp/err")"
	elif ! grep -q '^mxaccel: gemm: .*cuda:0' "$tmp/err"; then
		fail "mxaccel gemm --device cuda:0: message does not name cuda:0: $msg"
	elif [ -e "$tmp/c" ]; then
		fail "mxaccel gemm --device cuda:0 failed but wrote its output"
	else
		ok "mxaccel gemm --device cuda:0 exits 2: $msg"
	fi
fi

# --- the tests' handling of a missing CUDA device ------------------------------
if [ -n "$gpu" ]; then
	skip "tests/cuda skip behaviour: a GPU is present (make check runs them on it)"
else
	for t in test_cuda_quant test_cuda_gemm; do
		bin=$build/tests/$t
		if [ ! -x "$bin" ]; then
			fail "$bin not built (make tests)"
			continue
		fi
		for env in MXACCEL_TEST_DEVICE= MXACCEL_TEST_DEVICE=cuda:0; do
			env "$env" "$bin" >"$tmp/t.log" 2>&1
			rc=$?
			last=$(tail -n 1 "$tmp/t.log")
			what=$t
			[ "$env" = MXACCEL_TEST_DEVICE= ] || what="$t with $env"
			if [ "$rc" -eq 77 ] && grep -Eq '^skip: .*[[:alnum:]]' <<<"$last"; then
				ok "$what skips (77): $last"
			else
				fail "$what: exit $rc, want 77 and a 'skip: <reason>' line: $last"
			fi
		done
	done
	bin=$build/tests/test_api_devices
	if [ ! -x "$bin" ]; then
		fail "$bin not built (make tests)"
	else
		MXACCEL_TEST_DEVICE=cuda:0 "$bin" >"$tmp/t.log" 2>&1
		rc=$?
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] &&
		   grep -q 'cuda:0' "$tmp/t.log"; then
			ok "test_api_devices with MXACCEL_TEST_DEVICE=cuda:0 fails (exit $rc): $(grep -m 1 'cuda:0' "$tmp/t.log")"
		else
			fail "test_api_devices with MXACCEL_TEST_DEVICE=cuda:0: exit $rc, want a failure naming cuda:0: $(tail -n 1 "$tmp/t.log")"
		fi
	fi
fi

# --- result ------------------------------------------------------------------
if [ "$failures" -ne 0 ]; then
	echo "$checks checks, $failures failed"
	exit 1
fi
if [ -n "$no_nvcc" ]; then
	echo "$checks checks passed"
	echo "$no_nvcc (set NVCC=/path/to/nvcc, or MXACCEL_REQUIRE_CUDA=1 to fail)"
	exit 77
fi
echo "$checks checks passed"
