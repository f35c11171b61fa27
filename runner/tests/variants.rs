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

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Each rewrite: its name and the rewritten source, or `None` where it does not apply.
type Rewrite = fn(&str) -> Option<String>;

fn map_lines(src: &str, f: impl Fn(&str) -> Option<String>) -> String {
    src.lines()
        .filter_map(f)
        .map(|l| l + "\n")
        .collect::<String>()
}

fn is_unroll(line: &str) -> bool {
    line.trim_start().starts_with("#pragma unroll")
}

const REWRITES: [(&str, Rewrite); 5] = [
    ("no-unroll", |s| {
        Some(map_lines(s, |l| (!is_unroll(l)).then(|| l.to_string())))
    }),
    ("rolled", |s| {
        Some(map_lines(s, |l| {
            Some(if is_unroll(l) {
                "#pragma unroll 1".into()
            } else {
                l.to_string()
            })
        }))
    }),
    ("unroll-4", |s| {
        let mut out = String::new();
        let mut after_pragma = false;
        for l in s.lines() {
            if l.trim_start().starts_with("for (") && !after_pragma {
                out += "#pragma unroll 4\n";
            }
            after_pragma = is_unroll(l);
            out += l;
            out += "\n";
        }
        Some(out)
    }),
    // A solution's option that is on for the runner, turned off: puzzle 11's copies by
    // `cp.async` rather than by the TMA unit (blocks of more than 64 output channels then take
    // the row path rather than the walk).
    ("cp-async", |s| {
        let on = "#ifndef TMA\n#define TMA 1\n";
        s.contains(on)
            .then(|| s.replacen(on, "#ifndef TMA\n#define TMA 0\n", 1))
    }),
    ("volatile", |s| {
        if s.contains("reinterpret_cast") {
            return None;
        }
        let (head, body) = s.split_at(s.find("ANCHOR_END: signature")?);
        let body = body
            .replace("__shared__ float", "__shared__ volatile float")
            .replace("const float* ", "const volatile float* ");
        Some(format!("{head}{body}"))
    }),
];

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

/// Every solution and its id, from `solutions/`.
fn solutions() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join("solutions"))
        .expect("solutions/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let id = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "cu").then(|| (id, std::fs::read_to_string(&p).unwrap()))
        })
        .collect();
    out.sort();
    out
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("workbook-variants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_rewrite_of_every_solution_passes_with_no_diagnostic() {
    let (dir, mut failures, mut ran) = (scratch(), vec![], 0);
    let solutions = solutions();
    assert!(solutions.len() >= 8, "{solutions:?}");
    for (id, src) in &solutions {
        for (name, rewrite) in REWRITES {
            let Some(variant) = rewrite(src).filter(|v| v != src) else {
                continue;
            };
            let file = dir.join(format!("{id}.{name}.cu"));
            std::fs::write(&file, variant).unwrap();
            ran += 1;
            // `puzzle-NN`: a second solution's stem goes on past it (`puzzle-11-hopper`).
            if let Err(e) = check(&id[..9], &file) {
                failures.push(format!("{id} {name}: {e}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every solution has at least the unroll-4 rewrite; most have more.
    assert!(ran >= 2 * solutions.len(), "only {ran} variants ran");
}

#[test]
fn the_hand_written_variants_pass_with_no_diagnostic() {
    let dir = root().join("runner/tests/fixtures/variants");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/variants")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
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
