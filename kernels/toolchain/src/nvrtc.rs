//! NVRTC: find it, install it when missing, and compile a learner's CUDA to PTX or CUBIN.
//!
//! NVRTC is a shared library and needs no GPU. [`locate`] searches, in order: `CUDA_PATH` and
//! `CUDA_HOME`, the usual install folders, the loader path, the Python site-packages of the
//! `nvidia-cuda-nvrtc` wheel, then the workbook's own cache; a wheel's library once found is
//! remembered in the cache (`nvrtc.location`), so later checks start no Python process. [`install`] puts the pinned wheel into
//! that cache with pip. [`load`] opens the library by absolute path (with its builtins) before
//! cudarc's first call, so cudarc's own lookup by soname finds it already loaded instead of
//! panicking. Compiled output is cached in memory and on disk, keyed by source, options and NVRTC
//! version: the same kernel is compiled once.
#![allow(unsafe_code)] // dlopen of NVRTC by path, and NVRTC's CUBIN calls: each block says why.

pub use crate::cache::{cache_key, cached_path};
pub use crate::compile_log::compile_error;
pub use crate::library::*;
pub use crate::source::*;
use cudarc::nvrtc::{result, sys};
use spec::diag::{Diagnostic, Kind};
use std::ffi::CString;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

type Memo = Mutex<std::collections::HashMap<u64, Result<Compiled, Diagnostic>>>;

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(Default::default)
}

/// Compiles `source` for `target`. A compile error is a [`Kind::CompileError`] diagnostic carrying
/// NVRTC's log at the learner's file and first error line. NVRTC must be [`load`]ed first.
pub fn compile(source: &Source<'_>, target: &Target) -> Result<Compiled, Diagnostic> {
    let key = cache_key(source, target);
    if let Some(hit) = memo().lock().expect("memo lock").get(&key) {
        return hit.clone();
    }
    // A submission reads nothing but itself: checked before the cache can answer for it.
    crate::include_guard::check_source(source)?;
    let on_disk = cached_path(key, target);
    let cached = std::fs::read(&on_disk).ok().map(|bytes| match target {
        Target::Ptx => Compiled::Ptx(String::from_utf8_lossy(&bytes).into_owned()),
        Target::Cubin { .. } => Compiled::Cubin(bytes),
    });
    let result = match cached {
        Some(hit) => Ok(hit),
        None => crate::sandbox::confined(source, || compile_uncached(source, target))
            .and_then(|r| r)
            .map(|(compiled, log)| {
                crate::warnings::keep(key, &log, &on_disk);
                compiled
            }),
    };
    if let Ok(compiled) = &result {
        // A failed write only costs a recompilation next time.
        let bytes = match compiled {
            Compiled::Ptx(text) => text.as_bytes(),
            Compiled::Cubin(bytes) => bytes,
        };
        let _ = std::fs::create_dir_all(on_disk.parent().expect("a cache folder"));
        let partial = on_disk.with_extension(format!("partial{}", std::process::id()));
        if std::fs::write(&partial, bytes).is_ok() {
            let _ = std::fs::rename(&partial, &on_disk);
        }
    }
    memo()
        .lock()
        .expect("memo lock")
        .insert(key, result.clone());
    result
}

/// The compiled output and NVRTC's log (its warnings), or the compile error.
pub(crate) fn compile_uncached(
    source: &Source<'_>,
    target: &Target,
) -> Result<(Compiled, String), Diagnostic> {
    let nvrtc_error =
        |e: result::NvrtcError| Diagnostic::new(Kind::NvrtcMissing, format!("NVRTC failed: {e:?}"));
    let code = CString::new(source.code).map_err(|e| nul_byte(source, e.nul_position()))?;
    let name = CString::new(source.file).unwrap_or_else(|_| c"kernel.cu".to_owned());
    let prog = crate::headers::create(&code, &name).map_err(nvrtc_error)?;
    let opts = options(source, target);
    // SAFETY: `prog` was just created and is destroyed below; the options outlive the call.
    let compiled = unsafe { result::compile_program(prog, &opts) };
    // SAFETY: `prog` is a live program; the log is copied out before it is destroyed.
    let log = unsafe { result::get_program_log(prog) }
        .map(|chars| {
            String::from_utf8_lossy(&chars.iter().map(|&c| c as u8).collect::<Vec<_>>())
                .into_owned()
        })
        .unwrap_or_default();
    let log = log.trim_end_matches('\0').trim().to_string();
    let log = crate::include_guard::quiet_source_log(source, &log);
    let output = match compiled {
        Err(_) => Err(compile_error(source, &log)),
        Ok(()) => match target {
            // SAFETY: compilation succeeded, so the PTX is there to copy.
            Target::Ptx => unsafe { result::get_ptx(prog) }
                .map(|chars| {
                    let text = chars
                        .iter()
                        .take_while(|&&c| c != 0)
                        .map(|&c| c as u8 as char)
                        .collect();
                    Compiled::Ptx(relative_file_names(text, source.file))
                })
                .map_err(nvrtc_error),
            Target::Cubin { .. } => cubin(prog).map(Compiled::Cubin).map_err(nvrtc_error),
        },
    };
    // SAFETY: nothing uses `prog` after this.
    let _ = unsafe { result::destroy_program(prog) };
    output.map(|compiled| (compiled, log))
}

/// The compile error of a source with a NUL byte at byte `at`: its line and column.
fn nul_byte(source: &Source<'_>, at: usize) -> Diagnostic {
    let before = &source.code.as_bytes()[..at.min(source.code.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    Diagnostic::new(
        Kind::CompileError,
        format!(
            "line {line}, column {column}: the source contains a NUL byte (a character CUDA source cannot hold): delete it"
        ),
    )
    .at_line(source.file, line as u32)
}

/// NVRTC writes a relative program name into `.file` joined to its working directory; put back
/// the name as the learner knows it, so diagnostics and cached PTX do not depend on where the
/// runner was started.
fn relative_file_names(ptx: String, file: &str) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return ptx;
    };
    if Path::new(file).is_absolute() {
        return ptx;
    }
    let joined = format!("\"{}\"", cwd.join(file).display());
    ptx.replace(&joined, &format!("\"{file}\""))
}

fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, result::NvrtcError> {
    let mut size = 0usize;
    // SAFETY: `prog` is a successfully compiled program; the buffer is sized by NVRTC's answer.
    unsafe {
        sys::nvrtcGetCUBINSize(prog, &mut size).result()?;
        let mut bytes = vec![0u8; size];
        sys::nvrtcGetCUBIN(prog, bytes.as_mut_ptr().cast()).result()?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_byte_is_named_at_its_line() {
        let src = Source {
            code: "int a;\nint b;\nint \0c;\n",
            file: "k.cu",
            macros: &[],
        };
        let d = nul_byte(&src, 18);
        assert_eq!(d.line, Some(3));
        assert!(d.message.starts_with("line 3, column 5:"), "{}", d.message);
    }

    #[test]
    fn options_carry_macros_and_line_info() {
        let macros = [("TPB".to_string(), "8".to_string())];
        let src = Source {
            code: "",
            file: "k.cu",
            macros: &macros,
        };
        let opts = options(&src, &Target::Cubin { major: 9, minor: 0 });
        assert!(opts.contains(&"--gpu-architecture=sm_90".to_string()));
        assert!(opts.contains(&"-DTPB=8".to_string()));
        assert!(opts.contains(&"--generate-line-info".to_string()));
    }

    #[test]
    fn tensor_core_sources_compile_for_compute_80() {
        let opts = |code| {
            let src = Source {
                code,
                file: "k.cu",
                macros: &[],
            };
            options(&src, &Target::Ptx)[0].clone()
        };
        assert_eq!(opts("#include <mma.h>"), "--gpu-architecture=compute_80");
        assert_eq!(
            opts("asm(\"mma.sync.aligned.m16n8k8\");"),
            "--gpu-architecture=compute_80"
        );
        assert_eq!(
            opts("float x; // a summand"),
            "--gpu-architecture=compute_75"
        );
    }

    #[test]
    fn wgmma_sources_compile_for_sm_90a() {
        let src = |code| Source {
            code,
            file: "k.cu",
            macros: &[],
        };
        let arch = |code, t: &Target| options(&src(code), t)[0].clone();
        let code = "asm volatile(\"wgmma.fence.sync.aligned;\");";
        assert_eq!(arch(code, &Target::Ptx), "--gpu-architecture=compute_90a");
        let h100 = Target::Cubin { major: 9, minor: 0 };
        let a100 = Target::Cubin { major: 8, minor: 0 };
        assert_eq!(arch(code, &h100), "--gpu-architecture=sm_90a");
        assert_eq!(arch(code, &a100), "--gpu-architecture=sm_80");
        assert_eq!(arch("float x;", &h100), "--gpu-architecture=sm_90");
        assert_eq!(
            arch(
                "asm(\"setmaxnreg.inc.sync.aligned.u32 240;\");",
                &Target::Ptx
            ),
            "--gpu-architecture=compute_90a"
        );
    }
}

#[cfg(test)]
mod file_name_tests {
    use super::*;

    #[test]
    fn file_names_lose_the_working_directory() {
        let cwd = std::env::current_dir().unwrap();
        let ptx = format!("\t.file\t1 \"{}\"\n", cwd.join("puzzles/p.cu").display());
        assert_eq!(
            relative_file_names(ptx, "puzzles/p.cu"),
            "\t.file\t1 \"puzzles/p.cu\"\n"
        );
        let absolute = "\t.file\t1 \"/elsewhere/p.cu\"\n".to_string();
        assert_eq!(
            relative_file_names(absolute.clone(), "/elsewhere/p.cu"),
            absolute
        );
    }
}
