//! Tests only: the simulator (`sim`) run on CUDA compiled by `toolchain`, compared with the GPU
//! (`gpu`) where there is one, fixture by fixture and instruction family by family. This crate
//! sits above every other crate of `kernels/` and nothing depends on it.
