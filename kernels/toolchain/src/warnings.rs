//! NVRTC's warnings about a kernel that compiled: a `warning #174-D: expression has no effect`
//! on the line of a loop that never ends is the answer to that loop, so the runner shows them
//! (labelled as warnings, never as a `compile_error`; a kernel that compiles with warnings can
//! still pass). [`crate::nvrtc::compile`] hands each successful compile's log to [`keep`], which
//! holds it in memory and beside the cached PTX on disk (`KEY.log`), so a cache hit still knows
//! its warnings; [`of`] reads them back as [`Warning`]s at the learner's file and line.

use crate::source::{Source, Target};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// One warning of NVRTC's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub file: String,
    pub line: u32,
    /// NVRTC's words, with its number: `expression has no effect (#174-D)`.
    pub message: String,
}

type Logs = Mutex<HashMap<u64, String>>;

fn logs() -> &'static Logs {
    static LOGS: OnceLock<Logs> = OnceLock::new();
    LOGS.get_or_init(Default::default)
}

/// Keeps the log of the compile keyed `key`, whose cached output is `cached` (an empty log writes
/// nothing; a failed write only loses the warnings of a later cache hit).
pub(crate) fn keep(key: u64, log: &str, cached: &Path) {
    if log.trim().is_empty() {
        return;
    }
    let _ = std::fs::write(cached.with_extension("log"), log);
    logs()
        .lock()
        .expect("log lock")
        .insert(key, log.to_string());
}

/// The warnings of the last compile of `source` for `target` (none when it was never compiled
/// or NVRTC said nothing).
pub fn of(source: &Source<'_>, target: &Target) -> Vec<Warning> {
    let key = crate::cache::cache_key(source, target);
    let held = logs().lock().expect("log lock").get(&key).cloned();
    let log = held.or_else(|| {
        std::fs::read_to_string(crate::cache::cached_path(key, target).with_extension("log")).ok()
    });
    log.map_or_else(Vec::new, |log| parse(&log, source.file))
}

/// The `FILE(LINE): warning #N-D: TEXT` lines of `log`, placed at `file` (NVRTC's program name).
pub fn parse(log: &str, file: &str) -> Vec<Warning> {
    log.lines()
        .filter_map(|l| {
            let (head, rest) = l.split_once("): warning")?;
            let (_, line) = head.rsplit_once('(')?;
            let rest = rest.trim_start();
            let (number, text) = match rest.strip_prefix('#') {
                Some(r) => r.split_once(':').map_or(("", r), |(n, t)| (n, t)),
                None => ("", rest.trim_start_matches(':')),
            };
            let message = match number.trim() {
                "" => text.trim().to_string(),
                n => format!("{} (#{n})", text.trim()),
            };
            Some(Warning {
                file: file.to_string(),
                line: line.parse().ok()?,
                message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_read_with_their_line_and_number() {
        let log = "k.cu(9): warning #174-D: expression has no effect\n      j;\n      ^\n\n\
                   k.cu(6): warning #177-D: variable \"unused\" was declared but never referenced\n\n\
                   Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n";
        assert_eq!(
            parse(log, "puzzles/puzzle-01/kernel.cu"),
            [
                Warning {
                    file: "puzzles/puzzle-01/kernel.cu".into(),
                    line: 9,
                    message: "expression has no effect (#174-D)".into()
                },
                Warning {
                    file: "puzzles/puzzle-01/kernel.cu".into(),
                    line: 6,
                    message: "variable \"unused\" was declared but never referenced (#177-D)"
                        .into()
                }
            ]
        );
        assert!(parse("k.cu(3): error: x is undefined", "k.cu").is_empty());
    }
}
