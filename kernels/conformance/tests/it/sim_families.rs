//! One fixture per instruction family, with expected results including edge values:
//! integer wrap-around and shifts past the width, float rounding modes, NaN and infinity.

use crate::common;

use common::*;
use spec::job::{Arg, Job, Launch};

/// Runs a one-thread kernel `name(in, out)` on raw 32-bit inputs; returns `out` as bits.
fn run_bits(fixture: &str, arch: &str, kernel: &str, input: &[u32], out_len: usize) -> Vec<u32> {
    let job = Job {
        kernel: kernel.into(),
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "in".into(),
                data: input.iter().map(|&b| f32::from_bits(b)).collect(),
            },
            Arg::Output {
                name: "out".into(),
                len: out_len,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    let out = sim::run(&ptx(fixture, arch), &job);
    assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
    out.outputs[0].iter().map(|f| f.to_bits()).collect()
}

fn int_expect(a: i32, b: i32, s: u32) -> Vec<u32> {
    let (ua, ub) = (a as u32, b as u32);
    let wide = i64::from(a) * i64::from(b);
    let perm = |x: u32, y: u32, sel: u32| {
        let bytes = ((u64::from(y) << 32) | u64::from(x)).to_le_bytes();
        (0..4)
            .map(|i| u32::from(bytes[((sel >> (4 * i)) & 7) as usize]) << (8 * i))
            .sum::<u32>()
    };
    let v: Vec<i64> = vec![
        a.wrapping_add(b).into(),
        a.wrapping_mul(b).into(),
        (wide >> 32),
        ((u64::from(ua) * u64::from(ub)) >> 32) as i64,
        a.wrapping_div(b).into(),
        a.wrapping_rem(b).into(),
        (ua / ub).into(),
        (ua % ub).into(),
        if s >= 32 { 0 } else { (ua >> s).into() },
        (a >> s.min(31)).into(),
        if s >= 32 { 0 } else { (ua << s).into() },
        a.min(b).into(),
        ua.max(ub).into(),
        a.wrapping_abs().into(),
        ua.count_ones().into(),
        ua.leading_zeros().into(),
        ua.reverse_bits().into(),
        perm(ua, ub, 0x5140).into(),
        (wide >> 32),
        (wide as i32).into(),
        if a == 0 {
            0
        } else {
            (ua.trailing_zeros() + 1).into()
        },
        (((!ua ^ ub) as i32) | (a & 0xff)).into(),
        i64::from(a.abs_diff(b).wrapping_add(3)),
        i64::from(a as i16),
        i64::from(b as i8),
        i64::from(ua.abs_diff(ub).wrapping_add(1)),
    ];
    v.into_iter().map(|x| x as u32).collect()
}

#[test]
fn integer_family_wraps_and_clamps_shifts_like_ptx() {
    for arch in ARCHS {
        for (a, b, s) in [
            (0x7fff_fff0, -3, 33),
            (-123_456_789, 1000, 5),
            (i32::MIN, -1, 31),
            (0, 7, 0),
        ] {
            let got = run_bits("int_ops", arch, "int_ops", &[a as u32, b as u32, s], 26);
            let want = int_expect(a, b, s);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g, w,
                    "{arch} a={a} b={b} s={s}: out[{k}] = {g:#x}, want {w:#x}"
                );
            }
        }
    }
}

/// `exact` rounded to f32 downwards, upwards or towards zero.
fn directed(exact: f64, mode: char) -> f32 {
    let r = exact as f32;
    if f64::from(r) == exact {
        return r;
    }
    let lo = if f64::from(r) > exact {
        r.next_down()
    } else {
        r
    };
    let hi = lo.next_up();
    match mode {
        'd' => lo,
        'u' => hi,
        _ if exact > 0.0 => lo,
        _ => hi,
    }
}

#[test]
fn float_family_rounds_as_told_and_canonicalizes_nan() {
    let (x, y, z) = (1.1f32, 3.3f32, -1.0f32);
    let (xd, yd) = (f64::from(x), f64::from(y));
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let q = xd / yd;
    let want: Vec<f32> = vec![
        x + y,
        directed(xd + yd, 'z'),
        directed(xd + yd, 'd'),
        directed(xd + yd, 'u'),
        directed(xd * yd, 'z'),
        x.mul_add(y, z),
        directed(xd * yd + f64::from(z), 'z'),
        x / y,
        if f64::from(q as f32) > q {
            q as f32
        } else {
            (q as f32).next_up()
        },
        x.sqrt(),
        1.0 / y,
        x,
        x,
        (x * 1000.0).round_ties_even(),
        0.0,
        0.0,
        1.0,
        f32::from_bits(0x7fff_ffff),
        inf,
        -2.0,
        -x,
        x,
        x.exp(),
        x * 2.0,
        q as f32,
        (x * 8.5).round_ties_even(),
        -2.0,
        2.0,
        -3.0,
        4_294_967_040.0,
        0.0,
        1.0,
        -x,
        inf,
    ];
    for arch in ARCHS {
        let input = [
            x.to_bits(),
            y.to_bits(),
            z.to_bits(),
            nan.to_bits(),
            inf.to_bits(),
        ];
        let got = run_bits("float_ops", arch, "float_ops", &input, want.len());
        for (k, (&g, w)) in got.iter().zip(&want).enumerate() {
            if k == 22 {
                // ex2.approx: an approximation, within a few ulps of exp(x).
                assert!(
                    (f32::from_bits(g) - w).abs() <= 4.0 * f32::EPSILON * w,
                    "{arch} out[22]"
                );
                continue;
            }
            assert_eq!(
                g,
                w.to_bits(),
                "{arch} out[{k}] = {} ({g:#x}), want {w} ({:#x})",
                f32::from_bits(g),
                w.to_bits()
            );
        }
    }
}
