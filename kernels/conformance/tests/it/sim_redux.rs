//! `redux.sync` (`__reduce_add_sync()`, `__reduce_min_sync()`, ..., compute capability 8.0) on
//! the simulator, from the `redux_ok` kernel of `sync/barriers.cu`: add over a warp, a signed min
//! over half of one, an unsigned max over the odd and the even lanes in two branches, and, or and
//! xor, each against the same reduction done here. `gpu_barriers` checks it against the device.

use crate::sync;

#[test]
fn every_reduction_over_its_members_is_right() {
    let o = sync::sim("redux_ok", 64);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    let x = sync::input();
    let v = |i: usize| ((x[i] * 4.0) as i32 as u32).wrapping_mul(2654435761);
    let want: Vec<f32> = (0..sync::ITERS * 64)
        .map(|i| {
            let (k, t) = (i / 64, i % 64);
            let (warp, lane) = (k * 64 + t / 32 * 32, t % 32);
            let over = |lanes: Vec<usize>| lanes.into_iter().map(|l| v(warp + l));
            let warp_of = || (0..32).collect::<Vec<_>>();
            let r = match k % 6 {
                0 => over(warp_of()).fold(0u32, u32::wrapping_add),
                1 if lane < 16 => over((0..16).collect()).map(|x| x as i32).min().unwrap() as u32,
                1 => 0,
                2 => over((lane % 2..32).step_by(2).collect()).max().unwrap(),
                3 => over(warp_of()).fold(u32::MAX, |a, b| a & b),
                4 => over(warp_of()).fold(0, |a, b| a | b),
                _ => over(warp_of()).fold(0, |a, b| a ^ b),
            };
            (r >> 8) as f32
        })
        .collect();
    assert_eq!(o.outputs[0], want);
}
