//! Full-scale reference outputs, computed once and kept in the workbook's cache folder.
//!
//! A full-scale reference is billions of f64 multiply-adds (puzzle 08's: 3.1 billion), seconds
//! of CPU that a check on a GPU machine must not wait for every time. [`cached`] keys a reference
//! by a label (puzzle family and case) and a hash of the exact input bits, so a changed generator
//! or a changed case can never be answered with a stale reference; a missing, short or unreadable
//! file is computed again. The file is the f64 values as little-endian bytes, written to a
//! temporary name and renamed, so two checks at once never read half a file.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The reference for `inputs` under `label`: read from the cache when it holds one, else
/// `compute`d and stored. Failing to store is not an error (the value is still returned). A case
/// drawn fresh at grading time (its label holds [`crate::FRESH`]) is computed and never stored:
/// each grade draws new data, which no later check would read back.
pub fn cached(label: &str, inputs: &[&[f32]], compute: impl FnOnce() -> Vec<f64>) -> Vec<f64> {
    if label.contains(crate::FRESH) {
        return compute();
    }
    cached_in(&cache_dir(), label, inputs, compute)
}

fn cached_in(
    cache: &Path,
    label: &str,
    inputs: &[&[f32]],
    compute: impl FnOnce() -> Vec<f64>,
) -> Vec<f64> {
    let path = path(cache, label, inputs);
    if let Some(values) = read(&path) {
        return values;
    }
    let values = compute();
    let _ = write(&path, &values);
    values
}

fn path(cache: &Path, label: &str, inputs: &[&[f32]]) -> PathBuf {
    // FNV-1a over 32-bit words (a byte at a time was half a second for puzzle 09's 100 million
    // inputs, on every first check of a worker): stable across Rust releases, unlike
    // `DefaultHasher`.
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for input in inputs {
        input.len().hash(&mut h);
        h.0 = input.iter().fold(h.0, |h, x| {
            (h ^ u64::from(x.to_bits())).wrapping_mul(0x0100_0000_01b3)
        });
    }
    let safe: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    cache
        .join("references")
        .join(format!("{safe}-w{:016x}.f64", h.0))
}

fn read(path: &Path) -> Option<Vec<f64>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len() as usize;
    if len == 0 || !len.is_multiple_of(8) {
        return None;
    }
    // A few megabytes at a time into the values, rather than the whole file into bytes first
    // (puzzle 09's largest reference is 512 MB, read on every worker's first check).
    let mut values = Vec::with_capacity(len / 8);
    let mut chunk = vec![0u8; 1 << 22];
    while values.len() < len / 8 {
        let want = ((len / 8 - values.len()) * 8).min(chunk.len());
        file.read_exact(&mut chunk[..want]).ok()?;
        values.extend(
            chunk[..want]
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
    }
    Some(values)
}

fn write(path: &Path, values: &[f64]) -> std::io::Result<()> {
    let dir = path.parent().expect("a folder");
    std::fs::create_dir_all(dir)?;
    // A name of its own per write: one process builds several cases' references at once (on
    // threads), and a name per process had them write into one file and rename it twice.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{}-{n}.tmp", std::process::id()));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for v in values {
        file.write_all(&v.to_le_bytes())?;
    }
    file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The workbook's cache folder: `$CONV_WORKBOOK_CACHE`, else `$XDG_CACHE_HOME/conv-workbook`, else
/// `~/.cache/conv-workbook`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CONV_WORKBOOK_CACHE") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("conv-workbook")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_reference_is_computed_once_and_keyed_by_its_inputs() {
        let dir = std::env::temp_dir().join(format!("refcache-test-{}", std::process::id()));
        let calls = Cell::new(0);
        let compute = || {
            calls.set(calls.get() + 1);
            vec![1.5, -2.25, f64::from(calls.get())]
        };
        let a = [1.0f32, 2.0, 3.0];
        let first = cached_in(&dir, "test-case", &[&a], compute);
        let again = cached_in(&dir, "test-case", &[&a], compute);
        assert_eq!(first, again);
        assert_eq!(calls.get(), 1, "the second call reads the cache");
        let b = [1.0f32, 2.0, 3.5];
        let other = cached_in(&dir, "test-case", &[&b], compute);
        assert_eq!(calls.get(), 2, "other inputs, another reference");
        assert_eq!(other[2], 2.0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Puzzle 09 and 10's workers build their full cases on threads: each reference must land
    /// whole under its own name however the writes interleave.
    #[test]
    fn references_written_at_once_by_threads_each_come_back_whole() {
        let dir = std::env::temp_dir().join(format!("refcache-threads-{}", std::process::id()));
        let sizes = [300_000usize, 200_000, 100_000, 250_000];
        for round in 0..3 {
            let inputs: Vec<[f32; 1]> = sizes.iter().map(|&n| [n as f32 + round as f32]).collect();
            std::thread::scope(|s| {
                for (input, &n) in inputs.iter().zip(&sizes) {
                    let dir = &dir;
                    s.spawn(move || cached_in(dir, "threads", &[input], || vec![n as f64; n]));
                }
            });
            for (input, &n) in inputs.iter().zip(&sizes) {
                let back = read(&path(&dir, "threads", &[input])).expect("stored");
                assert_eq!(back.len(), n, "round {round}");
                assert!(back.iter().all(|&v| v == n as f64), "round {round}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
