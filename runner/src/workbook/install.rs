//! Makes NVRTC available to this process, installing it once when it is missing.
//!
//! The search itself is `toolchain::nvrtc`; this module adds what a person sees: a line on stderr
//! before a download, and a `nvrtc_missing` diagnostic (with what to install) when nothing works.

use spec::Diagnostic;
use toolchain::nvrtc;

/// Finds, installs if needed, and loads NVRTC. Returns a one-line description of what was loaded.
pub fn ensure_nvrtc() -> Result<String, Diagnostic> {
    let location = match nvrtc::locate() {
        Some(location) => location,
        None => {
            eprintln!(
                "NVRTC (the CUDA compiler library) was not found: installing {} into {} with pip (once, about 60 MB)...",
                nvrtc::WHEEL,
                nvrtc::cache_dir().join("nvrtc").display()
            );
            nvrtc::install()
                .map(nvrtc::Location::Path)
                .map_err(|e| e.diagnostic())?
        }
    };
    nvrtc::load(&location).map_err(|e| e.diagnostic())
}
