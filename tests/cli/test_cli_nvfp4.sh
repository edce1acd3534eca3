#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVFP4 through the CLI, against torchao's golden tensors (tests/data/
# nvfp4_golden, and the full ../shared/testdata/nvfp4_golden when it
# exists): each 8 x 64 tensor
#   - `mxaccel quantize --recipe nvfp4` (single level) and with
#     `--tensor-scale` set to the tensor's per-tensor scale, written as a
#     C99 hex float (two level), must reproduce torchao's codes and UE4M3
#     scales bit for bit (cmp);
#   - `mxaccel dequantize --recipe nvfp4 [--tensor-scale X]` of torchao's
#     codes and scales must reproduce its fp32 values, NaN as "is NaN";
# and the NVFP4 option errors name the option and the rule.
set -u

. "$(dirname "$0")/lib.sh"
need_python3
cases=0

# Tensor t of a golden directory: its slices into $tmp, and the
# per-tensor scale as a C99 hex float on stdout.
slice() {
	python3 - "$1" "$2" "$tmp" <<'PY'
import os, struct, sys
d, t, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
per = {"input_f32.bin": 2048, "single_data.bin": 256, "single_scale.bin": 32,
       "single_deq_f32.bin": 2048, "two_data.bin": 256, "two_scale.bin": 32,
       "two_deq_f32.bin": 2048}
for n, size in per.items():
    with open(os.path.join(d, n), "rb") as f:
        f.seek(t * size)
        open(os.path.join(out, n), "wb").write(f.read(size))
with open(os.path.join(d, "tensor_scale_f32.bin"), "rb") as f:
    f.seek(4 * t)
    print(struct.unpack("<f", f.read(4))[0].hex())
PY
}

check_dir() {
	local d=$1 n t ts lvl opt
	n=$(($(stat -c %s "$d/tensor_scale_f32.bin") / 4))
	for ((t = 0; t < n; t++)); do
		ts=$(slice "$d" "$t") || { fail "$d: tensor $t: cannot slice"; return; }
		for lvl in single two; do
			opt=()
			[ $lvl = two ] && opt=(--tensor-scale "$ts")
			cases=$((cases + 1))
			if ! "$mx" quantize --recipe nvfp4 "${opt[@]}" --rows 8 --cols 64 \
				--in "$tmp/input_f32.bin" --out-data "$tmp/d" \
				--out-scale "$tmp/s" >"$tmp/log" 2>&1; then
				fail "$d tensor $t $lvl: quantize: $(cat "$tmp/log")"
			elif ! cmp -s "$tmp/d" "$tmp/${lvl}_data.bin" ||
			     ! cmp -s "$tmp/s" "$tmp/${lvl}_scale.bin"; then
				fail "$d tensor $t $lvl: codes or scales differ from torchao"
			fi
			cases=$((cases + 1))
			if ! "$mx" dequantize --recipe nvfp4 "${opt[@]}" --rows 8 --cols 64 \
				--data "$tmp/${lvl}_data.bin" --scale "$tmp/${lvl}_scale.bin" \
				--out "$tmp/o" >"$tmp/log" 2>&1; then
				fail "$d tensor $t $lvl: dequantize: $(cat "$tmp/log")"
			elif ! cmp_f32 "$tmp/o" "$tmp/${lvl}_deq_f32.bin"; then
				fail "$d tensor $t $lvl: dequantized values differ from torchao"
			fi
		done
	done
	echo "# $d: $n tensors, single and two level"
}

check_dir tests/data/nvfp4_golden
full=${MXACCEL_NVFP4_GOLDEN_DIR:-../shared/testdata/nvfp4_golden}
[ -d "$full" ] && check_dir "$full"

# expect_fail NAME PATTERN ARGS...: exit status 1 and a message matching.
expect_fail() {
	local name=$1 pat=$2 out
	shift 2
	cases=$((cases + 1))
	out=$("$mx" "$@" 2>&1) && { fail "$name: succeeded"; return; }
	echo "$out" | grep -Eq -- "$pat" || fail "$name: message '$out' lacks '$pat'"
}
head -c 2048 /dev/zero >"$tmp/z"
Q=(quantize --rows 8 --cols 64 --in "$tmp/z" --out-data "$tmp/d" --out-scale "$tmp/s")
expect_fail "--tensor-scale with an E8M0 recipe" "--tensor-scale.*UE4M3" \
	"${Q[@]}" --recipe mxfp4 --tensor-scale 2
expect_fail "--tensor-scale negative" "--tensor-scale -1.*positive finite" \
	"${Q[@]}" --recipe nvfp4 --tensor-scale -1
expect_fail "--tensor-scale not a number" "--tensor-scale 1x.*positive finite" \
	"${Q[@]}" --recipe nvfp4 --tensor-scale 1x
expect_fail "--tensor-scale inf" "--tensor-scale inf.*positive finite" \
	"${Q[@]}" --recipe nvfp4 --tensor-scale inf
expect_fail "nvfp4 --cols 40" "--cols 40.*multiple of 16" \
	quantize --rows 8 --cols 40 --in "$tmp/z" --out-data "$tmp/d" \
	--out-scale "$tmp/s" --recipe nvfp4
expect_fail "nvfp4 with --elem e4m3" "nvfp4.*conflicts with --elem e4m3" \
	"${Q[@]}" --recipe nvfp4 --elem e4m3
head -c 256 /dev/zero >"$tmp/z256"
head -c 7 /dev/zero >"$tmp/z7"
expect_fail "nvfp4 --scale file too short" "--scale.*7 bytes, expected 32" \
	dequantize --recipe nvfp4 --rows 8 --cols 64 --data "$tmp/z256" \
	--scale "$tmp/z7" --out "$tmp/o"

echo "$cases cases, $failures failure(s)"
[ "$failures" -eq 0 ]
