//! The compile of a learner's source in a thread that can read only what a compile needs: the
//! source's own folder, the header folders, NVRTC's folder and the workbook's cache, and write
//! nothing. NVRTC opens every file an `#include` names itself, so this is where "a submission
//! reads nothing but itself" is enforced, beneath the text check of [`crate::include_guard`].
//!
//! Linux's Landlock (kernel 5.13 and later, through the `landlock` crate) restricts the calling
//! thread and whatever it starts, for good: each compile gets a fresh thread, restricted before
//! NVRTC runs in it, and the rest of the process keeps its rights (it writes the cache after). A
//! new thread costs microseconds, where a child process would cost a runner's start per compile.
//! A grade's compiles fail closed ([`fail_closed`], which `runner grade` and `runner gradescope`
//! call): where Landlock cannot be enforced (an older kernel, a container whose seccomp refuses
//! it, another OS), [`protection`] says so before any compile, and [`crate::include_guard`] then
//! refuses every `#include` but CUDA's headers; a compile whose confinement fails after all is
//! refused rather than run unconfined. A learner's own check on their own machine keeps its
//! local includes either way. The runner's cache is not
//! readable from the compile: NVRTC's library and the header folder (which may lie inside it) are,
//! its other files (`nvrtc.location`, compiled kernels, references) are not.
//!
//! Setting `CONV_WORKBOOK_NO_LANDLOCK` (to anything) makes Landlock count as unavailable: how the
//! tests check the fallback on a machine that has it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// Set by [`fail_closed`].
static GRADING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every later compile of this process fail closed: strict includes where Landlock cannot
/// be enforced, and no compile where its confinement does not take hold.
pub fn fail_closed() {
    GRADING.store(true, Ordering::Relaxed);
}

/// Whether compiles fail closed ([`fail_closed`]).
pub fn failing_closed() -> bool {
    GRADING.load(Ordering::Relaxed)
}

/// The variable that makes Landlock count as unavailable (for tests of the fallback).
pub const NO_LANDLOCK: &str = "CONV_WORKBOOK_NO_LANDLOCK";

/// What keeps a compile from reading outside the submission, decided once per process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Landlock confines each compile to the submission's folder and the compiler's.
    Landlock,
    /// No confinement is possible here (the reason): every include but CUDA's headers is refused.
    HeadersOnly(String),
}

impl Protection {
    /// One line for a report: which protection was in force.
    pub fn describe(&self) -> String {
        match self {
            Protection::Landlock => "landlock: each compile could read only the submission's own folder, CUDA's headers and NVRTC".into(),
            Protection::HeadersOnly(why) => format!(
                "headers-only: {why}, so every #include but CUDA's headers was refused"
            ),
        }
    }

    /// A short name for a CSV or JSON field: `landlock` or `headers-only`.
    pub fn name(&self) -> &'static str {
        match self {
            Protection::Landlock => "landlock",
            Protection::HeadersOnly(_) => "headers-only",
        }
    }
}

/// The protection compiles run under here: Landlock when a thread can be restricted by it (tried
/// once, on a thread of its own), headers-only otherwise.
pub fn protection() -> &'static Protection {
    static PROBED: OnceLock<Protection> = OnceLock::new();
    PROBED.get_or_init(|| {
        if std::env::var_os(NO_LANDLOCK).is_some() {
            return Protection::HeadersOnly(format!("Landlock is turned off ({NO_LANDLOCK})"));
        }
        let probe = std::thread::spawn(|| restrict(&[])).join();
        if probe.unwrap_or(false) {
            Protection::Landlock
        } else {
            Protection::HeadersOnly(
                "Landlock is not available (a Linux kernel before 5.13, a container that refuses it, or another OS)".into(),
            )
        }
    })
}

/// 0: not tried yet, 1: Landlock enforced the last restriction, 2: not available here.
static LAST: AtomicU8 = AtomicU8::new(0);

/// Whether the last compile ran under Landlock (`None` before the first).
pub fn enforced() -> Option<bool> {
    match LAST.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n == 1),
    }
}

/// The folders a compile may read besides the source's own: header folders, NVRTC's own and
/// CUDA's install folders; not the rest of the runner's cache.
pub fn compiler_folders(include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = include_dirs.to_vec();
    match crate::library::loaded_path() {
        Some(lib) => dirs.extend(lib.parent().map(Path::to_path_buf)),
        // Loaded by soname from the loader's path: NVRTC's builtins are somewhere below these.
        None => dirs.extend(["/usr/lib", "/usr/lib64", "/lib", "/lib64"].map(PathBuf::from)),
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        dirs.extend(std::env::var_os(var).map(PathBuf::from));
    }
    dirs.push(PathBuf::from("/usr/local/cuda"));
    dirs
}

/// Runs `compile` (NVRTC on `source`) confined to the source's folder and the compiler's. The
/// header folders are found (and installed) first, outside the confinement. Where Landlock was
/// found ([`protection`]) but does not take hold for this compile, it is not run: `Err` says why.
pub fn confined<T: Send>(
    source: &crate::source::Source<'_>,
    compile: impl FnOnce() -> T + Send,
) -> Result<T, spec::Diagnostic> {
    crate::library::preload_builtins();
    let mut readable = compiler_folders(&crate::headers::include_dirs(source.code));
    readable.push(crate::source::folder_of(source.file));
    let must = failing_closed() && *protection() == Protection::Landlock;
    run(&readable, must, compile).ok_or_else(|| {
        spec::Diagnostic::new(
            spec::Kind::IncludeRefused,
            "the compile could not be confined to your folder this time, so it was not run: check again",
        )
        .at_line(source.file, 1)
    })
}

/// Runs `f` in a new thread that can read only below `readable` (those that exist) and write
/// nothing, where Landlock is available; unrestricted otherwise, unless `must`: then `None`
/// when the restriction did not take hold (`f` is not run).
pub fn run<T: Send>(readable: &[PathBuf], must: bool, f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let on = std::env::var_os(NO_LANDLOCK).is_none() && restrict(readable);
            LAST.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            (on || !must).then(f)
        })
        .join()
        .expect("the compile thread does not panic")
    })
}

#[cfg(target_os = "linux")]
fn restrict(readable: &[PathBuf]) -> bool {
    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V1;
    let existing: Vec<&PathBuf> = readable.iter().filter(|p| p.exists()).collect();
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(existing, AccessFs::from_read(abi))))
        .and_then(|r| r.restrict_self());
    matches!(
        status.map(|s| s.ruleset),
        Ok(RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced)
    )
}

#[cfg(not(target_os = "linux"))]
fn restrict(_: &[PathBuf]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restricted_thread_reads_only_its_folders() {
        let dir = std::env::temp_dir().join(format!("sandbox-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine.txt"), "mine").unwrap();
        let (mine, other) = run(std::slice::from_ref(&dir), false, || {
            (
                std::fs::read_to_string(dir.join("mine.txt")).ok(),
                std::fs::read_to_string("/etc/hostname").ok(),
            )
        })
        .unwrap();
        assert_eq!(mine.as_deref(), Some("mine"));
        if enforced() == Some(true) {
            assert_eq!(
                other, None,
                "Landlock let the thread read outside its folders"
            );
        }
        // The rest of the process keeps its rights.
        assert!(std::fs::read_dir("/etc").is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// NVRTC itself, confined, compiles a kernel but cannot open a file outside the source's
    /// folder even when the text check is bypassed (where Landlock is enforced).
    #[test]
    fn nvrtc_confined_cannot_read_outside() {
        use crate::nvrtc::{self, Source, Target};
        let location = nvrtc::locate()
            .or_else(|| nvrtc::install().ok().map(nvrtc::Location::Path))
            .expect("NVRTC found or installed");
        nvrtc::load(&location).expect("NVRTC loads");
        let dir = std::env::temp_dir().join(format!("sandbox-nvrtc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("k.cu").display().to_string();
        let plain = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";
        let compile = |code: &str| {
            let source = Source {
                code,
                file: &file,
                macros: &[],
            };
            confined(&source, || nvrtc::compile_uncached(&source, &Target::Ptx)).and_then(|r| r)
        };
        assert!(compile(plain).is_ok(), "a plain kernel compiles confined");
        let outside = format!("#include \"/etc/passwd\"\n{plain}");
        let result = compile(&outside);
        if enforced() == Some(true) {
            let d = result.expect_err("/etc/passwd is not readable");
            assert!(d.message.contains("Permission denied"), "{}", d.message);
        }
        // Nor the runner's cache, beside what NVRTC needs (its `nvrtc.location`, say).
        let cached = crate::library::cache_dir().join(format!("probe-{}", std::process::id()));
        std::fs::write(&cached, "int cached_secret;\n").unwrap();
        let result = compile(&format!("#include \"{}\"\n{plain}", cached.display()));
        let _ = std::fs::remove_file(&cached);
        if enforced() == Some(true) {
            let d = result.expect_err("the cache is not readable");
            assert!(d.message.contains("Permission denied"), "{}", d.message);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
