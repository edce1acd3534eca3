#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Everything the CUDA backend needs a GPU for, in one go, from the top of
# the tree on a machine with an NVIDIA GPU and nvcc: build, the library's
# tests (the CUDA ones run instead of skipping), compute-sanitizer memcheck
# and racecheck on small native GEMMs, the SASS of the native kernel, the
# benchmark and the read probe.  Logs and results go to $OUT (default
# cuda-run/).
#
#   tests/bench/cuda_device_run.sh [build] [test] [sanitize] [sass] [bench] [torch] [probe]
#
# With no arguments every step runs; "bench" is libmxaccel alone
# (tests/cuda/cuda_bench.c), "torch" the whole comparison
# (tests/bench/cuda_bench.py), "probe" the decode shape's weight reads alone
# (tests/bench/read_probe.cu, MXFP8 and MXFP4 sizes).  MXACCEL_GOLDEN_DIR may
# name the full golden set.
set -u
out=${OUT:-cuda-run}
mkdir -p "$out"
steps=${*:-build test sanitize sass bench torch probe}
build=${MXACCEL_BUILD:-build/rel}
sum=$out/summary.txt
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
objdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)

has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
log() { echo "== $*" | tee -a "$sum"; }

log "$(date -u) steps: $steps"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
	--format=csv >>"$sum" 2>&1

if has build; then
	log build
	start=$(date +%s)
	if ! make -j"$(nproc)" all tests >"$out/build.log" 2>&1; then
		tail -40 "$out/build.log"
		exit 1
	fi
	log "built in $(($(date +%s) - start)) s"
fi

if has test; then
	log test
	"$build"/bin/mxaccel info >>"$sum" 2>&1
	MXACCEL_BUILD=$build tests/run-tests.sh "$build"/tests/test_* 2>&1 | tee -a "$sum"
	cat "$build"/test-logs/test_cuda_*.log >"$out/tests.log" 2>&1
	# The generic library tests that take a device, on the GPU.
	log "library tests on cuda:0"
	for t in test_special test_native_bound test_nvfp4 test_nvfp4_native test_colwise \
		 test_golden test_api_buffers test_api_devices test_api_plan \
		 test_api_gemm_validation test_api_quantize_validation \
		 test_gemm_exact test_weight_only test_grouped_gemm; do
		[ -x "$build/tests/$t" ] || continue
		MXACCEL_TEST_DEVICE=cuda:0 "$build/tests/$t" >"$out/$t.cuda.log" 2>&1
		rc=$?
		echo "$t on cuda:0: exit $rc ($(tail -n 1 "$out/$t.cuda.log"))" | tee -a "$sum"
		[ $rc = 0 ] || grep -m 8 FAIL "$out/$t.cuda.log" | tee -a "$sum"
	done
	# The CLI's exact GEMMs against Fraction references, on the GPU.
	for t in test_cli_gemm_nvfp4.sh test_cli_gemm_grouped.sh; do
		MXACCEL_BUILD=$build MXACCEL_TEST_DEVICE=cuda:0 tests/cli/$t \
			>"$out/$t.cuda.log" 2>&1
		rc=$?
		echo "$t on cuda:0: exit $rc ($(tail -n 1 "$out/$t.cuda.log"))" | tee -a "$sum"
		[ $rc = 0 ] || grep -m 8 FAIL "$out/$t.cuda.log" | tee -a "$sum"
	done
	grep -h "worst\|bit-identical\|compared\|NATIVE\|cublas" "$out/tests.log" >>"$sum"
fi

if has sanitize; then
	for tool in memcheck racecheck; do
		log "compute-sanitizer $tool"
		MXACCEL_TEST_QUICK=1 timeout 300 "$cs" --tool "$tool" \
			"$build"/tests/test_cuda_gemm >"$out/$tool.log" 2>&1
		echo "exit $?" >>"$out/$tool.log"
		tail -4 "$out/$tool.log" | tee -a "$sum"
		log "compute-sanitizer $tool: weight-only"
		MXACCEL_TEST_QUICK=1 MXACCEL_TEST_DEVICE=cuda:0 timeout 300 "$cs" \
			--tool "$tool" "$build"/tests/test_weight_only \
			>"$out/$tool-weight-only.log" 2>&1
		echo "exit $?" >>"$out/$tool-weight-only.log"
		tail -4 "$out/$tool-weight-only.log" | tee -a "$sum"
		# the NVFP4 paths (decode and bf16-ss), one case a shape
		MXACCEL_TEST_QUICK=1 MXACCEL_TEST_DEVICE=cuda:0 timeout 300 "$cs" --tool "$tool" \
			"$build"/tests/test_nvfp4_native >"$out/$tool-nvfp4.log" 2>&1
		echo "exit $?" >>"$out/$tool-nvfp4.log"
		tail -4 "$out/$tool-nvfp4.log" | tee -a "$sum"
	done
	log "compute-sanitizer memcheck: the exact GEMMs"
	MXACCEL_TEST_QUICK=1 timeout 300 "$cs" --tool memcheck \
		"$build"/tests/test_cuda_exact >"$out/memcheck-exact.log" 2>&1
	echo "exit $?" >>"$out/memcheck-exact.log"
	tail -4 "$out/memcheck-exact.log" | tee -a "$sum"
fi

if has sass; then
	log "sass of the native kernel"
	"$objdump" -sass "$build"/lib/libmxaccel-cuda.so.0 >"$out/sass.txt" 2>&1 ||
		head -3 "$out/sass.txt" >>"$sum"
	awk '/Function :/ { f = $3 } /QGMMA|HGMMA|LDL|STL|BAR.SYNC|SYNCS/ { n[f" "$2]++ }
	     END { for (k in n) print n[k], k }' "$out/sass.txt" | sort -k2 >>"$sum"
	rm -f "$out/sass.txt"
fi

if has bench; then
	log "bench (libmxaccel)"
	"$build"/tests/cuda_bench --gemm 8192x8192x8192 --gemm 16384x8192x4096 \
		--gemm 4096x14336x4096 --gemm 16x14336x4096 --gemm 1x14336x4096 \
		--gemm 32x14336x4096 --gemm 64x14336x4096 --gemm 16x4096x14336 \
		--quant 16384x8192 \
		2>&1 | tee -a "$sum"
	MXACCEL_KERNEL=cuda-mx-sm90-decode "$build"/tests/cuda_bench --gemm 16x14336x4096 \
		--gemm 32x14336x4096 2>&1 | sed "s/^/decode: /" | tee -a "$sum"
	for k in fp8 fp8-single fp8-quad; do
		MXACCEL_KERNEL=cuda-mx-sm90-$k "$build"/tests/cuda_bench --gemm 8192x8192x8192 \
			--gemm 4096x14336x4096 2>&1 | sed "s/^/$k: /" | tee -a "$sum"
	done
fi

if has torch; then
	log "bench (with PyTorch)"
	PYTHONUNBUFFERED=1 python3 tests/bench/cuda_bench.py --build "$build" \
		--out "$out" >"$out/bench.log" 2>&1
	tail -20 "$out/bench.log" | tee -a "$sum"
fi
if has probe; then
	log "read probe (decode weights: 14336 rows of 4096 and 2048 bytes)"
	for bytes in 4096 2048; do
		"$build"/tests/read_probe 14336 $bytes >"$out/probe-$bytes.txt" 2>&1
		grep -E "^(order|swz +128 +2 +3|copy)" "$out/probe-$bytes.txt" | tee -a "$sum"
	done
fi
log "$(date -u) done"
