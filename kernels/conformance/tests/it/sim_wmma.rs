//! `nvcuda::wmma` on the simulator: tf32 m16n16k8 and f16/bf16 m16n16k16 with row- and
//! column-major operands and accumulators, the fragments' element-to-lane mapping, and an
//! unwritten shared element loaded into a fragment. Expected results are f64 sums of exact
//! products computed here; `gpu_mma` compares the same kernels with the device.

use crate::common;
use crate::tensor;

use common::ptx;
use spec::Rng;
use spec::diag::Kind;
use spec::job::RunOutput;

const ARCHS: [&str; 2] = ["sm80", "sm90"];

fn run(arch: &str, kernel: &str, inputs: &[Vec<f32>], out: usize) -> RunOutput {
    sim::run(&ptx("wmma", arch), &tensor::job(kernel, inputs, out, 32))
}

/// Round to nearest, ties away, to tf32 (by value, independent of the simulator's bit trick).
fn tf32_rna(x: f32) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let e = f64::from(x).abs().log2().floor() as i32;
    let ulp = 2f64.powi(e - 10);
    (f64::from(x).abs() / ulp + 0.5).floor() * ulp * f64::from(x).signum()
}

/// f16 bits of `x`, a multiple of 1/8 below 4 in magnitude.
fn f16_bits(x: f64) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let e = x.abs().log2().floor() as i32;
    let m = (x.abs() / 2f64.powi(e) - 1.0) * 1024.0;
    u32::from(x < 0.0) << 15 | ((e + 15) as u32) << 10 | m as u32
}

fn bf16_bits(x: f64) -> u32 {
    (x as f32).to_bits() >> 16
}

/// Element (r, c) of a matrix stored with `row` layout, leading dimension `ld`.
fn at(row: bool, r: usize, c: usize, ld: usize) -> usize {
    if row { r * ld + c } else { c * ld + r }
}

struct Case {
    kernel: &'static str,
    k: usize,
    /// Layouts of A, B and of C/D, and the leading dimensions of A and B.
    rows: [bool; 3],
    ld: [usize; 2],
    half: Option<fn(f64) -> u32>,
}

const CASES: [Case; 5] = [
    Case {
        kernel: "wmma_tf32_row",
        k: 8,
        rows: [true, true, true],
        ld: [8, 16],
        half: None,
    },
    Case {
        kernel: "wmma_tf32_col",
        k: 8,
        rows: [false, false, true],
        ld: [16, 8],
        half: None,
    },
    Case {
        kernel: "wmma_f16_row",
        k: 16,
        rows: [true, true, false],
        ld: [16, 16],
        half: Some(f16_bits),
    },
    Case {
        kernel: "wmma_f16_col",
        k: 16,
        rows: [false, false, false],
        ld: [16, 16],
        half: Some(f16_bits),
    },
    Case {
        kernel: "wmma_bf16_row",
        k: 16,
        rows: [true, false, false],
        ld: [16, 16],
        half: Some(bf16_bits),
    },
];

/// Runs one case on values from `values`; returns (got, exact f64 reference, sum of |terms|).
fn case(c: &Case, arch: &str, values: &mut dyn FnMut() -> f64) -> (Vec<f32>, Vec<f64>, Vec<f64>) {
    let (k, [ra, rb, rc]) = (c.k, c.rows);
    let a: Vec<f64> = (0..16 * k).map(|_| values()).collect(); // A[r][j] at r * k + j
    let b: Vec<f64> = (0..k * 16).map(|_| values()).collect(); // B[j][n] at j * 16 + n
    let cm: Vec<f32> = (0..256).map(|i| (i % 7) as f32 * 0.5 - 1.5).collect();
    let (mut abuf, mut bbuf) = (vec![0u32; 256], vec![0u32; 256]);
    let (mut av, mut bv) = (a.clone(), b.clone());
    for r in 0..16 {
        for j in 0..k {
            let (x, y) = (a[r * k + j], b[j * 16 + r]);
            let (ia, ib) = (at(ra, r, j, c.ld[0]), at(rb, j, r, c.ld[1]));
            match c.half {
                Some(h) => {
                    abuf[ia / 2] |= h(x) << (16 * (ia % 2));
                    bbuf[ib / 2] |= h(y) << (16 * (ib % 2));
                }
                None => {
                    abuf[ia] = (x as f32).to_bits();
                    bbuf[ib] = (y as f32).to_bits();
                    av[r * k + j] = tf32_rna(x as f32);
                    bv[j * 16 + r] = tf32_rna(y as f32);
                }
            }
        }
    }
    let cbuf: Vec<f32> = (0..256)
        .map(|i| cm[if rc { i } else { (i % 16) * 16 + i / 16 }])
        .collect();
    let w = |v: &[u32]| v.iter().map(|&x| f32::from_bits(x)).collect::<Vec<f32>>();
    let o = run(arch, c.kernel, &[w(&abuf), w(&bbuf), cbuf], 256);
    assert!(
        o.diagnostics.is_empty(),
        "{} {arch}: {:#?}",
        c.kernel,
        o.diagnostics
    );
    let (mut want, mut mag, mut got) = (vec![0.0; 256], vec![0.0; 256], vec![0.0; 256]);
    for r in 0..16 {
        for n in 0..16 {
            let i = r * 16 + n;
            want[i] =
                (0..k).map(|j| av[r * k + j] * bv[j * 16 + n]).sum::<f64>() + f64::from(cm[i]);
            mag[i] = (0..k)
                .map(|j| (av[r * k + j] * bv[j * 16 + n]).abs())
                .sum::<f64>()
                + f64::from(cm[i].abs());
            got[i] = o.outputs[0][at(rc, r, n, 16)];
        }
    }
    (got, want, mag)
}

#[test]
fn wmma_on_exact_sums_is_bit_exact_in_every_layout() {
    for c in &CASES {
        for arch in ARCHS {
            let mut i = 0usize;
            let mut values = || {
                i += 1;
                ((i * 13 % 23) as f64 - 11.0) / 8.0
            };
            let (got, want, _) = case(c, arch, &mut values);
            for (e, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    *g,
                    *w as f32,
                    "{} {arch}: D[{}][{}]",
                    c.kernel,
                    e / 16,
                    e % 16
                );
            }
        }
    }
}

#[test]
fn wmma_on_random_values_is_within_an_f32_ulp_of_the_exact_sum() {
    let mut r = Rng::new(1515);
    for c in &CASES {
        for arch in ARCHS {
            // 8 significant bits at exponents -8..0: exact in every operand format.
            let mut values = || {
                let x = f64::from(r.uniform(-1.0, 1.0));
                let x = if x.abs() < 2f64.powi(-8) { 0.25 } else { x };
                let ulp = 2f64.powi(x.abs().log2().floor() as i32 - 7);
                (x / ulp).round() * ulp
            };
            let (got, want, mag) = case(c, arch, &mut values);
            for e in 0..256 {
                assert!(
                    (f64::from(got[e]) - want[e]).abs() <= mag[e] * 2f64.powi(-22),
                    "{} {arch}: D[{}][{}] = {}, expected {}",
                    c.kernel,
                    e / 16,
                    e % 16,
                    got[e],
                    want[e]
                );
            }
        }
    }
}

#[test]
fn every_fragment_covers_its_matrix_and_f16_fragments_hold_each_element_twice() {
    // idx: f32 element indices; idx16: the same as f16 (exact below 2048).
    let idx: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let idx16: Vec<f32> = (0..128)
        .map(|i| f32::from_bits(f16_bits(2.0 * i as f64) | f16_bits(2.0 * i as f64 + 1.0) << 16))
        .collect();
    for arch in ARCHS {
        let o = run(
            arch,
            "wmma_fragments",
            &[idx.clone(), idx16.clone()],
            10 * 32 * 16,
        );
        assert!(o.diagnostics.is_empty(), "{arch}: {:#?}", o.diagnostics);
        let words: Vec<u32> = o.outputs[0].iter().map(|f| f.to_bits()).collect();
        for f in 0..10 {
            let (kind, half) = (f % 5, matches!(f % 5, 2 | 3));
            let (rows, cols) = match kind {
                0 => (16, 8),
                1 => (8, 16),
                _ => (16, 16),
            };
            let mut seen = vec![0; 256];
            for w in &words[f * 512..(f + 1) * 512] {
                if *w == u32::MAX {
                    continue;
                }
                let v = if half {
                    let e = (w >> 10 & 31) as i32 - 15;
                    if *w == 0 {
                        0
                    } else {
                        ((1024 + (w & 1023)) as f64 * 2f64.powi(e - 10)) as usize
                    }
                } else {
                    f32::from_bits(*w) as usize
                };
                seen[v] += 1;
            }
            let col = f >= 5;
            for r in 0..rows {
                for c in 0..cols {
                    let want = if half { 2 } else { 1 };
                    let i = if col { c * 16 + r } else { r * 16 + c };
                    assert_eq!(seen[i], want, "{arch}: fragment {f}, element ({r}, {c})");
                }
            }
        }
    }
}

#[test]
fn a_fragment_element_nobody_wrote_is_an_uninitialized_read_naming_its_lane() {
    let ones = vec![1f32; 256];
    for arch in ARCHS {
        let o = run(
            arch,
            "wmma_unwritten",
            &[ones.clone(), ones.clone(), ones.clone()],
            256,
        );
        let d = &o.diagnostics;
        assert!(
            !d.is_empty() && d[0].kind == Kind::UninitializedRead,
            "{arch}: {d:#?}"
        );
        // Row 13 = g + 8 with g = 5: lanes 20..23 hold it.
        let lane = d[0].thread.expect("a thread")[0];
        assert!((20..24).contains(&lane), "{arch}: lane {lane}: {d:#?}");
    }
}
