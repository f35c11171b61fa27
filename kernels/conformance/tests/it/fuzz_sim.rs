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

/// The GPU's whole runs (NVIDIA H200, `runner fuzz --seed S --backend both --record FILE`) of the
/// three seeds of the 2,100,000 range that `bench/fuzz_classify.py` left undecided
/// (`fixtures/fuzz_runs.md`), traced here to their causes.
const TRACED: &str = include_str!("../fixtures/fuzz_traced_h200.jsonl");

/// One traced seed: its case, the simulator's words, the H200's, and the (thread, slot) pairs
/// that differ.
struct Traced {
    sim: Vec<u32>,
    gpu: Vec<u32>,
    slots: usize,
    differ: Vec<(usize, usize)>,
}

impl Traced {
    fn run(seed: u64) -> Traced {
        let gpu = TRACED
            .lines()
            .map(|l| serde_json::from_str::<fuzz::Recorded>(l).expect("a record"))
            .find(|r| r.seed == seed)
            .and_then(|r| r.words)
            .expect("the seed's whole run is recorded");
        let case = fuzz::case(seed);
        let out = sim::run(&ptx(&case.code), &case.job);
        assert_eq!(fuzz::sim_problem(&out), None, "{}", case.code);
        let sim: Vec<u32> = out.outputs[0].iter().map(|x| x.to_bits()).collect();
        assert_eq!(sim.len(), gpu.len());
        let slots = case
            .code
            .lines()
            .find_map(|l| l.strip_prefix("#define SLOTS "))
            .and_then(|n| n.trim().parse().ok())
            .expect("the kernel's SLOTS");
        let differ = (0..sim.len())
            .filter(|&i| sim[i] != gpu[i])
            .map(|i| (i / slots, i % slots))
            .collect();
        Traced {
            sim,
            gpu,
            slots,
            differ,
        }
    }

    /// The f64 stored in `slot` (low word) and `slot + 1` (high word) of `thread`.
    fn f64(words: &[u32], slots: usize, thread: usize, slot: usize) -> u64 {
        u64::from(words[thread * slots + slot]) | u64::from(words[thread * slots + slot + 1]) << 32
    }
}

/// Seed 2,102,050: one word differs, the low word of `l13 = __double_as_longlong(d7 * d7 -
/// trunc(d7))` in thread 11. NVRTC writes `mul.f64` and `sub.f64`, which ptxas may contract (the
/// H200's SASS holds `DFMA R14, R12, R12, -R14`); the simulator rounds twice, as the PTX says.
#[test]
fn seed_2_102_050_differs_by_one_contraction_ptxas_made() {
    let t = Traced::run(2_102_050);
    assert_eq!(t.differ, [(11, 18)]);
    let d7 = f64::from_bits(Traced::f64(&t.sim, t.slots, 11, 9));
    let twice = d7 * d7 - d7.trunc();
    let fused = d7.mul_add(d7, -d7.trunc());
    assert_ne!(twice.to_bits(), fused.to_bits());
    assert_eq!(Traced::f64(&t.sim, t.slots, 11, 18), twice.to_bits());
    assert_eq!(Traced::f64(&t.gpu, t.slots, 11, 18), fused.to_bits());
}

/// Seed 2,100,429: `d7 = __dadd_rz(__dsqrt_rd(negative), __dsub_rz(d7, l5 as a NaN))` adds two
/// NaNs. The simulator keeps the first (the square root's default NaN); the H200's `DADD.RZ R16,
/// R16, R4` keeps its second source slot's, the subtraction's (`sim::float::nan64`). Every
/// other differing word of those threads (33 in all) is computed from `d7` afterwards.
#[test]
fn seed_2_100_429_differs_by_which_of_two_nans_an_f64_add_keeps() {
    let t = Traced::run(2_100_429);
    assert_eq!(t.differ.len(), 33);
    let threads: std::collections::BTreeSet<usize> = t.differ.iter().map(|d| d.0).collect();
    assert_eq!(threads.len(), 8);
    for &thread in &threads {
        let (s, g) = (
            Traced::f64(&t.sim, t.slots, thread, 9),
            Traced::f64(&t.gpu, t.slots, thread, 9),
        );
        assert_eq!(s, 0xfff8_0000_0000_0000, "thread {thread}");
        assert!(
            f64::from_bits(g).is_nan() && g != s,
            "thread {thread}: {g:#x}"
        );
        // Where `d7` entered the add as a number, the subtraction's NaN is l5's bits (slots 11
        // and 12 hold them, unchanged, on both backends), quieted.
        let l5 = Traced::f64(&t.gpu, t.slots, thread, 11);
        assert!(
            g == l5 | 1 << 51 || g == 0x7fff_ffff_e000_0000,
            "thread {thread}: {g:#x}"
        );
    }
}

/// Seed 2,100,848: `d14 = (-d11 + l5 as a NaN) - d7 / ...` subtracts two NaNs, and
/// `__double_as_longlong(__dsqrt_rz(d14)) >= ...` branches on the sign of the one kept. The
/// simulator keeps the first, negative, and skips the branch (thread 2's `f1` stays its input
/// NaN); the H200 (`DADD R22, R22, -R4`) keeps its second slot's, the quotient's positive NaN,
/// and takes it: `f1 = __fsqrt_ru(__ull2float_rn(w9) - f0)`. The other six words are `d14`
/// later, two NaNs again.
#[test]
fn seed_2_100_848_takes_a_branch_on_the_sign_of_the_nan_an_f64_subtraction_keeps() {
    let t = Traced::run(2_100_848);
    assert_eq!(t.differ.len(), 7);
    for &(thread, slot) in &t.differ {
        if thread == 2 {
            continue;
        }
        assert!(slot == 20 || slot == 21, "thread {thread} slot {slot}");
        let (s, g) = (
            Traced::f64(&t.sim, t.slots, thread, 20),
            Traced::f64(&t.gpu, t.slots, thread, 20),
        );
        assert!(f64::from_bits(s).is_nan() && f64::from_bits(g).is_nan());
    }
    assert!(t.differ.contains(&(2, 1)));
    let word = |w: &[u32], slot: usize| w[2 * t.slots + slot];
    assert_eq!(word(&t.sim, 1), 0x7fff_ffff, "the input NaN, untouched");
    let w9 = Traced::f64(&t.gpu, t.slots, 2, 13);
    let f0 = f32::from_bits(word(&t.gpu, 0));
    let y = w9 as f32 - f0;
    let root = f64::from(y).sqrt();
    let mut up = root as f32;
    if f64::from(up) < root {
        up = f32::from_bits(up.to_bits() + 1);
    }
    assert_eq!(word(&t.gpu, 1), up.to_bits());
}
