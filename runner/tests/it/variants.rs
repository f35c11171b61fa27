//! No correct kernel gets a diagnostic. Every solution in `solutions/` (`puzzle-NN.cu`, one per
//! registered puzzle, so a puzzle added later is covered, and the second checked ones such as
//! `puzzle-11-hopper.cu`) is rewritten the ways a learner
//! writes the same kernel: without its `#pragma unroll`s, with every loop kept rolled (`#pragma
//! unroll 1`), with every loop unrolled by 4, with its shared memory and the pointers into it
//! `volatile`; with a solution's option turned the other way (puzzle 11 Hopper's copies by `cp.async`
//! rather than the TMA unit); and the hand-written variants in `fixtures/variants/` (vector or scalar loads,
//! the register window of the issue that found the `used_bytes_mask` false alarm, a persistent
//! kernel sized by `%nsmid`, a tile loaded by one bulk copy completing on an mbarrier), and the
//! first kernels a learner writes from the chapters' tips in `fixtures/learners/` (the corpus
//! `runner profile` is set against on the device, `bench/PROFILE.md`). Each must pass every case
//! on the simulator with no diagnostic at all.
//!
//! A rewrite that leaves a solution unchanged is not run (puzzle 01 has no `#pragma unroll` to
//! remove); `volatile` is not applied where the solution reinterprets shared memory as vectors,
//! which C++ does not allow through a volatile pointer, and only after the kernel's anchored
//! signature (puzzle 11's Hopper kernel has none and is left as it is).

use crate::common;

use common::rewrites::{hand_written, rewritten, solutions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Checks `file` against `puzzle` on the simulator; the failure message if it is not a clean pass.
fn check(puzzle: &str, file: &Path) -> Result<(), String> {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["--root"])
        .arg(root())
        .args(["check", puzzle, "--backend", "sim", "--json", "--kernel"])
        .arg(file)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{e}: {text}{}", String::from_utf8_lossy(&out.stderr)))?;
    let diagnostics = json["diagnostics"].as_array().map_or(0, Vec::len);
    if out.status.success() && json["passed"] == true && diagnostics == 0 {
        Ok(())
    } else {
        Err(format!("{}", json["diagnostics"]))
    }
}

#[test]
fn every_rewrite_of_every_solution_passes_with_no_diagnostic() {
    let dir = std::env::temp_dir().join(format!("workbook-variants-{}", std::process::id()));
    let solutions = solutions();
    assert!(solutions.len() >= 8, "{solutions:?}");
    let variants = rewritten(&dir);
    let failures: Vec<String> = variants
        .iter()
        .filter_map(|(puzzle, name, file)| {
            check(puzzle, file).err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every solution has at least the unroll-4 rewrite; most have more.
    assert!(
        variants.len() >= 2 * solutions.len(),
        "only {} variants ran",
        variants.len()
    );
}

#[test]
fn the_hand_written_variants_pass_with_no_diagnostic() {
    let files = hand_written();
    assert!(!files.is_empty());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let name = f.file_name()?.to_str()?;
            let id = name.split('.').next()?;
            check(id, f).err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_learners_first_kernels_pass_with_no_diagnostic() {
    // `fixtures/learners/pNN_*.cu`: puzzle NN (issue 36's corpus for `runner profile`).
    let dir = root().join("runner/tests/fixtures/learners");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/learners")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let name = f.file_name()?.to_str()?;
            let id = format!("puzzle-{}", name.get(1..3)?);
            check(&id, f).err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
