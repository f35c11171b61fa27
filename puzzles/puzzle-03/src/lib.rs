//! Puzzle 03: across the block boundary, on the classic contract.
//!
//! Several blocks of TPB threads; each block loads a shared tile of TPB + CONV - 1 elements of
//! `a`: its own TPB plus the halo of CONV - 1 from the next block, zero-filled past the end of the
//! input. The budget is at most three global reads per thread (its element of `a`, one halo
//! element, one element of `b`) and one write. CONV <= TPB in every case, so the first CONV - 1
//! threads can load the halo. The contract and reference are puzzle 01's.

use puzzle_01::{PARAMS, Shape, TOLERANCE, case, fresh_with, ramp, random_case, shrink_with};
use spec::job::Budget;
use spec::{Case, Puzzle, Rng, Scale};

const SHAPE: Shape = Shape {
    one_block: false,
    budget: Some(Budget {
        reads: 3,
        writes: 1,
        ..Budget::NONE
    }),
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-03",
        title: "Across the block boundary",
        grade: 2,
        kernel: "conv1d",
        params: PARAMS,
        teaches: "a shared tile of TPB + CONV - 1, the halo from the next block, zero-filling past the end",
        hints: &[
            "Size the tile for the block's outputs and the taps that reach past them: __shared__ float tile[TPB + CONV - 1];",
            "Thread t loads a[blockIdx.x * TPB + t] into tile[t]; threads t < CONV - 1 also load tile[TPB + t], the halo from the next block.",
            "An element past the end of a must still be written: store 0.0f, so the sum needs no bounds check.",
            "Load b into shared memory too (thread t < conv), then __syncthreads() before computing.",
        ],
        budget: SHAPE.budget,
        tolerance: TOLERANCE,
        cases,
        shrink: Some(shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| {
            fresh_with(SHAPE, &cases(scale), seed, |rng| {
                let tpb = rng.pick(&[8, 16, 32, 64, 128]);
                let size = rng.size(1, 3000);
                (tpb, size, rng.size(1, size.min(tpb as usize)))
            })
        }),
        draw: None,
    }
}

fn shrink(failing: &Case) -> Vec<Case> {
    shrink_with(SHAPE, failing)
}

fn cases(scale: Scale) -> Vec<Case> {
    let mut rng = Rng::new(3);
    let mut cases = vec![
        case("example-1", SHAPE, 8, ramp(6), ramp(3), Scale::Small),
        case("example-2", SHAPE, 8, ramp(15), ramp(4), Scale::Small),
        case("edge-size-1", SHAPE, 8, vec![2.5], vec![-1.5], Scale::Small),
        case(
            "edge-conv-equals-tpb",
            SHAPE,
            8,
            rng.signal(20),
            rng.signal(8),
            Scale::Small,
        ),
        case(
            "edge-three-blocks",
            SHAPE,
            16,
            rng.signal(45),
            rng.signal(6),
            Scale::Small,
        ),
        random_case("random-1", SHAPE, 32, 100, 9, 31),
        random_case("random-2", SHAPE, 64, 333, 17, 32),
        random_case("random-3", SHAPE, 128, 1000, 64, 33),
    ];
    if scale == Scale::Full {
        cases.push(case(
            "full",
            SHAPE,
            256,
            rng.signal(1 << 20),
            rng.signal(255),
            Scale::Full,
        ));
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halo_fits_in_the_block() {
        for c in cases(Scale::Small) {
            let conv = c.job.scalar("conv").unwrap() as u32;
            assert!(
                conv <= c.job.launch.block[0],
                "{}: the first CONV - 1 threads load the halo",
                c.name
            );
        }
    }

    #[test]
    fn some_case_spans_three_blocks_with_a_partial_last() {
        assert!(
            cases(Scale::Small)
                .iter()
                .any(|c| c.job.launch.blocks() >= 3
                    && c.expected.len() % c.job.launch.block[0] as usize != 0)
        );
    }
}
