//! Puzzle 12's solution has two paths: `mma.sync` for every GPU with tensor cores, and `wgmma`
//! where it is compiled for Hopper's `sm_90a` (`__CUDA_ARCH_FEAT_SM90_ALL` defined). (Puzzle 11
//! keeps its two kernels in two files, `puzzle-11.cu` and `puzzle-11-hopper.cu`, which `runner
//! validate` checks each as it is.)
//! `runner validate` checks the solution as the runner compiles it (for `sm_90a`, since the source
//! names `wgmma`: the `wgmma` path, on the simulator too); this test checks the portable path on its
//! own, whatever the architecture, by turning `HOPPER` off in a copy of the file, so that neither
//! path can break unseen when the other is the one the runner picks.

mod common;

use common::{check_kernel, mutate};

const SOLUTIONS: [(&str, &str); 1] = [("puzzle-12", "solutions/puzzle-12.cu")];
const GUARD: &str = "#define HOPPER 1";

#[test]
fn the_portable_paths_pass_on_the_simulator() {
    for (puzzle, solution) in SOLUTIONS {
        let name = format!("{puzzle}_portable");
        let (file, _) = mutate(solution, &name, &[(GUARD, "#define HOPPER 0")]);
        let (passed, d) = check_kernel(puzzle, &file, "sim", &[]);
        assert!(passed && d.is_empty(), "{puzzle}: {d:#?}");
    }
}

#[test]
fn the_guard_is_the_one_the_solutions_use() {
    // The edit above must hit the line that chooses the path (and each file must keep both paths).
    for (puzzle, solution) in SOLUTIONS {
        let src = std::fs::read_to_string(common::repo().join(solution)).unwrap();
        assert_eq!(src.matches(GUARD).count(), 1, "{puzzle}");
        assert!(
            src.contains("mma.sync.aligned.m16n8k8") && src.contains("wgmma.mma_async"),
            "{puzzle}"
        );
    }
}
