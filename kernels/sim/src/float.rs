//! f32 and f64 helpers of the arithmetic tables: bit casts, sign extension, flush-to-zero,
//! correct rounding of an f64 result (with its error term) to f32 in any PTX rounding mode,
//! the GPU's min/max NaN rules and the fused multiply-add. `ops` re-exports them.

/// The canonical NaNs the GPU returns.
pub const NAN32: u32 = 0x7fff_ffff;
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;
use ptx::ir::*;

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

/// Bits of an f64 arithmetic result with operands `ins`: a NaN result is the first NaN operand,
/// quieted, or (when the operation made the NaN) the default NaN `0xfff8_0000_0000_0000`.
/// Which NaN the GPU keeps is decided in the SASS, not the PTX: measured on an H200 with nvcc
/// 13.0.88 (issue 36), DADD, DMUL and DFMA keep the NaN of their second source slot (DFMA: slot 2,
/// else slot 3, else slot 1), so `a + b`, `a * b`, `fma(a, b, c)` and `fmax(a, b)` with a and b NaN
/// return b's payload and `fma(a, 1, c)` c's, quieted. ptxas fills the slots as it likes (it
/// swaps commutative operands, writes `a - b` as `-b + a`), and the PTX the simulator runs does
/// not say how, so no rule on the PTX matches every kernel; the simulator keeps the PTX's first
/// NaN operand, the rule `bench/nan_pairs.cu` found on its kernels. Differential fuzzing meets the
/// difference in about 3% of generated kernels (bench/RESULTS.md); no puzzle's inputs hold two
/// NaNs.
pub fn nan64(r: f64, ins: &[f64]) -> u64 {
    if !r.is_nan() {
        return r.to_bits();
    }
    ins.iter()
        .find(|x| x.is_nan())
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

/// The sum `a + b` that is exactly zero: negative when rounding down and either addend is
/// negative (IEEE 754: `x - x` is `-0` rounding toward -infinity), else as round-to-nearest.
fn exact_zero(a: f64, b: f64, rnd: Rnd) -> f64 {
    if crate::exact::zero_sum_negative(a.is_sign_negative(), b.is_sign_negative(), rnd) {
        -0.0
    } else {
        0.0
    }
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

/// `a op b` in f64 (add, sub, mul, div), rounded in mode `rnd`: the hardware's result to
/// nearest and wherever an operand is not finite or the divisor is zero (those results are
/// exact), otherwise computed exactly (`exact`).
pub fn f64_op(op: Bin, rnd: Rnd, a: f64, b: f64) -> f64 {
    let special = !a.is_finite() || !b.is_finite() || (op == Bin::Div && b == 0.0);
    if !crate::exact::directed(rnd) || special {
        return match op {
            Bin::Add => a + b,
            Bin::Sub => a - b,
            Bin::MulLo => a * b,
            _ => a / b,
        };
    }
    crate::exact::f64_bin(op, rnd, a, b)
}

/// `fma(a, b, c)` in f64, rounded in mode `rnd`.
pub fn fma64(rnd: Rnd, a: f64, b: f64, c: f64) -> f64 {
    if !(crate::exact::directed(rnd) && a.is_finite() && b.is_finite() && c.is_finite()) {
        return a.mul_add(b, c);
    }
    crate::exact::f64_fma(rnd, a, b, c)
}

/// `sqrt(x)` (or `1/x` for `rcp`) in f64, rounded in mode `rnd`.
pub fn sqrt_rcp64(rcp: bool, rnd: Rnd, x: f64) -> f64 {
    let r = if rcp { 1.0 / x } else { x.sqrt() };
    // Zeros, infinities, NaN and negative square roots are exact (or NaN) in every mode.
    if !crate::exact::directed(rnd) || !x.is_finite() || x == 0.0 || (!rcp && x < 0.0) {
        return r;
    }
    crate::exact::f64_sqrt_rcp(rcp, rnd, x)
}
