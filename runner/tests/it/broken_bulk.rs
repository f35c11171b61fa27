//! Bulk copies (`cp.async.bulk`, the TMA unit's copies) land at any moment until a wait on the
//! mbarrier phase that counts their bytes (`kernels/sim/src/inflight.rs`), though the simulator
//! moves their bytes at the issue. A learner-style bulk double buffer for puzzle 01
//! (`fixtures/pipelines/p01_bulk_double_buffer.cu`) and puzzle 05's bulk-tile variant pass clean,
//! as does the tile waited on by thread 0 alone before the barrier. Skipping the wait, with the
//! barrier still there, is a race at the read naming the copy's line (the binary before the check
//! passed both: the barrier hid it); so is a write into a tile while its copy lands. A double
//! buffer without its trailing barrier was a race before and stays one.

use crate::common;

use common::{find_kind, message};

const PIPELINE: &str = "runner/tests/fixtures/pipelines/p01_bulk_double_buffer.cu";
const TILE: &str = "runner/tests/fixtures/variants/puzzle-05.bulk-tile.cu";
const WAIT: &str = "asm volatile(\"{\\n.reg .pred p;\\nWAIT_%=:\\n\"";
const COPY: &str = "cp.async.bulk.shared::cluster.global";

/// The line (1-based) of the first line of `file` holding `needle`.
fn line_of(file: &std::path::Path, needle: &str) -> u64 {
    let src = std::fs::read_to_string(file).unwrap();
    src.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

/// The race of a check of `file` for `puzzle` that fails, at line `at` naming the copy's line.
fn race_at(puzzle: &str, name: &str, file: &std::path::Path, at: u64) -> String {
    let (passed, d) = common::check_kernel(puzzle, file, "sim", &[]);
    assert!(!passed, "{name}");
    let race = find_kind(name, &d, "race");
    assert_eq!(race["line"].as_u64(), Some(at), "{name}: {race:#?}");
    let m = message(race).to_string();
    // NVRTC places an asm statement at its operands' last line, before the clobbers.
    let src = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = src.lines().collect();
    let from = lines.iter().position(|l| l.contains(COPY)).unwrap();
    let copy = (from..lines.len())
        .find(|&i| lines[i].contains(": \"memory\");"))
        .unwrap() as u64;
    assert!(m.contains(&format!("issued (line {copy})")), "{name}: {m}");
    m
}

/// `base` with its wait on the mbarrier skipped (`if (0)`), checked: the race at the line that
/// holds `read`, naming the copy's line; its message.
fn without_wait(puzzle: &str, base: &str, name: &str, read: &str) -> String {
    let src = std::fs::read_to_string(common::repo().join(base)).unwrap();
    let line = src.lines().find(|l| l.contains(WAIT)).unwrap();
    let skip = line.replacen(WAIT, &format!("if (0) {WAIT}"), 1);
    let (file, _) = common::mutate(base, name, &[(line, &skip)]);
    race_at(puzzle, name, &file, line_of(&file, read))
}

#[test]
fn the_bulk_double_buffer_and_the_bulk_tile_pass_clean() {
    for (puzzle, file) in [("puzzle-01", PIPELINE), ("puzzle-05", TILE)] {
        let (passed, d) = common::check_kernel(puzzle, &common::repo().join(file), "sim", &[]);
        assert!(passed && d.is_empty(), "{file}: {d:#?}");
    }
}

#[test]
fn a_wait_by_one_thread_then_a_barrier_orders_every_reader() {
    let wait = format!("    {WAIT}");
    let one = format!("    if (threadIdx.x == 0) {WAIT}");
    let (file, _) = common::mutate(TILE, "p05_one_thread_waits", &[(&wait, &one)]);
    let (passed, d) = common::check_kernel("puzzle-05", &file, "sim", &[]);
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn a_double_buffer_that_skips_the_wait_is_a_race_at_the_read() {
    let m = without_wait("puzzle-01", PIPELINE, "p01_bulk_no_wait", "stage[s][k + j]");
    for words in [
        "reads `stage[",
        "without waiting for the copy",
        "until the phase of its mbarrier that counts its bytes completes",
        "`mbarrier.try_wait.parity`",
    ] {
        assert!(m.contains(words), "{m}");
    }
}

#[test]
fn a_tile_read_after_the_barrier_but_never_waited_for_is_a_race() {
    let m = without_wait("puzzle-05", TILE, "p05_bulk_no_wait", "sum += tile[");
    assert!(
        m.contains("reads `tile[") && m.contains("without waiting"),
        "{m}"
    );
}

#[test]
fn a_write_into_a_tile_while_its_copy_lands_is_a_race() {
    let (file, line) = common::mutate(
        TILE,
        "p05_bulk_overwrite",
        &[(
            "int at = k < head ? k : k + bulk, g = first + at;",
            "int at = k, g = first + at;",
        )],
    );
    let m = race_at("puzzle-05", "p05_bulk_overwrite", &file, line + 1);
    assert!(
        m.contains("writes `tile[") && m.contains("may still be writing it"),
        "{m}"
    );
}

#[test]
fn a_double_buffer_without_its_trailing_barrier_is_a_race() {
    let trailing =
        "        __syncthreads(); // the stage read here is refilled at the top of the next step\n";
    let (file, _) = common::mutate(PIPELINE, "p01_bulk_no_barrier", &[(trailing, "")]);
    let (passed, d) = common::check_kernel("puzzle-01", &file, "sim", &[]);
    assert!(!passed);
    let m = message(find_kind("p01_bulk_no_barrier", &d, "race"));
    assert!(m.contains("`stage[") && m.contains("bulk copy"), "{m}");
}
