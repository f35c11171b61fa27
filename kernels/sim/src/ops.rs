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
//! two. Directed rounding is exact: f64 through integers (`exact`), f32 from f64 intermediates.

pub use crate::float::*;
use ptx::ir::*;

/// Binary operation on one lane.
pub fn bin(op: Bin, ty: Ty, m: FMods, a: u64, b: u64) -> u64 {
    let w = ty.bits();
    let mask = ty.mask();
    match ty {
        // `copysign.f a, b`: `b`'s bits with `a`'s sign, a NaN keeping its payload (fuzz
        // seed 60).
        Ty::F32 if op == Bin::Copysign => return (b & 0x7fff_ffff) | (a & 0x8000_0000),
        Ty::F64 if op == Bin::Copysign => return (b & !(1 << 63)) | (a & 1 << 63),
        Ty::F32 => return bf32(f32_op(op, m, f32b(a), f32b(b))),
        Ty::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            if matches!(op, Bin::Add | Bin::Sub | Bin::MulLo | Bin::Div) {
                return crate::float::nan64(crate::float::f64_op(op, m.rnd, x, y), &[x, y]);
            }
            return bf64(match op {
                // Both NaN: the first, quieted, as the GPU's `min.f64`/`max.f64` give it.
                Bin::Min | Bin::Max if x.is_nan() && y.is_nan() => {
                    return a | 1 << 51;
                }
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

fn directed(m: FMods) -> bool {
    !matches!(m.rnd, Rnd::Default | Rnd::Rn)
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
            // The GPU negates (and takes the absolute value) through its adder: a NaN comes
            // out canonical.
            Un::Neg if x.is_nan() => return u64::from(NAN32),
            Un::Neg => return u64::from(x.to_bits() ^ 0x8000_0000),
            Un::Abs if x.is_nan() => return u64::from(NAN32),
            Un::Abs => return u64::from(x.to_bits() & 0x7fff_ffff),
            Un::Sqrt if directed(m) => {
                let s = xd.sqrt();
                crate::float::round32(s, (-s).mul_add(s, xd), m.rnd)
            }
            Un::Rcp if directed(m) && !m.approx => {
                let q = 1.0 / xd;
                crate::float::round32(q, (-q).mul_add(xd, 1.0) * xd.signum(), m.rnd)
            }
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
            // Through the GPU's f64 adder: a NaN comes out quieted with its sign unchanged
            // (measured on an H100, bench/fuzz_probe.cu).
            Un::Neg | Un::Abs if x.is_nan() => a | 1 << 51,
            Un::Neg => a ^ (1 << 63),
            Un::Abs => a & !(1 << 63),
            Un::Sqrt => crate::float::nan64(crate::float::sqrt_rcp64(false, m.rnd, x), &[x]),
            Un::Rsqrt => bf64(1.0 / x.sqrt()),
            Un::Rcp if !m.approx => {
                crate::float::nan64(crate::float::sqrt_rcp64(true, m.rnd, x), &[x])
            }
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

/// Field `i` of `bits` bits of `v`, sign-extended when `signed` (dp4a's bytes, dp2a's halves).
fn part(v: u64, i: u32, bits: u32, signed: bool) -> i64 {
    let x = (v >> (i * bits)) & ((1 << bits) - 1);
    if signed { sext(x, bits) } else { x as i64 }
}

/// `c` plus the products, in 32 bits.
fn dot_parts(c: u64, products: impl Iterator<Item = i64>) -> u64 {
    u64::from(products.fold(c as u32 as i64, i64::wrapping_add) as u32)
}

/// Ternary operation on one lane.
pub fn tern(op: Tern, ty: Ty, m: FMods, a: u64, b: u64, c: u64) -> u64 {
    let w = ty.bits();
    let mask = ty.mask();
    match op {
        Tern::Fma if ty == Ty::F32 => bf32(fma32(m, f32b(a), f32b(b), f32b(c))),
        Tern::Fma => {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            crate::float::nan64(crate::float::fma64(m.rnd, x, y, z), &[x, y, z])
        }
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
        Tern::Dp4a { a_signed, b_signed } => dot_parts(
            c,
            (0..4).map(|i| part(a, i, 8, a_signed).wrapping_mul(part(b, i, 8, b_signed))),
        ),
        Tern::Dp2a {
            hi,
            a_signed,
            b_signed,
        } => {
            let base = if hi { 2 } else { 0 };
            dot_parts(
                c,
                (0..2)
                    .map(|i| part(a, i, 16, a_signed).wrapping_mul(part(b, base + i, 8, b_signed))),
            )
        }
        Tern::Fns => {
            let (mask, base, offset) = (a as u32, b as u32, c as u32 as i32);
            let set = |p: i64| (0..32).contains(&p) && mask >> p & 1 == 1;
            if offset == 0 {
                return if set(i64::from(base)) {
                    u64::from(base)
                } else {
                    0xffff_ffff
                };
            }
            let step = if offset > 0 { 1 } else { -1 };
            let mut left = offset.unsigned_abs();
            let mut p = i64::from(base);
            while (0..32).contains(&p) {
                if set(p) {
                    left -= 1;
                    if left == 0 {
                        return p as u64;
                    }
                }
                p += step;
            }
            0xffff_ffff
        }
        Tern::Shf { left, clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 31
            };
            let both = u64::from(b as u32) << 32 | u64::from(a as u32);
            if left {
                u64::from(((both << n) >> 32) as u32)
            } else {
                u64::from((both >> n) as u32)
            }
        }
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
