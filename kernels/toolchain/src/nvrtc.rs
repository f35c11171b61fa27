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

pub use crate::compile_log::compile_error;
use cudarc::nvrtc::{result, sys};
use spec::diag::{Diagnostic, Kind};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The wheel the workbook installs: 13.0 matches the oldest driver we target (PTX from a newer
/// NVRTC is refused by an older driver).
pub const WHEEL: &str = "nvidia-cuda-nvrtc==13.0.88";
/// The library's soname for the pinned CUDA major version (cudarc's `cuda-13000` feature).
const SONAME: &str = "libnvrtc.so.13";
/// The lowest virtual architecture NVRTC 13 accepts; the simulator reads its PTX.
pub const PTX_ARCH: &str = "compute_75";
/// The architecture of a source that uses the tensor cores' tf32 or bf16 forms, `mma.sync` or
/// `ldmatrix` (compute capability 8.0): one that names `mma.h`, `wmma`, `mma.sync`, `tf32`,
/// `bf16` or `ldmatrix`.
pub const TENSOR_ARCH: &str = "compute_80";
/// The architecture of a source that uses Hopper's architecture-specific instructions, `wgmma`
/// or `setmaxnreg` (compute capability 9.0a): its PTX for the simulator is `compute_90a`, its
/// cubin on a 9.0 device `sm_90a`. NVRTC defines `__CUDA_ARCH_FEAT_SM90_ALL` for these two and
/// not for `sm_90`, so a source guards its `wgmma` path with that macro.
pub const HOPPER_ARCH: &str = "compute_90a";

/// Whether the source uses an instruction that exists only for `sm_90a`.
fn hopper_specific(code: &str) -> bool {
    ["wgmma", "setmaxnreg"].iter().any(|w| code.contains(w))
}

fn ptx_arch(code: &str) -> &'static str {
    if hopper_specific(code) {
        return HOPPER_ARCH;
    }
    let tensor = ["mma.h", "wmma", "mma.sync", "tf32", "bf16", "ldmatrix"];
    if tensor.iter().any(|w| code.contains(w)) {
        TENSOR_ARCH
    } else {
        PTX_ARCH
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "NVRTC (the CUDA runtime compiler) was not found, and it could not be installed: {0}\n\
         Install it with `python3 -m pip install {WHEEL}`, or install the CUDA toolkit and set CUDA_PATH."
    )]
    Missing(String),
    #[error("NVRTC at {path} could not be loaded: {why}")]
    Load { path: String, why: String },
    #[error("NVRTC failed: {0}")]
    Nvrtc(String),
}

impl Error {
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(Kind::NvrtcMissing, self.to_string())
    }
}

pub use spec::cache_dir;

fn wheel_lib_dir(site: &Path) -> PathBuf {
    site.join("nvidia").join("cu13").join("lib")
}

/// Folders of a CUDA install that may hold `libnvrtc.so.13`, searched before the loader path.
fn install_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(&root).join("lib64"));
            dirs.push(PathBuf::from(&root).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    dirs
}

/// Folders of the `nvidia-cuda-nvrtc` wheel, searched after the loader path: Python's
/// site-packages, then the workbook's own cache.
fn wheel_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = python_site_dirs()
        .iter()
        .map(|s| wheel_lib_dir(s))
        .collect();
    dirs.push(wheel_lib_dir(&cache_dir().join("nvrtc")));
    dirs
}

pub(crate) fn python_site_dirs() -> Vec<PathBuf> {
    let script =
        "import site,sys; print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))";
    Command::new("python3")
        .args(["-c", script])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Where NVRTC was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A file path, loaded by absolute path.
    Path(PathBuf),
    /// Found by the dynamic loader under its soname.
    LoaderPath,
}

/// Searches for NVRTC without loading it into this process for good.
pub fn locate() -> Option<Location> {
    let in_dirs = |dirs: Vec<PathBuf>| {
        dirs.into_iter()
            .map(|d| d.join(SONAME))
            .find(|lib| lib.is_file())
            .map(Location::Path)
    };
    // SAFETY: opening NVRTC runs only its initializers; the handle is dropped at once.
    let on_loader_path = || unsafe { libloading::Library::new(SONAME) }.is_ok();
    in_dirs(install_dirs())
        .or_else(|| on_loader_path().then_some(Location::LoaderPath))
        .or_else(remembered)
        .or_else(|| {
            let found = in_dirs(wheel_dirs());
            if let Some(Location::Path(lib)) = &found {
                // Asking Python where its site-packages are costs a process (and seconds on a
                // cold start) on every check: keep the answer. A failed write costs only that.
                let _ = std::fs::create_dir_all(cache_dir());
                let _ = std::fs::write(remembered_file(), lib.display().to_string());
            }
            found
        })
}

/// The file where the wheel's library, once found, is remembered.
fn remembered_file() -> PathBuf {
    cache_dir().join("nvrtc.location")
}

/// The wheel's library as found before, while it is still there.
fn remembered() -> Option<Location> {
    let lib = PathBuf::from(std::fs::read_to_string(remembered_file()).ok()?.trim());
    lib.is_file().then_some(Location::Path(lib))
}

/// Installs the pinned wheel into the cache with pip, under a lock so that parallel runners (or
/// test processes) install it once. Returns the library's path.
pub fn install() -> Result<PathBuf, Error> {
    let target = cache_dir().join("nvrtc");
    let lib = wheel_lib_dir(&target).join(SONAME);
    std::fs::create_dir_all(cache_dir()).map_err(|e| Error::Missing(e.to_string()))?;
    let lock = std::fs::File::create(cache_dir().join("nvrtc.lock"))
        .map_err(|e| Error::Missing(e.to_string()))?;
    lock.lock().map_err(|e| Error::Missing(e.to_string()))?;
    if lib.is_file() {
        return Ok(lib);
    }
    pip_install(&[WHEEL], &target)?;
    Ok(lib)
}

/// Installs `wheel` (no dependencies) into `target` with pip, through a staging folder so that
/// an interrupted install leaves nothing half there. The caller holds the cache's lock.
pub(crate) fn pip_install(wheels: &[&str], target: &Path) -> Result<(), Error> {
    let staging = target.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
        ])
        .arg("--target")
        .arg(&staging)
        .args(wheels)
        .output()
        .map_err(|e| Error::Missing(format!("python3 could not be run ({e})")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Missing(format!("pip failed: {}", why.trim())));
    }
    let _ = std::fs::remove_dir_all(target);
    std::fs::rename(&staging, target).map_err(|e| Error::Missing(e.to_string()))
}

static LOADED: OnceLock<Result<String, String>> = OnceLock::new();

/// Loads NVRTC from `location` for the rest of the process, with its builtins, so that cudarc
/// finds it. Returns a description of what was loaded. Later calls return the first result.
pub fn load(location: &Location) -> Result<String, Error> {
    let loaded = LOADED.get_or_init(|| match location {
        Location::LoaderPath => Ok(SONAME.to_string()),
        Location::Path(path) => open_global(path).map(|()| path.display().to_string()),
    });
    let what = loaded.clone().map_err(|why| Error::Load {
        path: format!("{location:?}"),
        why,
    })?;
    // SAFETY: the library is loaded (above); the version call writes two ints.
    let version = unsafe {
        let (mut major, mut minor) = (0, 0);
        sys::nvrtcVersion(&mut major, &mut minor);
        (major, minor)
    };
    Ok(format!("{what} (NVRTC {}.{})", version.0, version.1))
}

/// The NVRTC library loaded, where it was loaded by path.
pub(crate) fn loaded_path() -> Option<PathBuf> {
    let path = PathBuf::from(LOADED.get()?.as_ref().ok()?);
    path.is_absolute().then_some(path)
}

fn open_global(path: &Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builtins: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("libnvrtc-builtins.so.") && !name.contains(".alt.")
        })
        .collect();
    builtins.sort();
    for lib in builtins.iter().chain(std::iter::once(&path.to_path_buf())) {
        // SAFETY: NVRTC's initializers have no preconditions. The handle is leaked on purpose:
        // NVRTC must stay loaded for the life of the process, and cudarc's later dlopen by soname
        // returns this same, already loaded, library.
        let handle = unsafe { Library::open(Some(lib), RTLD_NOW | RTLD_GLOBAL) };
        std::mem::forget(handle.map_err(|e| e.to_string())?);
    }
    Ok(())
}

/// What to compile for: PTX for the simulator, or CUBIN for one real GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Ptx,
    /// `sm_XY` for compute capability X.Y.
    Cubin {
        major: i32,
        minor: i32,
    },
}

/// One compilation's inputs: the learner's source and how to compile it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source<'a> {
    pub code: &'a str,
    /// The path shown in errors and written into `.loc`/`.file`, as the learner knows it.
    pub file: &'a str,
    pub macros: &'a [(String, String)],
}

/// A compiled module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compiled {
    Ptx(String),
    Cubin(Vec<u8>),
}

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
        None => crate::sandbox::confined(source, || compile_uncached(source, target)).map(
            |(compiled, log)| {
                crate::warnings::keep(key, &log, &on_disk);
                compiled
            },
        ),
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

/// Where the output of the compile keyed `key` is cached on disk.
pub(crate) fn cached_path(key: u64, target: &Target) -> PathBuf {
    let ext = match target {
        Target::Ptx => "ptx",
        Target::Cubin { .. } => "cubin",
    };
    cache_dir()
        .join("compiled")
        .join(format!("{key:016x}.{ext}"))
}

/// A key that is the same in every process and every build of this version: FNV-1a over the
/// source, the file name, the options and NVRTC's version. (The PTX is made independent of the
/// working directory by [`relative_file_names`], so the cache holds across checkouts.)
pub(crate) fn cache_key(source: &Source<'_>, target: &Target) -> u64 {
    // SAFETY: NVRTC is loaded before any compile (see `load`); the call writes two ints.
    let version = unsafe {
        let (mut major, mut minor) = (0, 0);
        sys::nvrtcVersion(&mut major, &mut minor);
        (major, minor)
    };
    // `logs`: entries cached before NVRTC's log was kept beside them are not reused; `own`: the
    // workbook's own headers are part of what compiles.
    let own: String = crate::headers::OWN.iter().map(|(_, t)| *t).collect();
    let text = format!(
        "{}\0{}\0{}\0{version:?}\0{}\0logs\0{own}",
        source.code,
        source.file,
        options(source, target).join(" "),
        env!("CARGO_PKG_VERSION")
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn options(source: &Source<'_>, target: &Target) -> Vec<String> {
    let arch = match target {
        Target::Ptx => ptx_arch(source.code).to_string(),
        Target::Cubin { major: 9, minor: 0 } if hopper_specific(source.code) => {
            "sm_90a".to_string()
        }
        Target::Cubin { major, minor } => format!("sm_{major}{minor}"),
    };
    let mut opts = vec![
        format!("--gpu-architecture={arch}"),
        "--generate-line-info".to_string(),
        "--std=c++17".to_string(),
    ];
    opts.extend(source.macros.iter().map(|(k, v)| format!("-D{k}={v}")));
    opts.extend(
        crate::headers::include_dirs(source.code)
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    opts
}

/// The compiled output and NVRTC's log (its warnings), or the compile error.
pub(crate) fn compile_uncached(
    source: &Source<'_>,
    target: &Target,
) -> Result<(Compiled, String), Diagnostic> {
    let nvrtc_error =
        |e: result::NvrtcError| Diagnostic::new(Kind::NvrtcMissing, format!("NVRTC failed: {e:?}"));
    let code = CString::new(source.code).map_err(|_| {
        Diagnostic::new(Kind::CompileError, "the source contains a NUL byte")
            .at_line(source.file, 1)
    })?;
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
