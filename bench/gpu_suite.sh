#!/usr/bin/env bash
# Every test that needs a GPU, in one device call. Two halves:
#   bash bench/gpu_suite.sh pack     here (no GPU): builds in release, strips the runner and the
#                                    test binaries that hold GPU tests into .bench/gpu.tgz: the
#                                    runner's unit tests (runner-unit) and each crate's one
#                                    integration binary, tests/it (runner-it, conformance-it)
#   bash bench/gpu_suite.sh run      on the GPU machine, from the repository root, with
#                                    .bench/gpu.tgz carried: unpacks, runs each binary's
#                                    ignored (GPU) tests and `runner validate`, prints a summary
# Every ignored test of these binaries is a GPU test, so `--ignored` runs exactly those.
# The binaries find the workbook through WORKBOOK_ROOT and the runner through RUNNER_BIN.
set -u
cd "$(dirname "$0")/.."
# PACKAGE:TEST, packed as PACKAGE-TEST (runner:runner-unit is the runner's own unit tests).
BINS="runner:runner-unit runner:it conformance:it"
case "${1:-}" in
pack)
  set -e
  rm -rf .bench/gpu && mkdir -p .bench/gpu
  args=()
  for b in $BINS; do [ "${b#*:}" = runner-unit ] || args+=(-p "${b%%:*}" --test "${b#*:}"); done
  cargo test --release --no-run "${args[@]}" -p runner --bin runner --message-format=json 2>/dev/null \
    | python3 -c '
import json, os, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        package = os.path.basename(os.path.dirname(m["manifest_path"]))
        name = m["target"]["name"] + "-unit" if m["target"]["kind"] == ["bin"] else package + "-" + m["target"]["name"]
        shutil.copy(m["executable"], ".bench/gpu/" + name)
'
  cargo build --release -p runner
  cp target/release/runner .bench/gpu/runner
  strip .bench/gpu/*
  tar -C .bench -czf .bench/gpu.tgz gpu
  ls -la .bench/gpu .bench/gpu.tgz
  ;;
run)
  tar -C .bench -xzf .bench/gpu.tgz
  export WORKBOOK_ROOT=$PWD RUNNER_BIN=$PWD/.bench/gpu/runner
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit $(git rev-parse --short HEAD 2>/dev/null)"
  for b in $BINS; do
    t=${b#*:}
    [ "$t" = runner-unit ] || t=${b%%:*}-$t
    echo "=== $t"
    timeout 540 .bench/gpu/$t --ignored --test-threads=1 2>&1 | grep -E "^test |test result|panicked|FAILED|needs" | head -100
  done
  echo "=== runner validate"
  /usr/bin/time -f "%e s" .bench/gpu/runner validate 2>&1 | tail -5
  ;;
*) echo "usage: bash bench/gpu_suite.sh pack|run"; exit 2 ;;
esac
