#!/usr/bin/env bash
# Puzzle 12 on the GPU machine: the tensor cores' mma.sync rate (mma_rate.cu), then puzzle 12's
# solution in several shapes, two altered copies of it and puzzle 08's solution, each checked and
# timed by ../tune.sh (conv_tune.cu: 1,500,000 inputs, kernel 2047, median of 30; VERBOSE prints
# every case's largest error against the tolerance).
# - plain-tf32: the two products with a remainder deleted (plain tf32): must fail the checks.
# - one-acc: the remainder products added into the main accumulator instead of their own.
#   ./run.sh            (logs and the tables in ${OUT:-/tmp/p12})
#   ONLY=regex ./run.sh (only the variants whose name matches)
set -u
cd "$(dirname "$0")"
export OUT=${OUT:-/tmp/p12}
mkdir -p "$OUT"
gen=$(mktemp -d)
sol=$(realpath ../../../solutions/puzzle-12.cu)
grep -v 'x\[nu\]\.z, x\[nu\]\.w);\|r0\.z, r8\.z, r0\.w, r8\.w' "$sol" > "$gen/plain.cu"
sed 's/mma(small\[mu\]\[nu\]/mma(acc[mu][nu]/' "$sol" > "$gen/one_acc.cu"
cmp -s "$sol" "$gen/one_acc.cu" && { echo "run.sh: the edits no longer match the solution"; exit 1; }

nvcc -arch=sm_90 -O3 mma_rate.cu -o "$gen/mma_rate" && "$gen/mma_rate" | tee "$OUT/mma_rate.txt"
export VERBOSE=1 VARIANTS="
p12-m2n3-w16p1|12|-DMT=2 -DNT=3 -DWARPS=16 -DPASSES=1
p12-m3n2-w16p1|12|-DMT=3 -DNT=2 -DWARPS=16 -DPASSES=1
p12-m1n6-w16p1|12|-DMT=1 -DNT=6 -DWARPS=16 -DPASSES=1
p12-m2n4-w12p1|12|-DMT=2 -DNT=4 -DWARPS=12 -DPASSES=1
p12-m3n4-w8p1|12|-DMT=3 -DNT=4 -DWARPS=8 -DPASSES=1
p12-m2n3-w8p2|12|-DMT=2 -DNT=3 -DWARPS=8 -DPASSES=2
p12-m2n2-w24p1|12|-DMT=2 -DNT=2 -DWARPS=24 -DPASSES=1
p12-m1n4-w24p1|12|-DMT=1 -DNT=4 -DWARPS=24 -DPASSES=1
p12-m1n3-w16p2|12|-DMT=1 -DNT=3 -DWARPS=16 -DPASSES=2
plain-tf32|12||$gen/plain.cu
one-acc|12||$gen/one_acc.cu
p08|8|
"
../tune.sh
