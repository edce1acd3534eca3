#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The mxaccel CLI on accel:0 (in the test VM), and without it (host).
#
# With a device: `mxaccel info` lists accel:0 with its capabilities;
# `mxaccel gemm`, `quantize` and `dequantize` outputs with --device accel:0
# (AUTO and EMULATED) are byte-identical (cmp) to --device cpu --kernel
# emulated, for every element pair / recipe, plain and swizzled scales,
# fp32 and bf16, with and without --c-in, on random inputs from
# /dev/urandom; NATIVE on accel:0 is refused with a reason; --explain shows
# that auto does not pick the software-engine device and that accel:0 runs
# the device's exact kernel; MXACCEL_DEVICE=accel:0 selects it.
#
# Without a device: `mxaccel info` says why accel is unavailable, and
# --device accel:0 fails naming that reason.
#
# Usage: cli_accel.sh [MXACCEL]    (default: $MXACCEL_CLI, else mxaccel)
# MXACCEL_EXPECT_DEVICE=1 (in the VM) or 0 (host) makes the other case a
# failure instead of choosing the mode from `mxaccel info`.
# POSIX sh: runs under busybox in the VM.  Prints TAP; exits 0 if all pass.

mx=${1:-${MXACCEL_CLI:-mxaccel}}
unset MXACCEL_DEVICE MXACCEL_KERNEL MXACCEL_DEBUG
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}

# check DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# random FILE BYTES: BYTES from /dev/urandom.
random() {
	dd if=/dev/urandom of="$1" bs="$2" count=1 2>/dev/null &&
		[ "$(wc -c <"$1")" -eq "$2" ]
}

# scales FILE BYTES: E8M0 scales near 1 (2^-15..2^16), every tenth file
# raw bytes (NaN, 2^-127, 2^127 and everything between).
scales() {
	random "$1.raw" "$2" || return 1
	if [ "$(od -An -tu1 -N1 "$1.raw")" -lt 26 ]; then
		mv "$1.raw" "$1"
	else
		r='\160-\217'
		tr '\000-\377' "$r$r$r$r$r$r$r$r" <"$1.raw" >"$1"
		rm -f "$1.raw"
	fi
}

# The same command on cpu EMULATED (reference) and on accel:0 under AUTO
# and EMULATED; every output file must be identical.  Outputs are named
# by the caller with the suffix @ (replaced per run).
# same DESCRIPTION OUTPUTS ARGS...
same() {
	what=$1 outs=$2
	shift 2
	bad=
	for run in ref auto emul; do
		case $run in
		ref) dev="--device cpu --kernel emulated" ;;
		auto) dev="--device accel:0" ;;
		emul) dev="--device accel:0 --kernel emulated" ;;
		esac
		args=
		for a in "$@"; do
			# Without a fork per argument: TCG makes forks dear.
			case $a in *@*) a=${a%%@*}.$run${a#*@} ;; esac
			args="$args $a"
		done
		# shellcheck disable=SC2086 # word splitting of args is intended
		if ! "$mx" $args $dev >"$tmp/log.$run" 2>&1; then
			bad="$bad $run failed: $(tail -n 1 "$tmp/log.$run");"
			continue
		fi
		[ "$run" = ref ] && continue
		for o in $outs; do
			cmp -s "$tmp/$o.ref" "$tmp/$o.$run" ||
				bad="$bad $o differs on accel:0 ($run);"
		done
	done
	if [ -z "$bad" ]; then ok "$what"; else not_ok "$what:$bad"; fi
}

data_bytes() { # ELEM ROWS COLS
	case $1 in e2m1) echo $(($2 * $3 / 2)) ;; *) echo $(($2 * $3)) ;; esac
}

scale_bytes() { # LAYOUT ROWS COLS
	case $1 in
	swizzled) echo $((($2 + 127) / 128 * 128 * (($3 / 32 + 3) / 4 * 4))) ;;
	*) echo $(($2 * $3 / 32)) ;;
	esac
}

# --- no device: info explains why ------------------------------------------

host_mode() {
	"$mx" info >"$tmp/info" 2>&1
	check "info runs without an accel device" [ $? -eq 0 ]
	if grep -q '^  accel    unavailable: ..*' "$tmp/info"; then
		ok "info: $(grep '^  accel ' "$tmp/info" | sed 's/^ *//')"
	else
		not_ok "info does not explain why accel is unavailable"
	fi
	random "$tmp/a" 32
	random "$tmp/s" 1
	"$mx" gemm --m 1 --n 1 --k 32 --a "$tmp/a" --a-scale "$tmp/s" \
		--a-elem e4m3 --b "$tmp/a" --b-scale "$tmp/s" --b-elem e4m3 \
		--out "$tmp/c" --device accel:0 >"$tmp/err" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'accel:0.*no such device' "$tmp/err"; then
		ok "gemm --device accel:0 fails: $(head -n 1 "$tmp/err")"
	else
		not_ok "gemm --device accel:0 without a device: exit $rc: $(cat "$tmp/err")"
	fi
}

# --- with a device ------------------------------------------------------------

info_lists_accel() {
	if ! "$mx" info >"$tmp/info" 2>&1; then
		not_ok "mxaccel info failed: $(tail -n 1 "$tmp/info")"
		return
	fi
	sed -n '1,/^device accel:0/p' "$tmp/info" | sed '$d; s/^/# /'
	grep -A 5 '^device accel:0' "$tmp/info" | sed 's/^/# /'
	bad=
	grep -q '^  accel    1 device' "$tmp/info" || bad="$bad no accel backend line;"
	grep -q '^device accel:0 (backend accel): mxaccel software engine' \
		"$tmp/info" || bad="$bad no accel:0 device;"
	grep -q 'conformance device (emulated only, never chosen by auto)' \
		"$tmp/info" || bad="$bad not a conformance device;"
	grep -q '^default device: cpu' "$tmp/info" || bad="$bad default is not cpu;"
	# Its rows: no native kernel, the device's exact kernel otherwise.
	sed -n '/^device accel:0/,$p' "$tmp/info" >"$tmp/info.accel"
	grep -q '^    e4m3 x e2m1  *-  *accel-gemm  *accel-gemm$' \
		"$tmp/info.accel" || bad="$bad gemm row;"
	grep -q '^    mxfp4_rceil  *-  *accel-quantize  *accel-quantize$' \
		"$tmp/info.accel" || bad="$bad quantize row;"
	grep -q '^    e5m2  *-  *accel-dequantize-host  *accel-dequantize-host$' \
		"$tmp/info.accel" || bad="$bad dequantize row;"
	grep -q 'native: accel:0 has no native' "$tmp/info.accel" ||
		bad="$bad no reason for native;"
	if [ -z "$bad" ]; then
		ok "info lists accel:0 with its capabilities"
	else
		not_ok "info:$bad"
	fi
}

gemm_cases() {
	i=0
	# elem-a elem-b m n k layout dtype accumulate
	for c in "e4m3 e4m3 7 5 64 plain f32 0" "e4m3 e2m1 33 17 128 swizzled f32 1" \
		"e5m2 e5m2 3 9 96 plain bf16 1" "e5m2 e3m2 130 3 160 swizzled bf16 0" \
		"e2m3 e4m3 16 16 256 plain f32 1" "e2m3 e2m3 1 1 32 swizzled f32 0" \
		"e3m2 e5m2 9 31 64 plain bf16 0" "e3m2 e2m1 5 5 32 plain f32 1" \
		"e2m1 e2m1 64 48 512 swizzled bf16 1" "e2m1 e2m3 2 129 96 plain f32 0"; do
		# shellcheck disable=SC2086
		set -- $c
		i=$((i + 1))
		ea=$1 eb=$2 m=$3 nn=$4 k=$5 lay=$6 dt=$7 acc=$8
		random "$tmp/a$i" "$(data_bytes "$ea" "$m" "$k")"
		random "$tmp/b$i" "$(data_bytes "$eb" "$nn" "$k")"
		scales "$tmp/as$i" "$(scale_bytes "$lay" "$m" "$k")"
		scales "$tmp/bs$i" "$(scale_bytes "$lay" "$nn" "$k")"
		es=4
		[ "$dt" = bf16 ] && es=2
		cin=
		if [ "$acc" = 1 ]; then
			random "$tmp/cin$i" $((m * nn * es))
			cin="--c-in $tmp/cin$i"
		fi
		same "gemm $ea x $eb ${m}x${nn}x$k $lay $dt${cin:+ accumulate}: accel:0 == cpu emulated" \
			"c$i" gemm --m "$m" --n "$nn" --k "$k" \
			--a "$tmp/a$i" --a-scale "$tmp/as$i" --a-elem "$ea" \
			--b "$tmp/b$i" --b-scale "$tmp/bs$i" --b-elem "$eb" \
			--scale-layout "$lay" --out-dtype "$dt" $cin \
			--out "$tmp/c$i@"
	done
}

quantize_cases() {
	rows=37 cols=192
	random "$tmp/x.f32" $((rows * cols * 4))
	random "$tmp/x.bf16" $((rows * cols * 2))
	# Well-formed values too: a dequantized random MX matrix.
	random "$tmp/xd" $((rows * cols))
	scales "$tmp/xs" $((rows * cols / 32))
	"$mx" dequantize --elem e4m3 --rows $rows --cols $cols \
		--data "$tmp/xd" --scale "$tmp/xs" --out "$tmp/y.f32" \
		--device cpu || not_ok "dequantize for the quantize input"
	for recipe in mxfp8 mxfp8_rceil mxfp8_e5m2 mxfp6_e2m3 mxfp6_e3m2 \
		mxfp4 mxfp4_rceil; do
		for in in x.f32 x.bf16 y.f32; do
			lay=plain
			case $in in x.bf16) lay=swizzled ;; esac
			same "quantize $recipe $in $lay: accel:0 == cpu emulated" \
				"q-$recipe-$in q-$recipe-$in.s" quantize \
				--recipe "$recipe" --rows $rows --cols $cols \
				--in "$tmp/$in" --in-dtype "${in#*.}" \
				--scale-layout $lay \
				--out-data "$tmp/q-$recipe-$in@" \
				--out-scale "$tmp/q-$recipe-$in.s@"
		done
	done
	for e in e4m3 e5m2 e2m3 e3m2 e2m1; do
		random "$tmp/d-$e" "$(data_bytes $e $rows $cols)"
		same "dequantize $e: accel:0 == cpu emulated" "dq-$e" \
			dequantize --elem $e --rows $rows --cols $cols \
			--data "$tmp/d-$e" --scale "$tmp/xs" --out-dtype bf16 \
			--out "$tmp/dq-$e@"
	done
}

native_and_explain() {
	random "$tmp/ea" $((4 * 64))
	random "$tmp/eb" $((3 * 32))
	scales "$tmp/eas" 8
	scales "$tmp/ebs" 6
	set -- gemm --m 4 --n 3 --k 64 --a "$tmp/ea" --a-scale "$tmp/eas" \
		--a-elem e4m3 --b "$tmp/eb" --b-scale "$tmp/ebs" \
		--b-elem e2m1 --out "$tmp/ec"
	if "$mx" "$@" --device accel:0 --kernel native >"$tmp/err" 2>&1; then
		not_ok "gemm --kernel native on accel:0 succeeded"
	elif grep -q 'accel:0 has no native' "$tmp/err"; then
		ok "gemm --kernel native on accel:0 is refused: $(head -n 1 "$tmp/err")"
	else
		not_ok "gemm --kernel native on accel:0: $(cat "$tmp/err")"
	fi

	"$mx" "$@" --device auto --explain >"$tmp/x-auto" 2>&1
	sed 's/^/# auto: /' "$tmp/x-auto"
	if grep -q '^device: cpu$' "$tmp/x-auto"; then
		ok "explain --device auto: the cpu, not the conformance device"
	else
		not_ok "explain --device auto: $(head -n 2 "$tmp/x-auto")"
	fi
	"$mx" "$@" --device accel:0 --explain >"$tmp/x-accel" 2>&1
	sed 's/^/# accel:0: /' "$tmp/x-accel"
	if grep -q '^device: accel:0$' "$tmp/x-accel" &&
		grep -q '^kernel: accel-gemm$' "$tmp/x-accel" &&
		grep -q '^support: emulated$' "$tmp/x-accel" &&
		grep -q '^exact: yes$' "$tmp/x-accel"; then
		ok "explain --device accel:0: accel-gemm, emulated, exact"
	else
		not_ok "explain --device accel:0: $(cat "$tmp/x-accel")"
	fi
	MXACCEL_DEVICE=accel:0 "$mx" "$@" --explain >"$tmp/x-env" 2>&1
	if grep -q '^device: accel:0$' "$tmp/x-env"; then
		ok "MXACCEL_DEVICE=accel:0 selects the device"
	else
		not_ok "MXACCEL_DEVICE=accel:0: $(head -n 2 "$tmp/x-env")"
	fi
}

if ! "$mx" --version >/dev/null 2>&1 && ! "$mx" info >/dev/null 2>&1; then
	echo "Bail out! cannot run $mx"
	exit 1
fi
mode=${MXACCEL_EXPECT_DEVICE:-}
if [ -z "$mode" ]; then
	mode=1
	"$mx" info 2>/dev/null | grep -q '^  accel    unavailable' && mode=0
fi
if [ "$mode" = 0 ]; then
	host_mode
else
	info_lists_accel
	gemm_cases
	quantize_cases
	native_and_explain
fi
echo "1..$n"
[ "$failed" -eq 0 ]
