#!/usr/bin/env bash
# Writes the GitHub Classroom workflow that grades the puzzles of a puzzles.conf (one test per
# puzzle, worth its points, pass or fail) on GitHub's hosted runners, which have no GPU: the
# simulator runs the kernels. Put its output in the assignment's template repository (the
# students' copy that `runner release` writes):
#   mkdir -p .github/workflows
#   bash graders/github-classroom/make-workflow.sh [puzzles.conf] > .github/workflows/classroom.yml
# The build and NVRTC are cached: restored first, saved right after the build, before any test
# runs, so a push whose tests fail still leaves a warm cache for the next one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
conf=${1:-$here/../puzzles.conf}
puzzles=$(grep -v '^#' "$conf" | awk 'NF >= 2 { print $1 " " $2 }')
cat <<YAML
# Made by graders/github-classroom/make-workflow.sh from $(basename "$conf"): edit that, not this.
YAML
cat <<'YAML'
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
      uses: actions/checkout@v5
    - name: Restore the runner's build and NVRTC
      id: cache
      uses: actions/cache/restore@v5
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
        target/release/runner list > /dev/null
        target/release/runner check puzzle-01 --backend sim > /dev/null || true
    - name: Save the build and NVRTC for the next push
      if: steps.cache.outputs.cache-hit != 'true'
      uses: actions/cache/save@v5
      with:
        path: |
          ~/.cargo/registry
          ~/.cargo/git
          target
          ~/.cache/conv-workbook
        key: workbook-${{ runner.os }}-${{ hashFiles('Cargo.lock', 'kernels/**', 'runner/**', 'puzzles/*/src/**') }}
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
