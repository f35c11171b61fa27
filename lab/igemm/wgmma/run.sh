#!/usr/bin/env bash
# Device: builds the wgmma variants (sm_90a) and the mma.sync solution, checks them on odd shapes,
# times them on the three full shapes (../tune.cu), then cuDNN's anchors in the same call.
# Usage: [VARIANTS="name[@file]:flags|..."] (file: a kernel source here, wgmma.cu unless named) [NCU="names"] [NCU_METRICS=a,b] [NCU_ARGS=...] [ANCHORS=0]
#   bash lab/igemm/wgmma/run.sh $OUT
set -u
OUT=${1:-/tmp/out}; mkdir -p $OUT
ROOT=$PWD # the repository root
cd "$(dirname "$0")"
B=/tmp/wg; mkdir -p $B
ARCH="-gencode=arch=compute_90a,code=sm_90a"
# VARIANTS: name:flags entries separated by |
IFS="|" read -ra VARIANTS <<< "${VARIANTS:-t128mb2ca:-DGROUP=0 -DFIRST=1 -DBUSY=0 -DTILE=128 -DMIN_BLOCKS=2|t128mb2cg:-DGROUP=0 -DFIRST=1 -DBUSY=0 -DTILE=128 -DMIN_BLOCKS=2 -DWCG=1|t128mb2ca-s2:-DGROUP=0 -DFIRST=1 -DBUSY=0 -DTILE=128 -DMIN_BLOCKS=2 -DSTAGES=2}"
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}; flags=${v#*:}; src=wgmma.cu
  [[ $name == *@* ]] && { src=${name#*@}; name=${name%%@*}; }
  ( eval nvcc -O3 $ARCH $flags -DSOLUTION='\"wgmma/$src\"' -Xptxas -v -o $B/$name ../tune.cu > $B/$name.log 2>&1 || { echo "$name: build failed"; head -30 $B/$name.log; }
    eval nvcc -O3 $ARCH $flags -DSOLUTION='\"$src\"' -o $B/$name-check check.cu > $B/$name-check.log 2>&1 || echo "$name check: build failed" ) &
done
( nvcc -O3 -arch=sm_90 -o $B/solution $ROOT/lab/igemm/tune.cu > $B/solution.log 2>&1 ) &
wait
cp $B/*.log $OUT/ 2>/dev/null
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}; name=${name%%@*}
  grep -h "C75[0-9]*" $B/$name.log | head -2
  grep -A3 "entry function 'conv2d_nhwc'" $B/$name.log | grep -o "Used [0-9]* registers.*" | head -1 | sed "s/^/$name: /"
  grep -i "spill\|warn\|Loss" $B/$name.log | grep -v " 0 bytes spill" | head -4
  [ -x $B/$name-check ] && timeout 60 $B/$name-check $name | grep -v ": ok "
done
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}; name=${name%%@*}
  [ -x $B/$name ] && timeout 60 $B/$name $name
done
[ -x $B/solution ] && $B/solution mma.sync-solution
[ "${ANCHORS:-1}" = 1 ] && python3 $ROOT/bench/igemm_anchors.py --json $OUT/anchors.json
if [ -n "${NCU:-}" ]; then
  for n in $NCU; do
    ncu -k conv2d_nhwc --launch-skip 113 -c 1 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio${NCU_METRICS:+,$NCU_METRICS} ${NCU_ARGS:-} $B/$n $n > $OUT/ncu-$n.txt 2>&1
    grep -E "stalled|Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Hit Rate|Achieved Occ|Theoretical Occ|Block Limit" $OUT/ncu-$n.txt | head -60
  done
fi
