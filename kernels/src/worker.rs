//! Running GPU work in a child process with a time limit.
//!
//! The parent ([`run_isolated`]) starts a worker (the runner's hidden `gpu-worker` subcommand),
//! writes one [`Request`] to its stdin as JSON and reads one [`Reply`] from its stdout. If the
//! worker does not answer within the limit it is killed and the case gets a `timeout` diagnostic;
//! if it dies (a crash in the driver, say) the case gets a `launch_error`. Either way the parent
//! goes on to the next case. The child side is [`serve`].

use crate::bench::{Peaks, Plan, Timing};
use crate::diag::{Diagnostic, Kind};
use crate::job::{Job, RunOutput};
use crate::nvrtc::{self, Source};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// The worker's answer. `output` carries diagnostics for every task.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub output: RunOutput,
    pub timing: Option<Timing>,
    pub peaks: Option<Peaks>,
}

/// The answer on the wire: JSON has no NaN (an unwritten output is NaN), so outputs travel as
/// their bit patterns.
#[derive(Serialize, Deserialize)]
struct Answer {
    output_bits: Vec<Vec<u32>>,
    rest: RunOutput,
    timing: Option<Timing>,
    peaks: Option<Peaks>,
}

impl Answer {
    fn from_reply(reply: Reply) -> Answer {
        let mut rest = reply.output;
        let bits = |o: Vec<f32>| o.iter().map(|x| x.to_bits()).collect();
        let output_bits = rest.outputs.drain(..).map(bits).collect();
        Answer {
            output_bits,
            rest,
            timing: reply.timing,
            peaks: reply.peaks,
        }
    }

    fn into_reply(self) -> Reply {
        let mut output = self.rest;
        let floats = |o: Vec<u32>| o.into_iter().map(f32::from_bits).collect();
        output.outputs = self.output_bits.into_iter().map(floats).collect();
        Reply {
            output,
            timing: self.timing,
            peaks: self.peaks,
        }
    }
}

/// What the kernel printed is read back up to this many bytes (`RunOutput::print` keeps fewer).
const PRINTED_BYTES: u64 = 1 << 20;

/// Child side: reads a request from stdin, runs it on the GPU, writes the output to stdout.
/// What the kernel's `printf` printed comes back in the output, one entry per line, instead of
/// mixing with the answer on stdout.
pub fn serve() -> std::io::Result<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    // Without a temporary file to print into, a kernel that prints would garble the answer; one
    // that does not is still answered.
    let mut capture = crate::capture::stdout().ok();
    let mut reply = match serde_json::from_str::<Request>(&input) {
        Ok(req) => run_here(&req),
        Err(e) => failed(Kind::LaunchError, format!("bad worker request: {e}")),
    };
    if let Some(c) = &mut capture {
        for line in c.text(PRINTED_BYTES).lines() {
            reply.output.print(crate::job::Printed {
                block: None,
                thread: None,
                text: line.to_string(),
            });
        }
    }
    let mut out: Box<dyn Write> = match capture {
        Some(c) => Box::new(c.answer),
        None => Box::new(std::io::stdout().lock()),
    };
    serde_json::to_writer(&mut out, &Answer::from_reply(reply))?;
    out.flush()
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
    let loaded = nvrtc::locate()
        .ok_or_else(|| nvrtc::Error::Missing("not found in the worker".into()))
        .and_then(|loc| nvrtc::load(&loc));
    if let Err(e) = loaded {
        return diagnosed(e.diagnostic());
    }
    match req {
        Request::Run(run) => Reply {
            output: crate::gpu::execute(&run.source(), &run.job),
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
            let sms = crate::gpu::probe().map_or(1, |d| d.multiprocessors as u32);
            match crate::bench::measure_peaks(sms) {
                Ok(peaks) => Reply {
                    peaks: Some(peaks),
                    ..Reply::default()
                },
                Err(d) => diagnosed(d),
            }
        }
    }
}

/// Parent side: runs `request` in `exe args..` (a worker), killing it after `limit`.
pub fn run_isolated(exe: &Path, args: &[&str], request: &Request, limit: Duration) -> Reply {
    let started = Instant::now();
    let mut child = match Command::new(exe)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return failed(
                Kind::LaunchError,
                format!("could not start the GPU worker: {e}"),
            );
        }
    };
    let payload = serde_json::to_vec(request).expect("a request serializes");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&payload));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err_reader = std::thread::spawn(move || {
        let mut buf = String::new();
        let _ = stderr.read_to_string(&mut buf);
        buf
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let _ = writer.join();
    let stdout = reader.join().ok().and_then(Result::ok).unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let Some(status) = status else {
        return failed(
            Kind::Timeout,
            format!(
                "the kernel did not finish within {:.1} s and was stopped: look for a loop whose condition never changes, \
                 or a __syncthreads() that some threads never reach",
                limit.as_secs_f64()
            ),
        );
    };
    match serde_json::from_slice::<Answer>(&stdout) {
        Ok(answer) => answer.into_reply(),
        Err(_) => failed(
            Kind::LaunchError,
            format!(
                "the GPU worker died ({status}) before answering: {}",
                stderr.trim().lines().last().unwrap_or("no message")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_outputs_survive_the_wire() {
        let output = RunOutput {
            outputs: vec![vec![1.5, f32::NAN]],
            ..RunOutput::default()
        };
        let reply = Reply {
            output,
            ..Reply::default()
        };
        let text = serde_json::to_string(&Answer::from_reply(reply)).unwrap();
        let back = serde_json::from_str::<Answer>(&text)
            .unwrap()
            .into_reply()
            .output;
        assert_eq!(back.outputs[0][0], 1.5);
        assert!(back.outputs[0][1].is_nan());
    }
}
