//! The GPU's answers to kernels nobody here wrote (issue 16), end to end through the warm worker:
//! a `__trap()` and a failed `assert` are `trap` (the assert with the condition, file, line, block
//! and thread the device printed; no case runs after a trap), a store into an input is `wrote_input`, recursive device
//! functions run and agree with the simulator, and a sample of generated kernels
//! (`runner fuzz --backend both`) agrees bit for bit. Ignored without a GPU; on one, as in
//! `gpu.rs`: `RUNNER_BIN=... WORKBOOK_ROOT=... target/release/deps/gpu_learner-HASH --ignored`.

use crate::common;

use common::run;

/// `check puzzle-01` of a broken-corpus fixture on the GPU alone, as JSON.
fn on_gpu(fixture: &str) -> serde_json::Value {
    assert!(gpu::probe().is_some(), "this test needs a CUDA GPU");
    let file = format!("kernels/conformance/tests/fixtures/broken/{fixture}.cu");
    let out = run(&[
        "check",
        "puzzle-01",
        "--kernel",
        &file,
        "--backend",
        "gpu",
        "--json",
    ]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn first_of(o: &serde_json::Value, kind: &str) -> serde_json::Value {
    let all = o["diagnostics"].as_array().cloned().unwrap_or_default();
    all.into_iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}: {}", o["diagnostics"]))
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_trap_on_the_gpu_is_a_trap() {
    let o = on_gpu("p01_trap");
    assert_eq!(o["passed"], false);
    let d = first_of(&o, "trap");
    assert!(d["message"].as_str().unwrap().contains("__trap()"), "{d}");
}

/// A trap ends the GPU's run of a check: each trap costs the driver a few tenths of a second and
/// the worker its CUDA context, so `bench/class04/trap.cu` (five trapping cases of twelve) used
/// to take 4.3 s on an H200; now its first trap is the last case run there.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn the_gpu_runs_no_case_after_a_trap_and_answers_within_two_seconds() {
    assert!(gpu::probe().is_some(), "this test needs a CUDA GPU");
    let args = ["check", "puzzle-04", "--kernel", "bench/class04/trap.cu"];
    let started = std::time::Instant::now();
    let out = run(&[&args[..], &["--backend", "gpu", "--json"]].concat());
    let took = started.elapsed();
    let o: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let d = first_of(&o, "trap");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("not run on the gpu after it"),
        "{d}"
    );
    let cases = o["cases"].as_array().unwrap();
    let ran = cases.iter().filter(|c| c.get("not_run").is_none()).count();
    assert_eq!(ran, 7, "six passing cases, then the trap: {o}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "the check took {took:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_failed_assert_on_the_gpu_quotes_what_the_device_printed() {
    let o = on_gpu("p01_assert");
    let d = first_of(&o, "trap");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("assertion `i < size` failed"), "{d}");
    assert_eq!(d["line"], 8, "{d}");
    assert!(d["block"].is_array() && d["thread"].is_array(), "{d}");
    let printed = o.to_string();
    assert!(
        !printed.contains("Assertion `"),
        "the device's line stays out of printf: {o}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_store_into_an_input_on_the_gpu_is_wrote_input() {
    let o = on_gpu("p01_writes_input");
    let d = first_of(&o, "wrote_input");
    assert!(d["message"].as_str().unwrap().contains("input `a`"), "{d}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn recursive_device_functions_pass_on_both_backends_bit_for_bit() {
    let file = "kernels/conformance/tests/fixtures/broken/p01_recursive_ok.cu";
    let out = run(&["check", "puzzle-01", "--kernel", file, "--json"]);
    let o: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(o["passed"], true, "{}", o["diagnostics"]);
    assert_eq!(o["backends"], serde_json::json!(["sim", "gpu"]));
    let a = &o["backend_agreement"];
    assert_eq!(a["cases"], a["identical"], "{a}");
}

/// The 200 generated kernels of the CI sample agree bit for bit, but for the known ones
/// (`fuzz::KNOWN_SM90`: f64 operations on two NaNs, where the GPU keeps the NaN of the
/// SASS slot ptxas chose), on an H100 as on the H200 that recorded them.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn generated_kernels_agree_bit_for_bit() {
    let out = run(&[
        "fuzz",
        "--seed",
        "2050000",
        "--count",
        "200",
        "--backend",
        "both",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let failed: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("✗ seed "))
        .filter_map(|l| l.split(':').next()?.parse().ok())
        .collect();
    let known: Vec<u64> = fuzz::KNOWN_SM90.iter().map(|k| k.0).collect();
    let new: Vec<&u64> = failed.iter().filter(|s| !known.contains(s)).collect();
    assert!(new.is_empty(), "{text}");
    assert!(
        text.contains("kernels passed (seeds 2050000..2050200"),
        "{text}"
    );
}
