//! Puzzle 01: one thread per output, on the classic contract.
//!
//! `out[i] = sum over j < CONV with i + j < SIZE of a[i + j] * b[j]`: taps past the end of the
//! input count as zero, so the output has SIZE elements. This crate also holds the classic
//! contract's reference and case builder, which puzzles 02 and 03 reuse: the three puzzles differ
//! in launch shape and budget, never in what they compute.

use spec::job::{Budget, Launch};
use spec::{Case, ConvArgs, Param, ParamType, Puzzle, Rng, Scale, Tolerance};

/// The fixed interface of puzzles 01 to 03.
pub const PARAMS: &[Param] = &[
    Param {
        name: "a",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "b",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "out",
        ty: ParamType::F32Ptr,
    },
    Param {
        name: "size",
        ty: ParamType::I32,
    },
    Param {
        name: "conv",
        ty: ParamType::I32,
    },
];

/// Float32 sums of at most a few hundred products of values in [-1, 1] land far inside this.
pub const TOLERANCE: Tolerance = Tolerance {
    atol: 1e-4,
    rtol: 1e-4,
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-01",
        title: "One thread per output",
        grade: 1,
        kernel: "conv1d",
        params: PARAMS,
        teaches: "index from block and thread, the guard, the inner loop",
        hints: &[
            "Each thread owns one output: i = blockIdx.x * blockDim.x + threadIdx.x.",
            "The last block has threads past the end: return early when i >= size.",
            "Sum a[i + j] * b[j] for j < conv, but only while i + j < size: taps past the end count as zero.",
        ],
        budget: None,
        tolerance: TOLERANCE,
        cases,
        shrink: Some(shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| {
            fresh_with(SHAPE, &cases(scale), seed, |rng| {
                let size = rng.size(1, 3000);
                (
                    rng.pick(&[8, 32, 64, 128, 256]),
                    size,
                    rng.size(1, size.min(64)),
                )
            })
        }),
        draw: None,
    }
}

/// The classic contract, computed in f64 (on every core: the full case is 267 million terms).
pub fn reference(a: &[f32], b: &[f32]) -> Vec<f64> {
    use rayon::prelude::*;
    (0..a.len())
        .into_par_iter()
        .map(|i| {
            b.iter()
                .enumerate()
                .take_while(|(j, _)| i + j < a.len())
                .map(|(j, &w)| f64::from(a[i + j]) * f64::from(w))
                .sum()
        })
        .collect()
}

/// How a classic-contract puzzle launches: threads per block, and whether one block must cover all.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub one_block: bool,
    pub budget: Option<Budget>,
}

/// The chapter's teaching data: `a[i] = i`, `b[j] = j`.
pub fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

/// A classic-contract case: the macros `TPB`, `SIZE` and `CONV`, and the launch for `shape`.
pub fn case(name: &str, shape: Shape, tpb: u32, a: Vec<f32>, b: Vec<f32>, scale: Scale) -> Case {
    let (size, conv) = (a.len(), b.len());
    let blocks = if shape.one_block {
        1
    } else {
        size.div_ceil(tpb as usize) as u32
    };
    let expected = match scale {
        Scale::Small => reference(&a, &b),
        Scale::Full => {
            spec::refcache::cached(&format!("classic-{name}"), &[&a, &b], || reference(&a, &b))
        }
    };
    let args = ConvArgs {
        names: ["a", "b", "out", "size", "conv"],
        input: &a,
        kernel: &b,
        out_len: size,
        sizes: [size as i32, conv as i32],
    };
    Case {
        name: name.to_string(),
        job: args.job("conv1d", Launch::linear(blocks, tpb), shape.budget, vec![]),
        macros: vec![
            ("TPB".into(), tpb.to_string()),
            ("SIZE".into(), size.to_string()),
            ("CONV".into(), conv.to_string()),
        ],
        expected,
        scale,
        outputs_per_block: None,
        block_tile: None,
    }
}

/// A seeded random case: nonzero values everywhere, the first tap included.
pub fn random_case(
    name: &str,
    shape: Shape,
    tpb: u32,
    size: usize,
    conv: usize,
    seed: u64,
) -> Case {
    let mut rng = Rng::new(seed);
    let a = rng.signal(size);
    let b = rng.signal(conv);
    case(name, shape, tpb, a, b, Scale::Small)
}

/// The cases drawn fresh from `seed` for a classic-contract puzzle ([`spec::Puzzle::fresh`]):
/// each of `published`'s cases at its own sizes and launch with new data (`fresh-<case>`), then
/// three of random sizes (`fresh-random-size-N`), each `(tpb, size, conv)` from `draw`.
pub fn fresh_with(
    shape: Shape,
    published: &[Case],
    seed: u64,
    draw: fn(&mut Rng) -> (u32, usize, usize),
) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut fresh = vec![];
    for c in published {
        let (spec::Arg::Input { data: a, .. }, spec::Arg::Input { data: b, .. }) =
            (&c.job.args[0], &c.job.args[1])
        else {
            continue;
        };
        let mut data = Rng::new(rng.next_u64());
        let (a, b) = (data.signal(a.len()), data.signal(b.len()));
        let name = format!("{}{}", spec::FRESH, c.name);
        fresh.push(case(&name, shape, c.job.launch.block[0], a, b, c.scale));
    }
    // A stream of its own, so that the full case drawn or not leaves these the same.
    let mut rng = Rng::new(seed ^ spec::FRESH_SIZES);
    for n in 1..=3 {
        let (tpb, size, conv) = draw(&mut rng);
        let mut data = Rng::new(rng.next_u64());
        let (a, b) = (data.signal(size), data.signal(conv));
        let name = format!("{}random-size-{n}", spec::FRESH);
        fresh.push(case(&name, shape, tpb, a, b, Scale::Small));
    }
    fresh
}

/// Smaller versions of a classic case, smallest first: the same data cut to each smaller size,
/// keeping the launch rule, so a failure is reported where it is easiest to read.
pub fn shrink_with(shape: Shape, failing: &Case) -> Vec<Case> {
    let (a, b, tpb) = match (&failing.job.args[0], &failing.job.args[1]) {
        (spec::Arg::Input { data: a, .. }, spec::Arg::Input { data: b, .. }) => {
            (a.clone(), b.clone(), failing.job.launch.block[0])
        }
        _ => return vec![],
    };
    let mut sizes: Vec<usize> = vec![1, 2, 3, 5, 8, 13, 21, 34, 55, 89];
    sizes.retain(|&n| n < a.len());
    sizes
        .into_iter()
        .map(|n| {
            let conv = b.len().min(n);
            let mut c = case(
                &failing.name,
                shape,
                tpb,
                a[..n].to_vec(),
                b[..conv].to_vec(),
                failing.scale,
            );
            c.name = format!("{} (cut to size {n}, conv {conv})", failing.name);
            c
        })
        .collect()
}

const SHAPE: Shape = Shape {
    one_block: false,
    budget: None,
};

fn shrink(failing: &Case) -> Vec<Case> {
    shrink_with(SHAPE, failing)
}

fn cases(scale: Scale) -> Vec<Case> {
    let mut rng = Rng::new(1);
    let big = 16_384;
    let mut cases = vec![
        case("example-1", SHAPE, 8, ramp(6), ramp(3), Scale::Small),
        case("example-2", SHAPE, 8, ramp(15), ramp(4), Scale::Small),
        case("edge-size-1", SHAPE, 8, vec![2.5], vec![-1.5], Scale::Small),
        case(
            "edge-conv-equals-size",
            SHAPE,
            8,
            rng.signal(5),
            rng.signal(5),
            Scale::Small,
        ),
        random_case("random-1", SHAPE, 8, 37, 5, 11),
        random_case("random-2", SHAPE, 32, 100, 7, 12),
        random_case("random-3", SHAPE, 64, 257, 16, 13),
        case(
            "large",
            SHAPE,
            256,
            rng.signal(big),
            rng.signal(255),
            Scale::Small,
        ),
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
    fn teaching_cases_match_the_curriculum() {
        assert_eq!(
            reference(&ramp(6), &ramp(3)),
            [5.0, 8.0, 11.0, 14.0, 5.0, 0.0]
        );
        let want = [
            14., 20., 26., 32., 38., 44., 50., 56., 62., 68., 74., 80., 41., 14., 0.,
        ];
        assert_eq!(reference(&ramp(15), &ramp(4)), want);
    }

    #[test]
    fn random_cases_catch_a_skipped_first_tap() {
        for c in cases(Scale::Small)
            .iter()
            .filter(|c| c.name.starts_with("random"))
        {
            let (spec::Arg::Input { data: a, .. }, spec::Arg::Input { data: b, .. }) =
                (&c.job.args[0], &c.job.args[1])
            else {
                panic!("case {} has no inputs", c.name)
            };
            let mut skipped = b.clone();
            skipped[0] = 0.0;
            let wrong = reference(a, &skipped);
            assert!(
                wrong
                    .iter()
                    .zip(&c.expected)
                    .any(|(w, e)| !TOLERANCE.accepts(*w as f32, *e))
            );
            assert_ne!(
                *c.expected.last().unwrap(),
                0.0,
                "the last element must not be 0"
            );
        }
    }

    #[test]
    fn launch_covers_every_output() {
        for c in cases(Scale::Small) {
            let l = c.job.launch;
            assert!(
                u64::from(l.threads_per_block()) * l.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn shrinking_keeps_the_launch_rule() {
        let c = cases(Scale::Small)
            .into_iter()
            .find(|c| c.name == "random-3")
            .unwrap();
        let smaller = shrink(&c);
        assert_eq!(smaller.first().unwrap().expected.len(), 1);
        assert!(smaller.iter().all(|s| s.expected.len() < c.expected.len()));
    }
}
