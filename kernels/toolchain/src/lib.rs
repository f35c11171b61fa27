//! The CUDA toolchain on any machine, in layers: [`library`] finds, installs and loads NVRTC;
//! [`source`] says what one compile takes (the source, its target and options); [`headers`]
//! gives NVRTC the workbook's own and CUDA's headers; [`cache`] keys and places compiled output
//! on disk; [`cubin`] reads a compiled kernel's register count; [`compile_log`] (with [`lookalike`] for characters that only look like ASCII) and
//! [`warnings`] read NVRTC's log for the learner; [`include_guard`] and [`sandbox`] keep a
//! submission from reading anything but itself; [`nvrtc`] compiles, on top of them all.
//!
//! This crate may import `spec` (for diagnostics and the cache folder) and nothing else of the
//! workspace: the simulator and the GPU backend take what it compiles.

pub mod cache;
pub mod compile_log;
pub mod cubin;
pub mod headers;
pub mod include_guard;
pub mod library;
pub mod lookalike;
pub mod nvrtc;
pub mod sandbox;
pub mod source;
pub mod warnings;
