#!/usr/bin/env bash
# GPU verification of the 2D puzzles in one call (run on the device machine, the release runner
# carried): puzzles 09 and 10's solutions checked on sim + gpu (every case, full scale included,
# with the bit-for-bit comparison), their skeletons and the broken 2D corpus on the GPU, `runner
# bench` on both, and the anchors (cuDNN, the seed's Triton program) measured in the same run.
# Usage: RUNNER=path/to/runner ROOT=workbook/root OUT=dir bench/verify2d.sh
set -u
R=${RUNNER:-target/release/runner}
ROOT=${ROOT:-.}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
run() { "$R" --root "$ROOT" "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for p in 09 10; do
  echo "=== check puzzle-$p --solution (auto: sim + gpu)"
  /usr/bin/time -f "%e s" "$R" --root "$ROOT" check puzzle-$p --solution --json > "$OUT/check-$p.json"
  echo "exit $?"
  python3 - "$OUT/check-$p.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("passed:", o["passed"], "backends:", o["backends"], "agreement:", o.get("backend_agreement"))
for c in o["cases"]:
    print(f"  {c['backend']} {c['name']}: {'ok' if c['passed'] else 'FAILED'} {c['seconds']*1e3:.1f} ms")
for d in o["diagnostics"]: print("  ", d["kind"], d["message"][:300])
PY
  echo "=== skeleton puzzle-$p on gpu"; run check puzzle-$p --backend gpu | grep -E "^(✓|✗|[a-z_]+:)" | head -4
done
for f in "$ROOT"/runner/tests/fixtures/broken2d/p09*.cu; do
  echo "=== $f on gpu"; timeout 300 "$R" --root "$ROOT" check puzzle-09 --kernel "$f" --backend gpu | grep -E "^(✓|✗|[a-z_]+:)" | cut -c1-300 | head -4
done
for f in "$ROOT"/runner/tests/fixtures/broken2d/p10*.cu; do
  echo "=== $f on gpu"; timeout 300 "$R" --root "$ROOT" check puzzle-10 --kernel "$f" --backend gpu | grep -E "^(✓|✗|[a-z_]+:)" | cut -c1-300 | head -4
done
for p in 09 10; do
  echo "=== bench puzzle-$p"; run bench puzzle-$p --solution --runs 50 | tee "$OUT/bench-$p.txt"
done
echo "=== anchors (torch cuDNN, Triton)"
PYTHONUNBUFFERED=1 python3 "$ROOT/bench/conv2d_anchors.py" --json "$OUT/anchors.json"
