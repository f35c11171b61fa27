//! Differential fuzzing's CI part: a fixed-seed sample of 200 generated kernels (`fuzz`)
//! compiles and runs in the simulator with no diagnostic, none panicking (a panic would be an
//! `internal_error`) and none hanging (the simulator's instruction budget ends a hang as a
//! `timeout` diagnostic, and each run is held to [`MOST`] instructions, far below it), and gives what an H200
//! gave for the same kernel: `fixtures/fuzz_h200.jsonl` holds the digests of the GPU's runs of
//! seeds 2,050,000 to 2,055,199 (`runner fuzz --seed 2050000 --count 5200 --backend both --record
//! FILE` on an NVIDIA H200, the JSON lines cut to seed and digest; `fixtures/fuzz_runs.md` lists
//! every device run), and the first 200 are checked here, so a change that breaks the
//! simulator's agreement with the GPU fails without a GPU. The sample holds every family of
//! `fuzz::families` (asserted below). A change to the generator changes the kernels: record the
//! file again then, on a fresh seed range, and `fuzz::KNOWN_SM90`, the seeds that differ. The GPU
//! half runs on a GPU machine: `runner fuzz --backend both`.

use crate::common;

fn ptx(code: &str) -> String {
    common::compile(code, "fuzz.cu")
}

/// Seeds run here: the first 200 of the recorded run (any change to the generator changes the
/// kernels).
const FIRST: u64 = 2_050_000;
const SAMPLE: u64 = 200;

/// The most thread-instructions one sampled kernel may take: a bound on work, not on time, so a
/// loaded machine cannot fail it (the largest of the sample takes about 140,000; a hang would run to the budget, 10 million and more).
const MOST: u64 = 1_000_000;

/// Text that shows each family of `fuzz::families` in a kernel's source.
const FAMILIES: [&str; 6] = [
    "cp.async.c",
    "ldmatrix.sync",
    "mma.sync.aligned",
    "nvcuda::wmma::mma_sync",
    "__reduce_",
    "__match_all_sync",
];

#[test]
fn two_hundred_generated_kernels_of_every_family_run_clean_in_the_simulator_as_on_an_h200() {
    let recorded: std::collections::BTreeMap<u64, fuzz::Recorded> =
        include_str!("../fixtures/fuzz_h200.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<fuzz::Recorded>(l).expect("a record"))
            .map(|r| (r.seed, r))
            .collect();
    let mut problems = vec![];
    let mut seen = [0; FAMILIES.len()];
    for seed in FIRST..FIRST + SAMPLE {
        let case = fuzz::case(seed);
        for (n, family) in seen.iter_mut().zip(FAMILIES) {
            *n += usize::from(case.code.contains(family));
        }
        let out = sim::run(&ptx(&case.code), &case.job);
        match out.instructions {
            Some(n) if n > MOST => problems.push(format!(
                "seed {seed}: {n} thread-instructions (at most {MOST})"
            )),
            None => problems.push(format!("seed {seed}: no instruction count")),
            _ => {}
        }
        if let Some(p) = fuzz::sim_problem(&out) {
            problems.push(format!("seed {seed}: {p}"));
        }
        let gpu = recorded.get(&seed).expect("every sampled seed is recorded");
        let differs = gpu.difference(&case, &out);
        match (differs, fuzz::KNOWN_SM90.iter().find(|k| k.0 == seed)) {
            (Some(why), None) => problems.push(format!("seed {seed}: unlike the H200: {why}")),
            (None, Some(k)) => problems.push(format!(
                "seed {seed}: now agrees with the H200; take it off fuzz::KNOWN_SM90 ({})",
                k.1
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (n, family) in seen.iter().zip(FAMILIES) {
        assert!(*n >= 3, "{family} in only {n} of the sampled kernels");
    }
}

/// Seed 2,023,485 of the generator before it retired an earlier block's `cp.async` groups
/// (`fuzz::families`) copied twice into `sh_c[1]` with the first copy still in flight, a race the
/// GPU and the simulator resolved differently. Its kernel now waits first, and runs clean in the
/// simulator, whose race check finds a thread's own two copies in flight.
#[test]
fn the_generated_cp_async_blocks_wait_for_the_groups_an_earlier_block_left_in_flight() {
    let case = fuzz::case(2_023_485);
    assert!(case.code.contains("cp.async.wait_group 1"), "{}", case.code);
    let out = sim::run(&ptx(&case.code), &case.job);
    assert_eq!(fuzz::sim_problem(&out), None, "{}", case.code);
}
