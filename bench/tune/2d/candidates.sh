#!/usr/bin/env bash
# Round 5: writes puzzle 10 candidate files (self-contained, as the runner takes them) into DIR:
# the solution with other values of its #defines, candidate A (variants/p10_final_a.cu), and the
# solutions of HEAD~N (OLD) for the before/after rows. Usage: candidates.sh DIR [OLD_REV]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dir=$1
old=${2:-}
mkdir -p "$dir"
sol=$root/solutions/puzzle-10.cu
def() { sed -E "s/^#define $1 .*/#define $1 $2/"; }
cp "$sol" "$dir/B0.cu"
def VECTORS 8 < "$sol" > "$dir/B1.cu"
def MIN_BLOCKS 4 < "$sol" > "$dir/B2.cu"
def BLOCK_Y 5 < "$sol" | def PER_THREAD 15 | def MIN_BLOCKS 3 > "$dir/B3.cu"
def PER_THREAD 21 < "$sol" | def MIN_BLOCKS 6 > "$dir/B4.cu"
cp "$here/variants/p10_final_a.cu" "$dir/A0.cu"
if [ -n "$old" ]; then
    git -C "$root" show "$old:solutions/puzzle-10.cu" > "$dir/old10.cu"
    git -C "$root" show "$old:solutions/puzzle-09.cu" > "$dir/old09.cu"
fi
