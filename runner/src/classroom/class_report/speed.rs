//! The times the report's speed chart draws, with the reference solution's and the hardware's
//! floor beside them.
//!
//! On a GPU, `grade` has measured the passing submissions as `runner bench` does (`Row::
//! bench_seconds`): the reference solution is measured the same way, and the floor is `bench`'s,
//! from the device's peaks where `runner bench` has measured and cached them. Without a GPU,
//! the passing submissions' times are `runner profile`'s prediction for an H100
//! (`cmd::profile::profiled`, a sample of 2 blocks of the full case each; a failing submission
//! is not predicted), the reference solution's likewise, and the floor is the model's: the bytes
//! at its DRAM bandwidth, or the multiply-adds at its FP32 lanes' rate (its tensor cores' on
//! puzzles 11 and 12), whichever is longer. The predictions run one per core.

use super::Submitted;
use super::aggregate::{Floor, SpeedFrame};
use crate::bench::timing;
use crate::model::H100;
use crate::{check, workbook};
use spec::{Case, Puzzle};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Blocks of the full case a prediction simulates (`runner profile` takes 6 by default): the
/// grade of a class predicts every passing submission.
const SAMPLE: u64 = 2;

/// Fills in the passing submissions' predicted times where nothing was measured, and says how
/// the times were had; `None` when no submission passed.
pub fn times(puzzle: &Puzzle, subs: &mut [Submitted]) -> Option<SpeedFrame> {
    if !subs.iter().any(|s| s.passed) {
        return None;
    }
    let building = gpu::trace::phase("grade: build the full case to predict");
    let case = timing::full_case(puzzle).ok()?;
    drop(building);
    let solution = workbook::has_solutions().then(|| workbook::root().join(puzzle.solution_path()));
    if subs.iter().any(|s| s.seconds.is_some()) {
        return Some(measured(puzzle, &case, solution.as_deref()));
    }
    let predicted = in_parallel(subs.len(), |i| {
        let s = &subs[i];
        (s.passed)
            .then(|| predict(puzzle, s.text.as_deref()?, &s.shown_as, &case))
            .flatten()
    });
    for (s, seconds) in subs.iter_mut().zip(predicted) {
        s.seconds = seconds;
    }
    let reference = solution.and_then(|path| {
        let text = std::fs::read_to_string(&path).ok()?;
        predict(puzzle, &text, &workbook::display(&path), &case)
    });
    Some(SpeedFrame {
        measured: false,
        on: format!("{} (predicted by runner profile's model)", H100.name),
        reference_seconds: reference,
        floor: Some(model_floor(puzzle, &case)),
    })
}

/// `profile`'s predicted seconds for `code` on `case`.
fn predict(puzzle: &Puzzle, code: &str, file: &str, case: &Case) -> Option<f64> {
    let _phase = gpu::trace::phase_of(|| format!("grade: predict the time of {file}"));
    let profiled = crate::cmd::profile::profiled(puzzle, code, file, case, SAMPLE).ok()?;
    profiled
        .diagnostics
        .is_empty()
        .then(|| profiled.prediction.seconds())
}

/// The floor of the model's H100 for `case`: its bytes at the DRAM bandwidth, or its
/// multiply-adds at one a lane a clock on every scheduler (at `wgmma`'s tf32 rate on the
/// tensor-core puzzles), the longer.
fn model_floor(puzzle: &Puzzle, case: &Case) -> Floor {
    let bytes = case.job.args.iter().map(timing::arg_bytes).sum::<usize>() as f64;
    let memory = bytes / H100.dram_bytes_per_s;
    let work = case.job.work as f64;
    let sms = f64::from(H100.sms);
    let (compute, units) = if timing::on_tensor_cores(puzzle) {
        let rate = sms * H100.wgmma_flop_per_sm * H100.tensor_clock_ghz * 1e9;
        (2.0 * work / rate, "tensor cores")
    } else {
        let rate = sms * H100.issue_per_sm * 32.0 * H100.clock_ghz * 1e9;
        (work / rate, "FP32 units")
    };
    let what = if memory >= compute {
        "the model's DRAM bandwidth: each input read once, each output written once".to_string()
    } else {
        format!("the model's {units}: every multiply-add at their peak")
    };
    Floor {
        seconds: memory.max(compute),
        what,
    }
}

/// The reference solution measured on the GPU as `grade` measures a submission, and `bench`'s
/// floor where the device's peaks are cached.
fn measured(puzzle: &Puzzle, case: &Case, solution: Option<&Path>) -> SpeedFrame {
    let mut gpu = check::gpu_worker();
    let device = gpu.device().ok().flatten();
    let reference = solution.and_then(|path| {
        crate::bench::median_seconds(
            &mut gpu,
            puzzle,
            case,
            path,
            crate::classroom::grade::GRADE_PLAN,
        )
    });
    let floor = device
        .as_ref()
        .and_then(gpu::bench::cached_peaks)
        .map(|peaks| {
            let flop = 2.0 * case.job.work as f64;
            let bytes = case.job.args.iter().map(timing::arg_bytes).sum::<usize>() as f64;
            let tensor = peaks
                .tensor_tflops()
                .filter(|_| timing::on_tensor_cores(puzzle));
            Floor {
                seconds: crate::bench::floor_us(flop, bytes, &peaks, tensor) * 1e-6,
                what: "the device's measured peaks (runner bench)".into(),
            }
        });
    SpeedFrame {
        measured: true,
        on: device.map_or_else(|| "the GPU".into(), |d| d.name),
        reference_seconds: reference,
        floor,
    }
}

/// `work(i)` for every `i < n`, one thread per core, the answers in order (`None` where a
/// thread panicked).
fn in_parallel(n: usize, work: impl Fn(usize) -> Option<f64> + Sync) -> Vec<Option<f64>> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(vec![None; n]);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads.min(n) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    let answer = work(i);
                    if let Ok(mut done) = done.lock() {
                        done[i] = answer;
                    }
                }
            });
        }
    });
    done.into_inner().unwrap_or_else(|e| e.into_inner())
}
