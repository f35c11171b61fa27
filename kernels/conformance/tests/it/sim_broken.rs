//! The corpus of broken kernels: for puzzles 01 to 03, the mistakes learners make (a missing
//! barrier, a halo never loaded, no zero fill past the end, a missing guard, a barrier inside a
//! branch, an endless loop, a kernel over its budget, a global write race), each run on one of
//! the puzzle's real cases. Every source in `fixtures/broken/` marks the line its diagnostic
//! must point at with `// expect: KIND`; the test reads the mark, so source and test cannot
//! drift. The PTX was compiled by `fixtures/gen.py` under the path the runner would pass.

use crate::common;

use common::broken::*;
use spec::Kind;

#[test]
fn p01_missing_guard_writes_past_the_end_of_out() {
    let d = check("p01_missing_guard", &P01);
    assert!(d[0].message.contains("`out[100]`"), "{}", d[0].message);
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([3, 0, 0]), Some([4, 0, 0]))
    );
}

#[test]
fn p01_no_tail_check_reads_past_the_end_of_a() {
    let d = check("p01_no_tail_check", &P01);
    assert!(d[0].message.contains("`a[100]`"), "{}", d[0].message);
}

#[test]
fn p01_endless_loop_times_out() {
    check("p01_endless", &P01);
}

#[test]
fn p01_forgotten_block_index_is_a_global_write_race() {
    let d = check("p01_forgot_block", &P01);
    assert!(
        has(
            &d,
            Kind::Race,
            &[
                "block (1,0,0) thread (0,0,0) writes `out[0]`",
                "block (0,0,0) thread (0,0,0) also wrote"
            ]
        ),
        "{d:#?}"
    );
    assert!(
        has(&d, Kind::UnwrittenOutput, &["68 of 100", "`out[32]`"]),
        "{d:#?}"
    );
}

#[test]
fn p01_off_by_one_names_the_owner_of_the_unwritten_element() {
    let d = check("p01_off_by_one", &P01);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].message.contains("1 of 100") && d[0].message.contains("`out[99]`"));
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([3, 0, 0]), Some([3, 0, 0]))
    );
}

#[test]
fn p02_missing_barrier_is_a_shared_race() {
    let d = check("p02_missing_barrier", &P02);
    assert!(has(&d, Kind::Race, &["`sa[", "__syncthreads()"]), "{d:#?}");
    assert!(d.iter().all(|x| x.kind == Kind::Race), "{d:#?}");
}

#[test]
fn p02_tap_never_loaded_is_an_uninitialized_read() {
    let d = check("p02_tap_never_loaded", &P02);
    assert!(d[0].message.contains("`sb[5]`"), "{}", d[0].message);
}

#[test]
fn p02_no_zero_fill_reads_shared_nobody_wrote() {
    let d = check("p02_no_zero_fill", &P02);
    assert!(d[0].message.contains("`sa[50]`"), "{}", d[0].message);
}

#[test]
fn p02_missing_guard_reads_past_the_end_of_a() {
    let d = check("p02_missing_guard", &P02);
    assert!(d[0].message.contains("`a[50]`"), "{}", d[0].message);
    assert_eq!(d[0].thread, Some([50, 0, 0]));
}

#[test]
fn p02_barrier_in_a_branch_names_who_arrived() {
    let d = check("p02_barrier_in_branch", &P02);
    assert!(
        d[0].message.contains("threads 0-49 wait")
            && d[0]
                .message
                .contains("threads 50-63 left at line 12 and exited"),
        "{}",
        d[0].message
    );
}

#[test]
fn p02_endless_loop_times_out() {
    check("p02_endless", &P02);
}

#[test]
fn p02_global_reads_in_the_loop_exceed_the_budget() {
    let d = check("p02_over_budget", &P02);
    assert!(d[0].message.contains("3rd global read"), "{}", d[0].message);
}

#[test]
fn p02_two_threads_per_output_is_a_global_write_race() {
    let d = check("p02_write_race", &P02);
    assert!(
        has(&d, Kind::Race, &["thread (1,0,0) writes `out[0]`"]),
        "{d:#?}"
    );
}

#[test]
fn p03_missing_barrier_is_a_shared_race() {
    let d = check("p03_missing_barrier", &P03);
    assert!(has(&d, Kind::Race, &["`tile["]), "{d:#?}");
}

#[test]
fn p03_halo_never_loaded_is_an_uninitialized_read() {
    let d = check("p03_halo_never_loaded", &P03);
    assert!(d[0].message.contains("`tile[32]`"), "{}", d[0].message);
}

#[test]
fn p03_no_zero_fill_reads_shared_nobody_wrote() {
    // Block 2's halo reaches past the end (its inputs 64..95, halo 96..103) before block 3's tile.
    let d = check("p03_no_zero_fill", &P03);
    assert!(
        d[0].message.contains("`tile[36]`") && d[0].message.contains("block (2,0,0)"),
        "{}",
        d[0].message
    );
}

#[test]
fn p03_missing_guard_reads_past_the_end_of_a() {
    let d = check("p03_missing_guard", &P03);
    assert!(d[0].message.contains("`a[100]`"), "{}", d[0].message);
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([3, 0, 0]), Some([4, 0, 0]))
    );
}

#[test]
fn p03_return_before_the_barrier_is_divergence() {
    let d = check("p03_barrier_in_branch", &P03);
    assert!(
        d[0].message.contains("block (3,0,0)")
            && d[0].message.contains("threads 0-3 wait")
            // The `if` of the `return` on line 11, not the closing brace every exit shares.
            && d[0].message.contains("threads 4-31 left at line 10 and exited"),
        "{}",
        d[0].message
    );
}

#[test]
fn p03_endless_loop_times_out() {
    check("p03_endless", &P03);
}

#[test]
fn p03_global_reads_in_the_loop_exceed_the_budget() {
    let d = check("p03_over_budget", &P03);
    assert!(d[0].message.contains("4th global read"), "{}", d[0].message);
}

#[test]
fn p03_every_block_writing_the_first_outputs_is_a_global_write_race() {
    let d = check("p03_write_race", &P03);
    assert!(
        has(
            &d,
            Kind::Race,
            &["block (1,0,0) thread (0,0,0) writes `out[0]`"]
        ),
        "{d:#?}"
    );
}

/// The access counts of a correct kernel come back for `--stats`, and stay within budget.
#[test]
fn stats_report_each_threads_highest_counts() {
    let ptx = common::ptx("conv_naive", "sm75");
    let out = sim::run(&ptx, &job(&P01));
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let s = out.stats.expect("stats with checks on");
    assert_eq!((s.max_reads, s.max_writes), (2 * 7, 1));
    let off = sim::run_with(
        &ptx,
        &job(&P01),
        &sim::SimOptions {
            checks: false,
            ..Default::default()
        },
    );
    assert_eq!(off.stats, None);
    assert_eq!(off.outputs, out.outputs);
}
