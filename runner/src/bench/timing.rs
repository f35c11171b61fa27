//! What `bench` and `bench2d` share: a puzzle's full-scale cases, a kernel checked on one and
//! then timed by the worker, and the line-up of kernels timed side by side (yours, the reference
//! solution and any second checked solution of the puzzle). Both commands import this module;
//! it imports neither, so the two stay one-way (`bench` hands the 2D puzzles to `bench2d`).

use crate::check::{self, Backend};
use crate::workbook::{self, registry};
use anyhow::anyhow;
use colored::Colorize;
use gpu::bench::Plan;
use gpu::pool::Worker;
use gpu::worker::{KernelRun, Request};
use spec::{Case, Puzzle, Scale};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How `grade` times a passing submission: as `runner bench` does, with fewer runs.
pub const GRADE_PLAN: Plan = Plan {
    warmup: 5,
    runs: 20,
    rotate_bytes: 256 << 20,
};

/// Whether `puzzle`'s kernels compute on tensor cores (puzzle 11's implicit GEMM, puzzle 12's
/// puzzle 08 contract): their floor is the tensor cores' tf32 rate, not the FP32 units'.
pub fn on_tensor_cores(puzzle: &Puzzle) -> bool {
    matches!(puzzle.id, "puzzle-11" | "puzzle-12")
}

/// The kernels timed side by side: `(label, puzzle, file)`, the chosen file first ("yours", or
/// the solution's label when a solution was chosen), then every solution of the puzzle that was
/// not chosen and that `arch` (the device's, e.g. `sm_90`) can run, each with its label
/// ("reference", "reference hopper").
pub fn lineup(
    puzzle: Puzzle,
    file: &Path,
    chosen: bool,
    arch: &str,
) -> Vec<(String, Puzzle, PathBuf)> {
    let root = workbook::root();
    let solutions = registry::solutions(&puzzle);
    let label = |s: &registry::Solution| match s.label {
        None => "reference".to_string(),
        Some(l) => format!("reference {l}"),
    };
    let first = solutions
        .iter()
        .find(|s| chosen && root.join(&s.file) == file)
        .map_or_else(|| "yours".to_string(), label);
    let mut lineup = vec![(first, puzzle, file.to_path_buf())];
    // A student's copy has no solutions: the reference rows are for instructors.
    if !workbook::has_solutions() {
        return lineup;
    }
    for s in &solutions {
        let runs_here = s.arch.is_none_or(|a| a == arch);
        if root.join(&s.file) != file && runs_here {
            lineup.push((label(s), puzzle, root.join(&s.file)));
        }
    }
    lineup
}

pub fn arg_bytes(arg: &spec::Arg) -> usize {
    match arg {
        spec::Arg::Input { data, .. } => data.len() * 4,
        out => out.output_len().unwrap_or(0) * 4,
    }
}

/// Every full-scale case of `puzzle`, in order (the 2D puzzles have three).
pub fn full_cases(puzzle: &Puzzle) -> anyhow::Result<Vec<Case>> {
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
fn kernel_run(puzzle: &Puzzle, case: &Case, path: &Path) -> anyhow::Result<(KernelRun, Case)> {
    let file = workbook::display(path);
    let (code, _) =
        crate::workbook::source_text::read(path, &file).map_err(|e| anyhow!("{e:#}"))?;
    let case =
        check::with_declared_launch(puzzle, &code, &file, case).map_err(|d| anyhow!("{d}"))?;
    Ok((check::kernel_run(&code, &file, &case), case))
}

/// Launch times of `run` per `plan`, in milliseconds, sorted.
pub fn timings(gpu: &mut Worker, run: KernelRun, plan: Plan) -> anyhow::Result<Vec<f64>> {
    let reply = gpu.call(&Request::Bench(run, plan), LIMIT);
    let timing = reply.timing.ok_or_else(|| {
        let why = reply.output.diagnostics.first().map(|d| d.message.clone());
        anyhow!(why.unwrap_or_else(|| "no timing came back".into()))
    })?;
    let mut times: Vec<f64> = timing.times_ms.iter().map(|&t| f64::from(t)).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// The median seconds of `path` on the puzzle's full case, for `runner grade` (which has already
/// checked it): `None` when it cannot be timed.
pub fn median_seconds(
    gpu: &mut Worker,
    puzzle: &Puzzle,
    case: &Case,
    path: &Path,
    plan: Plan,
) -> Option<f64> {
    let (run, _) = kernel_run(puzzle, case, path).ok()?;
    let times = timings(gpu, run, plan).ok()?;
    times.get(times.len() / 2).map(|ms| ms * 1e-3)
}

/// How long one worker may take for a check or a timing of the full case.
const LIMIT: Duration = Duration::from_secs(60);

/// Checks the kernel on the case, then times it. `None` (after printing why) when it is wrong.
pub fn time(
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
