//! The headers a learner's `#include` may name, for NVRTC 13.0, which ships none of its own.
//!
//! The C and C++ library headers that make sense on a device (`<stdio.h>`/`<cstdio>`,
//! `<math.h>`/`<cmath>`, `<stdint.h>`/`<cstdint>`, `<assert.h>`/`<cassert>`) are the workbook's
//! own, in `kernels/toolchain/include/`, built into the binary and handed to NVRTC by name: NVRTC already
//! declares `printf`, `assert` and the math functions, so these add only the names and macros a
//! host header would (`std::sqrt`, `INFINITY`, `int32_t`, ...). CUDA's own headers
//! (`<cuda_fp16.h>`, `<cuda_bf16.h>`, ...) come from a CUDA install or from the pinned
//! `nvidia-cuda-runtime` and `nvidia-cuda-crt` wheels, found like NVRTC and installed the same way into the cache, only
//! when a source includes a header that is not one of the workbook's.

#![allow(unsafe_code)] // nvrtcCreateProgram with the headers: the call says why it is sound.

use crate::library::{Error, cache_dir, pip_install};
use cudarc::nvrtc::{result, sys};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The wheels with CUDA's headers, of the same CUDA release as the pinned NVRTC: the runtime's
/// (`cuda_fp16.h`, `mma.h`, ...) and the `crt/` folder those include (`mma.h` is a front for
/// `crt/mma.h`).
pub const HEADER_WHEELS: &[&str] = &["nvidia-cuda-runtime==13.0.88", "nvidia-cuda-crt==13.0.88"];

/// The workbook's headers: the name a source includes, and the text.
pub const OWN: &[(&str, &str)] = &[
    ("stdio.h", include_str!("../include/stdio.h")),
    ("cstdio", include_str!("../include/cstdio")),
    ("math.h", include_str!("../include/math.h")),
    ("cmath", include_str!("../include/cmath")),
    ("stdint.h", include_str!("../include/stdint.h")),
    ("cstdint", include_str!("../include/cstdint")),
    ("assert.h", include_str!("../include/assert.h")),
    ("cassert", include_str!("../include/cassert")),
];

/// The names `code` includes (`#include <x>` or `"x"`).
pub fn included(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim();
            let close = match rest.chars().next()? {
                '<' => '>',
                '"' => '"',
                _ => return None,
            };
            let name = &rest[1..];
            Some(name[..name.find(close)?].to_string())
        })
        .collect()
}

/// The `-I` folders `code` needs: CUDA's headers when it includes one that is not the
/// workbook's own. `None` inside when they could not be found or installed (NVRTC then says
/// which file it could not open).
pub fn include_dirs(code: &str) -> Vec<PathBuf> {
    let foreign = included(code)
        .iter()
        .any(|name| OWN.iter().all(|(own, _)| own != name));
    if !foreign {
        return vec![];
    }
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| locate().or_else(|| install().ok()))
        .iter()
        .cloned()
        .collect()
}

fn has_headers(dir: &Path) -> bool {
    dir.join("cuda_fp16.h").is_file() && dir.join("crt").join("mma.h").is_file()
}

fn wheel_include(site: &Path) -> PathBuf {
    site.join("nvidia").join("cu13").join("include")
}

/// CUDA's headers in a CUDA install, Python's site-packages or the workbook's cache.
pub fn locate() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("include"))
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/include"));
    dirs.extend(
        crate::library::python_site_dirs()
            .iter()
            .map(|s| wheel_include(s)),
    );
    dirs.push(wheel_include(&cache_dir().join("headers")));
    dirs.into_iter().find(|d| has_headers(d))
}

/// Installs [`HEADER_WHEELS`] into the cache (under the same lock as NVRTC's install).
pub fn install() -> Result<PathBuf, Error> {
    let target = cache_dir().join("headers");
    std::fs::create_dir_all(cache_dir()).map_err(|e| Error::Missing(e.to_string()))?;
    let lock = std::fs::File::create(cache_dir().join("nvrtc.lock"))
        .map_err(|e| Error::Missing(e.to_string()))?;
    lock.lock().map_err(|e| Error::Missing(e.to_string()))?;
    if !has_headers(&wheel_include(&target)) {
        pip_install(HEADER_WHEELS, &target)?;
    }
    Ok(wheel_include(&target))
}

/// A program of `code` named `name`, with the workbook's own headers (`crate::headers::OWN`).
pub(crate) fn create(
    code: &std::ffi::CStr,
    name: &std::ffi::CStr,
) -> Result<sys::nvrtcProgram, result::NvrtcError> {
    let own = crate::headers::OWN;
    let texts: Vec<CString> = own
        .iter()
        .map(|(_, t)| CString::new(*t).expect("no NUL"))
        .collect();
    let names: Vec<CString> = own
        .iter()
        .map(|(n, _)| CString::new(*n).expect("no NUL"))
        .collect();
    let text_ptrs: Vec<*const std::ffi::c_char> = texts.iter().map(|t| t.as_ptr()).collect();
    let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let mut prog = std::mem::MaybeUninit::uninit();
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call, and the two
    // arrays hold `own.len()` entries each; NVRTC copies what it keeps.
    unsafe {
        sys::nvrtcCreateProgram(
            prog.as_mut_ptr(),
            code.as_ptr(),
            name.as_ptr(),
            own.len() as i32,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
        .result()?;
        Ok(prog.assume_init())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_are_read_in_both_forms() {
        let code = "#include <cmath>\n  #  include \"cuda_fp16.h\"\n// #include <x>\nint x;";
        assert_eq!(included(code), vec!["cmath", "cuda_fp16.h"]);
    }

    #[test]
    fn only_the_workbooks_own_headers_need_no_folder() {
        assert!(include_dirs("#include <cstdio>\n#include <stdint.h>\n").is_empty());
    }
}
