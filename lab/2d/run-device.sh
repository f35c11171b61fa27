#!/usr/bin/env bash
# One device call for the 2D tuning: the harness over every variant (table last), ncu on the
# kernels named in NCU (name:n:k ...), and the anchors script if ANCHORS is set (a path).
# Usage on the device: DIR=folder-with-harness2d OUT=dir lab/2d/run-device.sh
set -u
DIR=${DIR:-.}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 300 "$DIR/harness2d" ${ONLY:+--only "$ONLY"} > "$OUT/harness.txt" 2>&1
echo "harness exit $?" >> "$OUT/harness.txt"
for spec in ${NCU:-}; do
    IFS=: read -r name n k <<< "$spec"
    echo "=== ncu $name ${n}x$n ${k}x$k" >> "$OUT/ncu.txt"
    timeout 120 ncu --clock-control none -k regex:conv2d --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
        "$DIR/harness2d" --once "$name" "$n" "$k" 2>&1 | grep -vE "^==PROF==|^\s*$" >> "$OUT/ncu.txt"
done
if [ -n "${ANCHORS:-}" ]; then
    PYTHONUNBUFFERED=1 timeout 200 python3 "$ANCHORS" --json "$OUT/anchors.json" > "$OUT/anchors.txt" 2>&1
fi
sed -n '/=== table/,$p' "$OUT/harness.txt"
grep -E "FAIL" "$OUT/harness.txt" | head -20
cat "$OUT/anchors.txt" 2>/dev/null
