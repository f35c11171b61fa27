//! One module per subcommand, each with its `Args` (clap derive; doc comments are the help) and
//! its `execute`, which returns the process's exit status.
//!
//! Each `execute` reads its arguments, calls into the subsystems (`check`, `report`, `show`,
//! `bench`, `classroom`, `workbook`) and prints; what another subsystem needs lives there, not
//! here. Nothing imports `cmd` but `main` (runner/tests/it/layers.rs holds it).

pub mod autograder;
pub mod bench;
pub mod book;
pub mod check;
pub mod fuzz;
pub mod grade;
pub mod hint;
pub mod list;
pub mod profile;
pub mod release;
pub mod show;
pub mod validate;
pub mod watch;

use crate::workbook::{self, registry};
use spec::Puzzle;
use std::path::PathBuf;

/// Which puzzle, and which file of it: the learner's kernel, the reference solution, or any file.
#[derive(Debug, clap::Args)]
pub struct KernelChoice {
    /// The puzzle, e.g. puzzle-05 (or 5); without one, the first you have not solved.
    pub puzzle: Option<String>,
    /// Use the reference solution instead of your kernel; `--solution=LABEL` picks a second
    /// checked one (`--solution=hopper`: puzzle 11's or 12's kernel for an H100's sm_90a).
    #[arg(
        long,
        value_name = "LABEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        conflicts_with = "kernel"
    )]
    pub solution: Option<String>,
    /// Use this file instead of puzzles/<puzzle>/kernel.cu.
    #[arg(long, value_name = "FILE")]
    pub kernel: Option<PathBuf>,
}

impl KernelChoice {
    /// The puzzle and the file chosen, or a usage error with a close-match suggestion.
    pub fn resolve(&self) -> anyhow::Result<(Puzzle, PathBuf)> {
        if self.puzzle.is_none() && !self.is_own() {
            anyhow::bail!(
                "name the puzzle to check the file against, e.g. `puzzle-05 --kernel FILE` or `puzzle-05 --solution`"
            );
        }
        if self.solution.is_some() {
            workbook::require_solutions("--solution")?;
        }
        let puzzle = puzzle_or_current(self.puzzle.as_deref())?;
        let root = workbook::root();
        let file = match (&self.kernel, &self.solution) {
            (Some(file), _) => workbook::resolve(file),
            (None, Some(label)) => {
                let solution = registry::solution(&puzzle, Some(label));
                root.join(solution?.file)
            }
            (None, None) => root.join(puzzle.kernel_path()),
        };
        Ok((puzzle, file))
    }

    /// True when the learner's own kernel is chosen.
    pub fn is_own(&self) -> bool {
        self.kernel.is_none() && self.solution.is_none()
    }

    /// The option that chose a solution (`--solution`, `--solution=hopper`), if one did.
    pub fn solution_option(&self) -> Option<String> {
        let label = self.solution.as_deref().filter(|l| !l.is_empty());
        self.solution
            .as_ref()
            .map(|_| label.map_or_else(|| "--solution".into(), |l| format!("--solution={l}")))
    }
}

/// The puzzle named (e.g. puzzle-05 or 5), or, with none named, the first one whose own kernel has
/// not passed yet (the last one when all have): where a learner is.
pub fn puzzle_or_current(name: Option<&str>) -> anyhow::Result<Puzzle> {
    if let Some(name) = name {
        return Ok(registry::find(name)?);
    }
    let state = workbook::State::load();
    let all = registry::all();
    Ok(all
        .iter()
        .copied()
        .find(|p| !state.is_solved(p.id))
        .or_else(|| all.last().copied())
        .expect("the registry lists puzzles"))
}
