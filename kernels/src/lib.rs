//! Compile CUDA with NVRTC and run it on the GPU or in the PTX simulator.
//!
//! The runner hands this crate a learner's source and a [`job::Job`]; it gets back a
//! [`job::RunOutput`] with the outputs and any [`diag::Diagnostic`]s. Nothing here prints or
//! exits: errors are values, so that a broken kernel never takes the runner down.

pub mod bench;
mod capture;
pub mod compile_log;
pub mod diag;
pub mod entry;
pub mod fuzz;
pub mod gemm_shape;
pub mod gpu;
pub mod gpu_faults;
pub mod headers;
pub mod job;
pub mod lookalike;
pub mod nvrtc;
pub mod refcache;
pub mod shape;
pub mod sim;
pub mod spec;
pub mod tile_shape;
pub mod warnings;
pub mod wire;
pub mod worker;

pub use diag::{Diagnostic, Kind};
pub use job::{Arg, Budget, ConstUpload, Job, Launch, RunOutput, TENSOR_CORE_BUDGET};
pub use spec::{Case, DeclaredLaunch, Param, ParamType, Puzzle, Scale, Tolerance};
