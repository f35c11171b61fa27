//! Bulk copies (`cp.async.bulk`, the TMA unit's one-dimensional form) and mbarrier transaction
//! counts on the simulator, from the `BULK` kernels of `sync/barriers.cu`: a ring filled by
//! one bulk copy a stage (`arrive.expect_tx`, `complete_tx` by the copy) and drained by bulk
//! stores from a staging row (`bulk_group`, `wait_group.read`) runs clean with the right output.
//! Each mistake is diagnosed at its line: announced bytes that do not match the copy leave the
//! phase waiting (a deadlock saying how many bytes it still owes, or that the count went
//! negative); consumers that read without waiting race with the copy; a staging row written
//! again before its store has read it races with the store; a misaligned copy is named. The
//! wait alone orders a copy before the reads of every warp that waits, the copying thread's own
//! warp included (no false race when that thread does not wait itself), and lanes of that warp
//! that read without waiting still race.

use crate::sync;

use spec::Kind;
use sync::{expected, sim};

fn line_of(needle: &str) -> u32 {
    let at = sync::SOURCE.find(needle).expect("the line");
    sync::SOURCE[..at].lines().count() as u32
}

#[test]
fn a_ring_of_bulk_loads_and_stores_is_clean_and_right() {
    let o = sim("bulk_ring_ok", 96);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
}

#[test]
fn announced_bytes_that_do_not_match_the_copy_are_a_deadlock() {
    for (kernel, words) in [
        ("bulk_long_expect", "for 256 more bytes of copies"),
        ("bulk_short_expect", "its transaction count is -128 bytes"),
    ] {
        let o = sim(kernel, 96);
        let d = &o.diagnostics[0];
        assert_eq!(d.kind, Kind::BarrierDivergence, "{kernel}: {d:#?}");
        assert!(
            d.message.contains("deadlock") && d.message.contains(words),
            "{kernel}: {}",
            d.message
        );
        sync::found_without_spinning(&o, kernel);
    }
}

/// The run of `kernel` and its race diagnostic.
fn race(kernel: &str) -> (spec::job::RunOutput, spec::Diagnostic) {
    let o = sim(kernel, 96);
    let d = o
        .diagnostics
        .iter()
        .find(|d| d.kind == Kind::Race)
        .unwrap_or_else(|| panic!("{kernel}: {:#?}", o.diagnostics))
        .clone();
    (o, d)
}

#[test]
fn reading_a_stage_without_waiting_for_its_copy_races_with_it() {
    let (_, d) = race("bulk_no_wait");
    assert!(
        d.message.contains("`ring") && d.message.contains("bulk copy (`cp.async.bulk`)"),
        "{}",
        d.message
    );
}

#[test]
fn a_staging_row_written_before_its_store_has_read_it_races_with_the_store() {
    let (o, d) = race("bulk_no_read_wait");
    assert!(
        d.message.contains("`staged") && d.message.contains("cp.async.bulk.wait_group.read"),
        "{}",
        d.message
    );
    let at = line_of("staged[k & 1][c] = v;");
    assert!(
        d.line.is_some_and(|l| l.abs_diff(at) <= 40),
        "{d:#?} (the macro's lines are around {at})"
    );
    // The output is still right: the simulator's store read the row when it was issued.
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
}

#[test]
fn a_misaligned_bulk_copy_is_diagnosed() {
    let o = sim("bulk_misaligned", 96);
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, Kind::OutOfBounds, "{d:#?}");
    assert!(
        d.message
            .contains("a positive multiple of 16 bytes between 16-byte-aligned addresses"),
        "{d:#?}"
    );
    assert_eq!(d.thread, Some([0, 0, 0]));
}

#[test]
fn the_im2col_and_multicast_forms_are_not_simulated() {
    let head = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 c)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n";
    for (body, words) in [
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r2, %r2}], [%r3], {%rs1};",
            "`.im2col` mode is not simulated",
        ),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 256, [%r3], %rs1;",
            "clusters are not simulated",
        ),
    ] {
        let ptx = format!("{head}.reg .b16 %rs<2>;\n{body}\nret;\n}}\n");
        let o = sim::run(&ptx, &sync::job("k", 32));
        let d = &o.diagnostics[0];
        assert_eq!(d.kind, Kind::UnsupportedInstruction, "{d:#?}");
        assert!(d.message.contains(words), "{}", d.message);
    }
}

#[test]
fn the_wait_alone_orders_a_copy_before_the_reads_of_every_warp() {
    let o = sim("bulk_wait_only_ok", 96);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
}

#[test]
fn lanes_that_wait_read_a_copy_their_own_warps_thread_issued() {
    let o = sim("bulk_issuer_skips_wait_ok", 96);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
    // The same lanes reading without the wait race with the copy.
    let (_, d) = race("bulk_issuer_warp_no_wait");
    assert!(d.message.contains("`buf"), "{}", d.message);
}

#[test]
fn reading_a_bulk_stores_destination_before_its_writes_are_waited_for_is_a_race() {
    let o = sim("bulk_store_back_ok", 96);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    assert_eq!(o.outputs[0], expected(|x| x * 3.0 - 0.5));
    // `wait_group.read` says the source was read, not that the writes landed: the issuing
    // thread's own read of the destination races with the store.
    let (_, d) = race("bulk_store_back_early");
    assert_eq!(d.thread, Some([0, 0, 0]), "{d:#?}");
    for words in [
        "reads `out[63]`",
        "while the bulk store that block (0,0,0) thread (0,0,0) issued",
        "`.read` only says its shared source was read",
    ] {
        assert!(d.message.contains(words), "{}", d.message);
    }
}
