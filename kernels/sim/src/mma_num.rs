//! Tensor-core numerics: how one element of `D = A x B + C` is added up, bit for bit.
//!
//! The model is the one published with MMA-Sim (microsoft/MMA-Sim, `mmasim/simulator/
//! arithmetic.py`, and its paper, arXiv 2511.10909), which matches NVIDIA's `mma.sync` bit for
//! bit on the GPUs it measured; this is our own code following its description:
//! 1. the operands are read exactly (tf32: the top 19 bits of the 32-bit word, the low 13
//!    ignored; f16 and bf16 as they are) and every product is exact;
//! 2. each term (the products and the accumulator `c`) is written as significand times
//!    2^exponent, with the exponent clamped below at the operand format's smallest normal
//!    exponent (zero counts as 2^-126);
//! 3. the terms are aligned to the largest exponent and each is truncated (toward zero) to
//!    `frac_bits` bits below that exponent's leading bit: 24 on Ampere and Ada, 25 on Hopper;
//! 4. the truncated terms are added exactly and the sum is normalized to f32 with truncation
//!    (round toward zero); a zero sum is +0; NaN anywhere gives `0x7fffffff`, infinity infinity;
//! 5. on Ampere the k dimension of m16n8k8 tf32 and m16n8k16 f16/bf16 is split in two halves,
//!    each added as above into the running f32 value; Hopper adds all k products at once.
//!
//! The simulator models the workbook's benchmark GPU, Hopper ([`MODEL`]).

use crate::half;
pub use ptx::ir::Elem;
use ptx::ir::Ty;

/// The numbers behind an operand format's bits.
pub trait ElemValue {
    /// The exact value of an element's bits.
    fn value(self, bits: u32) -> f64;
    /// The smallest normal exponent of the format.
    fn min_exp(self) -> i32;
}

impl ElemValue for Elem {
    fn value(self, bits: u32) -> f64 {
        match self {
            Elem::Tf32 => f64::from(f32::from_bits(bits & 0xffff_e000)),
            Elem::F16 => half::to_f64(u64::from(bits), Ty::F16),
            Elem::Bf16 => half::to_f64(u64::from(bits), Ty::BF16),
        }
    }
    fn min_exp(self) -> i32 {
        if self == Elem::F16 { -14 } else { -126 }
    }
}

/// The accumulation of one GPU generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    pub frac_bits: i32,
    pub split_k: bool,
}

impl Model {
    /// A100 and the Ada GPUs; `MODEL` names the one simulated.
    #[allow(dead_code)]
    pub const AMPERE: Model = Model {
        frac_bits: 24,
        split_k: true,
    };
    pub const HOPPER: Model = Model {
        frac_bits: 25,
        split_k: false,
    };
}

/// The generation the simulator models.
pub const MODEL: Model = Model::HOPPER;

/// 2^n for n in f64's normal range.
fn exp2i(n: i32) -> f64 {
    f64::from_bits(((n.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// `x` as (significand, exponent), 1 <= |significand| < 2 unless the exponent is clamped at
/// `min_exp`; zero as (0, -126).
fn sig_exp(x: f64, min_exp: i32) -> (f64, i32) {
    if x == 0.0 {
        return (0.0, -126);
    }
    let e = (((x.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(min_exp);
    (x * exp2i(-e), e)
}

/// One fused step: `c + sum(a[i] * b[i])` into an f32, as in steps 2-4 above.
fn fused(a: &[f64], b: &[f64], c: f32, elem: Elem, frac_bits: i32) -> f32 {
    let exact: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() + f64::from(c);
    if exact.is_nan() {
        return f32::from_bits(0x7fff_ffff);
    }
    if exact.is_infinite() {
        return exact as f32;
    }
    let mut terms = [(0.0, 0); 17];
    terms[0] = sig_exp(f64::from(c), -126);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let ((sx, ex), (sy, ey)) = (sig_exp(*x, elem.min_exp()), sig_exp(*y, elem.min_exp()));
        terms[i + 1] = (sx * sy, ex + ey);
    }
    let terms = &terms[..a.len() + 1];
    let top = terms.iter().map(|t| t.1).max().unwrap_or(0);
    let sum: f64 = terms
        .iter()
        .map(|&(s, e)| {
            let shift = frac_bits + e - top;
            if shift < -60 {
                0.0
            } else {
                (s * exp2i(shift)).trunc() * exp2i(-frac_bits)
            }
        })
        .fold(0.0, |acc, x| acc + x);
    let v = sum * exp2i(top);
    let (s, e) = sig_exp(v, -126);
    let s = (s * exp2i(23)).trunc() * exp2i(-23);
    if s == 0.0 {
        return 0.0;
    }
    (s * exp2i(e)) as f32
}

/// `c + a . b` for one output element under `model` (`a`, `b`: the exact operand values).
pub fn dot_add(a: &[f64], b: &[f64], c: f32, elem: Elem, model: Model) -> f32 {
    if model.split_k && a.len() >= 2 {
        let h = a.len() / 2;
        let first = fused(&a[..h], &b[..h], c, elem, model.frac_bits);
        return fused(&a[h..], &b[h..], first, elem, model.frac_bits);
    }
    fused(a, b, c, elem, model.frac_bits)
}

/// `cvt.{rna,rn,rz}.tf32.f32`: the word rounded to tf32 (low 13 bits zero). `away`: ties away
/// from zero (`.rna`); otherwise `even` picks ties to even (`.rn`) or truncation (`.rz`).
pub fn to_tf32(bits: u32, away: bool, even: bool) -> u32 {
    if f32::from_bits(bits).is_nan() {
        return 0x7fff_ffff;
    }
    if f32::from_bits(bits).is_infinite() {
        return bits;
    }
    let add = match (away, even) {
        (true, _) => 0x1000,
        (false, true) => 0xfff + ((bits >> 13) & 1),
        (false, false) => 0,
    };
    // Adding to the magnitude bits carries into the exponent as rounding should (up to inf).
    let sign = bits & 0x8000_0000;
    sign | (((bits & 0x7fff_ffff) + add) & 0xffff_e000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32], c: f32, m: Model) -> f32 {
        let v = |x: &[f32]| x.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
        dot_add(&v(a), &v(b), c, Elem::Tf32, m)
    }

    #[test]
    fn exact_sums_are_exact() {
        let a = [1.0, 2.0, -3.0, 0.5, 4.0, 0.0, 1.5, -2.0];
        let b = [2.0, 0.25, 1.0, 8.0, -1.0, 7.0, 2.0, 0.5];
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>() + 10.0;
        for m in [Model::AMPERE, Model::HOPPER] {
            assert_eq!(dot(&a, &b, 10.0, m), exact);
        }
    }

    #[test]
    fn small_terms_are_truncated_at_the_largest_exponent() {
        // Four products of 2^-25 beside 1: Hopper keeps 25 bits below the leading 1 and sums
        // them to 1 + 2^-23; Ampere keeps 24 and cuts each one.
        let (a, b) = (2f32.powi(-12), 2f32.powi(-13));
        let (xs, ys) = ([1.0, a, a, a, a], [1.0, b, b, b, b]);
        assert_eq!(dot(&xs, &ys, 0.0, Model::HOPPER), 1.0 + 2f32.powi(-23));
        assert_eq!(dot(&xs, &ys, 0.0, Model::AMPERE), 1.0);
    }

    #[test]
    fn negative_sums_round_toward_zero() {
        // -1 - 2^-24: the f32 result truncates toward zero to -1 (round-to-nearest-even
        // would also give -1; -1 - 3 * 2^-24 tells them apart: RZ -1 - 2^-23, RN -1 - 2^-22).
        let t = 2f32.powi(-12);
        let r = dot(&[-1.0, -t, -t, -t], &[1.0, t, t, t], 0.0, Model::HOPPER);
        assert_eq!(r, -1.0 - 2f32.powi(-23));
    }

    #[test]
    fn ampere_adds_the_two_halves_of_k_separately() {
        // 2^30 - 2^30 in the first half, 1 + 2^-20 in the second: Ampere adds the halves one
        // after the other and keeps 1 + 2^-20; Hopper aligns all eight products to 2^30, where
        // 25 bits do not reach 1.
        let (big, tiny) = (2f32.powi(15), 2f32.powi(-10));
        let a = [big, -big, 0.0, 0.0, 1.0, tiny, 0.0, 0.0];
        let b = [big, big, 0.0, 0.0, 1.0, tiny, 0.0, 0.0];
        assert_eq!(dot(&a, &b, 0.0, Model::AMPERE), 1.0 + 2f32.powi(-20));
        assert_eq!(dot(&a, &b, 0.0, Model::HOPPER), 0.0);
    }

    #[test]
    fn nan_and_infinity() {
        assert_eq!(dot(&[f32::NAN], &[1.0], 0.0, MODEL).to_bits(), 0x7fff_ffff);
        assert_eq!(
            dot(&[f32::INFINITY], &[-1.0], 0.0, MODEL),
            f32::NEG_INFINITY
        );
        assert_eq!(dot(&[-1.0], &[1.0], 1.0, MODEL).to_bits(), 0);
    }

    #[test]
    fn tf32_rounding() {
        let one = 1f32.to_bits();
        assert_eq!(to_tf32(one + 0x1000, true, false), one + 0x2000); // tie away
        assert_eq!(to_tf32(one + 0x1000, false, true), one); // tie to even
        assert_eq!(to_tf32(one + 0x3000, false, true), one + 0x4000);
        assert_eq!(to_tf32(one + 0x1fff, false, false), one);
        assert_eq!(to_tf32(0x7f7f_ffff, true, false), 0x7f80_0000);
        assert_eq!(to_tf32(0x8000_1000 | one, true, false), 0x8000_2000 | one);
    }
}
