//! The synchronization fixtures shared by `sim_named_barriers`, `sim_mbarrier` and
//! `gpu_barriers`: `barriers.cu` (warp-specialized producers and consumers with named
//! barriers, `mbarrier` rings and `setmaxnreg`), its job and the expected outputs.

#![allow(dead_code)]

use spec::job::{Arg, Job, Launch, RunOutput};

/// The CUDA source of every kernel.
pub const SOURCE: &str = include_str!("barriers.cu");
/// Iterations of the producer/consumer loops (`ITERS` in the source), 64 floats each.
pub const ITERS: usize = 12;

/// `in[i] = i * 0.25 - 9`.
pub fn input() -> Vec<f32> {
    (0..ITERS * 64).map(|i| i as f32 * 0.25 - 9.0).collect()
}

/// The tensor maps the `tma_` kernels copy through, as a kernel file declares them.
pub const TMA_MAPS: &str = "tma_in_map: in, dims {32, 24}, box {32, 8}, swizzle 128;\
     tma_out_map: out, dims {32, 24}, box {32, 2}, swizzle 128;";

/// The job of `kernel` over one block of `threads` threads, with `n = 64` (and the maps of
/// [`TMA_MAPS`] for a `tma_` kernel).
pub fn job(kernel: &str, threads: u32) -> Job {
    let mut job = plain_job(kernel, threads);
    if kernel.starts_with("tma_") {
        let maps = spec::tensor_maps::parse(TMA_MAPS).expect("the maps read");
        job.tensor_maps = spec::tensor_maps::resolve(&maps, &job, &[]).expect("the maps hold");
    }
    job
}

fn plain_job(kernel: &str, threads: u32) -> Job {
    Job {
        kernel: kernel.into(),
        launch: Launch::linear(1, threads),
        args: vec![
            Arg::Input {
                name: "in".into(),
                data: input(),
            },
            Arg::Output {
                name: "out".into(),
                len: ITERS * 64,
            },
            Arg::I32 {
                name: "n".into(),
                value: 64,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: (ITERS * 64) as u64,
    }
}

/// The most thread-instructions a run that ends in a deadlock may take: the simulator names the
/// deadlock once every live thread waits (the fixtures take under 2,000), long before its instruction budget (10 million and
/// more) would end a spinning run. A bound on work, not on time, so a loaded machine cannot
/// fail it.
pub const DEADLOCK_FOUND_WITHIN: u64 = 100_000;

/// Panics unless `o` was found deadlocked within [`DEADLOCK_FOUND_WITHIN`] instructions.
pub fn found_without_spinning(o: &RunOutput, kernel: &str) {
    let n = o.instructions.expect("the simulator counts instructions");
    assert!(
        n <= DEADLOCK_FOUND_WITHIN,
        "{kernel}: {n} thread-instructions before the deadlock was named (at most {DEADLOCK_FOUND_WITHIN})"
    );
}

/// What a correct producer/consumer kernel writes: iteration k's consumer c reads element
/// 63 - c of the stage and maps it by `f`.
pub fn expected(f: impl Fn(f32) -> f32) -> Vec<f32> {
    let x = input();
    (0..ITERS * 64)
        .map(|i| {
            let (k, c) = (i / 64, i % 64);
            f(x[k * 64 + 63 - c])
        })
        .collect()
}

/// The simulator's run of `kernel` (PTX compiled once per test binary).
pub fn sim(kernel: &str, threads: u32) -> RunOutput {
    static PTX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let ptx = PTX.get_or_init(|| super::common::compile(SOURCE, "barriers.cu"));
    sim::run(ptx, &job(kernel, threads))
}
