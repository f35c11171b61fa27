#!/usr/bin/env bash
# Issue 36's device side of `runner profile` against the corpora, in one call (bench/PROFILE.md):
# runner bench and ncu on every correct kernel of the corpora, the simulator's side staged first.
#   here:   RUNNER=target/release/runner python3 bench/profile_vs_ncu.py --corpus --sim-only sim.json
#   device: SIM=sim.json RUNNER=.../runner ROOT=... bash bench/profile_corpus.sh OUT_DIR
# OUT_DIR receives profile_corpus.{md,json}, the log and ncu's raw CSVs (ncu_raw.tgz).
set -u
OUT=${1:?usage: profile_corpus.sh OUT_DIR}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NO_COLOR=1 NCU_RAW=/tmp/ncu_raw
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
export NCU
mkdir -p "$NCU_RAW"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
"$NCU" --version | tail -1
start=$(date +%s)
timeout "${LIMIT:-420}" python3 "$(dirname "$0")/profile_vs_ncu.py" --corpus --sim "${SIM:-sim.json}" "$OUT" 2>&1 \
    | tee "$OUT/log.txt" | grep -v '^|'
echo "python done after $(($(date +%s) - start)) s"
tar czf "$OUT/ncu_raw.tgz" -C /tmp ncu_raw
cat "$OUT/profile_corpus.md"
