#!/usr/bin/env bash
# Makes the bundle an instructor uploads to Gradescope: setup.sh and run_autograder at the root of
# the zip, puzzles.conf (the puzzles graded and their points), and the students' copy of the
# workbook written by `runner release` (no solutions: the grader needs none, and a submission
# could not read them if it tried).
#   bash graders/gradescope/make-zip.sh [puzzles.conf] [autograder.zip]
# RUNNER names a built runner; by default the workbook's own is built with cargo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
conf=$(realpath "${1:-$here/../puzzles.conf}")
zip=$(realpath -m "${2:-autograder.zip}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/setup.sh" "$here/run_autograder" "$stage/"
cp "$conf" "$stage/puzzles.conf"
if [ -n "${RUNNER:-}" ]; then
  "$RUNNER" --root "$repo" release "$stage/workbook" > /dev/null
else
  (cd "$repo" && cargo run --quiet --release -p runner -- release "$stage/workbook" > /dev/null)
fi
rm -f "$zip"
(cd "$stage" && python3 -m zipfile -c "$zip" setup.sh run_autograder puzzles.conf workbook)
echo "wrote $zip: upload it as the assignment's autograder (grades: $(grep -v '^#' "$conf" | cut -d' ' -f1 | xargs))"
