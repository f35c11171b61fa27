//! `dp4a`, `dp2a` and `fns` (`__dp4a`, `__dp2a_lo`/`__dp2a_hi`, `__fns`) on the simulator, from
//! `intrin_ok` of `sync/barriers.cu`, against a reference written here from the PTX ISA's
//! definitions: byte (and half-word) products summed into c, each operand's bytes signed or not
//! by its type; the offset-th set bit of a mask counted from a base bit, upwards or downwards, or
//! 0xffffffff. `gpu_barriers` compares the same kernel with an H100 bit for bit.

use crate::sync;

use sync::{ITERS, input, sim};

fn part(v: u32, i: u32, bits: u32, signed: bool) -> i64 {
    let x = (v >> (i * bits)) & ((1u32 << bits) - 1);
    if signed && x >> (bits - 1) == 1 {
        i64::from(x) - (1i64 << bits)
    } else {
        i64::from(x)
    }
}

fn dp(a: u32, b: u32, c: u32, (a_s, b_s): (bool, bool), two: Option<u32>) -> u32 {
    let c = if a_s || b_s {
        i64::from(c as i32)
    } else {
        i64::from(c)
    };
    let sum: i64 = match two {
        None => (0..4)
            .map(|i| part(a, i, 8, a_s) * part(b, i, 8, b_s))
            .sum(),
        Some(base) => (0..2)
            .map(|i| part(a, i, 16, a_s) * part(b, base + i, 8, b_s))
            .sum(),
    };
    (c + sum) as u32
}

fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    // Written as a search of the list of set bits, not as the simulator walks the mask: the
    // `offset`-th set bit from `base` up (offset > 0) or down (offset < 0), `base` counted; for
    // offset 0, `base` if it is set; all ones where there is none (`base` < 32 here).
    let set: Vec<u32> = (0..32).filter(|&p| mask >> p & 1 == 1).collect();
    let n = offset.unsigned_abs() as usize;
    let found = match offset.signum() {
        0 => set.contains(&base).then_some(base),
        1 => set.iter().copied().filter(|&p| p >= base).nth(n - 1),
        _ => set.iter().rev().copied().filter(|&p| p <= base).nth(n - 1),
    };
    found.unwrap_or(u32::MAX)
}

#[test]
fn dp4a_dp2a_and_fns_give_what_the_ptx_isa_defines() {
    let o = sim("intrin_ok", 64);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    let x = input();
    let want: Vec<f32> = (0..ITERS * 64)
        .map(|i| {
            let (k, t) = (i / 64, (i % 64) as u32);
            let u = x[i].to_bits().wrapping_mul(2654435761);
            let v = (u ^ (u >> 13)).wrapping_mul(0x9E37_79B9);
            let r = match k % 6 {
                0 => dp(u, v, u >> 7, (true, true), None),
                1 => dp(u, v, v >> 3, (false, false), None),
                2 => dp(u, v, v >> 5, (false, true), None),
                3 => dp(u, v, -9i32 as u32, (true, true), Some(0)),
                4 => dp(u, v, u >> 9, (true, false), Some(2)),
                _ => fns(u, t % 32, (v % 65) as i32 - 32),
            };
            ((r ^ (r >> 16)) & 0xff_ffff) as f32
        })
        .collect();
    assert_eq!(o.outputs[0], want);
}
