#!/usr/bin/env bash
# Makes the bundle an instructor uploads to Gradescope: setup.sh and run_autograder at the root of
# the zip, puzzles.conf (the puzzles graded and their points), and the workbook as committed.
#   bash graders/gradescope/make-zip.sh [puzzles.conf] [autograder.zip]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
conf=$(realpath "${1:-$here/../puzzles.conf}")
zip=$(realpath -m "${2:-autograder.zip}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/setup.sh" "$here/run_autograder" "$stage/"
cp "$conf" "$stage/puzzles.conf"
mkdir "$stage/workbook"
git -C "$repo" archive HEAD | tar -x -C "$stage/workbook"
rm -f "$zip"
(cd "$stage" && python3 -m zipfile -c "$zip" setup.sh run_autograder puzzles.conf workbook)
echo "wrote $zip: upload it as the assignment's autograder (grades: $(grep -v '^#' "$conf" | cut -d' ' -f1 | xargs))"
