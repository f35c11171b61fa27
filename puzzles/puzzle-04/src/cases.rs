//! The cases of puzzles 04 to 08: one list, launched by each puzzle's [`Plan`].
//!
//! - `example-*`: the chapter's literal cases, small enough to print.
//! - `edge-*`: one input and one tap; kernel as long as the input; 10,000 inputs with 3 taps;
//!   outputs spread over three or more blocks with a partial last one; the longest kernel (2047).
//! - `random-*`: seeded, asymmetric values in [-1, 1) with no zeros and a first tap of at least
//!   0.25 in magnitude, so that a skipped tap or a shifted index always shows; kernels longer
//!   than a block (300 taps on 128 threads, 513 on 32), so that the halo spans several blocks.
//! - `full`: 1,500,000 inputs and 2047 taps, built only for [`Scale::Full`] (its reference is
//!   3 billion multiply-adds).
//!
//! The small cases together need about 3.1 million multiply-adds, so that a full check of one
//! puzzle takes a few seconds on the simulator.

use crate::layout::{Layout, Plan};
use crate::reference;
use spec::{Case, ConvArgs, Rng, Scale};

/// Input and kernel sizes of the full-scale case: the constraints' maxima.
pub const FULL_INPUT: usize = 1_500_000;
pub const FULL_KERNEL: usize = 2047;

/// A valid-contract case launched by `layout`, with its reference output.
pub fn case(name: &str, layout: Layout, input: Vec<f32>, kernel: Vec<f32>, scale: Scale) -> Case {
    assert!(
        !kernel.is_empty() && kernel.len() <= input.len(),
        "{name}: need 1 <= kernel_size <= input_size"
    );
    let outputs = input.len() - kernel.len() + 1;
    let expected = match scale {
        Scale::Small => reference(&input, &kernel),
        Scale::Full => {
            spec::refcache::cached(&format!("conv1d-{name}"), &[&input, &kernel], || {
                reference(&input, &kernel)
            })
        }
    };
    let args = ConvArgs {
        names: ["input", "kernel", "output", "input_size", "kernel_size"],
        input: &input,
        kernel: &kernel,
        out_len: outputs,
        sizes: [input.len() as i32, kernel.len() as i32],
    };
    let launch = layout.launch(outputs, kernel.len());
    Case {
        name: name.to_string(),
        job: args.job("conv1d", launch, None, layout.constants(&kernel)),
        macros: layout.macros(),
        expected,
        scale,
        outputs_per_block: None,
        block_tile: None,
    }
}

/// Seeded input and kernel: values in [-1, 1) with no zeros, the first tap at least 0.25 in
/// magnitude (a skipped first tap then moves some output well past the tolerance).
pub fn random_data(seed: u64, input_size: usize, kernel_size: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(seed);
    let input = rng.signal(input_size);
    let mut kernel = rng.signal(kernel_size);
    if kernel[0].abs() < 0.25 {
        kernel[0] = if kernel[0] < 0.0 { -0.75 } else { 0.75 };
    }
    (input, kernel)
}

fn random(name: &str, layout: Layout, seed: u64, input_size: usize, kernel_size: usize) -> Case {
    let (input, kernel) = random_data(seed, input_size, kernel_size);
    case(name, layout, input, kernel, Scale::Small)
}

/// The cases of a valid-contract puzzle, launched as `plan` says. `seed` varies the random
/// data between puzzles, so that a solution copied from one does not pass another by luck.
pub fn cases(plan: &Plan, seed: u64, scale: Scale) -> Vec<Case> {
    let small = plan.small;
    let v = |xs: &[f32]| xs.to_vec();
    let mut cases = vec![
        case(
            "example-1",
            small(8),
            v(&[1., 2., 3., 4., 5.]),
            v(&[1., 0., -1.]),
            Scale::Small,
        ),
        case(
            "example-2",
            small(8),
            v(&[2., 4., 6., 8.]),
            v(&[0.5, 0.2]),
            Scale::Small,
        ),
        case(
            "example-identity",
            small(8),
            v(&[3., -1., 4., 1.5, -9., 2.5]),
            v(&[1.]),
            Scale::Small,
        ),
        case(
            "example-step",
            small(8),
            v(&[1., 1., 1., 0., 0., 0.]),
            v(&[1., -1.]),
            Scale::Small,
        ),
        case("edge-both-1", small(8), v(&[2.5]), v(&[-1.5]), Scale::Small),
        random("edge-kernel-equals-input", small(8), seed + 1, 37, 37),
        random("edge-10000-by-3", small(128), seed + 2, 10_000, 3),
        random("edge-three-blocks", small(32), seed + 3, 400, 7),
        random("edge-kernel-2047", small(128), seed + 4, 2100, 2047),
        random("random-1", small(32), seed + 5, 1000, 33),
        random("random-halo", small(128), seed + 6, 3000, 300),
        random("random-long-kernel", small(32), seed + 7, 4608, 513),
    ];
    if scale == Scale::Full {
        let (input, kernel) = random_data(seed + 8, FULL_INPUT, FULL_KERNEL);
        cases.push(case("full", plan.full, input, kernel, Scale::Full));
    }
    cases
}

/// The cases drawn fresh from `seed` ([`spec::Puzzle::fresh`]) for the puzzle whose published
/// cases are `cases(plan, published, scale)`: each of them at its own sizes and layout with new
/// data (`fresh-<case>`), then three of random sizes within the contract (`fresh-random-size-N`: up to
/// 6000 inputs, up to 2047 taps, at most 1.5 million multiply-adds).
pub fn fresh(plan: &Plan, published: u64, seed: u64, scale: Scale) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut fresh = vec![];
    for c in cases(plan, published, scale) {
        let (spec::Arg::Input { data: input, .. }, spec::Arg::Input { data: kernel, .. }) =
            (&c.job.args[0], &c.job.args[1])
        else {
            continue;
        };
        let (input, kernel) = random_data(rng.next_u64(), input.len(), kernel.len());
        let name = format!("{}{}", spec::FRESH, c.name);
        fresh.push(case(&name, Layout::of(&c), input, kernel, c.scale));
    }
    // A stream of its own, so that the full case drawn or not leaves these the same.
    let mut rng = Rng::new(seed ^ spec::FRESH_SIZES);
    for n in 1..=3 {
        let input_size = rng.size(1, 6000);
        let kernel_size = rng.size(1, input_size.min(2047).min(1_500_000 / input_size));
        let layout = (plan.small)(rng.pick(&[8, 32, 128]));
        let name = format!("{}random-size-{n}", spec::FRESH);
        fresh.push(random(
            &name,
            layout,
            rng.next_u64(),
            input_size,
            kernel_size,
        ));
    }
    fresh
}

/// Smaller versions of a failing case, smallest first: the same kernel and the first inputs,
/// cut to 1, 2, 3, 5, ... outputs, launched by the same layout.
pub fn shrink(failing: &Case) -> Vec<Case> {
    let (spec::Arg::Input { data: input, .. }, spec::Arg::Input { data: kernel, .. }) =
        (&failing.job.args[0], &failing.job.args[1])
    else {
        return vec![];
    };
    let layout = Layout::of(failing);
    let outputs = failing.expected.len();
    [1usize, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233]
        .into_iter()
        .filter(|&m| m < outputs)
        .map(|m| {
            let cut = input[..kernel.len() + m - 1].to_vec();
            let mut c = case(&failing.name, layout, cut, kernel.clone(), failing.scale);
            c.name = format!(
                "{} (cut to {m} outputs, kernel {})",
                failing.name,
                kernel.len()
            );
            c
        })
        .collect()
}
