//! The naive puzzle-01 convolution on the simulator: exact results, determinism, launch shapes.

use crate::common;

use common::*;
use spec::job::Launch;

#[test]
fn naive_conv_matches_the_fma_reference_bit_for_bit() {
    for arch in ARCHS {
        for (size, conv, tpb) in [(6, 3, 8), (100, 7, 32), (1000, 255, 256), (37, 64, 16)] {
            let (a, b) = signal(size as u64 * 31 + conv as u64, size, conv);
            let want = conv_ref(&a, &b);
            let job = conv_job(
                "conv1d",
                a,
                b,
                size,
                Launch::linear((size as u32).div_ceil(tpb), tpb),
            );
            let out = sim::run(&ptx("conv_naive", arch), &job);
            assert!(
                out.diagnostics.is_empty(),
                "{arch} {size}/{conv}: {:?}",
                out.diagnostics
            );
            let got = &out.outputs[0];
            for i in 0..size {
                assert_eq!(
                    got[i].to_bits(),
                    want[i].to_bits(),
                    "{arch} size {size} conv {conv} out[{i}]"
                );
            }
            assert!(out.instructions.unwrap() > (size * conv) as u64);
        }
    }
}

#[test]
fn same_kernel_and_inputs_give_the_same_output_and_count() {
    let (a, b) = signal(7, 500, 31);
    let job = conv_job("conv1d", a, b, 500, Launch::linear(4, 128));
    let p = ptx("conv_naive", "sm90");
    let first = sim::run(&p, &job);
    let second = sim::run(&p, &job);
    assert_eq!(first.outputs, second.outputs);
    assert_eq!(first.instructions, second.instructions);
    assert_eq!(first.diagnostics, second.diagnostics);
}

#[test]
fn unwritten_outputs_stay_nan() {
    // Too few blocks: the tail of `out` is never written and must read NaN, not zero.
    let (a, b) = signal(3, 100, 3);
    let job = conv_job("conv1d", a, b, 100, Launch::linear(1, 64));
    let out = sim::run(&ptx("conv_naive", "sm75"), &job);
    let d = &out.diagnostics;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, spec::Kind::UnwrittenOutput);
    assert!(
        d[0].message.contains("36 of 100") && d[0].message.contains("`out[64]`"),
        "{}",
        d[0].message
    );
    assert!(d[0].message.contains("only 64 threads"), "{}", d[0].message);
    assert!(out.outputs[0][..64].iter().all(|v| v.is_finite()));
    assert!(out.outputs[0][64..].iter().all(|v| v.is_nan()));
}

#[test]
fn unknown_kernel_name_is_reported() {
    let (a, b) = signal(3, 10, 3);
    let job = conv_job("conv2d", a, b, 10, Launch::linear(1, 32));
    let out = sim::run(&ptx("conv_naive", "sm75"), &job);
    assert_eq!(out.diagnostics[0].kind, spec::Kind::KernelNotFound);
    assert!(out.diagnostics[0].message.contains("conv1d"));
}
