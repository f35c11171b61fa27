//! Puzzle 02: one block, shared memory, on the classic contract.
//!
//! A single block of TPB >= SIZE threads loads `a` and `b` into `__shared__` arrays once, waits at
//! a barrier, then computes from shared memory. The budget makes the point: each thread may read
//! global memory at most twice (one element of `a`, one of `b`) and write it once. The contract
//! and reference are puzzle 01's.

use puzzle_01::{PARAMS, Shape, TOLERANCE, case, fresh_with, ramp, random_case, shrink_with};
use spec::job::Budget;
use spec::{Case, Puzzle, Rng, Scale};

const SHAPE: Shape = Shape {
    one_block: true,
    budget: Some(Budget {
        reads: 2,
        writes: 1,
        ..Budget::NONE
    }),
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-02",
        title: "One block, shared memory",
        grade: 2,
        kernel: "conv1d",
        params: PARAMS,
        teaches: "load once into __shared__, __syncthreads(), then compute",
        hints: &[
            "Declare two static arrays: __shared__ float sa[TPB]; __shared__ float sb[CONV]; (the runner defines TPB and CONV).",
            "Thread i copies a[i] into shared memory if i < size, and b[i] if i < conv: that is its two global reads.",
            "Call __syncthreads() after the copies and before any thread reads another thread's element.",
            "Then sum sa[i + j] * sb[j] for j < conv with i + j < size, and write out[i] once.",
        ],
        budget: SHAPE.budget,
        tolerance: TOLERANCE,
        cases,
        shrink: Some(shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| {
            fresh_with(SHAPE, &cases(scale), seed, |rng| {
                let tpb = rng.pick(&[32, 64, 128, 256]);
                let size = rng.size(1, tpb as usize);
                (tpb, size, rng.size(1, size.min(64)))
            })
        }),
        draw: None,
    }
}

fn shrink(failing: &Case) -> Vec<Case> {
    shrink_with(SHAPE, failing)
}

fn cases(scale: Scale) -> Vec<Case> {
    let mut rng = Rng::new(2);
    let mut cases = vec![
        case("example-1", SHAPE, 8, ramp(6), ramp(3), Scale::Small),
        case("edge-size-1", SHAPE, 8, vec![2.5], vec![-1.5], Scale::Small),
        case(
            "edge-conv-equals-size",
            SHAPE,
            8,
            rng.signal(7),
            rng.signal(7),
            Scale::Small,
        ),
        case(
            "edge-full-block",
            SHAPE,
            32,
            rng.signal(32),
            rng.signal(5),
            Scale::Small,
        ),
        random_case("random-1", SHAPE, 64, 50, 6, 21),
        random_case("random-2", SHAPE, 128, 121, 13, 22),
        random_case("random-3", SHAPE, 256, 255, 31, 23),
    ];
    if scale == Scale::Full {
        cases.push(case(
            "full",
            SHAPE,
            1024,
            rng.signal(1024),
            rng.signal(64),
            Scale::Full,
        ));
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_fits_one_block() {
        for c in cases(Scale::Small) {
            assert_eq!(c.job.launch.blocks(), 1, "{}", c.name);
            assert!(
                c.job.launch.block[0] as usize >= c.expected.len(),
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn teaching_case_matches_the_curriculum() {
        let c = &cases(Scale::Small)[0];
        assert_eq!(c.expected, [5.0, 8.0, 11.0, 14.0, 5.0, 0.0]);
    }
}
