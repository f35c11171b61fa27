#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): Rust, the
# runner built from the students' copy of the workbook in this bundle, and NVRTC (installed by
# the runner's first check, of puzzle 01's skeleton, which fails as a skeleton does).
set -euo pipefail
apt-get install -y --no-install-recommends curl ca-certificates build-essential python3 python3-pip
curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
. "$HOME/.cargo/env"
cd /autograder/source/workbook
cargo build --release -p runner
install -m 755 target/release/runner /usr/local/bin/runner
runner --root /autograder/source/workbook check puzzle-01 --backend sim > /dev/null || true
runner --root /autograder/source/workbook check puzzle-01 --backend sim --json | grep -qv nvrtc_missing
