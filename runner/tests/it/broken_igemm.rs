//! The corpus of broken implicit-GEMM kernels (puzzle 11): the mistakes of a first tensor-core
//! convolution, each checked by the real runner on the simulator with `--json`, and the diagnosis
//! each must get. `fixtures/broken_igemm/p11_ok.cu` passes with no diagnostic, so the checks are
//! not merely suspicious; each broken kernel is one mistake made in it by a textual edit here
//! ([`common::mutate`]), and an edit marks the line its diagnostic must point at with
//! `// expect: KIND`.
//!
//! On an H100 (`--backend gpu`, one call of issue 15's session) the three arithmetic mistakes fail
//! with the same wrong outputs, while the missing barrier and the tail that is not zero-filled pass
//! every case: the race is lost in no run and the stale shared words happen to be a previous tile's.
//! Only the simulator's checks catch those two.

use crate::common;

use common::{find_marked as find, message, mutate, repo};
use serde_json::Value;
use std::path::{Path, PathBuf};

const OK: &str = "runner/tests/fixtures/broken_igemm/p11_ok.cu";

/// `runner check puzzle-11 --kernel FILE --backend sim --json`: passed, diagnostics.
fn check(file: &Path) -> (bool, Vec<Value>) {
    common::check_kernel("puzzle-11", file, "sim", &[])
}

/// `p11_ok.cu` with `edits` made in it, checked: the file, passed, diagnostics.
fn broken(name: &str, edits: &[(&str, &str)]) -> (PathBuf, bool, Vec<Value>) {
    let (file, _) = mutate(OK, name, edits);
    let (passed, d) = check(&file);
    (file, passed, d)
}

/// Every diagnostic is a wrong output (no crash, race or uninitialized read: the kernel is sound,
/// its arithmetic is not), and the first names the output by (image, row, column, channel) and
/// the block's tile.
fn only_wrong_outputs(name: &str, edits: &[(&str, &str)]) -> Vec<Value> {
    let (_, passed, d) = broken(name, edits);
    assert!(!passed, "{name} passes");
    assert!(
        d.iter().all(|x| x["kind"] == "wrong_output"),
        "{name}: {d:#?}"
    );
    let first = message(&d[0]);
    assert!(
        first.contains("(image 0, row 0, column 0, channel 0)") && first.contains("(block (0,0))"),
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
    let (passed, d) = check(&repo().join(OK));
    assert!(passed && d.is_empty(), "{d:#?}");
}

#[test]
fn k_decomposed_in_the_wrong_order_is_a_wrong_output() {
    // The weight is [kernel_rows][kernel_cols][input_channels][output_channels], so k = (i * kc +
    // j) * ic + ch; this A takes k channel-major (k = ch * kr * kc + tap): A and weight disagree.
    let d = only_wrong_outputs(
        "p11_k_order",
        &[(
            "int ch = k % input_channels, j = k / input_channels % kernel_cols;\n            \
             int i = k / (input_channels * kernel_cols);",
            "int ch = k / (kernel_rows * kernel_cols), j = k % kernel_cols;\n            \
             int i = k / kernel_cols % kernel_rows;",
        )],
    );
    assert!(
        message(&d[0]).starts_with("12 of 12 elements differ"),
        "{d:#?}"
    );
}

#[test]
fn a_skipped_channel_is_a_wrong_output() {
    // An off-by-one in the channel guard leaves the last channel zero in A.
    let d = only_wrong_outputs(
        "p11_skipped_channel",
        &[(
            "if (m < M && k < K) {",
            "if (m < M && k < K && ch + 1 < input_channels) {",
        )],
    );
    // The last channel of the exact example is missing: 11 of its 12 outputs move.
    assert!(
        message(&d[0]).starts_with("11 of 12 elements differ"),
        "{d:#?}"
    );
}

#[test]
fn a_mixed_up_fragment_layout_is_a_wrong_output() {
    // The PTX ISA gives lane (g, t) A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]; this one
    // loads the second and third the other way round.
    only_wrong_outputs(
        "p11_fragment_layout",
        &[(
            "tf32(sa[wm + g + 8][t]), tf32(sa[wm + g][t + 4]),",
            "tf32(sa[wm + g][t + 4]), tf32(sa[wm + g + 8][t]),",
        )],
    );
}

#[test]
fn a_tail_not_zero_filled_is_an_uninitialized_read_of_the_fragment() {
    // Rows past M and k past K are skipped instead of written as zeros, so the mma reads whatever
    // the shared tile held: nothing at all where no earlier tile wrote it.
    let name = "p11_no_zero_fill";
    let (file, _, d) = broken(
        name,
        &[
            ("            float v = 0.0f;\n", ""),
            (
                "                v = input[",
                "                sa[r][kk] = input[",
            ),
            (
                "            }\n            sa[r][kk] = v;\n",
                "            }\n",
            ),
            (
                "unsigned a[4] = {tf32(sa[wm + g][t]), ",
                "unsigned a[4] = {tf32(sa[wm + g][t]), // expect: uninitialized_read\n                 ",
            ),
        ],
    );
    let u = find(name, &file, &d, "uninitialized_read");
    assert!(message(u).contains("reads `sa["), "{u:#?}");
    assert!(u["thread"].is_array(), "{u:#?}");
}

#[test]
fn a_missing_barrier_before_the_tile_is_reused_is_a_race() {
    // No barrier between the mma's reads of a shared tile and the next K tile's writes over it.
    let name = "p11_missing_barrier";
    let (file, _, d) = broken(
        name,
        &[
            (
                "            sa[r][kk] = v;\n",
                "            sa[r][kk] = v; // expect: race\n",
            ),
            ("        __syncthreads();\n    }\n", "    }\n"),
        ],
    );
    let race = find(name, &file, &d, "race");
    assert!(
        message(race).contains("writes `sa[") && message(race).contains("no __syncthreads()"),
        "{race:#?}"
    );
}

#[test]
fn lanes_that_returned_before_the_mma_are_named_by_the_line_they_left_at() {
    // A guard on the warp's rows before the product: where M is not a multiple of 16, the lanes of
    // warp 0's rows g + 8 >= M leave, and the mma.sync runs without them. The diagnostic names the
    // `return` (or the `if` that jumped to it), as a barrier's does.
    let name = "p11_return_before_mma";
    let (file, line) = mutate(
        OK,
        name,
        &[(
            "        unsigned a[4] = {",
            "        if (m0 + wm + g + 8 >= M) {\n            return;\n        }\n        unsigned a[4] = {",
        )],
    );
    let (passed, d) = check(&file);
    assert!(!passed, "{name} passes");
    let div = common::find_kind(name, &d, "barrier_divergence");
    let text = message(div);
    assert!(
        text.contains("`mma.sync` is a warp-wide collective"),
        "{text}"
    );
    let left = |l: u64| format!(" left at line {l} and did not reach it");
    assert!(
        text.contains(&left(line)) || text.contains(&left(line + 1)),
        "{text}"
    );
}
