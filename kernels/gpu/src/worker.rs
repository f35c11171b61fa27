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

use crate::message::{Answer, Hello, diagnosed, failed};
pub use crate::message::{KernelRun, Reply, Request};
use crate::resident::{Hooks, Judged, Resident};
use crate::wire::{self, Frame};

use spec::diag::{Diagnostic, Kind};
use std::fs::File;
use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use toolchain::nvrtc;

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
    let (request, asked) = match Request::from_frame(frame) {
        Ok((request, asked)) => (Ok(request), asked),
        Err(e) => (Err(e), false),
    };
    crate::trace::hold(asked);
    let whole = crate::trace::phase_of(|| match &request {
        Ok(r) => r.label(),
        Err(_) => "an unreadable request".into(),
    });
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
    drop(whole);
    let mut rest = reply.output;
    rest.context_lost = fatal;
    let arrays = std::mem::take(&mut rest.outputs);
    let answer = Answer {
        rest,
        timing: reply.timing,
        peaks: reply.peaks,
        judged,
        stubs,
        fatal,
        trace: crate::trace::take(),
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

/// Worker side: serves one client at a time on `socket` until a request leaves the CUDA context
/// unusable, or until [`idle`] passes without a client while its slot's lock is free.
///
/// `ahead`: a puzzle whose full cases it builds at once, on other threads, while it creates its
/// CUDA context and waits for its first client (who is likely to ask for them).
pub fn serve_socket(socket: &Path, hooks: Hooks, ahead: Option<String>) -> std::io::Result<()> {
    let mut resident = Resident::default();
    if let Some(id) = ahead {
        resident.build_ahead(hooks, id);
    }
    let mut capture = crate::capture::stdout().ok();
    let hello = hello();
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)?;
    let (tx, clients) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if tx.send(stream).is_err() {
                return;
            }
        }
    });
    let lock = socket.with_extension("lock");
    loop {
        let stream = match clients.recv_timeout(crate::pool::idle()) {
            Ok(Ok(stream)) => stream,
            Ok(Err(_)) => continue,
            Err(_) => {
                let free = File::options()
                    .write(true)
                    .open(&lock)
                    .is_ok_and(|f| f.try_lock().is_ok());
                if free {
                    let _ = std::fs::remove_file(socket);
                    return Ok(());
                }
                continue;
            }
        };
        if serve_client(stream, &hello, &mut capture, &hooks, &mut resident) {
            return Ok(()); // its context is unusable; the client removes the socket
        }
    }
}

/// Answers one client's requests; true when the CUDA context is unusable.
fn serve_client(
    mut stream: UnixStream,
    hello: &Hello,
    capture: &mut Option<crate::capture::Capture>,
    hooks: &Hooks,
    resident: &mut Resident,
) -> bool {
    if wire::write(&mut stream, &Frame::new(hello, vec![])).is_err() || hello.device.is_none() {
        return false;
    }
    loop {
        let Ok(frame) = wire::read(&mut stream) else {
            return false;
        };
        let (answer, fatal) = answer(frame, capture, hooks, resident);
        if wire::write(&mut stream, &answer).is_err() || fatal {
            return fatal;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Worker;
    use spec::job::{Arg, Job, Launch};
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
            tensor_maps: vec![],
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
        let (back, _) = Request::from_frame(wire::read(&mut bytes.as_slice()).unwrap()).unwrap();
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
