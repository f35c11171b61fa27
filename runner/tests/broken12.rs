//! The corpus of broken tensor-core kernels (puzzle 12): each is the reference solution with one
//! mistake made in it, a textual edit of `solutions/puzzle-12.cu` applied here (so the corpus
//! follows the solution and holds no second copy of it), checked by the real runner on the
//! simulator with `--json`, and the diagnosis each must get, at the edited line where the
//! diagnosis has one. The solution itself passes with no diagnostic (`runner validate`).

mod common;

use common::{find_kind as find, message};
use serde_json::Value;
use std::path::{Path, PathBuf};

const SOLUTION: &str = "solutions/puzzle-12.cu";

/// The solution with `find` replaced by `replace` ([`common::mutate`]).
fn mutate(name: &str, find: &str, replace: &str) -> (PathBuf, u64) {
    common::mutate(SOLUTION, name, &[(find, replace)])
}

/// `runner check puzzle-12 --kernel FILE --backend BACKEND --json [extra]`: passed, diagnostics.
fn check(file: &Path, backend: &str, extra: &[&str]) -> (bool, Vec<Value>) {
    common::check_kernel("puzzle-12", file, backend, extra)
}

/// The two products with a remainder deleted: plain tf32, 11 bits of each float.
const REMAINDERS: [&str; 2] = [
    "                        mma(small[mu][nu], r0.x, r8.x, r0.y, r8.y, x[nu].z, x[nu].w);\n",
    "                        mma(small[mu][nu], r0.z, r8.z, r0.w, r8.w, x[nu].x, x[nu].y);\n",
];

fn plain_tf32() -> PathBuf {
    let edits = [(REMAINDERS[0], ""), (REMAINDERS[1], "")];
    common::mutate(SOLUTION, "p12_plain_tf32", &edits).0
}

#[test]
fn plain_tf32_misses_the_tolerance_on_the_long_kernels() {
    // Without the remainders each product is off by up to 2^-10 of itself: over 2047 taps the
    // error reaches 1e-2, ten times the tolerance, while the sums of a few taps still pass.
    let (passed, d) = check(&plain_tf32(), "sim", &[]);
    assert!(!passed);
    assert!(d.iter().all(|x| x["kind"] == "wrong_output"), "{d:#?}");
    let wrong = find("p12_plain_tf32", &d, "wrong_output");
    assert_eq!(wrong["case"], "edge-kernel-2047", "{wrong:#?}");
    let all: String = d.iter().map(|x| format!("{x}")).collect();
    for case in ["random-halo", "random-long-kernel"] {
        assert!(all.contains(case), "{case} passes plain tf32: {d:#?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn plain_tf32_fails_the_full_case_on_the_gpu() {
    let (passed, d) = check(&plain_tf32(), "gpu", &["--case", "full"]);
    assert!(!passed);
    let wrong = find("p12_plain_tf32", &d, "wrong_output");
    assert_eq!(wrong["case"], "full", "{wrong:#?}");
}

#[test]
fn a_mirrored_toeplitz_index_is_a_wrong_output() {
    // W[b][k] = w[k - b] read as w[b - k]: the taps slide the wrong way along the diagonals.
    let (file, _) = mutate(
        "p12_toeplitz_mirrored",
        "taps + 8 + 2 * t - g;",
        "taps + 8 + g - 2 * t;",
    );
    let (passed, d) = check(&file, "sim", &[]);
    assert!(!passed);
    assert!(d.iter().all(|x| x["kind"] == "wrong_output"), "{d:#?}");
    let wrong = find("p12_toeplitz_mirrored", &d, "wrong_output");
    assert_eq!(wrong["case"], "example-1", "{wrong:#?}");
}

#[test]
fn a_missing_barrier_is_a_race_between_staging_and_the_fragments() {
    let (file, _) = mutate(
        "p12_missing_barrier",
        "          mine - ROW + 8 * steps + 8);\n    __syncthreads();\n",
        "          mine - ROW + 8 * steps + 8);\n",
    );
    let (passed, d) = check(&file, "sim", &[]);
    assert!(!passed);
    let race = find("p12_missing_barrier", &d, "race");
    assert!(message(race).contains("no __syncthreads()"), "{race:#?}");
}

#[test]
fn a_guard_per_lane_splits_the_warp_at_the_mma() {
    // The pass guarded by the lane's own first output, as in puzzles 01 to 08: lanes past the end
    // leave, and mma.sync, which needs all 32, is reached by the others alone.
    let (file, _) = mutate(
        "p12_lane_guard",
        "if (first + base >= output_size) {",
        "if (first + base + ROW * 2 * t + g >= output_size) {",
    );
    let (passed, d) = check(&file, "sim", &[]);
    assert!(!passed);
    let split = find("p12_lane_guard", &d, "barrier_divergence");
    assert!(
        message(split).starts_with("`mma.sync` is a warp-wide collective")
            && message(split).contains("lanes 1, 2, 3, 5,"),
        "{split:#?}"
    );
    // At the asm statement of the `mma` helper (NVRTC places it on the statement's last line).
    let src = std::fs::read_to_string(&file).unwrap();
    let helper = src.lines().position(|l| l.contains("void mma(")).unwrap() as u64;
    let at = split["line"].as_u64().unwrap();
    assert!(helper < at && at <= helper + 8, "{split:#?}");
}

#[test]
fn a_store_guard_off_by_one_writes_past_the_output() {
    let (file, line) = mutate(
        "p12_store_guard",
        "if (o < output_size) {",
        "if (o <= output_size) {",
    );
    let (passed, d) = check(&file, "sim", &[]);
    assert!(!passed);
    let oob = find("p12_store_guard", &d, "out_of_bounds");
    assert_eq!(oob["line"].as_u64(), Some(line + 1), "{oob:#?}");
    assert!(message(oob).contains("`output["), "{oob:#?}");
}
