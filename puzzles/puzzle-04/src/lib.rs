//! Puzzle 04: tiles of any size. The valid contract starts here.
//!
//! `output[i] = sum over j < kernel_size of input[i + j] * kernel[j]` for
//! `i < input_size - kernel_size + 1`: no padding, so the output is shorter than the input (as in
//! PyTorch's `conv1d` and the online judges). One block of TPB threads computes TPB outputs from
//! a tile of `TPB + kernel_size - 1` inputs in dynamic shared memory, for any kernel up to 2047.
//!
//! This crate also holds what puzzles 05 to 08 share: the parameter list, the reference, the
//! tolerance, the [`layout`]s and the [`cases`]. The five puzzles compute the same function on the
//! same cases and differ only in how they launch.
//!
//! # The tolerance
//!
//! Inputs and taps are uniform in [-1, 1), so a full-scale output (2047 products) is a sum of
//! magnitude about 15 whose float32 partial sums round at about 1e-6 each; over 2047 steps the
//! error of a correct kernel is a few 1e-5, and its largest over 1.5 million outputs about 1e-4,
//! whatever the order of the sum. The judge's `atol = rtol = 1e-4` would then fail correct kernels
//! where an output is near zero; `atol = rtol = 1e-3` keeps them 30 times inside. A wrong kernel
//! cannot hide inside it: the first tap is at least 0.25 in magnitude, so skipping it moves an
//! output by `|input[i] * kernel[0]|`, above 0.1 for most outputs. The test
//! `tolerance_separates_float32_orders_from_a_skipped_tap` checks both claims.

pub mod cases;
pub mod layout;

use layout::{Layout, Plan};
use spec::{Budget, TileReads};
use spec::{Case, Param, ParamType, Puzzle, Tolerance};

/// The judge's interface, fixed for puzzles 04 to 08.
pub const PARAMS: &[Param] = &[
    Param {
        name: "input",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "kernel",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "output",
        ty: ParamType::F32Ptr,
    },
    Param {
        name: "input_size",
        ty: ParamType::I32,
    },
    Param {
        name: "kernel_size",
        ty: ParamType::I32,
    },
];

/// See the crate documentation for why 1e-3 and not the judge's 1e-4.
pub const TOLERANCE: Tolerance = Tolerance {
    atol: 1e-3,
    rtol: 1e-3,
};

/// The valid contract, computed in f64 (on every core: the full case is 3 billion terms).
pub fn reference(input: &[f32], kernel: &[f32]) -> Vec<f64> {
    use rayon::prelude::*;
    if kernel.is_empty() || kernel.len() > input.len() {
        return vec![];
    }
    input
        .par_windows(kernel.len())
        .map(|w| {
            w.iter()
                .zip(kernel)
                .map(|(&x, &k)| f64::from(x) * f64::from(k))
                .sum()
        })
        .collect()
}

const PLAN: Plan = Plan {
    small: |tpb| Layout::Tile {
        tpb,
        constant: false,
    },
    full: Layout::Tile {
        tpb: 512,
        constant: false,
    },
};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-04",
        title: "Tiles of any size",
        grade: 3,
        kernel: "conv1d",
        params: PARAMS,
        teaches: "a shared tile of TPB + kernel_size - 1 inputs in dynamic shared memory, loaded by a strided loop",
        hints: &[
            "The output is shorter now: output_size = input_size - kernel_size + 1, and output[i] needs input[i .. i + kernel_size).",
            "Declare the tile as `extern __shared__ float tile[];`: the runner gives it TPB + kernel_size - 1 floats at launch.",
            "kernel_size may exceed TPB, so one load per thread is not enough: for (k = threadIdx.x; k < TPB + kernel_size - 1; k += TPB) tile[k] = ...; then __syncthreads().",
            "Guard the loads (first + k < input_size) and the store (i < output_size), but not the sum: inside the tile every tap is there.",
        ],
        budget: None,
        tolerance: TOLERANCE,
        cases: |scale| budgeted(cases::cases(&PLAN, 40, scale)),
        shrink: Some(cases::shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| budgeted(cases::fresh(&PLAN, 40, seed, scale))),
        draw: None,
    }
}

/// `cases` with puzzle 04's budget: each block's tile and halo read once ([`tile_budget`]).
fn budgeted(mut cases: Vec<Case>) -> Vec<Case> {
    for c in &mut cases {
        tile_budget(c, false);
    }
    cases
}

/// Elements of `input` a block may read past its tile and halo: a tile loaded by float4s aligned
/// down at its start and up at its end reads up to 3 more at each end
/// (`runner/tests/fixtures/variants/puzzle-04.float4-tile.cu`).
pub const SLACK: u32 = 6;

/// Sets `case`'s budget: each block reads its tile and halo of `input`, `TPB + kernel_size - 1`
/// elements, once (and [`SLACK`] more), however its loads are written (a float4 is 4 elements);
/// with `taps_in_constant` (puzzle 05), no thread reads `kernel` at all. A kernel without a tile
/// reads `kernel_size` inputs per output, `TPB * kernel_size` per block, and that is what the
/// budget stops.
pub fn tile_budget(case: &mut Case, taps_in_constant: bool) {
    let tpb = case.job.launch.block[0].max(1);
    let k = case.job.scalar("kernel_size").unwrap_or(1).max(1) as u32;
    case.job.budget = Some(Budget {
        tile_reads: Some(TileReads {
            buf: 0,
            tile: tpb + k - 1,
            slack: SLACK,
            unread: taps_in_constant.then_some(1),
        }),
        ..Budget::NONE
    });
}

/// Sums `input[i..][..kernel.len()] * kernel` in float32, in the order a kernel does: one
/// accumulator, or `lanes` accumulators by tap modulo `lanes` added at the end (the split sums of
/// puzzle 08 and of Triton's row sums), with or without a fused multiply-add.
#[cfg(test)]
fn float32_sum(input: &[f32], kernel: &[f32], i: usize, lanes: usize, fused: bool) -> f32 {
    let mut acc = vec![0f32; lanes];
    for (j, &k) in kernel.iter().enumerate() {
        let a = &mut acc[j % lanes];
        *a = if fused {
            input[i + j].mul_add(k, *a)
        } else {
            *a + input[i + j] * k
        };
    }
    acc.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::Arg;
    use spec::Scale;

    #[test]
    fn teaching_cases_match_the_curriculum() {
        assert_eq!(
            reference(&[1., 2., 3., 4., 5.], &[1., 0., -1.]),
            [-2., -2., -2.]
        );
        let got = reference(&[2., 4., 6., 8.], &[0.5, 0.2]);
        for (g, w) in got.iter().zip([1.8, 3.2, 4.6]) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
        assert_eq!(reference(&[3., -1., 4.], &[1.]), [3., -1., 4.]);
        assert_eq!(
            reference(&[1., 1., 1., 0., 0., 0.], &[1., -1.]),
            [0., 0., 1., 0., 0.]
        );
        let cases = cases::cases(&PLAN, 40, Scale::Small);
        let example = cases.iter().find(|c| c.name == "example-1").unwrap();
        assert_eq!(example.expected, [-2., -2., -2.]);
    }

    #[test]
    fn random_cases_catch_a_skipped_first_tap_and_an_unwritten_last_element() {
        for c in cases::cases(&PLAN, 40, Scale::Small)
            .iter()
            .filter(|c| !c.name.starts_with("example"))
        {
            let (Arg::Input { data: x, .. }, Arg::Input { data: k, .. }) =
                (&c.job.args[0], &c.job.args[1])
            else {
                panic!("case {} has no inputs", c.name)
            };
            let mut skipped = k.clone();
            skipped[0] = 0.0;
            let wrong = reference(x, &skipped);
            let caught = wrong
                .iter()
                .zip(&c.expected)
                .any(|(w, e)| !TOLERANCE.accepts(*w as f32, *e));
            assert!(caught, "{}: skipping the first tap passes", c.name);
            assert!(
                c.expected.last().unwrap().abs() > 1e-3,
                "{}: the last element must not be 0",
                c.name
            );
        }
    }

    #[test]
    fn tolerance_separates_float32_orders_from_a_skipped_tap() {
        // Full-scale data (its own seed), the first 3000 outputs: float32 sums in four orders
        // stay under a quarter of the tolerance; skipping the first tap fails most outputs.
        let (x, k) = cases::random_data(7, 3000 + cases::FULL_KERNEL - 1, cases::FULL_KERNEL);
        let want = reference(&x, &k);
        let mut worst = 0f64;
        for (lanes, fused) in [(1, false), (1, true), (2, true), (4, false)] {
            for (i, &w) in want.iter().enumerate() {
                let err = (f64::from(float32_sum(&x, &k, i, lanes, fused)) - w).abs();
                worst = worst.max(err / (TOLERANCE.atol + TOLERANCE.rtol * w.abs()));
            }
        }
        assert!(
            worst < 0.25,
            "a correct float32 sum uses {worst:.2} of the tolerance"
        );
        let failing = want
            .iter()
            .enumerate()
            .filter(|&(i, &w)| {
                !TOLERANCE.accepts((w - f64::from(x[i]) * f64::from(k[0])) as f32, w)
            })
            .count();
        assert!(
            failing > want.len() / 2,
            "a skipped tap fails only {failing} outputs"
        );
    }

    #[test]
    fn launch_covers_every_output_and_the_tile_fits() {
        for c in cases::cases(&PLAN, 40, Scale::Small) {
            let l = c.job.launch;
            assert!(
                u64::from(l.threads_per_block()) * l.blocks() >= c.expected.len() as u64,
                "{}",
                c.name
            );
            let k = c.job.scalar("kernel_size").unwrap() as u32;
            assert_eq!(l.shared_bytes, (l.block[0] + k - 1) * 4, "{}", c.name);
        }
    }

    #[test]
    fn cases_cover_the_edges_within_the_simulator_budget() {
        let cases = cases::cases(&PLAN, 40, Scale::Small);
        let work: u64 = cases.iter().map(|c| c.job.work).sum();
        assert!(
            work < 5_000_000,
            "{work} multiply-adds is too slow for the simulator"
        );
        assert!(cases.iter().any(|c| c.job.launch.blocks() >= 3
            && c.expected.len() % c.job.launch.block[0] as usize != 0));
        assert!(
            cases
                .iter()
                .any(|c| c.job.scalar("kernel_size").unwrap() as u32 > 2 * c.job.launch.block[0])
        );
        assert!(
            cases
                .iter()
                .any(|c| c.job.scalar("kernel_size") == c.job.scalar("input_size"))
        );
        assert!(
            cases
                .iter()
                .any(|c| c.job.scalar("kernel_size") == Some(2047))
        );
    }

    #[test]
    fn shrinking_keeps_the_kernel_and_the_layout() {
        let c = cases::cases(&PLAN, 40, Scale::Small)
            .into_iter()
            .find(|c| c.name == "random-halo")
            .unwrap();
        let smaller = cases::shrink(&c);
        let first = smaller.first().unwrap();
        assert_eq!(first.expected.len(), 1);
        assert_eq!(first.job.scalar("kernel_size"), Some(300));
        assert_eq!(first.macros, c.macros);
        assert_eq!(first.expected[0], c.expected[0]);
    }
}
