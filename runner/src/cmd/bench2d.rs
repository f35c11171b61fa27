//! `runner bench` for the 2D puzzles (09, 10 and 11): every full-scale shape, each against its
//! floors.
//!
//! A 2D puzzle has three full-scale cases (4096 x 4096 with 3x3 and 15x15, 8192 x 8192 with 5x5),
//! and which limit binds changes with the kernel: a 3x3 output is 9 multiply-adds per 8 bytes of
//! traffic (memory-bound), a 15x15 one 225 (compute-bound). So each case is timed (checked first,
//! as `bench` does for one case) and printed beside its **memory floor** (the input read once and
//! the output written once at the device's measured copy bandwidth) and its **FMA floor** (its
//! multiply-adds at the measured FP32 FMA peak), with the time as a multiple of the memory floor
//! and as a share of the FMA peak. Puzzle 11 (implicit GEMM on tensor cores) also gets its
//! **tensor floor**: its multiply-adds at the fastest tf32 rate measured on the device (`wgmma`'s
//! on sm_90, else `mma.sync`'s), so no kernel reads above 100% of it. The lineup is yours,
//! the reference solution and, for puzzle 10, puzzle 09's solution.

use super::timing::{self, full_cases, time};
use crate::registry;
use crate::workbook;
use anyhow::anyhow;
use colored::Colorize;
use gpu::Device;
use gpu::bench::{Peaks, Plan};
use gpu::pool::Worker;
use serde::Serialize;
use spec::Puzzle;
use std::path::PathBuf;
use std::process::ExitCode;

/// Whether `puzzle` is one of the 2D puzzles this module times.
pub fn is_2d(puzzle: &Puzzle) -> bool {
    puzzle.kernel == "conv2d" || on_tensor_cores(puzzle)
}

/// Whether `puzzle` is timed against the tensor cores' tf32 rate too (puzzle 11).
fn on_tensor_cores(puzzle: &Puzzle) -> bool {
    puzzle.kernel == "conv2d_nhwc"
}

#[derive(Debug, Serialize)]
struct Entry {
    label: String,
    file: String,
    median_us: f64,
    min_us: f64,
    max_us: f64,
    /// The median as a multiple of the memory floor.
    x_memory_floor: f64,
    pct_fma_peak: f64,
    /// Share of the tf32 tensor-core rate (puzzle 11).
    pct_tf32_peak: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Shape {
    case: String,
    flop: f64,
    bytes: f64,
    memory_floor_us: f64,
    fma_floor_us: f64,
    /// The multiply-adds at the fastest measured tf32 rate (puzzle 11).
    tensor_floor_us: Option<f64>,
    entries: Vec<Entry>,
}

#[derive(Debug, Serialize)]
struct Report {
    puzzle: String,
    device: Device,
    peaks: Peaks,
    shapes: Vec<Shape>,
}

/// What `bench` resolved before handing a 2D puzzle over.
pub struct Setup {
    pub puzzle: Puzzle,
    pub file: PathBuf,
    pub solution: bool,
    pub device: Device,
    pub peaks: Peaks,
    pub plan: Plan,
    pub json: bool,
}

pub fn execute(gpu: &mut Worker, s: Setup) -> anyhow::Result<ExitCode> {
    let root = workbook::root();
    let mut lineup = timing::lineup(s.puzzle, &s.file, s.solution, &s.device.arch());
    // A student's copy has no solutions (the note is bench's): no reference rows.
    let references = workbook::has_solutions();
    if s.puzzle.id != "puzzle-09" && !on_tensor_cores(&s.puzzle) && references {
        let tile = registry::find("puzzle-09").map_err(|e| anyhow!(e))?;
        lineup.push((
            "puzzle-09 solution".into(),
            tile,
            root.join(tile.solution_path()),
        ));
    }
    // Each puzzle's full cases, built once (their references are cached across runs).
    let mut cases: Vec<(&str, Vec<spec::Case>)> = vec![];
    for (_, p, _) in &lineup {
        if !cases.iter().any(|(id, _)| *id == p.id) {
            cases.push((p.id, full_cases(p)?));
        }
    }
    let mut shapes: Vec<Shape> = vec![];
    for k in 0..cases[0].1.len() {
        let first = &cases[0].1[k];
        let flop = 2.0 * first.job.work as f64;
        let bytes = first.job.args.iter().map(timing::arg_bytes).sum::<usize>() as f64;
        let memory_floor_us = bytes / (s.peaks.copy_gbps * 1e9) * 1e6;
        let fma_floor_us = flop / (s.peaks.fma_tflops * 1e12) * 1e6;
        let tensor_floor_us = s
            .peaks
            .tensor_tflops()
            .filter(|_| on_tensor_cores(&s.puzzle))
            .map(|t| flop / (t * 1e12) * 1e6);
        let mut entries = vec![];
        for (label, p, path) in &lineup {
            let list = &cases.iter().find(|(id, _)| *id == p.id).expect("built").1;
            let Some(times) = time(gpu, p, &list[k], path, s.plan)? else {
                return Ok(ExitCode::from(1));
            };
            let median = times[times.len() / 2] * 1e3;
            entries.push(Entry {
                label: label.clone(),
                file: workbook::display(path),
                median_us: median,
                min_us: times[0] * 1e3,
                max_us: times[times.len() - 1] * 1e3,
                x_memory_floor: median / memory_floor_us,
                pct_fma_peak: 100.0 * fma_floor_us / median,
                pct_tf32_peak: tensor_floor_us.map(|t| 100.0 * t / median),
            });
        }
        shapes.push(Shape {
            case: first.name.clone(),
            flop,
            bytes,
            memory_floor_us,
            fma_floor_us,
            tensor_floor_us,
            entries,
        });
    }
    let report = Report {
        puzzle: s.puzzle.id.into(),
        device: s.device,
        peaks: s.peaks,
        shapes,
    };
    if s.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn table(r: &Report) -> String {
    let on_tensor_cores = r.shapes.iter().any(|s| s.tensor_floor_us.is_some());
    let tf32 = match (r.peaks.wgmma_tf32_tflops, r.peaks.tf32_tflops) {
        _ if !on_tensor_cores => String::new(),
        (Some(w), Some(m)) => format!(", tf32 wgmma {w:.1} (mma.sync {m:.1}) TFLOP/s"),
        (None, Some(m)) => format!(", tf32 mma.sync {m:.1} TFLOP/s"),
        _ => String::new(),
    };
    let mut out = format!(
        "{} on {} ({}): measured peaks FP32 FMA {:.1} TFLOP/s{tf32}, device copy {:.0} GB/s\n",
        r.puzzle.bold(),
        r.device.name,
        r.device.arch(),
        r.peaks.fma_tflops,
        r.peaks.copy_gbps
    );
    for s in &r.shapes {
        let tensor = s
            .tensor_floor_us
            .map(|t| format!(", tensor floor {t:.1} us"))
            .unwrap_or_default();
        out += &format!(
            "\n{}: {:.2} GFLOP, {:.1} MB; memory floor {:.1} us, FMA floor {:.1} us{tensor}\n",
            s.case.bold(),
            s.flop / 1e9,
            s.bytes / 1e6,
            s.memory_floor_us,
            s.fma_floor_us
        );
        let tf32_column = |v: String| {
            if s.tensor_floor_us.is_some() {
                format!("{v:>8}")
            } else {
                String::new()
            }
        };
        out += &format!(
            "  {:<22}{:>11}{:>21}{:>14}{:>8}{}\n",
            "kernel",
            "median us",
            "min..max us",
            "x mem floor",
            "% FMA",
            tf32_column("% tf32".into())
        );
        for e in &s.entries {
            out += &format!(
                "  {:<22}{:>11.1}{:>21}{:>14.2}{:>8.1}{}\n",
                e.label,
                e.median_us,
                format!("{:.1}..{:.1}", e.min_us, e.max_us),
                e.x_memory_floor,
                e.pct_fma_peak,
                tf32_column(format!("{:.1}", e.pct_tf32_peak.unwrap_or(0.0)))
            );
        }
    }
    out
}
