#!/usr/bin/env bash
# GPU verification in one call (run on the device machine from the repo root, with the release
# binary carried): every solution checked on sim + gpu with the bit-for-bit comparison, the
# skeletons failing on the GPU, broken fixtures on the GPU, and runner bench on puzzles 04-12
# (puzzles 09 and 10 have more in bench/verify2d.sh).
set -u
R=${RUNNER:-target/release/runner}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for p in 01 02 03 04 05 06 07 08 09 10 11 12; do
  echo "=== check puzzle-$p --solution (auto: sim + gpu)"
  $R check puzzle-$p --solution --json > "$OUT/check-$p.json"; echo "exit $?"
  python3 - "$OUT/check-$p.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("passed:", o["passed"], "backends:", o["backends"], "agreement:", o.get("backend_agreement"))
for c in o["cases"]:
    if not c["passed"]: print("  FAILED", c["name"], c["backend"])
for d in o["diagnostics"]: print("  ", d["kind"], d["message"][:200])
PY
done
for p in 01 04 08 11 12; do echo "=== skeleton puzzle-$p on gpu"; $R check puzzle-$p --backend gpu | head -12; done
for f in ${FIXTURES:-runner/tests/fixtures/*.cu}; do
  echo "=== fixture $f on gpu"; timeout 120 $R check puzzle-01 --kernel "$f" --backend gpu --timeout 3 | grep -E "^(✓|✗|[a-z_]+:)" | head -4
done
for p in 04 05 06 07 08 11 12; do echo "=== bench puzzle-$p"; $R bench puzzle-$p --solution; done
$R bench puzzle-08 --solution --json > "$OUT/bench-08.json"
