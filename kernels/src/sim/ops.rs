//! Arithmetic semantics, one lane at a time, written as tables: one arm per operation.
//!
//! Values are `u64` register bits; an operation reads its operands at its type's width and
//! returns its result zero-extended to the destination width. Integer arithmetic wraps; shifts
//! past the width give 0 (or the sign for `shr.s`); division by zero gives all ones (unsigned)
//! or -1 (signed), deterministically. Float results follow IEEE-754 with the instruction's
//! rounding mode; NaN results are the GPU's canonical NaN `0x7fffffff`; `.ftz` flushes subnormal
//! inputs and results; `.sat` clamps to [0, 1]. The `.approx` functions (`ex2`, `lg2`, `sin`,
//! `cos`, `rsqrt`, `tanh`, and `div`/`rcp`/`sqrt` `.approx`/`.full`) are computed here correctly
//! rounded from f64: approximations of the GPU's hardware results, which may differ by an ulp or
//! two. f64 arithmetic honours only round-to-nearest (directed modes round to nearest).

use super::ir::*;

pub const NAN32: u32 = 0x7fff_ffff;
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

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

#[inline(always)]
fn bf64(x: f64) -> u64 {
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

fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

fn next32(x: f32, up: bool) -> f32 {
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
    if x.is_nan() || matches!(rnd, Rnd::Default | Rnd::Rn | Rnd::Rni) {
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

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn f32_op(op: Bin, m: FMods, a: f32, b: f32) -> f32 {
    let (a, b) = if m.ftz { (ftz32(a), ftz32(b)) } else { (a, b) };
    let directed = !matches!(m.rnd, Rnd::Default | Rnd::Rn);
    let r = match op {
        Bin::Add if directed => {
            let (s, e) = two_sum(f64::from(a), f64::from(b));
            round32(s, e, m.rnd)
        }
        Bin::Sub if directed => {
            let (s, e) = two_sum(f64::from(a), -f64::from(b));
            round32(s, e, m.rnd)
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

fn fin32(r: f32, m: FMods) -> f32 {
    let r = if m.ftz { ftz32(r) } else { r };
    if m.sat {
        if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
    } else {
        r
    }
}

fn minmax32(min: bool, a: f32, b: f32) -> f32 {
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
        let (s, e) = two_sum(f64::from(a) * f64::from(b), f64::from(c));
        round32(s, e, m.rnd)
    };
    fin32(r, m)
}

/// Binary operation on one lane.
pub fn bin(op: Bin, ty: Ty, m: FMods, a: u64, b: u64) -> u64 {
    let w = ty.bits();
    let mask = ty.mask();
    match ty {
        Ty::F32 => return bf32(f32_op(op, m, f32b(a), f32b(b))),
        Ty::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            return bf64(match op {
                Bin::Add => x + y,
                Bin::Sub => x - y,
                Bin::MulLo => x * y,
                Bin::Div => x / y,
                Bin::Min if x.is_nan() || y.is_nan() => x.min(y),
                Bin::Max if x.is_nan() || y.is_nan() => x.max(y),
                Bin::Min => {
                    if x < y || (x == y && x.is_sign_negative()) {
                        x
                    } else {
                        y
                    }
                }
                Bin::Max => {
                    if x > y || (x == y && x.is_sign_positive()) {
                        x
                    } else {
                        y
                    }
                }
                Bin::Copysign => y.copysign(x),
                _ => f64::NAN,
            });
        }
        _ => {}
    }
    let s = ty.signed();
    let (sa, sb) = (sext(a, w), sext(b, w));
    let (ua, ub) = (a & mask, b & mask);
    let r: u64 = match op {
        Bin::Add => ua.wrapping_add(ub),
        Bin::Sub => ua.wrapping_sub(ub),
        Bin::MulLo => ua.wrapping_mul(ub),
        Bin::MulHi if s => ((i128::from(sa) * i128::from(sb)) >> w) as u64,
        Bin::MulHi => ((u128::from(ua) * u128::from(ub)) >> w) as u64,
        Bin::MulWide if s => return (sa.wrapping_mul(sb) as u64) & wide_mask(w),
        Bin::MulWide => return ua.wrapping_mul(ub) & wide_mask(w),
        Bin::Div if ub == 0 => u64::MAX,
        Bin::Div if s => sa.wrapping_div(sb) as u64,
        Bin::Div => ua / ub,
        Bin::Rem if ub == 0 => ua,
        Bin::Rem if s => sa.wrapping_rem(sb) as u64,
        Bin::Rem => ua % ub,
        Bin::Min if s => sa.min(sb) as u64,
        Bin::Min => ua.min(ub),
        Bin::Max if s => sa.max(sb) as u64,
        Bin::Max => ua.max(ub),
        Bin::And => ua & ub,
        Bin::Or => ua | ub,
        Bin::Xor => ua ^ ub,
        Bin::Shl => {
            if (b as u32) >= w {
                0
            } else {
                ua << (b as u32)
            }
        }
        Bin::Shr if s => (sa >> (b as u32).min(w - 1).min(63)) as u64,
        Bin::Shr => {
            if (b as u32) >= w {
                0
            } else {
                ua >> (b as u32)
            }
        }
        Bin::AddSat | Bin::SubSat => {
            let (lo, hi) = (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1);
            let v = if op == Bin::AddSat {
                i128::from(sa) + i128::from(sb)
            } else {
                i128::from(sa) - i128::from(sb)
            };
            v.clamp(lo, hi) as u64
        }
        Bin::Copysign => ua,
    };
    r & mask
}

fn wide_mask(w: u32) -> u64 {
    if w >= 32 {
        u64::MAX
    } else {
        (1u64 << (2 * w)) - 1
    }
}

/// Unary operation on one lane.
pub fn un(op: Un, ty: Ty, m: FMods, a: u64) -> u64 {
    let w = ty.bits();
    let mask = ty.mask();
    if ty == Ty::F32 {
        let x = if m.ftz { ftz32(f32b(a)) } else { f32b(a) };
        let xd = f64::from(x);
        let r = match op {
            Un::Mov => return a & mask,
            Un::Neg => return u64::from(x.to_bits() ^ 0x8000_0000),
            Un::Abs => return u64::from(x.to_bits() & 0x7fff_ffff),
            Un::Sqrt => x.sqrt(),
            Un::Rsqrt => (1.0 / xd.sqrt()) as f32,
            Un::Rcp => 1.0 / x,
            Un::Ex2 => xd.exp2() as f32,
            Un::Lg2 => xd.log2() as f32,
            Un::Sin => xd.sin() as f32,
            Un::Cos => xd.cos() as f32,
            Un::Tanh => xd.tanh() as f32,
            Un::Sat => x,
            _ => return a & mask,
        };
        return bf32(fin32(r, m));
    }
    if ty == Ty::F64 {
        let x = f64::from_bits(a);
        return match op {
            Un::Neg => a ^ (1 << 63),
            Un::Abs => a & !(1 << 63),
            Un::Sqrt => bf64(x.sqrt()),
            Un::Rsqrt => bf64(1.0 / x.sqrt()),
            Un::Rcp => bf64(1.0 / x),
            Un::Ex2 => bf64(x.exp2()),
            Un::Lg2 => bf64(x.log2()),
            Un::Sin => bf64(x.sin()),
            Un::Cos => bf64(x.cos()),
            _ => a,
        };
    }
    let ua = a & mask;
    let top = |v: u64| if w >= 64 { v } else { v << (64 - w) };
    let r = match op {
        Un::Mov
        | Un::Sat
        | Un::Sqrt
        | Un::Rsqrt
        | Un::Rcp
        | Un::Ex2
        | Un::Lg2
        | Un::Sin
        | Un::Cos
        | Un::Tanh => ua,
        Un::Neg => ua.wrapping_neg(),
        Un::Abs => sext(ua, w).wrapping_abs() as u64,
        Un::Not => !ua,
        Un::Cnot => u64::from(ua == 0),
        Un::Popc => return u64::from(ua.count_ones()),
        Un::Clz => return u64::from(top(ua).leading_zeros().min(w)),
        Un::Brev => top(ua).reverse_bits(),
        Un::Bfind | Un::BfindShift => {
            let v = if ty.signed() && sext(ua, w) < 0 {
                !ua & mask
            } else {
                ua
            };
            if v == 0 {
                return 0xffff_ffff;
            }
            let msb = 63 - u64::from(v.leading_zeros());
            return if op == Un::Bfind {
                msb
            } else {
                u64::from(w - 1) - msb
            };
        }
    };
    r & mask
}

/// Ternary operation on one lane.
pub fn tern(op: Tern, ty: Ty, m: FMods, a: u64, b: u64, c: u64) -> u64 {
    let w = ty.bits();
    let mask = ty.mask();
    match op {
        Tern::Fma if ty == Ty::F32 => bf32(fma32(m, f32b(a), f32b(b), f32b(c))),
        Tern::Fma => bf64(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c))),
        Tern::MadLo => a.wrapping_mul(b).wrapping_add(c) & mask,
        Tern::MadHi => bin(Bin::MulHi, ty, m, a, b).wrapping_add(c) & mask,
        Tern::MadWide => bin(Bin::MulWide, ty, m, a, b).wrapping_add(c) & wide_mask(w),
        Tern::Bfe => {
            let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
            let ua = a & mask;
            let sbit = if ty.signed() {
                let at = (pos + len).saturating_sub(1).min(w - 1);
                len != 0 && (ua >> at) & 1 == 1
            } else {
                false
            };
            let mut r = 0u64;
            for i in 0..w {
                let bit = if i < len && pos + i < w {
                    (ua >> (pos + i)) & 1 == 1
                } else {
                    sbit
                };
                r |= u64::from(bit) << i;
            }
            r & mask
        }
        Tern::Prmt => {
            let bytes = (u64::from(b as u32) << 32 | u64::from(a as u32)).to_le_bytes();
            let mut r = 0u32;
            for i in 0..4 {
                let sel = (c >> (4 * i)) as u32 & 0xf;
                let mut byte = bytes[(sel & 7) as usize];
                if sel & 8 != 0 {
                    byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= u32::from(byte) << (8 * i);
            }
            u64::from(r)
        }
        Tern::Dp4a => 0,
        Tern::Sad => {
            let diff = if ty.signed() {
                sext(a, w).abs_diff(sext(b, w))
            } else {
                (a & mask).abs_diff(b & mask)
            };
            diff.wrapping_add(c) & mask
        }
    }
}

/// `bfi`: insert the low `len` bits of `f` into `b` at `pos`.
pub fn bfi(ty: Ty, f: u64, b: u64, pos: u64, len: u64) -> u64 {
    let w = u64::from(ty.bits());
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut r = b & ty.mask();
    for i in 0..len.min(w) {
        if pos + i < w {
            let bit = (f >> i) & 1;
            r = (r & !(1 << (pos + i))) | (bit << (pos + i));
        }
    }
    r
}
