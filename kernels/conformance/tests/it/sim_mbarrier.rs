//! `mbarrier` on the simulator, from the warp-specialized kernels of `sync/barriers.cu`: a
//! ring of 3 stages with full and empty barriers over 12 iterations (plain stores, and
//! `cp.async` with `cp.async.mbarrier.arrive.noinc`) runs clean with the right output; a
//! wait on the wrong parity or a missing arrive ends as a deadlock within a few thousand
//! instructions (not an endless retry loop); an object never initialized, an over-arrival and an ordinary
//! store into an object are diagnosed at their line; a consumer that reads a stage without
//! waiting for it races.

use crate::sync;

use spec::Kind;
use sync::{expected, sim};

fn line_of(needle: &str) -> u32 {
    let at = sync::SOURCE.find(needle).expect("the line");
    sync::SOURCE[..at].lines().count() as u32
}

#[test]
fn a_ring_of_full_and_empty_mbarriers_is_clean_and_right() {
    for kernel in ["mbar_ring_ok", "mbar_cpasync_ok"] {
        let o = sim(kernel, 96);
        assert!(o.diagnostics.is_empty(), "{kernel}: {:#?}", o.diagnostics);
        assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5), "{kernel}");
    }
}

#[test]
fn a_wait_on_the_wrong_parity_is_a_deadlock() {
    let o = sim("mbar_wrong_parity", 96);
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence, "{d:#?}");
    for words in [
        "deadlock",
        "threads 0-31 wait on the mbarrier",
        "threads 32-95 wait on the mbarrier",
        "phase 0 (parity 0) still waits for 64 of its 64",
        "phase 0 (parity 0) still waits for 32 of its 32",
    ] {
        assert!(d.message.contains(words), "{words}: {}", d.message);
    }
    let at = line_of("mbarrier.try_wait.parity");
    assert!(d.line.is_some_and(|l| (at..=at + 3).contains(&l)), "{d:#?}");
    sync::found_without_spinning(&o, "mbar_wrong_parity");
}

#[test]
fn a_missing_arrive_is_a_deadlock() {
    let o = sim("mbar_missing_arrive", 96);
    sync::found_without_spinning(&o, "mbar_missing_arrive");
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence, "{d:#?}");
    assert!(
        d.message.contains("threads 32-95 wait on the mbarrier")
            && d.message
                .contains("phase 1 (parity 1) still waits for 32 of its 32")
            && d.message.contains("threads 0-31 wait on the mbarrier"),
        "{}",
        d.message
    );
}

#[test]
fn an_uninitialized_mbarrier_is_diagnosed() {
    let d = &sim("mbar_uninitialized", 96).diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("no `mbarrier.init` has initialized"),
        "{}",
        d.message
    );
    // The asm statement spans two lines; `.loc` names its last.
    let at = line_of("mbarrier.arrive.release");
    assert!(d.line == Some(at) || d.line == Some(at + 1), "{d:#?}");
}

#[test]
fn more_arrivals_than_the_count_are_diagnosed() {
    let d = &sim("mbar_over_arrival", 96).diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message
            .contains("more arrivals than it was initialized for"),
        "{}",
        d.message
    );
    assert_eq!(d.thread, Some([1, 0, 0]));
}

/// `kernel` reads the ring before its writes are ordered: a race on `ring`.
fn races_on_the_ring(kernel: &str) {
    let o = sim(kernel, 96);
    assert!(
        o.diagnostics
            .iter()
            .any(|d| d.kind == Kind::Race && d.message.contains("ring")),
        "{kernel}: {:#?}",
        o.diagnostics
    );
}

#[test]
fn a_consumer_that_does_not_wait_races_with_the_producer() {
    races_on_the_ring("mbar_no_wait");
}

#[test]
fn one_lane_waiting_then_a_syncwarp_is_clean_and_without_it_a_race() {
    // Lanes 1-31 park at the __syncwarp() while lane 0 retries its wait: they are not stuck,
    // the producer's arrival lets lane 0 through to meet them.
    let o = sim("mbar_elected_wait_ok", 96);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
    races_on_the_ring("mbar_elected_no_syncwarp");
}

#[test]
fn an_ordinary_store_into_an_mbarrier_is_diagnosed() {
    let d = &sim("mbar_plain_store", 96).diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("ordinary store writes the 8 bytes"),
        "{}",
        d.message
    );
    assert_eq!(d.thread, Some([5, 0, 0]));
}

#[test]
fn state_tokens_test_wait_pending_count_and_inval_work() {
    let o = sim("mbar_token_ok", 64);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    // The token's pending count (before the thread's own arrival) is 1 to 64: every output is the reversed input + 1.
    let x = sync::input();
    for (i, got) in o.outputs[0][..128].iter().enumerate() {
        let (r, t) = (i / 64, i % 64);
        assert_eq!(*got, x[r * 64 + 63 - t] + 1.0, "out[{i}]");
    }
}

#[test]
fn init_of_an_mbarrier_in_use_is_diagnosed() {
    let d = &sim("mbar_reinit_in_use", 64).diagnostics[0];
    assert_eq!(d.kind, Kind::BarrierDivergence);
    assert!(
        d.message.contains("again while it is in use")
            && d.message.contains("32 of 64 arrivals pending"),
        "{}",
        d.message
    );
}

#[test]
fn cluster_barriers_are_not_simulated() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 c)\n{\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nret;\n}\n";
    let o = sim::run(ptx, &sync::job("k", 32));
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::UnsupportedInstruction, "{d:#?}");
    assert!(
        d.message.contains("cluster barriers are not simulated"),
        "{}",
        d.message
    );
}
