//! The times the report's speed chart draws, with the reference solution's and the hardware's
//! floor beside them.
//!
//! On a GPU, `grade` has measured the passing submissions as `runner bench` does (`Row::
//! bench_seconds`): the reference solution is measured the same way, and the floor is `bench`'s,
//! from the device's peaks where `runner bench` has measured and cached them. Without a GPU,
//! the passing submissions' times are `runner profile`'s prediction for an H100
//! (`profile::profiled`, a sample of 2 blocks of the full case each; a failing submission
//! is not predicted), the reference solution's likewise, and the floor is the model's: the bytes
//! at its DRAM bandwidth, or the multiply-adds at its FP32 lanes' rate (its tensor cores' on
//! puzzles 11 and 12), whichever is longer.
//!
//! The predictions are part of grading, not of the report: `grade` asks a [`Predictor`] for each
//! submission as soon as its check has passed, on the thread that checked it, where its PTX is
//! already compiled (the prediction compiles the same private copy, so NVRTC's memo answers).
//! The predictor builds the full case once for the whole class, simulates each distinct text
//! once (identical submissions share one prediction) and predicts the reference solution once,
//! beside the first submission; the report then only reads what it holds.

use super::Submitted;
use super::aggregate::{Floor, SpeedFrame};
use crate::bench::timing;
use crate::check::{Backend, Outcome};
use crate::{check, workbook};
use ::profile::H100;
use spec::{Case, Puzzle};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// Blocks of the full case a prediction simulates (`runner profile` takes 6 by default): the
/// grade of a class predicts every passing submission.
const SAMPLE: u64 = 2;

/// `profile`'s predictions for one grade of a class, made while it grades; shared by the
/// threads that check the submissions.
pub struct Predictor {
    puzzle: Puzzle,
    /// The full case, built once, when first needed (`None` where the puzzle has none).
    case: OnceLock<Option<Case>>,
    /// Each distinct kernel text's prediction, made once: a second thread with the same text
    /// waits for the first's.
    by_text: Mutex<HashMap<String, Arc<OnceLock<Option<f64>>>>>,
    reference: OnceLock<Option<f64>>,
}

impl Predictor {
    pub fn new(puzzle: Puzzle) -> Self {
        Predictor {
            puzzle,
            case: OnceLock::new(),
            by_text: Mutex::new(HashMap::new()),
            reference: OnceLock::new(),
        }
    }

    /// The full case the predictions run (the last full-scale one, as `bench` times).
    pub fn case(&self) -> Option<&Case> {
        self.case
            .get_or_init(|| {
                let _building = gpu::trace::phase("grade: build the full case to predict");
                timing::full_case(&self.puzzle).ok()
            })
            .as_ref()
    }

    /// The predicted seconds of a submission whose check came out as `outcome`, checked from
    /// `file` (its private copy) and submitted as `shown`: only one that passed without a GPU
    /// (one that passed on a GPU is measured instead). The reference solution is predicted
    /// beside the first.
    pub fn submission(&self, outcome: &Outcome, file: &Path, shown: &str) -> Option<f64> {
        if !outcome.passed || outcome.backends.contains(&Backend::Gpu) {
            return None;
        }
        let compiled_as = workbook::display(file);
        let (text, _) = crate::workbook::source_text::read(file, &compiled_as).ok()?;
        let slot = {
            let mut by_text = self.by_text.lock().ok()?;
            Arc::clone(by_text.entry(text.clone()).or_default())
        };
        let seconds = *slot.get_or_init(|| {
            let case = self.case()?;
            predict(&self.puzzle, &text, &compiled_as, shown, case)
        });
        self.reference();
        seconds
    }

    /// The reference solution's predicted seconds, where the workbook has its solutions.
    pub fn reference(&self) -> Option<f64> {
        *self.reference.get_or_init(|| {
            let path = solution(&self.puzzle)?;
            let text = std::fs::read_to_string(&path).ok()?;
            let file = workbook::display(&path);
            predict(&self.puzzle, &text, &file, &file, self.case()?)
        })
    }
}

/// The reference solution's path, where the workbook has its solutions.
fn solution(puzzle: &Puzzle) -> Option<std::path::PathBuf> {
    workbook::has_solutions().then(|| workbook::root().join(puzzle.solution_path()))
}

/// The passing submissions' times where nothing was measured (their predictions, made while
/// grading), and how the times were had; `None` when no submission passed.
pub fn times(puzzle: &Puzzle, subs: &mut [Submitted], predictor: &Predictor) -> Option<SpeedFrame> {
    if !subs.iter().any(|s| s.passed) {
        return None;
    }
    let case = predictor.case()?;
    if subs.iter().any(|s| s.seconds.is_some()) {
        return Some(measured(puzzle, case, solution(puzzle).as_deref()));
    }
    for s in subs.iter_mut() {
        s.seconds = s.predicted.filter(|_| s.passed);
    }
    Some(SpeedFrame {
        measured: false,
        on: format!("{} (predicted by runner profile's model)", H100.name),
        reference_seconds: predictor.reference(),
        floor: Some(model_floor(puzzle, case)),
    })
}

/// `profile`'s predicted seconds for `code` (compiled as `file`, named `shown` in the trace)
/// on `case`.
fn predict(puzzle: &Puzzle, code: &str, file: &str, shown: &str, case: &Case) -> Option<f64> {
    let _phase = gpu::trace::phase_of(|| format!("grade: predict the time of {shown}"));
    let profiled = crate::profile::profiled(puzzle, code, file, case, SAMPLE).ok()?;
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
            crate::bench::timing::GRADE_PLAN,
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
