#!/usr/bin/env bash
# How long `runner profile --solution` takes at full scale on this machine, for every puzzle:
# the median, min and max of RUNS (default 5) wall-clock runs after one that fills the caches (compiled kernels
# and the full cases' references). No GPU needed. This is the figure a timed test once asserted
# in CI (issue 43): speed is shown here, on a quiet machine, never asserted by a test.
# Run from the repository root after `cargo build --release`:
#   bash bench/profile_time.sh            (or RUNNER=path/to/runner bash bench/profile_time.sh)
set -u
R=${RUNNER:-target/release/runner}
RUNS=${RUNS:-5}
now() { date +%s.%N; }
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-10s %8s %8s %8s  %s\n' profile median min max "sampled"
for p in 01 02 03 04 05 06 07 08 09 10 11 12; do
  $R profile puzzle-$p --solution > /dev/null 2>&1
  times=()
  for n in $(seq "$RUNS"); do
    t0=$(now); out=$($R profile puzzle-$p --solution 2>&1); t1=$(now)
    times+=("$(awk "BEGIN{print $t1 - $t0}")")
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -g))
  line=$(printf '%s\n' "$out" | grep -oE 'simulated [0-9]+ of its blocks' | head -1)
  printf '%-10s %8.2f %8.2f %8.2f  %s\n' "puzzle-$p" "${sorted[$((RUNS / 2))]}" "${sorted[0]}" "${sorted[$((RUNS - 1))]}" "${line:-every block}"
done
