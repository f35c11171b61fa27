//! NVRTC on any machine: found (CUDA_PATH and CUDA_HOME, the usual CUDA folders, the loader
//! path, Python's site-packages, then the workbook's cache), installed from the pinned wheel
//! with pip when nothing has it, and loaded by absolute path (with its builtins) so that
//! cudarc's lookup by soname finds it. `headers` installs CUDA's header wheels the same way.
#![allow(unsafe_code)] // dlopen of NVRTC by path, and its version: each block says why.

use cudarc::nvrtc::sys;
use spec::diag::{Diagnostic, Kind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The wheel the workbook installs: 13.0 matches the oldest driver we target (PTX from a newer
/// NVRTC is refused by an older driver).
pub const WHEEL: &str = "nvidia-cuda-nvrtc==13.0.88";
/// The library's soname for the pinned CUDA major version (cudarc's `cuda-13000` feature).
const SONAME: &str = "libnvrtc.so.13";
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "NVRTC (the CUDA runtime compiler) was not found, and it could not be installed: {0}\n\
         Install it with `python3 -m pip install {WHEEL}`, or install the CUDA toolkit and set CUDA_PATH."
    )]
    Missing(String),
    #[error("NVRTC at {path} could not be loaded: {why}")]
    Load { path: String, why: LoadFailure },
    #[error("NVRTC failed: {0}")]
    Nvrtc(String),
}

/// Why NVRTC or its builtins could not be opened (kept for the process: `load` answers the
/// first result to every later call, hence shared and cloneable).
#[derive(Clone, Debug, thiserror::Error)]
pub enum LoadFailure {
    /// The library's folder, listed for its builtins.
    #[error("{0}")]
    Folder(std::sync::Arc<std::io::Error>),
    /// The dynamic loader's refusal of the library or a builtin.
    #[error("{0}")]
    Open(std::sync::Arc<libloading::Error>),
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

static LOADED: OnceLock<Result<String, LoadFailure>> = OnceLock::new();

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

/// Makes NVRTC's builtins resident in this process, once: where NVRTC was loaded by path they
/// already are (`load`); where it was found by soname (cudarc's own lookup, or
/// `Location::LoaderPath`), NVRTC opens them by soname at its first compile, which needs the
/// loader's cache (`/etc/ld.so.cache`) that a compile confined by `sandbox` cannot read. Opened
/// here first, NVRTC's own open finds them loaded. Best effort: a failure is NVRTC's to report.
pub fn preload_builtins() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if loaded_path().is_some() {
            return;
        }
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        let soname = format!("{}-builtins.so.13.0", SONAME.trim_end_matches(".so.13"));
        // SAFETY: the builtins' initializers have no preconditions; the handle is leaked on
        // purpose, so that they stay loaded for NVRTC.
        if let Ok(handle) = unsafe { Library::open(Some(&soname), RTLD_NOW | RTLD_GLOBAL) } {
            std::mem::forget(handle);
        }
    });
}

/// The NVRTC library loaded, where it was loaded by path.
pub(crate) fn loaded_path() -> Option<PathBuf> {
    let path = PathBuf::from(LOADED.get()?.as_ref().ok()?);
    path.is_absolute().then_some(path)
}

fn open_global(path: &Path) -> Result<(), LoadFailure> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builtins: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| LoadFailure::Folder(e.into()))?
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
        std::mem::forget(handle.map_err(|e| LoadFailure::Open(e.into()))?);
    }
    Ok(())
}
