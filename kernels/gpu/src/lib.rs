//! The GPU backend on cudarc, and the worker process it runs in.
//!
//! [`device`] detects a device, compiles a CUBIN for its arch, launches and reads back, its
//! buffers made, poisoned and zeroed before they are freed by `buffers`;
//! [`worker`] is the child process that owns the CUDA context, spoken to over [`wire`], so that
//! an illegal address or an endless loop ends the child, not the learner's session; `message`
//! holds what a check and its worker say to each other, and [`pool`] keeps workers alive across
//! checks, [`resident`] the full-scale cases inside them;
//! [`gpu_faults`] turns what a fault left behind into diagnostics; [`bench`] times kernels with
//! device events and measures the device's peaks; `capture` keeps a kernel's `printf`; `maps`
//! encodes the tensor maps a kernel declares with the driver and writes them into its globals;
//! [`trace`] times a check's phases on both sides (`CONV_WORKBOOK_TRACE=1`); [`scratch`] keeps the
//! large host buffers a worker reads back into.
//!
//! This crate may import `spec` and `toolchain`; the simulator is only a dev-dependency (the
//! tests compare the two backends). The runner sits above it.

pub mod bench;
mod buffers;
mod capture;
mod device;
pub mod gpu_faults;
mod maps;
pub mod message;
pub mod pool;
pub mod resident;
pub mod scratch;
pub mod trace;
pub mod wire;
pub mod worker;

pub use buffers::wipe;
pub use device::*;
