#!/usr/bin/env bash
# How fast `runner check` answers on a GPU machine (issue 13), in one call on the device:
# warm `check --solution` for every puzzle (median of 5 wall-clock runs, after one run that fills
# the caches: compiled kernels, full-scale references, the device's peaks), an endless loop with
# the default 10 s limit, and the GPU tests (which grade 20 submissions on one worker and recover
# from a fault inside one `watch` session). Run from the repository root with the release runner
# and the gpu test binary carried:
#   RUNNER=.bench/runner GPU_TESTS=.bench/gpu-tests bash bench/latency.sh
set -u
R=${RUNNER:-target/release/runner}
now() { date +%s.%N; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$R bench puzzle-04 --solution --runs 20 > /dev/null   # measures and caches the peaks once
printf '%-10s %8s %8s %8s  %s\n' puzzle median min max "pass line"
for p in 01 02 03 04 05 06 07 08; do
  $R check puzzle-$p --solution > /dev/null            # warm-up: caches filled
  times=()
  for n in 1 2 3 4 5; do
    t0=$(now); line=$($R check puzzle-$p --solution | grep -E '✓|✗|case full|case large' | tr '\n' ' '); t1=$(now)
    times+=("$(awk "BEGIN{print $t1 - $t0}")")
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -g))
  printf '%-10s %8.3f %8.3f %8.3f  %s\n' puzzle-$p "${sorted[2]}" "${sorted[0]}" "${sorted[4]}" "$line"
done
echo "=== an endless loop (puzzle-01, default limit 10 s)"
t0=$(now); $R check puzzle-01 --kernel runner/tests/fixtures/endless.cu | grep -E '^(✗|timeout|  -->)'; t1=$(now)
echo "took $(awk "BEGIN{print $t1 - $t0}") s"
echo "=== a worker's start (NVRTC loaded, CUDA context created, hello), three times"
for n in 1 2 3; do
  t0=$(now); $R gpu-worker < /dev/null > /dev/null; t1=$(now); echo "$(awk "BEGIN{print $t1 - $t0}") s"
done
echo "=== an illegal address on the GPU only (every case on a fresh worker)"
t0=$(now); $R check puzzle-01 --kernel runner/tests/fixtures/no_guard_far.cu --backend gpu | grep -cE 'launch_error'; t1=$(now)
echo "took $(awk "BEGIN{print $t1 - $t0}") s"
if [ -n "${GPU_TESTS:-}" ]; then
  echo "=== GPU tests"
  RUNNER_BIN=$R WORKBOOK_ROOT=. $GPU_TESTS --ignored --test-threads 1 --nocapture 2>&1 | grep -E '^test |graded|test result|panicked|took'
fi
