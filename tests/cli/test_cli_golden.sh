#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# torchao golden vectors through the CLI, all 5 elements x 4 scale modes:
#   - `mxaccel quantize` of input_f32.bin must reproduce the golden scales
#     and codes bit for bit (cmp);
#   - `mxaccel dequantize` of the golden codes and scales must reproduce
#     deq_f32, NaN compared as "is NaN" (the payload is torchao's business);
#   - quantizing to the swizzled scale layout must put every scale where the
#     128x4 tiling formula (design.md section 3) says, and dequantizing that
#     must give the same values as the plain layout.
#
# Golden directories: tests/data/mx_golden (always), the full set in
# ../shared/testdata/mx_golden when it exists, and $MXACCEL_GOLDEN_DIR.
set -u

. "$(dirname "$0")/lib.sh"
need_python3

# The swizzled scale file holds scale (r, c) of the plain file at
# ((r/128)*(Cp/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4, zero padding.
check_swizzle() {
	python3 - "$1" "$2" "$3" "$4" <<'EOF'
import sys

plain, swz = (open(p, "rb").read() for p in sys.argv[1:3])
rows, blocks = int(sys.argv[3]), int(sys.argv[4])
rp, cp = 128 * ((rows + 127) // 128), 4 * ((blocks + 3) // 4)
want = bytearray(rp * cp)
for r in range(rows):
    for c in range(blocks):
        idx = ((r // 128) * (cp // 4) + c // 4) * 512 + (r % 32) * 16 \
            + ((r % 128) // 32) * 4 + c % 4
        want[idx] = plain[r * blocks + c]
if bytes(want) != swz:
    print("  swizzled scales: %d bytes, want %d; first difference at %s"
          % (len(swz), len(want),
             next((i for i in range(min(len(swz), len(want)))
                   if swz[i] != want[i]), "the end")))
    sys.exit(1)
EOF
}

dirs=(tests/data/mx_golden)
[ -d ../shared/testdata/mx_golden ] && dirs+=(../shared/testdata/mx_golden)
[ -n "${MXACCEL_GOLDEN_DIR:-}" ] && [ -d "$MXACCEL_GOLDEN_DIR" ] &&
	dirs+=("$MXACCEL_GOLDEN_DIR")

for dir in "${dirs[@]}"; do
	if [ ! -f "$dir/input_f32.bin" ]; then
		fail "$dir: no input_f32.bin"
		continue
	fi
	size=$(stat -c %s "$dir/input_f32.bin")
	rows=$((size / 128))
	echo "# $dir: $rows blocks"
	for elem in e4m3 e5m2 e2m3 e3m2 e2m1; do
		for mode in floor rceil ceil even; do
			g=$dir/${elem}_${mode}
			t=$tmp/${elem}_${mode}
			if ! "$mx" quantize --elem "$elem" --mode "$mode" \
				--rows "$rows" --cols 32 --in "$dir/input_f32.bin" \
				--out-data "$t.data" --out-scale "$t.scale"; then
				fail "$g: quantize failed"
				continue
			fi
			cmp -s "$t.scale" "${g}_scale.bin" ||
				fail "$g: quantize scales differ: $(cmp "$t.scale" "${g}_scale.bin" 2>&1)"
			cmp -s "$t.data" "${g}_data.bin" ||
				fail "$g: quantize codes differ: $(cmp "$t.data" "${g}_data.bin" 2>&1)"

			if ! "$mx" dequantize --elem "$elem" --rows "$rows" \
				--cols 32 --data "${g}_data.bin" \
				--scale "${g}_scale.bin" --out "$t.deq"; then
				fail "$g: dequantize failed"
				continue
			fi
			cmp_f32 "$t.deq" "${g}_deq_f32.bin" ||
				fail "$g: dequantize differs from deq_f32"

			if ! "$mx" quantize --elem "$elem" --mode "$mode" \
				--rows "$rows" --cols 32 --in "$dir/input_f32.bin" \
				--out-data "$t.sdata" --out-scale "$t.sscale" \
				--scale-layout swizzled; then
				fail "$g: swizzled quantize failed"
				continue
			fi
			cmp -s "$t.sdata" "$t.data" ||
				fail "$g: swizzled quantize changed the codes"
			check_swizzle "$t.scale" "$t.sscale" "$rows" 1 ||
				fail "$g: swizzled scales misplaced"
			if ! "$mx" dequantize --elem "$elem" --rows "$rows" \
				--cols 32 --data "$t.sdata" --scale "$t.sscale" \
				--scale-layout swizzled --out "$t.sdeq"; then
				fail "$g: swizzled dequantize failed"
				continue
			fi
			cmp_f32 "$t.sdeq" "$t.deq" ||
				fail "$g: swizzled dequantize differs from plain"
			rm -f "$t".*
		done
	done
done

# One multi-block shape, so the swizzle's column tiling (K/32 = 5 blocks,
# padded to 8) is exercised too: the golden input read as 5-block rows.
dir=${dirs[0]}
rows=$(($(stat -c %s "$dir/input_f32.bin") / 640))
head -c $((rows * 640)) "$dir/input_f32.bin" >"$tmp/in5"
for elem in e4m3 e2m1; do
	t=$tmp/k160_$elem
	if "$mx" quantize --elem "$elem" --mode floor --rows "$rows" --cols 160 \
		--in "$tmp/in5" --out-data "$t.data" --out-scale "$t.scale" &&
	   "$mx" quantize --elem "$elem" --mode floor --rows "$rows" --cols 160 \
		--in "$tmp/in5" --out-data "$t.sdata" --out-scale "$t.sscale" \
		--scale-layout swizzled &&
	   "$mx" dequantize --elem "$elem" --rows "$rows" --cols 160 \
		--data "$t.data" --scale "$t.scale" --out "$t.deq" &&
	   "$mx" dequantize --elem "$elem" --rows "$rows" --cols 160 \
		--data "$t.sdata" --scale "$t.sscale" --scale-layout swizzled \
		--out "$t.sdeq"; then
		check_swizzle "$t.scale" "$t.sscale" "$rows" 5 ||
			fail "$elem K=160: swizzled scales misplaced"
		cmp_f32 "$t.sdeq" "$t.deq" ||
			fail "$elem K=160: swizzled dequantize differs from plain"
	else
		fail "$elem K=160: a command failed"
	fi
done

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all golden combinations match"
exit 0
