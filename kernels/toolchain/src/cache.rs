//! The compile cache on disk: a key that is the same in every process and build of this
//! version, and the path the compiled module (and its log) is kept under.
#![allow(unsafe_code)] // NVRTC's version query: the block says why.

use crate::library::cache_dir;
use crate::source::{Source, Target, options};
use cudarc::nvrtc::sys;
use std::path::PathBuf;

/// Where the output of the compile keyed `key` is cached on disk.
pub fn cached_path(key: u64, target: &Target) -> PathBuf {
    let ext = match target {
        Target::Ptx => "ptx",
        Target::Cubin { .. } => "cubin",
    };
    cache_dir()
        .join("compiled")
        .join(format!("{key:016x}.{ext}"))
}

/// A key that is the same in every process and every build of this version: FNV-1a over the
/// source, the file name, the content of every local file it includes (an edited `impl.cuh`
/// compiles again), the options and NVRTC's version. (The PTX is made independent of the
/// working directory by [`relative_file_names`], so the cache holds across checkouts.)
pub fn cache_key(source: &Source<'_>, target: &Target) -> u64 {
    // SAFETY: NVRTC is loaded before any compile (see `load`); the call writes two ints.
    let version = unsafe {
        let (mut major, mut minor) = (0, 0);
        sys::nvrtcVersion(&mut major, &mut minor);
        (major, minor)
    };
    // `logs`: entries cached before NVRTC's log was kept beside them are not reused; `own`: the
    // workbook's own headers are part of what compiles.
    let own: String = crate::headers::OWN.iter().map(|(_, t)| *t).collect();
    let folder = crate::include_guard::folder_of(source.file);
    let mut included = vec![];
    for (name, bytes) in crate::include_guard::local_includes(source.code, &folder) {
        included.extend(name.into_bytes());
        included.push(0);
        included.extend((bytes.len() as u64).to_le_bytes());
        included.extend(bytes);
    }
    let text = format!(
        "{}\0{}\0{}\0{version:?}\0{}\0logs\0{own}",
        source.code,
        source.file,
        options(source, target).join(" "),
        env!("CARGO_PKG_VERSION")
    );
    text.bytes()
        .chain(included)
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}
