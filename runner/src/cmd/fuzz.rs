//! `runner fuzz` (hidden, for the workbook's developers): differential fuzzing of the simulator.
//!
//! Seeds `--seed` to `--seed + --count - 1` each give one generated kernel (`kernels::fuzz`); with
//! `--backend sim` the simulator must run each with no diagnostic, and with `--backend both` the
//! GPU runs it too and the two must agree bit for bit (outputs and printed lines). `--show`
//! prints each kernel's source, so `runner fuzz --seed N --show` reproduces kernel N. Kernels
//! are spread over `--jobs` threads, each with its own warm GPU worker. Exit status 0 when every
//! kernel passed, 1 otherwise.

use crate::engine;
use kernels::fuzz::{self, Case};
use kernels::worker::{KernelRun, Request, Worker};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backends {
    /// The simulator alone: no diagnostic, no panic, no hang.
    Sim,
    /// The simulator and the GPU, compared bit for bit.
    Both,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many kernels (seeds seed, seed+1, ...).
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// Which backends run each kernel.
    #[arg(long, value_enum, default_value_t = Backends::Sim)]
    backend: Backends,
    /// Print each kernel's source.
    #[arg(long)]
    show: bool,
    /// Threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
}

/// What became of one seed: `None` when it passed.
fn one(case: &Case, gpu: Option<&mut Worker>) -> Option<String> {
    let ptx = match engine::ptx(&case.code, "fuzz.cu", &[]) {
        Ok(ptx) => ptx,
        Err(d) => return Some(format!("does not compile: {d}")),
    };
    let sim = kernels::sim::run(&ptx, &case.job);
    if let Some(p) = fuzz::sim_problem(&sim) {
        return Some(p);
    }
    let gpu = gpu?;
    let run = KernelRun {
        code: case.code.clone(),
        file: "fuzz.cu".into(),
        macros: vec![],
        job: case.job.clone(),
    };
    let reply = gpu.call(&Request::Run(run), Duration::from_secs(30));
    fuzz::difference(case, &sim, &reply.output)
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    crate::toolchain::ensure_nvrtc().map_err(|d| anyhow::anyhow!("{d}"))?;
    let both = args.backend == Backends::Both;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    let next = Mutex::new(args.seed);
    let end = args.seed.saturating_add(args.count);
    let failures = Mutex::new(Vec::new());
    let device = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let mut worker = both.then(engine::gpu_worker);
                if let Some(w) = worker.as_mut() {
                    let name = w.device().ok().flatten().map(|d| d.name);
                    device.lock().expect("lock").get_or_insert(name);
                }
                loop {
                    let seed = {
                        let mut n = next.lock().expect("lock");
                        if *n >= end {
                            return;
                        }
                        *n += 1;
                        *n - 1
                    };
                    let case = fuzz::case(seed);
                    if args.show {
                        println!("// seed {seed}\n{}", case.code);
                    }
                    if let Some(why) = one(&case, worker.as_mut()) {
                        failures.lock().expect("lock").push((seed, why));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("lock");
    failures.sort();
    let on = match device.into_inner().expect("lock") {
        Some(Some(name)) => format!("sim + gpu ({name})"),
        Some(None) => anyhow::bail!("--backend both needs a GPU, and the worker found none"),
        None => "sim".to_string(),
    };
    for (seed, why) in &failures {
        println!("✗ seed {seed}: {why}");
    }
    let passed = args.count - failures.len() as u64;
    println!(
        "fuzz: {passed} of {} kernels passed (seeds {}..{end}, {on})",
        args.count, args.seed
    );
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
