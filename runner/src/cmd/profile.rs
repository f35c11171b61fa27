//! `runner profile [puzzle]`: what a kernel asks of the hardware, counted by the simulator, and
//! the time that predicts on an H100 (no GPU needed).
//!
//! By default the (first) full-scale case, of which a sample of blocks (`--blocks`, spread over the grid)
//! is simulated and the counts scaled to the whole grid; `--case NAME` profiles one small case
//! whole instead (what `bench/profile_vs_ncu.py` compares with `ncu`). Per source line and for
//! the kernel: warp-instructions issued, active lanes per issue, global sectors per request,
//! shared wavefronts per request, distinct constant addresses per constant request; the
//! instruction mix; bytes per output; the occupancy (`occupancy`, from the registers a thread
//! takes in NVRTC's sm_90 CUBIN); a block's critical path; the predicted time from the `profile`
//! crate's model, with the bound that sets it. The work is `crate::profile`'s; this reads the
//! arguments, makes one call and prints.

use super::KernelChoice;
use crate::profile::{profiled, text};
use crate::workbook::install;
use spec::{Case, Puzzle, Scale};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// Profile this case: a small one whole, every block of it; a full-scale one (2D puzzles
    /// have several) by a sample of its blocks.
    #[arg(long, value_name = "NAME")]
    case: Option<String>,
    /// Blocks of the full-scale case to simulate (spread over its grid, first and last
    /// included); those that would start after 250 million simulated thread-instructions are left out.
    #[arg(long, default_value_t = 6, value_name = "N")]
    blocks: u64,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, path) = args.target.resolve()?;
    let file = crate::workbook::display(&path);
    let (code, warning) = crate::workbook::source_text::read(&path, &file)?;
    warning.iter().for_each(|w| eprintln!("{w}"));
    if let Err(d) = install::ensure_nvrtc() {
        println!("{}: {}", d.kind.name(), d.message);
        return Ok(ExitCode::from(1));
    }
    let case = chosen_case(&puzzle, args.case.as_deref())?;
    let profiled = match profiled(&puzzle, &code, &file, &case, args.blocks) {
        Ok(x) => x,
        Err(d) => {
            println!("{}: {}", d.kind.name(), d.message);
            return Ok(ExitCode::from(1));
        }
    };
    print!("{}", text::report(&puzzle, &file, &code, &profiled));
    Ok(if profiled.diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The case to profile: a small case by name runs whole; the full-scale cases (the first by
/// default, or one by name) are sampled.
fn chosen_case(puzzle: &Puzzle, name: Option<&str>) -> anyhow::Result<Case> {
    let small = (puzzle.cases)(Scale::Small);
    let named = |cases: &[Case]| {
        let found = cases.iter().find(|c| match name {
            Some(n) => c.name == n,
            None => c.scale == Scale::Full,
        });
        found.cloned()
    };
    let chosen = match named(&small) {
        Some(c) if name.is_some() => Some(c),
        _ => named(&(puzzle.cases)(Scale::Full)),
    };
    let Some(case) = chosen else {
        let names: Vec<String> = (puzzle.cases)(Scale::Full)
            .iter()
            .map(|c| c.name.clone())
            .collect();
        anyhow::bail!(
            "{} has no such case; its cases are: {}",
            puzzle.id,
            names.join(", ")
        );
    };
    Ok(case)
}
