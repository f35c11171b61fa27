#!/usr/bin/env bash
# The last device call of round 5, from a folder DIR holding harness2d, runner (stripped), cand/
# (candidates.sh's files), pick10.py and root/ (a copy of the workbook tree): the harness over the
# candidates, puzzle 10's pick copied into root/solutions, then `runner check` (sim + gpu) of both
# solutions, `runner bench puzzle-10 --solution` (which also times puzzle 09's solution), the anchors
# (cuDNN, the seed's Triton) and ncu on the pick. Usage on the device: DIR=. OUT=dir final-device.sh
# (CHECK=10 checks puzzle 10 only; NCU_SHAPES= skips ncu; ANCHORS=0 skips the anchors.)
set -u
DIR=${DIR:-.}
OUT=${OUT:-/tmp/out}
cd "$DIR"
mkdir -p "$OUT" /tmp/cand
cp cand/*.cu /tmp/cand/
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
timeout 120 ./harness2d > "$OUT/harness.txt" 2>&1; echo "harness exit $?"
sed -n '/=== table/,$p' "$OUT/harness.txt"
pick=$(python3 pick10.py "$OUT/harness.txt")
echo "pick: $pick"
cp "cand/$pick" root/solutions/puzzle-10.cu
for p in ${CHECK:-09 10}; do
    echo "=== check puzzle-$p --solution (sim + gpu)"
    timeout 150 ./runner --root root check puzzle-$p --solution --json > "$OUT/check-$p.json"; echo "exit $?"
    python3 - "$OUT/check-$p.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("passed:", o["passed"], "backends:", o["backends"], "agreement:", o.get("backend_agreement"))
for c in o["cases"]:
    print(f"  {c['backend']} {c['name']}: {'ok' if c['passed'] else 'FAILED'} {c['seconds']*1e3:.1f} ms")
for d in o["diagnostics"]: print("  ", d["kind"], d["message"][:300])
PY
done
echo "=== bench puzzle-10"
timeout 150 ./runner --root root bench puzzle-10 --solution --runs 50 | tee "$OUT/bench-10.txt"
if [ "${ANCHORS:-1}" = 1 ]; then
    echo "=== anchors"
    PYTHONUNBUFFERED=1 timeout 120 python3 root/bench/conv2d_anchors.py --json "$OUT/anchors.json"
fi
name=p10-cand-${pick%.cu}
for k in ${NCU_SHAPES-3 15}; do
    echo "=== ncu $name 4096x4096 ${k}x$k"
    timeout 60 ncu --clock-control none -k regex:conv2d --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section SchedulerStats ./harness2d --once "$name" 4096 $k 2>&1 \
        | grep -vE "^==PROF==|^\s*$|^\s+-{5}"
done > "$OUT/ncu.txt"
} 2>&1 | tee "$OUT/log.txt"
