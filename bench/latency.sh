#!/usr/bin/env bash
# How fast `runner check` answers on a GPU machine (issues 13 and 35), in one call on the device:
# warm `check --solution` for all twelve puzzles and a failing learner kernel of 09 and 11 (median
# of 5 wall-clock runs, after one run that fills the caches: compiled kernels, full-scale
# references, the workers' resident cases), the first check after the workers start, an endless
# loop with the default 10 s limit, the mixed class of 19 puzzle-04 submissions (bench/class04)
# graded on `auto`, the device memory the workers hold and whether it is freed after their idle
# minute (with IDLE_CHECK=1), and the GPU tests. Run from the repository root with the release runner and the GPU
# test binaries carried:
#   RUNNER=.bench/gpu/runner GPU_TESTS=".bench/gpu/runner-it .bench/gpu/conformance-it" bash bench/latency.sh
# (the binaries `bash bench/gpu_suite.sh pack` makes; `--ignored` runs their GPU tests)
# On the device machine ($OUT set) everything it prints is also written to $OUT/latency.txt, so
# the whole table comes back, not only the end of the output. CONV_WORKBOOK_TRACE=1 on a single
# `runner check` shows where its seconds go.
set -u
if [ -n "${OUT:-}" ]; then exec > >(tee "$OUT/latency.txt") 2>&1; fi
R=${RUNNER:-target/release/runner}
now() { date +%s.%N; }
workers() { pgrep -f 'gpu-worker --socket' | tr '\n' ' '; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$R bench puzzle-04 --solution --runs 20 > /dev/null   # measures and caches the peaks once
timed() { # label, then the check's arguments: median, min and max of 5 after a warm-up
  local label=$1; shift
  $R check "$@" > /dev/null 2>&1
  local times=() line
  for n in 1 2 3 4 5; do
    t0=$(now); line=$($R check "$@" 2>&1 | grep -E '^(✓|✗)' | head -1); t1=$(now)
    times+=("$(awk "BEGIN{print $t1 - $t0}")")
  done
  local sorted=($(printf '%s\n' "${times[@]}" | sort -g))
  printf '%-16s %8.3f %8.3f %8.3f  %s\n' "$label" "${sorted[2]}" "${sorted[0]}" "${sorted[4]}" "$line"
}
printf '%-16s %8s %8s %8s  %s\n' check median min max "verdict"
for p in 01 02 03 04 05 06 07 08 09 10 11 12; do
  timed puzzle-$p puzzle-$p --solution
done
timed "09 failing" puzzle-09 --kernel runner/tests/fixtures/broken2d/p09_skipped_tap.cu
timed "11 failing" puzzle-11 --kernel runner/tests/fixtures/broken_igemm/p11_skipped_channel.cu
timed "11 sim only" puzzle-11 --solution --backend sim
echo "=== device memory held by the workers (MiB, per process)"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
echo "=== the first check after the workers start (their processes ended: $(workers))"
for pid in $(workers); do kill "$pid"; done
sleep 1
for p in 09 11; do
  t0=$(now); $R check puzzle-$p --solution | grep -E '^(✓|✗)'; t1=$(now)
  echo "puzzle-$p first check: $(awk "BEGIN{print $t1 - $t0}") s"
done
echo "=== an endless loop (puzzle-01, default limit 10 s)"
t0=$(now); $R check puzzle-01 --kernel runner/tests/fixtures/endless.cu | grep -E '^(✗|timeout)'; t1=$(now)
echo "took $(awk "BEGIN{print $t1 - $t0}") s"
echo "=== the mixed class of 19 (bench/class04) on auto"
t0=$(now); $R grade puzzle-04 bench/class04 --backend auto --out /tmp/class04 | tail -21; t1=$(now)
echo "took $(awk "BEGIN{print $t1 - $t0}") s"
if [ -n "${GPU_TESTS:-}" ]; then
  echo "=== GPU tests"
  for t in $GPU_TESTS; do
    RUNNER_BIN=$R WORKBOOK_ROOT=. $t --ignored --test-threads 1 2>&1 | grep -E '^test |test result|panicked'
  done
fi
if [ -n "${IDLE_CHECK:-}" ]; then
  echo "=== 62 s idle: workers left ($(workers)) and device memory held"
  sleep 62
  echo "workers: [$(workers)]"
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
fi
