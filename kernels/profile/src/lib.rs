//! The performance model behind `runner profile`, with no GPU: [`Profiler`], an observer of the
//! simulator (`sim::observe`) that counts per PTX instruction what the hardware would be asked to
//! do (`profiler`), each sampled warp's critical path ([`Critical`]), the blocks an SM holds
//! ([`occupancy`]), and the time those counts predict on an H100 ([`predict`], `model`, with the
//! GPU's constants and their sources in `h100`).
//!
//! Nothing here compiles a kernel, builds a case or prints: the runner (`runner/src/profile/`)
//! compiles, samples the blocks, runs the simulator with a [`Profiler`], turns its counts into a
//! [`Load`] and prints the prediction. Nothing fails here either: every function is total over
//! its counts, so the crate has no error type.
//!
//! Layers: this crate imports `ptx` (the decoded program, and each instruction's operands and
//! class, `ptx::ir::{Operands, Mix}`) and `sim` (its observer hooks); no crate of `kernels/`
//! imports it, the runner does.

mod constcache;
mod critical;
mod h100;
mod model;
mod occupancy;
mod profiler;
mod queueing;

pub use critical::{Critical, block_path};
pub use h100::{Gpu, H100};
pub use model::{Load, Prediction, predict};
pub use occupancy::{Occupancy, SmLimits, occupancy};
pub use profiler::{Counts, Profiler};
