//! Kernels a learner may write that leave the puzzles' usual path: device functions NVRTC did
//! not inline (recursion, `__noinline__`, a pointer to the caller's local array), a recursion
//! that never ends, `__trap()` and a failed `assert`, a store into an input, and an output
//! updated (`+=`, `atomicAdd`) before anything wrote it; each a fixture of `fixtures/broken/`
//! with its `// expect:` mark, on puzzle 01's random case.

use crate::common;

use common::broken::*;
use spec::Kind;

#[test]
fn recursive_and_noinline_device_functions_run_and_stay_clean() {
    clean("p01_recursive_ok", &P01);
}

#[test]
fn a_recursion_that_never_ends_is_a_stack_overflow_naming_the_function() {
    let d = check("p01_endless_recursion", &P01);
    assert!(
        has(
            &d,
            Kind::StackOverflow,
            &["`taps`", "65 calls deep", "limit of 64"]
        ),
        "{d:#?}"
    );
    assert_eq!(d.len(), 1, "{d:#?}");
}

#[test]
fn trap_stops_the_launch_at_its_line() {
    let d = check("p01_trap", &P01);
    assert!(has(&d, Kind::Trap, &["`__trap()`"]), "{d:#?}");
    // The first thread past the end: block 3 (threads 96..127) thread 4 is i = 100.
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([3, 0, 0]), Some([4, 0, 0]))
    );
}

#[test]
fn a_failed_assert_quotes_its_condition_file_and_line() {
    let d = check("p01_assert", &P01);
    let line = expected("p01_assert").1;
    let place = format!("kernels/conformance/tests/fixtures/broken/p01_assert.cu:{line}");
    assert!(
        has(
            &d,
            Kind::Trap,
            &["assertion `i < size` failed", "conv1d", &place]
        ),
        "{d:#?}"
    );
}

#[test]
fn a_store_into_an_input_is_wrote_input_at_its_thread() {
    let d = check("p01_writes_input", &P01);
    assert!(
        has(&d, Kind::WroteInput, &["writes `a[0]`", "read-only"]),
        "{d:#?}"
    );
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([0, 0, 0]), Some([0, 0, 0]))
    );
}

#[test]
fn an_atomic_into_an_output_nobody_wrote_says_outputs_are_not_zeroed() {
    let d = check("p01_accumulates", &P01);
    assert!(
        has(
            &d,
            Kind::UninitializedRead,
            &["updates with an atomic `out[0]`", "does not zero"]
        ),
        "{d:#?}"
    );
    assert!(d.iter().all(|x| x.kind != Kind::UnwrittenOutput), "{d:#?}");
}

#[test]
fn adding_into_an_output_nobody_wrote_says_outputs_are_not_zeroed() {
    let d = check("p01_adds_to_output", &P01);
    assert!(
        has(
            &d,
            Kind::UninitializedRead,
            &["reads `out[0]`", "does not zero"]
        ),
        "{d:#?}"
    );
}
