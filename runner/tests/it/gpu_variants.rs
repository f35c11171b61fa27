//! The kernels the simulator's tests call correct, on the GPU too: every rewrite of every solution
//! and the hand-written variants (`common::rewrites`, which `variants.rs` runs on the simulator),
//! the pipelines of `fixtures/pipelines/` that are right, and the correct learner kernels of the
//! broken corpora (`CORRECT`). Each is checked on both backends (`runner check --json`, the sim
//! and the GPU): it must pass every case, and the simulator's small cases must agree with the GPU
//! bit for bit. Ignored without a GPU (CI lists them as ignored, with the reason); on one, as in
//! `gpu.rs`: `RUNNER_BIN=... WORKBOOK_ROOT=... target/release/deps/gpu_variants-HASH --ignored`.
//! The one test CI runs keeps `CORRECT` true to the corpora: every file it names exists, and
//! every `*_ok.cu` of a corpus is in it (or said not to be a pass of its puzzle, and why).

use crate::common;

use common::rewrites::{hand_written, rewritten};
use common::{json, repo, require_gpu, run};
use std::path::{Path, PathBuf};

/// The correct learner kernels of the fixture corpora and pipelines, each with its puzzle (the
/// file's `pNN_` prefix); their simulator runs are the corpora's own tests.
const CORRECT: [&str; 7] = [
    "kernels/conformance/tests/fixtures/broken/p01_recursive_ok.cu",
    "kernels/conformance/tests/fixtures/broken/p02_pointers_ok.cu",
    "kernels/conformance/tests/fixtures/broken/p03_cp_async_ok.cu",
    "runner/tests/fixtures/broken2d/p10_staged.cu",
    "runner/tests/fixtures/broken_igemm/p11_ok.cu",
    "runner/tests/fixtures/pipelines/p11_wmma_double_buffer.cu",
    "runner/tests/fixtures/pipelines/p01_bulk_double_buffer.cu",
];

/// Correct kernels of a corpus that are not a pass of their puzzle: `p03_syncwarp_ok.cu` is
/// right for its own one-warp block (its `// defines:` line, which the conformance tests give),
/// and puzzle 03's random cases launch more warps.
const NOT_PUZZLE_PASSES: [&str; 1] =
    ["kernels/conformance/tests/fixtures/broken/p03_syncwarp_ok.cu"];

/// The corpora whose `*_ok.cu` files must be in `CORRECT` (or `NOT_PUZZLE_PASSES`).
const CORPORA: [&str; 5] = [
    "kernels/conformance/tests/fixtures/broken",
    "runner/tests/fixtures/broken2d",
    "runner/tests/fixtures/broken_igemm",
    "runner/tests/fixtures/pipelines",
    "runner/tests/fixtures/shared_names",
];

/// `puzzle-NN` of a corpus file named `pNN_...`.
fn puzzle_of(file: &str) -> String {
    let name = Path::new(file).file_name().unwrap().to_str().unwrap();
    format!("puzzle-{}", &name[1..3])
}

/// `runner check PUZZLE --kernel FILE --json` on both backends: why it is not a pass on both
/// with every small case bit-identical, if it is not.
fn on_both(puzzle: &str, file: &Path) -> Result<(), String> {
    let file = file.to_str().unwrap();
    let o = json(&run(&["check", puzzle, "--kernel", file, "--json"]));
    let a = &o["backend_agreement"];
    if o["passed"] != true {
        Err(format!("fails: {}", o["diagnostics"]))
    } else if o["backends"] != serde_json::json!(["sim", "gpu"]) {
        Err(format!("ran on {}", o["backends"]))
    } else if a["cases"].as_u64().is_none_or(|n| n == 0) || a["cases"] != a["identical"] {
        Err(format!("sim and gpu differ: {a}"))
    } else {
        Ok(())
    }
}

/// Every `(puzzle, name, file)` of `list` that is not a pass on both backends, one line each.
fn failures(list: &[(String, String, PathBuf)]) -> Vec<String> {
    list.iter()
        .filter_map(|(puzzle, name, file)| {
            let r = on_both(puzzle, file);
            eprintln!("{name}: {}", r.as_ref().map_or("FAILED", |_| "ok"));
            r.err().map(|e| format!("{name}: {e}"))
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_solution_variant_passes_on_both_backends_bit_for_bit() {
    let _gpu = require_gpu();
    let dir = std::env::temp_dir().join(format!("workbook-gpu-variants-{}", std::process::id()));
    let mut list = rewritten(&dir);
    for f in hand_written() {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        list.push((name[..9].to_string(), name, f));
    }
    assert!(list.len() >= 20, "only {} variants", list.len());
    let failed = failures(&list);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn the_correct_kernels_of_the_corpora_pass_on_both_backends_bit_for_bit() {
    let _gpu = require_gpu();
    let list: Vec<_> = CORRECT
        .iter()
        .map(|f| (puzzle_of(f), f.to_string(), repo().join(f)))
        .collect();
    let failed = failures(&list);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn the_list_of_correct_kernels_is_true_to_the_corpora() {
    for f in CORRECT {
        assert!(repo().join(f).is_file(), "{f} is gone");
        let puzzle = puzzle_of(f);
        assert!(
            repo().join("puzzles").join(&puzzle).is_dir(),
            "{f}: no {puzzle}"
        );
    }
    for dir in CORPORA {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            let path = format!("{dir}/{name}");
            if name.ends_with("_ok.cu") && !NOT_PUZZLE_PASSES.contains(&path.as_str()) {
                assert!(CORRECT.contains(&path.as_str()), "{path} is not in CORRECT");
            }
        }
    }
}
