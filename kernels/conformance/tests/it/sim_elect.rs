//! `elect.sync` on the simulator (the `elect_ok` kernel of `sync/barriers.cu`): the leader is
//! the lowest lane of the member mask, every member gets its lane id, only it gets the
//! predicate; the sink form (`_|p`), a mask of a few lanes, and two elections in the two sides
//! of a branch. `gpu_barriers` checks the same output against the device.

use crate::common;
use crate::sync;

#[test]
fn the_lowest_lane_of_the_mask_is_elected() {
    let o = sync::sim("elect_ok", 64);
    assert!(o.diagnostics.is_empty(), "{:#?}", o.diagnostics);
    let want: Vec<f32> = (0..sync::ITERS * 64)
        .map(|i| {
            let (k, lane) = (i / 64, i % 64 % 32);
            let elected = |leader: usize| (leader * 10 + usize::from(lane == leader)) as f32;
            match k % 3 {
                0 => f32::from(u8::from(lane == 0)),
                1 if (8..16).contains(&lane) => elected(8),
                1 => 997.0,
                _ => elected(lane % 2),
            }
        })
        .collect();
    assert_eq!(o.outputs[0], want);
}

#[test]
fn an_elect_some_members_never_reach_is_stuck() {
    // Lanes 0-7 elect with the whole warp as members while the others wait at __syncthreads().
    let o = common::run_small(
        "extern \"C\" __global__ void k(const float* in, float* out, int n) {\n\
         unsigned d = 0;\n\
         if (threadIdx.x % 32 < 8)\n\
             asm volatile(\"{ .reg .pred q; elect.sync %0|q, 0xffffffff; }\" : \"=r\"(d));\n\
         else\n\
             __syncthreads();\n\
         out[threadIdx.x] = in[threadIdx.x] + (float)d;\n}\n",
    );
    let d = &o.diagnostics[0];
    assert_eq!(d.kind, spec::Kind::BarrierDivergence, "{d:#?}");
    assert!(d.message.contains("elect.sync"), "{}", d.message);
}
