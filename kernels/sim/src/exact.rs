//! Floating-point results in the directed rounding modes (`.rz`, `.rm`, `.rp`), computed
//! exactly: each operation's exact value is formed in integers (a significand of up to 128
//! bits, an exponent and a sticky bit standing for any nonzero bits below them), then rounded
//! once to the destination format. The f64 arithmetic (`add`, `sub`, `mul`, `fma`, `div`,
//! `sqrt`, `rcp`) and the conversions of integers and of f64 to f32 go through here; the GPU
//! rounds every one of them correctly, so no error term estimated in floating point (which fails
//! where a product overflows or a remainder underflows) can stand in for it.

use ptx::ir::Rnd;

/// A binary floating-point format: fraction bits and exponent bias.
#[derive(Clone, Copy)]
pub(super) struct Format {
    frac: u32,
    bias: i32,
}

pub(super) const F64: Format = Format {
    frac: 52,
    bias: 1023,
};
pub(super) const F32: Format = Format {
    frac: 23,
    bias: 127,
};

impl Format {
    /// The exponent of the smallest subnormal's bit: every value is a multiple of 2^this.
    fn quantum(self) -> i32 {
        1 - self.bias - self.frac as i32
    }
    /// The all-ones biased exponent (infinity and NaN).
    fn top(self) -> u64 {
        (2 * self.bias + 1) as u64
    }
    /// The sign bit.
    fn sign(self, neg: bool) -> u64 {
        u64::from(neg) << (self.frac + self.top().count_ones())
    }
}

/// An exact value: `(-1)^neg * (m + f) * 2^e`, where `0 < f < 1` if `sticky`, else `f = 0`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exact {
    pub neg: bool,
    pub m: u128,
    pub e: i32,
    pub sticky: bool,
}

impl Exact {
    /// An integer.
    pub fn int(neg: bool, m: u128) -> Self {
        Exact {
            neg,
            m,
            e: 0,
            sticky: false,
        }
    }

    /// A finite f64, exactly.
    pub fn of64(x: f64) -> Self {
        let b = x.to_bits();
        let (exp, frac) = ((b >> 52 & 0x7ff) as i32, b & ((1 << 52) - 1));
        let (m, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, exp - 1075)
        };
        Exact {
            neg: b >> 63 == 1,
            m: u128::from(m),
            e,
            sticky: false,
        }
    }

    fn zero(self) -> bool {
        self.m == 0 && !self.sticky
    }

    /// The significand shifted so that its top bit is bit `top`, the exponent adjusted (a
    /// right shift keeps what it drops in the sticky bit).
    fn normal(self, top: u32) -> Self {
        let at = 127 - self.m.leading_zeros();
        if at <= top {
            let k = top - at;
            Exact {
                m: self.m << k,
                e: self.e - k as i32,
                ..self
            }
        } else {
            let k = at - top;
            Exact {
                m: self.m >> k,
                e: self.e + k as i32,
                sticky: self.sticky || self.m & ((1 << k) - 1) != 0,
                ..self
            }
        }
    }
}

/// The exact product of two exact values without sticky bits and of at most 64 bits each.
pub(super) fn mul(a: Exact, b: Exact) -> Exact {
    Exact {
        neg: a.neg != b.neg,
        m: a.m * b.m,
        e: a.e + b.e,
        sticky: false,
    }
}

/// The exact sum of two exact values without sticky bits (`None`: exactly zero, whose sign
/// the caller decides).
pub(super) fn add(a: Exact, b: Exact) -> Option<Exact> {
    match (a.zero(), b.zero()) {
        (true, true) => return None,
        (true, false) => return Some(b),
        (false, true) => return Some(a),
        _ => {}
    }
    // Both with their top bit at 125: room for the carry, and more than 64 bits below the
    // rounding position of either format, so a sticky bit is never next to it.
    let (a, b) = (a.normal(125), b.normal(125));
    let (big, small) = if (a.e, a.m) >= (b.e, b.m) {
        (a, b)
    } else {
        (b, a)
    };
    let d = (big.e - small.e) as u32;
    let (m, sticky) = if d >= 128 {
        (0, true)
    } else {
        (small.m >> d, small.m & ((1u128 << d) - 1) != 0)
    };
    let m = if big.neg == small.neg {
        big.m + m
    } else {
        // big - (m + f) = (big - m - 1) + (1 - f)
        big.m - m - u128::from(sticky)
    };
    if m == 0 && !sticky {
        return None;
    }
    Some(Exact {
        neg: big.neg,
        m,
        e: big.e,
        sticky,
    })
}

/// The quotient `a / b` of two nonzero exact values without sticky bits (64 bits at most).
pub(super) fn div(a: Exact, b: Exact) -> Exact {
    let (a, b) = (a.normal(52), b.normal(52));
    let num = a.m << 75;
    Exact {
        neg: a.neg != b.neg,
        m: num / b.m,
        e: a.e - b.e - 75,
        sticky: num % b.m != 0,
    }
}

/// The square root of a positive exact value without sticky bit (64 bits at most).
pub(super) fn sqrt(a: Exact) -> Exact {
    let a = a.normal(52);
    // An even exponent, and the significand scaled by an even power of two below 2^128.
    let (m, e) = if a.e % 2 != 0 {
        (a.m << 1, a.e - 1)
    } else {
        (a.m, a.e)
    };
    let x = m << 74;
    let r = x.isqrt();
    Exact {
        neg: false,
        m: r,
        e: (e - 74) / 2,
        sticky: r * r != x,
    }
}

/// `x` rounded to `fmt` in mode `rnd`, as the format's bits (a zero `x` is +0 or -0 by its
/// sign).
pub(super) fn round(x: Exact, rnd: Rnd, fmt: Format) -> u64 {
    let sign = fmt.sign(x.neg);
    if x.zero() {
        return sign;
    }
    let p = fmt.frac as i32;
    let top = if x.m == 0 {
        x.e - 1
    } else {
        x.e + 127 - x.m.leading_zeros() as i32
    };
    // The exponent of the result's last bit, and how far the significand must move right.
    let q = (top - p).max(fmt.quantum());
    let s = q - x.e;
    debug_assert!(
        s >= 1 || !x.sticky,
        "a sticky bit next to the rounding position"
    );
    let (mut kept, rem_vs_half, inexact) = if s <= 0 {
        (x.m << (-s) as u32, std::cmp::Ordering::Less, false)
    } else {
        let s = s as u32;
        let kept = if s >= 128 { 0 } else { x.m >> s };
        let rem = if s >= 128 {
            x.m
        } else {
            x.m & ((1u128 << s) - 1)
        };
        let vs = if s > 128 {
            std::cmp::Ordering::Less
        } else {
            rem.cmp(&(1u128 << (s - 1))).then(if x.sticky {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            })
        };
        (kept, vs, rem != 0 || x.sticky)
    };
    let up = inexact
        && match rnd {
            Rnd::Rz | Rnd::Rzi => false,
            Rnd::Rm | Rnd::Rmi => x.neg,
            Rnd::Rp | Rnd::Rpi => !x.neg,
            _ => {
                rem_vs_half == std::cmp::Ordering::Greater
                    || rem_vs_half == std::cmp::Ordering::Equal && kept & 1 == 1
            }
        };
    let mut q = q;
    kept += u128::from(up);
    if kept >> (p + 1) != 0 {
        kept >>= 1;
        q += 1;
    }
    let kept = kept as u64;
    let hidden = 1u64 << p;
    if kept < hidden {
        return sign | kept; // subnormal (q is the quantum)
    }
    let biased = (q + p + fmt.bias) as u64;
    if biased >= fmt.top() {
        let to_inf = match rnd {
            Rnd::Rz | Rnd::Rzi => false,
            Rnd::Rm | Rnd::Rmi => x.neg,
            Rnd::Rp | Rnd::Rpi => !x.neg,
            _ => true,
        };
        let inf = fmt.top() << p;
        return sign | if to_inf { inf } else { inf - 1 };
    }
    sign | biased << p | (kept - hidden)
}

/// Whether `rnd` is one of the directed modes (the round-to-nearest modes are the hardware's).
pub(super) fn directed(rnd: Rnd) -> bool {
    !matches!(rnd, Rnd::Default | Rnd::Rn | Rnd::Rni)
}

/// The sign of a sum of two exact zeros or of `x + (-x)`: negative rounding down when either
/// addend is negative (IEEE 754), otherwise only when both are.
pub(super) fn zero_sum_negative(a: bool, b: bool, rnd: Rnd) -> bool {
    if matches!(rnd, Rnd::Rm | Rnd::Rmi) {
        a || b
    } else {
        a && b
    }
}

/// `a op b` (add, sub, mul, div) of finite f64s in directed mode `rnd`, exactly rounded.
pub(super) fn f64_bin(op: ptx::ir::Bin, rnd: Rnd, a: f64, b: f64) -> f64 {
    use ptx::ir::Bin;
    let (x, y) = (Exact::of64(a), Exact::of64(b));
    let r = match op {
        Bin::Add | Bin::Sub => {
            let y = Exact {
                neg: y.neg != (op == Bin::Sub),
                ..y
            };
            match add(x, y) {
                Some(s) => s,
                None => return zero64(zero_sum_negative(x.neg, y.neg, rnd)),
            }
        }
        Bin::MulLo => mul(x, y),
        _ if x.zero() => Exact::int(x.neg != y.neg, 0),
        _ => div(x, y),
    };
    f64::from_bits(round(r, rnd, F64))
}

/// `fma(a, b, c)` of finite f64s in directed mode `rnd`, exactly rounded.
pub(super) fn f64_fma(rnd: Rnd, a: f64, b: f64, c: f64) -> f64 {
    let p = mul(Exact::of64(a), Exact::of64(b));
    let c = Exact::of64(c);
    match add(p, c) {
        Some(s) => f64::from_bits(round(s, rnd, F64)),
        None => zero64(zero_sum_negative(p.neg, c.neg, rnd)),
    }
}

/// `sqrt(x)` of a finite positive f64, or `1 / x` of a finite nonzero one, in mode `rnd`.
pub(super) fn f64_sqrt_rcp(rcp: bool, rnd: Rnd, x: f64) -> f64 {
    let r = if rcp {
        div(Exact::int(false, 1), Exact::of64(x))
    } else {
        sqrt(Exact::of64(x))
    };
    f64::from_bits(round(r, rnd, F64))
}

fn zero64(neg: bool) -> f64 {
    if neg { -0.0 } else { 0.0 }
}

#[cfg(test)]
#[path = "tests/exact.rs"]
mod tests;
