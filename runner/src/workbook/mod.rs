//! The learner's workbook on disk: where its root is, and what the learner has done so far.
//!
//! The root is the folder given by `--root` (set once, at start-up, by `main`), else the nearest
//! folder upwards from the current directory that holds `puzzles/`, and `book/` or `solutions/` (a
//! student's copy, made by `runner release`, has no `solutions/`), else the folder this binary was built from.
//! What needs the reference solutions asks [`require_solutions`] first, which says, in a student's
//! copy, that it is for instructors. Tests use `--root` to run `validate` over a copy of the workbook
//! under `runner/tests/fixtures/`. Progress (solved puzzles, hints
//! already shown, a hash of each kernel that passed) lives in `.workbook-state.json` at the root,
//! ignored by git; a missing or unreadable state file is an empty state, never an error.
//!
//! Also the puzzles (`registry`), reading a source file (`source_text`) and installing NVRTC
//! (`install`). Imports nothing of the runner: every other subsystem may import it.

pub mod install;
pub mod registry;
pub mod source_text;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `--root`: the folder, and the argument as typed (repeated in the commands we suggest).
static ROOT: OnceLock<(PathBuf, String)> = OnceLock::new();

/// Makes `dir` the root for the rest of the process (`--root`); only the first call counts.
pub fn set_root(dir: &Path) -> anyhow::Result<()> {
    let abs =
        std::fs::canonicalize(dir).map_err(|e| anyhow::anyhow!("--root {}: {e}", dir.display()))?;
    if !is_workbook(&abs) {
        anyhow::bail!(
            "--root {}: not a workbook (it needs puzzles/, and book/ or solutions/)",
            dir.display()
        );
    }
    let _ = ROOT.set((abs, dir.display().to_string()));
    Ok(())
}

/// `runner`, with `--root DIR` when the root was given: the start of a command to suggest.
pub fn runner_command() -> String {
    match ROOT.get() {
        Some((_, typed)) => format!("runner --root {typed}"),
        _ => "runner".to_string(),
    }
}

/// When no `--root` was given and the current directory is not inside a workbook: the folder this
/// binary was built from, which [`root`] then uses (the runner says so, rather than silently
/// checking files the learner is not editing).
pub fn fallback() -> Option<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    (ROOT.get().is_none() && !cwd.ancestors().any(is_workbook))
        .then(root)
        .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
}

/// Whether `dir` is a workbook's root: it holds `puzzles/`, and `book/` or `solutions/` (an
/// instructor's workbook has both, a students' copy no `solutions/`).
pub fn is_workbook(dir: &Path) -> bool {
    dir.join("puzzles").is_dir() && (dir.join("book").is_dir() || dir.join("solutions").is_dir())
}

/// `Ok` where the workbook has its reference solutions; in a student's copy (no `solutions/`),
/// the usage error that says `what` is for instructors.
pub fn require_solutions(what: &str) -> anyhow::Result<()> {
    if has_solutions() {
        return Ok(());
    }
    anyhow::bail!(
        "{what} is for instructors: this copy of the workbook has no reference solutions (a student's copy, made by `runner release`). Check your own kernel with `runner check`; an instructor runs {what} in the workbook the copy was made from"
    )
}

/// Whether the workbook has its reference solutions (`solutions/`).
pub fn has_solutions() -> bool {
    root().join("solutions").is_dir()
}

/// The workbook's root folder.
pub fn root() -> PathBuf {
    if let Some((dir, _)) = ROOT.get() {
        return dir.clone();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    if let Some(found) = cwd.ancestors().find(|d| is_workbook(d)) {
        return found.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A file the learner named: as given when it exists from here, else relative to the workbook's
/// root (so `--kernel solutions/puzzle-01.cu` works from any folder of the workbook).
pub fn resolve(path: &Path) -> PathBuf {
    if path.is_relative() && !path.exists() && root().join(path).exists() {
        return root().join(path);
    }
    path.to_path_buf()
}

/// A path relative to the root when it lies inside it, as the learner would type it.
pub fn display(path: &Path) -> String {
    let root = root();
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    abs.strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Puzzle ids the learner's own kernel passed.
    #[serde(default)]
    pub solved: Vec<String>,
    /// How many hints of each puzzle have been shown.
    #[serde(default)]
    pub hints_shown: BTreeMap<String, usize>,
    /// Per solved puzzle, the kernel that passed: a hash of its text and when (seconds since
    /// 1970), so `list` can tell a kernel edited since from one that still passes.
    #[serde(default)]
    pub passed: BTreeMap<String, Passed>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passed {
    pub hash: u64,
    pub unix: u64,
}

/// FNV-1a of a kernel's text: the same in every process and build.
pub fn text_hash(text: &[u8]) -> u64 {
    text.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The UTC date of `unix` seconds, `YYYY-MM-DD` (the civil-from-days algorithm).
pub fn date(unix: u64) -> String {
    let z = (unix / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

impl State {
    /// `$WORKBOOK_STATE` when set (tests point it elsewhere), else the root's state file.
    fn path() -> PathBuf {
        std::env::var_os("WORKBOOK_STATE")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join(".workbook-state.json"))
    }

    pub fn load() -> State {
        std::fs::read_to_string(Self::path())
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    /// Saves the state; failing to save progress is not worth failing a command for.
    pub fn save(&self) {
        if let Ok(text) = serde_json::to_string_pretty(self) {
            let _ = std::fs::write(Self::path(), text);
        }
    }

    /// Marks `id` solved by the kernel text `kernel`, now.
    pub fn mark_solved(&mut self, id: &str, kernel: &[u8]) {
        if !self.solved.iter().any(|s| s == id) {
            self.solved.push(id.to_string());
            self.solved.sort();
        }
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let hash = text_hash(kernel);
        self.passed.insert(id.to_string(), Passed { hash, unix });
    }

    /// For a solved puzzle whose kernel is no longer the one that passed: when that one passed.
    /// `None` while the kernel is unchanged (or nothing was recorded, as in older state files).
    pub fn edited_since(&self, id: &str, kernel: &[u8]) -> Option<u64> {
        let p = self.passed.get(id)?;
        (self.is_solved(id) && p.hash != text_hash(kernel)).then_some(p.unix)
    }

    pub fn is_solved(&self, id: &str) -> bool {
        self.solved.iter().any(|s| s == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400), "2000-02-29");
        assert_eq!(date(1_795_392_000), "2026-11-23");
    }

    #[test]
    fn a_kernel_edited_after_it_passed_is_told_apart() {
        let mut s = State::default();
        s.mark_solved("puzzle-01", b"kernel one");
        assert_eq!(s.edited_since("puzzle-01", b"kernel one"), None);
        assert!(s.edited_since("puzzle-01", b"kernel two").is_some());
        assert_eq!(s.edited_since("puzzle-02", b"anything"), None);
    }
}
