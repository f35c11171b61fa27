//! GPU workers that outlive a check: a few per user and GPU, found through Unix sockets in the
//! cache folder.
//!
//! A worker (the runner's hidden `gpu-worker --socket PATH`) creates its CUDA context once and
//! keeps its compiled modules and its full-scale cases ([`crate::resident`]) from one check to the
//! next; it exits after [`idle`] (a minute) without a request, and with it everything it held on
//! the device. There are [`SLOTS`] slots, each a socket, a lock file and a log: a client takes a
//! slot's lock for one request (`flock`, released by the kernel if the client dies), connects,
//! starting the slot's worker if none answers, sends its request and waits at most its limit. The
//! lock makes a worker serve one client at a time, so a kernel that runs too long can be stopped
//! by killing its worker without touching another client's; a worker idle past its minute exits
//! only while it can take its own slot's lock, so no client is left connecting to a worker that
//! is going away. [`Worker::start`] keeps two slots' workers alive, so the request after a fault
//! or a timeout goes to a warm spare while the slot that lost its worker starts a new one: a
//! request takes a free slot whose worker is ready before one whose worker is still starting.
//! `grade`'s threads share the slots: each request takes whichever is free.

use crate::Device;
use crate::message::{Answer, Hello, Reply, Request, diagnosed, failed};
use crate::wire::{self};
use spec::diag::{Diagnostic, Kind};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolchain::nvrtc::{self, Target};

/// Workers per user and GPU: at most this many CUDA contexts stay on the device (about 650 MiB
/// each on an H200, measured by `bench/latency.sh`).
pub const SLOTS: usize = 4;
/// Workers [`Worker::start`] keeps alive: one to use and a spare.
const WARM: usize = 2;
/// How long a new worker may take to say hello (NVRTC loaded, CUDA context created).
const STARTUP: Duration = Duration::from_secs(60);

/// How long a worker waits for a request before it exits (`CONV_WORKBOOK_WORKER_IDLE` seconds
/// overrides the minute).
pub fn idle() -> Duration {
    let secs = std::env::var("CONV_WORKBOOK_WORKER_IDLE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(60.0);
    Duration::from_secs_f64(secs)
}

/// A handle on the slots' workers for `exe args..`; nothing starts until [`Worker::start`] or a
/// call. Dropping it leaves the workers to their idle minute.
pub struct Worker {
    exe: PathBuf,
    args: Vec<String>,
    /// Socket, lock and log paths of a slot, without their extension.
    stem: PathBuf,
    /// The slot of the last request: its worker keeps that check's full cases.
    last: usize,
    /// What the last hello said: `Ok(None)` before any hello.
    device: Result<Option<Device>, Diagnostic>,
    said_hello: bool,
    /// The puzzle a worker started from here builds its full cases for at once (`--ahead`).
    ahead: Option<String>,
}

/// One slot taken: its lock held while connected.
struct Taken {
    slot: usize,
    _lock: File,
    stream: UnixStream,
    pid: u32,
}

impl Worker {
    pub fn new(exe: PathBuf, args: &[&str]) -> Worker {
        // Workers of another build of the runner, or for another GPU, are others'.
        let built = std::fs::metadata(&exe)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |t| t.as_nanos());
        let gpu = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default();
        let key = fnv(format!("{}|{built}|{gpu}", exe.display()).as_bytes());
        let stem = toolchain::nvrtc::cache_dir()
            .join("workers")
            .join(format!("{key:012x}"));
        Worker {
            exe,
            args: args.iter().map(|a| a.to_string()).collect(),
            stem,
            last: 0,
            device: Ok(None),
            said_hello: false,
            ahead: None,
        }
    }

    fn path(&self, slot: usize, ext: &str) -> PathBuf {
        self.stem.with_extension(format!("{slot}.{ext}"))
    }

    /// Makes sure two slots have a worker (one to use, a spare), without waiting for them to be
    /// ready: they create their CUDA contexts while the caller does other work. A worker started
    /// from now on builds the full cases of puzzle `ahead` at once, so that the spare too has
    /// them ready when a fault or a timeout sends the next request to it.
    pub fn start(&mut self, ahead: Option<&str>) {
        self.ahead = ahead.map(String::from);
        if self.device.is_err() {
            return;
        }
        for slot in 0..WARM {
            let Some(lock) = self.try_lock(slot) else {
                continue; // in use, so alive
            };
            if !self.alive(slot)
                && let Err(d) = self.spawn(slot)
            {
                self.device = Err(d);
                return;
            }
            drop(lock);
        }
    }

    /// Whether slot `slot`'s worker process runs (it may still be creating its context).
    fn alive(&self, slot: usize) -> bool {
        let pid = std::fs::read_to_string(self.path(slot, "pid")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        // The state follows the command's closing parenthesis; a zombie has exited.
        stat.is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'))
        })
    }

    fn try_lock(&self, slot: usize) -> Option<File> {
        let _ = std::fs::create_dir_all(self.stem.parent()?);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path(slot, "lock"))
            .ok()?;
        file.try_lock().ok().map(|()| file)
    }

    /// Starts slot `slot`'s worker (its lock held by the caller).
    fn spawn(&self, slot: usize) -> Result<(), Diagnostic> {
        let _spawn = crate::trace::phase_of(|| format!("spawn worker {slot}"));
        let sock = self.path(slot, "sock");
        let _ = std::fs::remove_file(&sock);
        let log = File::create(self.path(slot, "log"));
        let stderr = log.map_or_else(|_| Stdio::null(), Stdio::from);
        Command::new(&self.exe)
            .args(&self.args)
            .arg("--socket")
            .arg(&sock)
            .args(self.ahead.iter().flat_map(|id| ["--ahead", id]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0) // a Ctrl-C to the check does not reach it
            .spawn()
            .map(|mut child| {
                let _ = std::fs::write(self.path(slot, "pid"), child.id().to_string());
                // Reaped when it exits, if this process still runs then.
                std::thread::spawn(move || child.wait());
            })
            .map_err(|e| {
                Diagnostic::new(
                    Kind::LaunchError,
                    format!("could not start the GPU worker: {e}"),
                )
            })
    }

    /// Takes a free slot, connected to its worker and past its hello: a free slot whose worker
    /// is ready (the last one used first: its worker keeps that check's full cases), else the
    /// first free one, waiting for its worker to start. So a request after a fault, or `grade`'s
    /// timing after its checks, goes to a warm worker rather than one still creating its context.
    fn take(&mut self) -> Result<Taken, Diagnostic> {
        let order: Vec<usize> = std::iter::once(self.last)
            .chain((0..SLOTS).filter(|&s| s != self.last))
            .collect();
        loop {
            let mut starting = None;
            for &slot in &order {
                let Some(lock) = self.try_lock(slot) else {
                    continue;
                };
                match UnixStream::connect(self.path(slot, "sock")) {
                    Ok(stream) => {
                        self.last = slot;
                        return self.connect(slot, lock, Some(stream));
                    }
                    Err(_) if starting.is_none() => starting = Some((slot, lock)),
                    Err(_) => {}
                }
            }
            if let Some((slot, lock)) = starting {
                self.last = slot;
                return self.connect(slot, lock, None);
            }
            std::thread::sleep(Duration::from_millis(3));
        }
    }

    /// Slot `slot`'s worker past its hello, on `stream` if already connected, starting the
    /// worker if it does not run.
    fn connect(
        &mut self,
        slot: usize,
        lock: File,
        stream: Option<UnixStream>,
    ) -> Result<Taken, Diagnostic> {
        let _connect = crate::trace::phase_of(|| format!("connect to worker {slot}, its hello"));
        let sock = self.path(slot, "sock");
        let mut stream = match stream.map_or_else(|| UnixStream::connect(&sock), Ok) {
            Ok(s) => s,
            Err(_) => {
                // A worker still creating its context has not opened its socket yet.
                if !self.alive(slot) {
                    self.spawn(slot)?;
                }
                let since = Instant::now();
                loop {
                    if let Ok(s) = UnixStream::connect(&sock) {
                        break s;
                    }
                    if since.elapsed() > STARTUP || !self.alive(slot) {
                        return Err(Diagnostic::new(
                            Kind::LaunchError,
                            format!(
                                "the GPU worker did not start within {} s: {}",
                                STARTUP.as_secs(),
                                self.last_words(slot)
                            ),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        };
        let _ = stream.set_read_timeout(Some(STARTUP));
        let hello = wire::read(&mut stream)
            .map_err(|_| self.died(slot, "before saying hello"))
            .and_then(|f| {
                serde_json::from_slice::<Hello>(&f.header).map_err(|e| {
                    Diagnostic::new(
                        Kind::LaunchError,
                        format!("bad hello from the GPU worker: {e}"),
                    )
                })
            })?;
        self.said_hello = true;
        match hello.device {
            Some(device) => self.device = Ok(Some(device)),
            None => {
                self.device = match hello.problem {
                    Some(d) if d.kind == Kind::NvrtcMissing => Err(d),
                    _ => Ok(None),
                };
                return Err(Diagnostic::new(
                    Kind::LaunchError,
                    "there is no GPU to run on",
                ));
            }
        }
        Ok(Taken {
            slot,
            _lock: lock,
            stream,
            pid: hello.pid,
        })
    }

    /// The device the workers found (asking one if none has said yet); `Ok(None)` when it found
    /// none, `Err` when it could not start or answer.
    pub fn device(&mut self) -> Result<Option<Device>, Diagnostic> {
        // A worker that said hello set `device` itself, even when it found no GPU.
        if !self.said_hello
            && self.device.is_ok()
            && let Err(d) = self.take()
            && !self.said_hello
        {
            self.device = Err(d);
        }
        self.device.clone()
    }

    /// Compiles `request`'s kernel for the device before the worker's clock starts: ptxas can take
    /// seconds (14 s for an unrolled Hopper kernel), no part of the kernel's limit (disk cache).
    fn compile_ahead(&self, request: &Request) {
        if let (Some(source), Ok(Some(Device { major, minor, .. }))) =
            (request.source(), &self.device)
        {
            let _compile = crate::trace::phase("compile for the device, before the request");
            let _ = nvrtc::compile(
                &source,
                &Target::Cubin {
                    major: *major,
                    minor: *minor,
                },
            );
        }
    }

    /// Runs `request` in a worker, waiting at most `limit` for the answer. A worker that does
    /// not answer in time is killed, and its slot starts another.
    pub fn call(&mut self, request: &Request, limit: Duration) -> Reply {
        if let Err(d) = &self.device {
            return diagnosed(d.clone());
        }
        let _round = crate::trace::phase_of(|| format!("round trip: {}", request.label()));
        let mut taken = match self.take() {
            Ok(t) => t,
            Err(d) => return diagnosed(d),
        };
        self.compile_ahead(request);
        if wire::write(&mut taken.stream, &request.to_frame()).is_err() {
            return lost(diagnosed(self.died(taken.slot, "while taking a request")));
        }
        let _ = taken.stream.set_read_timeout(Some(limit));
        let frame = match wire::read(&mut taken.stream) {
            Ok(frame) => frame,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                self.replace(&taken);
                return lost(failed(
                    Kind::Timeout,
                    format!(
                        "the kernel did not finish within {:.1} s on the GPU and was stopped: look for a loop whose \
                         condition never changes, or a __syncthreads() that some threads never reach",
                        limit.as_secs_f64()
                    ),
                ));
            }
            Err(_) => {
                let d = self.died(taken.slot, "before answering");
                self.replace(&taken);
                return lost(diagnosed(d));
            }
        };
        match serde_json::from_slice::<Answer>(&frame.header) {
            Ok(answer) => {
                crate::trace::print_worker(&answer.trace);
                if answer.fatal {
                    // It exits; a successor starts while the caller reads this answer, and the
                    // next request goes to the spare.
                    self.replace(&taken);
                }
                answer.reply(frame.arrays)
            }
            Err(e) => failed(
                Kind::LaunchError,
                format!("bad answer from the GPU worker: {e}"),
            ),
        }
    }

    /// Stops `taken`'s worker (it may still be running a kernel) and starts another in its slot.
    fn replace(&mut self, taken: &Taken) {
        if taken.pid > 0 {
            // The worker's own pid (its hello); the slot's lock keeps others from starting one.
            let _ = Command::new("kill")
                .args(["-KILL", &taken.pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.spawn(taken.slot);
        self.last = (taken.slot + 1) % WARM;
    }

    fn last_words(&self, slot: usize) -> String {
        let log = std::fs::read_to_string(self.path(slot, "log")).unwrap_or_default();
        log.trim()
            .lines()
            .last()
            .unwrap_or("no message")
            .to_string()
    }

    /// A diagnostic for a worker that died `when`, with the last line it wrote to its log.
    fn died(&self, slot: usize, when: &str) -> Diagnostic {
        Diagnostic::new(
            Kind::LaunchError,
            format!("the GPU worker died {when}: {}", self.last_words(slot)),
        )
    }
}

/// `reply`, marked as the end of its worker's CUDA context (stopped, or dead).
fn lost(mut reply: Reply) -> Reply {
    reply.output.context_lost = true;
    reply
}

/// FNV-1a of `bytes`.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
