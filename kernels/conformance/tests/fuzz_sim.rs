//! Differential fuzzing's CI part: a fixed-seed sample of 200 generated kernels (`fuzz`)
//! compiles and runs in the simulator with no diagnostic, none panicking (a panic would be an
//! `internal_error`) and none hanging (each run is held to a time limit), and gives what an H100
//! gave for the same kernel: `fixtures/fuzz_h100.jsonl` holds the digests of the GPU's runs
//! (`runner fuzz --seed 0 --count 200 --backend both --record FILE` on an NVIDIA H100 80GB HBM3,
//! the JSON lines cut to seed and digest), so a change that breaks the simulator's agreement with
//! the GPU fails here without a GPU. A change to the generator changes every kernel: record the
//! file again then, and `fuzz::KNOWN_H100`, the seeds that differ. The GPU half runs on a GPU machine: `runner fuzz --backend both`.

mod common;

use std::time::{Duration, Instant};

fn ptx(code: &str) -> String {
    common::compile(code, "fuzz.cu")
}

/// Seeds run here: the first 200 (any change to the generator changes every kernel).
const SAMPLE: u64 = 200;

#[test]
fn two_hundred_generated_kernels_run_clean_in_the_simulator_as_on_an_h100() {
    let recorded: std::collections::BTreeMap<u64, fuzz::Recorded> =
        include_str!("fixtures/fuzz_h100.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<fuzz::Recorded>(l).expect("a record"))
            .map(|r| (r.seed, r))
            .collect();
    let mut problems = vec![];
    for seed in 0..SAMPLE {
        let case = fuzz::case(seed);
        let start = Instant::now();
        let out = sim::run(&ptx(&case.code), &case.job);
        let took = start.elapsed();
        if took > Duration::from_secs(10) {
            problems.push(format!("seed {seed}: took {took:?}"));
        }
        if let Some(p) = fuzz::sim_problem(&out) {
            problems.push(format!("seed {seed}: {p}"));
        }
        let gpu = recorded.get(&seed).expect("every sampled seed is recorded");
        let differs = gpu.difference(&case, &out);
        match (differs, fuzz::KNOWN_H100.iter().find(|k| k.0 == seed)) {
            (Some(why), None) => problems.push(format!("seed {seed}: unlike the H100: {why}")),
            (None, Some(k)) => problems.push(format!(
                "seed {seed}: now agrees with the H100; take it off fuzz::KNOWN_H100 ({})",
                k.1
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
