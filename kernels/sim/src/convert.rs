//! Comparisons (`setp`, `set`) and conversions (`cvt`), one lane at a time.
//!
//! Float comparisons are ordered (`eq`, `lt`, ...: false when either side is NaN) or unordered
//! (`equ`, `ltu`, ...: true when either side is NaN). Float-to-integer conversions round as the
//! modifier says and saturate to the destination's range, NaN becoming 0, as the GPU does.
//! Integer-to-integer conversions sign- or zero-extend from the source width, then truncate (or
//! clamp with `.sat`). Integers become floats correctly rounded in every mode; `.f16` and `.bf16`
//! go through `half`. Half-precision arithmetic is not simulated (decode marks it unsupported).

use crate::ops::{bf32, f32b, round32, sext};
use ptx::ir::*;

/// `a cmp b` read as type `ty`.
pub fn cmp(c: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    if ty.float() {
        let (x, y) = if ty == Ty::F32 {
            let f = |v: u64| {
                let x = f32b(v);
                if ftz && x.is_subnormal() {
                    0.0
                } else {
                    f64::from(x)
                }
            };
            (f(a), f(b))
        } else {
            (f64::from_bits(a), f64::from_bits(b))
        };
        let nan = x.is_nan() || y.is_nan();
        return match c {
            Cmp::Eq => x == y,
            Cmp::Ne => !nan && x != y,
            Cmp::Lt | Cmp::Lo => x < y,
            Cmp::Le | Cmp::Ls => x <= y,
            Cmp::Gt | Cmp::Hi => x > y,
            Cmp::Ge | Cmp::Hs => x >= y,
            Cmp::Equ => nan || x == y,
            Cmp::Neu => nan || x != y,
            Cmp::Ltu => nan || x < y,
            Cmp::Leu => nan || x <= y,
            Cmp::Gtu => nan || x > y,
            Cmp::Geu => nan || x >= y,
            Cmp::Num => !nan,
            Cmp::Nan => nan,
        };
    }
    let w = ty.bits();
    let (ua, ub) = (a & ty.mask(), b & ty.mask());
    let (sa, sb) = (sext(a, w), sext(b, w));
    let s = ty.signed();
    match c {
        Cmp::Eq | Cmp::Equ => ua == ub,
        Cmp::Ne | Cmp::Neu => ua != ub,
        Cmp::Lt | Cmp::Ltu if s => sa < sb,
        Cmp::Le | Cmp::Leu if s => sa <= sb,
        Cmp::Gt | Cmp::Gtu if s => sa > sb,
        Cmp::Ge | Cmp::Geu if s => sa >= sb,
        Cmp::Lt | Cmp::Ltu | Cmp::Lo => ua < ub,
        Cmp::Le | Cmp::Leu | Cmp::Ls => ua <= ub,
        Cmp::Gt | Cmp::Gtu | Cmp::Hi => ua > ub,
        Cmp::Ge | Cmp::Geu | Cmp::Hs => ua >= ub,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

fn round_int(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rzi | Rnd::Rz => x.trunc(),
        Rnd::Rmi | Rnd::Rm => x.floor(),
        Rnd::Rpi | Rnd::Rp => x.ceil(),
        _ => x.round_ties_even(),
    }
}

fn int_range(ty: Ty) -> (f64, f64) {
    let w = ty.bits();
    if ty.signed() {
        (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(w as i32) - 1.0)
    }
}

/// `cvt.m.dty.sty` of one lane.
pub fn cvt(dty: Ty, sty: Ty, m: FMods, a: u64) -> u64 {
    let half = |t: Ty| matches!(t, Ty::F16 | Ty::BF16);
    if half(sty) {
        let x = crate::half::to_f64(a, sty);
        if x.is_nan() && dty.float() {
            // A half NaN becomes the canonical NaN (the GPU's `cvt.f32.f16`).
            return if dty == Ty::F64 {
                crate::ops::NAN64
            } else {
                u64::from(crate::ops::NAN32)
            };
        }
        let x = if m.ftz && x.abs() < 2f64.powi(-14) && sty == Ty::F16 {
            0.0 * x.signum()
        } else {
            x
        };
        return cvt(dty, Ty::F64, m, x.to_bits());
    }
    if half(dty) {
        let exact = FMods {
            rnd: Rnd::Rn,
            ftz: m.ftz,
            sat: m.sat,
            approx: false,
        };
        let x = if sty == Ty::F64 {
            a
        } else {
            cvt(Ty::F64, sty, exact, a)
        };
        let x = f64::from_bits(x);
        let x = if m.sat && !x.is_nan() {
            x.clamp(0.0, 1.0)
        } else {
            x
        };
        let x = if matches!(m.rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi) {
            round_int(x, m.rnd)
        } else {
            x
        };
        return crate::half::from_f64(x, dty, m.rnd);
    }
    let dmask = dty.mask();
    match (dty.float(), sty.float()) {
        (false, false) => {
            let v = if sty.signed() {
                sext(a, sty.bits()) as i128
            } else {
                i128::from(a & sty.mask())
            };
            if m.sat {
                let (lo, hi) = int_range(dty);
                (v.clamp(lo as i128, hi as i128) as u64) & dmask
            } else {
                (v as u64) & dmask
            }
        }
        (false, true) => {
            let x = if sty == Ty::F32 {
                f64::from(f32b(a))
            } else {
                f64::from_bits(a)
            };
            if x.is_nan() {
                // As the GPU: the smallest signed value of the destination's width from an f64,
                // and from an f32 in 64 bits; 0 from an f32 in 32 bits and less.
                return if dty.bits() == 64 || sty == Ty::F64 {
                    1 << (dty.bits() - 1)
                } else {
                    0
                };
            }
            let (lo, hi) = int_range(dty);
            let r = round_int(x, m.rnd).clamp(lo, hi);
            let v = if dty.signed() {
                r as i64 as u64
            } else {
                r as u64
            };
            v & dmask
        }
        (true, false) => {
            // Rounded once from the exact integer, in every mode.
            let v: i128 = if sty.signed() {
                i128::from(sext(a, sty.bits()))
            } else {
                i128::from(a & sty.mask())
            };
            let x = crate::exact::Exact::int(v < 0, v.unsigned_abs());
            let fmt = if dty == Ty::F64 {
                crate::exact::F64
            } else {
                crate::exact::F32
            };
            crate::exact::round(x, m.rnd, fmt)
        }
        (true, true) => {
            let nan = if sty == Ty::F32 {
                f32b(a).is_nan()
            } else {
                f64::from_bits(a).is_nan()
            };
            if nan && !m.sat {
                return nan_cvt(sty, dty, a);
            }
            float_cvt(dty, sty, m, a)
        }
    }
}

/// A NaN converted between f32 and f64 (or rounded to an integer in its own type) keeps its
/// sign and the top of its payload, quieted, as the GPU's `cvt` does (f32 arithmetic gives the
/// canonical NaN instead).
fn nan_cvt(sty: Ty, dty: Ty, a: u64) -> u64 {
    if sty == dty {
        // Rounded to an integer in its own type: f64 keeps the payload, f32 is canonical.
        return if sty == Ty::F32 {
            u64::from(crate::ops::NAN32)
        } else {
            a | 1 << 51
        };
    }
    if sty == Ty::F32 {
        let b = a & 0xffff_ffff;
        (b >> 31) << 63 | 0x7ff8_0000_0000_0000 | (b & 0x003f_ffff) << 29
    } else {
        (a >> 63) << 31 | 0x7fc0_0000 | (a >> 29) & 0x003f_ffff
    }
}

/// `cvt` between f32 and f64, or from one to itself with rounding to an integer.
fn float_cvt(dty: Ty, sty: Ty, m: FMods, a: u64) -> u64 {
    let x = if sty == Ty::F32 {
        f64::from(f32b(a))
    } else {
        f64::from_bits(a)
    };
    let x = if m.ftz && sty == Ty::F32 && f32b(a).is_subnormal() {
        0.0 * x.signum()
    } else {
        x
    };
    let x = if matches!(m.rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi) {
        round_int(x, m.rnd)
    } else {
        x
    };
    let x = if m.sat { crate::float::sat01(x) } else { x };
    if dty == Ty::F64 {
        if x.is_nan() {
            crate::ops::NAN64
        } else {
            x.to_bits()
        }
    } else {
        let r = round32(x, 0.0, m.rnd);
        let r = if m.ftz && r.is_subnormal() {
            0.0 * r.signum()
        } else {
            r
        };
        bf32(r)
    }
}
