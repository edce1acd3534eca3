#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cut the compact NVFP4 golden subset kept in the repository out of the
full torchao set (../shared/testdata/nvfp4_golden: 77 tensors of 8 x 64
fp32, 32 blocks of 16 each).

Whole tensors are kept, because two-level scaling has one per-tensor
scale per tensor.  Tensors are chosen greedily so that every kind of
block the full set has appears (NaN and Inf inputs, all-zero blocks, fp32
subnormal inputs, block scales clamped to e4m3's smallest normal or to
448, NaN scales, the largest and smallest per-tensor scales), then the
first tensors fill up to TENSORS.  Deterministic; same file names and
layout as the full set, so one reader serves both.

Usage: tests/data/make_nvfp4_subset.py [SRC_DIR [DST_DIR]]
Standard library only.
"""

import os
import struct
import sys

BLOCK, PER_TENSOR, TENSORS = 16, 32, 6
FILES = {  # name: bytes per block (tensor_scale_f32.bin is per tensor)
    "input_f32.bin": 64, "single_data.bin": 8, "single_scale.bin": 1,
    "single_deq_f32.bin": 64, "two_data.bin": 8, "two_scale.bin": 1,
    "two_deq_f32.bin": 64,
}


def kinds(words, ss, ts):
    k = set()
    if any((w & 0x7fffffff) > 0x7f800000 for w in words):
        k.add("nan")
    if any((w & 0x7fffffff) == 0x7f800000 for w in words):
        k.add("inf")
    if all((w & 0x7fffffff) == 0 for w in words):
        k.add("zero")
    if any(0 < (w & 0x7fffffff) < 0x800000 for w in words):
        k.add("subnormal")
    for name, s in (("single", ss), ("two", ts)):
        if s == 0x08:
            k.add(name + "_tiny")
        if s == 0x7e:
            k.add(name + "_max")
        if s & 0x7f == 0x7f:
            k.add(name + "_nan")
    return k


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "../shared/testdata/nvfp4_golden"
    dst = sys.argv[2] if len(sys.argv) > 2 else "tests/data/nvfp4_golden"
    data = {n: open(os.path.join(src, n), "rb").read() for n in FILES}
    tscale = open(os.path.join(src, "tensor_scale_f32.bin"), "rb").read()
    n_tensors = len(tscale) // 4
    tkinds = []
    for t in range(n_tensors):
        k = set()
        for b in range(t * PER_TENSOR, (t + 1) * PER_TENSOR):
            words = struct.unpack_from("<16I", data["input_f32.bin"], b * 64)
            k |= kinds(words, data["single_scale.bin"][b],
                       data["two_scale.bin"][b])
        tkinds.append(k)
    scales = [struct.unpack_from("<f", tscale, 4 * t)[0] for t in range(n_tensors)]
    chosen = [scales.index(max(scales)), scales.index(min(scales))]
    want = set().union(*tkinds)
    have = set().union(*(tkinds[t] for t in chosen))
    while have != want and len(chosen) < TENSORS:
        t = max(range(n_tensors), key=lambda t: (len(tkinds[t] - have), -t))
        chosen.append(t)
        have |= tkinds[t]
    for t in range(n_tensors):
        if len(chosen) >= TENSORS:
            break
        if t not in chosen:
            chosen.append(t)
    chosen = sorted(set(chosen))
    os.makedirs(dst, exist_ok=True)
    for n, per in FILES.items():
        with open(os.path.join(dst, n), "wb") as f:
            for t in chosen:
                f.write(data[n][t * PER_TENSOR * per:(t + 1) * PER_TENSOR * per])
    with open(os.path.join(dst, "tensor_scale_f32.bin"), "wb") as f:
        for t in chosen:
            f.write(tscale[4 * t:4 * t + 4])
    with open(os.path.join(dst, "tensors.txt"), "w") as f:
        f.write("# tensor of the full set, kinds of block it holds\n")
        for t in chosen:
            f.write("%d %s\n" % (t, " ".join(sorted(tkinds[t])) or "-"))
    missing = want - have
    print("%d tensors %s; kinds %s%s" % (len(chosen), chosen, sorted(have),
          "; missing " + str(sorted(missing)) if missing else ""))


main()
