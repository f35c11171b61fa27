//! Tests of puzzle 09's reference, cases and tolerance (puzzle 10 shares all three).

use super::*;
use cases::{FULL_SHAPES, INPUT_PADDING, Layout, random_data};
use spec::Arg;

fn small() -> Vec<spec::Case> {
    cases::cases(BLOCKS, FULL, 90, Scale::Small)
}

fn inputs(c: &spec::Case) -> (Image, Image) {
    let get = |n: &str| c.job.scalar(n).unwrap() as usize;
    let (Arg::Input { data: x, .. }, Arg::Input { data: k, .. }) = (&c.job.args[0], &c.job.args[1])
    else {
        panic!("{}: no inputs", c.name)
    };
    let input = Image {
        data: x.clone(),
        rows: get("input_rows"),
        cols: get("input_cols"),
        stride: get("input_stride"),
    };
    (
        input,
        Image::dense(get("kernel_rows"), get("kernel_cols"), k.clone()),
    )
}

#[test]
fn literal_cases_match_the_curriculum() {
    let cases = small();
    let example = cases.iter().find(|c| c.name == "example-1").unwrap();
    assert_eq!(example.expected, [-4., -4., -4., -4.]);
    let identity = cases.iter().find(|c| c.name == "example-identity").unwrap();
    let (x, _) = inputs(identity);
    let want: Vec<f64> = x.data.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(identity.expected, want);
}

#[test]
fn cases_cover_the_curriculum_shapes() {
    let cases = small();
    let has = |f: &dyn Fn(&Image, &Image) -> bool| {
        cases.iter().any(|c| {
            let (x, k) = inputs(c);
            f(&x, &k)
        })
    };
    assert!(
        has(&|_, k| k.rows == 1 && k.cols > 1),
        "a row vector kernel"
    );
    assert!(
        has(&|_, k| k.cols == 1 && k.rows > 1),
        "a column vector kernel"
    );
    assert!(
        has(&|x, k| x.rows == k.rows && x.cols == k.cols),
        "input = kernel"
    );
    assert!(
        has(&|_, k| k.rows == 31 && k.cols == 31),
        "the largest kernel"
    );
    let pitched = cases.iter().find(|c| c.name == "pitched").unwrap();
    let (x, _) = inputs(pitched);
    let out = pitched.job.output_pitch().unwrap();
    assert!(x.stride > x.cols && out.stride > out.cols);
    assert!(
        x.data[x.cols..x.stride]
            .iter()
            .all(|v| v.to_bits() == INPUT_PADDING.to_bits())
    );
    // Tails in both directions over at least three blocks each way.
    assert!(cases.iter().any(|c| {
        let (l, p) = (c.job.launch, c.job.output_pitch().unwrap());
        l.grid[0] >= 3
            && l.grid[1] >= 3
            && p.cols % l.block[0] as usize != 0
            && p.rows % l.block[1] as usize != 0
    }));
    assert_eq!(
        FULL_SHAPES.map(|(_, n, k)| (n, k)),
        [(4096, 3), (4096, 15), (8192, 5)]
    );
}

#[test]
fn launches_cover_every_output_within_the_simulator_budget() {
    for c in small() {
        let (l, p) = (c.job.launch, c.job.output_pitch().unwrap());
        assert!((l.grid[0] * l.block[0]) as usize >= p.cols, "{}", c.name);
        assert!((l.grid[1] * l.block[1]) as usize >= p.rows, "{}", c.name);
        assert_eq!(c.expected.len(), p.rows * p.stride, "{}", c.name);
        assert!(
            c.job.work <= 100_000,
            "{}: {} multiply-adds",
            c.name,
            c.job.work
        );
        assert_eq!(
            Layout::of(&c),
            Layout::Blocks {
                rows: l.block[1],
                cols: l.block[0]
            }
        );
    }
}

#[test]
fn skipping_any_tap_fails_every_random_case() {
    for c in small().iter().filter(|c| !c.name.starts_with("example")) {
        let (x, k) = inputs(c);
        let stride = c.job.output_pitch().unwrap().stride;
        for t in 0..k.data.len() {
            let mut skipped = k.clone();
            skipped.data[t] = 0.0;
            let wrong = reference(&x, &skipped, stride);
            let caught = wrong
                .iter()
                .zip(&c.expected)
                .any(|(w, e)| !TOLERANCE.accepts(*w as f32, *e));
            assert!(caught, "{}: skipping tap {t} passes", c.name);
        }
    }
}

/// One output in float32: taps in row order, column order, or fused, as kernels sum them.
fn float32_at(x: &Image, k: &Image, r: usize, c: usize, order: u8) -> f32 {
    let mut acc = 0f32;
    let mut tap = |i: usize, j: usize| {
        let (a, b) = (x.at(r + i, c + j), k.at(i, j));
        acc = if order == 2 {
            a.mul_add(b, acc)
        } else {
            acc + a * b
        };
    };
    for u in 0..k.rows * k.cols {
        match order {
            1 => tap(u % k.rows, u / k.rows),
            _ => tap(u / k.cols, u % k.cols),
        }
    }
    acc
}

#[test]
fn tolerance_separates_float32_orders_from_a_skipped_tap() {
    let (x, k) = random_data(5, (60, 60, 0), (15, 15));
    let want = reference(&x, &k, 46);
    let mut worst = 0f64;
    for order in 0..3 {
        for r in 0..46 {
            for c in 0..46 {
                let w = want[r * 46 + c];
                let err = (f64::from(float32_at(&x, &k, r, c, order)) - w).abs();
                worst = worst.max(err / (TOLERANCE.atol + TOLERANCE.rtol * w.abs()));
            }
        }
    }
    assert!(
        worst < 0.05,
        "a correct float32 sum uses {worst:.3} of the tolerance"
    );
    let failing = (0..46 * 46)
        .filter(|&o| {
            let w = want[o] - f64::from(x.at(o / 46, o % 46)) * f64::from(k.data[0]);
            !TOLERANCE.accepts(w as f32, want[o])
        })
        .count();
    assert!(
        failing > 46 * 46 / 2,
        "a skipped first tap fails only {failing} outputs"
    );
}

#[test]
fn shrinking_keeps_the_kernel_the_padding_and_the_corner() {
    let c = small().into_iter().find(|c| c.name == "random-1").unwrap();
    let smaller = cases::shrink(&c);
    let first = &smaller[0];
    let p = first.job.output_pitch().unwrap();
    assert_eq!((p.rows, p.cols, p.stride), (1, 1, 6));
    assert_eq!(first.job.scalar("kernel_rows"), Some(7));
    assert_eq!(first.job.scalar("input_stride"), Some(5 + 3));
    assert_eq!(first.expected[0], c.expected[0]);
    assert_eq!(first.macros, c.macros);
    let last = smaller.last().unwrap();
    let q = last.job.output_pitch().unwrap();
    let full = c.job.output_pitch().unwrap();
    for r in 0..q.rows {
        for col in 0..q.cols {
            assert_eq!(
                last.expected[r * q.stride + col],
                c.expected[r * full.stride + col]
            );
        }
    }
}
