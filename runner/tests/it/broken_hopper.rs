//! The synchronization of puzzle 11's Hopper kernel (`solutions/puzzle-11-hopper.cu`, compiled for
//! `compute_90a` on the simulator): a producer warpgroup and two that multiply, talking through
//! full and empty `mbarrier`s. The case `random-rows-wide` is the small one with 68 output
//! channels, where both warpgroups multiply every step, with more K steps than weight stages, so
//! the ring of stages wraps: as the solution stands (TMA copies) its block walks units with both
//! warpgroups together; with `TMA 0` (cp.async copies) it takes the row path. `random-rows` (12
//! channels) takes the ping-pong, whose two warpgroups take units in turn through one ring,
//! ordered by named barriers.
//! Each mistake below is one textual edit of the solution ([`common::mutate`]), checked by the
//! real runner on the simulator with `--json`: every one must fail with the diagnosis a learner
//! can act on, and the solution itself must get none (a false alarm here would cost more than a
//! missed bug).

use crate::common;

use common::{message, mutate, repo};
use serde_json::Value;
use std::path::Path;

const SOLUTION: &str = "solutions/puzzle-11-hopper.cu";

/// The case whose block takes the row path (with `TMA 0`) or the walk together, and the one
/// whose block takes the ping-pong.
const ROWS: &str = "random-rows-wide";
const PING_PONG: &str = "random-rows";

/// The solution's copies by `cp.async` (`TMA 0`) rather than by the TMA unit: blocks of more
/// than 64 output channels then take the row path.
const TMA_OFF: (&str, &str) = (
    "#ifndef TMA\n#define TMA 1\n",
    "#ifndef TMA\n#define TMA 0\n",
);

/// `runner check puzzle-11 --kernel FILE --backend sim --case CASE --json`.
fn check_case(file: &Path, case: &str) -> (bool, Vec<Value>) {
    common::check_kernel("puzzle-11", file, "sim", &["--case", case])
}

/// `file` passes `case` with no diagnostic at all.
fn clean(file: &Path, case: &str) {
    let (passed, d) = check_case(file, case);
    assert!(passed && d.is_empty(), "{case}: {d:#?}");
}

/// The solution with `edits` made in it, checked on `case`: it must fail; its diagnostics.
fn broken_on(case: &str, name: &str, edits: &[(&str, &str)]) -> Vec<Value> {
    let (file, _) = mutate(SOLUTION, name, edits);
    let (passed, d) = check_case(&file, case);
    assert!(!passed, "{name} passes");
    d
}

/// Broken on the row path: `edits` with the copies by `cp.async`.
fn broken(name: &str, edits: &[(&str, &str)]) -> Vec<Value> {
    broken_on(ROWS, name, &[&[TMA_OFF], edits].concat())
}

/// Broken in the walk, both warpgroups together, with the TMA copies (the solution as it is).
fn broken_together(name: &str, edits: &[(&str, &str)]) -> Vec<Value> {
    broken_on(ROWS, name, edits)
}

/// The diagnostic of `kind` among `d`, which must exist.
fn kind<'a>(name: &str, d: &'a [Value], kind: &str) -> &'a Value {
    common::find_kind(name, d, kind)
}

/// A deadlock on an mbarrier: a `barrier_divergence` that names the mbarrier wait.
fn mbarrier_deadlock(name: &str, d: &[Value]) -> String {
    let m = message(kind(name, d, "barrier_divergence")).to_string();
    assert!(
        m.contains("deadlock") && m.contains("mbarrier.try_wait.parity"),
        "{name}: {m}"
    );
    // The wait is in a helper every stage calls: the sentence names the call that hangs.
    assert!(m.contains("in a function called on line"), "{name}: {m}");
    m
}

const CONSUMER_WAIT: &str =
    "            mbar_wait(bars + 8 * (s % ROW_STAGES), (s / ROW_STAGES) & 1);\n";
const PRODUCER_WAIT: &str = "                    mbar_wait(bars + 8 * (ROW_STAGES + s % ROW_STAGES), (s / ROW_STAGES - 1) & 1);\n";

#[test]
fn the_warp_specialized_row_path_gets_no_diagnostic() {
    clean(&mutate(SOLUTION, "p11_rows", &[TMA_OFF]).0, ROWS);
}

#[test]
fn consumers_that_do_not_wait_for_the_full_barrier_race_the_producer() {
    let d = broken("p11_no_full_wait", &[(CONSUMER_WAIT, "")]);
    let race = message(kind("p11_no_full_wait", &d, "race"));
    assert!(race.contains("cp.async"), "{race}");
}

#[test]
fn a_producer_that_does_not_wait_for_the_empty_barrier_runs_a_phase_ahead() {
    // It fills every stage and comes round again before anyone waited: the full barrier has
    // completed two phases by then, and the consumers wait for the parity of a phase long gone.
    let d = broken("p11_no_empty_wait", &[(PRODUCER_WAIT, "")]);
    let m = mbarrier_deadlock("p11_no_empty_wait", &d);
    assert!(m.contains("comes a whole phase late"), "{m}");
}

#[test]
fn waiting_for_the_wrong_parity_is_a_deadlock() {
    let d = broken(
        "p11_parity",
        &[("(s / ROW_STAGES) & 1);", "(s / ROW_STAGES + 1) & 1);")],
    );
    mbarrier_deadlock("p11_parity", &d);
}

#[test]
fn a_full_barrier_expecting_one_arrival_too_many_is_a_deadlock() {
    let d = broken(
        "p11_count",
        &[(
            "mbar_init(bars + 8 * s, 128);",
            "mbar_init(bars + 8 * s, 129);",
        )],
    );
    let m = mbarrier_deadlock("p11_count", &d);
    assert!(m.contains("129"), "{m}");
}

#[test]
fn consumers_that_never_give_a_stage_back_leave_the_producer_waiting() {
    let d = broken(
        "p11_no_release",
        &[(
            "                mbar_arrive(bars + 8 * (ROW_STAGES + (s - 1) % ROW_STAGES));\n",
            "",
        )],
    );
    let m = mbarrier_deadlock("p11_no_release", &d);
    assert!(m.contains("threads 256-383 wait"), "{m}");
}

// The walk with both warpgroups together and its copies by the TMA unit, as the solution
// stands: tensor maps the file declares and the runner encodes, one producer thread acquiring
// them and issuing `cp.async.bulk.tensor`.
const WALK_WAIT: &str =
    "            mbar_wait(bars + 8 * (S % ROW_STAGES), (S / ROW_STAGES) & 1);\n";

#[test]
fn the_walk_together_with_tma_copies_gets_no_diagnostic() {
    clean(&repo().join(SOLUTION), ROWS);
}

#[test]
fn copies_through_maps_the_producer_never_acquired_are_a_launch_error() {
    let name = "p11_tma_no_fence";
    let d = broken_together(name, &[("        acquire_tensor_maps();\n", "")]);
    let m = message(kind(name, &d, "launch_error"));
    assert!(
        m.contains("never acquired")
            && m.contains("fence.proxy.tensormap::generic.acquire.sys [map], 128;"),
        "{m}"
    );
}

#[test]
fn a_box_wider_than_its_swizzle_is_a_bad_launch_shape() {
    let name = "p11_tma_box";
    let d = broken_together(
        name,
        &[(" box {16, 32}, swizzle 64,", " box {32, 32}, swizzle 64,")],
    );
    let m = message(kind(name, &d, "bad_launch_shape"));
    assert!(
        m.contains(
            "map `weight_map`: box[0] = 32 is 128 bytes, more than the 64-byte swizzle span"
        ),
        "{m}"
    );
}

#[test]
fn announcing_fewer_bytes_than_the_tensor_copies_bring_is_a_deadlock() {
    let name = "p11_tma_bytes";
    let d = broken_together(
        name,
        &[(
            "(begins ? SLAB_BYTES : 0);",
            "(begins ? SLAB_BYTES / 2 : 0);",
        )],
    );
    let m = mbarrier_deadlock(name, &d);
    assert!(
        m.contains("17408 bytes more than `expect_tx` announced"),
        "{m}"
    );
}

#[test]
fn consumers_that_do_not_wait_for_the_tensor_copies_race_them() {
    let name = "p11_tma_no_full_wait";
    let d = broken_together(name, &[(WALK_WAIT, "")]);
    let race = message(kind(name, &d, "race"));
    assert!(
        race.contains("bulk copy") && race.contains("without waiting for the copy"),
        "{race}"
    );
}

/// Both warpgroups multiply every stage, so both give it back: an empty barrier counting one
/// warpgroup's 128 arrivals completes twice a stage, and the producer's wait for the parity of
/// the next round comes a phase late.
#[test]
fn an_empty_barrier_counting_one_warpgroup_where_both_multiply_is_a_deadlock() {
    let name = "p11_together_count";
    let d = broken_together(
        name,
        &[("TOGETHER ? CTHREADS : 128);", "TOGETHER ? 128 : 128);")],
    );
    let m = mbarrier_deadlock(name, &d);
    assert!(m.contains("comes a whole phase late"), "{m}");
}

// The ping-pong path (blocks of 64 output channels or fewer).

#[test]
fn the_ping_pong_path_gets_no_diagnostic_with_either_copy() {
    clean(&repo().join(SOLUTION), PING_PONG);
    clean(
        &mutate(SOLUTION, "p11_pp_cp_async", &[TMA_OFF]).0,
        PING_PONG,
    );
}

/// Without the named barrier that orders them, the second warpgroup waits on a stage a whole unit
/// ahead: the parity it waits for is that of a phase two rounds back, which has completed, so it
/// reads the stage while the producer's copies of an earlier round still land in it.
#[test]
fn warpgroups_that_do_not_take_turns_read_a_stage_being_copied() {
    let name = "p11_pp_no_order";
    let d = broken_on(
        PING_PONG,
        name,
        &[
            TMA_OFF,
            (
                "            asm volatile(\"bar.sync %0, 256;\" ::\"r\"(3 - w) : \"memory\");\n",
                "",
            ),
        ],
    );
    let race = message(kind(name, &d, "race"));
    assert!(race.contains("cp.async"), "{race}");
}

/// A stage emptied by one warpgroup of 128 threads, counted as if both multiplied it.
#[test]
fn an_empty_barrier_expecting_both_warpgroups_is_a_deadlock() {
    let name = "p11_pp_count";
    let d = broken_on(
        PING_PONG,
        name,
        &[("TOGETHER ? CTHREADS : 128);", "TOGETHER ? CTHREADS : 256);")],
    );
    let m = message(kind(name, &d, "barrier_divergence")).to_string();
    assert!(
        m.contains("deadlock") && m.contains("mbarrier.try_wait.parity"),
        "{name}: {m}"
    );
}
