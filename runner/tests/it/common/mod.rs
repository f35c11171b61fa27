//! What several integration tests share: a scratch workbook and a `runner watch` child read
//! line by line. Each test crate uses a part of it.

#![allow(dead_code)]

pub mod rewrites;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// The repository's root: `WORKBOOK_ROOT`, else where this test was built (a test binary carried
/// to a GPU machine is told where the workbook is there).
pub fn repo() -> PathBuf {
    std::env::var_os("WORKBOOK_ROOT").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap()
                .to_path_buf()
        },
        PathBuf::from,
    )
}

/// The runner binary: `RUNNER_BIN`, else the one cargo built beside this test.
pub fn runner() -> PathBuf {
    std::env::var_os("RUNNER_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_runner")),
        PathBuf::from,
    )
}

/// Runs the runner in the workbook with `args`, colors off and no learner state.
pub fn run(args: &[&str]) -> Output {
    command(args).output().expect("runner runs")
}

/// The runner in the workbook with `args`, colors off and no learner state, to run.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(runner());
    command
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json");
    command
}

/// `runner profile --color never ARGS` in the workbook, which must succeed: what it printed.
pub fn profile(args: &[&str]) -> String {
    let out = run(&[&["profile", "--color", "never"], args].concat());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The words of a profile's table row whose first word is `label`.
pub fn profile_row(text: &str, label: &str) -> Vec<String> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no row {label} in\n{text}"))
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The JSON object `out` printed.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Fails clearly when a GPU test was asked for on a machine without a GPU.
///
/// The guard holds the GPU for the calling test: the tests of one binary run their kernels one
/// test at a time, so a test with a time bound (grading twenty submissions) is not measured
/// against the other tests' launches on the same GPU.
pub fn require_gpu() -> std::sync::MutexGuard<'static, ()> {
    static GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());
    assert!(
        gpu::probe().is_some(),
        "this test needs a CUDA GPU, and none was found (libcuda did not load or reports no device)"
    );
    GPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// The repository's file `base` with each `(find, replace)` of `edits` applied in turn (each
/// `find` must occur exactly once), written to `NAME.cu` in a scratch folder: a broken kernel as
/// one mistake made in a correct one, so a corpus holds no second copy of it. With the 1-based
/// line of the first edit.
pub fn mutate(base: &str, name: &str, edits: &[(&str, &str)]) -> (PathBuf, u64) {
    let mut src = std::fs::read_to_string(repo().join(base)).unwrap();
    let mut first = None;
    for (find, replace) in edits {
        assert_eq!(src.matches(find).count(), 1, "{name}: `{find}` not once");
        let at = src.find(find).unwrap();
        first.get_or_insert(src[..at].matches('\n').count() as u64 + 1);
        src = src.replacen(find, replace, 1);
    }
    let dir = std::env::temp_dir().join(format!("mutants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.cu"));
    std::fs::write(&path, src).unwrap();
    (path, first.expect("at least one edit"))
}

/// `runner check PUZZLE --kernel FILE --backend BACKEND --json [extra]` in the workbook, its exit
/// status checked against its verdict: whether it passed, and its diagnostics.
pub fn check_kernel(
    puzzle: &str,
    file: &Path,
    backend: &str,
    extra: &[&str],
) -> (bool, Vec<serde_json::Value>) {
    let v = check_json(puzzle, file, backend, extra);
    let passed = v["passed"].as_bool().unwrap();
    (passed, v["diagnostics"].as_array().unwrap().clone())
}

/// [`check_kernel`]'s whole JSON object (its cases too), the exit status checked the same way.
pub fn check_json(puzzle: &str, file: &Path, backend: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(runner())
        .args(["check", puzzle, "--kernel"])
        .arg(file)
        .args(["--backend", backend, "--json"])
        .args(extra)
        .current_dir(repo())
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let v = json(&out);
    let status = if v["passed"].as_bool().unwrap() { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(status), "{}", file.display());
    v
}

/// The diagnostic of `kind` among `d`, which must exist.
pub fn find_kind<'a>(name: &str, d: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    d.iter()
        .find(|x| x["kind"] == kind)
        .unwrap_or_else(|| panic!("{name}: no {kind} in {d:#?}"))
}

/// [`find_kind`], and where `file` marks a line with `// expect: KIND`, the diagnostic is at that
/// line (a wrong output has no line of its own: its mark says where the mistake is).
pub fn find_marked<'a>(
    name: &str,
    file: &Path,
    d: &'a [serde_json::Value],
    kind: &str,
) -> &'a serde_json::Value {
    let found = find_kind(name, d, kind);
    let src = std::fs::read_to_string(file).unwrap();
    let marked = src
        .lines()
        .position(|l| l.contains(&format!("// expect: {kind}")))
        .map(|i| i as u64 + 1);
    if let Some(line) = marked.filter(|_| kind != "wrong_output") {
        assert_eq!(found["line"].as_u64(), Some(line), "{name}: {found:#?}");
    }
    found
}

/// A diagnostic's message.
pub fn message(d: &serde_json::Value) -> &str {
    d["message"].as_str().unwrap()
}

/// A workbook root holding only puzzles 01 and 02 as skeletons, named for `test`.
pub fn scratch_root(test: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for p in ["puzzle-01", "puzzle-02"] {
        let dir = root.join("puzzles").join(p);
        std::fs::create_dir_all(&dir).unwrap();
        let skeleton = repo().join("puzzles").join(p).join("kernel.cu");
        std::fs::copy(skeleton, dir.join("kernel.cu")).unwrap();
    }
    std::fs::create_dir_all(root.join("solutions")).unwrap();
    root
}

/// A `runner watch` child on `root`; killed when dropped, passed or not.
pub struct Watching {
    child: Child,
    lines: Receiver<String>,
    /// Everything it printed so far.
    pub seen: String,
}

impl Watching {
    pub fn start(runner: &Path, root: &Path, backend: &str) -> Watching {
        let mut child = Command::new(runner)
            .args(["--root".as_ref(), root.as_os_str(), "watch".as_ref()])
            .args(["--backend", backend])
            .env("NO_COLOR", "1")
            .env("WORKBOOK_STATE", root.join("state.json"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("runner runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watching {
            child,
            lines,
            seen: String::new(),
        }
    }

    /// Reads lines until one contains `want` (panics with everything read after 120 s); returns
    /// what was read since the call began.
    pub fn wait_for(&mut self, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut now = String::new();
        while !now.contains(want) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    now.push_str(&line);
                    now.push('\n');
                    self.seen.push_str(&line);
                    self.seen.push('\n');
                }
                Err(_) => panic!(
                    "no `{want}` within 120 s; the watcher printed:\n{}",
                    self.seen
                ),
            }
        }
        now
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
