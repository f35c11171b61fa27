//! The cheat corpus: submissions that want the points without solving, for puzzle 04 (the 1D
//! family) and puzzle 11 (tensor cores). Each must score nothing in `runner grade` (its row fails,
//! its Gradescope file scores 0) and in Gradescope's emulation (`run_autograder` in Gradescope's
//! layout), and no output may quote the grader: not the reference solution, not a classmate's
//! file, not a grade file of an earlier run, not `/etc/passwd`, not the runner's cache.
//!
//! The table of the published cases is made here, from `check --json --full` of the reference
//! solution: a kernel that picks the memorized output by its sizes. It passes `check` (the
//! published cases are all it knows); a grade's fresh cases are what it cannot know.

use crate::common;

use common::{repo, runner};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cheats-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn solution(puzzle: &str) -> String {
    std::fs::read_to_string(repo().join(format!("solutions/{puzzle}.cu"))).unwrap()
}

/// The published cases of `puzzle` as the reference solution computes them: each case's
/// parameters and expected output.
fn published(puzzle: &str) -> Vec<(Value, Vec<f64>)> {
    let out = Command::new(runner())
        .args(["check", puzzle, "--solution", "--backend", "sim", "--json"])
        .arg("--full")
        .current_dir(repo())
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let json: Value = serde_json::from_slice(&out.stdout).expect("check --json");
    assert_eq!(json["passed"], true, "the solution passes: {json}");
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["shrunk_from"].is_null())
        .map(|c| {
            let expected = c["expected"].as_array().expect("--full keeps the arrays");
            let values = expected.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect();
            (c["params"].clone(), values)
        })
        .collect()
}

/// A kernel body that writes, for the case whose `keys` parameters match, the memorized
/// `output[index]` (and zeros for any other case): a table of the published cases.
fn table(puzzle: &str, keys: &[&str], index: &str, head: &str) -> String {
    let mut values = String::new();
    let mut branches = String::new();
    let mut offset = 0;
    for (params, expected) in published(puzzle) {
        let test: Vec<String> = keys
            .iter()
            .map(|k| format!("{k} == {}", params[*k]))
            .collect();
        let _ = writeln!(
            branches,
            "    if ({}) {{ output[{index}] = memorized[{offset} + {index}]; return; }}",
            test.join(" && ")
        );
        for v in &expected {
            let _ = write!(values, "{:e}f,", *v as f32);
        }
        offset += expected.len();
    }
    format!(
        "// A table of the published cases, keyed on their sizes.\n__device__ const float memorized[{offset}] = {{{values}}};\n{head}\n{branches}    output[{index}] = 0.0f;\n}}\n"
    )
}

fn memorizer_04() -> String {
    table(
        "puzzle-04",
        &["input_size", "kernel_size"],
        "i",
        "extern \"C\" __global__ void conv1d(const float *input, const float *kernel, float *output, int input_size, int kernel_size) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= input_size - kernel_size + 1) return;",
    )
}

/// Puzzle 11's entry with its launch declared, up to `e`, the output element of the thread.
const P11_HEAD: &str = "extern \"C\" __device__ const int launch_shape[4] = {128, 128, 1, 0};\nextern \"C\" __global__ void conv2d_nhwc(const float *input, const float *weight, float *output, int batch, int input_rows, int input_cols, int input_channels, int output_channels, int kernel_rows, int kernel_cols) {\n    int m = blockIdx.x * 128 + threadIdx.x, o = blockIdx.y;\n    int pixels = batch * (input_rows - kernel_rows + 1) * (input_cols - kernel_cols + 1);\n    if (m >= pixels || o >= output_channels) return;\n    int e = m * output_channels + o;";

fn memorizer_11() -> String {
    table(
        "puzzle-11",
        &[
            "batch",
            "input_rows",
            "input_cols",
            "input_channels",
            "output_channels",
            "kernel_rows",
            "kernel_cols",
        ],
        "e",
        P11_HEAD,
    )
}

/// A puzzle 04 kernel whose body is `body` (with `i` the output index, guarded).
fn p04(body: &str) -> String {
    format!(
        "extern \"C\" __global__ void conv1d(const float *input, const float *kernel, float *output, int input_size, int kernel_size) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= input_size - kernel_size + 1) return;\n    {body}\n}}\n"
    )
}

/// A line of the reference solution that no report would print unless it read the file.
fn solution_marker() -> String {
    let text = solution("puzzle-04");
    text.lines()
        .map(str::trim)
        .filter(|l| l.len() > 30 && !l.starts_with("//"))
        .max_by_key(|l| l.len())
        .expect("a long line")
        .to_string()
}

/// What no output may hold: a line of the solution, the classmate's and the grade file's markers,
/// `/etc/passwd`'s first field.
fn quoted_grader(text: &str) -> Option<&'static str> {
    if text.contains(&solution_marker()) {
        return Some("the reference solution");
    }
    [
        ("CLASSMATE_MARKER_7731", "a classmate's file"),
        ("GRADE_FILE_MARKER_5521", "an earlier grade file"),
        ("root:x:0:0", "/etc/passwd"),
        ("CACHE_MARKER_9913", "the runner's cache"),
    ]
    .into_iter()
    .find(|(m, _)| text.contains(m))
    .map(|(_, what)| what)
}

/// The puzzle 04 attacks: (file name, source). `solution_path` is the reference solution's
/// absolute path, `cache_file` a file in the runner's cache.
fn attacks_04(solution_path: &Path, cache_file: &Path) -> Vec<(String, String)> {
    let sol = solution_path.display();
    let cache = cache_file.display();
    let include_in_macro = |name: &str| {
        format!(
            "#define S(...) #__VA_ARGS__\nstatic_assert(sizeof(S(\n#include \"{name}\"\n)) == 1, S(\n#include \"{name}\"\n));\n{}",
            p04("output[i] = 0.0f;")
        )
    };
    vec![
        ("table.cu".into(), memorizer_04()),
        ("zeros.cu".into(), p04("output[i] = 0.0f;")),
        ("constant.cu".into(), p04("output[i] = 1.0f;")),
        (
            "writes-input.cu".into(),
            p04("((float *)input)[i] = 0.0f; output[i] = 0.0f;"),
        ),
        (
            "reads-past.cu".into(),
            p04("output[i] = input[i + input_size] + kernel[kernel_size + 7];"),
        ),
        (
            "hangs-last.cu".into(),
            p04("if (input_size == 4608) { while (true) {} } output[i] = 0.0f;"),
        ),
        (
            "printf-pass.cu".into(),
            p04(
                "if (i == 0) printf(\"\\u2713 puzzle-04 passed (12/12 cases, sim)\\n\"); output[i] = 0.0f;",
            ),
        ),
        (
            "classmate.cu".into(),
            format!("#include \"bob.cu\"\n{}", p04("output[i] = 0.0f;")),
        ),
        ("classmate-in-macro.cu".into(), include_in_macro("bob.cu")),
        ("grade-file-in-macro.cu".into(), include_in_macro("grade.csv")),
        (
            "solution-absolute.cu".into(),
            format!("#include \"{sol}\"\n"),
        ),
        ("solution-digraph.cu".into(), format!("%:include \"{sol}\"\n")),
        (
            "solution-raw-string.cu".into(),
            format!("const char *s = R\"x(\" /*)x\";\n#include \"{sol}\"\n// */\n"),
        ),
        (
            "solution-climbing.cu".into(),
            "#include \"../../../../../../../../../../../../../../../../../../../../tmp/../etc/passwd\"\n"
                .into(),
        ),
        (
            "passwd-digraph.cu".into(),
            format!("%:include \"/etc/passwd\"\n{}", p04("output[i] = 0.0f;")),
        ),
        (
            "passwd-in-macro.cu".into(),
            include_in_macro("/etc/passwd"),
        ),
        (
            "cache-file.cu".into(),
            format!("#include \"{cache}\"\n{}", p04("output[i] = 0.0f;")),
        ),
    ]
}

/// A class folder for puzzle 04: every attack, bob (a classmate who solved it, whose file also
/// holds a marker), a grade.csv of an earlier run, a link and a hard link to the solution. The
/// runner's cache holds a marker file for the duration (removed by the caller).
fn class_04(dir: &Path) -> PathBuf {
    let cache = spec_cache_file();
    std::fs::write(&cache, "int CACHE_MARKER_9913;\n").unwrap();
    let solution_path = repo().join("solutions/puzzle-04.cu");
    for (name, text) in attacks_04(&solution_path, &cache) {
        std::fs::write(dir.join(name), text).unwrap();
    }
    std::fs::write(
        dir.join("bob.cu"),
        format!("// CLASSMATE_MARKER_7731\n{}", solution("puzzle-04")),
    )
    .unwrap();
    std::fs::write(
        dir.join("grade.csv"),
        "file,passed\nGRADE_FILE_MARKER_5521,true\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&solution_path, dir.join("link.cu")).unwrap();
    let copy = dir.join("hard-source.txt");
    std::fs::write(&copy, solution("puzzle-04")).unwrap();
    std::fs::hard_link(&copy, dir.join("hard-link.cu")).unwrap();
    cache
}

/// A file in the runner's cache folder (`spec::cache_dir`'s rule).
fn spec_cache_file() -> PathBuf {
    let dir = std::env::var_os("CONV_WORKBOOK_CACHE").map_or_else(
        || {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .unwrap_or_else(std::env::temp_dir)
                .join("conv-workbook")
        },
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("cheat-probe-{}.h", std::process::id()))
}

/// `runner grade puzzle` over `dir` (output in `out`), Gradescope files too; grade.json.
fn grade(puzzle: &str, dir: &Path, out: &Path, env: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(runner());
    cmd.args(["grade", puzzle])
        .arg(dir)
        .args(["--backend", "sim", "--format", "gradescope", "--out"])
        .arg(out)
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let graded = cmd.output().expect("runner runs");
    let stdout = String::from_utf8_lossy(&graded.stdout);
    assert!(
        graded.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&graded.stderr)
    );
    assert_eq!(quoted_grader(&stdout), None, "{stdout}");
    read_json(&out.join("grade.json"))
}

/// Every row but the `honest` ones failed; every Gradescope file of a cheat scored 0; nothing
/// quotes the grader.
fn assert_cheats_score_nothing(out: &Path, report: &Value, honest: &[&str]) {
    let csv = std::fs::read_to_string(out.join("grade.csv")).unwrap();
    assert_eq!(quoted_grader(&csv), None, "{csv}");
    for row in report["submissions"].as_array().unwrap() {
        let file = row["file"].as_str().unwrap();
        if honest.contains(&file) {
            continue;
        }
        assert_eq!(row["passed"], false, "{file} passed: {row}");
        let stem = file.strip_suffix(".cu").unwrap();
        let results = read_json(&out.join("gradescope").join(format!("{stem}.json")));
        assert_eq!(results["score"], 0.0, "{file} scored: {results}");
        let text = results.to_string();
        assert_eq!(quoted_grader(&text), None, "{file}: {text}");
    }
}

/// `runner check puzzle --kernel file` on the simulator: whether it passed, and what it printed.
fn check_sim(puzzle: &str, file: &Path) -> (bool, String) {
    let out = Command::new(runner())
        .args(["check", puzzle, "--backend", "sim", "--kernel"])
        .arg(file)
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .env("NO_COLOR", "1")
        .output()
        .expect("runner runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `runner check puzzle --kernel file` on the simulator passes all the published cases.
fn passes_check(puzzle: &str, file: &Path, cases: usize) {
    let (passed, text) = check_sim(puzzle, file);
    assert!(
        passed && text.contains(&format!("passed ({cases}/{cases}")),
        "a faithful table passes check's published cases: {text}"
    );
}

#[test]
fn the_table_of_published_cases_passes_check_but_not_a_grade() {
    let dir = scratch("table");
    let file = dir.join("table.cu");
    std::fs::write(&file, memorizer_04()).unwrap();
    passes_check("puzzle-04", &file, 12);
    let report = grade("puzzle-04", &dir, &dir.join("out"), &[]);
    assert_cheats_score_nothing(&dir.join("out"), &report, &[]);
    // `check --seed` of the grade's seed runs the grade's cases: the table fails them there too.
    let seed = report["seed"].to_string();
    let again = Command::new(runner())
        .args([
            "check",
            "puzzle-04",
            "--backend",
            "sim",
            "--json",
            "--seed",
            &seed,
        ])
        .arg("--kernel")
        .arg(&file)
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let json: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json["passed"], false, "{json}");
    let cases = json["cases"].as_array().unwrap();
    let graded = report["submissions"][0]["cases_total"].as_u64().unwrap() as usize;
    let own = cases.iter().filter(|c| c["shrunk_from"].is_null()).count();
    assert_eq!(own, graded, "the grade's cases, no more, no fewer");
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`class_04`] graded with `env`, every cheat checked to score nothing (bob, the classmate,
/// solved it); the scratch folder and grade.json.
fn grade_class_04(test: &str, env: &[(&str, &str)]) -> (PathBuf, Value) {
    let dir = scratch(test);
    let class = dir.join("class");
    std::fs::create_dir_all(&class).unwrap();
    let cache = class_04(&class);
    let report = grade("puzzle-04", &class, &dir.join("out"), env);
    let _ = std::fs::remove_file(&cache);
    assert_cheats_score_nothing(&dir.join("out"), &report, &["bob.cu"]);
    (dir, report)
}

#[test]
fn every_puzzle_04_cheat_scores_nothing_in_grade() {
    let (dir, report) = grade_class_04("class04", &[]);
    let names: Vec<&str> = report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"hard-link.cu") && names.contains(&"bob.cu"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"link.cu"),
        "a link is never graded: {names:?}"
    );
    let protection = report["protection"].as_str().unwrap();
    assert!(
        ["landlock", "headers-only"].contains(&protection),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_landlock_the_include_attacks_are_refused_and_the_grade_says_so() {
    let (dir, report) = grade_class_04("nolandlock", &[("CONV_WORKBOOK_NO_LANDLOCK", "1")]);
    assert_eq!(report["protection"], "headers-only");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gradescope's layout under `root`: the students' copy as the workbook, `files` as the
/// submission; run_autograder's results.json.
fn autograde(root: &Path, conf: &str, files: &[(String, String)]) -> Value {
    let workbook = root.join("source/workbook");
    let out = Command::new(runner())
        .arg("--root")
        .arg(repo())
        .arg("release")
        .arg(&workbook)
        .output()
        .expect("runner runs");
    assert!(out.status.success());
    for (name, text) in files {
        let path = root.join("submission").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(root.join("source/puzzles.conf"), conf).unwrap();
    let status = Command::new("bash")
        .arg(repo().join("graders/gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", root)
        .env("RUNNER", runner())
        .env("WORKBOOK_STATE", root.join("state.json"))
        .env("NO_COLOR", "1")
        .status()
        .expect("bash runs");
    assert!(status.success());
    read_json(&root.join("results/results.json"))
}

#[test]
fn every_puzzle_04_cheat_scores_nothing_in_gradescope() {
    let dir = scratch("gradescope04");
    let cache = spec_cache_file();
    std::fs::write(&cache, "int CACHE_MARKER_9913;\n").unwrap();
    let mut attacks = attacks_04(&repo().join("solutions/puzzle-04.cu"), &cache);
    attacks.push((
        "setup-in-macro.cu".into(),
        format!(
            "#define S(...) #__VA_ARGS__\nconst char *s = S(\n#include \"/autograder/source/setup.sh\"\n);\n{}",
            p04("output[i] = 0.0f;")
        ),
    ));
    for (n, (name, text)) in attacks.iter().enumerate() {
        let root = dir.join(n.to_string());
        let results = autograde(
            &root,
            "puzzle-04 10\n",
            &[("puzzle-04.cu".to_string(), text.clone())],
        );
        assert_eq!(results["score"], 0.0, "{name}: {results}");
        let text = results.to_string();
        assert_eq!(quoted_grader(&text), None, "{name}: {text}");
        assert!(results["extra_data"]["seed"].is_u64(), "{name}: {results}");
    }
    // A link to the grader's own file, as unzip recreates one: refused, never read.
    let root = dir.join("link");
    let results = autograde(&root, "puzzle-04 10\n", &[]);
    assert_eq!(results["score"], 0.0);
    let sub = root.join("submission");
    std::fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink(
        repo().join("solutions/puzzle-04.cu"),
        sub.join("puzzle-04.cu"),
    )
    .unwrap();
    let status = Command::new("bash")
        .arg(repo().join("graders/gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", &root)
        .env("RUNNER", runner())
        .env("WORKBOOK_STATE", root.join("state.json"))
        .status()
        .expect("bash runs");
    assert!(status.success());
    let results = read_json(&root.join("results/results.json"));
    assert_eq!(results["score"], 0.0, "{results}");
    let text = results.to_string();
    assert!(text.contains("it is a link"), "{text}");
    assert_eq!(quoted_grader(&text), None, "{text}");
    let _ = std::fs::remove_file(&cache);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn puzzle_11_table_and_fp32_score_nothing() {
    let dir = scratch("class11");
    let class = dir.join("class");
    std::fs::create_dir_all(&class).unwrap();
    std::fs::write(class.join("table.cu"), memorizer_11()).unwrap();
    std::fs::copy(
        repo().join("runner/tests/fixtures/p11_fp32.cu"),
        class.join("fp32.cu"),
    )
    .unwrap();
    std::fs::write(
        class.join("zeros.cu"),
        format!("{P11_HEAD}\n    output[e] = 0.0f;\n}}\n"),
    )
    .unwrap();
    // On a tensor-core puzzle a table fails even the published cases: the budget wants the
    // convolution's multiply-adds on the tensor cores, and a table does none.
    let (passed, text) = check_sim("puzzle-11", &class.join("table.cu"));
    assert!(
        !passed && text.contains("budget_exceeded: the tensor cores did 0"),
        "a table of puzzle 11's cases fails check's tensor-core budget: {text}"
    );
    let report = grade("puzzle-11", &class, &dir.join("out"), &[]);
    assert_cheats_score_nothing(&dir.join("out"), &report, &[]);
    let results = autograde(
        &dir.join("gradescope"),
        "puzzle-11 10\n",
        &[("puzzle-11.cu".to_string(), memorizer_11())],
    );
    assert_eq!(results["score"], 0.0, "{results}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_edited_include_compiles_again() {
    // The compile cache's key covers every local file the kernel includes: a pass with the
    // solution in impl.cuh, then impl.cuh emptied, must not pass from the cache.
    let dir = scratch("cache");
    let kernel = dir.join("kernel.cu");
    std::fs::write(&kernel, "#include \"impl.cuh\"\n").unwrap();
    std::fs::write(dir.join("impl.cuh"), solution("puzzle-04")).unwrap();
    let check = || {
        Command::new(runner())
            .args(["check", "puzzle-04", "--backend", "sim", "--kernel"])
            .arg(&kernel)
            .env("WORKBOOK_STATE", "/nonexistent/state.json")
            .output()
            .expect("runner runs")
            .status
            .success()
    };
    assert!(check(), "the solution through impl.cuh passes");
    std::fs::write(dir.join("impl.cuh"), "").unwrap();
    assert!(
        !check(),
        "an emptied impl.cuh fails: the cache saw the edit"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
