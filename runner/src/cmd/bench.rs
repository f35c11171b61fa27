//! `runner bench <puzzle>`: time a kernel on the GPU against the hardware's limits.
//!
//! On the puzzle's full case: the kernel is checked first (a wrong kernel is not worth timing),
//! then launched `--warmup` times and timed `--runs` times with device events (queued back to
//! back, so the host's submission is not timed), the input buffers
//! rotated among copies larger than the L2 cache. It prints the median and spread, GFLOP/s, GB/s,
//! the share of the device's FP32 FMA peak and copy bandwidth (measured once per device and cached),
//! the floor those two limits set, and, side by side, the reference solution and the baseline
//! (puzzle-08's for puzzle 12, puzzle-04's on the rest of the valid contract, puzzle-01's on the
//! classic one). The 2D puzzles,
//! with three full-scale shapes each, are timed by `bench2d`.

use super::KernelChoice;
use crate::engine::{self, Backend};
use crate::{registry, toolchain, workbook};
use anyhow::{anyhow, bail};
use colored::Colorize;
use kernels::bench::{Peaks, Plan};
use kernels::gpu::Device;
use kernels::worker::{KernelRun, Request, Worker};
use kernels::{Case, Puzzle, Scale};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// Timed launches per kernel (at least 20).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(20..))]
    runs: u32,
    /// Untimed launches first.
    #[arg(long, default_value_t = 5)]
    warmup: u32,
    /// Measure the device's peaks again instead of using the cached figures.
    #[arg(long)]
    remeasure: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// One timed kernel.
#[derive(Debug, Serialize)]
struct Entry {
    label: String,
    file: String,
    median_us: f64,
    min_us: f64,
    max_us: f64,
    gflops: f64,
    gbps: f64,
    pct_fma_peak: f64,
    pct_bandwidth: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    puzzle: String,
    device: Device,
    peaks: Peaks,
    case: String,
    flop: f64,
    bytes: f64,
    floor_us: f64,
    entries: Vec<Entry>,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, file) = args.target.resolve()?;
    let mut gpu = engine::gpu_worker();
    let device = kernels::gpu::libcuda_present()
        .then(|| gpu.device().ok().flatten())
        .flatten();
    let Some(device) = device else {
        bail!(
            "runner bench needs a CUDA GPU, and none was found here (libcuda did not load or reports no device); `runner check` works without one"
        );
    };
    toolchain::ensure_nvrtc().map_err(|d| anyhow!(d.message))?;
    let root = workbook::root();
    let peaks = peaks(&mut gpu, &device, args.remeasure)?;
    let plan = Plan {
        warmup: args.warmup as usize,
        runs: args.runs as usize,
        rotate_bytes: 256 << 20,
    };
    if super::bench2d::is_2d(&puzzle) {
        let setup = super::bench2d::Setup {
            puzzle,
            file,
            solution: args.target.solution,
            device,
            peaks,
            plan,
            json: args.json,
        };
        return super::bench2d::execute(&mut gpu, setup);
    }
    let baseline = registry::find(baseline(&puzzle)).map_err(|e| anyhow!(e))?;
    let mut lineup: Vec<(String, Puzzle, PathBuf)> = vec![("yours".into(), puzzle, file.clone())];
    // A student's copy has no solutions: the reference rows are for instructors.
    let references = workbook::has_solutions();
    if !references {
        eprintln!(
            "note: no reference rows: this copy of the workbook has no solutions (they are for instructors)"
        );
    }
    if !args.target.solution && references {
        lineup.push((
            "reference".into(),
            puzzle,
            root.join(puzzle.solution_path()),
        ));
    } else if args.target.solution {
        lineup[0].0 = "reference".into();
    }
    if baseline.id != puzzle.id && references {
        lineup.push((
            format!("{} solution", baseline.id),
            baseline,
            root.join(baseline.solution_path()),
        ));
    }
    let mut entries = vec![];
    let mut shape = None;
    for (label, p, path) in lineup {
        let case = full_case(&p)?;
        let work = case.job.work as f64;
        let flop = 2.0 * work;
        let bytes = case.job.args.iter().map(arg_bytes).sum::<usize>() as f64;
        shape.get_or_insert((case.name.clone(), flop, bytes));
        let times = time(&mut gpu, &p, &case, &path, plan)?;
        let Some(times) = times else {
            return Ok(ExitCode::from(1));
        };
        let median = times[times.len() / 2] * 1e3;
        let secs = median * 1e-6;
        entries.push(Entry {
            label,
            file: workbook::display(&path),
            median_us: median,
            min_us: times[0] * 1e3,
            max_us: times[times.len() - 1] * 1e3,
            gflops: flop / secs / 1e9,
            gbps: bytes / secs / 1e9,
            pct_fma_peak: 100.0 * flop / secs / (peaks.fma_tflops * 1e12),
            pct_bandwidth: 100.0 * bytes / secs / (peaks.copy_gbps * 1e9),
        });
    }
    let (case, flop, bytes) = shape.expect("at least one entry");
    let floor_us = (flop / (peaks.fma_tflops * 1e12)).max(bytes / (peaks.copy_gbps * 1e9)) * 1e6;
    let report = Report {
        puzzle: puzzle.id.into(),
        device,
        peaks,
        case,
        flop,
        bytes,
        floor_us,
        entries,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The solution timed beside a puzzle's: puzzle 08's (the FP32 units at their best) for puzzle 12,
/// which computes the same on tensor cores; puzzle 04's on the rest of the valid contract;
/// puzzle 01's on the classic one.
fn baseline(puzzle: &Puzzle) -> &'static str {
    match puzzle.id {
        "puzzle-12" => "puzzle-08",
        id if id >= "puzzle-04" => "puzzle-04",
        _ => "puzzle-01",
    }
}

pub(super) fn arg_bytes(arg: &kernels::Arg) -> usize {
    match arg {
        kernels::Arg::Input { data, .. } => data.len() * 4,
        out => out.output_len().unwrap_or(0) * 4,
    }
}

/// Every full-scale case of `puzzle`, in order (the 2D puzzles have three).
pub(super) fn full_cases(puzzle: &Puzzle) -> anyhow::Result<Vec<Case>> {
    let cases: Vec<Case> = (puzzle.cases)(Scale::Full)
        .into_iter()
        .filter(|c| c.scale == Scale::Full)
        .collect();
    if cases.is_empty() {
        return Err(anyhow!("{} has no full-scale case to time", puzzle.id));
    }
    Ok(cases)
}

pub fn full_case(puzzle: &Puzzle) -> anyhow::Result<Case> {
    (puzzle.cases)(Scale::Full)
        .into_iter()
        .rev()
        .find(|c| c.scale == Scale::Full)
        .ok_or_else(|| anyhow!("{} has no full-scale case to time", puzzle.id))
}

/// The worker's run of `path` on `case`, and the case with the launch the kernel declares (if it
/// declares one) resolved.
fn kernel_run(puzzle: &Puzzle, case: &Case, path: &Path) -> Result<(KernelRun, Case), String> {
    let file = workbook::display(path);
    let (code, _) = crate::source_text::read(path, &file).map_err(|e| format!("{e:#}"))?;
    let case =
        engine::with_declared_launch(puzzle, &code, &file, case).map_err(|d| d.to_string())?;
    Ok((engine::kernel_run(&code, &file, &case), case))
}

/// Launch times of `run` per `plan`, in milliseconds, sorted.
pub fn timings(gpu: &mut Worker, run: KernelRun, plan: Plan) -> Result<Vec<f64>, String> {
    let reply = gpu.call(&Request::Bench(run, plan), LIMIT);
    let timing = reply.timing.ok_or_else(|| {
        let why = reply.output.diagnostics.first().map(|d| d.message.clone());
        why.unwrap_or_else(|| "no timing came back".into())
    })?;
    let mut times: Vec<f64> = timing.times_ms.iter().map(|&t| f64::from(t)).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// The median seconds of `path` on the puzzle's full case, for `runner grade` (which has already
/// checked it): `None` when it cannot be timed.
pub fn median_seconds(gpu: &mut Worker, puzzle: &Puzzle, path: &Path, plan: Plan) -> Option<f64> {
    let case = full_case(puzzle).ok()?;
    let (run, _) = kernel_run(puzzle, &case, path).ok()?;
    let times = timings(gpu, run, plan).ok()?;
    times.get(times.len() / 2).map(|ms| ms * 1e-3)
}

/// How long one worker may take for a check or a timing of the full case.
const LIMIT: Duration = Duration::from_secs(60);

/// Checks the kernel on the case, then times it. `None` (after printing why) when it is wrong.
pub(super) fn time(
    gpu: &mut Worker,
    puzzle: &Puzzle,
    case: &Case,
    path: &Path,
    plan: Plan,
) -> anyhow::Result<Option<Vec<f64>>> {
    let file = workbook::display(path);
    let (run, case) = match kernel_run(puzzle, case, path) {
        Ok(prepared) => prepared,
        Err(why) => {
            println!("{} {file} cannot be timed: {why}", "✗".red().bold());
            println!("Run: runner check {} --kernel {file}", puzzle.id);
            return Ok(None);
        }
    };
    let checked = gpu.call(&Request::Run(run.clone()), LIMIT).output;
    let (result, diagnostics) = crate::judge::judge(puzzle, &case, Backend::Gpu, checked);
    if !result.passed {
        println!(
            "{} {file} is wrong on {} ({}), so it is not timed:",
            "✗".red().bold(),
            case.name,
            puzzle.id
        );
        for d in diagnostics {
            println!("  {d}");
        }
        println!("Run: runner check {} --kernel {file}", puzzle.id);
        return Ok(None);
    }
    timings(gpu, run, plan)
        .map(Some)
        .map_err(|why| anyhow!("timing {file} failed: {why}"))
}

/// The device's FMA peak and copy bandwidth, measured once per device and cached.
fn peaks(gpu: &mut Worker, device: &Device, remeasure: bool) -> anyhow::Result<Peaks> {
    let path = kernels::bench::peaks_path(device);
    if let Some(peaks) = kernels::bench::cached_peaks(device).filter(|_| !remeasure) {
        return Ok(peaks);
    }
    let reply = gpu.call(&Request::Peaks, Duration::from_secs(120));
    let peaks = reply.peaks.ok_or_else(|| {
        anyhow!(
            "measuring the device failed: {:?}",
            reply.output.diagnostics.first().map(|d| &d.message)
        )
    })?;
    let _ = std::fs::create_dir_all(kernels::nvrtc::cache_dir());
    let _ = std::fs::write(&path, serde_json::to_string_pretty(&peaks)?);
    Ok(peaks)
}

fn table(r: &Report) -> String {
    let mut out = format!(
        "{} on {} ({}): case {}, {:.2} GFLOP, {:.1} MB\n",
        r.puzzle.bold(),
        r.device.name,
        r.device.arch(),
        r.case,
        r.flop / 1e9,
        r.bytes / 1e6
    );
    out += &format!(
        "measured peaks: FP32 FMA {:.1} TFLOP/s, device copy {:.0} GB/s; floor {:.1} us\n\n",
        r.peaks.fma_tflops, r.peaks.copy_gbps, r.floor_us
    );
    out += &format!(
        "{:<22}{:>11}{:>19}{:>10}{:>9}{:>8}{:>8}  {}\n",
        "kernel",
        "median us",
        "min..max us",
        "GFLOP/s",
        "GB/s",
        "% FMA",
        "% BW",
        "share of the FMA peak"
    );
    for e in &r.entries {
        let bar = "█".repeat((e.pct_fma_peak / 4.0).round().clamp(0.0, 25.0) as usize);
        out += &format!(
            "{:<22}{:>11.1}{:>19}{:>10.0}{:>9.1}{:>8.1}{:>8.1}  {}\n",
            e.label,
            e.median_us,
            format!("{:.1}..{:.1}", e.min_us, e.max_us),
            e.gflops,
            e.gbps,
            e.pct_fma_peak,
            e.pct_bandwidth,
            bar.green()
        );
    }
    out
}
