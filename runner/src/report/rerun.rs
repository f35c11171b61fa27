//! The command that checks a file again, as data ([`Rerun`]): its parts as `runner check` was
//! given them, never a line to parse back. The report prints it (`Fix it, then run: ...`) and
//! draws from it the `runner show` command for a diagnostic (`draw it: ...`).

use std::fmt;
use std::path::PathBuf;

/// `runner check ...` with the options that change what it runs or prints (`--json` aside,
/// which is for scripts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rerun {
    /// The runner as typed: `runner`, or `runner --root DIR` (`workbook::runner_command`).
    pub runner: String,
    /// The puzzle as typed (`5`, `puzzle-05`), or its id when none was.
    pub puzzle: String,
    /// `--solution` or `--solution=LABEL`, as given.
    pub solution: Option<String>,
    /// `--kernel FILE`.
    pub kernel: Option<PathBuf>,
    /// `--case NAME`.
    pub case: Option<String>,
    /// `--backend sim|gpu`, when not the default.
    pub backend: Option<String>,
    /// `--stats`.
    pub stats: bool,
    /// `--timeout SECONDS`, when not the default.
    pub timeout: Option<f64>,
}

impl Rerun {
    /// `runner check PUZZLE`, nothing else.
    pub fn of(runner: &str, puzzle: &str) -> Rerun {
        Rerun {
            runner: runner.to_string(),
            puzzle: puzzle.to_string(),
            ..Rerun::default()
        }
    }

    /// The options that pick the file: `show` takes them too.
    fn file_options(&self) -> Vec<String> {
        let mut words = vec![];
        words.extend(self.solution.clone());
        if let Some(file) = &self.kernel {
            words.push(format!("--kernel {}", quoted(&file.display().to_string())));
        }
        words
    }

    /// The options after the file's: what `check` runs and prints.
    fn run_options(&self) -> Vec<String> {
        let mut words = vec![];
        if self.stats {
            words.push("--stats".to_string());
        }
        if let Some(t) = self.timeout {
            words.push(format!("--timeout {t}"));
        }
        words
    }

    /// The `runner show` command that draws a diagnostic this check found in case `case` at
    /// block `block`: the check's puzzle and file (`show` takes no `--backend`, `--stats` or
    /// `--timeout`; the case and block are the diagnostic's).
    pub fn show(&self, case: &str, block: [u32; 3]) -> String {
        let at = match block {
            [x, 0, 0] => x.to_string(),
            [x, y, 0] => format!("{x},{y}"),
            [x, y, z] => format!("{x},{y},{z}"),
        };
        let mut words = vec![self.runner.clone(), "show".into(), self.puzzle.clone()];
        words.extend(self.file_options());
        format!("{} --case {case} --block {at}", words.join(" "))
    }
}

impl fmt::Display for Rerun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut words = vec![self.runner.clone(), "check".into(), self.puzzle.clone()];
        words.extend(self.file_options());
        if let Some(case) = &self.case {
            words.push(format!("--case {case}"));
        }
        if let Some(backend) = &self.backend {
            words.push(format!("--backend {backend}"));
        }
        words.extend(self.run_options());
        f.write_str(&words.join(" "))
    }
}

/// `word` as a shell reads it back as one word: as it is when it holds nothing the shell splits
/// or expands, else in single quotes.
fn quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drawing_command_keeps_the_root_before_show() {
        let rerun = Rerun {
            runner: "runner --root ../wb".into(),
            puzzle: "puzzle-11".into(),
            kernel: Some("k.cu".into()),
            case: Some("edge-1x1".into()),
            backend: Some("sim".into()),
            ..Rerun::default()
        };
        assert_eq!(
            rerun.to_string(),
            "runner --root ../wb check puzzle-11 --kernel k.cu --case edge-1x1 --backend sim"
        );
        assert_eq!(
            rerun.show("edge-1x1", [3, 1, 0]),
            "runner --root ../wb show puzzle-11 --kernel k.cu --case edge-1x1 --block 3,1"
        );
        assert_eq!(
            Rerun::of("runner", "puzzle-02").show("example", [0, 0, 0]),
            "runner show puzzle-02 --case example --block 0"
        );
    }

    #[test]
    fn a_kernel_path_with_a_space_or_a_check_stays_one_word() {
        let rerun = Rerun {
            kernel: Some("my check/k 1.cu".into()),
            solution: None,
            stats: true,
            timeout: Some(2.5),
            ..Rerun::of("runner", "5")
        };
        assert_eq!(
            rerun.to_string(),
            "runner check 5 --kernel 'my check/k 1.cu' --stats --timeout 2.5"
        );
        assert_eq!(
            rerun.show("random-2", [1, 2, 3]),
            "runner show 5 --kernel 'my check/k 1.cu' --case random-2 --block 1,2,3"
        );
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(quoted("a/b-c_1.cu"), "a/b-c_1.cu");
    }
}
