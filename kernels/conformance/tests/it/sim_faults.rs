//! Faults end the launch with a located diagnostic: out of bounds, endless loop, barrier in a
//! branch, an instruction the simulator lacks; and garbled PTX never panics.

use crate::common;

use common::*;
use sim::SimOptions;
use spec::job::{Launch, Printed};
use spec::{Diagnostic, Kind};

fn run_broken(
    kernel: &str,
    arch: &str,
    size: usize,
    conv: usize,
    launch: Launch,
) -> Vec<Diagnostic> {
    let (a, b) = signal(5, size, conv);
    let job = conv_job(kernel, a, b, size, launch);
    let out = sim::run(&ptx("broken", arch), &job);
    assert!(out.outputs.is_empty(), "a failed launch returns no outputs");
    out.diagnostics
}

#[test]
fn missing_guard_reads_past_the_end_of_a() {
    for arch in ARCHS {
        let d = run_broken("no_guard", arch, 64, 3, Launch::linear(2, 32));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, Kind::OutOfBounds, "{arch}");
        assert!(
            d[0].message.contains("`a[64]`") && d[0].message.contains("64 elements"),
            "{}",
            d[0].message
        );
        assert_eq!(
            (d[0].file.as_deref(), d[0].line),
            (
                Some("kernels/conformance/tests/fixtures/broken.cu"),
                Some(9)
            ),
            "{arch}"
        );
        // Thread 31 of block 1 (i = 63) is the first to reach a[64], at j = 1.
        assert_eq!(d[0].block, Some([1, 0, 0]), "{arch}");
        assert_eq!(d[0].thread, Some([31, 0, 0]), "{arch}");
    }
}

#[test]
fn endless_loop_times_out() {
    for arch in ARCHS {
        let d = run_broken("endless", arch, 64, 3, Launch::linear(2, 32));
        assert_eq!(d[0].kind, Kind::Timeout, "{arch}: {:?}", d);
        assert!(
            d[0].message
                .contains(&sim::default_budget(64 * 3).to_string())
        );
        assert!(d[0].line.is_some());
    }
}

#[test]
fn barrier_inside_a_branch_is_divergence_not_a_hang() {
    for arch in ARCHS {
        let d = run_broken("barrier_in_branch", arch, 64, 3, Launch::linear(1, 64));
        assert_eq!(d[0].kind, Kind::BarrierDivergence, "{arch}: {:?}", d);
        assert!(
            d[0].message.contains("line 31") && d[0].message.contains("line 34"),
            "{}",
            d[0].message
        );
    }
}

#[test]
fn printf_prints_with_its_thread() {
    for arch in ARCHS {
        let (a, b) = signal(5, 64, 3);
        let job = conv_job("with_printf", a.clone(), b, 64, Launch::linear(2, 32));
        let out = sim::run(&ptx("broken", arch), &job);
        assert!(out.diagnostics.is_empty(), "{arch}: {:?}", out.diagnostics);
        assert_eq!(out.outputs[0], a, "{arch}");
        assert_eq!(
            out.printed,
            [Printed {
                block: Some([0, 0, 0]),
                thread: Some([3, 0, 0]),
                text: "hello 3\n".into(),
            }],
            "{arch}"
        );
    }
}

#[test]
fn printf_in_code_nobody_reaches_prints_nothing() {
    let (a, b) = signal(5, 3, 3);
    let job = conv_job("with_printf", a.clone(), b, 3, Launch::linear(1, 32));
    let out = sim::run(&ptx("broken", "sm90"), &job);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    assert!(out.printed.is_empty());
    assert_eq!(out.outputs[0], a);
}

#[test]
fn a_call_to_another_function_is_an_unsupported_instruction_at_its_line() {
    for arch in ARCHS {
        let d = run_broken("with_malloc", arch, 64, 3, Launch::linear(1, 64));
        assert_eq!(d[0].kind, Kind::UnsupportedInstruction, "{arch}: {:?}", d);
        assert!(
            d[0].message.contains("`call` to `malloc`"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].line, Some(51), "{arch}");
        assert_eq!(d[0].thread, Some([0, 0, 0]));
    }
}

#[test]
fn diagnostics_read_well() {
    let d = run_broken("no_guard", "sm75", 64, 3, Launch::linear(2, 32));
    insta::assert_snapshot!(d[0].to_string());
}

/// Truncated and garbled PTX must give diagnostics (or results), never a panic.
#[test]
fn garbled_ptx_never_panics() {
    let opts = SimOptions {
        budget: Some(200_000),
        ..SimOptions::default()
    };
    let mut rng = spec::Rng::new(99);
    let sources = ["conv_naive", "tiled", "warp_atomic", "broken", "float_ops"];
    for name in sources {
        let text = ptx(name, "sm90");
        let kernel = text
            .split(".entry ")
            .nth(1)
            .and_then(|s| s.split('(').next())
            .unwrap_or("conv1d")
            .trim()
            .to_string();
        let (a, b) = signal(1, 40, 5);
        let job = conv_job(&kernel, a, b, 40, Launch::linear(2, 32));
        let bytes = text.as_bytes();
        for k in 0..120 {
            let cut = (rng.next_u64() as usize) % bytes.len();
            let mut g = bytes[..if k % 3 == 0 { cut } else { bytes.len() }].to_vec();
            if k % 3 != 0 {
                for _ in 0..(1 + k % 5) {
                    let at = (rng.next_u64() as usize) % g.len();
                    let pool = b"%;[]{}()0123456789abcdef.,-+!@|<>_ \n";
                    g[at] = pool[(rng.next_u64() % pool.len() as u64) as usize];
                }
            }
            let _ = sim::run_with(&String::from_utf8_lossy(&g), &job, &opts);
        }
    }
}
