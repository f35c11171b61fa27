//! The messages between a check and its GPU worker: what to run ([`Request`], [`KernelRun`]),
//! what comes back ([`Reply`], and [`Answer`] as it travels, its float arrays beside the JSON
//! header), and the worker's hello. `worker` serves them; `pool` sends them.

use crate::Device;
use crate::bench::{Peaks, Plan, Timing};
use crate::resident::{FullRun, Stub};
use crate::wire::Frame;
use serde::{Deserialize, Serialize};
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job, RunOutput};
use toolchain::nvrtc::Source;

/// A kernel for the worker: the learner's source, the macros to compile it with, and the launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelRun {
    pub code: String,
    pub file: String,
    pub macros: Vec<(String, String)>,
    pub job: Job,
}

impl KernelRun {
    pub(crate) fn source(&self) -> Source<'_> {
        Source {
            code: &self.code,
            file: &self.file,
            macros: &self.macros,
        }
    }
}

/// What the worker is asked to do: run a kernel once (a check), time many launches of it (a
/// benchmark), or measure the device's limits.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Request {
    Run(KernelRun),
    Bench(KernelRun, Plan),
    /// Measure the FMA rate and copy bandwidth.
    Peaks,
    /// The full-scale cases of a puzzle, as the worker keeps them (see [`crate::resident`]).
    Describe(String),
    /// Run and judge one of the worker's full-scale cases.
    Full(FullRun),
}

impl Request {
    fn job_mut(&mut self) -> Option<&mut Job> {
        match self {
            Request::Run(run) | Request::Bench(run, _) => Some(&mut run.job),
            Request::Peaks | Request::Describe(_) | Request::Full(_) => None,
        }
    }

    /// The kernel the request runs, as the worker compiles it, if it runs one.
    pub(crate) fn source(&self) -> Option<Source<'_>> {
        match self {
            Request::Run(run) | Request::Bench(run, _) => Some(run.source()),
            Request::Full(run) => Some(Source {
                code: &run.code,
                file: &run.file,
                macros: &run.macros,
            }),
            Request::Peaks | Request::Describe(_) => None,
        }
    }

    /// The request as a trace names it.
    pub fn label(&self) -> String {
        match self {
            Request::Run(run) => format!("run {} on a small case", run.job.kernel),
            Request::Bench(run, _) => format!("bench {}", run.job.kernel),
            Request::Peaks => "measure the peaks".into(),
            Request::Describe(id) => format!("describe {id}'s full cases"),
            Request::Full(run) => format!("full case {} of {}", run.case, run.puzzle),
        }
    }

    /// The request as a frame: the input arrays travel as raw bits beside the JSON, with whether
    /// the worker is to time its phases ([`crate::trace`]).
    pub(crate) fn to_frame(&self) -> Frame {
        let mut bare = self.clone();
        let arrays = bare.job_mut().map(take_inputs).unwrap_or_default();
        let trace = crate::trace::on();
        Frame::new(
            &Sent {
                request: bare,
                trace,
            },
            arrays,
        )
    }

    /// The request in `frame`, and whether it asks the worker to time its phases.
    pub(crate) fn from_frame(frame: Frame) -> serde_json::Result<(Request, bool)> {
        let Sent { mut request, trace } = serde_json::from_slice(&frame.header)?;
        if let Some(job) = request.job_mut() {
            put_inputs(job, frame.arrays);
        }
        Ok((request, trace))
    }
}

/// A request as it travels.
#[derive(Serialize, Deserialize)]
struct Sent {
    request: Request,
    #[serde(default)]
    trace: bool,
}

/// Moves every input's data out of `job`, in argument order.
fn take_inputs(job: &mut Job) -> Vec<Vec<f32>> {
    let inputs = job.args.iter_mut().filter_map(|a| match a {
        Arg::Input { data, .. } => Some(std::mem::take(data)),
        _ => None,
    });
    inputs.collect()
}

/// Puts back what [`take_inputs`] moved out.
fn put_inputs(job: &mut Job, arrays: Vec<Vec<f32>>) {
    let inputs = job.args.iter_mut().filter_map(|a| match a {
        Arg::Input { data, .. } => Some(data),
        _ => None,
    });
    for (data, array) in inputs.zip(arrays) {
        *data = array;
    }
}

/// The worker's answer. `output` carries diagnostics for every task.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub output: RunOutput,
    pub timing: Option<Timing>,
    pub peaks: Option<Peaks>,
    /// A [`Request::Full`]'s summary, as the runner's judge wrote it in the worker.
    pub judged: Option<serde_json::Value>,
    /// A [`Request::Describe`]'s cases.
    pub stubs: Vec<Stub>,
}

/// The reply on the wire: the outputs travel as arrays beside it. `fatal`: the worker's CUDA
/// context is unusable after this request, and the worker exits after answering.
#[derive(Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) rest: RunOutput,
    pub(crate) timing: Option<Timing>,
    pub(crate) peaks: Option<Peaks>,
    pub(crate) judged: Option<serde_json::Value>,
    pub(crate) stubs: Vec<Stub>,
    pub(crate) fatal: bool,
    /// The worker's phases, when the request asked for them ([`crate::trace`]).
    #[serde(default)]
    pub(crate) trace: Vec<String>,
}

impl Answer {
    /// The reply this answer and its arrays make.
    pub(crate) fn reply(self, arrays: Vec<Vec<f32>>) -> Reply {
        let mut output = self.rest;
        output.outputs = arrays;
        Reply {
            output,
            timing: self.timing,
            peaks: self.peaks,
            judged: self.judged,
            stubs: self.stubs,
        }
    }
}

/// The worker's first message.
#[derive(Serialize, Deserialize)]
pub(crate) struct Hello {
    pub(crate) device: Option<Device>,
    /// Why there is no device to use (NVRTC missing, no GPU).
    pub(crate) problem: Option<Diagnostic>,
    /// The worker's process id (a worker that outlives its check is stopped by it).
    #[serde(default)]
    pub(crate) pid: u32,
}

pub(crate) fn failed(kind: Kind, message: String) -> Reply {
    diagnosed(Diagnostic::new(kind, message))
}

pub(crate) fn diagnosed(d: Diagnostic) -> Reply {
    Reply {
        output: RunOutput {
            diagnostics: vec![d],
            ..RunOutput::default()
        },
        ..Reply::default()
    }
}
