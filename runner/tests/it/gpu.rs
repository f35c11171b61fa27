//! The GPU path, end to end: the tests that need a CUDA GPU are `#[ignore]`d with a reason, so CI
//! (no GPU) lists them as skipped; on a GPU machine run them with `--ignored`. The device machine
//! has no Rust toolchain, so this test binary is built here and carried there with the runner:
//! `RUNNER_BIN=target/release/runner WORKBOOK_ROOT=. target/release/deps/gpu-HASH --ignored`.

use crate::common;

use common::{Watching, json, repo as root, require_gpu, run, runner, scratch_root};
use std::process::Output;
use std::time::{Duration, Instant};

#[test]
fn bench_without_a_gpu_is_a_usage_error() {
    if gpu::probe().is_some() {
        return; // Nothing to show on a machine with a GPU.
    }
    let out = run(&["bench", "puzzle-06", "--solution"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a CUDA GPU"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_solution_passes_on_the_gpu_and_matches_the_simulator_bit_for_bit() {
    let _gpu = require_gpu();
    for n in (1..=8).chain([12]) {
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
fn the_tensor_core_solutions_pass_at_full_scale_and_match_the_simulator_bit_for_bit() {
    let _gpu = require_gpu();
    // The mma.sync kernel a learner reads, and the Hopper one (sm_90a) beside it.
    for solution in ["--solution", "--solution=hopper"] {
        let o = json(&run(&["check", "puzzle-11", solution, "--json"]));
        assert_eq!(o["passed"], true, "{solution}: {}", o["diagnostics"]);
        let a = &o["backend_agreement"];
        assert_eq!(
            a["cases"], a["identical"],
            "{solution}: sim and gpu differ: {a}"
        );
        let full = o["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("full-") && c["backend"] == "gpu")
            .count();
        assert_eq!(full, 3, "{solution}");
    }
    let b = json(&run(&[
        "bench",
        "puzzle-11",
        "--solution=hopper",
        "--json",
        "--runs",
        "20",
    ]));
    let peaks = &b["peaks"];
    let tf32 = peaks["tf32_tflops"].as_f64().expect("a tf32 peak");
    assert!(tf32 > peaks["fma_tflops"].as_f64().unwrap());
    let hopper = b["device"]["major"] == 9;
    let wgmma = peaks["wgmma_tf32_tflops"].as_f64();
    assert_eq!(wgmma.is_some(), hopper, "{peaks}");
    let fastest = wgmma.unwrap_or(tf32).max(tf32);
    let bound = physical_tf32_tflops(&b["device"], fastest);
    assert!(
        fastest <= bound,
        "measured {fastest} above the card's {bound}"
    );
    for shape in b["shapes"].as_array().unwrap() {
        let floor = shape["tensor_floor_us"].as_f64().expect("a tensor floor");
        assert!(floor > 0.0 && floor < shape["fma_floor_us"].as_f64().unwrap());
        let entries = shape["entries"].as_array().unwrap();
        let labels: Vec<&str> = entries
            .iter()
            .map(|e| e["label"].as_str().unwrap())
            .collect();
        assert_eq!(
            labels,
            ["reference hopper", "reference"],
            "each solution a row"
        );
        // The floor is the fastest measured rate's; no kernel can beat the card's own limit.
        let flop = shape["flop"].as_f64().unwrap();
        assert!(
            (floor - flop / (fastest * 1e12) * 1e6).abs() < 1e-6 * floor,
            "{shape}"
        );
        let median = entries[0]["median_us"].as_f64().unwrap();
        assert!(median > flop / (bound * 1e12) * 1e6, "{shape}");
    }
}

/// A tf32 rate no kernel can exceed on `device`. H100 SXM and H200: the data sheet's dense tf32
/// rate, 494.7 TFLOP/s (132 SMs x 2,048 tf32 operations a clock x 1,830 MHz), taken at the
/// highest boost clock the cards reach, 1,980 MHz: 535.2 TFLOP/s. Any other card: the fastest
/// rate measured there with a 10% margin.
fn physical_tf32_tflops(device: &serde_json::Value, measured: f64) -> f64 {
    let name = device["name"].as_str().unwrap_or("");
    let sheet = ["H100", "H200"]
        .iter()
        .any(|card| name.contains(card))
        .then_some(494.7 * 1980.0 / 1830.0);
    sheet.unwrap_or(1.1 * measured)
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn printf_on_the_gpu_comes_back_beside_the_answer() {
    let _gpu = require_gpu();
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

fn check_on_gpu(file: &str, timeout: &str) -> (Output, Duration) {
    let started = Instant::now();
    let path = format!("runner/tests/fixtures/{file}");
    let args = ["check", "puzzle-01", "--kernel", &path, "--backend", "gpu"];
    let out = run(&[&args[..], &["--timeout", timeout, "--json"]].concat());
    (out, started.elapsed())
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn an_illegal_address_ends_the_gpus_run_and_the_next_check_gets_a_working_worker() {
    let _gpu = require_gpu();
    let (out, _) = check_on_gpu("no_guard_far.cu", "10");
    assert_eq!(out.status.code(), Some(1));
    let o = json(&out);
    let d = &o["diagnostics"][0];
    assert_eq!(d["kind"], "launch_error", "{}", o["diagnostics"]);
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{message}");
    assert!(
        message.contains("not run on the gpu after it: "),
        "{message}"
    );
    // The fault poisoned the worker's context: no case ran after it, and every case still counts.
    let cases = o["cases"].as_array().unwrap();
    let ran = cases.iter().filter(|c| c.get("not_run").is_none()).count();
    assert_eq!(ran, 1, "one case ran, then none: {o}");
    assert!(cases.len() >= 8, "{o}");
    assert!(cases.iter().all(|c| c["passed"] == false));
    // The next check is served by a fresh worker.
    let args = [
        "check",
        "puzzle-01",
        "--solution",
        "--backend",
        "gpu",
        "--json",
    ];
    let next = run(&args);
    assert_eq!(next.status.code(), Some(0), "{}", json(&next));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn an_endless_loop_ends_the_check_within_the_limit_and_two_seconds() {
    let _gpu = require_gpu();
    let (out, took) = check_on_gpu("endless.cu", "3");
    assert_eq!(out.status.code(), Some(1));
    assert!(took < Duration::from_secs(5), "the check took {took:?}");
    let o = json(&out);
    let d = &o["diagnostics"][0];
    assert_eq!(d["kind"], "timeout", "{}", o["diagnostics"]);
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("not run on the gpu after it: "),
        "{message}"
    );
    // One case ran, then none; the cases not run still count, as failed cases with their reason.
    let cases = o["cases"].as_array().unwrap();
    let ran = cases.iter().filter(|c| c.get("not_run").is_none()).count();
    assert_eq!(ran, 1, "one case ran, then none: {o}");
    assert!(cases.len() > 1, "the cases not run are listed: {o}");
    assert!(cases.iter().all(|c| c["passed"] == false), "{o}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn one_watch_session_reports_a_fault_then_a_pass_on_its_warm_worker() {
    let _gpu = require_gpu();
    let root = scratch_root("gpu-watch-test");
    let kernel = root.join("puzzles/puzzle-01/kernel.cu");
    let fixture = root_file("runner/tests/fixtures/no_guard_far.cu");
    std::fs::write(&kernel, fixture).unwrap();
    let mut w = Watching::start(&runner(), &root, "gpu");
    let report = w.wait_for("Watching puzzles/puzzle-01/kernel.cu");
    assert!(report.contains("✗ puzzle-01"), "{report}");
    assert!(report.contains("launch_error"), "{report}");
    std::fs::write(&kernel, root_file("solutions/puzzle-01.cu")).unwrap();
    let report = w.wait_for("✓ puzzle-01 passed");
    assert!(!report.contains("launch_error"), "{report}");
    let _ = std::fs::remove_dir_all(&root);
}

fn root_file(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// A puzzle-04 submission of `kind`, made from the solution.
fn submission(kind: &str, solution: &str) -> String {
    let taps = "for (int j = 0; j < kernel_size; j++)";
    let store = "output[i] = sum;";
    match kind {
        "pass" => solution.to_string(),
        "wrong" => solution.replace(taps, "for (int j = 1; j < kernel_size; j++)"),
        "nocompile" => solution.replace(store, "output[i] = sum"),
        "fault" => solution.replace(store, "output[i + (1 << 28)] = sum;"),
        "hang" => solution
            .replace("float sum = 0.0f;", "volatile float sum = 0.0f;")
            .replace(taps, "for (int j = 0; j < kernel_size; j *= 1)"),
        _ => unreachable!("no kind {kind}"),
    }
}

/// A class of 20 puzzle-04 submissions: passing, wrong, not compiling, faulting and hanging,
/// with the number that pass.
fn sample_class(dir: &std::path::Path) -> usize {
    let solution = root_file("solutions/puzzle-04.cu");
    let kinds = [
        ("pass", 8),
        ("wrong", 4),
        ("nocompile", 3),
        ("fault", 3),
        ("hang", 2),
    ];
    std::fs::create_dir_all(dir).unwrap();
    for (kind, count) in kinds {
        for n in 0..count {
            let made = submission(kind, &solution);
            assert!(
                kind == "pass" || made != solution,
                "{kind}: nothing replaced"
            );
            let text = format!("// {kind} {n}\n{made}");
            std::fs::write(dir.join(format!("{kind}-{n}.cu")), text).unwrap();
        }
    }
    8
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn grading_twenty_submissions_on_one_worker_gets_every_row_right() {
    let _gpu = require_gpu();
    let dir = std::env::temp_dir().join(format!("gpu-grade-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let passing = sample_class(&dir);
    let started = Instant::now();
    let out = run(&["grade", "puzzle-04", dir.to_str().unwrap()]);
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("graded 20 submissions in {took:?}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("grade.json")).unwrap()).unwrap();
    let rows = report["submissions"].as_array().unwrap();
    assert_eq!(rows.len(), 20);
    for row in rows {
        let file = row["file"].as_str().unwrap();
        let kinds = row["diagnostics"].to_string();
        let want = match file.split('-').next().unwrap() {
            "pass" => "[]",
            "wrong" => "wrong_output",
            "nocompile" => "compile_error",
            "fault" => "launch_error",
            "hang" => "timeout",
            other => panic!("unexpected file {other}"),
        };
        assert!(kinds.contains(want), "{file}: {row}");
        assert_eq!(row["passed"], file.starts_with("pass"), "{file}: {row}");
    }
    let passed = rows.iter().filter(|r| r["passed"] == true).count();
    assert_eq!(passed, passing);
    assert!(took < Duration::from_secs(30), "grading took {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bench_times_a_solution_against_the_measured_peak() {
    let _gpu = require_gpu();
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
    // H100 SXM and H200: 132 SMs x 256 FP32 operations a clock x 1,980 MHz, 66.9 TFLOP/s.
    let name = o["device"]["name"].as_str().unwrap_or("");
    let fma = o["peaks"]["fma_tflops"].as_f64().unwrap();
    let card = if name.contains("H100") || name.contains("H200") {
        66.9
    } else {
        1.1 * fma
    };
    for e in entries {
        let pct = e["pct_fma_peak"].as_f64().unwrap();
        assert!(pct > 0.0, "{e}");
        assert!(e["gflops"].as_f64().unwrap() < card * 1e3, "{e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bench_sets_puzzle_12_beside_puzzle_08_and_the_fma_floor() {
    let _gpu = require_gpu();
    let out = run(&[
        "bench",
        "puzzle-12",
        "--solution=hopper",
        "--json",
        "--runs",
        "20",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = json(&out);
    assert!(o["floor_us"].as_f64().unwrap() > 0.0, "{o}");
    let labels: Vec<&str> = o["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["reference hopper", "reference", "puzzle-08 solution"]
    );
}
