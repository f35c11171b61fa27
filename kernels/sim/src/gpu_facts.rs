//! What the GPU computes where IEEE 754 leaves a choice or the simulator once differed, as
//! measured on an NVIDIA H100 (`bench/fuzz_probe.cu`, `bench/nan_pairs.cu` and `runner fuzz
//! --backend both`, issue 16), checked against the simulator's per-lane tables: NaN payloads
//! and signs, NaN converted to integers, directed rounding at infinities and in the subnormal
//! range, and funnel shifts.
//! Each fact was a disagreement the differential fuzzing found; these keep them fixed.

use crate::convert::cvt;
use crate::ops::{bin, tern, un};
use ptx::ir::*;

fn m(rnd: Rnd) -> FMods {
    FMods {
        rnd,
        ftz: false,
        sat: false,
        approx: false,
    }
}

const N1: u64 = 0x7ff4_0000_0000_0123; // a signaling NaN
const N2: u64 = 0xfff0_0000_0000_0456; // a negative signaling NaN
const ONE: u64 = 0x3ff0_0000_0000_0000;
const INF: u64 = 0x7ff0_0000_0000_0000;

/// A quiet NaN with a smaller significand than `N1`.
const N3: u64 = 0x7ff8_0000_0000_0001;

#[test]
fn f64_arithmetic_keeps_the_first_nan_operand_quieted() {
    // `bench/nan_pairs.cu`: 4,096 NaN pairs on an H100, every result the first NaN operand
    // (in the instruction's operand order), quieted, whichever significand is larger.
    let rn = m(Rnd::Rn);
    assert_eq!(bin(Bin::Add, Ty::F64, rn, N1, ONE), 0x7ffc_0000_0000_0123);
    assert_eq!(bin(Bin::Add, Ty::F64, rn, ONE, N2), 0xfff8_0000_0000_0456);
    assert_eq!(bin(Bin::Add, Ty::F64, rn, N1, N2), 0x7ffc_0000_0000_0123);
    assert_eq!(bin(Bin::Add, Ty::F64, rn, N2, N1), 0xfff8_0000_0000_0456);
    assert_eq!(bin(Bin::Add, Ty::F64, rn, N1, N3), 0x7ffc_0000_0000_0123);
    assert_eq!(bin(Bin::Sub, Ty::F64, rn, N3, N1), N3);
    assert_eq!(bin(Bin::MulLo, Ty::F64, rn, N3, N1), N3);
    assert_eq!(bin(Bin::Div, Ty::F64, rn, ONE, N2), 0xfff8_0000_0000_0456);
    assert_eq!(
        tern(Tern::Fma, Ty::F64, rn, ONE, N2, N1),
        0xfff8_0000_0000_0456
    );
    assert_eq!(
        tern(Tern::Fma, Ty::F64, rn, ONE, ONE, N2),
        0xfff8_0000_0000_0456
    );
    assert_eq!(un(Un::Sqrt, Ty::F64, rn, N1), 0x7ffc_0000_0000_0123);
    // min and max: of two NaNs the first, quieted; of one, the other operand.
    assert_eq!(bin(Bin::Min, Ty::F64, rn, N1, N2), 0x7ffc_0000_0000_0123);
    assert_eq!(bin(Bin::Max, Ty::F64, rn, N3, N1), N3);
    assert_eq!(bin(Bin::Min, Ty::F64, rn, N2, ONE), ONE);
    // A NaN the operation makes is the default NaN, negative.
    assert_eq!(bin(Bin::Sub, Ty::F64, rn, INF, INF), 0xfff8_0000_0000_0000);
    assert_eq!(
        un(Un::Sqrt, Ty::F64, rn, 0xbff0_0000_0000_0000),
        0xfff8_0000_0000_0000
    );
    // `-x` and `fabs(x)` of a NaN: quieted, its sign unchanged (`bench/fuzz_probe.cu`).
    assert_eq!(un(Un::Neg, Ty::F64, rn, N1), 0x7ffc_0000_0000_0123);
    assert_eq!(un(Un::Abs, Ty::F64, rn, N2), 0xfff8_0000_0000_0456);
    assert_eq!(un(Un::Neg, Ty::F64, rn, ONE), ONE | 1 << 63);
}

#[test]
fn nan_to_integer_is_zero_or_the_smallest_signed_value() {
    let (rn, rz) = (m(Rnd::Rni), m(Rnd::Rzi));
    let fnan = 0x7fa0_0001;
    assert_eq!(cvt(Ty::S32, Ty::F32, rn, fnan), 0);
    assert_eq!(cvt(Ty::U32, Ty::F32, rn, fnan), 0);
    assert_eq!(cvt(Ty::S64, Ty::F32, rn, fnan), 0x8000_0000_0000_0000);
    assert_eq!(cvt(Ty::U64, Ty::F32, rn, fnan), 0x8000_0000_0000_0000);
    assert_eq!(cvt(Ty::S32, Ty::F64, rz, N1), 0x8000_0000);
    assert_eq!(cvt(Ty::U32, Ty::F64, rz, N1), 0x8000_0000);
    assert_eq!(cvt(Ty::U64, Ty::F64, rz, N1), 0x8000_0000_0000_0000);
}

#[test]
fn nan_conversions_between_f32_and_f64_keep_sign_and_payload() {
    let rn = m(Rnd::Default);
    assert_eq!(
        cvt(Ty::F64, Ty::F32, rn, 0x7fa0_0001),
        0x7ffc_0000_2000_0000
    );
    assert_eq!(cvt(Ty::F32, Ty::F64, rn, N1), 0x7fe0_0000);
    assert_eq!(cvt(Ty::F32, Ty::F64, m(Rnd::Rz), N2), 0xffc0_0000);
    // f32 arithmetic gives the canonical NaN; so does a half NaN made f32.
    assert_eq!(
        bin(Bin::Add, Ty::F32, m(Rnd::Rz), 0x7fa0_0001, 0x3f80_0000),
        0x7fff_ffff
    );
    assert_eq!(cvt(Ty::F32, Ty::F16, rn, 0x7e01), 0x7fff_ffff);
    assert_eq!(cvt(Ty::F16, Ty::F32, m(Rnd::Rn), 0x7fa0_0001), 0x7fff);
    // `__saturatef` of a negative number or -0 is +0 (fuzz seed 15).
    let sat = FMods {
        sat: true,
        ..m(Rnd::Default)
    };
    assert_eq!(cvt(Ty::F32, Ty::F32, sat, 0x8000_0000), 0);
    assert_eq!(cvt(Ty::F32, Ty::F32, sat, 0xbf80_0000), 0);
    // `copysign` moves the sign bit alone, a NaN's payload with it (fuzz seed 60).
    let neg_one = 0xbff0_0000_0000_0000;
    assert_eq!(bin(Bin::Copysign, Ty::F64, rn, neg_one, N1), N1 | 1 << 63);
    assert_eq!(
        bin(Bin::Copysign, Ty::F32, rn, 0x3f80_0000, 0xffa0_0001),
        0x7fa0_0001
    );
    // `-x` of a NaN is the canonical NaN, not the NaN with its sign flipped (fuzz seed 70).
    assert_eq!(
        un(Un::Neg, Ty::F32, m(Rnd::Default), 0x7fff_ffff),
        0x7fff_ffff
    );
    // `fabsf` of a NaN is the canonical NaN too (fuzz seed 3361 on the H100).
    assert_eq!(
        un(Un::Abs, Ty::F32, m(Rnd::Default), 0x7f80_0488),
        0x7fff_ffff
    );
    // floor and rint: f64 keeps the payload, f32 gives the canonical NaN.
    assert_eq!(
        cvt(Ty::F64, Ty::F64, m(Rnd::Rmi), N1),
        0x7ffc_0000_0000_0123
    );
    assert_eq!(
        cvt(Ty::F64, Ty::F64, m(Rnd::Rni), N2),
        0xfff8_0000_0000_0456
    );
    assert_eq!(cvt(Ty::F32, Ty::F32, m(Rnd::Rmi), 0x7fa0_0001), 0x7fff_ffff);
    // double to 32-bit integer of NaN or -inf, in every mode: the smallest int.
    for rnd in [Rnd::Rni, Rnd::Rpi, Rnd::Rmi, Rnd::Rzi] {
        assert_eq!(cvt(Ty::S32, Ty::F64, m(rnd), N1), 0x8000_0000);
        assert_eq!(cvt(Ty::S32, Ty::F32, m(rnd), 0x7fa0_0001), 0);
    }
    assert_eq!(
        cvt(Ty::S32, Ty::F64, m(Rnd::Rni), 0xfff0_0000_0000_0000),
        0x8000_0000
    );
}

#[test]
fn directed_rounding_keeps_exact_infinities_and_reaches_subnormals() {
    let (ru, rz) = (m(Rnd::Rp), m(Rnd::Rz));
    let (sub, big, finf) = (1u64, 0x7f00_0000u64, 0x7f80_0000u64);
    assert_eq!(bin(Bin::MulLo, Ty::F32, ru, sub, sub), 1);
    assert_eq!(
        bin(Bin::MulLo, Ty::F32, m(Rnd::Rm), 0x8000_0001, sub),
        0x8000_0001
    );
    assert_eq!(bin(Bin::Div, Ty::F32, ru, sub, big), 1);
    assert_eq!(un(Un::Rcp, Ty::F32, ru, big), 0x0040_0000);
    assert_eq!(un(Un::Rcp, Ty::F32, rz, finf), 0);
    assert_eq!(bin(Bin::Div, Ty::F32, rz, 0x3f80_0000, 0), finf);
    assert_eq!(bin(Bin::Add, Ty::F32, rz, finf, 0x3f80_0000), finf);
    assert_eq!(tern(Tern::Fma, Ty::F32, ru, sub, sub, 0), 1);
    assert_eq!(un(Un::Sqrt, Ty::F32, ru, sub), 0x1a35_04f4);
    assert_eq!(cvt(Ty::F32, Ty::F64, ru, 1), 1);
    assert_eq!(bin(Bin::MulLo, Ty::F64, ru, 1, 1), 1);
    assert_eq!(bin(Bin::Div, Ty::F64, rz, ONE, 0), INF);
    assert_eq!(bin(Bin::Add, Ty::F64, rz, INF, ONE), INF);
    assert_eq!(cvt(Ty::F16, Ty::F32, rz, big), 0x7bff);
    // An exact zero sum is -0 rounding down (IEEE 754; fuzz seed 94), +0 otherwise.
    let (rd, three) = (m(Rnd::Rm), 0x4008_0000_0000_0000u64);
    assert_eq!(
        bin(Bin::Sub, Ty::F64, rd, three, three),
        0x8000_0000_0000_0000
    );
    assert_eq!(bin(Bin::Sub, Ty::F64, rz, three, three), 0);
    assert_eq!(
        bin(Bin::Add, Ty::F32, rd, 0x4040_0000, 0xc040_0000),
        0x8000_0000
    );
    assert_eq!(
        tern(Tern::Fma, Ty::F64, rd, ONE, three, three ^ 1 << 63),
        0x8000_0000_0000_0000
    );
}

#[test]
fn funnel_shifts_take_the_high_word_left_and_the_low_word_right() {
    let shf =
        |left, clamp, a, b, c| tern(Tern::Shf { left, clamp }, Ty::B32, m(Rnd::Default), a, b, c);
    assert_eq!(shf(true, false, 0x8000_0001, 0x0000_0003, 4), 0x0000_0038);
    assert_eq!(shf(true, false, 0x8000_0001, 0x0000_0003, 36), 0x0000_0038);
    assert_eq!(shf(true, true, 0x8000_0001, 0x0000_0003, 36), 0x8000_0001);
    assert_eq!(shf(false, false, 0x8000_0001, 0x0000_0003, 4), 0x3800_0000);
    assert_eq!(shf(false, true, 0x8000_0001, 0x0000_0003, 40), 0x0000_0003);
}
