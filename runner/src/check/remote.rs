//! The full-scale cases the GPU worker keeps (`gpu::resident`), from the checking side: the
//! request that runs and judges one case there, and the summary that comes back (the case's
//! result without its arrays, hundreds of megabytes; the diagnostics; the diff's text; the
//! shrunk case whole, it is small). The report and `--json` read it as they read a case judged
//! here. The worker's side, the judge it is lent, is `resident`.
use crate::judge::outcome::{Backend, CaseResult, Judged, NotRun, Verdict};
use gpu::pool::Worker;
use gpu::resident::FullRun;
use gpu::worker;
use serde::{Deserialize, Serialize};
use spec::{Case, Diagnostic, Puzzle, RunOutput};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// A judged case on the wire: every field of its [`CaseResult`] the report reads, and its
/// diagnostics. The caller sets the two it leaves out: `context_lost` from the worker's reply,
/// `findings` from the diagnostics (`sequence`). [`Wire::back`] names every field of the result,
/// so a field added to `CaseResult` is placed there or left out on purpose.
#[derive(Serialize, Deserialize)]
struct Wire {
    name: String,
    backend: Backend,
    passed: bool,
    max_abs_err: Option<f64>,
    params: HashMap<String, i32>,
    seconds: f64,
    instructions: Option<u64>,
    stats: Option<spec::job::AccessStats>,
    output: Vec<f32>,
    expected: Vec<f64>,
    first_mismatch: Option<usize>,
    pitch: Option<spec::job::Pitch>,
    nhwc: Option<[usize; 3]>,
    shrunk_from: Option<String>,
    printed: Vec<spec::job::Printed>,
    printed_more: u64,
    not_run: Option<NotRun>,
    diff: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

impl Wire {
    fn new(verdict: Verdict) -> Wire {
        let r = verdict.result;
        Wire {
            name: r.name,
            backend: r.backend,
            passed: r.passed,
            max_abs_err: r.max_abs_err,
            params: r.params,
            seconds: r.seconds,
            instructions: r.instructions,
            stats: r.stats,
            output: r.output,
            expected: r.expected,
            first_mismatch: r.first_mismatch,
            pitch: r.pitch,
            nhwc: r.nhwc,
            shrunk_from: r.shrunk_from,
            printed: r.printed,
            printed_more: r.printed_more,
            not_run: r.not_run,
            diff: r.diff,
            diagnostics: verdict.diagnostics,
        }
    }

    fn back(self) -> Verdict {
        let result = CaseResult {
            name: self.name,
            backend: self.backend,
            passed: self.passed,
            max_abs_err: self.max_abs_err,
            params: self.params,
            seconds: self.seconds,
            instructions: self.instructions,
            stats: self.stats,
            output: self.output,
            expected: self.expected,
            first_mismatch: self.first_mismatch,
            pitch: self.pitch,
            nhwc: self.nhwc,
            shrunk_from: self.shrunk_from,
            printed: self.printed,
            printed_more: self.printed_more,
            findings: vec![],
            not_run: self.not_run,
            diff: self.diff,
            context_lost: false,
        };
        Verdict {
            result,
            diagnostics: self.diagnostics,
        }
    }
}

/// The summary of a full case: its result and, if it was cut smaller, the smallest that failed.
#[derive(Serialize, Deserialize)]
struct Summary {
    case: Wire,
    shrunk: Option<Wire>,
}

/// The worker's summary of a judged full case (the result's arrays left out by the caller).
pub fn summary(judged: Judged) -> serde_json::Value {
    let summary = Summary {
        case: Wire::new(judged.case),
        shrunk: judged.shrunk.map(Wire::new),
    };
    serde_json::to_value(summary).expect("a summary serializes")
}

/// Reads the worker's summary.
pub fn read(value: serde_json::Value) -> Result<Judged, serde_json::Error> {
    let s: Summary = serde_json::from_value(value)?;
    Ok(Judged {
        case: s.case.back(),
        shrunk: s.shrunk.map(Wire::back),
    })
}

/// Runs and judges full case `case` of `puzzle` in the GPU worker (`shrink`: cut it smaller
/// there if it is the first wrong one); only the judge's summary comes back.
pub fn call(
    gpu: &RefCell<&mut Worker>,
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    case: &Case,
    shrink: bool,
    limit: Duration,
) -> Judged {
    let request = worker::Request::Full(FullRun {
        code: code.to_string(),
        file: file.to_string(),
        puzzle: puzzle.wire_id(),
        case: case.name.clone(),
        shrink,
        color: colored::control::SHOULD_COLORIZE.should_colorize(),
        macros: case.macros.clone(),
    });
    let reply = gpu.borrow_mut().call(&request, limit);
    let lost = reply.output.context_lost;
    match reply.judged.map(read) {
        Some(Ok(mut judged)) => {
            // The summary's result leaves the flag behind (it is not part of the report).
            judged.case.result.context_lost = lost;
            judged
        }
        Some(Err(e)) => {
            let d = Diagnostic::new(
                spec::Kind::LaunchError,
                format!("bad summary from the GPU worker: {e}"),
            );
            let (result, diagnostics) =
                crate::judge::judge(puzzle, case, Backend::Gpu, RunOutput::failed(d));
            Judged::alone(result, diagnostics)
        }
        None => {
            let (result, diagnostics) =
                crate::judge::judge(puzzle, case, Backend::Gpu, reply.output);
            Judged::alone(result, diagnostics)
        }
    }
}

/// The full-scale cases of `puzzle` as the GPU worker keeps them (none where it has none).
pub fn full_cases(puzzle: &Puzzle, gpu: &mut Worker) -> Vec<Case> {
    // The first check builds them (and, on a new machine, their references): minutes at most.
    let reply = gpu.call(
        &worker::Request::Describe(puzzle.wire_id()),
        Duration::from_secs(900),
    );
    reply
        .stubs
        .into_iter()
        .map(gpu::resident::case_of)
        .collect()
}
