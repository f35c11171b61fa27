//! Asynchronous copies land at any moment between their issue and the wait that covers them
//! (`kernels/src/sim/inflight.rs`): a learner's `cp.async` double buffer for puzzle 11
//! (`fixtures/pipelines/p11_wmma_double_buffer.cu`) passes with no diagnostic, and with the
//! barrier at the end of each step removed (a fast warp refills the stage a slow warp still
//! reads) it is a race at the copy's line, naming the read's line too. The simulator lands a copy
//! when its thread waits, which here comes after the next barrier, so only the window the checks
//! hold finds it.

use crate::common;

use common::{find_kind, message};
use std::path::Path;

const PIPELINE: &str = "runner/tests/fixtures/pipelines/p11_wmma_double_buffer.cu";
const TRAILING: &str =
    "        __syncthreads(); // the stage read here is refilled at the top of the next step\n";

#[test]
fn the_double_buffer_with_both_barriers_passes_clean() {
    let (passed, d) = common::check_kernel("puzzle-11", &common::repo().join(PIPELINE), "sim", &[]);
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn the_double_buffer_without_its_trailing_barrier_is_a_race_at_the_copy() {
    let (file, _) = common::mutate(PIPELINE, "p11_no_trailing_barrier", &[(TRAILING, "")]);
    let (passed, d) = common::check_kernel("puzzle-11", &file, "sim", &[]);
    assert!(!passed);
    let race = find_kind("p11_no_trailing_barrier", &d, "race");
    let src = std::fs::read_to_string(&file).unwrap();
    let copy_line = src
        .lines()
        .position(|l| l.contains("cp.async.ca.shared.global"))
        .unwrap() as u64
        + 1;
    assert_eq!(race["line"].as_u64(), Some(copy_line), "{race:#?}");
    assert_eq!(
        race["file"]
            .as_str()
            .map(Path::new)
            .and_then(Path::file_name),
        file.file_name(),
        "{race:#?}"
    );
    let m = message(race);
    for words in [
        format!("issued (line {copy_line}) may write `smem["),
        "while thread (0,0,0) read it (line ".into(),
        "lands at any moment between its issue and the `cp.async.wait_group`".into(),
        "the barrier at the end of each step".into(),
    ] {
        assert!(m.contains(&words), "{m}");
    }
}
