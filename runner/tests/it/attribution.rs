//! A wrong output names the thread that owns it under the puzzle's own launch rule: puzzle 06's
//! thread t owns outputs t * OUTPUTS_PER_THREAD + r of its block, puzzle 07's thread t the rows
//! t, t + THREADS, ... of its block's BLOCK_SIZE outputs. Each reference solution is broken for
//! one thread only (block 1, thread 3 adds 1 to its last output), and the diagnostic must name
//! that thread, not the one a one-output-per-thread rule would. Puzzle 08 declares its own launch:
//! the diagnostic names the block its shape gives, and no thread. And a race on shared memory, or
//! an access past its end, through a pointer the learner declared into the tile names that pointer
//! beside the array.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The solution of `puzzle` with `line` inserted before the line that starts with `before`.
fn broken(puzzle: &str, before: &str, line: &str) -> std::path::PathBuf {
    let src = std::fs::read_to_string(root().join(format!("solutions/{puzzle}.cu"))).unwrap();
    let at = src.find(before).expect("the anchor line");
    let file = std::env::temp_dir().join(format!("{puzzle}-owner-{}.cu", std::process::id()));
    std::fs::write(&file, format!("{}{line}\n{}", &src[..at], &src[at..])).unwrap();
    file
}

/// The first diagnostic of checking `file` against `puzzle` on case `case`.
fn first_diagnostic(puzzle: &str, file: &Path, case: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("--root")
        .arg(root())
        .args([
            "check",
            puzzle,
            "--backend",
            "sim",
            "--json",
            "--case",
            case,
        ])
        .arg("--kernel")
        .arg(file)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let _ = std::fs::remove_file(file);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    json["diagnostics"][0].clone()
}

#[test]
fn puzzle_06_names_the_thread_of_its_register_block() {
    let file = broken(
        "puzzle-06",
        "    int mine = first",
        "    if (blockIdx.x == 1 && threadIdx.x == 3) acc[R - 1] += 1.0f;",
    );
    let d = first_diagnostic("puzzle-06", &file, "edge-three-blocks");
    assert_eq!(d["kind"], "wrong_output", "{d}");
    assert_eq!(
        (&d["block"][0], &d["thread"][0]),
        (&1.into(), &3.into()),
        "{d}"
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("(block 1 thread 3)"),
        "{d}"
    );
}

#[test]
fn puzzle_07_names_the_thread_of_its_broadcast_rows() {
    let file = broken(
        "puzzle-07",
        "    // tl.store",
        "    if (blockIdx.x == 1 && threadIdx.x == 3) acc[ROWS - 1] += 1.0f;",
    );
    let d = first_diagnostic("puzzle-07", &file, "edge-three-blocks");
    assert_eq!(d["kind"], "wrong_output", "{d}");
    assert_eq!(
        (&d["block"][0], &d["thread"][0]),
        (&1.into(), &3.into()),
        "{d}"
    );
}

/// Puzzle 08's kernel declares its launch: block b owns outputs b * OUTPUTS_PER_BLOCK.., and which
/// of its threads computes which is the kernel's own choice, so the diagnostic names the block and
/// no thread (a one-output-per-thread guess would name a thread that may not own it).
#[test]
fn puzzle_08_names_the_block_its_declared_shape_gives_and_no_thread() {
    let src = "extern \"C\" __device__ const int launch_shape[3] = {64, 128, 0};\n\
        extern \"C\" __global__ void conv1d(const float* input, const float* kernel, float* output,\n\
                                          int input_size, int kernel_size)\n\
        {\n\
            for (int i = blockIdx.x * 128 + threadIdx.x; i < blockIdx.x * 128 + 128; i += 64) {\n\
                if (i >= input_size - kernel_size + 1) return;\n\
                float sum = 0.0f;\n\
                for (int j = 0; j < kernel_size; j++) sum += input[i + j] * kernel[j];\n\
                if (blockIdx.x == 2) sum += 1.0f;\n\
                output[i] = sum;\n\
            }\n\
        }\n";
    let file = std::env::temp_dir().join(format!("puzzle-08-owner-{}.cu", std::process::id()));
    std::fs::write(&file, src).unwrap();
    let d = first_diagnostic("puzzle-08", &file, "edge-three-blocks");
    assert_eq!(d["kind"], "wrong_output", "{d}");
    assert_eq!(d["block"], serde_json::json!([2, 0, 0]), "{d}");
    assert!(d.get("thread").is_none(), "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("[256] yours") && message.contains("(block 2)"),
        "{d}"
    );
}

/// Puzzle 04's solution with each `(find, replace)` of `edits` made once, checked on `random-1`:
/// its first diagnostic's kind and message.
fn puzzle_04_with(name: &str, edits: &[(&str, &str)]) -> (String, String) {
    let mut src = std::fs::read_to_string(root().join("solutions/puzzle-04.cu")).unwrap();
    for (find, replace) in edits {
        assert!(src.contains(find), "{find}");
        src = src.replacen(find, replace, 1);
    }
    let file = std::env::temp_dir().join(format!("puzzle-04-{name}-{}.cu", std::process::id()));
    std::fs::write(&file, src).unwrap();
    let d = first_diagnostic("puzzle-04", &file, "random-1");
    let _ = std::fs::remove_file(&file);
    let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
    (text("kind"), text("message"))
}

#[test]
fn accesses_through_a_pointer_alias_name_the_pointer_and_the_array() {
    const WINDOW: &str = "    const float* window = tile + threadIdx.x;\n";
    const SUM: &str = "sum += tile[threadIdx.x + j] * kernel[j];";
    // Puzzle 04's solution without its barrier, the sum reading the tile through `window`; then
    // with its barrier, reading one element too far through `window`.
    let race: &[(&str, &str)] = &[
        ("    __syncthreads();\n", WINDOW),
        (SUM, "sum += window[j] * kernel[j];"),
    ];
    let past = format!("{WINDOW}    float sum = 0.0f;\n");
    let oob: &[(&str, &str)] = &[
        ("    float sum = 0.0f;\n", &past),
        (SUM, "sum += window[j + 1] * kernel[j];"),
    ];
    for (name, edits, want, after) in [
        ("race", race, "race", ""),
        ("oob", oob, "out_of_bounds", ", but"),
    ] {
        let (kind, text) = puzzle_04_with(name, edits);
        assert_eq!(kind, want, "{text}");
        let through = format!("]` through your pointer `window`{after}");
        assert!(
            text.contains("reads `tile[") && text.contains(&through),
            "{text}"
        );
    }
}
