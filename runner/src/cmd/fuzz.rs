//! `runner fuzz` (hidden, for the workbook's developers): differential fuzzing of the simulator.
//!
//! Seeds `--seed` to `--seed + --count - 1` each give one generated kernel (`fuzz`); with
//! `--backend sim` the simulator must run each with no diagnostic, and with `--backend both` the
//! GPU runs it too and the two must agree bit for bit (outputs and printed lines). `--show`
//! prints each kernel's source, so `runner fuzz --seed N --show` reproduces kernel N. Kernels
//! are spread over `--jobs` threads, each with its own warm GPU worker. `--record FILE` keeps
//! what the GPU gave (a JSON line per seed: its digest, and the whole run where the backends
//! disagreed), and `--against FILE` compares the simulator with such a record on a machine
//! without a GPU: a fix found after a device run is checked on every recorded kernel at once.
//! A difference is printed when it is found, and the record grows as the run goes (sorted by
//! seed at its end), so a run stopped early, by a time limit on a device machine, keeps what it
//! found. Exit status 0 when every kernel passed, 1 otherwise.

use crate::check;
use fuzz::{self, Case, Recorded};
use gpu::pool::Worker;
use gpu::worker::{KernelRun, Request};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
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
    /// How many kernels (seeds seed, seed+1, ...; default 1, or with --against every recorded
    /// one).
    #[arg(long)]
    count: Option<u64>,
    /// Which backends run each kernel.
    #[arg(long, value_enum, default_value_t = Backends::Sim)]
    backend: Backends,
    /// Print each kernel's source.
    #[arg(long)]
    show: bool,
    /// Threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// With `--backend both`: write what the GPU gave for each kernel to FILE, a JSON line per
    /// seed (its digest, and the whole run where the backends disagree); with `--backend sim`,
    /// the simulator's whole runs (to compare two versions of it).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Compare the simulator with the GPU runs recorded in FILE by `--record` (the seeds it
    /// holds, within --seed and --count when given); needs no GPU.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    against: Option<PathBuf>,
}

/// Where a kernel's verdict comes from besides the simulator.
enum Other<'a> {
    /// Nothing; `true`: the simulator's own run is recorded (to compare two simulators).
    None(bool),
    Gpu(&'a mut Worker),
    Recorded(&'a Recorded),
}

/// What became of one seed (`None` when it passed), and the GPU's record of it if it ran there.
fn one(case: &Case, other: Other<'_>) -> (Option<String>, Option<Recorded>) {
    let ptx = match check::ptx(&case.code, "fuzz.cu", &[]) {
        Ok(ptx) => ptx,
        Err(d) => return (Some(format!("does not compile: {d}")), None),
    };
    let sim = sim::run(&ptx, &case.job);
    if let Some(p) = fuzz::sim_problem(&sim) {
        return (Some(p), None);
    }
    match other {
        Other::None(keep) => (None, keep.then(|| Recorded::of(case.seed, &sim, true))),
        Other::Recorded(r) => (r.difference(case, &sim), None),
        Other::Gpu(gpu) => {
            let run = KernelRun {
                code: case.code.clone(),
                file: "fuzz.cu".into(),
                macros: vec![],
                job: case.job.clone(),
            };
            let reply = gpu.call(&Request::Run(run), Duration::from_secs(30));
            let why = fuzz::difference(case, &sim, &reply.output);
            let record = Recorded::of(case.seed, &reply.output, why.is_some());
            (why, Some(record))
        }
    }
}

/// The records of `path`, by seed.
fn read_records(path: &PathBuf) -> anyhow::Result<BTreeMap<u64, Recorded>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let r: Recorded = serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{}: {e}: {l}", path.display()))?;
            Ok((r.seed, r))
        })
        .collect()
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    crate::workbook::install::ensure_nvrtc().map_err(|d| anyhow::anyhow!("{d}"))?;
    let both = args.backend == Backends::Both && args.against.is_none();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    let records = match &args.against {
        Some(path) => read_records(path)?,
        None => BTreeMap::new(),
    };
    let seeds: Vec<u64> = match (&args.against, args.count) {
        (Some(_), None) => records.keys().copied().collect(),
        (Some(_), Some(n)) => records
            .range(args.seed..args.seed.saturating_add(n))
            .map(|(&k, _)| k)
            .collect(),
        (None, n) => (args.seed..args.seed.saturating_add(n.unwrap_or(1))).collect(),
    };
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    let recorded = Mutex::new(Vec::new());
    // Each record is appended as it comes; the file is written again in seed order at the end.
    let growing = match &args.record {
        Some(path) => Some(Mutex::new(std::fs::File::create(path)?)),
        None => None,
    };
    let device = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let mut worker = both.then(check::gpu_worker);
                if let Some(w) = worker.as_mut() {
                    let name = w.device().ok().flatten().map(|d| d.name);
                    device.lock().expect("lock").get_or_insert(name);
                }
                loop {
                    let seed = {
                        let mut n = next.lock().expect("lock");
                        let Some(&seed) = seeds.get(*n) else {
                            return;
                        };
                        *n += 1;
                        seed
                    };
                    let case = fuzz::case(seed);
                    if args.show {
                        println!("// seed {seed}\n{}", case.code);
                    }
                    let other = match (worker.as_mut(), records.get(&seed)) {
                        (Some(w), _) => Other::Gpu(w),
                        (None, Some(r)) => Other::Recorded(r),
                        (None, None) => Other::None(args.record.is_some()),
                    };
                    let (why, record) = one(&case, other);
                    if let Some(why) = why {
                        let mut failures = failures.lock().expect("lock");
                        println!("✗ seed {seed}: {why}");
                        failures.push((seed, why));
                    }
                    if let Some(r) = record {
                        if let (Some(file), Ok(line)) = (&growing, serde_json::to_string(&r)) {
                            let _ = writeln!(file.lock().expect("lock"), "{line}");
                        }
                        recorded.lock().expect("lock").push(r);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    let on = match (device.into_inner().expect("lock"), &args.against) {
        (Some(Some(name)), _) => format!("sim + gpu ({name})"),
        (Some(None), _) => {
            anyhow::bail!("--backend both needs a GPU, and the worker found none")
        }
        (None, Some(path)) => format!("sim against the GPU runs in {}", path.display()),
        (None, None) => "sim".to_string(),
    };
    if let Some(path) = &args.record {
        let mut recorded = recorded.into_inner().expect("lock");
        recorded.sort_by_key(|r| r.seed);
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        for r in &recorded {
            writeln!(f, "{}", serde_json::to_string(r)?)?;
        }
        f.flush()?;
    }
    let count = seeds.len() as u64;
    let passed = count - failures.len() as u64;
    let (first, last) = (
        seeds.first().copied().unwrap_or(0),
        seeds.last().map_or(0, |s| s + 1),
    );
    println!("fuzz: {passed} of {count} kernels passed (seeds {first}..{last}, {on})");
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
