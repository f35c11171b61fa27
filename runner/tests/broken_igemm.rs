//! The corpus of broken implicit-GEMM kernels (puzzle 11): the mistakes of a first tensor-core
//! convolution, each checked by the real runner on the simulator with `--json`, and the diagnosis
//! each must get. A fixture in `fixtures/broken_igemm/` marks the line its diagnostic must point at
//! with `// expect: KIND`, so source and test cannot drift. `p11_ok.cu`, of which each broken one
//! changes one thing, passes with no diagnostic, so the checks are not merely suspicious.
//!
//! On an H100 (`--backend gpu`, one call of issue 15's session) the three arithmetic mistakes fail
//! with the same wrong outputs, while the missing barrier and the tail that is not zero-filled pass
//! every case: the race is lost in no run and the stale shared words happen to be a previous tile's.
//! Only the simulator's checks catch those two.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `runner check puzzle-11 --kernel fixtures/broken_igemm/NAME.cu --backend sim --json`.
fn check(name: &str) -> (bool, Vec<Value>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let file = format!("runner/tests/fixtures/broken_igemm/{name}.cu");
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args([
            "check",
            "puzzle-11",
            "--kernel",
            &file,
            "--backend",
            "sim",
            "--json",
        ])
        .current_dir(root)
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let passed = v["passed"].as_bool().unwrap();
    assert_eq!(
        out.status.code(),
        Some(if passed { 0 } else { 1 }),
        "{name}"
    );
    (passed, v["diagnostics"].as_array().unwrap().clone())
}

/// The diagnostic of `kind`, which must exist; where the fixture marks a line for it, it is there.
fn find<'a>(name: &str, d: &'a [Value], kind: &str) -> &'a Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join(format!("tests/fixtures/broken_igemm/{name}.cu")))
        .unwrap();
    let found = d
        .iter()
        .find(|x| x["kind"] == kind)
        .unwrap_or_else(|| panic!("{name}: no {kind} in {d:#?}"));
    let marked = src
        .lines()
        .position(|l| l.contains(&format!("// expect: {kind}")))
        .map(|i| i as u64 + 1);
    if let Some(line) = marked {
        assert_eq!(found["line"].as_u64(), Some(line), "{name}: {found:#?}");
    }
    found
}

fn message(d: &Value) -> &str {
    d["message"].as_str().unwrap()
}

/// Every diagnostic is a wrong output (no crash, race or uninitialized read: the kernel is sound,
/// its arithmetic is not), and the first names the pixel, the channel and the block's tile.
fn only_wrong_outputs(name: &str) -> Vec<Value> {
    let (passed, d) = check(name);
    assert!(!passed, "{name} passes");
    assert!(
        d.iter().all(|x| x["kind"] == "wrong_output"),
        "{name}: {d:#?}"
    );
    let first = message(&d[0]);
    assert!(
        first.contains("(pixel 0, channel 0)") && first.contains("(block (0,0))"),
        "{name}: {first}"
    );
    assert_eq!(d[0]["block"], serde_json::json!([0, 0, 0]), "{name}");
    assert!(
        d[0]["thread"].is_null(),
        "{name}: the thread is the kernel's choice"
    );
    d
}

#[test]
fn a_correct_mma_kernel_passes_with_no_diagnostic() {
    let (passed, d) = check("p11_ok");
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn k_decomposed_in_the_wrong_order_is_a_wrong_output() {
    let d = only_wrong_outputs("p11_k_order");
    assert!(
        message(&d[0]).starts_with("12 of 12 elements differ"),
        "{d:#?}"
    );
}

#[test]
fn a_skipped_channel_is_a_wrong_output() {
    let d = only_wrong_outputs("p11_skipped_channel");
    // The last channel of the exact example is missing: 11 of its 12 outputs move.
    assert!(
        message(&d[0]).starts_with("11 of 12 elements differ"),
        "{d:#?}"
    );
}

#[test]
fn a_mixed_up_fragment_layout_is_a_wrong_output() {
    only_wrong_outputs("p11_fragment_layout");
}

#[test]
fn a_tail_not_zero_filled_is_an_uninitialized_read_of_the_fragment() {
    let (_, d) = check("p11_no_zero_fill");
    let u = find("p11_no_zero_fill", &d, "uninitialized_read");
    assert!(message(u).contains("reads `sa["), "{u:#?}");
    assert!(u["thread"].is_array(), "{u:#?}");
}

#[test]
fn a_missing_barrier_before_the_tile_is_reused_is_a_race() {
    let (_, d) = check("p11_missing_barrier");
    let race = find("p11_missing_barrier", &d, "race");
    assert!(
        message(race).contains("writes `sa[") && message(race).contains("no __syncthreads()"),
        "{race:#?}"
    );
}
