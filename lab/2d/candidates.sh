#!/usr/bin/env bash
# Round 5: writes puzzle 10 candidate files (self-contained, as the runner takes them) into DIR:
# the solution with other values of its #defines, candidate A (below), and the
# solutions of HEAD~N (OLD) for the before/after rows. Usage: candidates.sh DIR [OLD_REV]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$1
old=${2:-}
mkdir -p "$dir"
sol=$root/solutions/puzzle-10.cu
def() { sed -E "s/^#define $1 .*/#define $1 $2/"; }
if [ "${ROUND:-5}" = 7 ]; then
    # Round 7: the solution (H8: one numbered batch for regions of at most 8 float4s per thread,
    # warp steps otherwise), H10 (10 per thread: 15 x 15 in one numbered batch too), round 6's
    # solution (C2, REV_C) and round 5's B1 (REV_B with 8 vectors).
    cp "$sol" "$dir/H8.cu"
    def VECTORS 10 < "$sol" > "$dir/H10.cu"
    git -C "$root" show "$REV_C:solutions/puzzle-10.cu" > "$dir/C2.cu"
    git -C "$root" show "$REV_B:solutions/puzzle-10.cu" | def VECTORS 8 > "$dir/B1.cu"
    exit 0
fi
if [ "${ROUND:-5}" = 6 ]; then
    # Round 6: the solution now stages as A0 did (STEPS row groups per warp step); B0 and B1 are
    # round 5's solution (REV_B, its own staging) with 6 and 8 vectors per thread.
    cp "$sol" "$dir/C0.cu"
    def PER_THREAD 23 < "$sol" | def STEPS 3 > "$dir/C1.cu"
    def STEPS 4 < "$sol" > "$dir/C2.cu"
    def PER_THREAD 23 < "$sol" | def STEPS 3 | def MIN_BLOCKS 4 > "$dir/C3.cu"
    def PER_THREAD 21 < "$sol" | def STEPS 3 > "$dir/C4.cu"
    def PER_THREAD 25 < "$sol" | def STEPS 3 > "$dir/C5.cu"
    git -C "$root" show "$REV_B:solutions/puzzle-10.cu" > "$dir/B0.cu"
    def VECTORS 8 < "$dir/B0.cu" > "$dir/B1.cu"
    exit 0
fi
cp "$sol" "$dir/B0.cu"
def VECTORS 8 < "$sol" > "$dir/B1.cu"
def MIN_BLOCKS 4 < "$sol" > "$dir/B2.cu"
def BLOCK_Y 5 < "$sol" | def PER_THREAD 15 | def MIN_BLOCKS 3 > "$dir/B3.cu"
def PER_THREAD 21 < "$sol" | def MIN_BLOCKS 6 > "$dir/B4.cu"
# A0: the solution with round 4's staging (variants/p10_v2.cu's stage(), two steps of 4 rows x 8
# vectors per warp, no division) in place of its own.
python3 - "$sol" "$here/variants/p10_v2.cu" > "$dir/A0.cu" <<'PY'
import sys
fin, v2 = open(sys.argv[1]).read(), open(sys.argv[2]).read()
a, b = fin.index("// ANCHOR: stage"), fin.index("// ANCHOR_END: stage")
stage = v2[v2.index("__device__ __forceinline__ void stage("):v2.index("template <int T>")]
stage = stage.replace("STEPS", "2").replace("VEC_GROUPS", "((TILE_COLS + MAX_K - 1 + 31) / 32)")
stage = stage.replace("WARPS", "(THREADS / 32)")
print((fin[:a] + "// ANCHOR: stage\n" + stage + fin[b:]).replace("#define VECTORS 6\n", ""), end="")
PY
if [ -n "$old" ]; then
    git -C "$root" show "$old:solutions/puzzle-10.cu" > "$dir/old10.cu"
    git -C "$root" show "$old:solutions/puzzle-09.cu" > "$dir/old09.cu"
fi
