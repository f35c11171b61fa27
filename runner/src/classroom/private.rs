//! Each submission compiled alone: `grade` and `gradescope` copy a submission into a private
//! folder of its own (mode 0700, under the system's temporary folder) and check the copy, so that
//! no spelling of an `#include` can reach a classmate's file, a grade file of an earlier run or
//! the runner's own files: the folder NVRTC resolves quoted includes against holds the submission
//! and nothing else, and the compile's confinement (`toolchain::sandbox`) lets it read nothing
//! beside that folder but CUDA's headers and NVRTC.
//!
//! A submission is the single `.cu` file, or, for a submitted workbook's
//! `puzzles/puzzle-NN/kernel.cu`, the regular files of that puzzle's folder (its own helpers,
//! `impl.cuh`), at most [`MAX_FILES`] of at most [`MAX_BYTES`] each. A submission that is a link,
//! or a file with other hard links (either could be another student's file or a grader's), is
//! refused with the reason; so is a puzzle folder holding one.

use crate::check::Outcome;
use std::path::{Path, PathBuf};

/// The most files of a puzzle's folder copied with its kernel.
pub const MAX_FILES: usize = 64;
/// The largest file copied.
pub const MAX_BYTES: u64 = 4 << 20;

/// A submission's private copy; the folder is removed when it is dropped.
#[derive(Debug)]
pub struct Private {
    dir: PathBuf,
    /// The copy of the submitted kernel, to check.
    pub file: PathBuf,
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Why `path` may not be graded as a submission's file: a link, or a file with other hard links;
/// `None` when it may.
pub fn refusal(path: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) => return Some(format!("it cannot be read ({e})")),
    };
    if meta.file_type().is_symlink() {
        return Some("it is a link (a submission must be the file itself)".into());
    }
    if !meta.is_file() {
        return Some("it is not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Some(format!(
                "it is a hard link: its content has {} other name(s), which could be another student's or the grader's file",
                meta.nlink() - 1
            ));
        }
    }
    if meta.len() > MAX_BYTES {
        return Some(format!("it is larger than {} MB", MAX_BYTES >> 20));
    }
    None
}

/// Whether `file` is the kernel of a workbook's puzzle folder (`puzzles/puzzle-NN/kernel.cu`),
/// whose folder's files come with it.
fn in_puzzle_folder(file: &Path) -> bool {
    let parent = file.parent();
    let folder = parent.and_then(Path::file_name).and_then(|n| n.to_str());
    let above = parent
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    file.file_name().is_some_and(|n| n == "kernel.cu")
        && folder.is_some_and(|n| n.starts_with("puzzle-"))
        && above == Some("puzzles")
}

/// A private folder under `base` with a name no one guesses, readable by this user only.
fn private_dir(base: &Path) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    for _ in 0..16 {
        let dir = base.join(format!("runner-submission-{:016x}", random_seed()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
    }
    anyhow::bail!("cannot create a private folder in {}", base.display())
}

/// Why a submission is refused (a link, a file with other hard links, too many files beside it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Copies the submission `file` into a private folder (with its puzzle folder's files, for a
/// workbook's kernel). `Ok(Err(why))` when the submission is refused.
pub fn copy(file: &Path) -> anyhow::Result<Result<Private, Refused>> {
    if let Some(why) = refusal(file) {
        return Ok(Err(Refused(why)));
    }
    let name = file
        .file_name()
        .map(|n| crate::classroom::grade_files::safe_component(&n.to_string_lossy()))
        .unwrap_or_else(|| "kernel.cu".into());
    let mut files: Vec<(PathBuf, String)> = vec![(file.to_path_buf(), name.clone())];
    if in_puzzle_folder(file)
        && let Some(folder) = file.parent()
    {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(folder)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name() != file.file_name())
            .collect();
        entries.sort();
        for path in entries {
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                continue;
            }
            let shown = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let shown = shown.unwrap_or_default();
            if let Some(why) = refusal(&path) {
                return Ok(Err(Refused(format!("{shown}, beside the kernel: {why}"))));
            }
            if files.len() >= MAX_FILES {
                return Ok(Err(Refused(format!(
                    "its folder holds more than {MAX_FILES} files"
                ))));
            }
            files.push((path, crate::classroom::grade_files::safe_component(&shown)));
        }
    }
    let dir = private_dir(&std::env::temp_dir())?;
    let private = Private {
        file: dir.join(&name),
        dir,
    };
    for (from, to) in files {
        // Read through the handle checked above, not followed: a file swapped for a link since
        // is refused by the copy itself (it reads only a regular file).
        let bytes = std::fs::read(&from)?;
        std::fs::write(private.dir.join(to), bytes)?;
    }
    Ok(Ok(private))
}

/// `outcome` as a report names it: the private copy's path replaced by `shown` (what the
/// student submitted), in the file and in every diagnostic.
pub fn renamed(mut outcome: Outcome, private: &Private, shown: &str) -> Outcome {
    let folder = format!("{}/", private.dir.display());
    let whole = private.file.display().to_string();
    let fix = |s: &str| s.replace(&whole, shown).replace(&folder, "");
    outcome.file = fix(&outcome.file);
    for d in &mut outcome.diagnostics {
        d.message = fix(&d.message);
        d.file = d.file.as_deref().map(fix);
    }
    outcome
}

/// A seed no one can guess ahead: the standard library's per-process random keys, the time and
/// the process id, hashed.
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_hard_links_are_refused_with_their_reason() {
        let dir = std::env::temp_dir().join(format!("private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let own = dir.join("own.cu");
        std::fs::write(&own, "int x;").unwrap();
        assert_eq!(refusal(&own), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&own, dir.join("link.cu")).unwrap();
            let why = refusal(&dir.join("link.cu")).unwrap();
            assert!(why.contains("a link"), "{why}");
            std::fs::hard_link(&own, dir.join("hard.cu")).unwrap();
            let why = refusal(&own).unwrap();
            assert!(why.contains("hard link"), "{why}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_copy_holds_the_submission_alone_and_a_workbook_kernel_its_folder() {
        let dir = std::env::temp_dir().join(format!("private-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let puzzle = dir.join("clone/puzzles/puzzle-04");
        std::fs::create_dir_all(&puzzle).unwrap();
        std::fs::write(dir.join("alice.cu"), "#include \"bob.cu\"").unwrap();
        std::fs::write(dir.join("bob.cu"), "secret").unwrap();
        std::fs::write(puzzle.join("kernel.cu"), "#include \"impl.cuh\"").unwrap();
        std::fs::write(puzzle.join("impl.cuh"), "mine").unwrap();
        let alone = copy(&dir.join("alice.cu")).unwrap().unwrap();
        let beside: Vec<_> = std::fs::read_dir(alone.file.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(beside, ["alice.cu"]);
        let workbook = copy(&puzzle.join("kernel.cu")).unwrap().unwrap();
        let helper = workbook.file.with_file_name("impl.cuh");
        assert_eq!(std::fs::read_to_string(helper).unwrap(), "mine");
        let folder = alone.dir.clone();
        drop(alone);
        assert!(!folder.exists(), "the private folder goes with it");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
