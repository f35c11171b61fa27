//! Puzzle 06: register blocking, on the valid contract.
//!
//! Blocks of TPB threads, each thread computing OUTPUTS_PER_THREAD (R) neighbouring outputs: the
//! block owns TPB * R outputs and a shared tile of TPB * R + kernel_size - 1 inputs. A thread keeps
//! a sliding window of R inputs in registers, so each shared read feeds R multiply-adds; the taps
//! come from `c_kernel` as in puzzle 05. The full case runs 64 threads of 16 outputs, the fastest
//! shape measured (65% of an H100's FP32 peak; lab/NOTES.md). Contract and cases: puzzle 04's.

use puzzle_04::cases;
use puzzle_04::layout::{Layout, Plan};
use spec::{Budget, Case, Puzzle, Scale};

/// Small cases: 8 threads of 2 outputs, 32 of 4, 64 of 8 for the hints 8, 32 and 128.
fn small(tpb: u32) -> Layout {
    match tpb {
        0..=8 => Layout::Registers { tpb, per_thread: 2 },
        9..=32 => Layout::Registers { tpb, per_thread: 4 },
        _ => Layout::Registers {
            tpb: 64,
            per_thread: 8,
        },
    }
}

const PLAN: Plan = Plan {
    small,
    full: Layout::Registers {
        tpb: 64,
        per_thread: 16,
    },
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-06",
        title: "Register blocking",
        grade: 4,
        kernel: "conv1d",
        params: puzzle_04::PARAMS,
        teaches: "OUTPUTS_PER_THREAD outputs per thread, a sliding window of inputs in registers, one shared read per R multiply-adds",
        hints: &[
            "The block's tile is puzzle 04's with TPB * OUTPUTS_PER_THREAD in place of TPB; load it the same way.",
            "Thread t owns outputs t * R .. t * R + R - 1 of its block (R = OUTPUTS_PER_THREAD): its inputs start at tile + t * R.",
            "At tap j output r needs x[j + r]: keep window[r] = x[j + r] in registers; moving to j + 1 shifts the window by one and reads one new input.",
            "float acc[R], window[R] with #pragma unroll stay in registers; unroll the tap loop R times too, so the shift costs no instructions.",
        ],
        budget: None,
        tolerance: puzzle_04::TOLERANCE,
        cases: |scale: Scale| {
            let mut cases = cases::cases(&PLAN, 60, scale);
            cases.iter_mut().for_each(window_budget);
            cases
        },
        shrink: Some(cases::shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| {
            let mut cases = cases::fresh(&PLAN, 60, seed, scale);
            cases.iter_mut().for_each(window_budget);
            cases
        }),
        draw: None,
    }
}

/// Sets `case`'s budget of shared reads per product: a register window of R outputs reads
/// `kernel_size + R - 1` inputs for its `kernel_size * R` products, and the budget allows a
/// quarter more (room for a window loaded another way). A product is each multiply on the CUDA
/// cores, whatever its instruction (`fma`, or a `mul` its add was not fused into, `__fmul_rn`)
/// or precision. A kernel that reads each input from shared memory for each product makes one
/// read per product, over the budget wherever `kernel_size` and R are both above 1 (with R = 2
/// and 2 taps it allows 15 reads per 16). And puzzle 04's tile: each block reads its
/// `TPB * R + kernel_size - 1` inputs once, so that a window read from global memory does not
/// pass for one kept in registers.
pub fn window_budget(case: &mut Case) {
    let Layout::Registers { tpb, per_thread: r } = Layout::of(case) else {
        return;
    };
    let k = case.job.scalar("kernel_size").unwrap_or(1).max(1) as u32;
    case.job.budget = Some(Budget {
        shared_reads_per_product: Some((5 * (k + r - 1), 4 * k * r)),
        tile_reads: Some(spec::TileReads {
            buf: 0,
            tile: tpb * r + k - 1,
            slack: puzzle_04::SLACK,
            unread: None,
        }),
        ..Budget::NONE
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_covers_every_output_with_its_tile() {
        for c in cases::cases(&PLAN, 60, Scale::Small) {
            let l = c.job.launch;
            let Layout::Registers { tpb, per_thread } = Layout::of(&c) else {
                panic!("{}", c.name)
            };
            assert_eq!(l.block[0], tpb);
            assert!(
                u64::from(tpb * per_thread) * l.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
            let k = c.job.scalar("kernel_size").unwrap() as u32;
            assert_eq!(l.shared_bytes, (tpb * per_thread + k - 1) * 4, "{}", c.name);
        }
    }

    #[test]
    fn hint_2_and_the_chapter_give_a_threads_outputs_alike() {
        let range = "t * R .. t * R + R - 1";
        assert!(spec().hints[1].contains(range), "{}", spec().hints[1]);
        let chapter = include_str!("../../../book/src/puzzle-06.md");
        assert!(chapter.contains(&format!("`{range}`")));
    }

    #[test]
    fn some_case_has_a_partial_thread_and_a_partial_block() {
        let cases = cases::cases(&PLAN, 60, Scale::Small);
        let partial = |c: &spec::Case, n: usize| !c.expected.len().is_multiple_of(n);
        assert!(cases.iter().any(|c| {
            let Layout::Registers { tpb, per_thread } = Layout::of(c) else {
                return false;
            };
            c.job.launch.blocks() >= 3
                && partial(c, (tpb * per_thread) as usize)
                && partial(c, per_thread as usize)
        }));
    }
}
