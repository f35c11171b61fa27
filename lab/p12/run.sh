#!/usr/bin/env bash
# Puzzle 12 on the GPU machine: the tensor cores' mma.sync rate (mma_rate.cu), then puzzle 12's
# solution in several shapes, two altered copies of it and puzzle 08's solution, each checked and
# timed by ../tune.sh (conv_tune.cu: 1,500,000 inputs, kernel 2047, median of 30; VERBOSE prints
# every case's largest error against the tolerance).
# - plain-tf32: the two products with a remainder deleted (plain tf32): must fail the checks.
# - one-acc: the remainder products added into the main accumulator instead of their own.
# - bf16-*: the two remainder products as one bf16 mma.sync m16n8k16 (bf16_cross.py).
#   ./run.sh            (logs and the tables in ${OUT:-/tmp/p12})
#   ONLY=regex ./run.sh (only the variants whose name matches)
set -u
cd "$(dirname "$0")"
export OUT=${OUT:-/tmp/p12}
mkdir -p "$OUT"
gen=$(mktemp -d)
sol=$(realpath ../../solutions/puzzle-12.cu)
grep -v 'x\[nu\]\.z, x\[nu\]\.w);\|r0\.z, r8\.z, r0\.w, r8\.w' "$sol" > "$gen/plain.cu"
sed 's/mma(small\[mu\]\[nu\]/mma(acc[mu][nu]/' "$sol" > "$gen/one_acc.cu"
cmp -s "$sol" "$gen/one_acc.cu" && { echo "run.sh: the edits no longer match the solution"; exit 1; }
python3 bf16_cross.py "$sol" "$gen/bf16.cu" || exit 1

nvcc -arch=sm_90 -O3 mma_rate.cu -o "$gen/mma_rate" && "$gen/mma_rate" | tee "$OUT/mma_rate.txt"
export VERBOSE=1 VARIANTS="
p12-m2n3-w16p1|12|-DMT=2 -DNT=3 -DWARPS=16 -DPASSES=1
p12-m3n2-w16p1|12|-DMT=3 -DNT=2 -DWARPS=16 -DPASSES=1
p12-m2n4-w12p1|12|-DMT=2 -DNT=4 -DWARPS=12 -DPASSES=1
p12-m2n2-w24p1|12|-DMT=2 -DNT=2 -DWARPS=24 -DPASSES=1
p12-m3n4-w8p1|12|-DMT=3 -DNT=4 -DWARPS=8 -DPASSES=1
bf16-m2n3-w16p1|12|-DMT=2 -DNT=3 -DWARPS=16 -DPASSES=1|$gen/bf16.cu
bf16-m3n2-w16p1|12|-DMT=3 -DNT=2 -DWARPS=16 -DPASSES=1|$gen/bf16.cu
bf16-m2n4-w12p1|12|-DMT=2 -DNT=4 -DWARPS=12 -DPASSES=1|$gen/bf16.cu
bf16-m2n2-w24p1|12|-DMT=2 -DNT=2 -DWARPS=24 -DPASSES=1|$gen/bf16.cu
bf16-m3n4-w8p1|12|-DMT=3 -DNT=4 -DWARPS=8 -DPASSES=1|$gen/bf16.cu
plain-tf32|12||$gen/plain.cu
one-acc|12||$gen/one_acc.cu
p08|8|
"
../tune.sh
