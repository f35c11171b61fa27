#!/usr/bin/env bash
# Writes the GitHub Classroom workflow that grades the puzzles of a puzzles.conf (one test per
# puzzle, worth its points, pass or fail) on GitHub's hosted runners, which have no GPU: the
# simulator runs the kernels. Put its output in the assignment's template repository (the
# students' copy that `runner release` writes):
#   mkdir -p .github/workflows
#   bash graders/github-classroom/make-workflow.sh [puzzles.conf] > .github/workflows/classroom.yml
#   bash graders/github-classroom/make-workflow.sh week1.conf ../conv-class > ../conv-class/.github/workflows/classroom.yml
# The build and NVRTC are cached: restored first, saved right after the build, before any test
# runs, so a push whose tests fail still leaves a warm cache for the next one. A push that finds
# the cache of its exact graded files (the runner, the kernels' crates, the puzzles' rules) does
# not build at all: the runner binary is in it, so a push that changes only kernels grades in
# seconds.
#
# Given the template's folder (the students' copy, second argument), the workflow carries the
# SHA-256 of every graded file of it and refuses, naming the file, a repository whose graded
# files differ from the template's (a widened tolerance, an edited judge), before anything is
# built. A student controls their repository's workflow file too, so this keeps honest students
# honest; the grade an instructor can trust is `runner grade` over clones (graders/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
conf=${1:-$here/../puzzles.conf}
template=${2:-}
puzzles=$(grep -v '^#' "$conf" | awk 'NF >= 2 { print $1 " " $2 }')
# The graded files of a workbook: everything but the learners' own (puzzles/*/kernel.cu and
# anything else beside them), the book and the workflow.
graded_files() {
  (cd "$1" && find Cargo.toml Cargo.lock kernels runner puzzles/*/Cargo.toml puzzles/*/src -type f \
    | LC_ALL=C sort)
}
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
YAML
if [ -n "$template" ]; then
  cat <<'YAML'
    - name: Check that the graded files are the template's
      run: |
        # BEGIN graded-files check
        expected=$(mktemp)
        cat > "$expected" <<'SUMS'
YAML
  (cd "$template" && graded_files . | xargs sha256sum) | sed 's/^/        /'
  cat <<'YAML'
        SUMS
        changed=$(sha256sum --check --quiet "$expected" 2>&1 | grep -v '^sha256sum:' || true)
        added=$(find Cargo.toml Cargo.lock kernels runner puzzles/*/Cargo.toml puzzles/*/src -type f 2>/dev/null \
          | LC_ALL=C sort | comm -23 - <(cut -c67- "$expected" | LC_ALL=C sort))
        if [ -n "$changed$added" ]; then
          echo "These graded files differ from the assignment's template; grading stops here:"
          [ -z "$changed" ] || echo "$changed"
          [ -z "$added" ] || echo "$added: not in the template"
          exit 1
        fi
        # END graded-files check
YAML
fi
cat <<'YAML'
    - name: Restore the runner's build and NVRTC
      id: cache
      uses: actions/cache/restore@v5
      with:
        path: |
          ~/.cargo/registry
          ~/.cargo/git
          target
          ~/.cache/conv-workbook
        key: workbook-${{ runner.os }}-${{ hashFiles('Cargo.lock', 'kernels/**', 'runner/**', 'puzzles/*/Cargo.toml', 'puzzles/*/src/**') }}
        restore-keys: workbook-${{ runner.os }}-
    - name: Build the runner and install NVRTC
      if: steps.cache.outputs.cache-hit != 'true'
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
        key: workbook-${{ runner.os }}-${{ hashFiles('Cargo.lock', 'kernels/**', 'runner/**', 'puzzles/*/Cargo.toml', 'puzzles/*/src/**') }}
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
