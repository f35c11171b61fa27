//! Differential fuzzing's CI part: a fixed-seed sample of 200 generated kernels (`kernels::fuzz`)
//! compiles and runs in the simulator with no diagnostic, none panicking (a panic would be an
//! `internal_error`) and none hanging (each run is held to a time limit). The GPU half of the
//! comparison runs on a GPU machine: `runner fuzz --backend both`.

mod common;

use kernels::fuzz;
use std::time::{Duration, Instant};

fn ptx(code: &str) -> String {
    common::compile(code, "fuzz.cu")
}

/// Seeds run here: the first 200 (any change to the generator changes every kernel).
const SAMPLE: u64 = 200;

#[test]
fn two_hundred_generated_kernels_run_clean_in_the_simulator() {
    let mut problems = vec![];
    for seed in 0..SAMPLE {
        let case = fuzz::case(seed);
        let start = Instant::now();
        let out = kernels::sim::run(&ptx(&case.code), &case.job);
        let took = start.elapsed();
        if took > Duration::from_secs(10) {
            problems.push(format!("seed {seed}: took {took:?}"));
        }
        if let Some(p) = fuzz::sim_problem(&out) {
            problems.push(format!("seed {seed}: {p}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
