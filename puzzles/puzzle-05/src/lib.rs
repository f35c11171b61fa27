//! Puzzle 05: the kernel in constant memory, on the valid contract.
//!
//! Puzzle 04's launch, and the runner copies the kernel into `__constant__ float c_kernel[2048]`
//! before the launch. Every thread of a warp reads the same tap at the same time, the access the
//! constant cache broadcasts. The chapter measures whether that beats reading the taps through
//! the ordinary caches, and explains why it does not. Contract, cases and reference: puzzle 04's.
//!
//! The lesson is `c_kernel`, so each case carries puzzle 04's budget (each block reads its tile
//! of `input` once) and no read of `kernel` at all. A kernel that still reads its taps from
//! `kernel` gets `budget_exceeded`, naming `c_kernel`, instead of a silent pass.

use puzzle_04::cases;
use puzzle_04::layout::{Layout, Plan};
use spec::{Puzzle, Scale};

const PLAN: Plan = Plan {
    small: |tpb| Layout::Tile {
        tpb,
        constant: true,
    },
    full: Layout::Tile {
        tpb: 512,
        constant: true,
    },
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-05",
        title: "The kernel in constant memory",
        grade: 3,
        kernel: "conv1d",
        params: puzzle_04::PARAMS,
        teaches: "__constant__ memory filled by the runner; uniform reads broadcast; when the cache is as good",
        hints: &[
            "Start from your puzzle 04: the tile and its strided load do not change.",
            "The runner has copied the kernel into c_kernel before the launch: read c_kernel[j] instead of kernel[j].",
            "c_kernel holds 2048 floats and kernel_size <= 2047, so no bounds check on j is needed beyond j < kernel_size.",
        ],
        budget: None,
        tolerance: puzzle_04::TOLERANCE,
        cases: |scale: Scale| budgeted(cases::cases(&PLAN, 50, scale)),
        shrink: Some(cases::shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| budgeted(cases::fresh(&PLAN, 50, seed, scale))),
        draw: None,
    }
}

/// `cases` with their budget: each block reads its tile once, and not one element of `kernel`.
fn budgeted(mut cases: Vec<spec::Case>) -> Vec<spec::Case> {
    for c in &mut cases {
        // Each block's tile once, and not one read of `kernel`.
        puzzle_04::tile_budget(c, true);
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_fills_c_kernel_with_the_kernel() {
        for c in cases::cases(&PLAN, 50, Scale::Small) {
            let [upload] = &c.job.constants[..] else {
                panic!("{}: one upload expected", c.name)
            };
            let spec::Arg::Input { data, .. } = &c.job.args[1] else {
                panic!()
            };
            assert_eq!(
                (upload.symbol.as_str(), &upload.data),
                ("c_kernel", data),
                "{}",
                c.name
            );
            assert!(data.len() <= 2048);
        }
    }

    #[test]
    fn every_case_allows_the_blocks_tile_and_no_read_of_kernel() {
        for c in (spec().cases)(Scale::Small) {
            let b = c.job.budget.expect("a budget");
            let k = c.job.scalar("kernel_size").unwrap() as u32;
            let tpb = c.job.launch.block[0];
            let t = b.tile_reads.expect("a tile budget");
            assert_eq!(
                (t.buf, t.tile, t.unread),
                (0, tpb + k - 1, Some(1)),
                "{}",
                c.name
            );
            assert_eq!(
                (b.reads, b.writes),
                (spec::Budget::NO_LIMIT, spec::Budget::NO_LIMIT)
            );
        }
    }

    #[test]
    fn launch_covers_every_output() {
        for c in cases::cases(&PLAN, 50, Scale::Small) {
            let l = c.job.launch;
            assert!(
                u64::from(l.threads_per_block()) * l.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
        }
    }
}
