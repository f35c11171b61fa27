#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): Rust, the
# runner built from the students' copy of the workbook in this bundle, and NVRTC. The last step
# installs NVRTC (the runner's first check does, of puzzle 01's skeleton, which fails as a
# skeleton does: its status is not the point) and then proves the compiler is there.
# AUTOGRADER_ROOT (default /autograder) lets a test run it under a folder of its own.
set -euo pipefail
root=${AUTOGRADER_ROOT:-/autograder}
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends curl ca-certificates build-essential python3 python3-pip
if [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo > /dev/null; then
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
cd "$root/source/workbook"
cargo build --release -p runner
install -m 755 target/release/runner "${RUNNER_BIN_DIR:-/usr/local/bin}/runner"
runner=${RUNNER_BIN_DIR:-/usr/local/bin}/runner
"$runner" --root "$root/source/workbook" check puzzle-01 --backend sim > /dev/null || true
# The skeleton fails its cases; what must not appear is NVRTC missing.
json=$("$runner" --root "$root/source/workbook" check puzzle-01 --backend sim --json || true)
if grep -q nvrtc_missing <<< "$json"; then
  echo "setup.sh: NVRTC is not installed: $json" >&2
  exit 1
fi
echo "setup.sh: the runner and NVRTC are ready"
