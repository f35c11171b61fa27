#!/usr/bin/env bash
# Writes the GitHub Classroom workflow that grades the puzzles of a puzzles.conf (one test per
# puzzle, worth its points, pass or fail) on GitHub's hosted runners, which have no GPU: the
# simulator runs the kernels. Put its output in the assignment repository (this workbook) as
# .github/workflows/classroom.yml:
#   bash graders/github-classroom/make-workflow.sh [puzzles.conf] > .github/workflows/classroom.yml
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
conf=${1:-$here/../puzzles.conf}
puzzles=$(grep -v '^#' "$conf" | awk 'NF >= 2 { print $1 " " $2 }')
cat <<'YAML'
# Made by graders/github-classroom/make-workflow.sh from graders/puzzles.conf: edit those, not this.
name: Autograding Tests
'on':
- push
- repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
    - name: Checkout code
      uses: actions/checkout@v4
    - name: Cache the runner's build and NVRTC
      uses: actions/cache@v4
      with:
        path: |
          ~/.cargo/registry
          ~/.cargo/git
          target
          ~/.cache/conv-workbook
        key: workbook-${{ runner.os }}-${{ hashFiles('Cargo.lock', 'kernels/**', 'runner/**', 'puzzles/*/src/**') }}
        restore-keys: workbook-${{ runner.os }}-
    - name: Build the runner and install NVRTC
      run: |
        cargo build --release -p runner
        target/release/runner check puzzle-01 --solution --backend sim
YAML
while read -r puzzle points; do
  cat <<YAML
    - name: $puzzle
      id: $puzzle
      uses: classroom-resources/autograding-command-grader@v1
      with:
        test-name: $puzzle
        command: target/release/runner check $puzzle --backend sim
        timeout: 5
        max-score: $points
YAML
done <<< "$puzzles"
echo "    - name: Autograding Reporter"
echo "      uses: classroom-resources/autograding-grading-reporter@v1"
echo "      env:"
while read -r puzzle points; do
  echo "        ${puzzle^^}_RESULTS: \"\${{steps.$puzzle.outputs.result}}\""
done <<< "$puzzles"
echo "      with:"
echo "        runners: $(echo "$puzzles" | cut -d' ' -f1 | paste -sd, -)"
