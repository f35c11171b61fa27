//! The corpus of broken 2D kernels (puzzles 09 and 10): the mistakes of a first 2D kernel, each
//! checked by the real runner on the simulator with `--json`, and the diagnosis each must get. A
//! fixture in `fixtures/broken2d/` marks the line its diagnostic must point at with
//! `// expect: KIND` (a wrong output, which has no line, at the mistake), so source and test
//! cannot drift; `bench/broken_gpu.py` reads the same marks. A correct staged kernel of the same shape
//! passes with no diagnostic, so the checks are not merely suspicious of everything.

use crate::common;

use common::{message, repo};
use serde_json::Value;
use std::path::PathBuf;

/// `fixtures/broken2d/NAME.cu`.
fn fixture(name: &str) -> PathBuf {
    repo().join(format!("runner/tests/fixtures/broken2d/{name}.cu"))
}

/// `runner check PUZZLE --kernel fixtures/broken2d/NAME.cu --backend sim --json`.
fn check(puzzle: &str, name: &str) -> (bool, Vec<Value>) {
    common::check_kernel(puzzle, &fixture(name), "sim", &[])
}

/// The diagnostic of `kind`, which must exist; when the fixture marks a line for it, it must be
/// there ([`common::find_marked`]).
fn find<'a>(name: &str, d: &'a [Value], kind: &str) -> &'a Value {
    common::find_marked(name, &fixture(name), d, kind)
}

#[test]
fn no_column_guard_on_the_tail_tile_reads_and_writes_past_the_rows() {
    let (passed, d) = check("puzzle-09", "p09_no_column_guard");
    assert!(!passed);
    assert!(message(find("p09_no_column_guard", &d, "out_of_bounds")).contains("`input[9]`"));
    let pad = find("p09_no_column_guard", &d, "padding_written");
    assert!(message(pad).contains("at row 0, column 34"), "{pad:#?}");
    assert!(pad["block"].is_array() && pad["thread"].is_array());
}

#[test]
fn a_store_guarded_by_the_stride_writes_the_padding_and_says_who() {
    let (_, d) = check("puzzle-09", "p09_store_guard_by_stride");
    assert_eq!(d.len(), 1, "{d:#?}");
    let pad = find("p09_store_guard_by_stride", &d, "padding_written");
    assert_eq!(pad["block"], serde_json::json!([4, 0, 0]));
    assert_eq!(pad["thread"], serde_json::json!([2, 0, 0]));
    assert!(message(pad).contains("not against the stride"), "{pad:#?}");
}

#[test]
fn an_ignored_stride_is_named_as_the_likely_cause() {
    let (_, d) = check("puzzle-09", "p09_stride_ignored");
    let wrong = find("p09_stride_ignored", &d, "wrong_output");
    assert!(
        message(wrong).contains("(row 0, col 0) yours NaN"),
        "{wrong:#?}"
    );
    assert!(
        message(wrong).contains("the input's stride was probably ignored"),
        "{wrong:#?}"
    );
    assert!(d.iter().all(|x| x["kind"] == "wrong_output"), "{d:#?}");
}

#[test]
fn swapped_rows_and_columns_leave_outputs_unwritten() {
    let (_, d) = check("puzzle-09", "p09_rows_and_columns_swapped");
    let u = find("p09_rows_and_columns_swapped", &d, "unwritten_output");
    assert!(message(u).contains("at row 0, column 12"), "{u:#?}");
}

#[test]
fn a_skipped_tap_is_a_wrong_output_named_by_row_and_column() {
    let (_, d) = check("puzzle-09", "p09_skipped_tap");
    let wrong = find("p09_skipped_tap", &d, "wrong_output");
    assert!(
        message(wrong).starts_with("4 of 4 elements differ: (row 0, col 0) yours -5.000000, expected -4.000000 (block (0,0) thread (0,0))"),
        "{wrong:#?}"
    );
    assert!(
        !message(wrong).contains("stride"),
        "no stride guess: {wrong:#?}"
    );
}

#[test]
fn a_correct_staged_kernel_passes_with_no_diagnostic() {
    let (passed, d) = check("puzzle-10", "p10_staged");
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn a_halo_too_small_is_an_uninitialized_shared_read() {
    let (_, d) = check("puzzle-10", "p10_halo_too_small");
    let u = find("p10_halo_too_small", &d, "uninitialized_read");
    assert!(message(u).contains("`tile["), "{u:#?}");
}

#[test]
fn a_missing_barrier_is_a_race_between_staging_and_reading() {
    let (_, d) = check("puzzle-10", "p10_missing_barrier");
    let race = find("p10_missing_barrier", &d, "race");
    assert!(message(race).contains("no __syncthreads()"), "{race:#?}");
}

#[test]
fn an_impossible_block_is_a_bad_launch_shape() {
    let (_, d) = check("puzzle-10", "p10_too_many_threads");
    assert_eq!(d.len(), 1, "{d:#?}");
    let bad = find("p10_too_many_threads", &d, "bad_launch_shape");
    assert!(message(bad).contains("2048 threads"), "{bad:#?}");
    // At the line that declares `launch_shape`, not line 1 of the file.
    assert_eq!(bad["line"].as_u64(), Some(5));
}
