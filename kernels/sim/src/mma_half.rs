//! Half-precision arithmetic and the conversions that feed the tensor cores, one lane at a time:
//! `add/sub/mul/fma/neg/abs/min/max` on `.f16`, `.bf16` and their packed `x2` forms (what
//! NVRTC emits for `__half2` and `__nv_bfloat162` code), `cvt.rn{.relu}.{f16x2,bf16x2}.f32`
//! (two f32 into one word, the first operand in the upper half) and `cvt.{rna,rn,rz}.tf32.f32`.
//!
//! Every result is the exact value rounded once to the half format (`half::from_f64`); an fma
//! whose exact value an f64 cannot hold keeps a sticky bit so that the one rounding is right.
//! A packed operation works on the two halves independently, low half first.

use crate::half::{from_f64, to_f64};
use ptx::ir::HalfOp;
use ptx::ir::{FMods, Rnd, Ty};
/// `x` moved one f64 ulp toward `err`'s sign: a sticky bit below every half format's precision.
fn sticky(x: f64, err: f64) -> f64 {
    if err == 0.0 || x == 0.0 || !x.is_finite() {
        return x;
    }
    let b = x.to_bits();
    f64::from_bits(if (err > 0.0) == (x > 0.0) {
        b + 1
    } else {
        b - 1
    })
}

/// One half of type `ty` (`F16` or `BF16`): `op` on the 16-bit values `a`, `b`, `c`.
fn one(op: HalfOp, ty: Ty, m: FMods, a: u64, b: u64, c: u64) -> u64 {
    let ftz = |x: f64| {
        if m.ftz && ty == Ty::F16 && x.abs() < 2f64.powi(-14) {
            0.0 * x.signum()
        } else {
            x
        }
    };
    let (x, y, z) = (ftz(to_f64(a, ty)), ftz(to_f64(b, ty)), ftz(to_f64(c, ty)));
    let rnd = if m.rnd == Rnd::Default {
        Rnd::Rn
    } else {
        m.rnd
    };
    let r = match op {
        HalfOp::Neg => return (a ^ 0x8000) & 0xffff,
        HalfOp::Abs => return a & 0x7fff,
        HalfOp::Min | HalfOp::Max => {
            let pick_x = match (x.is_nan(), y.is_nan()) {
                (true, true) => return 0x7fff,
                (true, false) => false,
                (false, true) => true,
                _ if x == y => (x.is_sign_negative() == (op == HalfOp::Min)) || x != 0.0,
                _ => (x < y) == (op == HalfOp::Min),
            };
            return if pick_x { a & 0xffff } else { b & 0xffff };
        }
        HalfOp::Add => x + y,
        HalfOp::Sub => x - y,
        HalfOp::Mul => x * y,
        HalfOp::Fma => {
            let p = x * y; // exact: two 11-bit significands
            let s = p + z;
            let err = if s.is_finite() {
                let bb = s - p;
                (p - (s - bb)) + (z - bb)
            } else {
                0.0
            };
            sticky(s, err)
        }
    };
    let r = if m.sat {
        if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
    } else {
        r
    };
    let h = from_f64(r, ty, rnd);
    if m.ftz && ty == Ty::F16 && h & 0x7c00 == 0 {
        h & 0x8000
    } else {
        h
    }
}

/// `op` on one lane: packed (`x2`) or scalar halves of type `ty`.
pub fn apply(op: HalfOp, ty: Ty, x2: bool, m: FMods, a: u64, b: u64, c: u64) -> u64 {
    let lo = one(op, ty, m, a & 0xffff, b & 0xffff, c & 0xffff);
    if !x2 {
        return lo;
    }
    let hi = one(
        op,
        ty,
        m,
        a >> 16 & 0xffff,
        b >> 16 & 0xffff,
        c >> 16 & 0xffff,
    );
    hi << 16 | lo
}

/// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b`: `a` to the upper half, `b` to the lower.
pub fn pack(ty: Ty, relu: bool, a: u64, b: u64) -> u64 {
    let h = |w: u64| {
        let x = f64::from(f32::from_bits(w as u32));
        let x = if relu && !x.is_nan() && x < 0.0 {
            0.0
        } else {
            x
        };
        from_f64(x, ty, Rnd::Rn)
    };
    h(a) << 16 | h(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RN: FMods = FMods {
        rnd: Rnd::Rn,
        ftz: false,
        sat: false,
        approx: false,
    };

    #[test]
    fn packed_halves_are_independent() {
        // f16: 1.0 = 0x3c00, 2.0 = 0x4000, 0.5 = 0x3800.
        let a = 0x3c00_4000;
        let b = 0x3800_3c00;
        assert_eq!(apply(HalfOp::Add, Ty::F16, true, RN, a, b, 0), 0x3e00_4200);
        assert_eq!(apply(HalfOp::Mul, Ty::F16, true, RN, a, b, 0), 0x3800_4000);
        assert_eq!(apply(HalfOp::Neg, Ty::F16, true, RN, a, 0, 0), 0xbc00_c000);
    }

    #[test]
    fn bf16_fma_rounds_once() {
        // (1 + 2^-7) * 1.5 = 1.5 + 2^-7 + 2^-8, a tie in bf16 that goes to even (0x3fc2); an
        // addend of -2^-100, far below an f64 ulp of the product, must still tip it down.
        let (a, b) = (0x3f81, 0x3fc0);
        let tiny = u64::from(2f32.powi(-100).to_bits() >> 16);
        assert_eq!(apply(HalfOp::Fma, Ty::BF16, false, RN, a, b, 0), 0x3fc2);
        assert_eq!(
            apply(HalfOp::Fma, Ty::BF16, false, RN, a, b, tiny | 0x8000),
            0x3fc1
        );
        assert_eq!(apply(HalfOp::Fma, Ty::BF16, false, RN, a, b, tiny), 0x3fc2);
    }

    #[test]
    fn packing_puts_the_first_operand_high() {
        let w = |x: f32| u64::from(x.to_bits());
        assert_eq!(pack(Ty::F16, false, w(1.0), w(2.0)), 0x3c00_4000);
        assert_eq!(pack(Ty::BF16, true, w(-1.0), w(1.0)), 0x0000_3f80);
    }
}
