#!/usr/bin/env bash
# What the class report adds to `runner grade` for a class of N (default 200) submissions that
# all pass, graded without a GPU (`--backend sim`, so every time in the report is `profile`'s
# prediction). The class is made from bench/class04's passing kernels (correct-*.cu and
# solution.cu), each copy made distinct by a comment naming its student, so that no two texts
# are the same and every submission is predicted (the worst case: identical texts share one).
# From CONV_WORKBOOK_TRACE's phases it prints the grading (the checks, and the predictions made
# beside them), the report (its times, then aggregating and writing report.html), how many
# predictions ran and in which phase, and the wall and CPU time of the whole command. Speed is
# shown here, never asserted by a test (issue 43).
# Run from the repository root after `cargo build --release`:
#   bash bench/class_report_time.sh        (or N=50 RUNNER=path/to/runner bash bench/class_report_time.sh)
set -u
R=${RUNNER:-target/release/runner}
N=${N:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
kernels=(bench/class04/correct-*.cu bench/class04/solution.cu)
for i in $(seq 0 $((N - 1))); do
  f=${kernels[$((i % ${#kernels[@]}))]}
  { cat "$f"; echo "// student $i"; } > "$dir/s$i.cu"
done
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD 2>/dev/null), $R"
t0=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$dir/cpu" env CONV_WORKBOOK_TRACE=1 \
  "$R" grade puzzle-04 "$dir" --backend sim --seed 1 > "$dir/out" 2> "$dir/err"
rc=$?
t1=$(date +%s.%N)
phase() { grep -F "$1" "$dir/err" | awk '{s += $3} END {printf "%.3f", s}'; }
check=$(phase "grade: check every submission")
times=$(phase "grade: the report's times")
page=$(phase "grade: aggregate and write report.html")
# A phase's line is written when it ends: the predictions traced before the checks' line ran
# while grading, the rest in the report.
grading=$(sed -n '1,/grade: check every submission/p' "$dir/err" | grep -c "grade: predict the time of")
all=$(grep -c "grade: predict the time of" "$dir/err")
echo "grade exit status $rc: $(tail -1 "$dir/out" | cut -c1-60)..."
printf 'a class of %d: wall %.1f s, CPU %s s (user, system)\n' "$N" "$(awk "BEGIN{print $t1 - $t0}")" "$(cat "$dir/cpu")"
printf 'grading (checks and predictions): %s s\n' "$check"
printf 'the report: %s s (its times %s s, aggregate and write %s s)\n' \
  "$(awk "BEGIN{print $times + $page}")" "$times" "$page"
printf 'predictions: %d, of which %d while grading and %d in the report\n' "$all" "$grading" $((all - grading))
