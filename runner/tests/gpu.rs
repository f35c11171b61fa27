//! The GPU path, end to end: the tests that need a CUDA GPU are `#[ignore]`d with a reason, so CI
//! (no GPU) lists them as skipped; on a GPU machine run them with `--ignored`. The device machine
//! has no Rust toolchain, so this test binary is built here and carried there with the runner:
//! `RUNNER_BIN=target/release/runner WORKBOOK_ROOT=. target/release/deps/gpu-HASH --ignored`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn runner() -> PathBuf {
    std::env::var_os("RUNNER_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_runner")),
        PathBuf::from,
    )
}

fn root() -> PathBuf {
    std::env::var_os("WORKBOOK_ROOT").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap()
                .to_path_buf()
        },
        PathBuf::from,
    )
}

fn run(args: &[&str]) -> Output {
    Command::new(runner())
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs")
}

/// Fails clearly when a GPU test was asked for on a machine without a GPU.
fn require_gpu() {
    assert!(
        kernels::gpu::probe().is_some(),
        "this test needs a CUDA GPU, and none was found (libcuda did not load or reports no device)"
    );
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn bench_without_a_gpu_is_a_usage_error() {
    if kernels::gpu::probe().is_some() {
        return; // Nothing to show on a machine with a GPU.
    }
    let out = run(&["bench", "puzzle-06", "--solution"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a CUDA GPU"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_solution_passes_on_the_gpu_and_matches_the_simulator_bit_for_bit() {
    require_gpu();
    for n in 1..=8 {
        let puzzle = format!("puzzle-{n:02}");
        let o = json(&run(&["check", &puzzle, "--solution", "--json"]));
        assert_eq!(o["passed"], true, "{puzzle}: {}", o["diagnostics"]);
        assert_eq!(o["backends"], serde_json::json!(["sim", "gpu"]), "{puzzle}");
        let a = &o["backend_agreement"];
        assert_eq!(
            a["cases"], a["identical"],
            "{puzzle}: sim and gpu differ: {a}"
        );
        assert!(
            o["cases"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == "full" && c["backend"] == "gpu")
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn printf_on_the_gpu_comes_back_beside_the_answer() {
    require_gpu();
    // The driver writes what a kernel printed to the worker's stdout, where its answer goes too.
    let check = |extra: &[&str]| {
        let file = "runner/tests/fixtures/printf.cu";
        let args = ["check", "puzzle-01", "--kernel", file, "--backend", "gpu"];
        run(&[&args[..], extra].concat())
    };
    let out = check(&["--case", "example-2", "--json"]);
    let o = json(&out);
    assert_eq!(out.status.code(), Some(0), "{o}");
    let mut printed: Vec<&str> = o["cases"][0]["printed"]
        .as_array()
        .expect("printed lines")
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    printed.sort();
    assert_eq!(
        printed,
        [
            "i = 0 of 15: a[i] = 0.00, last tap 3",
            "i = 14 of 15: a[i] = 14.00, last tap 3"
        ]
    );
    let human = check(&[]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("Your kernel printed (case example-1, gpu):\n  i = "),
        "{text}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn an_illegal_address_and_an_endless_loop_end_in_diagnostics() {
    require_gpu();
    let cases = [
        ("no_guard_far.cu", "launch_error"),
        ("endless.cu", "timeout"),
    ];
    for (file, kind) in cases {
        let path = format!("runner/tests/fixtures/{file}");
        let out = run(&[
            "check",
            "puzzle-01",
            "--kernel",
            &path,
            "--backend",
            "gpu",
            "--timeout",
            "2",
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        let o = json(&out);
        assert_eq!(
            o["diagnostics"][0]["kind"], kind,
            "{file}: {}",
            o["diagnostics"]
        );
        // Every case still ran after the first one failed.
        assert!(o["cases"].as_array().unwrap().len() >= 8, "{file}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bench_times_a_solution_against_the_measured_peak() {
    require_gpu();
    let out = run(&["bench", "puzzle-06", "--solution", "--json", "--runs", "20"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = json(&out);
    assert!(o["peaks"]["fma_tflops"].as_f64().unwrap() > 1.0);
    let entries = o["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "the reference and puzzle-04's solution");
    for e in entries {
        let pct = e["pct_fma_peak"].as_f64().unwrap();
        assert!(pct > 0.0 && pct < 100.0, "{e}");
    }
}
