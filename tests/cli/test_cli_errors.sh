#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Every error path of the mxaccel CLI.  Each failing command must exit with
# status 2, print exactly one line "mxaccel: <subcommand>: ..." on stderr
# that names the offending option or file (and the expected value where
# there is one), print nothing on stdout, and leave no output and no
# temporary file behind.  Usage requests (--help) exit 0 with usage on
# stdout; a bare `mxaccel` prints usage on stderr and exits 2.
set -u

. "$(dirname "$0")/lib.sh"
# One stderr line per error (lib.sh unsets MXACCEL_DEBUG, whose lines would
# add more), and a forced kernel would change what --kernel means.
unset MXACCEL_KERNEL

in=$tmp/in
out=$tmp/out
mkdir "$in"

cases=0

# expect_fail WHAT NEEDLES [VAR=VALUE...] SUBCOMMAND ARGS...
# NEEDLES: substrings separated by '|' that the message must all contain.
expect_fail() {
	local what=$1 needles=$2 needle lines rc sub
	local -a envs=()
	shift 2
	while [[ $# -gt 0 && $1 =~ ^[A-Z_]+= ]]; do
		envs+=("$1")
		shift
	done
	sub=${1:-}
	cases=$((cases + 1))
	rm -rf "$out"
	mkdir "$out"
	env "${envs[@]}" "$mx" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	echo "# $what: $(head -n 1 "$tmp/stderr")"
	[ "$rc" -eq 2 ] || fail "$what: exit status $rc, want 2"
	[ "$lines" -eq 1 ] ||
		fail "$what: $lines lines on stderr, want 1: $(head -n 3 "$tmp/stderr")"
	grep -q "^mxaccel: $sub: " "$tmp/stderr" ||
		fail "$what: message does not start with 'mxaccel: $sub: '"
	IFS='|' read -ra list <<<"$needles"
	for needle in "${list[@]}"; do
		grep -qF -- "$needle" "$tmp/stderr" ||
			fail "$what: message lacks '$needle'"
	done
	[ -s "$tmp/stdout" ] && fail "$what: wrote to stdout: $(head -c 200 "$tmp/stdout")"
	if [ -n "$(ls -A "$out")" ] || [ -n "$(find "$tmp" -name '*.tmp')" ]; then
		fail "$what: left files behind: $(ls -A "$out" "$tmp")"
	fi
}

expect_ok() {
	local what=$1
	shift
	cases=$((cases + 1))
	rm -rf "$out"
	mkdir "$out"
	"$mx" "$@" >"$tmp/stdout" 2>"$tmp/stderr" ||
		fail "$what: exit status $?, want 0: $(head -n 3 "$tmp/stderr")"
}

# args=(the array after $1 with option $1 and its value removed)
drop() {
	local opt=$1
	shift
	args=()
	while [ $# -gt 0 ]; do
		if [ "$1" = "$opt" ]; then
			shift 2
			continue
		fi
		args+=("$1")
		shift
	done
}

# args=(the array after $2 with option $1's value replaced by $2)
subst() {
	local opt=$1 val=$2
	shift 2
	drop "$opt" "$@"
	args+=("$opt" "$val")
}

# zeros FILE BYTES
zeros() {
	head -c "$2" /dev/zero >"$1"
}

# Inputs of the right sizes: quantize 4 x 64, dequantize 4 x 64 e4m3,
# gemm M=3 N=5 K=64 e4m3; plus one byte short and one byte long of each.
zeros "$in/q.f32" 1024
zeros "$in/q.bf16" 512
zeros "$in/d.e4m3" 256
zeros "$in/s.plain" 8
zeros "$in/a" 192
zeros "$in/as" 6
zeros "$in/b" 320
zeros "$in/bs" 10
zeros "$in/c.f32" 60
zeros "$in/c.bf16" 30
for f in q.f32 d.e4m3 s.plain a as b bs c.f32 c.bf16; do
	size=$(stat -c %s "$in/$f")
	zeros "$in/$f.short" $((size - 1))
	zeros "$in/$f.long" $((size + 1))
done
: >"$in/empty"

Q=(quantize --elem e4m3 --mode floor --rows 4 --cols 64 --in "$in/q.f32"
   --out-data "$out/d" --out-scale "$out/s")
D=(dequantize --elem e4m3 --rows 4 --cols 64 --data "$in/d.e4m3"
   --scale "$in/s.plain" --out "$out/c")
G=(gemm --m 3 --n 5 --k 64 --a "$in/a" --a-scale "$in/as" --a-elem e4m3
   --b "$in/b" --b-scale "$in/bs" --b-elem e4m3 --out "$out/c")
BQ=(bench --op quantize --m 32 --k 32)

# --- the commands above work, so each failure below is the one change ---
expect_ok "quantize" "${Q[@]}"
expect_ok "dequantize" "${D[@]}"
expect_ok "gemm" "${G[@]}"
expect_ok "gemm --c-in" "${G[@]}" --c-in "$in/c.f32"
subst --out-dtype bf16 "${G[@]}"
expect_ok "gemm bf16 --c-in" "${args[@]}" --c-in "$in/c.bf16"
expect_ok "quantize --in-dtype bf16" "${Q[@]/q.f32/q.bf16}" --in-dtype bf16
drop --elem "${Q[@]}"
drop --mode "${args[@]}"
expect_ok "quantize --recipe" "${args[@]}" --recipe mxfp4
expect_ok "quantize --recipe agreeing with --elem/--mode" "${Q[@]}" --recipe mxfp8
expect_ok "info" info
expect_ok "info --json" info --json
expect_ok "bench" "${BQ[@]}" --json
expect_ok "bench --in-dtype bf16" "${BQ[@]}" --in-dtype bf16 --json
if command -v python3 >/dev/null; then
	# The machine-readable outputs must parse, with the documented keys.
	cases=$((cases + 1))
	"$mx" info --json | python3 -c '
import json, sys
info = json.load(sys.stdin)
for key in ("version", "backends", "devices"):
    assert key in info, key
for dev in info["devices"]:
    if "error" not in dev:
        assert len(dev["gemm"]) == 25 and dev["quantize"], dev["name"]
' || fail "info --json: not the documented JSON"
	cases=$((cases + 1))
	"$mx" "${BQ[@]}" --json | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert lines
for line in lines:
    m = json.loads(line)
    for key in ("op", "recipe", "device", "kernel", "m", "n", "k",
                "threads", "seconds", "gbps"):
        assert key in m, key
' || fail "bench --json: not one JSON object per line with the documented keys"
	# The whole suite on tiny shapes: peaks, gemm beside SGEMM, quantize
	# beside memcpy, each line with the keys Documentation/cli.rst lists.
	cases=$((cases + 1))
	"$mx" bench --m 32 --n 32 --k 64 --threads 2 --json | python3 -c '
import json, sys
ops = {}
for line in sys.stdin.read().splitlines():
    m = json.loads(line)
    ops.setdefault(m["op"], []).append(m)
keys = {
    "peak": ("threads", "fma_gflops", "bf16_dot_gflops", "int8_dot_gops",
             "sgemm_core"),
    "gemm": ("recipe", "m", "n", "k", "threads", "gflops", "sgemm_gflops",
             "ratio_vs_sgemm", "peak_gflops", "max_rel_diff_vs_sgemm"),
    "quantize": ("recipe", "m", "n", "k", "threads", "gbps", "memcpy_gbps",
                 "ratio_vs_memcpy"),
}
assert sorted(ops) == sorted(keys), sorted(ops)
assert [m["recipe"] for m in ops["gemm"]] == ["mxfp8", "mxfp4"]
for op, want in keys.items():
    for m in ops[op]:
        for key in want:
            assert key in m, (op, key)
for m in ops["gemm"]:
    assert m["gflops"] > 0 and m["sgemm_gflops"] > 0, m
    assert m["max_rel_diff_vs_sgemm"] < 1e-5, m
for m in ops["quantize"]:
    assert m["gbps"] > 0 and m["memcpy_gbps"] > 0, m
' || fail "bench --json (all): not the documented measurements and keys"
fi

# --- usage ---------------------------------------------------------------
cases=$((cases + 1))
"$mx" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[ "$rc" -eq 2 ] || fail "no arguments: exit status $rc, want 2"
grep -q usage "$tmp/stderr" || fail "no arguments: no usage on stderr"
[ -s "$tmp/stdout" ] && fail "no arguments: wrote to stdout"
for sub in "" info quantize dequantize gemm bench; do
	cases=$((cases + 1))
	# shellcheck disable=SC2086
	"$mx" $sub --help >"$tmp/stdout" 2>"$tmp/stderr" ||
		fail "$sub --help: exit status $?, want 0"
	grep -q "^usage: mxaccel ${sub:-<subcommand>}" "$tmp/stdout" ||
		fail "$sub --help: no usage on stdout"
	[ -s "$tmp/stderr" ] && fail "$sub --help: wrote to stderr"
done
# (`bench` alone runs the whole benchmark, as `info` alone runs.)
for sub in quantize dequantize gemm; do
	cases=$((cases + 1))
	"$mx" $sub >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	[ "$rc" -eq 2 ] || fail "bare $sub: exit status $rc, want 2"
	grep -q "^usage: mxaccel $sub" "$tmp/stderr" ||
		fail "bare $sub: no usage on stderr"
done

# --- subcommands and options -------------------------------------------------
expect_fail "unknown subcommand" "frobnicate|unknown subcommand" frobnicate
expect_fail "unknown option (quantize)" "--bogus" "${Q[@]}" --bogus 1
expect_fail "unknown option (dequantize)" "--bogus" "${D[@]}" --bogus 1
expect_fail "unknown option (gemm)" "--bogus" "${G[@]}" --bogus
expect_fail "unknown option (info)" "--bogus" info --bogus
expect_fail "unknown option (bench)" "--bogus" "${BQ[@]}" --bogus=3
expect_fail "flag with a value" "--json" info --json=yes
expect_fail "stray argument" "extra" info extra
expect_fail "stray argument (gemm)" "stray" "${G[@]}" stray
expect_fail "option given twice" "--rows" "${Q[@]}" --rows 4
drop --rows "${Q[@]}"
expect_fail "option without a value at the end" "--rows" "${args[@]}" --rows
expect_fail "option without a value before another" "--in" \
	quantize --elem e4m3 --mode floor --rows 4 --cols 64 --in \
	--out-data "$out/d" --out-scale "$out/s"

# --- missing required options ---------------------------------------------
for opt in --rows --cols --in --out-data --out-scale --elem --mode; do
	drop "$opt" "${Q[@]}"
	expect_fail "quantize without $opt" "$opt" "${args[@]}"
done
for opt in --elem --rows --cols --data --scale --out; do
	drop "$opt" "${D[@]}"
	expect_fail "dequantize without $opt" "$opt" "${args[@]}"
done
for opt in --m --n --k --a --a-scale --a-elem --b --b-scale --b-elem --out; do
	drop "$opt" "${G[@]}"
	expect_fail "gemm without $opt" "$opt" "${args[@]}"
done
expect_fail "bench --op without a value" "--op" bench --op

# --- numbers -----------------------------------------------------------------
for bad in abc -4 0 1.5 "" 4x " 4" 0x10 99999999999 +4; do
	subst --rows "$bad" "${Q[@]}"
	expect_fail "quantize --rows '$bad'" "--rows|positive integer" "${args[@]}"
done
subst --cols abc "${Q[@]}"
expect_fail "quantize --cols abc" "--cols" "${args[@]}"
subst --rows 0 "${D[@]}"
expect_fail "dequantize --rows 0" "--rows" "${args[@]}"
subst --cols -64 "${D[@]}"
expect_fail "dequantize --cols -64" "--cols" "${args[@]}"
for opt in --m --n --k; do
	subst "$opt" 0 "${G[@]}"
	expect_fail "gemm $opt 0" "$opt" "${args[@]}"
	subst "$opt" x3 "${G[@]}"
	expect_fail "gemm $opt x3" "$opt" "${args[@]}"
done
expect_fail "bench --threads 0" "--threads" "${BQ[@]}" --threads 0
expect_fail "bench --m -1" "--m" bench --op gemm --m -1
expect_fail "bench --n for quantize" "--n" "${BQ[@]}" --n 64
expect_fail "bench --in-dtype for gemm" "--in-dtype|--op quantize" bench --op gemm --m 32 --n 32 --k 64 --in-dtype bf16
expect_fail "bench --in-dtype f16" "--in-dtype|f16" "${BQ[@]}" --in-dtype f16

# --- K a multiple of 32 ---------------------------------------------------------
subst --cols 48 "${Q[@]}"
expect_fail "quantize --cols 48" "--cols 48|multiple of 32" "${args[@]}"
subst --cols 16 "${Q[@]}"
expect_fail "quantize --cols 16" "--cols 16|multiple of 32" "${args[@]}"
subst --cols 40 "${D[@]}"
expect_fail "dequantize --cols 40" "--cols 40|multiple of 32" "${args[@]}"
subst --k 33 "${G[@]}"
expect_fail "gemm --k 33" "--k 33|multiple of 32" "${args[@]}"
expect_fail "bench --k 48" "--k 48|multiple of 32" bench --op gemm --k 48

# --- names -----------------------------------------------------------------------
subst --elem e9m9 "${Q[@]}"
expect_fail "unknown --elem" "--elem|e9m9|e4m3" "${args[@]}"
subst --mode up "${Q[@]}"
expect_fail "unknown --mode" "--mode|up|floor" "${args[@]}"
expect_fail "unknown --recipe" "--recipe|mxfp9|mxfp8" "${Q[@]}" --recipe mxfp9
expect_fail "unknown --scale-layout" "--scale-layout|diagonal|swizzled" \
	"${Q[@]}" --scale-layout diagonal
subst --scale-layout tiled "${D[@]}"
expect_fail "unknown --scale-layout (dequantize)" "--scale-layout" "${args[@]}"
expect_fail "unknown --in-dtype" "--in-dtype|f16|bf16" "${Q[@]}" --in-dtype f16
expect_fail "unknown --out-dtype (dequantize)" "--out-dtype|f64" \
	"${D[@]}" --out-dtype f64
expect_fail "unknown --out-dtype (gemm)" "--out-dtype|fp8" "${G[@]}" --out-dtype fp8
expect_fail "unknown --kernel" "--kernel|fastest|emulated" "${Q[@]}" --kernel fastest
expect_fail "unknown --kernel (gemm)" "--kernel" "${G[@]}" --kernel cublas
subst --a-elem e4m4 "${G[@]}"
expect_fail "unknown --a-elem" "--a-elem|e4m4" "${args[@]}"
subst --b-elem mxfp8 "${G[@]}"
expect_fail "unknown --b-elem" "--b-elem|mxfp8" "${args[@]}"
expect_fail "malformed --device" "--device|gpu:zero" "${Q[@]}" --device gpu:zero
expect_fail "absent --device" "--device|cuda:7" "${D[@]}" --device cuda:7
expect_fail "absent --device (gemm)" "--device|accel:99" "${G[@]}" --device accel:99
expect_fail "absent --device (bench)" "--device|accel:99" "${BQ[@]}" --device accel:99
expect_fail "unknown MXACCEL_DEVICE" "MXACCEL_DEVICE|nowhere:0" \
	MXACCEL_DEVICE=nowhere:0 "${Q[@]}"
expect_fail "unknown MXACCEL_KERNEL" "MXACCEL_KERNEL" \
	MXACCEL_KERNEL=nosuchkernel "${G[@]}"
expect_fail "unknown bench --op" "--op|conv" bench --op conv
expect_fail "unknown bench --recipe" "--recipe|nope" "${BQ[@]}" --recipe nope

# --- recipes ---------------------------------------------------------------------
subst --elem e5m2 "${Q[@]}"
expect_fail "--recipe against --elem" "--recipe|--elem|e5m2" "${args[@]}" --recipe mxfp8
expect_fail "--recipe against --mode" "--recipe|--mode|floor" \
	"${Q[@]}" --recipe mxfp8_rceil
drop --mode "${Q[@]}"
expect_fail "--elem without --mode" "--mode" "${args[@]}"

# --- unreadable inputs -------------------------------------------------------------
subst --in "$tmp/nonexistent.f32" "${Q[@]}"
expect_fail "quantize --in missing" "--in|$tmp/nonexistent.f32" "${args[@]}"
subst --in "$in" "${Q[@]}"
expect_fail "quantize --in a directory" "--in|$in" "${args[@]}"
for opt in --data --scale; do
	subst "$opt" "$tmp/nonexistent" "${D[@]}"
	expect_fail "dequantize $opt missing" "$opt|$tmp/nonexistent" "${args[@]}"
done
for opt in --a --a-scale --b --b-scale; do
	subst "$opt" "$tmp/nonexistent" "${G[@]}"
	expect_fail "gemm $opt missing" "$opt|$tmp/nonexistent" "${args[@]}"
done
expect_fail "gemm --c-in missing" "--c-in|$tmp/nonexistent" \
	"${G[@]}" --c-in "$tmp/nonexistent"
if [ "$(id -u)" -ne 0 ]; then
	cp "$in/q.f32" "$in/noread"
	chmod 000 "$in/noread"
	subst --in "$in/noread" "${Q[@]}"
	expect_fail "quantize --in unreadable" "--in|noread" "${args[@]}"
else
	echo "# skip: permission-denied input (root reads anything)"
fi

# --- input sizes: one byte short, one byte long, empty ------------------------------
# size_case WHAT OPT FILE EXPECTED_BYTES ARRAY...
size_case() {
	local what=$1 opt=$2 file=$3 want=$4
	shift 4
	subst "$opt" "$in/$file.short" "$@"
	expect_fail "$what $opt too small" "$opt|expected $want" "${args[@]}"
	subst "$opt" "$in/$file.long" "$@"
	expect_fail "$what $opt too large" "$opt|expected $want" "${args[@]}"
	subst "$opt" "$in/empty" "$@"
	expect_fail "$what $opt empty" "$opt|expected $want" "${args[@]}"
}
size_case quantize --in q.f32 1024 "${Q[@]}"
size_case dequantize --data d.e4m3 256 "${D[@]}"
size_case dequantize --scale s.plain 8 "${D[@]}"
size_case gemm --a a 192 "${G[@]}"
size_case gemm --a-scale as 6 "${G[@]}"
size_case gemm --b b 320 "${G[@]}"
size_case gemm --b-scale bs 10 "${G[@]}"
size_case gemm --c-in c.f32 60 "${G[@]}" --c-in "$in/c.f32"
subst --out-dtype bf16 "${G[@]}"
size_case "gemm bf16" --c-in c.bf16 30 "${args[@]}" --c-in "$in/c.bf16"
# A right-sized file for another shape or type is still the wrong file.
expect_fail "quantize bf16 given an f32 file" "--in|expected 512" \
	"${Q[@]}" --in-dtype bf16
subst --in "$in/q.bf16" "${Q[@]}"
expect_fail "quantize f32 given a bf16 file" "--in|expected 1024" "${args[@]}"
subst --elem e2m1 "${D[@]}"
expect_fail "dequantize e2m1 given e4m3 codes" "--data|expected 128" "${args[@]}"
expect_fail "dequantize swizzled given plain scales" "--scale|expected 512" \
	"${D[@]}" --scale-layout swizzled
expect_fail "gemm swizzled given plain scales" "--a-scale|expected 512" \
	"${G[@]}" --scale-layout swizzled
subst --a-elem e2m1 "${G[@]}"
expect_fail "gemm --a-elem e2m1 given e4m3 codes" "--a|expected 96" "${args[@]}"
expect_fail "gemm f32 --c-in given bf16 C" "--c-in|expected 60" \
	"${G[@]}" --c-in "$in/c.bf16"

# --- NATIVE preference the device cannot honour ------------------------------------
# Ask the library (through info --json) for an operation without a native
# kernel on the default device; when every operation is native there is no
# such case to test.
native_case=$("$mx" info --json | python3 -c '
import json, sys
info = json.load(sys.stdin)
dev = next((d for d in info["devices"]
            if d.get("name") == info.get("default_device")), None)
if dev is None:
    sys.exit(0)
for g in dev.get("gemm", []):
    if g["native"]["support"] != "native":
        print("gemm", g["a"], g["b"])
        sys.exit(0)
# (E8M0 recipes only: the CLI takes no other scale type yet.)
for q in dev.get("quantize", []):
    if q.get("scale_type", "e8m0") != "e8m0":
        continue
    if q["native"]["support"] != "native":
        print("quantize", q["elem"], q["mode"])
        sys.exit(0)
for q in dev.get("dequantize", []):
    if q["native"]["support"] != "native":
        print("dequantize", q["elem"])
        sys.exit(0)
' 2>/dev/null)
if [ -z "$native_case" ]; then
	echo "# skip: --kernel native refused: every operation has a native kernel on the default device"
else
	read -r op e1 e2 <<<"$native_case"
	case $op in
	gemm)
		zeros "$in/na" $((3 * 64))
		zeros "$in/nb" $((5 * 64))
		[ "$e1" = e2m1 ] && zeros "$in/na" $((3 * 32))
		[ "$e2" = e2m1 ] && zeros "$in/nb" $((5 * 32))
		subst --a "$in/na" "${G[@]}"
		subst --b "$in/nb" "${args[@]}"
		subst --a-elem "$e1" "${args[@]}"
		subst --b-elem "$e2" "${args[@]}"
		;;
	quantize)
		subst --elem "$e1" "${Q[@]}"
		subst --mode "$e2" "${args[@]}"
		;;
	dequantize)
		zeros "$in/nd" 256
		[ "$e1" = e2m1 ] && zeros "$in/nd" 128
		subst --elem "$e1" "${D[@]}"
		subst --data "$in/nd" "${args[@]}"
		;;
	esac
	expect_fail "--kernel native for $native_case" "--kernel native" \
		"${args[@]}" --kernel native
fi

# --- outputs -------------------------------------------------------------------------
subst --out-data "$tmp/nodir/d" "${Q[@]}"
expect_fail "quantize --out-data in a missing directory" "--out-data|$tmp/nodir/d" \
	"${args[@]}"
subst --out-scale "$tmp/nodir/s" "${Q[@]}"
expect_fail "quantize --out-scale in a missing directory (data was fine)" \
	"--out-scale|$tmp/nodir/s" "${args[@]}"
subst --out-scale "$out/d" "${Q[@]}"
expect_fail "quantize --out-data = --out-scale" "--out-scale|$out/d" "${args[@]}"
subst --out "$tmp/nodir/c" "${D[@]}"
expect_fail "dequantize --out in a missing directory" "--out|$tmp/nodir/c" "${args[@]}"
subst --out "$tmp/nodir/c" "${G[@]}"
expect_fail "gemm --out in a missing directory" "--out|$tmp/nodir/c" "${args[@]}"
subst --out "$in" "${G[@]}"
expect_fail "gemm --out a directory" "--out|$in" "${args[@]}"
subst --out "$out/" "${D[@]}"
expect_fail "dequantize --out ending in /" "--out" "${args[@]}"
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$tmp/ro"
	chmod 555 "$tmp/ro"
	subst --out "$tmp/ro/c" "${D[@]}"
	expect_fail "dequantize --out in a read-only directory" "--out|$tmp/ro/c" \
		"${args[@]}"
	[ -z "$(ls -A "$tmp/ro")" ] || fail "read-only directory: files appeared"
elif [ -d /proc/self ]; then
	# root may write any directory; /proc refuses new files even to root
	subst --out "/proc/mxaccel-test-$$" "${G[@]}"
	expect_fail "gemm --out in a directory that refuses files" \
		"--out|/proc/mxaccel-test-$$" "${args[@]}"
fi

# A failed command leaves an existing output exactly as it was.
cases=$((cases + 1))
rm -rf "$out"
mkdir "$out"
echo old >"$out/c"
subst --scale "$in/s.plain.long" "${D[@]}"
"$mx" "${args[@]}" 2>/dev/null
rc=$?
[ "$rc" -eq 2 ] || fail "overwrite: exit status $rc, want 2"
[ "$(cat "$out/c")" = old ] || fail "overwrite: the old output was changed"
[ "$(ls -A "$out")" = c ] || fail "overwrite: left files behind: $(ls -A "$out")"

echo "$cases cases, $failures failure(s)"
[ "$failures" -eq 0 ] || exit 1
exit 0
