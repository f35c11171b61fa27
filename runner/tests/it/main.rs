//! The runner's integration tests, in one binary (`cargo test -p runner --test it`): a module per
//! area, each of which once was a test binary of its own, and [`common`], what they share (the
//! runner, the workbook, a scratch root, the broken-kernel mutants). The fixtures they read stay
//! in `runner/tests/fixtures` and the CLI cases in `runner/tests/cmd`. The tests that need a CUDA
//! GPU are `#[ignore]`d with the reason, and every ignored test here is one: on a GPU machine
//! `--ignored` runs exactly them, and `common::require_gpu` holds the GPU for one test at a time.

mod common;

mod attribution;
mod book;
mod book_html;
mod broken12;
mod broken2d;
mod broken_async;
mod broken_bulk;
mod broken_hopper;
mod broken_igemm;
mod broken_table;
mod budgets;
mod cheats;
mod class_report;
mod cli;
mod gpu;
mod gpu_grade;
mod gpu_learner;
mod gpu_resident;
mod gpu_variants;
mod graders;
mod json;
mod layers;
mod list;
mod no_python;
mod outside;
mod profile;
mod profile_full;
mod release;
mod show;
mod validate;
mod variants;
mod watch;
