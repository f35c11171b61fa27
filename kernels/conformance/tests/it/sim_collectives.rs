//! Warp collectives wait for every lane of their mask, as the GPU's do: lanes that reach a
//! `__shfl_sync`, a vote or a `__match_any_sync` in different branches (an `if` and its `else`,
//! one after the other in the simulator) exchange the values each branch computed, not what a
//! lane's registers held before its branch; lanes of the mask that wait at a `__syncthreads()`
//! instead are a `barrier_divergence`. Kernels compiled by NVRTC (`common::compile`).

use crate::common;

use spec::Kind;

/// `k(in, out, n)` with `body` after `lane` and `v = in[threadIdx.x]` (the body's first line is
/// line 5), over one block of 64 threads, `in[i] = i * 0.5 - 7`.
fn run(body: &str) -> spec::job::RunOutput {
    common::run_small(&format!(
        "extern \"C\" __global__ void k(const float* in, float* out, int n)\n{{\n    unsigned lane = threadIdx.x & 31;\n    float v = in[threadIdx.x];{body}}}\n"
    ))
}

fn input(i: usize) -> f32 {
    i as f32 * 0.5 - 7.0
}

#[test]
fn shuffles_in_both_branches_exchange_what_each_branch_computed() {
    let out = run(r#"
    float r;
    if (lane & 1) {
        float odd = v * 2.0f;
        r = __shfl_sync(0xffffffffu, odd, lane ^ 1);
    } else {
        float even = v + 100.0f;
        r = __shfl_sync(0xffffffffu, even, lane ^ 1);
    }
    out[threadIdx.x] = r;
"#);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    for (i, &got) in out.outputs[0].iter().enumerate() {
        let other = i ^ 1;
        let want = if other & 1 == 1 {
            input(other) * 2.0
        } else {
            input(other) + 100.0
        };
        assert_eq!(got, want, "thread {i}");
    }
}

#[test]
fn a_ballot_in_both_branches_counts_every_lane_of_the_mask() {
    let out = run(r#"
    unsigned b;
    if (lane < 8) {
        b = __ballot_sync(0xffffffffu, v > -6.0f);
    } else {
        b = __ballot_sync(0xffffffffu, v < 0.0f);
    }
    out[threadIdx.x] = __uint_as_float(b);
"#);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    for warp in 0..2 {
        let want = (0..32).fold(0u32, |m, l| {
            let v = input(warp * 32 + l);
            let p = if l < 8 { v > -6.0 } else { v < 0.0 };
            m | u32::from(p) << l
        });
        for l in 0..32 {
            assert_eq!(out.outputs[0][warp * 32 + l].to_bits(), want, "warp {warp}");
        }
    }
}

#[test]
fn match_any_gives_the_lanes_with_the_same_value() {
    let out = run(r#"
    unsigned key = threadIdx.x % 3;
    unsigned m;
    if (threadIdx.x & 4) {
        m = __match_any_sync(0xffffffffu, key);
    } else {
        m = __match_any_sync(0xffffffffu, key);
    }
    out[threadIdx.x] = __uint_as_float(m);
"#);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    for t in 0..64usize {
        let want = (0..32)
            .filter(|l| ((t & !31) + l) % 3 == t % 3)
            .fold(0u32, |m, l| m | 1 << l);
        assert_eq!(out.outputs[0][t].to_bits(), want, "thread {t}");
    }
}

/// Lanes of the mask that exit are not waited for (PTX: "all non-exited threads"); lanes that
/// wait at a `__syncthreads()` instead would hang the GPU.
#[test]
fn lanes_of_the_mask_waiting_at_a_syncthreads_are_a_barrier_divergence() {
    let out = run(r#"
    if (lane < 16) {
        v = __shfl_sync(0xffffffffu, v, 0);
    }
    __syncthreads();
    out[threadIdx.x] = v;
"#);
    let d = &out.diagnostics;
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].kind, Kind::BarrierDivergence);
    let m = &d[0].message;
    assert!(
        m.contains("threads 0-15 wait at the __shfl_sync() on line 6 for threads 16-31")
            && m.contains("wait at a __syncthreads() instead"),
        "{m}"
    );
}

#[test]
fn a_half_warp_mask_runs_without_the_other_half() {
    let out = run(r#"
    if (lane < 16) {
        v = __shfl_down_sync(0x0000ffffu, v, 1, 16);
    } else {
        v = __shfl_up_sync(0xffff0000u, v, 2, 16);
    }
    out[threadIdx.x] = v;
"#);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    for t in 0..64usize {
        let l = t & 31;
        let src = if l < 16 {
            if l < 15 { t + 1 } else { t }
        } else if l - 16 >= 2 {
            t - 2
        } else {
            t
        };
        assert_eq!(out.outputs[0][t], input(src), "thread {t}");
    }
}
