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
use crate::wire::{self, Frame};
use serde::{Deserialize, Serialize};
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job, RunOutput};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;
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
}

impl Request {
    fn job_mut(&mut self) -> Option<&mut Job> {
        match self {
            Request::Run(run) | Request::Bench(run, _) => Some(&mut run.job),
            Request::Peaks => None,
        }
    }

    /// The request as a frame: the input arrays travel as raw bits beside the JSON.
    fn to_frame(&self) -> Frame {
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
}

/// The reply on the wire: the outputs travel as arrays beside it. `fatal`: the worker's CUDA
/// context is unusable after this request, and the worker exits after answering.
#[derive(Serialize, Deserialize)]
struct Answer {
    rest: RunOutput,
    timing: Option<Timing>,
    peaks: Option<Peaks>,
    fatal: bool,
}

/// The worker's first message.
#[derive(Serialize, Deserialize)]
struct Hello {
    device: Option<Device>,
    /// Why there is no device to use (NVRTC missing, no GPU).
    problem: Option<Diagnostic>,
}

/// What the kernel printed is read back up to this many bytes per request (`RunOutput::print`
/// keeps fewer).
const PRINTED_BYTES: u64 = 1 << 20;

/// Child side: says hello, then answers requests from stdin on stdout until stdin closes, or
/// until a request leaves the CUDA context unusable. What the kernel's `printf` printed comes back
/// in the output, one entry per line, instead of mixing with the answers on stdout.
pub fn serve() -> std::io::Result<()> {
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
    loop {
        let frame = match wire::read(&mut input) {
            Ok(frame) => frame,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        // The health check is inside: the driver may print a failed assert at that sync.
        let ((mut reply, fatal), errors) = crate::capture::stderr_during(PRINTED_BYTES, || {
            let reply = match Request::from_frame(frame) {
                Ok(req) => run_here(&req),
                Err(e) => failed(Kind::LaunchError, format!("bad worker request: {e}")),
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
        if let Some(c) = &mut capture {
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
        let mut rest = reply.output;
        let arrays = std::mem::take(&mut rest.outputs);
        let answer = Answer {
            rest,
            timing: reply.timing,
            peaks: reply.peaks,
            fatal,
        };
        wire::write(&mut out, &Frame::new(&answer, arrays))?;
        if fatal {
            return Ok(());
        }
    }
}

fn hello() -> Hello {
    let loaded = nvrtc::locate()
        .ok_or_else(|| nvrtc::Error::Missing("not found in the worker".into()))
        .and_then(|loc| nvrtc::load(&loc));
    if let Err(e) = loaded {
        return Hello {
            device: None,
            problem: Some(e.diagnostic()),
        };
    }
    match crate::probe() {
        Some(device) => Hello {
            device: Some(device),
            problem: None,
        },
        None => Hello {
            device: None,
            problem: Some(Diagnostic::new(
                Kind::LaunchError,
                "libcuda loaded but reports no usable GPU",
            )),
        },
    }
}

fn failed(kind: Kind, message: String) -> Reply {
    diagnosed(Diagnostic::new(kind, message))
}

fn diagnosed(d: Diagnostic) -> Reply {
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

/// How long a new worker may take to say hello (NVRTC loaded, CUDA context created).
const STARTUP: Duration = Duration::from_secs(60);

/// Parent side: a handle on a warm worker process, started on first use and again after a
/// fault. Dropping it stops the worker.
pub struct Worker {
    exe: PathBuf,
    args: Vec<String>,
    live: Option<Live>,
    /// What the last worker's hello said: `Ok(None)` before any hello.
    device: Result<Option<Device>, Diagnostic>,
}

/// A running worker: its stdin, the frames its stdout has sent, and its stderr's text.
struct Live {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<std::io::Result<Frame>>,
    stderr: JoinHandle<String>,
    said_hello: bool,
}

impl Worker {
    /// A worker that runs `exe args..`; nothing starts until [`Worker::start`] or a call.
    pub fn new(exe: PathBuf, args: &[&str]) -> Worker {
        Worker {
            exe,
            args: args.iter().map(|a| a.to_string()).collect(),
            live: None,
            device: Ok(None),
        }
    }

    /// Starts the process if none is running, without waiting for it to be ready: it creates its
    /// CUDA context while the caller does other work.
    pub fn start(&mut self) {
        if self.live.is_some() {
            return;
        }
        let spawned = Command::new(&self.exe)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                self.device = Err(Diagnostic::new(
                    Kind::LaunchError,
                    format!("could not start the GPU worker: {e}"),
                ));
                return;
            }
        };
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let (tx, frames) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            loop {
                let frame = wire::read(&mut stdout);
                let end = frame.is_err();
                if tx.send(frame).is_err() || end {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        self.live = Some(Live {
            child,
            stdin,
            frames,
            stderr,
            said_hello: false,
        });
    }

    /// The device the worker found, once it has said hello (starting it if needed); `Ok(None)`
    /// when it found none, `Err` when it could not start or answer.
    pub fn device(&mut self) -> Result<Option<Device>, Diagnostic> {
        self.ready();
        self.device.clone()
    }

    /// Starts the worker and waits for its hello; afterwards `live` is a worker with a device,
    /// or `None` with `device` saying why not.
    fn ready(&mut self) {
        self.start();
        let Some(live) = self.live.as_mut() else {
            return;
        };
        if live.said_hello {
            return;
        }
        let hello = match live.frames.recv_timeout(STARTUP) {
            Ok(Ok(frame)) => serde_json::from_slice::<Hello>(&frame.header).map_err(|e| {
                Diagnostic::new(
                    Kind::LaunchError,
                    format!("bad hello from the GPU worker: {e}"),
                )
            }),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                Err(self.died("before saying hello"))
            }
            Err(RecvTimeoutError::Timeout) => Err(Diagnostic::new(
                Kind::LaunchError,
                format!(
                    "the GPU worker did not start within {} s",
                    STARTUP.as_secs()
                ),
            )),
        };
        match hello {
            Ok(Hello {
                device: Some(device),
                ..
            }) => {
                self.device = Ok(Some(device));
                if let Some(live) = self.live.as_mut() {
                    live.said_hello = true;
                }
            }
            Ok(Hello { problem, .. }) => {
                self.stop();
                self.device = match problem {
                    Some(d) if d.kind == Kind::NvrtcMissing => Err(d),
                    _ => Ok(None),
                };
            }
            Err(d) => {
                self.stop();
                self.device = Err(d);
            }
        }
    }

    /// Runs `request` in the worker, waiting at most `limit` for the answer. A worker that does
    /// not answer in time is stopped; the next call starts a fresh one.
    pub fn call(&mut self, request: &Request, limit: Duration) -> Reply {
        self.ready();
        if let Err(d) = &self.device {
            return diagnosed(d.clone());
        }
        let Some(live) = self.live.as_mut() else {
            return failed(Kind::LaunchError, "there is no GPU to run on".into());
        };
        if wire::write(&mut live.stdin, &request.to_frame()).is_err() {
            return diagnosed(self.died("while taking a request"));
        }
        let frame = match live.frames.recv_timeout(limit) {
            Ok(Ok(frame)) => frame,
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                return diagnosed(self.died("before answering"));
            }
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                return failed(
                    Kind::Timeout,
                    format!(
                        "the kernel did not finish within {:.1} s on the GPU and was stopped: look for a loop whose \
                         condition never changes, or a __syncthreads() that some threads never reach",
                        limit.as_secs_f64()
                    ),
                );
            }
        };
        let arrays = frame.arrays;
        match serde_json::from_slice::<Answer>(&frame.header) {
            Ok(answer) => {
                if answer.fatal {
                    // Its successor creates its context while the caller reads this answer.
                    self.stop();
                    self.start();
                }
                let mut output = answer.rest;
                output.outputs = arrays;
                Reply {
                    output,
                    timing: answer.timing,
                    peaks: answer.peaks,
                }
            }
            Err(e) => failed(
                Kind::LaunchError,
                format!("bad answer from the GPU worker: {e}"),
            ),
        }
    }

    /// A diagnostic for a worker that died `when`, with the last line it wrote to stderr; the
    /// worker is reaped.
    fn died(&mut self, when: &str) -> Diagnostic {
        let Some(mut live) = self.live.take() else {
            return Diagnostic::new(Kind::LaunchError, "the GPU worker is not running");
        };
        let _ = live.child.kill();
        let status = live.child.wait();
        let stderr = live.stderr.join().unwrap_or_default();
        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
        Diagnostic::new(
            Kind::LaunchError,
            format!(
                "the GPU worker died ({status}) {when}: {}",
                stderr.trim().lines().last().unwrap_or("no message")
            ),
        )
    }

    /// Stops the worker process, if one runs. It is reaped on a thread of its own: a process
    /// whose CUDA context faulted can take a while to be torn down by the driver, and nothing
    /// here needs to wait for that.
    pub fn stop(&mut self) {
        if let Some(mut live) = self.live.take() {
            let _ = live.child.kill();
            std::thread::spawn(move || live.child.wait());
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::job::Launch;

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
