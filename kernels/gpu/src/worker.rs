//! Running GPU work in a warm child process with a time limit.
//!
//! The parent holds a [`Worker`]: one child process (the runner's hidden `gpu-worker` subcommand,
//! whose side is [`serve`]) that creates its CUDA context once, keeps each compiled module loaded
//! ([`crate`] memoizes them) and answers one [`Request`] after another, so a check, a `watch`
//! session or a `grade` of a whole folder pays for one process and one context, not one per case.
//!
//! Messages travel as frames (see [`crate::wire`]): a JSON header and, apart from it, the float
//! arrays as raw bits, so a full-scale input costs a copy instead of a JSON float parse, and NaN
//! (an unwritten output) survives. The child says hello first (the device it found, or why
//! none), then serves requests until its standard input closes.
//!
//! Faults: if a request leaves the CUDA context unusable (an illegal address, a trap: the driver
//! poisons the context for the process) the child answers and exits, and the parent starts a
//! fresh child for the next request. If the child does not answer within the limit it is killed
//! and the request gets a `timeout` diagnostic; if it dies, a `launch_error`.

use crate::Device;
use crate::bench::{Peaks, Plan, Timing};
use crate::resident::{FullRun, Hooks, Judged, Resident, Stub};
use crate::wire::{self, Frame};
use serde::{Deserialize, Serialize};
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job, RunOutput};
use std::io::Write;
use toolchain::nvrtc::{self, Source};

/// A kernel for the worker: the learner's source, the macros to compile it with, and the launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelRun {
    pub code: String,
    pub file: String,
    pub macros: Vec<(String, String)>,
    pub job: Job,
}

impl KernelRun {
    fn source(&self) -> Source<'_> {
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

    /// The request as a frame: the input arrays travel as raw bits beside the JSON.
    pub(crate) fn to_frame(&self) -> Frame {
        let mut bare = self.clone();
        let arrays = bare.job_mut().map(take_inputs).unwrap_or_default();
        Frame::new(&bare, arrays)
    }

    fn from_frame(frame: Frame) -> serde_json::Result<Request> {
        let mut req: Request = serde_json::from_slice(&frame.header)?;
        if let Some(job) = req.job_mut() {
            put_inputs(job, frame.arrays);
        }
        Ok(req)
    }
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
    rest: RunOutput,
    timing: Option<Timing>,
    peaks: Option<Peaks>,
    judged: Option<serde_json::Value>,
    stubs: Vec<Stub>,
    pub(crate) fatal: bool,
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

/// What the kernel printed is read back up to this many bytes per request (`RunOutput::print`
/// keeps fewer).
const PRINTED_BYTES: u64 = 1 << 20;

/// Child side: says hello, then answers requests from stdin on stdout until stdin closes, or
/// until a request leaves the CUDA context unusable. What the kernel's `printf` printed comes back
/// in the output, one entry per line, instead of mixing with the answers on stdout.
pub fn serve(hooks: Hooks) -> std::io::Result<()> {
    // Without a temporary file to print into, a kernel that prints would garble the answer; one
    // that does not is still answered.
    let mut capture = crate::capture::stdout().ok();
    let mut out: Box<dyn Write> = match capture.as_mut() {
        Some(c) => Box::new(c.answer.try_clone()?),
        None => Box::new(std::io::stdout()),
    };
    let hello = hello();
    wire::write(&mut out, &Frame::new(&hello, vec![]))?;
    if hello.device.is_none() {
        return Ok(());
    }
    let mut input = std::io::stdin().lock();
    let mut resident = Resident::default();
    loop {
        let frame = match wire::read(&mut input) {
            Ok(frame) => frame,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let (answer, fatal) = answer(frame, &mut capture, &hooks, &mut resident);
        wire::write(&mut out, &answer)?;
        if fatal {
            return Ok(());
        }
    }
}

/// The answer to one request frame, and whether the CUDA context is unusable after it.
pub(crate) fn answer(
    frame: Frame,
    capture: &mut Option<crate::capture::Capture>,
    hooks: &Hooks,
    resident: &mut Resident,
) -> (Frame, bool) {
    let request = Request::from_frame(frame);
    let puzzle = match &request {
        Ok(Request::Describe(id)) => (hooks.puzzle)(id),
        Ok(Request::Full(run)) => (hooks.puzzle)(&run.puzzle),
        _ => None,
    };
    let mut judge = None;
    let mut stubs = vec![];
    // The health check is inside: the driver may print a failed assert at that sync.
    let ((mut reply, fatal), errors) = crate::capture::stderr_during(PRINTED_BYTES, || {
        let reply = match (&request, &puzzle) {
            (Ok(Request::Describe(_)), Some(p)) => {
                stubs = resident.describe(p);
                Reply::default()
            }
            (Ok(Request::Full(run)), Some(p)) => match resident.run(hooks, p, run) {
                Judged::Early(output) => Reply {
                    output,
                    ..Reply::default()
                },
                Judged::Ran { out, judge: j } => {
                    judge = Some(j);
                    Reply {
                        output: out,
                        ..Reply::default()
                    }
                }
            },
            (Ok(Request::Describe(id)), None) => {
                failed(Kind::LaunchError, format!("no puzzle {id}"))
            }
            (Ok(Request::Full(run)), None) => {
                failed(Kind::LaunchError, format!("no puzzle {}", run.puzzle))
            }
            (Ok(req), _) => run_here(req),
            (Err(e), _) => failed(Kind::LaunchError, format!("bad worker request: {e}")),
        };
        let fatal = !reply.output.diagnostics.is_empty() && !crate::healthy();
        (reply, fatal)
    });
    // What went to standard error and is not a device assert goes on to the parent.
    let (asserts, rest): (Vec<&str>, Vec<&str>) =
        errors.lines().partition(|l| l.contains("Assertion `"));
    if !rest.is_empty() {
        eprintln!("{}", rest.join("\n"));
    }
    if let Some(c) = capture {
        let mut lines: Vec<String> = c.text(PRINTED_BYTES).lines().map(String::from).collect();
        lines.extend(asserts.iter().map(|l| l.to_string()));
        let diagnostics = &mut reply.output.diagnostics;
        if let Some(d) = diagnostics.iter_mut().find(|d| d.kind == Kind::Trap) {
            crate::gpu_faults::assert_from_printed(d, &mut lines);
        }
        for text in lines {
            reply.output.print(spec::job::Printed {
                block: None,
                thread: None,
                text,
            });
        }
    }
    // A full case's output goes to the judge here; its summary goes back instead.
    let judged = judge.map(|j| j(std::mem::take(&mut reply.output)));
    let mut rest = reply.output;
    let arrays = std::mem::take(&mut rest.outputs);
    let answer = Answer {
        rest,
        timing: reply.timing,
        peaks: reply.peaks,
        judged,
        stubs,
        fatal,
    };
    (Frame::new(&answer, arrays), fatal)
}

pub(crate) fn hello() -> Hello {
    let loaded = nvrtc::locate()
        .ok_or_else(|| nvrtc::Error::Missing("not found in the worker".into()))
        .and_then(|loc| nvrtc::load(&loc));
    if let Err(e) = loaded {
        return Hello {
            device: None,
            problem: Some(e.diagnostic()),
            pid: std::process::id(),
        };
    }
    match crate::probe() {
        Some(device) => Hello {
            device: Some(device),
            problem: None,
            pid: std::process::id(),
        },
        None => Hello {
            device: None,
            problem: Some(Diagnostic::new(
                Kind::LaunchError,
                "libcuda loaded but reports no usable GPU",
            )),
            pid: std::process::id(),
        },
    }
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

fn run_here(req: &Request) -> Reply {
    match req {
        Request::Run(run) => Reply {
            output: crate::execute(&run.source(), &run.job),
            ..Reply::default()
        },
        Request::Bench(run, plan) => match crate::bench::time_job(&run.source(), &run.job, *plan) {
            Ok(timing) => Reply {
                timing: Some(timing),
                ..Reply::default()
            },
            Err(d) => diagnosed(d),
        },
        Request::Describe(_) | Request::Full(_) => {
            unreachable!("answered with the worker's resident cases")
        }
        Request::Peaks => {
            let device = crate::probe();
            let sms = device.as_ref().map_or(1, |d| d.multiprocessors as u32);
            let tensor_cores = device.as_ref().is_some_and(|d| d.major >= 8);
            let hopper = device.as_ref().is_some_and(|d| d.major == 9);
            match crate::bench::measure_peaks(sms, tensor_cores, hopper) {
                Ok(peaks) => Reply {
                    peaks: Some(peaks),
                    ..Reply::default()
                },
                Err(d) => diagnosed(d),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Worker;
    use spec::job::Launch;
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn inputs_travel_beside_the_request_and_come_back_in_place() {
        let job = Job {
            kernel: "k".into(),
            launch: Launch::linear(1, 32),
            args: vec![
                Arg::Input {
                    name: "a".into(),
                    data: vec![1.5, f32::NAN, -0.0],
                },
                Arg::Output {
                    name: "out".into(),
                    len: 3,
                },
                Arg::Input {
                    name: "b".into(),
                    data: vec![2.0],
                },
            ],
            constants: vec![],
            budget: None,
            work: 3,
        };
        let run = KernelRun {
            code: "code".into(),
            file: "f.cu".into(),
            macros: vec![],
            job: job.clone(),
        };
        let frame = Request::Run(run).to_frame();
        assert!(
            !String::from_utf8_lossy(&frame.header).contains("1.5"),
            "the floats are not in the JSON"
        );
        let mut bytes = vec![];
        wire::write(&mut bytes, &frame).unwrap();
        let back = Request::from_frame(wire::read(&mut bytes.as_slice()).unwrap()).unwrap();
        let Request::Run(back) = back else {
            panic!("a run comes back as a run")
        };
        let bits = |j: &Job| -> Vec<Vec<u32>> {
            j.args
                .iter()
                .filter_map(|a| match a {
                    Arg::Input { data, .. } => Some(data.iter().map(|x| x.to_bits()).collect()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(bits(&back.job), bits(&job), "every input bit, NaN included");
    }

    #[test]
    fn a_worker_that_cannot_start_is_a_diagnostic_not_a_panic() {
        let mut w = Worker::new(PathBuf::from("/nonexistent/runner"), &["gpu-worker"]);
        let reply = w.call(&Request::Peaks, Duration::from_secs(1));
        let d = &reply.output.diagnostics[0];
        assert_eq!(d.kind, Kind::LaunchError);
        assert!(d.message.contains("could not start"), "{}", d.message);
    }
}
