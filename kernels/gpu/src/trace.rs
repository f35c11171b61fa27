//! `CONV_WORKBOOK_TRACE=1`: the wall time of each phase of a check, on standard error.
//!
//! Both sides of a check time their phases here: the runner (compile, the simulator's prerun,
//! connecting to or starting a worker, each request's round trip, the report) and its GPU worker
//! (building a puzzle's full cases, compiling and loading a module, uploading, the launch,
//! reading back, judging, drawing the diff, the summary). A [`Phase`] tells its time when it is
//! dropped. The runner prints its lines at once; the worker holds its own for the request being
//! answered ([`hold`], [`take`]) and they travel back in the answer, where the runner prints them
//! marked `worker` (its own marked `runner`), so one stderr tells the whole check in order. The runner asks a worker
//! to trace a request only when it traces itself. Off, a phase is one relaxed atomic load and
//! nothing else.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// 0: not read yet; 1: off; 2: on.
static ENV: AtomicU8 = AtomicU8::new(0);
/// Whether the request this worker is answering asked for its phases.
static ASKED: AtomicBool = AtomicBool::new(false);
/// A worker's lines for the request it answers.
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether this process traces: `CONV_WORKBOOK_TRACE` set (to anything but `0`), or, in a
/// worker, a request that asked for it.
pub fn on() -> bool {
    ASKED.load(Ordering::Relaxed) || from_env()
}

fn from_env() -> bool {
    match ENV.load(Ordering::Relaxed) {
        0 => {
            let set =
                std::env::var_os("CONV_WORKBOOK_TRACE").is_some_and(|v| !v.is_empty() && v != "0");
            ENV.store(if set { 2 } else { 1 }, Ordering::Relaxed);
            set
        }
        n => n == 2,
    }
}

/// Worker side: the request about to be answered asked for its phases (or not); its lines are
/// held until [`take`]n rather than printed.
pub fn hold(asked: bool) {
    ASKED.store(asked, Ordering::Relaxed);
    HELD.lock().map(|mut h| h.clear()).ok();
}

/// Worker side: the lines held for the request just answered.
pub fn take() -> Vec<String> {
    let lines = HELD
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default();
    ASKED.store(false, Ordering::Relaxed);
    lines
}

/// Runner side: prints a worker's lines.
pub fn print_worker(lines: &[String]) {
    for line in lines {
        eprintln!("trace worker {line}");
    }
}

/// A phase being timed; its time is told when it is dropped, with the time of day it started
/// (UTC, so that the lines of processes running side by side, `grade`'s, can be put in order).
#[must_use = "a phase is timed until it is dropped"]
pub struct Phase(Option<(String, Instant, SystemTime)>);

/// Starts timing `what` (nothing at all when tracing is off).
pub fn phase(what: &str) -> Phase {
    phase_of(|| what.to_string())
}

/// [`phase`] with a name made only when tracing is on.
pub fn phase_of(what: impl FnOnce() -> String) -> Phase {
    Phase(on().then(|| (what(), Instant::now(), SystemTime::now())))
}

/// `hh:mm:ss.mmm` of a time, UTC.
fn time_of_day(t: SystemTime) -> String {
    let ms = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis()) % 86_400_000;
    let (s, ms) = (ms / 1000, ms % 1000);
    format!("{:02}:{:02}:{:02}.{ms:03}", s / 3600, s / 60 % 60, s % 60)
}

impl Drop for Phase {
    fn drop(&mut self) {
        let Some((what, since, at)) = self.0.take() else {
            return;
        };
        let took = since.elapsed().as_secs_f64();
        let line = format!("{took:>8.3} s  from {}  {what}", time_of_day(at));
        if ASKED.load(Ordering::Relaxed) {
            HELD.lock().map(|mut h| h.push(line)).ok();
        } else {
            eprintln!("trace runner {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_holds_its_lines_for_the_answer() {
        hold(true);
        assert!(on());
        drop(phase("case build"));
        let lines = take();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].ends_with("  case build"), "{lines:?}");
        assert!(lines[0].contains(" s  from "), "{lines:?}");
        assert!(take().is_empty(), "taken once");
        hold(false);
        drop(phase("not asked"));
        assert!(take().is_empty());
    }

    #[test]
    fn times_of_day_are_utc_hours_minutes_seconds_and_milliseconds() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(86_400_000 * 3 + 3_723_045);
        assert_eq!(time_of_day(t), "01:02:03.045");
    }
}
