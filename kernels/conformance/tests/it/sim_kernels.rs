//! Convolution variants a learner writes: shared-memory tiles with `__syncthreads`, dynamic
//! `extern __shared__` with `__constant__` weights, float4 loads, warp shuffles and atomics.

use crate::common;

use common::*;
use spec::job::{Arg, ConstUpload, Job, Launch};

fn assert_bits(arch: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{arch} out[{i}] = {g}, want {w}");
    }
}

#[test]
fn tiled_kernel_with_barrier_matches_reference() {
    for arch in ARCHS {
        let (a, b) = signal(11, 300, 17);
        let want = conv_ref(&a, &b);
        let job = conv_job("conv_tiled", a, b, 300, Launch::linear(5, 64));
        let out = sim::run(&ptx("tiled", arch), &job);
        assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
        assert_bits(arch, &out.outputs[0], &want);
    }
}

#[test]
fn dynamic_shared_and_constant_weights_match_reference() {
    for arch in ARCHS {
        let (size, conv, tpb) = (257usize, 33usize, 32u32);
        let (a, b) = signal(12, size, conv);
        let want = conv_ref(&a, &b);
        let mut job = conv_job(
            "conv_dyn_const",
            a,
            b.clone(),
            size,
            Launch::linear(9, tpb).with_shared((tpb + conv as u32 - 1) * 4),
        );
        job.constants = vec![ConstUpload {
            symbol: "c_kernel".into(),
            data: b,
        }];
        let out = sim::run(&ptx("tiled", arch), &job);
        assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
        assert_bits(arch, &out.outputs[0], &want);
    }
}

#[test]
fn float4_register_blocked_kernel_matches_reference() {
    for arch in ARCHS {
        let (a, b) = signal(13, 128, 9);
        let mut want = conv_ref(&a, &b);
        want.push(a[0] + a[1] + a[2] + a[3]);
        let job = conv_job("conv_vec4", a, b, 129, Launch::linear(1, 32));
        let out = sim::run(&ptx("tiled", arch), &job);
        assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
        assert_bits(arch, &out.outputs[0], &want);
    }
}

#[test]
fn shuffles_votes_and_atomics() {
    let n = 100usize;
    let (a, _) = signal(14, n, 1);
    for arch in ARCHS {
        let job = Job {
            kernel: "warp_atomic".into(),
            launch: Launch::linear(2, 64),
            args: vec![
                Arg::Input {
                    name: "a".into(),
                    data: a.clone(),
                },
                Arg::Output {
                    name: "out".into(),
                    len: 8 * n,
                },
                Arg::I32 {
                    name: "n".into(),
                    value: n as i32,
                },
            ],
            constants: vec![],
            tensor_maps: vec![],
            budget: None,
            work: n as u64,
        };
        let out = sim::run(&ptx("warp_atomic", arch), &job);
        assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
        let o = &out.outputs[0];
        let v = |i: usize| if i < n { a[i] } else { 0.0 };
        for i in 0..n {
            let (w0, l) = (i / 32 * 32, i % 32);
            let mut r: Vec<f32> = (0..32).map(|k| v(w0 + k)).collect();
            for off in [16, 8, 4, 2, 1] {
                r = (0..32)
                    .map(|k| r[k] + if k + off <= 31 { r[k + off] } else { r[k] })
                    .collect();
            }
            let ballot = (0..32).filter(|&k| v(w0 + k) > 0.0).count() as f32;
            let any = (0..32).any(|k| v(w0 + k) > 0.99);
            let b0 = i / 64 * 64;
            let smax = (0..64)
                .map(|k| (v(b0 + k) * 1000.0) as i32)
                .max()
                .unwrap_or(0);
            let row = &o[8 * i..8 * i + 8];
            assert_eq!(row[0], r[l], "{arch} reduce {i}");
            assert_eq!(row[1], v(if l >= 1 { i - 1 } else { i }), "{arch} up {i}");
            assert_eq!(row[2], v(w0 + (l ^ 3)), "{arch} xor {i}");
            assert_eq!(row[3], v(w0 + 5), "{arch} idx {i}");
            assert_eq!(
                row[4],
                ballot + 100.0 + if any { 1000.0 } else { 0.0 },
                "{arch} votes {i}"
            );
            assert_eq!(row[5], smax as f32, "{arch} atomicMax {i}");
            assert_eq!(row[6], 64.0, "{arch} shared atomicAdd {i}");
            // Lanes, warps and blocks run in order, so atomicInc hands out tickets in thread order.
            assert_eq!(row[7], i as f32, "{arch} atomicInc {i}");
        }
    }
}
