//! Tensor maps and TMA tensor copies on the simulator, from the `TMA` kernels of
//! `sync/barriers.cu`: the job declares a 2D map of the kernel's input and one of its output
//! (`sync::TMA_MAPS`, written into the kernel's globals as the runner does), the kernel acquires
//! them, loads 128-byte-swizzled boxes that run past both ends of the tensor through an mbarrier
//! ring, and stores a swizzled staging tile with a tensor store. It runs clean with the right
//! output, and so does a copy of the input's map changed with `tensormap.replace` and published.
//! Each mistake is diagnosed at its line: the rank field given the rank (a `launch_error`, the
//! GPU's illegal instruction), a map built from zeros with `tensormap.replace` and copies through
//! maps never acquired (`launch_error`s: what the PTX ISA does not promise), consumers that read
//! before the copy landed (a race naming the bulk copy), a staging tile rewritten before its
//! store read it (a race naming the store), and a copy through the map still in shared memory (a
//! `launch_error`).

use crate::sync;

use spec::Kind;
use sync::{ITERS, input, sim};

/// What `tma_ring_ok` writes: out[k * 64 + c] = 3 x - 0.5, x the input at row 2k - 4 + c / 8,
/// column (c % 8) * 4 + k % 4 of the 24 x 32 tensor, zero past its rows.
fn expected() -> Vec<f32> {
    let x = input();
    (0..ITERS * 64)
        .map(|i| {
            let (k, c) = ((i / 64) as i64, (i % 64) as i64);
            let (row, col) = (2 * k - 4 + c / 8, (c % 8) * 4 + k % 4);
            let v = if (0..24).contains(&row) {
                x[(row * 32 + col) as usize]
            } else {
                0.0
            };
            v * 3.0 - 0.5
        })
        .collect()
}

#[test]
fn a_ring_of_tensor_loads_and_stores_is_clean_and_right() {
    for kernel in ["tma_ring_ok", "tma_rebuilt_ok"] {
        let o = sim(kernel, 96);
        assert!(o.diagnostics.is_empty(), "{kernel}: {:#?}", o.diagnostics);
        assert_eq!(o.outputs[0], expected(), "{kernel}");
    }
}

#[test]
fn a_map_built_from_zeros_is_a_launch_error_at_its_replace() {
    let d = first("tma_zeros", Kind::LaunchError);
    assert!(
        d.message.contains("tensormap.replace.tile.rank")
            && d.message.contains("never a valid one"),
        "{}",
        d.message
    );
    assert_eq!(d.thread, Some([0, 0, 0]));
}

#[test]
fn a_copy_through_a_map_never_acquired_is_a_launch_error() {
    let d = first("tma_no_fence", Kind::LaunchError);
    assert!(
        d.message.contains("never acquired")
            && d.message
                .contains("fence.proxy.tensormap::generic.acquire.sys [map], 128;"),
        "{}",
        d.message
    );
}

fn first(kernel: &str, kind: Kind) -> spec::Diagnostic {
    let o = sim(kernel, 96);
    o.diagnostics
        .iter()
        .find(|d| d.kind == kind)
        .unwrap_or_else(|| panic!("{kernel}: {:#?}", o.diagnostics))
        .clone()
}

#[test]
fn a_rank_field_given_the_rank_is_a_launch_error() {
    let d = first("tma_rank", Kind::LaunchError);
    assert!(
        d.message
            .contains("has rank 3 where the copy gives 2 coordinates")
            && d.message.contains("illegal instruction"),
        "{}",
        d.message
    );
    assert_eq!(d.thread, Some([0, 0, 0]));
}

#[test]
fn reading_a_stage_before_its_tensor_copy_landed_is_a_race() {
    let d = first("tma_no_wait", Kind::Race);
    assert!(
        d.message.contains("bulk copy") && d.message.contains("without waiting for the copy"),
        "{}",
        d.message
    );
}

#[test]
fn rewriting_a_tile_its_tensor_store_may_still_read_is_a_race() {
    let d = first("tma_no_read_wait", Kind::Race);
    assert!(
        d.message.contains("may still be reading it") && d.message.contains("wait_group.read"),
        "{}",
        d.message
    );
}

#[test]
fn a_copy_through_a_map_in_shared_memory_is_a_launch_error() {
    let d = first("tma_shared_map", Kind::LaunchError);
    assert!(d.message.contains("is in shared memory"), "{}", d.message);
}
