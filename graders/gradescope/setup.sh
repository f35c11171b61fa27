#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): Rust, the
# runner built from the workbook in this bundle, and NVRTC (installed by the runner's first check).
set -euo pipefail
apt-get install -y --no-install-recommends curl ca-certificates build-essential python3 python3-pip
curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
. "$HOME/.cargo/env"
cd /autograder/source/workbook
cargo build --release -p runner
install -m 755 target/release/runner /usr/local/bin/runner
# The first check installs NVRTC into the runner's cache; the solution must pass.
runner --root /autograder/source/workbook check puzzle-01 --solution --backend sim
