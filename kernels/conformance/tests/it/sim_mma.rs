//! The tensor-core family on the simulator: `mma.sync` (tf32, f16, bf16), `ldmatrix`, `cvt` to
//! tf32 and packed halves, and `__half2`/`__nv_bfloat162` arithmetic, from fixtures compiled
//! for compute_80 and compute_90. Expected values are computed here, independently of the
//! simulator: f64 sums of the exact products, operands rounded by this file's own formulas.

use crate::common;
use crate::tensor;

use common::ptx;
use spec::Rng;
use spec::diag::Kind;
use spec::job::{Job, Launch, RunOutput};

const ARCHS: [&str; 2] = ["sm80", "sm90"];

fn words(w: &[u32]) -> Vec<f32> {
    w.iter().map(|&b| f32::from_bits(b)).collect()
}

/// Runs `kernel(inputs..., out)` with `threads` threads in one block.
fn run(
    fixture: &str,
    arch: &str,
    kernel: &str,
    inputs: &[Vec<f32>],
    out: usize,
    threads: u32,
) -> RunOutput {
    sim::run(
        &ptx(fixture, arch),
        &tensor::job(kernel, inputs, out, threads),
    )
}

fn bits_out(o: &RunOutput, arch: &str) -> Vec<u32> {
    assert!(o.diagnostics.is_empty(), "{arch}: {:#?}", o.diagnostics);
    o.outputs[0].iter().map(|f| f.to_bits()).collect()
}

/// f32 to tf32 rounding to nearest, ties away from zero, by arithmetic on the value.
fn tf32_rna(x: f32) -> f32 {
    if x == 0.0 {
        return x;
    }
    let e = f64::from(x).abs().log2().floor() as i32;
    let ulp = 2f64.powi(e - 10);
    let q = (f64::from(x).abs() / ulp + 0.5).floor() * ulp;
    (q * f64::from(x).signum()) as f32
}

/// An f16 of exactly representable `x` (|x| in f16's normal range or zero).
fn f16_bits(x: f64) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let s = if x < 0.0 { 0x8000 } else { 0 };
    let e = x.abs().log2().floor() as i32;
    let m = (x.abs() / 2f64.powi(e) - 1.0) * 1024.0;
    assert!(
        m.fract() == 0.0 && (-14..=15).contains(&e),
        "{x} is not an f16"
    );
    s | (((e + 15) as u32) << 10) | m as u32
}

/// A bf16 of exactly representable `x`.
fn bf16_bits(x: f64) -> u32 {
    let b = (x as f32).to_bits();
    assert_eq!(b & 0xffff, 0, "{x} is not a bf16");
    b >> 16
}

/// D = A B + C in f64, A 16 x K, B K x 8, row-major.
fn reference(a: &[f64], b: &[f64], c: &[f32], k: usize) -> Vec<f64> {
    (0..128)
        .map(|i| {
            let (r, n) = (i / 8, i % 8);
            (0..k).map(|j| a[r * k + j] * b[j * 8 + n]).sum::<f64>() + f64::from(c[i])
        })
        .collect()
}

#[test]
fn mma_tf32_with_exact_sums_is_bit_exact() {
    // Small dyadic values: every sum is exact. A's values carry a perturbation that
    // cvt.rna removes, B's words junk low bits that the tensor core ignores.
    let a: Vec<f32> = (0..128)
        .map(|i| {
            let v = ((i * 7 % 17) as f32 - 8.0) / 4.0;
            if v == 0.0 {
                v
            } else {
                v + v.signum() * 2f32.powi(-16)
            }
        })
        .collect();
    let b: Vec<u32> = (0..64)
        .map(|i| {
            (((i * 5 % 13) as f32 - 6.0) / 8.0).to_bits() | if i % 3 == 0 { 0 } else { 0x0abc }
        })
        .collect();
    let c: Vec<f32> = (0..128).map(|i| (i % 9) as f32 - 4.0).collect();
    let av: Vec<f64> = a.iter().map(|&x| f64::from(tf32_rna(x))).collect();
    let bv: Vec<f64> = b
        .iter()
        .map(|&w| f64::from(f32::from_bits(w & 0xffff_e000)))
        .collect();
    let want = reference(&av, &bv, &c, 8);
    for arch in ARCHS {
        let o = run(
            "mma_sync",
            arch,
            "mma_tf32",
            &[a.clone(), words(&b), c.clone()],
            128,
            32,
        );
        let got = bits_out(&o, arch);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                f32::from_bits(*g),
                *w as f32,
                "{arch}: D[{}][{}]",
                i / 8,
                i % 8
            );
        }
    }
}

/// Checks `got` against the f64 reference within `rel` of the sum of the terms' magnitudes.
fn close(got: &[u32], a: &[f64], b: &[f64], c: &[f32], k: usize, rel: f64, what: &str) {
    let want = reference(a, b, c, k);
    let aa: Vec<f64> = a.iter().map(|x| x.abs()).collect();
    let ba: Vec<f64> = b.iter().map(|x| x.abs()).collect();
    let ca: Vec<f32> = c.iter().map(|x| x.abs()).collect();
    let mag = reference(&aa, &ba, &ca, k);
    for i in 0..128 {
        let g = f64::from(f32::from_bits(got[i]));
        assert!(
            (g - want[i]).abs() <= rel * mag[i],
            "{what}: D[{}][{}] = {g}, expected {}",
            i / 8,
            i % 8,
            want[i]
        );
    }
}

#[test]
fn mma_tf32_on_random_fragments_is_within_an_f32_ulp_of_the_exact_sum() {
    let mut r = Rng::new(15);
    let a: Vec<f32> = (0..128).map(|_| r.uniform(-2.0, 2.0)).collect();
    let b: Vec<f32> = (0..64).map(|_| r.uniform(-2.0, 2.0)).collect();
    let c: Vec<f32> = (0..128).map(|_| r.uniform(-8.0, 8.0)).collect();
    let av: Vec<f64> = a.iter().map(|&x| f64::from(tf32_rna(x))).collect();
    let bv: Vec<f64> = b
        .iter()
        .map(|&x| f64::from(f32::from_bits(x.to_bits() & 0xffff_e000)))
        .collect();
    for arch in ARCHS {
        let o = run(
            "mma_sync",
            arch,
            "mma_tf32",
            &[a.clone(), b.clone(), c.clone()],
            128,
            32,
        );
        close(&bits_out(&o, arch), &av, &bv, &c, 8, 2f64.powi(-22), arch);
    }
}

/// A (16 x 16) packed as the fixture reads it: word r * 8 + j = {A[r][2j], A[r][2j+1]}; B
/// (16 x 8) column by column: word n * 8 + j = {B[2j][n], B[2j+1][n]}.
fn pack16(a: &[f64], b: &[f64], bits: fn(f64) -> u32) -> (Vec<u32>, Vec<u32>) {
    let aw = (0..128)
        .map(|i| bits(a[2 * i]) | bits(a[2 * i + 1]) << 16)
        .collect();
    let bw = (0..64)
        .map(|i| {
            let (n, j) = (i / 8, i % 8);
            bits(b[2 * j * 8 + n]) | bits(b[(2 * j + 1) * 8 + n]) << 16
        })
        .collect();
    (aw, bw)
}

#[test]
fn mma_f16_and_bf16_are_exact_on_exact_sums_and_close_on_random_ones() {
    let mut r = Rng::new(16);
    // Exact: multiples of 1/8 below 2 in magnitude; random: 8-bit significands at exponents
    // from -10 to 0 (exact in bf16 and f16), whose sums f32 cannot hold exactly.
    let exact = |i: usize, m: usize| ((i * m % 29) as f64 - 14.0) / 8.0;
    let rand = |r: &mut Rng| {
        let x = f64::from(r.uniform(-1.0, 1.0));
        let x = if x.abs() < 2f64.powi(-10) { 0.5 } else { x };
        let ulp = 2f64.powi(x.abs().log2().floor() as i32 - 7);
        (x / ulp).round() * ulp
    };
    for (kernel, bits) in [
        ("mma_f16", f16_bits as fn(f64) -> u32),
        ("mma_bf16", bf16_bits),
    ] {
        for random in [false, true] {
            let a: Vec<f64> = (0..256)
                .map(|i| if random { rand(&mut r) } else { exact(i, 11) })
                .collect();
            let b: Vec<f64> = (0..128)
                .map(|i| if random { rand(&mut r) } else { exact(i, 7) })
                .collect();
            let c: Vec<f32> = (0..128).map(|i| (i % 5) as f32 * 0.75).collect();
            let (aw, bw) = pack16(&a, &b, bits);
            for arch in ARCHS {
                let o = run(
                    "mma_sync",
                    arch,
                    kernel,
                    &[words(&aw), words(&bw), c.clone()],
                    128,
                    32,
                );
                let got = bits_out(&o, arch);
                let rel = if random { 2f64.powi(-22) } else { 0.0 };
                close(&got, &a, &b, &c, 16, rel, &format!("{kernel} {arch}"));
            }
        }
    }
}

#[test]
fn mma_by_half_a_warp_is_barrier_divergence() {
    let z = vec![0f32; 128];
    for arch in ARCHS {
        let o = run(
            "mma_sync",
            arch,
            "mma_tf32",
            &[z.clone(), z.clone(), z.clone()],
            128,
            16,
        );
        let d = &o.diagnostics;
        assert!(
            d.len() == 1
                && d[0].kind == Kind::BarrierDivergence
                && d[0].message.contains("all 32 lanes")
                && d[0].line.is_some(),
            "{arch}: {d:#?}"
        );
    }
}

#[test]
fn ldmatrix_x1_x2_x4_and_trans_follow_the_ptx_layout() {
    let mut r = Rng::new(17);
    // 32 rows of 8 halves, as 4 words per row; bit 30 clear so no word is a NaN.
    let tile: Vec<u32> = (0..128).map(|_| r.next_u64() as u32 & !(1 << 30)).collect();
    let h = |row: usize, col: usize| (tile[row * 4 + col / 2] >> (16 * (col % 2))) & 0xffff;
    let mut want = vec![0u32; 352];
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        let plain = |m: usize| h(8 * m + g, 2 * t) | h(8 * m + g, 2 * t + 1) << 16;
        let trans = |m: usize| h(8 * m + 2 * t, g) | h(8 * m + 2 * t + 1, g) << 16;
        want[l] = plain(0);
        for m in 0..2 {
            want[32 + l * 2 + m] = plain(m);
        }
        for m in 0..4 {
            want[96 + l * 4 + m] = plain(m);
            want[224 + l * 4 + m] = trans(m);
        }
    }
    for arch in ARCHS {
        let o = run("ldmatrix", arch, "ldmatrix", &[words(&tile)], 352, 32);
        assert_eq!(bits_out(&o, arch), want, "{arch}");
    }
}

#[test]
fn ldmatrix_of_an_unwritten_row_is_an_uninitialized_read_naming_the_lane() {
    let tile: Vec<f32> = (0..128).map(|i| i as f32).collect();
    for arch in ARCHS {
        let o = run(
            "ldmatrix",
            arch,
            "ldmatrix_unwritten",
            std::slice::from_ref(&tile),
            128,
            32,
        );
        let d = &o.diagnostics;
        assert!(!d.is_empty(), "{arch}: no diagnostic");
        assert_eq!(d[0].kind, Kind::UninitializedRead, "{arch}: {d:#?}");
        let lane = d[0].thread.expect("a thread")[0];
        assert!(
            (16..32).contains(&lane),
            "{arch}: lane {lane} gave a written row"
        );
        assert!(d[0].line.is_some_and(|l| l > 40), "{arch}: {:?}", d[0].line);
    }
}

#[test]
fn half2_arithmetic_and_packing_round_like_the_gpu() {
    let f16p = |lo: f64, hi: f64| f16_bits(lo) | f16_bits(hi) << 16;
    let bf16p = |lo: f64, hi: f64| bf16_bits(lo) | bf16_bits(hi) << 16;
    // x = (1.5, -2.25), y = (0.375, 4), z = (1024, 0.5): the f16 fma of the low half,
    // 1.5 * 0.375 + 1024 = 1024.5625, rounds to 1025 (ulp 1 at 1024).
    let input = [
        f16p(1.5, -2.25),
        f16p(0.375, 4.0),
        f16p(1024.0, 0.5),
        bf16p(1.5, -2.25),
        bf16p(0.375, 4.0),
        bf16p(256.0, 0.5),
        3.0f32.to_bits(),
        (1.0f32 + 2f32.powi(-11) + 2f32.powi(-20)).to_bits(),
    ];
    let want = [
        f16p(1.875, 1.75),
        f16p(1.125, -6.25),
        f16p(0.5625, -9.0),
        f16p(1025.0, -8.5),
        // cvt.rn.f16x2.f32 d, in[7], in[6]: in[7] (just above a tie: up) in the high half.
        f16p(3.0, 1.0 + 2f64.powi(-10)),
        f16p(-1.5, 2.25),
        bf16p(1.875, 1.75),
        bf16p(1.125, -6.25),
        bf16p(0.5625, -9.0),
        // 256.5625 rounds to 256 at bf16's ulp of 2 there; -9 + 0.5 = -8.5.
        bf16p(256.0, -8.5),
        bf16p(3.0, 1.0),
        // cvt.rna.tf32.f32 of 3.0: exact.
        3.0f32.to_bits(),
    ];
    for arch in ARCHS {
        let o = run("half2_ops", arch, "half2_ops", &[words(&input)], 12, 1);
        let got = bits_out(&o, arch);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{arch}: out[{i}] = {g:#010x}, expected {w:#010x}");
        }
    }
}

#[test]
fn an_mma_shape_it_does_not_simulate_is_unsupported_by_name() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b32 %r<8>;\n.reg .f32 %f<9>;\n\
        mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r3}, {%f5,%f6,%f7,%f8};\nret;\n}\n";
    let job = Job {
        kernel: "k".into(),
        launch: Launch::linear(1, 32),
        args: vec![],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    let d = sim::run(ptx, &job).diagnostics;
    assert!(
        d[0].kind == Kind::UnsupportedInstruction && d[0].message.contains("m16n8k4"),
        "{d:#?}"
    );
    // A half-precision modifier it does not model (NaN-propagating max) is named, not ignored.
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b32 %r<4>;\nmax.NaN.f16x2 %r1, %r2, %r3;\nret;\n}\n";
    let d = sim::run(ptx, &job).diagnostics;
    assert!(
        d[0].kind == Kind::UnsupportedInstruction && d[0].message.contains("`.NaN`"),
        "{d:#?}"
    );
}
