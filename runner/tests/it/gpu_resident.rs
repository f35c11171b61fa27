//! The full-scale cases the GPU worker keeps (`gpu::resident`, `gpu::pool`), on a GPU:
//! no reference is on the device while a learner's kernel runs, a wrong full case is still
//! reported with its diff, a kernel finds no earlier submission's output in device memory, and
//! the workers leave once idle. Run with `--ignored` on a GPU machine
//! (see `gpu.rs`).

use crate::common;

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

/// `grade` runs one student after another in the same warm worker, so in one CUDA context,
/// where a freed buffer's memory goes to the next allocation as it was left: a correct
/// submission's output, the expected one, would lie in memory that a later kernel's stray
/// pointer can read. The worker zeroes every buffer before it frees it (`gpu::wipe`); here a
/// kernel that searches the pages around its own buffers for an earlier output of its case, and
/// copies what it finds, runs right after the solution in the same worker, case by case. (On an
/// H200 the runner from before the wipe leaked no output to this kernel either, likely because a
/// check makes the same allocations in the same order, so each case's output lands where the
/// previous one's was and is poisoned; the wipe does not rest on that.)
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_kernel_that_scans_memory_for_the_previous_submissions_output_does_not_pass() {
    let _gpu = require_gpu();
    let cases = [
        "example-1",
        "example-identity",
        "edge-tails",
        "pitched",
        "random-1",
        "random-wide-kernel",
    ];
    for case in cases {
        let honest = run(&[
            "check",
            "puzzle-09",
            "--solution",
            "--backend",
            "gpu",
            "--case",
            case,
        ]);
        assert_eq!(honest.status.code(), Some(0), "the solution passes {case}");
        let o = scanner(&["--case", case]);
        assert_eq!(o["cases"][0]["name"], case, "{o}");
        assert_eq!(o["cases"][0]["passed"], false, "{case}: {o}");
    }
    // The whole of the solution's check, then the whole of the scanner's: no case passes.
    let honest = run(&["check", "puzzle-09", "--solution", "--backend", "gpu"]);
    assert_eq!(honest.status.code(), Some(0));
    let o = scanner(&[]);
    let passed: Vec<&serde_json::Value> = o["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["passed"] == true)
        .map(|c| &c["name"])
        .collect();
    assert!(passed.is_empty(), "cases passed by copying: {passed:?}");
}

/// The memory-scanning kernel's check of puzzle 09 on the GPU, with `more` arguments, as JSON.
fn scanner(more: &[&str]) -> serde_json::Value {
    let kernel = "runner/tests/fixtures/scans_for_previous_output.cu";
    let args = [
        &[
            "check",
            "puzzle-09",
            "--kernel",
            kernel,
            "--backend",
            "gpu",
            "--json",
        ],
        more,
    ];
    json(&run(&args.concat()))
}
