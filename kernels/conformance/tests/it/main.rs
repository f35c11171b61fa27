//! The simulator's conformance tests, in one binary (`cargo test -p conformance --test it`): a
//! module per family, each of which once was a test binary of its own, and the helpers they
//! share: [`common`] (fixtures, NVRTC, the puzzle-shaped job), [`sync`] (the warp-specialized
//! kernels of `sync/barriers.cu`) and [`tensor`] (the tensor-core fixtures). The tests that need
//! a CUDA GPU (`gpu_*`) are `#[ignore]`d with the reason, and every ignored test here is one: on a
//! GPU machine `--ignored` runs exactly them.

mod common;
mod sync;
mod tensor;

mod fuzz_sim;
mod gpu_barriers;
mod gpu_mma;
mod headers;
mod sim_broken;
mod sim_bulk;
mod sim_collectives;
mod sim_conv;
mod sim_elect;
mod sim_families;
mod sim_faults;
mod sim_intrin;
mod sim_kernels;
mod sim_mbarrier;
mod sim_mma;
mod sim_named_barriers;
mod sim_observe;
mod sim_parse;
mod sim_redux;
mod sim_shared;
mod sim_tma;
mod sim_used_bytes;
mod sim_wgmma;
mod sim_wild;
mod sim_wmma;
