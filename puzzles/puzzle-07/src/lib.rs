//! Puzzle 07: Triton-style broadcast tiles, on the valid contract.
//!
//! The program-owns-a-tile model in CUDA: a block owns BLOCK_SIZE outputs and walks the kernel
//! K_BLOCK taps at a time; input indices come from broadcasting the column of output offsets
//! against the row of kernel offsets, and masks stand in for branches. THREADS threads share the
//! BLOCK_SIZE rows. The full case is the measured anchor's shape: BLOCK_SIZE 2048, K_BLOCK 4,
//! 128 threads (Triton's four warps). Contract and cases: puzzle 04's.

use puzzle_04::cases;
use puzzle_04::layout::{Layout, Plan};
use spec::{Puzzle, Scale};

const PLAN: Plan = Plan {
    small: |tpb| Layout::Broadcast {
        block_size: 2 * tpb,
        k_block: 4,
        threads: tpb,
    },
    full: Layout::Broadcast {
        block_size: 2048,
        k_block: 4,
        threads: 128,
    },
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-07",
        title: "Triton-style broadcast tiles",
        grade: 4,
        kernel: "conv1d",
        params: puzzle_04::PARAMS,
        teaches: "a program owns BLOCK_SIZE outputs; offsets broadcast into an index grid; masks instead of branches",
        hints: &[
            "Read the Triton program in the chapter first: each line becomes a few lines of CUDA.",
            "tl.arange(0, BLOCK_SIZE) is spread over the block: thread t holds rows t, t + THREADS, ... (BLOCK_SIZE / THREADS of them), each with its own offs_o, mask_o and acc.",
            "For each chunk k0 of K_BLOCK taps: load the K_BLOCK taps (masked, 0.0 past kernel_size), then for each row sum x * w over the chunk, where x is input[offs_o + offs_k] masked by mask_o && offs_k < kernel_size.",
            "kernel_size need not be a multiple of K_BLOCK: the mask on offs_k makes the last chunk's missing taps count as zero.",
        ],
        budget: None,
        tolerance: puzzle_04::TOLERANCE,
        cases: |scale: Scale| cases::cases(&PLAN, 70, scale),
        shrink: Some(cases::shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| cases::fresh(&PLAN, 70, seed, scale)),
        draw: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_covers_every_output_and_rows_divide_evenly() {
        for c in cases::cases(&PLAN, 70, Scale::Small) {
            let Layout::Broadcast {
                block_size,
                k_block,
                threads,
            } = Layout::of(&c)
            else {
                panic!("{}", c.name)
            };
            assert_eq!(block_size % threads, 0, "{}", c.name);
            assert_eq!(c.job.launch.block[0], threads);
            assert!(
                u64::from(block_size) * c.job.launch.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
            assert_eq!(k_block, 4);
        }
    }

    #[test]
    fn some_kernel_is_not_a_multiple_of_k_block() {
        assert!(
            cases::cases(&PLAN, 70, Scale::Small).iter().any(|c| c
                .job
                .scalar("kernel_size")
                .unwrap()
                % 4
                != 0)
        );
    }
}
