//! The CUDA toolchain on any machine: NVRTC found or installed from its wheel ([`nvrtc`]), the
//! workbook's own and CUDA's headers ([`headers`]), a kernel compiled to PTX or a CUBIN and
//! cached, NVRTC's log turned into diagnostics at the learner's line ([`compile_log`],
//! [`lookalike`] for characters that only look like ASCII) and its warnings kept
//! ([`warnings`]).
//!
//! This crate may import `spec` (for diagnostics and the cache folder) and nothing else of the
//! workspace: the simulator and the GPU backend take what it compiles.

pub mod compile_log;
pub mod headers;
pub mod include_guard;
pub mod lookalike;
pub mod nvrtc;
pub mod sandbox;
pub mod warnings;
