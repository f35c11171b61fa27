//! Puzzle 08: as fast as the hardware allows, on the valid contract.
//!
//! The learner chooses the launch. The kernel file declares it as
//! `extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};`
//! and the runner, after compiling, reads it from the PTX ([`spec::shape`]) and launches
//! `ceil(output_size / OUTPUTS_PER_BLOCK)` blocks of THREADS threads with SHARED_BYTES of dynamic
//! shared memory ([`spec::Puzzle::resolve_launch`]). Until then the cases carry a
//! placeholder launch of no blocks. No macros are defined. Contract and cases: puzzle 04's.

use puzzle_04::cases;
use puzzle_04::layout::{Layout, Plan, SHAPE_SYMBOL};
use spec::{DeclaredLaunch, LaunchRule, Puzzle, Scale};

const PLAN: Plan = Plan {
    small: |_| Layout::Declared,
    full: Layout::Declared,
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-08",
        title: "As fast as the hardware allows",
        grade: 5,
        kernel: "conv1d",
        params: puzzle_04::PARAMS,
        teaches: "choose the launch; wide register tiles, float4 shared reads, taps broadcast, occupancy and the last wave",
        hints: &[
            "Declare the launch first: extern \"C\" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES}; then get a correct kernel before a fast one.",
            "Count instructions per multiply-add: puzzle 06 spends one shared read per R of them; read the taps too from shared memory as float4 (one read, four taps, every thread the same address) and the window as float4.",
            "Walk the taps in chunks of R with two register windows a and b whose roles swap each chunk: every index is a compile-time constant, so nothing is copied.",
            "Count blocks per SM: with 132 SMs, a grid of 781 blocks is 5.9 per SM, a grid of 976 is 7.4 (the last wave is a quarter full). Choose OUTPUTS_PER_BLOCK so the grid divides well.",
        ],
        budget: None,
        tolerance: puzzle_04::TOLERANCE,
        cases: |scale: Scale| cases::cases(&PLAN, 80, scale),
        shrink: Some(cases::shrink),
        fresh: Some(|seed, scale| cases::fresh(&PLAN, 80, seed, scale)),
        draw: None,
        declared_launch: Some(DeclaredLaunch {
            symbol: SHAPE_SYMBOL,
            rule: LaunchRule::Linear,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::shape::LaunchShape;

    /// NVRTC 13.0's PTX line for the reference solution's declaration, {640, 11520, 62576}
    /// (trailing zero bytes are left out of the initializer).
    const SOLUTION_PTX: &str =
        ".global .align 4 .b8 launch_shape[12] = {128, 2, 0, 0, 0, 45, 0, 0, 112, 244};";

    #[test]
    fn cases_wait_for_the_kernel_to_declare_its_launch() {
        for c in cases::cases(&PLAN, 80, Scale::Small) {
            assert_eq!(c.job.launch, DeclaredLaunch::PLACEHOLDER, "{}", c.name);
            assert!(
                c.macros.is_empty() && c.job.constants.is_empty(),
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn the_declared_launch_covers_every_output() {
        let shape =
            LaunchShape::from_ptx(SOLUTION_PTX, SHAPE_SYMBOL, "solutions/puzzle-08.cu").unwrap();
        assert_eq!(
            shape,
            LaunchShape {
                threads: 640,
                outputs_per_block: 11520,
                shared_bytes: 62576
            }
        );
        let mut cases = cases::cases(&PLAN, 80, Scale::Small);
        spec()
            .resolve_launch(SOLUTION_PTX, "solutions/puzzle-08.cu", &mut cases)
            .unwrap();
        for c in &cases {
            let l = c.job.launch;
            assert_eq!((l.block[0], l.shared_bytes), (640, 62576), "{}", c.name);
            assert!(
                u64::from(shape.outputs_per_block) * l.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
        }
        // The full case: 1,497,954 outputs in 131 blocks, one per SM of an H100 (132 SMs).
        assert_eq!(
            shape
                .launch(cases::FULL_INPUT - cases::FULL_KERNEL + 1)
                .grid[0],
            131
        );
    }

    #[test]
    fn a_kernel_without_a_shape_is_told_what_to_declare() {
        let mut cases = cases::cases(&PLAN, 80, Scale::Small);
        let d = spec()
            .resolve_launch(
                ".visible .entry conv1d(",
                "puzzles/puzzle-08/kernel.cu",
                &mut cases,
            )
            .unwrap_err();
        assert_eq!(d.kind, spec::Kind::BadLaunchShape);
        assert!(d.message.contains("launch_shape[3]"), "{}", d.message);
    }
}
