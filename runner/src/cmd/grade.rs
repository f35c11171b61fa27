//! `runner grade <puzzle> <folder>`: grade a folder of submissions (`classroom::grade`).

use std::process::ExitCode;

pub use crate::classroom::grade::Options as Args;

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    crate::classroom::grade::run(args)
}
