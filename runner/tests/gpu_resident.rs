//! The full-scale cases the GPU worker keeps (`gpu::resident`, `gpu::pool`), on a GPU:
//! no reference is on the device while a learner's kernel runs, a wrong full case is still
//! reported with its diff, and the workers leave once idle. Run with `--ignored` on a GPU machine
//! (see `gpu.rs`).

mod common;

use common::{json, require_gpu, run};
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_kernel_that_reads_past_its_output_for_the_reference_does_not_pass() {
    let _gpu = require_gpu();
    let out = run(&[
        "check",
        "puzzle-09",
        "--kernel",
        "runner/tests/fixtures/reads_past_output.cu",
        "--backend",
        "gpu",
        "--case",
        "full-4096x4096-3x3",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let o = json(&out);
    let case = &o["cases"][0];
    assert_eq!(case["name"], "full-4096x4096-3x3", "{o}");
    assert_eq!(case["passed"], false, "{o}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_wrong_full_case_is_judged_in_the_worker_and_shown_with_its_diff() {
    let _gpu = require_gpu();
    let started = Instant::now();
    let out = run(&[
        "check",
        "puzzle-09",
        "--kernel",
        "runner/tests/fixtures/broken2d/p09_skipped_tap.cu",
        "--backend",
        "gpu",
        "--case",
        "full-4096x4096-3x3",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("wrong_output"), "{text}");
    assert!(text.contains("yours, and (expected)"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(60));
}
