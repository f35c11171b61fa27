//! Tests of puzzle 11's reference, cases, launch and tolerance.

use super::*;
use cases::{FULL_SHAPES, conv, conv_of, data_of, random_data};
use spec::{Case, Rng, Scale};

fn small() -> Vec<Case> {
    cases::cases(Scale::Small)
}

#[test]
fn the_exact_example_matches_a_hand_sum() {
    let cases = small();
    let ex = cases.iter().find(|c| c.name == "example-small").unwrap();
    let (x, w) = data_of(ex);
    // Output pixel (0, 1), channel 2: the window rows 0..3, columns 1..4.
    let mut sum = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            for ch in 0..2 {
                sum += f64::from(x[(i * 4 + 1 + j) * 2 + ch])
                    * f64::from(w[((i * 3 + j) * 2 + ch) * 3 + 2]);
            }
        }
    }
    assert_eq!(ex.expected[3 + 2], sum);
    assert!(ex.expected.iter().all(|v| v.fract() == 0.0));
    let id = cases.iter().find(|c| c.name == "example-identity").unwrap();
    let (x, _) = data_of(id);
    assert_eq!(
        id.expected,
        x.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()
    );
}

#[test]
fn cases_have_tails_in_m_n_and_k_and_stay_small() {
    let cases = small();
    let convs: Vec<Conv> = cases.iter().map(conv_of).collect();
    assert!(
        convs
            .iter()
            .any(|c| c.ic == 3 && c.oc % 2 == 1 && c.m() % 16 != 0 && c.k() % 8 != 0)
    );
    assert!(convs.iter().any(|c| c.kr == 1 && c.kc == 1 && c.ic > 1));
    assert!(convs.iter().any(|c| c.batch > 1));
    assert!(convs.iter().any(|c| c.kr == 7 && c.kc == 7));
    assert!(convs.iter().any(|c| c.kr != c.kc));
    assert!(
        convs
            .iter()
            .any(|c| c.oc > 64 && c.oc % 64 != 0 && c.k() % 32 != 0)
    );
    assert!(convs.iter().any(|c| c.m() > 256 && c.m() % 128 != 0));
    for (c, conv) in cases.iter().zip(&convs) {
        assert_eq!(c.expected.len(), conv.m() * conv.oc, "{}", c.name);
        assert!(c.job.work <= 2_000_000, "{}: {}", c.name, c.job.work);
    }
    assert_eq!(
        FULL_SHAPES.map(|(_, b, n, ic, oc)| conv((b, n, n, ic, oc, 3, 3)).work() * 2),
        [9_069_133_824, 6_879_707_136, 37_456_183_296]
    );
}

#[test]
fn the_declared_launch_covers_the_product_in_tiles() {
    // NVRTC 13.0's bytes for {128, 128, 64, 36864}.
    const PTX: &str = ".global .align 4 .b8 launch_shape[16] = {128, 0, 0, 0, 128, 0, 0, 0, 64, 0, 0, 0, 0, 144};";
    let mut cases = small();
    spec().resolve_launch(PTX, "k.cu", &mut cases).unwrap();
    for c in &cases {
        let (l, conv) = (c.job.launch, conv_of(c));
        assert_eq!(
            (l.block, l.shared_bytes),
            ([128, 1, 1], 36864),
            "{}",
            c.name
        );
        assert_eq!(l.grid[0] as usize, conv.m().div_ceil(128), "{}", c.name);
        assert_eq!(l.grid[1] as usize, conv.oc.div_ceil(64), "{}", c.name);
        assert!(c.job.work >= l.blocks() * 128 * 64 * conv.k() as u64);
    }
    let d = spec()
        .resolve_launch(".visible .entry conv2d_nhwc(", "kernel.cu", &mut cases)
        .unwrap_err();
    assert_eq!(d.kind, spec::Kind::BadLaunchShape);
}

#[test]
fn shrinking_keeps_the_channels_and_the_window() {
    let cases = small();
    let c = cases.iter().find(|c| c.name == "random-1").unwrap();
    let shrunk = cases::shrink(c);
    assert_eq!(shrunk.len(), 5); // 10 x 7 output pixels: no 8 x 8
    let first = &shrunk[0];
    assert_eq!(first.expected.len(), 40);
    // Pixel (0, 0) of image 0, all 40 output channels: the same as in the whole case.
    assert_eq!(first.expected[..], c.expected[..40]);
    let five = &shrunk[4];
    let cut = conv_of(five);
    assert_eq!(
        (cut.out_rows(), cut.out_cols(), cut.ic, cut.oc),
        (5, 5, 8, 40)
    );
    let whole = conv_of(c);
    for r in 0..5 {
        assert_eq!(
            five.expected[r * 5 * 40..][..5 * 40],
            c.expected[r * whole.out_cols() * 40..][..5 * 40]
        );
    }
}

/// How a kernel may round its operands before the tensor cores multiply them.
#[derive(Clone, Copy, Debug)]
enum Round {
    /// `cvt.rna.tf32.f32`: to nearest, ties away, 10 mantissa bits kept.
    Rna,
    /// The raw float handed to the tensor core, which ignores the low 13 bits.
    Truncate,
    /// A float32 kernel on the FMA units.
    None,
}

fn round(x: f32, how: Round) -> f32 {
    let b = x.to_bits();
    match how {
        Round::Rna => f32::from_bits((b + 0x1000) & !0x1fff),
        Round::Truncate => f32::from_bits(b & !0x1fff),
        Round::None => x,
    }
}

/// Summation orders of one output: the K index sequence, cut into chunks that are summed on
/// their own (as one `mma` k8 step or one K tile) before being added into the running f32 sum.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// k ascending, one f32 sum.
    Ascending,
    /// k descending.
    Descending,
    /// Channel outermost, taps inside (a kernel that loops over channels first).
    ChannelMajor,
    /// Chunks of 8 summed exactly then rounded (an mma.sync k8 step), chunks of 32 (a K tile)
    /// added into the accumulator.
    Mma8,
    /// Two accumulators, even and odd K tiles of 16, added at the end (split-K in a block).
    SplitK,
}

/// One output (pixel m, channel o) as a float32 kernel rounding with `how` in order `order`.
fn emulate(conv: &Conv, x: &[f32], w: &[f32], m: usize, o: usize, how: Round, order: Order) -> f32 {
    let base = conv.window(m);
    let term = |k: usize| round(x[base + conv.tap(k)], how) * round(w[k * conv.oc + o], how);
    let k = conv.k();
    match order {
        Order::Ascending => (0..k).fold(0f32, |s, k| s + term(k)),
        Order::Descending => (0..k).rev().fold(0f32, |s, k| s + term(k)),
        Order::ChannelMajor => {
            let mut s = 0f32;
            for ch in 0..conv.ic {
                for t in 0..conv.kr * conv.kc {
                    s += term(t * conv.ic + ch);
                }
            }
            s
        }
        Order::Mma8 => (0..k.div_ceil(8)).fold(0f32, |s, c| {
            let chunk: f64 = (c * 8..(c * 8 + 8).min(k))
                .map(|k| f64::from(term(k)))
                .sum();
            s + chunk as f32
        }),
        Order::SplitK => {
            let mut acc = [0f32; 2];
            for k in 0..k {
                acc[k / 16 % 2] += term(k);
            }
            acc[0] + acc[1]
        }
    }
}

const ORDERS: [Order; 5] = [
    Order::Ascending,
    Order::Descending,
    Order::ChannelMajor,
    Order::Mma8,
    Order::SplitK,
];

/// The outputs a check looks at: all of a small case, 3,000 seeded ones of a full case (whose
/// reference is then computed here for those alone).
fn sample(conv: &Conv, seed: u64) -> Vec<(usize, usize)> {
    let all = conv.m() * conv.oc;
    if all <= 100_000 {
        return (0..all).map(|i| (i / conv.oc, i % conv.oc)).collect();
    }
    let mut rng = Rng::new(seed);
    (0..3000)
        .map(|_| {
            let i = (rng.next_u64() % all as u64) as usize;
            (i / conv.oc, i % conv.oc)
        })
        .collect()
}

fn exact(conv: &Conv, x: &[f32], w: &[f32], m: usize, o: usize) -> f64 {
    let base = conv.window(m);
    (0..conv.k())
        .map(|k| f64::from(x[base + conv.tap(k)]) * f64::from(w[k * conv.oc + o]))
        .sum()
}

/// Every case's sizes and data, the full ones included (data only: no reference).
fn all_data() -> Vec<(String, Conv, Vec<f32>, Vec<f32>)> {
    let mut out: Vec<_> = small()
        .iter()
        .map(|c| {
            let (x, w) = data_of(c);
            (c.name.clone(), conv_of(c), x.to_vec(), w.to_vec())
        })
        .collect();
    for (seed, b, n, ic, oc) in FULL_SHAPES {
        let c = conv((b, n, n, ic, oc, 3, 3));
        let (x, w) = random_data(seed, &c);
        out.push((format!("full-n{b}-{n}-ic{ic}"), c, x, w));
    }
    out
}

/// Worst |err| / (atol + rtol |ref|) over the sampled outputs; 1 is the tolerance's edge.
fn worst(
    conv: &Conv,
    x: &[f32],
    w: &[f32],
    picks: &[(usize, usize)],
    how: Round,
    order: Order,
) -> f64 {
    picks
        .par_iter()
        .map(|&(m, o)| {
            let want = exact(conv, x, w, m, o);
            let got = f64::from(emulate(conv, x, w, m, o, how, order));
            (got - want).abs() / (TOLERANCE.atol + TOLERANCE.rtol * want.abs())
        })
        .reduce(|| 0.0, f64::max)
}

#[test]
fn tf32_sums_in_any_order_pass_with_margin() {
    for (name, conv, x, w) in all_data() {
        let picks = sample(&conv, 5);
        for how in [Round::Rna, Round::Truncate, Round::None] {
            for order in ORDERS {
                let r = worst(&conv, &x, &w, &picks, how, order);
                eprintln!(
                    "{name:28} K {:5} {how:?} {order:?}: {r:.3} of the tolerance",
                    conv.k()
                );
                // Rounding to nearest stays within a third of the tolerance, truncation within
                // half (it is biased), float32 within a hundredth.
                let bound = match how {
                    Round::Rna => 0.34,
                    Round::Truncate => 0.5,
                    Round::None => 0.01,
                };
                assert!(r < bound, "{name} {how:?} {order:?}: {r}");
            }
        }
    }
}

#[test]
fn a_skipped_channel_or_tap_fails_every_case() {
    for (name, conv, x, w) in all_data() {
        if name.starts_with("example-identity") {
            continue;
        }
        let picks = sample(&conv, 6);
        let taps = conv.kr * conv.kc;
        // A channel skipped in every tap, and a tap skipped in every channel: the worst
        // tf32 result of the kernel that skips it, measured against the true reference.
        let skips: Vec<Box<dyn Fn(usize) -> bool + Sync>> = (0..conv.ic)
            .map(|ch| {
                Box::new(move |k: usize| k % conv.ic == ch) as Box<dyn Fn(usize) -> bool + Sync>
            })
            .chain((0..taps).map(|t| {
                Box::new(move |k: usize| k / conv.ic == t) as Box<dyn Fn(usize) -> bool + Sync>
            }))
            .collect();
        let full = name.starts_with("full");
        for (s, skip) in skips.iter().enumerate() {
            if full && s % 16 != 0 && s < conv.ic {
                continue; // a few channels of a full case are enough
            }
            let mut skipped = w.clone();
            for k in (0..conv.k()).filter(|&k| skip(k)) {
                skipped[k * conv.oc..][..conv.oc].fill(0.0);
            }
            let caught = picks.par_iter().any(|&(m, o)| {
                let want = exact(&conv, &x, &w, m, o);
                let got = emulate(&conv, &x, &skipped, m, o, Round::Rna, Order::Mma8);
                !TOLERANCE.accepts(got, want)
            });
            assert!(
                caught,
                "{name}: skipping {s} of {} channels + taps passes",
                conv.ic
            );
        }
    }
}

/// Hint 4 and the chapter's tip 3 give a warp the same tiles.
#[test]
fn hint_4_and_tip_3_agree_on_the_warp_tile() {
    let hint = crate::spec().hints[3];
    let chapter = include_str!("../../../book/src/puzzle-11.md");
    let tip = chapter
        .split("Tip 3: the speed")
        .nth(1)
        .and_then(|t| t.split("</details>").next())
        .expect("tip 3");
    for words in ["64 x 32", "64 x 64", "4 x 4", "4 x 8"] {
        assert!(
            hint.contains(words) && tip.contains(words),
            "{words}:\n{hint}\n{tip}"
        );
    }
    assert!(!hint.contains("32 x 32"), "{hint}");
}

/// The skeleton gives the inline-asm helpers puzzle 12's skeleton gives (`cvt.rna.tf32` and
/// `mma.sync` m16n8k8), word for word, so that chapter 11's first tensor-core kernel does not
/// start from the PTX manual.
#[test]
fn the_skeleton_gives_puzzle_12s_tensor_core_helpers() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let read = |p: &str| std::fs::read_to_string(format!("{dir}/{p}/kernel.cu")).unwrap();
    let (p11, p12) = (read("puzzle-11"), read("puzzle-12"));
    let start = p12
        .find("// x rounded to tf32")
        .expect("puzzle 12's tf32 helper");
    let end = p12.find("// ANCHOR: signature").unwrap();
    let helpers = &p12[start..end];
    assert!(helpers.contains("cvt.rna.tf32.f32") && helpers.contains("mma.sync.aligned.m16n8k8"));
    assert!(
        p11.contains(helpers),
        "puzzle 11's skeleton lacks puzzle 12's helpers"
    );
}
