//! f32 and f64 helpers of the arithmetic tables: bit casts, sign extension, flush-to-zero,
//! correct rounding of an f64 result (with its error term) to f32 in any PTX rounding mode,
//! the GPU's min/max NaN rules and the fused multiply-add. `ops` re-exports them.

use super::ir::*;
use super::ops::{NAN32, NAN64};

#[inline(always)]
pub fn f32b(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

/// Bits of an f32 result, NaN canonicalized.
#[inline(always)]
pub fn bf32(x: f32) -> u64 {
    if x.is_nan() {
        u64::from(NAN32)
    } else {
        u64::from(x.to_bits())
    }
}

/// Bits of an f64 arithmetic result with operands `ins`: a NaN result is a NaN operand, quieted,
/// or (when the operation made the NaN) the default NaN `0xfff8_0000_0000_0000`, as the GPU's
/// f64 units give them.
pub fn nan64(r: f64, ins: &[f64]) -> u64 {
    if !r.is_nan() {
        return r.to_bits();
    }
    // Of two NaN operands, the one with the larger significand (sign aside) wins, whichever
    // comes first: the GPU's `add.f64` gives the same NaN for `a + b` and `b + a`.
    let payload = |x: &&f64| x.to_bits() & !(1 << 63);
    ins.iter()
        .filter(|x| x.is_nan())
        .rev()
        .max_by_key(payload)
        .map_or(0xfff8_0000_0000_0000, |x| x.to_bits() | 1 << 51)
}

#[inline(always)]
pub(super) fn bf64(x: f64) -> u64 {
    if x.is_nan() { NAN64 } else { x.to_bits() }
}

#[inline(always)]
pub fn sext(x: u64, bits: u32) -> i64 {
    if bits >= 64 {
        x as i64
    } else {
        ((x << (64 - bits)) as i64) >> (64 - bits)
    }
}

pub(super) fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

pub(super) fn next32(x: f32, up: bool) -> f32 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    f32::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

/// Rounds the exact value `x + err` (`err` far below an f64 ulp of `x`) to f32 in mode `rnd`.
pub fn round32(x: f64, err: f64, rnd: Rnd) -> f32 {
    let r = x as f32;
    // A NaN error term comes from an infinite operand: the infinity is exact.
    if x.is_nan() || err.is_nan() || matches!(rnd, Rnd::Default | Rnd::Rn | Rnd::Rni) {
        return r;
    }
    let rd = f64::from(r);
    let (lo, hi) = if rd == x {
        if err == 0.0 {
            return r;
        }
        if err > 0.0 {
            (r, next32(r, true))
        } else {
            (next32(r, false), r)
        }
    } else if rd > x {
        (next32(r, false), r)
    } else {
        (r, next32(r, true))
    };
    match rnd {
        Rnd::Rm | Rnd::Rmi => lo,
        Rnd::Rp | Rnd::Rpi => hi,
        _ => {
            if x > 0.0 || (x == 0.0 && err > 0.0) {
                lo
            } else {
                hi
            }
        }
    }
}

pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

pub(super) fn f32_op(op: Bin, m: FMods, a: f32, b: f32) -> f32 {
    let (a, b) = if m.ftz { (ftz32(a), ftz32(b)) } else { (a, b) };
    let directed = !matches!(m.rnd, Rnd::Default | Rnd::Rn);
    let r = match op {
        Bin::Add | Bin::Sub if directed => {
            let (x, y) = (f64::from(a), f64::from(if op == Bin::Sub { -b } else { b }));
            let (s, e) = two_sum(x, y);
            if s == 0.0 {
                exact_zero(x, y, m.rnd) as f32
            } else {
                round32(s, e, m.rnd)
            }
        }
        Bin::MulLo if directed => round32(f64::from(a) * f64::from(b), 0.0, m.rnd),
        Bin::Div if directed => {
            let q = f64::from(a) / f64::from(b);
            let rem = (-q).mul_add(f64::from(b), f64::from(a));
            round32(q, rem * f64::from(b).signum(), m.rnd)
        }
        Bin::Add => a + b,
        Bin::Sub => a - b,
        Bin::MulLo => a * b,
        Bin::Div => a / b,
        Bin::Min | Bin::Max => return minmax32(op == Bin::Min, a, b),
        Bin::Copysign => return b.copysign(a),
        _ => f32::NAN,
    };
    fin32(r, m)
}

/// `.sat`: clamped to [0, 1], NaN and -0 becoming +0 (the GPU's `__saturatef(-0.0)` is +0).
pub(super) fn sat01<T: Into<f64> + From<f32> + PartialOrd>(x: T) -> T {
    let positive = x.partial_cmp(&T::from(0.0)) == Some(std::cmp::Ordering::Greater);
    if !positive {
        T::from(0.0)
    } else if x > T::from(1.0) {
        T::from(1.0)
    } else {
        x
    }
}

pub(super) fn fin32(r: f32, m: FMods) -> f32 {
    let r = if m.ftz { ftz32(r) } else { r };
    if m.sat { sat01(r) } else { r }
}

pub(super) fn minmax32(min: bool, a: f32, b: f32) -> f32 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f32::from_bits(NAN32),
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            // -0 orders below +0.
            let neg = (a.is_sign_negative(), b.is_sign_negative());
            if neg.0 == min {
                a
            } else if neg.1 == min {
                b
            } else {
                a
            }
        }
        _ if (a < b) == min => a,
        _ => b,
    }
}

/// A float fused multiply-add in f32 with rounding mode.
pub fn fma32(m: FMods, a: f32, b: f32, c: f32) -> f32 {
    let (a, b, c) = if m.ftz {
        (ftz32(a), ftz32(b), ftz32(c))
    } else {
        (a, b, c)
    };
    let r = if matches!(m.rnd, Rnd::Default | Rnd::Rn) {
        a.mul_add(b, c)
    } else {
        let (p, c) = (f64::from(a) * f64::from(b), f64::from(c));
        let (s, e) = two_sum(p, c);
        if s == 0.0 {
            exact_zero(p, c, m.rnd) as f32
        } else {
            round32(s, e, m.rnd)
        }
    };
    fin32(r, m)
}

/// The f64 next to `x` toward +infinity (`up`) or -infinity.
fn next64(x: f64, up: bool) -> f64 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

/// Rounds to f64 in mode `rnd` the exact value whose round-to-nearest result is `r`, `err` being
/// the sign (and about the size) of the exact value minus `r` (for an overflow to infinity, any
/// value of the other sign).
pub fn round64(r: f64, err: f64, rnd: Rnd) -> f64 {
    if r.is_nan() || err == 0.0 || err.is_nan() {
        return r;
    }
    match rnd {
        Rnd::Rm | Rnd::Rmi if err < 0.0 => next64(r, false),
        Rnd::Rp | Rnd::Rpi if err > 0.0 => next64(r, true),
        Rnd::Rz | Rnd::Rzi if (r > 0.0 && err < 0.0) || (r < 0.0 && err > 0.0) => {
            next64(r, r < 0.0)
        }
        _ => r,
    }
}

/// The error of an f64 result `r` that overflowed to infinity from finite operands, or `err`.
fn overflowed(r: f64, finite: bool, err: f64) -> f64 {
    if r.is_infinite() && finite { -r } else { err }
}

/// `a op b` in f64, rounded in mode `rnd` (add, sub, mul, div).
pub fn f64_op(op: Bin, rnd: Rnd, a: f64, b: f64) -> f64 {
    let finite = a.is_finite() && b.is_finite();
    let (r, err) = match op {
        Bin::Add | Bin::Sub => {
            let b = if op == Bin::Sub { -b } else { b };
            two_sum(a, b)
        }
        Bin::MulLo => {
            let p = a * b;
            (p, mul_err(a, b, p))
        }
        _ if b == 0.0 => return a / b,
        _ => {
            let q = a / b;
            (q, (-q).mul_add(b, a) * b.signum())
        }
    };
    if matches!(rnd, Rnd::Default | Rnd::Rn) {
        return r;
    }
    if matches!(op, Bin::Add | Bin::Sub) && r == 0.0 {
        let b = if op == Bin::Sub { -b } else { b };
        return exact_zero(a, b, rnd);
    }
    round64(r, overflowed(r, finite, err), rnd)
}

/// The sum `a + b` that is exactly zero: negative when rounding down and either addend is
/// negative (IEEE 754: `x - x` is `-0` rounding toward -infinity), else as round-to-nearest.
fn exact_zero(a: f64, b: f64, rnd: Rnd) -> f64 {
    let negative = if matches!(rnd, Rnd::Rm | Rnd::Rmi) {
        a.is_sign_negative() || b.is_sign_negative()
    } else {
        a.is_sign_negative() && b.is_sign_negative()
    };
    if negative { -0.0 } else { 0.0 }
}

/// The sign (and about the size) of `a * b - p`, `p` the rounded product; where `p` is
/// subnormal or zero the product's own error is not representable, so it is taken at a scale.
fn mul_err(a: f64, b: f64, p: f64) -> f64 {
    if p.abs() >= f64::MIN_POSITIVE || !a.is_finite() || !b.is_finite() {
        return a.mul_add(b, -p);
    }
    if p == 0.0 {
        // Nonzero factors whose product rounded to zero: the error has the product's sign.
        return if a == 0.0 || b == 0.0 {
            0.0
        } else {
            a.signum() * b.signum()
        };
    }
    let scale = f64::from_bits((1023 + 110) << 52);
    let (sa, sp) = (a * scale, p * scale);
    let q = sa * b;
    if q != sp { q - sp } else { sa.mul_add(b, -q) }
}

/// `fma(a, b, c)` in f64, rounded in mode `rnd`.
pub fn fma64(rnd: Rnd, a: f64, b: f64, c: f64) -> f64 {
    let f = a.mul_add(b, c);
    if matches!(rnd, Rnd::Default | Rnd::Rn) || f.is_nan() {
        return f;
    }
    let finite = a.is_finite() && b.is_finite() && c.is_finite();
    // a*b + c - f = (p - f + c) + pe, p = a*b rounded and pe its exact error.
    let p = a * b;
    let pe = a.mul_add(b, -p);
    let (t, te) = two_sum(p, c);
    let (u, ue) = two_sum(t - f, te);
    let err = u + (ue + pe);
    if f == 0.0 && err == 0.0 {
        return exact_zero(p, c, rnd);
    }
    round64(f, overflowed(f, finite, err), rnd)
}

/// `sqrt(x)` (or `1/x` for `rcp`) in f64, rounded in mode `rnd`.
pub fn sqrt_rcp64(rcp: bool, rnd: Rnd, x: f64) -> f64 {
    if rcp {
        let q = 1.0 / x;
        return round64(q, (-q).mul_add(x, 1.0) * x.signum(), rnd);
    }
    let s = x.sqrt();
    round64(s, (-s).mul_add(s, x), rnd)
}
