#!/usr/bin/env bash
# Builds and times puzzle 11's solution in several shapes (see tune.cu), in parallel builds.
# Usage (device): bash lab/igemm/tune.sh > $OUT/tune.txt
set -u
cd "$(dirname "$0")"
B=/tmp/igemm; mkdir -p $B
# name: -D flags
# The solution's knobs: its tile (BLOCK_M, BLOCK_N, WARPS_M x WARPS_N warps, STAGES, BLOCK_K),
# MIN_BLOCKS (__launch_bounds__), FAST_TF32 (0: cvt.rna), ROWS (0: im2col tiles only).
# tune.cu's -DSOLUTION='"file"' times another file alike.
VARIANTS=(
  "m128n128w22s2:"
  "m128n128w24s2:-DWARPS_N=4"
  "m128n128w24s3:-DWARPS_N=4 -DSTAGES=3"
  "m128n128w24s2-mb2:-DWARPS_N=4 -DMIN_BLOCKS=2"
  "m128n128w42s2:-DWARPS_M=4"
  "m128n128w42s2-mb2:-DWARPS_M=4 -DMIN_BLOCKS=2"
  "m128n128w44s2:-DWARPS_M=4 -DWARPS_N=4"
)
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}; flags=${v#*:}
  ( eval nvcc -O3 -arch=sm_90 $flags -Xptxas -v -o $B/$name tune.cu > $B/$name.log 2>&1 || { echo "$name: build failed"; head -20 $B/$name.log; } ) &
done
wait
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}
  grep -A2 "entry function 'conv2d_nhwc'" $B/$name.log | grep -o "Used [0-9]* registers.*" | head -1 | sed "s/^/$name: /"
  grep -i "spill" $B/$name.log | grep -v " 0 bytes spill" | head -2
  [ -x $B/$name ] && $B/$name $name
done
