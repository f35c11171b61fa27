//! Puzzle 11's solution has two paths: `mma.sync` for every GPU with tensor cores, and `wgmma`
//! where it is compiled for Hopper's `sm_90a` (`__CUDA_ARCH_FEAT_SM90_ALL` defined). `runner
//! validate` checks the solution as the runner compiles it; this test checks the portable path on
//! its own, whatever the architecture, by turning `HOPPER` off in a copy of the file, so that
//! neither path can break unseen when the other is the one the runner picks.

mod common;

use common::{check_kernel, mutate};

const SOLUTION: &str = "solutions/puzzle-11.cu";
const GUARD: &str = "#define HOPPER 1";

#[test]
fn the_portable_path_passes_on_the_simulator() {
    let (file, _) = mutate(SOLUTION, "p11_portable", &[(GUARD, "#define HOPPER 0")]);
    let (passed, d) = check_kernel("puzzle-11", &file, "sim", &[]);
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn the_guard_is_the_one_the_solution_uses() {
    // The edit above must hit the line that chooses the path (and the file must keep both paths).
    let src = std::fs::read_to_string(common::repo().join(SOLUTION)).unwrap();
    assert_eq!(src.matches(GUARD).count(), 1);
    assert!(src.contains("mma.sync.aligned.m16n8k8") && src.contains("wgmma.mma_async"));
}
