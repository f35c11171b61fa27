//! `runner watch [puzzle]`: check the learner's kernel each time it is saved, and go on to the next
//! puzzle when it passes. Ctrl-C stops it.
//!
//! It starts with the puzzle named, or the first one not solved yet, and checks it at once. Then it
//! waits for the kernel file to change (`notify` watches the puzzle's folder, since editors often
//! save by writing a new file and renaming it over the old one), lets a burst of events settle, and
//! checks again if the content changed, on a cleared screen (in a terminal). A pass marks the
//! puzzle solved, as `runner check` does, and the next puzzle is checked at once (below the pass,
//! not on a cleared screen) and its file becomes the watched one; after the last puzzle it exits.
//! The report leaves out "Fix it, then run": watching is that already.

use crate::check::{self, BackendChoice};
use crate::report;
use crate::workbook::{self, registry};
use anyhow::Context;
use notify::{RecursiveMode, Watcher};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::Receiver;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The puzzle to start with, e.g. puzzle-05 or 5 (default: the first one not solved yet).
    puzzle: Option<String>,
    /// Where to run the cases.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Seconds a GPU case may run before it is stopped.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
}

/// How long a burst of file events (an editor's save) may take to settle.
const SETTLE: Duration = Duration::from_millis(150);

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let mut puzzle = super::puzzle_or_current(args.puzzle.as_deref())?;
    let (tx, events) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).context("watching files")?;
    let mut watched: Option<PathBuf> = None;
    // Clear the screen before a check, except the first and the one right after a pass.
    let mut clear = false;
    // One warm worker for the whole session: a save is checked without a new CUDA context.
    let mut gpu = check::gpu_worker();
    loop {
        let file = workbook::root().join(puzzle.kernel_path());
        let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        if watched.as_ref() != Some(&folder) {
            if let Some(old) = watched.take() {
                let _ = watcher.unwatch(&old);
            }
            watcher
                .watch(&folder, RecursiveMode::NonRecursive)
                .with_context(|| format!("watching {}", folder.display()))?;
            watched = Some(folder);
        }
        let shown = workbook::display(&file);
        // The content the check sees: a save made while it runs still counts as a change.
        let last = std::fs::read(&file).ok();
        if clear && std::io::stdout().is_terminal() {
            say("\x1b[2J\x1b[H");
        }
        clear = true;
        let req = check::Request {
            puzzle,
            file: file.clone(),
            backend: args.backend,
            gpu_limit: Duration::from_secs_f64(args.timeout.max(0.1)),
            only_case: None,
            full_later: false,
        };
        let outcome = check::evaluate(&req, &mut gpu)?;
        let view = report::View {
            runner: workbook::runner_command(),
            rerun: None,
        };
        say(&report::human(&outcome, &view));
        if !outcome.passed {
            say(&format!(
                "Watching {shown}: save it to check again (Ctrl-C stops).\n"
            ));
            wait_for_change(&events, &file, last);
            continue;
        }
        let mut state = workbook::State::load();
        state.mark_solved(puzzle.id, last.as_deref().unwrap_or_default());
        state.save();
        match registry::next(puzzle.id) {
            Some(next) => puzzle = next,
            None => return Ok(ExitCode::SUCCESS),
        }
        say(&format!("\nOn to {}:\n", puzzle.id));
        clear = false;
    }
}

/// Blocks until `file` holds something other than `last`, after an event about it has settled.
/// Returns the new content.
fn wait_for_change(
    events: &Receiver<notify::Result<notify::Event>>,
    file: &Path,
    last: Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let name = file.file_name();
    loop {
        let Ok(event) = events.recv() else {
            // The watcher is gone; nothing will ever arrive.
            std::thread::park();
            continue;
        };
        let ours = event.is_ok_and(|e| e.paths.iter().any(|p| p.file_name() == name));
        if !ours {
            continue;
        }
        // Let the rest of the save arrive (editors write, rename and touch in several steps).
        while events.recv_timeout(SETTLE).is_ok() {}
        let now = std::fs::read(file).ok();
        if now.is_some() && now != last {
            return now;
        }
    }
}

/// Prints and flushes: the report must show while the watcher waits.
fn say(text: &str) {
    let mut out = std::io::stdout();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
