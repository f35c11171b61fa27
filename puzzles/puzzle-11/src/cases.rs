//! The cases of puzzle 11.
//!
//! - `example-small`: one 4 x 4 image of 2 channels, a 3 x 3 kernel, 3 output channels, all
//!   small integers: every product and sum is exact in tf32 and float32, so the expected output
//!   is exact too.
//! - `example-identity`: a 1 x 1 kernel whose weight is the identity: the output is the input.
//! - `edge-*`: 3 input channels (K = 27, a tail in K for any BLOCK_K that is a multiple of 8) and
//!   7 output channels (a tail in N) over 2 images whose pixels are not a multiple of 16 (a tail
//!   in M); a 1 x 1 kernel with 20 input and 33 output channels; a kernel as large as the image
//!   (one output pixel per image); a 7 x 7 kernel; 72 input and 70 output channels (tails in K
//!   and N past 64).
//! - `random-*`: seeded, batch > 1, non-square kernels, M over several tiles of 128; 32 input
//!   channels on short rows (`random-batch`) and on long ones whose tiles of 128 pixels span both
//!   images (`random-32-channels`), for kernels whose fast paths need whole chunks of channels;
//!   and one image whose rows of 64 output pixels let a run of 248 of them fit in 256 input
//!   pixels, with 12 output channels (`random-rows`, the solution's Hopper ping-pong path: two
//!   warpgroups taking units of 256 positions in turn, in a persistent block) and with 68
//!   (`random-rows-wide`, one row of output pixels: the Hopper walk with both warpgroups on
//!   every unit, 64 channels each, or with the solution's `TMA 0` its row path); in both, the
//!   producer warpgroup and the mbarriers run on the simulator, and the nine K steps of a unit or
//!   block go round the ring of six weight stages.
//! - `full-*`: the chapter's three full-scale shapes, built only for [`Scale::Full`]; references computed in
//!   parallel once and cached ([`spec::refcache`]).
//!
//! Inputs are uniform in [-1, 1) with no zeros; weights at least 0.1 in magnitude, so a skipped
//! channel or tap always shows. Every small case is at most 2 million multiply-adds.

use crate::{Conv, reference};
use spec::job::{Arg, Job};
use spec::{Case, DeclaredLaunch, Rng, Scale};

/// The full-scale cases: (seed, batch, n for an n x n image, input channels, output channels),
/// all with a 3 x 3 kernel.
pub const FULL_SHAPES: [(u64, usize, usize, usize, usize); 3] = [
    (20, 16, 64, 64, 128),
    (21, 32, 56, 64, 64),
    (22, 8, 128, 128, 128),
];

/// The case named `name` for `conv` with these input and weight values.
pub fn case(name: &str, conv: Conv, input: &[f32], weight: &[f32], scale: Scale) -> Case {
    assert!(
        conv.kr >= 1 && conv.kc >= 1 && conv.kr <= conv.rows && conv.kc <= conv.cols,
        "{name}: need 1 <= kernel <= image in both directions"
    );
    let compute = || reference(&conv, input, weight);
    let expected = match scale {
        Scale::Small => compute(),
        Scale::Full => {
            spec::refcache::cached(&format!("conv2d-nhwc-{name}"), &[input, weight], compute)
        }
    };
    let int = |name: &str, value: usize| Arg::I32 {
        name: name.into(),
        value: value as i32,
    };
    let job = Job {
        kernel: "conv2d_nhwc".into(),
        launch: DeclaredLaunch::PLACEHOLDER,
        args: vec![
            Arg::Input {
                name: "input".into(),
                data: input.to_vec(),
            },
            Arg::Input {
                name: "weight".into(),
                data: weight.to_vec(),
            },
            Arg::Output {
                name: "output".into(),
                len: conv.m() * conv.oc,
            },
            int("batch", conv.batch),
            int("input_rows", conv.rows),
            int("input_cols", conv.cols),
            int("input_channels", conv.ic),
            int("output_channels", conv.oc),
            int("kernel_rows", conv.kr),
            int("kernel_cols", conv.kc),
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: conv.work(),
    };
    Case {
        name: name.to_string(),
        job,
        macros: vec![],
        expected,
        scale,
        outputs_per_block: None,
        block_tile: None,
    }
}

/// The sizes of a case, read back from its arguments.
pub fn conv_of(case: &Case) -> Conv {
    let get = |name: &str| case.job.scalar(name).unwrap_or(1) as usize;
    Conv {
        batch: get("batch"),
        rows: get("input_rows"),
        cols: get("input_cols"),
        ic: get("input_channels"),
        oc: get("output_channels"),
        kr: get("kernel_rows"),
        kc: get("kernel_cols"),
    }
}

/// The input and weight values of a case.
pub fn data_of(case: &Case) -> (&[f32], &[f32]) {
    match (&case.job.args[0], &case.job.args[1]) {
        (Arg::Input { data: x, .. }, Arg::Input { data: w, .. }) => (x, w),
        _ => unreachable!("puzzle 11's first two arguments are its inputs"),
    }
}

/// Seeded input values in [-1, 1) with no zeros, and weights at least 0.1 in magnitude.
pub fn random_data(seed: u64, conv: &Conv) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(seed);
    let input = rng.signal(conv.input_len());
    let weight = rng
        .signal(conv.weight_len())
        .into_iter()
        .map(|v| v.signum() * (0.1 + 0.9 * v.abs()))
        .collect();
    (input, weight)
}

/// Shorthand for a [`Conv`]: (batch, rows, cols, input channels, output channels, kr, kc).
pub const fn conv(s: (usize, usize, usize, usize, usize, usize, usize)) -> Conv {
    Conv {
        batch: s.0,
        rows: s.1,
        cols: s.2,
        ic: s.3,
        oc: s.4,
        kr: s.5,
        kc: s.6,
    }
}

/// The small random cases: (name, seed, sizes).
pub const SMALL: [(&str, u64, Conv); 12] = [
    ("edge-rgb-odd-channels", 1, conv((2, 11, 13, 3, 7, 3, 3))),
    ("edge-1x1", 2, conv((1, 9, 10, 20, 33, 1, 1))),
    ("edge-kernel-equals-image", 3, conv((3, 5, 5, 6, 9, 5, 5))),
    ("edge-7x7", 4, conv((1, 12, 12, 5, 16, 7, 7))),
    ("edge-wide-channels", 5, conv((1, 8, 8, 72, 70, 3, 3))),
    ("random-batch", 6, conv((3, 10, 12, 32, 24, 3, 3))),
    ("random-1", 7, conv((2, 14, 9, 8, 40, 5, 3))),
    ("random-2", 8, conv((4, 6, 7, 33, 17, 2, 2))),
    ("random-tall", 9, conv((1, 30, 12, 4, 12, 3, 3))),
    ("random-32-channels", 10, conv((2, 5, 35, 32, 20, 3, 3))),
    ("random-rows", 12, conv((1, 9, 66, 32, 12, 3, 3))),
    ("random-rows-wide", 13, conv((1, 3, 66, 32, 68, 3, 3))),
];

pub fn cases(scale: Scale) -> Vec<Case> {
    let small = Scale::Small;
    // Two channels of 1..16 and 16..1, a 3 x 3 x 2 x 3 weight of -2..2: exact integers.
    let ex = conv((1, 4, 4, 2, 3, 3, 3));
    let input: Vec<f32> = (0..16)
        .flat_map(|p| [p as f32 + 1., 16. - p as f32])
        .collect();
    let weight: Vec<f32> = (0..ex.weight_len())
        .map(|k| ((k * 7) % 5) as f32 - 2.)
        .collect();
    let id = conv((1, 3, 5, 4, 4, 1, 1));
    let pixels = Rng::new(11).signal(id.input_len());
    let eye: Vec<f32> = (0..16)
        .map(|k| if k / 4 == k % 4 { 1. } else { 0. })
        .collect();
    let mut cases = vec![
        case("example-small", ex, &input, &weight, small),
        case("example-identity", id, &pixels, &eye, small),
    ];
    for (name, seed, c) in SMALL {
        let (x, w) = random_data(seed, &c);
        cases.push(case(name, c, &x, &w, small));
    }
    if scale == Scale::Full {
        for (seed, batch, n, ic, oc) in FULL_SHAPES {
            let c = conv((batch, n, n, ic, oc, 3, 3));
            let (x, w) = random_data(seed, &c);
            let name = format!("full-n{batch}-{n}x{n}-ic{ic}-oc{oc}");
            cases.push(case(&name, c, &x, &w, Scale::Full));
        }
    }
    cases
}

/// The cases drawn fresh from `seed` ([`spec::Puzzle::fresh`]): each published case at its own
/// sizes with new data (`fresh-<case>`), then three of random sizes within the contract
/// (`fresh-random-size-N`: up to 3 images of 16 x 16 pixels, 40 channels in and out, kernels up to
/// 5 x 5, at most 2 million multiply-adds).
pub fn fresh(seed: u64, scale: Scale) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut fresh = vec![];
    for c in cases(scale) {
        let conv = conv_of(&c);
        let (x, w) = random_data(rng.next_u64(), &conv);
        fresh.push(case(
            &format!("{}{}", spec::FRESH, c.name),
            conv,
            &x,
            &w,
            c.scale,
        ));
    }
    // A stream of its own, so that the full cases drawn or not leave these the same.
    let mut rng = Rng::new(seed ^ spec::FRESH_SIZES);
    for n in 1..=3 {
        let (rows, cols) = (rng.size(1, 16), rng.size(1, 16));
        let (kr, kc) = (rng.size(1, rows.min(5)), rng.size(1, cols.min(5)));
        let c = Conv {
            batch: rng.size(1, 3),
            rows,
            cols,
            ic: rng.size(1, 40),
            oc: rng.size(1, 40),
            kr,
            kc,
        };
        let (x, w) = random_data(rng.next_u64(), &c);
        fresh.push(case(
            &format!("{}random-size-{n}", spec::FRESH),
            c,
            &x,
            &w,
            Scale::Small,
        ));
    }
    fresh
}

/// Smaller versions of a failing case, smallest first: the first image's top-left corner cut
/// to 1x1, 1x2, 2x2, 3x3, 5x5 and 8x8 output pixels, channels and weight unchanged.
pub fn shrink(failing: &Case) -> Vec<Case> {
    let c = conv_of(failing);
    let (x, w) = data_of(failing);
    [(1, 1), (1, 2), (2, 2), (3, 3), (5, 5), (8, 8)]
        .into_iter()
        .filter(|&(r, q)| r <= c.out_rows() && q <= c.out_cols())
        .filter(|&(r, q)| c.batch > 1 || (r, q) != (c.out_rows(), c.out_cols()))
        .map(|(r, q)| {
            let small = Conv {
                batch: 1,
                rows: r + c.kr - 1,
                cols: q + c.kc - 1,
                ..c
            };
            let mut input = Vec::with_capacity(small.input_len());
            for row in 0..small.rows {
                input.extend_from_slice(&x[row * c.cols * c.ic..][..small.cols * c.ic]);
            }
            let mut smaller = case(&failing.name, small, &input, w, failing.scale);
            smaller.name = format!(
                "{} (cut to one image, {r}x{q} output pixels, {} -> {} channels, kernel {}x{})",
                failing.name, c.ic, c.oc, c.kr, c.kc
            );
            smaller
        })
        .collect()
}
