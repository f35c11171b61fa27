#!/usr/bin/env bash
# Device: puzzle 11's solution built for sm_90 (its mma.sync path) and for sm_90a (its Hopper
# path, wgmma), each checked on odd shapes (check.cu) and timed on the three full shapes
# (../tune.cu), then cuDNN's anchors in the same call.
# Usage (repository root): bash lab/igemm/wgmma/final.sh $OUT [solution file]
set -u
OUT=${1:-/tmp/out}; mkdir -p $OUT
ROOT=$PWD
SOL=$(realpath ${2:-solutions/puzzle-11.cu})
cd "$(dirname "$0")"
B=/tmp/wgf; mkdir -p $B
S="-DSOLUTION=\"$SOL\""
nvcc -O3 -arch=sm_90 "$S" -o $B/mma ../tune.cu > $B/mma.log 2>&1 &
nvcc -O3 -arch=sm_90 "$S" -o $B/mma-check check.cu > $B/mma-check.log 2>&1 &
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a "$S" -Xptxas -v -o $B/hopper ../tune.cu > $B/hopper.log 2>&1 &
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a "$S" -o $B/hopper-check check.cu > $B/hopper-check.log 2>&1 &
wait
cp $B/*.log $OUT/
grep -A3 "entry function 'conv2d_nhwc'" $B/hopper.log | grep -o "Used [0-9]* registers.*"
grep -i "spill\|warn\|Loss" $B/hopper.log | grep -v " 0 bytes spill"
for n in mma hopper; do
  [ -x $B/$n-check ] && $B/$n-check $n | grep -v ": ok " || echo "$n-check: not built"
done
for n in mma hopper; do
  [ -x $B/$n ] && $B/$n $n-solution || echo "$n: not built"
done
python3 $ROOT/bench/igemm_anchors.py --json $OUT/anchors.json
