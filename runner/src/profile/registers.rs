//! The registers a thread of the kernel takes on an H100, which the occupancy is computed from:
//! read from the CUBIN NVRTC makes for sm_90 (`toolchain::cubin`), as `ptxas` allotted them.

use toolchain::source::{Compiled, Source, Target};

/// The registers a thread of the kernel `ptx` (compiled from `code`, as `file`, with `macros`)
/// takes on an H100; `None` where the CUBIN cannot be compiled or read.
pub fn registers(code: &str, file: &str, macros: &[(String, String)], ptx: &str) -> Option<u32> {
    let kernel = *toolchain::cubin::entries(ptx).first()?;
    let source = Source { code, file, macros };
    match toolchain::nvrtc::compile(&source, &Target::Cubin { major: 9, minor: 0 }) {
        Ok(Compiled::Cubin(bytes)) => toolchain::cubin::registers(&bytes, kernel).ok(),
        _ => None,
    }
}
