//! `runner bench <puzzle>`: time a kernel on the GPU against the hardware's limits (`bench`).

use super::KernelChoice;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// Timed launches per kernel (at least 20).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(20..))]
    runs: u32,
    /// Untimed launches first.
    #[arg(long, default_value_t = 5)]
    warmup: u32,
    /// Measure the device's peaks again instead of using the cached figures.
    #[arg(long)]
    remeasure: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, file) = args.target.resolve()?;
    crate::bench::run(crate::bench::Options {
        puzzle,
        file,
        solution: args.target.solution.is_some(),
        runs: args.runs,
        warmup: args.warmup,
        remeasure: args.remeasure,
        json: args.json,
    })
}
