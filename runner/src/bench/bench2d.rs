//! `runner bench` for the 2D puzzles (09, 10 and 11): every full-scale shape, each against its
//! floors.
//!
//! A 2D puzzle has three full-scale cases (4096 x 4096 with 3x3 and 15x15, 8192 x 8192 with 5x5),
//! and which limit binds changes with the kernel: a 3x3 output is 9 multiply-adds per 8 bytes of
//! traffic (memory-bound), a 15x15 one 225 (compute-bound). So each case is timed (checked first,
//! as `bench` does for one case) and printed beside its **memory floor** (the input read once and
//! the output written once at the device's measured copy bandwidth) and its **FMA floor** (its
//! multiply-adds at the measured FP32 FMA peak), with the time as a multiple of the memory floor
//! and as a share of the FMA peak. Puzzle 11 (implicit GEMM on tensor cores) gets its **tensor
//! floor** instead: its multiply-adds at the fastest tf32 rate measured on the device (`wgmma`'s
//! on sm_90, else `mma.sync`'s), so no kernel reads above 100% of it; the FP32 units' time is no
//! floor there and is shown as such, with each kernel's speed-up over it. The lineup is yours,
//! the reference solution and, for puzzle 10, puzzle 09's solution.

use super::timing::{self, full_cases, on_tensor_cores, time};
use crate::workbook;
use crate::workbook::registry;
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
    matches!(puzzle.kernel, "conv2d" | "conv2d_nhwc")
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
        let tile = registry::find("puzzle-09")?;
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
        let floors = match s.tensor_floor_us {
            Some(t) => format!(
                "tensor floor {t:.1} us; the FP32 units alone would need {:.1} us",
                s.fma_floor_us
            ),
            None => format!("FMA floor {:.1} us", s.fma_floor_us),
        };
        out += &format!(
            "\n{}: {:.2} GFLOP, {:.1} MB; memory floor {:.1} us, {floors}\n",
            s.case.bold(),
            s.flop / 1e9,
            s.bytes / 1e6,
            s.memory_floor_us,
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
            if s.tensor_floor_us.is_some() {
                "x FP32"
            } else {
                "% FMA"
            },
            tf32_column("% tf32".into())
        );
        for e in &s.entries {
            // On tensor cores: how many times faster than the FP32 units could be.
            let fma = match s.tensor_floor_us {
                Some(_) => format!("{:.2}", s.fma_floor_us / e.median_us),
                None => format!("{:.1}", e.pct_fma_peak),
            };
            out += &format!(
                "  {:<22}{:>11.1}{:>21}{:>14.2}{fma:>8}{}\n",
                e.label,
                e.median_us,
                format!("{:.1}..{:.1}", e.min_us, e.max_us),
                e.x_memory_floor,
                tf32_column(format!("{:.1}", e.pct_tf32_peak.unwrap_or(0.0)))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puzzle 11's Hopper solution at N8 on an H100 (120.3 us): under its tensor floor's 100%,
    /// and the FP32 units' time shown as no floor, with the speed-up over it.
    #[test]
    fn on_tensor_cores_the_fp32_time_is_no_floor_and_no_share_passes_100_percent() {
        let peaks = crate::bench::tests::h100();
        let flop = 37.46e9;
        let tensor = flop / (peaks.tensor_tflops().unwrap() * 1e12) * 1e6;
        let fma = flop / (peaks.fma_tflops * 1e12) * 1e6;
        let entry = Entry {
            label: "reference hopper".into(),
            file: "solutions/puzzle-11-hopper.cu".into(),
            median_us: 120.3,
            min_us: 118.5,
            max_us: 124.1,
            x_memory_floor: 2.56,
            pct_fma_peak: 100.0 * fma / 120.3,
            pct_tf32_peak: Some(100.0 * tensor / 120.3),
        };
        let report = Report {
            puzzle: "puzzle-11".into(),
            device: crate::bench::tests::h100_device(),
            peaks,
            shapes: vec![Shape {
                case: "full-n8-128x128-ic128-oc128".into(),
                flop,
                bytes: 132.7e6,
                memory_floor_us: 47.0,
                fma_floor_us: fma,
                tensor_floor_us: Some(tensor),
                entries: vec![entry],
            }],
        };
        colored::control::set_override(false);
        let table = table(&report);
        assert!(
            table.contains("tensor floor 78.5 us; the FP32 units alone would need 568.4 us"),
            "{table}"
        );
        assert!(
            !table.contains("FMA floor") && !table.contains("% FMA"),
            "{table}"
        );
        assert!(
            table.contains("x FP32") && table.contains("    4.73"),
            "{table}"
        );
        assert!(table.contains("    65.2"), "{table}");
    }
}
