//! Half precision in conversions: `cvt` to and from `.f16` and `.bf16`, bit-exact in every PTX
//! rounding mode. A half value is read into an f64 exactly; a value is rounded to half from an
//! f64 (exact for every f32 and for integers below 2^53, so one rounding happens, as on the
//! GPU). NaN becomes the canonical half NaN `0x7fff`, overflow infinity or the largest finite
//! value as the rounding mode says, and results below the normal range are subnormals.

use ptx::ir::{Rnd, Ty};

/// Exponent and mantissa bits of a half format.
fn format(ty: Ty) -> (i32, i32) {
    if ty == Ty::BF16 { (8, 7) } else { (5, 10) }
}

/// The value of the half `bits` of type `ty` (`F16` or `BF16`).
pub fn to_f64(bits: u64, ty: Ty) -> f64 {
    let (e, m) = format(ty);
    let bits = bits & 0xffff;
    let sign = if bits >> 15 & 1 == 1 { -1.0 } else { 1.0 };
    let exp = ((bits >> m) & ((1 << e) - 1)) as i32;
    let mant = (bits & ((1 << m) - 1)) as f64;
    let bias = (1 << (e - 1)) - 1;
    let v = if exp == (1 << e) - 1 {
        if mant == 0.0 { f64::INFINITY } else { f64::NAN }
    } else if exp == 0 {
        mant * 2f64.powi(1 - bias - m)
    } else {
        (mant + 2f64.powi(m)) * 2f64.powi(exp - bias - m)
    };
    sign * v
}

/// `x` rounded to the half type `ty` with `rnd`: its 16 bits.
pub fn from_f64(x: f64, ty: Ty, rnd: Rnd) -> u64 {
    let (e, m) = format(ty);
    if x.is_nan() {
        return 0x7fff;
    }
    let sign: u64 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    let bias = (1 << (e - 1)) - 1;
    let inf = (((1u64 << e) - 1) << m) | sign;
    let max = inf - 1;
    if a == f64::INFINITY {
        return inf;
    }
    if a == 0.0 {
        return sign;
    }
    let emin = 1 - bias;
    let exp = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
    let scaled = a * 2f64.powi(m - exp);
    let up = match rnd {
        Rnd::Rz | Rnd::Rzi => false,
        Rnd::Rm | Rnd::Rmi => sign != 0 && scaled.fract() != 0.0,
        Rnd::Rp | Rnd::Rpi => sign == 0 && scaled.fract() != 0.0,
        _ => {
            let f = scaled.fract();
            f > 0.5 || (f == 0.5 && scaled.trunc() % 2.0 == 1.0)
        }
    };
    let mut n = scaled.trunc() as u64 + u64::from(up);
    let mut exp = exp;
    if n == 1 << (m + 1) {
        n = 1 << m;
        exp += 1;
    }
    if exp > bias {
        let to_inf = match rnd {
            Rnd::Rz | Rnd::Rzi => false,
            Rnd::Rm | Rnd::Rmi => sign != 0,
            Rnd::Rp | Rnd::Rpi => sign == 0,
            _ => true,
        };
        return if to_inf { inf } else { max };
    }
    if n < 1 << m {
        return sign | n;
    }
    sign | (((exp + bias) as u64) << m) | (n - (1 << m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_and_rounds_as_the_gpu() {
        for bits in 0..=0xffffu64 {
            let x = to_f64(bits, Ty::F16);
            let back = from_f64(x, Ty::F16, Rnd::Rn);
            if x.is_nan() {
                assert_eq!(back, 0x7fff);
            } else {
                assert_eq!(back, bits, "{bits:#x}");
            }
        }
        assert_eq!(from_f64(1.0 + 2f64.powi(-11), Ty::F16, Rnd::Rn), 0x3c00); // tie to even
        assert_eq!(
            from_f64(1.0 + 3.0 * 2f64.powi(-11), Ty::F16, Rnd::Rn),
            0x3c02
        );
        assert_eq!(from_f64(1.0 + 2f64.powi(-12), Ty::F16, Rnd::Rp), 0x3c01);
        assert_eq!(from_f64(-1.0 - 2f64.powi(-12), Ty::F16, Rnd::Rm), 0xbc01);
        assert_eq!(from_f64(65520.0, Ty::F16, Rnd::Rn), 0x7c00);
        assert_eq!(from_f64(1e6, Ty::F16, Rnd::Rz), 0x7bff);
        assert_eq!(from_f64(2f64.powi(-24), Ty::F16, Rnd::Rn), 0x0001);
        assert_eq!(from_f64(2f64.powi(-26), Ty::F16, Rnd::Rn), 0x0000);
    }

    #[test]
    fn bf16_is_the_top_half_of_an_f32() {
        for x in [1.0f32, -3.5, 1e30, 6.1e-39, 0.1] {
            let bits = u64::from(x.to_bits() >> 16);
            assert_eq!(from_f64(f64::from(x), Ty::BF16, Rnd::Rz), bits, "{x}");
            assert_eq!(
                to_f64(bits, Ty::BF16),
                f64::from(f32::from_bits((bits as u32) << 16))
            );
        }
    }
}
