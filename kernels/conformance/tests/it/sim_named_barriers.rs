//! Named barriers (`bar.sync a, b`, `bar.arrive a, b`, `barrier.{sync,arrive}.aligned`) and
//! `setmaxnreg` on the simulator, from the warp-specialized kernels of `sync/barriers.cu`:
//! producers and consumers ordered by two named barriers run clean with the right output, and
//! each broken variant stops with its diagnostic at its line (or, for a read the barrier does
//! not order, a race).

use crate::sync;

use spec::Kind;
use sync::{expected, sim};

fn line_of(needle: &str, after: &str) -> u32 {
    let start = sync::SOURCE.find(after).expect("the kernel");
    let at = start + sync::SOURCE[start..].find(needle).expect("the line");
    sync::SOURCE[..at].lines().count() as u32
}

#[test]
fn producers_and_consumers_on_two_named_barriers_are_clean_and_right() {
    for kernel in ["named_ok", "named_aligned_ok"] {
        let o = sim(kernel, 128);
        assert!(o.diagnostics.is_empty(), "{kernel}: {:#?}", o.diagnostics);
        assert_eq!(o.outputs[0], expected(|x| x * 2.0 + 1.0), "{kernel}");
    }
}

#[test]
fn a_named_barrier_orders_the_lanes_of_one_warp_too() {
    let o = sim("named_same_warp_ok", 128);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    let x = sync::input();
    let want: Vec<f32> = (0..x.len()).map(|i| x[i ^ 1]).collect();
    assert_eq!(o.outputs[0], want);
}

#[test]
fn arrivals_expecting_different_counts_deadlock() {
    let o = sim("named_count_mismatch", 192);
    sync::found_without_spinning(&o, "named_count_mismatch");
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence, "{d:#?}");
    for words in [
        "deadlock",
        "threads 64-127 wait at barrier 1",
        "128 of the 192 threads it expects have arrived",
        "different thread counts",
        "128-191 exited",
    ] {
        assert!(d.message.contains(words), "{words}: {}", d.message);
    }
    assert_eq!(
        d.line,
        Some(line_of("bar.sync 1, 192", "named_count_mismatch"))
    );
}

#[test]
fn a_barrier_id_past_15_is_diagnosed_at_its_line() {
    let o = sim("named_bad_id", 128);
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("names barrier 16") && d.message.contains("0 to 15"),
        "{}",
        d.message
    );
    assert_eq!(d.line, Some(line_of("bar.sync %0", "named_bad_id")));
}

#[test]
fn a_thread_count_not_a_multiple_of_32_is_diagnosed() {
    let o = sim("named_bad_count", 128);
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("expects 48 threads") && d.message.contains("multiple of 32"),
        "{}",
        d.message
    );
}

#[test]
fn a_missing_arrive_is_a_deadlock_not_a_hang() {
    let o = sim("named_missing_arrive", 128);
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence, "{d:#?}");
    assert!(
        d.message.contains("threads 64-127 wait at barrier 1")
            && d.message.contains("64 of the 128 threads")
            && d.message.contains("threads 0-63 exited"),
        "{}",
        d.message
    );
    assert_eq!(
        d.line,
        Some(line_of("bar.sync 1, 128", "named_missing_arrive"))
    );
    sync::found_without_spinning(&o, "named_missing_arrive");
}

#[test]
fn a_read_the_barrier_does_not_order_is_a_race() {
    let o = sim("named_reader_does_not_wait", 128);
    assert!(
        o.diagnostics
            .iter()
            .any(|d| d.kind == Kind::Race && d.message.contains("buf")),
        "{:#?}",
        o.diagnostics
    );
}

#[test]
fn setmaxnreg_in_whole_warpgroups_is_clean() {
    let o = sim("maxnreg_ok", 256);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    let x = sync::input();
    assert_eq!(o.outputs[0], x.iter().map(|v| v + 1.0).collect::<Vec<_>>());
}

#[test]
fn setmaxnreg_outside_24_to_256_or_by_half_a_warp_is_diagnosed() {
    let d = &sim("maxnreg_bad_count", 256).diagnostics[0];
    assert!(d.message.contains("asks for 20 registers"), "{}", d.message);
    assert_eq!(
        d.line,
        Some(line_of(
            "setmaxnreg.dec.sync.aligned.u32 20",
            "maxnreg_bad_count"
        ))
    );
    let d = &sim("maxnreg_half_warp", 128).diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("every thread of the warp") && d.message.contains("threads 16-31"),
        "{}",
        d.message
    );
}
