//! The corpus of broken tensor-core kernels (puzzle 12): each is the reference solution with one
//! mistake made in it, a textual edit of `solutions/puzzle-12.cu` applied here (so the corpus
//! follows the solution and holds no second copy of it), checked by the real runner on the
//! simulator with `--json`, and the diagnosis each must get, at the edited line where the
//! diagnosis has one. The solutions themselves pass with no diagnostic (`runner validate`).
//! Puzzle 12 has two checked solutions: `solutions/puzzle-12.cu` on `mma.sync`, and
//! `solutions/puzzle-12-hopper.cu` on `wgmma` (sm_90a; it names `wgmma`, so the runner compiles it
//! for sm_90a, on the simulator too). Each mistake is made in both, and each test checks both.

use crate::common;

use common::{find_kind as find, message};
use serde_json::Value;
use std::path::{Path, PathBuf};

const SOLUTION: &str = "solutions/puzzle-12.cu";
const HOPPER: &str = "solutions/puzzle-12-hopper.cu";

/// `runner check puzzle-12 --kernel FILE --backend BACKEND --json [extra]`: passed, diagnostics.
fn check(file: &Path, backend: &str, extra: &[&str]) -> (bool, Vec<Value>) {
    common::check_kernel("puzzle-12", file, backend, extra)
}

/// The solution a mutant is made from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Runs {
    Wgmma,
    MmaSync,
}

/// One mistake, made in both solutions by `edits` (each a `(find, replace)` of the wgmma one and
/// of the mma.sync one), as two mutants, each with the line of its first edit.
fn both(name: &str, wgmma: &[(&str, &str)], mma: &[(&str, &str)]) -> Vec<(Runs, PathBuf, u64)> {
    let (file, line) = common::mutate(HOPPER, &format!("{name}_wgmma"), wgmma);
    let (file_off, line_off) = common::mutate(SOLUTION, &format!("{name}_mma"), mma);
    vec![
        (Runs::Wgmma, file, line),
        (Runs::MmaSync, file_off, line_off),
    ]
}

/// The two products with a remainder deleted, in both paths: plain tf32, 11 bits of each float.
fn plain_tf32() -> Vec<(Runs, PathBuf, u64)> {
    both(
        "p12_plain_tf32",
        &[
            (
                "        wgmma_m64n96k8(small, hi, descriptor(b + 2 * HALF_BYTES));\n",
                "",
            ),
            ("        wgmma_m64n96k8(small, lo, descriptor(b));\n", ""),
        ],
        &[
            (
                "                        mma(small[mu][nu], r0.x, r8.x, r0.y, r8.y, x[nu].z, x[nu].w);\n",
                "",
            ),
            (
                "                        mma(small[mu][nu], r0.z, r8.z, r0.w, r8.w, x[nu].x, x[nu].y);\n",
                "",
            ),
        ],
    )
}

#[test]
fn plain_tf32_misses_the_tolerance_on_the_long_kernels() {
    // Without the remainders each product is off by up to 2^-10 of itself: over 2047 taps the
    // error reaches 1e-2, ten times the tolerance, while the sums of a few taps still pass.
    for (path, file, _) in plain_tf32() {
        let (passed, d) = check(&file, "sim", &[]);
        assert!(!passed, "{path:?}");
        assert!(
            d.iter().all(|x| x["kind"] == "wrong_output"),
            "{path:?}: {d:#?}"
        );
        let wrong = find("p12_plain_tf32", &d, "wrong_output");
        assert_eq!(wrong["case"], "edge-kernel-2047", "{path:?}: {wrong:#?}");
        let all: String = d.iter().map(|x| format!("{x}")).collect();
        for case in ["random-halo", "random-long-kernel"] {
            assert!(
                all.contains(case),
                "{path:?}: {case} passes plain tf32: {d:#?}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn plain_tf32_fails_the_full_case_on_the_gpu() {
    // The Hopper mutant: the one an H100 compiles and `runner bench --solution=hopper` times.
    let (_, file, _) = plain_tf32().remove(0);
    let (passed, d) = check(&file, "gpu", &["--case", "full"]);
    assert!(!passed);
    let wrong = find("p12_plain_tf32", &d, "wrong_output");
    assert_eq!(wrong["case"], "full", "{wrong:#?}");
}

#[test]
fn a_wrong_toeplitz_offset_is_a_wrong_output() {
    // W[b][k] = w[k - b] with the lane's row g added instead of subtracted (the wgmma path) or
    // read as w[b - k] (the mma.sync path): the taps slide the wrong way along the diagonals. (The
    // wgmma path read as w[b - k] walks off the staged taps: an `uninitialized_read`, not this.)
    for (path, file, _) in both(
        "p12_toeplitz_offset",
        &[(
            "taps + 72 + t - 16 * (warp % 4) - g;",
            "taps + 72 + t - 16 * (warp % 4) + g;",
        )],
        &[("taps + 8 + 2 * t - g;", "taps + 8 + g - 2 * t;")],
    ) {
        let (passed, d) = check(&file, "sim", &[]);
        assert!(!passed, "{path:?}");
        assert!(
            d.iter().all(|x| x["kind"] == "wrong_output"),
            "{path:?}: {d:#?}"
        );
        let wrong = find("p12_toeplitz_offset", &d, "wrong_output");
        assert_eq!(wrong["case"], "example-1", "{path:?}: {wrong:#?}");
    }
}

#[test]
fn a_missing_barrier_is_a_race_between_staging_and_the_fragments() {
    for (path, file, _) in both(
        "p12_missing_barrier",
        &[(
            "          OUTPUTS_PER_BLOCK + 8 * steps);\n    __syncthreads();\n",
            "          OUTPUTS_PER_BLOCK + 8 * steps);\n",
        )],
        &[(
            "          mine - ROW + 8 * steps + 8);\n    __syncthreads();\n",
            "          mine - ROW + 8 * steps + 8);\n",
        )],
    ) {
        let (passed, d) = check(&file, "sim", &[]);
        assert!(!passed, "{path:?}");
        let race = find("p12_missing_barrier", &d, "race");
        assert!(
            message(race).contains("no __syncthreads()"),
            "{path:?}: {race:#?}"
        );
    }
}

#[test]
fn a_guard_per_lane_splits_the_warp_at_the_tensor_core_instruction() {
    // The rows guarded by the lane's own first output, as in puzzles 01 to 08: lanes past the end
    // leave, and wgmma or mma.sync, which need all 32 lanes of a warp, are reached by the others
    // alone.
    for (path, file, guard) in both(
        "p12_lane_guard",
        &[(
            "if (tile >= output_size) {",
            "if (tile + ROW * 2 * t + g >= output_size) {",
        )],
        &[(
            "if (first + base >= output_size) {",
            "if (first + base + ROW * 2 * t + g >= output_size) {",
        )],
    ) {
        let (passed, d) = check(&file, "sim", &[]);
        assert!(!passed, "{path:?}");
        let split = find("p12_lane_guard", &d, "barrier_divergence");
        let (instruction, helper) = match path {
            Runs::Wgmma => ("`wgmma.mma_async`", "void wgmma_m64n96k8("),
            Runs::MmaSync => ("`mma.sync`", "void mma("),
        };
        assert!(
            message(split).starts_with(&format!("{instruction} is a warp-wide collective"))
                && message(split).contains("lanes 1, 2, 3, 5,"),
            "{path:?}: {split:#?}"
        );
        // And where the missing lanes went: the guard's `return` (or the `if` that jumped to it).
        let left = |l: u64| format!(" left at line {l} and did not reach it");
        assert!(
            message(split).contains(&left(guard)) || message(split).contains(&left(guard + 1)),
            "{path:?}: {split:#?}"
        );
        // At the asm statement of the helper (NVRTC places it on the statement's last line).
        let src = std::fs::read_to_string(&file).unwrap();
        let at_helper = src.lines().position(|l| l.contains(helper)).unwrap() as u64;
        let at = split["line"].as_u64().unwrap();
        assert!(
            at_helper < at && at <= at_helper + 20,
            "{path:?}: {split:#?}"
        );
    }
}

#[test]
fn a_store_guard_off_by_one_writes_past_the_output() {
    for (path, file, line) in both(
        "p12_store_guard",
        &[(
            "if (o < output_size) {\n                output[o] = acc",
            "if (o <= output_size) {\n                output[o] = acc",
        )],
        &[(
            "if (o < output_size) {\n                        output[o] = acc",
            "if (o <= output_size) {\n                        output[o] = acc",
        )],
    ) {
        let (passed, d) = check(&file, "sim", &[]);
        assert!(!passed, "{path:?}");
        let oob = find("p12_store_guard", &d, "out_of_bounds");
        assert_eq!(oob["line"].as_u64(), Some(line + 1), "{path:?}: {oob:#?}");
        assert!(message(oob).contains("`output["), "{path:?}: {oob:#?}");
    }
}
