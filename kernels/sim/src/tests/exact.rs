//! Tests of `exact`.

use super::*;
use ptx::ir::{Bin, Rnd};

const MODES: [Rnd; 4] = [Rnd::Rn, Rnd::Rz, Rnd::Rm, Rnd::Rp];

fn next(x: f64, up: bool) -> f64 {
    if x == 0.0 {
        return f64::from_bits(1) * if up { 1.0 } else { -1.0 };
    }
    let b = x.to_bits();
    f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

#[test]
fn round_to_nearest_is_the_hardware_result() {
    let mut rng = spec::Rng::new(5);
    let mut word = || {
        let r = rng.next_u64();
        // Random bits, values near the subnormal range (products and quotients that land
        // in it), and values near 1 so that sums cancel and round.
        if r.is_multiple_of(3) {
            f64::from_bits(r >> 2 | (r & 3) << 62)
        } else if r % 3 == 1 {
            f64::from_bits(r >> 12 | (r & 0x3f) << 52 | (r & 0x40) << 57)
        } else {
            f64::from_bits(0x3ff0_0000_0000_0000 ^ (r >> 40)) * if r & 1 == 1 { -1.0 } else { 1.0 }
        }
    };
    for _ in 0..20_000 {
        let (a, b, c) = (word(), word(), word());
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            continue;
        }
        let rn = |x: f64| if x.is_nan() { None } else { Some(x.to_bits()) };
        for (op, hw) in [
            (Bin::Add, a + b),
            (Bin::Sub, a - b),
            (Bin::MulLo, a * b),
            (Bin::Div, a / b),
        ] {
            if b == 0.0 && op == Bin::Div {
                continue;
            }
            assert_eq!(rn(f64_bin(op, Rnd::Rn, a, b)), rn(hw), "{op:?} {a:e} {b:e}");
        }
        assert_eq!(
            f64_fma(Rnd::Rn, a, b, c).to_bits(),
            a.mul_add(b, c).to_bits()
        );
        if a > 0.0 {
            assert_eq!(f64_sqrt_rcp(false, Rnd::Rn, a), a.sqrt());
        }
        if a != 0.0 {
            assert_eq!(f64_sqrt_rcp(true, Rnd::Rn, a), 1.0 / a);
        }
    }
}

#[test]
fn directed_results_bracket_the_nearest_one() {
    let mut rng = spec::Rng::new(9);
    for _ in 0..20_000 {
        let r = rng.next_u64();
        let a = f64::from_bits(r >> 1 | (r & 1) << 63);
        let b = f64::from_bits(rng.next_u64());
        let c = f64::from_bits(rng.next_u64());
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            continue;
        }
        let near = f64_fma(Rnd::Rn, a, b, c);
        let (lo, hi) = (f64_fma(Rnd::Rm, a, b, c), f64_fma(Rnd::Rp, a, b, c));
        let z = f64_fma(Rnd::Rz, a, b, c);
        assert!(lo <= near && near <= hi, "{a:e} {b:e} {c:e}");
        assert!(lo == hi || next(lo, true) == hi || lo.is_infinite() || hi.is_infinite());
        assert_eq!(z, if lo >= 0.0 { lo } else { hi });
    }
}

/// The GPU gives the same (an H100, `bench/fuzz_probe.cu`'s second kernel): `__fma_rz`,
/// `__fma_rd` the largest double, `__fma_ru` and `__fma_rn` infinity.
#[test]
fn an_overflowing_product_can_still_round_to_a_finite_sum() {
    // 2^1024 - 2^969: above the largest double, below the midpoint to infinity's side.
    let (a, b, c) = (2f64.powi(600), 2f64.powi(424), -(2f64.powi(969)));
    assert_eq!(f64_fma(Rnd::Rz, a, b, c), f64::MAX);
    assert_eq!(f64_fma(Rnd::Rm, a, b, c), f64::MAX);
    assert_eq!(f64_fma(Rnd::Rp, a, b, c), f64::INFINITY);
    assert_eq!(f64_fma(Rnd::Rn, a, b, c), f64::INFINITY);
    // Exactly the largest double.
    let c = -(2f64.powi(971));
    for rnd in MODES {
        assert_eq!(f64_fma(rnd, a, b, c), f64::MAX);
    }
}

/// The GPU gives the same for `__ddiv_rz`/`__ddiv_ru` of 3 quanta by 2 and `__drcp_rz`/
/// `__drcp_ru` of the largest double (an H100, `bench/fuzz_probe.cu`).
#[test]
fn subnormal_quotients_and_products_round_in_their_mode() {
    let tiny = f64::from_bits(1);
    // 3 * 2^-1074 / 2 = 1.5 quanta.
    let three = f64::from_bits(3);
    assert_eq!(f64_bin(Bin::Div, Rnd::Rz, three, 2.0).to_bits(), 1);
    assert_eq!(f64_bin(Bin::Div, Rnd::Rp, three, 2.0).to_bits(), 2);
    assert_eq!(f64_bin(Bin::Div, Rnd::Rn, three, 2.0).to_bits(), 2);
    assert_eq!(
        f64_bin(Bin::Div, Rnd::Rm, -three, 2.0).to_bits(),
        2 | 1 << 63
    );
    // A product far below the smallest subnormal.
    assert_eq!(f64_bin(Bin::MulLo, Rnd::Rp, tiny, tiny).to_bits(), 1);
    assert_eq!(f64_bin(Bin::MulLo, Rnd::Rz, tiny, tiny).to_bits(), 0);
    assert_eq!(f64_bin(Bin::MulLo, Rnd::Rz, -tiny, tiny).to_bits(), 1 << 63);
    assert_eq!(f64_sqrt_rcp(true, Rnd::Rz, f64::MAX), 2f64.powi(-1024));
    assert_eq!(
        f64_sqrt_rcp(true, Rnd::Rp, f64::MAX).to_bits(),
        2f64.powi(-1024).to_bits() + 1
    );
}

#[test]
fn square_roots_are_exact_where_they_can_be() {
    for rnd in MODES {
        assert_eq!(f64_sqrt_rcp(false, rnd, 4.0), 2.0);
        assert_eq!(f64_sqrt_rcp(false, rnd, f64::from_bits(4)), 2f64.powi(-536));
    }
    // sqrt(2) = 1.41421356237309504880..., which SQRT_2 rounds up.
    let root = std::f64::consts::SQRT_2;
    assert_eq!(f64_sqrt_rcp(false, Rnd::Rn, 2.0), root);
    assert_eq!(f64_sqrt_rcp(false, Rnd::Rp, 2.0), root);
    assert_eq!(f64_sqrt_rcp(false, Rnd::Rz, 2.0), next(root, false));
    assert_eq!(f64_sqrt_rcp(false, Rnd::Rm, 2.0), next(root, false));
}

#[test]
fn exact_zero_sums_are_negative_only_rounding_down() {
    for rnd in MODES {
        let neg = f64_bin(Bin::Sub, rnd, 3.0, 3.0).is_sign_negative();
        assert_eq!(neg, rnd == Rnd::Rm);
        assert!(f64_bin(Bin::Add, rnd, -0.0, -0.0).is_sign_negative());
    }
}

#[test]
fn integers_and_doubles_become_f32_rounded_in_their_mode() {
    let r = |x: Exact, rnd| round(x, rnd, F32) as u32;
    // 2^24 + 1 lies between two f32s.
    let odd = Exact::int(false, (1 << 24) + 1);
    assert_eq!(r(odd, Rnd::Rz), 0x4b80_0000);
    assert_eq!(r(odd, Rnd::Rp), 0x4b80_0001);
    assert_eq!(r(odd, Rnd::Rn), 0x4b80_0000);
    assert_eq!(
        r(Exact::int(false, u128::from(u64::MAX)), Rnd::Rz),
        0x5f7f_ffff
    );
    assert_eq!(r(Exact::of64(f64::MAX), Rnd::Rz), 0x7f7f_ffff);
    assert_eq!(r(Exact::of64(f64::MAX), Rnd::Rn), 0x7f80_0000);
    assert_eq!(r(Exact::of64(-f64::from_bits(1)), Rnd::Rm), 0x8000_0001);
    assert_eq!(r(Exact::of64(-f64::from_bits(1)), Rnd::Rn), 0x8000_0000);
}
