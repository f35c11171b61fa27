//! `runner bench <puzzle>`: time a kernel on the GPU against the hardware's limits.
//!
//! On the puzzle's full case: the kernel is checked first (a wrong kernel is not worth timing),
//! then launched `--warmup` times and timed `--runs` times with device events (queued back to
//! back, so the host's submission is not timed), the input buffers
//! rotated among copies larger than the L2 cache. It prints the median and spread, GFLOP/s, GB/s,
//! the share of the device's FP32 FMA peak and copy bandwidth (measured once per device and cached),
//! the floor those two limits set (for puzzle 12, which computes on tensor cores, the floor is
//! its multiply-adds at the fastest tf32 rate measured, or the memory: the FP32 units' time is no
//! floor there, the puzzle's point is to pass it; its share column is then of the tf32 rate, so
//! no kernel reads above 100% of a floor), and, side by side, the reference solution (and any second
//! checked one the device can run, `registry::SHOWPIECES`) and the baseline
//! (puzzle-08's for puzzle 12, puzzle-04's on the rest of the valid contract, puzzle-01's on the
//! classic one). The 2D puzzles,
//! with three full-scale shapes each, are timed by `bench2d`.
//!
//! May import `check`, `judge` and `workbook`; never `report`, `show`, `classroom` or `cmd`.
//! `cmd::bench` resolves the arguments and calls [`run`]; `grade` times with `timing`.

pub mod bench2d;
pub mod timing;

use crate::check;
use crate::workbook::{self, install, registry};
use anyhow::{anyhow, bail};
use colored::Colorize;
use gpu::Device;
use gpu::bench::{Peaks, Plan};
use gpu::pool::Worker;
use gpu::worker::Request;
use serde::Serialize;
use spec::Puzzle;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
pub use timing::median_seconds;

/// What to time and how: the puzzle and file (`cmd::bench` resolves them), and the options.
pub struct Options {
    pub puzzle: Puzzle,
    pub file: PathBuf,
    /// The file is a reference solution (`--solution`).
    pub solution: bool,
    pub runs: u32,
    pub warmup: u32,
    pub remeasure: bool,
    pub json: bool,
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
    /// Share of the fastest tf32 rate measured (puzzle 12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pct_tf32_peak: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    puzzle: String,
    device: Device,
    peaks: Peaks,
    case: String,
    flop: f64,
    bytes: f64,
    /// The kernel's floor (`floor_us`).
    floor_us: f64,
    /// The multiply-adds on the FP32 units at their measured peak: the floor, except on tensor
    /// cores.
    fp32_us: f64,
    entries: Vec<Entry>,
}

impl Entry {
    /// A kernel's row from its launches' `times` (ms, sorted), for its `work` (FLOP and bytes)
    /// against the device's `peaks` (and the tf32 rate, `tensor`, on tensor cores).
    fn of(
        label: String,
        file: String,
        times: &[f64],
        (flop, bytes): (f64, f64),
        peaks: &Peaks,
        tensor: Option<f64>,
    ) -> Entry {
        let median = times[times.len() / 2] * 1e3;
        let secs = median * 1e-6;
        Entry {
            label,
            file,
            median_us: median,
            min_us: times[0] * 1e3,
            max_us: times[times.len() - 1] * 1e3,
            gflops: flop / secs / 1e9,
            gbps: bytes / secs / 1e9,
            pct_fma_peak: 100.0 * flop / secs / (peaks.fma_tflops * 1e12),
            pct_bandwidth: 100.0 * bytes / secs / (peaks.copy_gbps * 1e9),
            pct_tf32_peak: tensor.map(|t| 100.0 * flop / secs / (t * 1e12)),
        }
    }
}

/// The multiply-adds of `flop` on the FP32 units at their measured peak, in us.
fn fp32_us(flop: f64, peaks: &Peaks) -> f64 {
    flop / (peaks.fma_tflops * 1e12) * 1e6
}

/// The time no kernel doing `flop` and moving `bytes` can beat, in us: the larger of the memory
/// floor and the multiply-adds at the FP32 units' peak, or, on tensor cores (`tensor`: their
/// fastest measured tf32 rate), at that rate instead.
pub fn floor_us(flop: f64, bytes: f64, peaks: &Peaks, tensor: Option<f64>) -> f64 {
    let rate = tensor.unwrap_or(peaks.fma_tflops);
    (flop / (rate * 1e12)).max(bytes / (peaks.copy_gbps * 1e9)) * 1e6
}

/// Times `o.file` beside the reference and the baseline, and prints the table (or JSON).
pub fn run(o: Options) -> anyhow::Result<ExitCode> {
    let Options { puzzle, file, .. } = o;
    let mut gpu = check::gpu_worker();
    let device = gpu::libcuda_present()
        .then(|| gpu.device().ok().flatten())
        .flatten();
    let Some(device) = device else {
        bail!(
            "runner bench needs a CUDA GPU, and none was found here (libcuda did not load or reports no device); `runner check` works without one"
        );
    };
    install::ensure_nvrtc().map_err(|d| anyhow!(d.message))?;
    let root = workbook::root();
    let arch = device.arch();
    let peaks = peaks(&mut gpu, &device, o.remeasure)?;
    let plan = Plan {
        warmup: o.warmup as usize,
        runs: o.runs as usize,
        rotate_bytes: 256 << 20,
    };
    if bench2d::is_2d(&puzzle) {
        let setup = bench2d::Setup {
            puzzle,
            file,
            solution: o.solution,
            device,
            peaks,
            plan,
            json: o.json,
        };
        return bench2d::execute(&mut gpu, setup);
    }
    let baseline = registry::find(baseline(&puzzle))?;
    let mut lineup = timing::lineup(puzzle, &file, o.solution, &arch);
    let references = workbook::has_solutions();
    if !references {
        eprintln!(
            "note: no reference rows: this copy of the workbook has no solutions (they are for instructors)"
        );
    }
    if baseline.id != puzzle.id && references {
        lineup.push((
            format!("{} solution", baseline.id),
            baseline,
            root.join(baseline.solution_path()),
        ));
    }
    let tensor = (peaks.tensor_tflops()).filter(|_| timing::on_tensor_cores(&puzzle));
    let mut entries = vec![];
    let mut shape = None;
    for (label, p, path) in lineup {
        let case = timing::full_case(&p)?;
        let work = case.job.work as f64;
        let flop = 2.0 * work;
        let bytes = case.job.args.iter().map(timing::arg_bytes).sum::<usize>() as f64;
        shape.get_or_insert((case.name.clone(), flop, bytes));
        let times = timing::time(&mut gpu, &p, &case, &path, plan)?;
        let Some(times) = times else {
            return Ok(ExitCode::from(1));
        };
        let file = workbook::display(&path);
        entries.push(Entry::of(
            label,
            file,
            &times,
            (flop, bytes),
            &peaks,
            tensor,
        ));
    }
    let (case, flop, bytes) = shape.expect("at least one entry");
    let report = Report {
        puzzle: puzzle.id.into(),
        device,
        peaks,
        case,
        flop,
        bytes,
        floor_us: floor_us(flop, bytes, &peaks, tensor),
        fp32_us: fp32_us(flop, &peaks),
        entries,
    };
    if o.json {
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

/// The device's FMA peak and copy bandwidth, measured once per device and cached.
fn peaks(gpu: &mut Worker, device: &Device, remeasure: bool) -> anyhow::Result<Peaks> {
    let path = gpu::bench::peaks_path(device);
    if let Some(peaks) = gpu::bench::cached_peaks(device).filter(|_| !remeasure) {
        return Ok(peaks);
    }
    let reply = gpu.call(&Request::Peaks, Duration::from_secs(120));
    let peaks = reply.peaks.ok_or_else(|| {
        anyhow!(
            "measuring the device failed: {:?}",
            reply.output.diagnostics.first().map(|d| &d.message)
        )
    })?;
    let _ = std::fs::create_dir_all(toolchain::nvrtc::cache_dir());
    let _ = std::fs::write(&path, serde_json::to_string_pretty(&peaks)?);
    Ok(peaks)
}

fn table(r: &Report) -> String {
    let tensor = r.entries.iter().any(|e| e.pct_tf32_peak.is_some());
    let mut out = format!(
        "{} on {} ({}): case {}, {:.2} GFLOP, {:.1} MB\n",
        r.puzzle.bold(),
        r.device.name,
        r.device.arch(),
        r.case,
        r.flop / 1e9,
        r.bytes / 1e6
    );
    let (peaks, floor, share, of) = match r.peaks.tensor_tflops().filter(|_| tensor) {
        Some(t) => (
            format!(", tf32 tensor cores {t:.1} TFLOP/s"),
            format!(
                "{:.1} us (tensor cores or memory; the FP32 units alone would need {:.1} us)",
                r.floor_us, r.fp32_us
            ),
            "% tf32",
            "share of the tf32 peak",
        ),
        None => (
            String::new(),
            format!("{:.1} us", r.floor_us),
            "% FMA",
            "share of the FMA peak",
        ),
    };
    out += &format!(
        "measured peaks: FP32 FMA {:.1} TFLOP/s{peaks}, device copy {:.0} GB/s; floor {floor}\n\n",
        r.peaks.fma_tflops, r.peaks.copy_gbps
    );
    out += &format!(
        "{:<22}{:>11}{:>19}{:>10}{:>9}{:>8}{:>8}  {}\n",
        "kernel", "median us", "min..max us", "GFLOP/s", "GB/s", share, "% BW", of
    );
    for e in &r.entries {
        let pct = e.pct_tf32_peak.unwrap_or(e.pct_fma_peak);
        let bar = "█".repeat((pct / 4.0).round().clamp(0.0, 25.0) as usize);
        out += &format!(
            "{:<22}{:>11.1}{:>19}{:>10.0}{:>9.1}{:>8.1}{:>8.1}  {}\n",
            e.label,
            e.median_us,
            format!("{:.1}..{:.1}", e.min_us, e.max_us),
            e.gflops,
            e.gbps,
            pct,
            e.pct_bandwidth,
            bar.green()
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The card the tables below were measured on.
    pub(crate) fn h100_device() -> Device {
        Device {
            name: "NVIDIA H100 80GB HBM3".into(),
            major: 9,
            minor: 0,
            multiprocessors: 132,
        }
    }

    /// The H100's measured peaks of the book's puzzle 12 figures.
    pub(crate) fn h100() -> Peaks {
        Peaks {
            fma_tflops: 65.9,
            copy_gbps: 2825.0,
            tf32_tflops: Some(317.5),
            wgmma_tf32_tflops: Some(477.4),
        }
    }

    /// Puzzle 12's Hopper solution took 54.0 us on an H100, 1.7 times under the FP32 units'
    /// 93.0 us: its floor is the tensor cores' (12.8 us), and it reads 23.8% of their rate.
    #[test]
    fn puzzle_12s_floor_is_the_tensor_cores_so_its_solution_reads_under_100_percent() {
        let outputs = 1_500_000.0 - 2047.0 + 1.0;
        let (flop, bytes) = (
            2.0 * outputs * 2047.0,
            4.0 * (1_500_000.0 + 2047.0 + outputs),
        );
        let peaks = h100();
        assert!((floor_us(flop, bytes, &peaks, None) - 93.1).abs() < 0.1);
        let tensor = peaks.tensor_tflops();
        let floor = floor_us(flop, bytes, &peaks, tensor);
        assert!((floor - 12.85).abs() < 0.05, "{floor}");
        let report = Report {
            puzzle: "puzzle-12".into(),
            device: h100_device(),
            peaks,
            case: "full".into(),
            flop,
            bytes,
            floor_us: floor,
            fp32_us: fp32_us(flop, &peaks),
            entries: vec![Entry::of(
                "reference hopper".into(),
                "solutions/puzzle-12-hopper.cu".into(),
                &[0.053, 0.054, 0.055],
                (flop, bytes),
                &peaks,
                tensor,
            )],
        };
        colored::control::set_override(false);
        let table = table(&report);
        assert!(
            table.contains(
                "floor 12.8 us (tensor cores or memory; the FP32 units alone would need 93.1 us)"
            ),
            "{table}"
        );
        assert!(
            table.contains("% tf32") && !table.contains("% FMA"),
            "{table}"
        );
        assert!(table.contains("    23.8 "), "{table}");
    }
}
