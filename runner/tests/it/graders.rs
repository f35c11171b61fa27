//! The graders an instructor uploads (`graders/`), run the way the platforms run them: Gradescope's
//! `run_autograder` in a folder laid out as Gradescope lays out `/autograder`, its zip, and the
//! GitHub Classroom workflow's commands on a student's repository. Every Gradescope results file
//! is checked against the schema of Gradescope's documented format.

use crate::common;

use common::{repo, runner};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("graders/gradescope/results.schema.json"))
        .expect("the schema");
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).expect("a valid schema")
}

fn assert_valid(results: &Value, what: &str) {
    let errors: Vec<String> = schema()
        .iter_errors(results)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Copies a folder and its subfolders.
fn copy_tree(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(ok.success());
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The students' copy (`runner release`) written into `dir`: what the bundle and the Classroom
/// template hold.
fn released(dir: &Path) -> PathBuf {
    let out = Command::new(runner())
        .arg("--root")
        .arg(repo())
        .arg("release")
        .arg(dir)
        .output()
        .expect("runner runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.to_path_buf()
}

/// Runs `run_autograder` over `root/submission` with the students' copy as the workbook and
/// `conf`; its results.json.
fn autograde(root: &Path, conf: &Path) -> Value {
    let workbook = root.join("source/workbook");
    if !workbook.exists() {
        released(&workbook);
    }
    let status = Command::new("bash")
        .arg(repo().join("graders/gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", root)
        .env("CONFIG", conf)
        .env("RUNNER", runner())
        .env("VISIBILITY", "after_due_date")
        .env("WORKBOOK_STATE", root.join("state.json"))
        .env("NO_COLOR", "1")
        .status()
        .expect("bash runs");
    assert!(status.success());
    let results = read_json(&root.join("results/results.json"));
    assert_valid(&results, "run_autograder's results.json");
    results
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_sample_class_scores_as_expected_in_gradescope_results() {
    // The class of runner/tests/cmd/class.toml (whose golden files trycmd compares with their
    // backslashes folded, so they are not JSON any more), graded again here.
    let class = scratch("gradescope-class");
    copy_tree(&repo().join("runner/tests/cmd/class.in"), &class);
    let graded = Command::new(runner())
        .args(["grade", "puzzle-08"])
        .arg(&class)
        .args(["--backend", "sim", "--format", "gradescope"])
        .env("WORKBOOK_STATE", class.join("state.json"))
        .output()
        .expect("runner runs");
    assert!(
        graded.status.success(),
        "{}",
        String::from_utf8_lossy(&graded.stderr)
    );
    let dir = class.join("gradescope");
    let mut seen = 0;
    for path in files_under(&dir) {
        let results = read_json(&path);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_valid(&results, &name);
        let score = results["score"].as_f64().unwrap();
        let tests = results["tests"].as_array().unwrap();
        let max: f64 = tests.iter().map(|t| t["max_score"].as_f64().unwrap()).sum();
        assert!(
            (max - 10.0).abs() < 1e-9,
            "{name}: the puzzle is worth 10, not {max}"
        );
        let sum: f64 = tests.iter().map(|t| t["score"].as_f64().unwrap()).sum();
        assert!(
            (sum - score).abs() < 1e-9,
            "{name}: the score is the tests' sum"
        );
        match name.split('-').next().unwrap() {
            "pass" | "print" | "kernel" => assert_eq!(score, 10.0, "{name}"),
            "race" => assert!(score > 0.0 && score < 10.0, "{name}: {score}"),
            _ => assert_eq!(score, 0.0, "{name}"),
        }
        seen += 1;
    }
    assert_eq!(seen, 13, "a dozen submissions and one in a subfolder");
    let _ = std::fs::remove_dir_all(&class);
}

/// A submission folder as a student uploads it: puzzle 01 solved (named after the puzzle),
/// puzzle 02 as the workbook's own file still holding the skeleton, puzzle 03 missing.
fn gradescope_layout(root: &Path) -> PathBuf {
    let submission = root.join("submission");
    std::fs::create_dir_all(submission.join("work/puzzles/puzzle-02")).unwrap();
    std::fs::copy(
        repo().join("solutions/puzzle-01.cu"),
        submission.join("puzzle-01.cu"),
    )
    .unwrap();
    std::fs::copy(
        repo().join("puzzles/puzzle-02/kernel.cu"),
        submission.join("work/puzzles/puzzle-02/kernel.cu"),
    )
    .unwrap();
    let conf = root.join("puzzles.conf");
    std::fs::write(&conf, "# test\npuzzle-01 10\npuzzle-02 5\n\npuzzle-03 5\n").unwrap();
    conf
}

#[test]
fn run_autograder_grades_a_submission_laid_out_as_gradescope_lays_it_out() {
    let root = scratch("gradescope-autograder");
    let conf = gradescope_layout(&root);
    let results = autograde(&root, &conf);
    assert_eq!(results["score"], 10.0, "puzzle 01 in full, nothing else");
    let tests = results["tests"].as_array().unwrap();
    let max: f64 = tests.iter().map(|t| t["max_score"].as_f64().unwrap()).sum();
    assert!((max - 20.0).abs() < 1e-9, "10 + 5 + 5 points, not {max}");
    assert!(tests.iter().all(|t| t["visibility"] == "after_due_date"));
    let of = |p: &str| -> Vec<&Value> {
        let named = |t: &&Value| t["name"].as_str().unwrap().starts_with(p);
        tests.iter().filter(named).collect()
    };
    assert!(
        of("puzzle-01: case")
            .iter()
            .all(|t| t["status"] == "passed")
    );
    assert!(
        of("puzzle-02: case")
            .iter()
            .any(|t| t["status"] == "failed")
    );
    let missing = of("puzzle-03");
    assert_eq!(missing.len(), 1);
    let why = missing[0]["output"].as_str().unwrap();
    assert!(why.contains("expected a file named puzzle-03.cu"), "{why}");
    // Held back until after the due date: the top-level output says only that, and the report
    // waits in a test of no points with the same visibility.
    assert_eq!(results["visibility"], "after_due_date");
    let top = results["output"].as_str().unwrap();
    assert!(!top.contains("puzzle-01"), "{top}");
    let report = |p: &str| -> String {
        let named = of(&format!("{p}: the report"));
        assert_eq!(named.len(), 1, "{p}'s report");
        assert_eq!(named[0]["max_score"], 0.0);
        named[0]["output"].as_str().unwrap().to_string()
    };
    let output = report("puzzle-01") + &report("puzzle-02");
    assert!(
        output.contains("✓ puzzle-01 passed") && !output.contains('\u{1b}'),
        "{output}"
    );
    // The feedback names commands the student runs in their own copy.
    assert!(!output.contains("--root"), "{output}");
    assert!(
        output.contains("Fix it, then run: runner check puzzle-02\n"),
        "{output}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Every puzzle of the shipped conf, graded for a submission made of `files` (path, text).
fn grade_all(test: &str, files: &[(&str, String)]) -> Value {
    let root = scratch(test);
    for (path, text) in files {
        let path = root.join("submission").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let results = autograde(&root, &repo().join("graders/puzzles.conf"));
    let _ = std::fs::remove_dir_all(&root);
    results
}

fn solution(puzzle: &str) -> String {
    std::fs::read_to_string(repo().join(format!("solutions/{puzzle}.cu"))).unwrap()
}

fn skeleton(puzzle: &str) -> String {
    std::fs::read_to_string(repo().join(format!("puzzles/{puzzle}/kernel.cu"))).unwrap()
}

/// The workbook as an instructor has it (skeletons, solutions, tests with their fixtures),
/// under `top`: what a student who submits a whole clone hands in.
fn whole_clone(top: &str) -> Vec<(String, String)> {
    let mut files = vec![];
    for dir in [
        "puzzles",
        "solutions",
        "runner/tests/fixtures",
        "runner/tests/cmd/validate_broken.in",
    ] {
        for path in files_under(&repo().join(dir)) {
            let rel = path.strip_prefix(repo()).unwrap().display().to_string();
            if let Ok(text) = std::fs::read_to_string(&path) {
                files.push((format!("{top}{rel}"), text));
            }
        }
    }
    files
}

#[test]
fn a_whole_unsolved_clone_scores_nothing() {
    let files = whole_clone("conv-workbook/");
    let refs: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let results = grade_all("gradescope-clone", &refs);
    assert_eq!(
        results["score"], 0.0,
        "the skeletons are graded, never solutions/"
    );
    let tests = results["tests"].as_array().unwrap();
    let max: f64 = tests.iter().map(|t| t["max_score"].as_f64().unwrap()).sum();
    assert!((max - 120.0).abs() < 1e-9, "all twelve puzzles, not {max}");
    // Each puzzle's skeleton was found and graded (a missing file is a test named `submitted`).
    assert!(
        tests
            .iter()
            .all(|t| !t["name"].as_str().unwrap().ends_with(": submitted")),
        "{results}"
    );
}

#[test]
fn a_github_zipball_is_graded_from_its_own_kernels() {
    // One top folder, as GitHub's "Download ZIP" makes it: puzzle 01 solved in the workbook's own
    // file; the solutions folder beside it is not read.
    let mut files = whole_clone("owner-conv-workbook-1a2b3c/");
    for (path, text) in files.iter_mut() {
        if path.ends_with("puzzles/puzzle-01/kernel.cu") && !path.contains("tests/") {
            *text = solution("puzzle-01");
        }
    }
    let refs: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let results = grade_all("gradescope-zipball", &refs);
    assert_eq!(results["score"], 10.0, "puzzle 01 only");
}

#[test]
fn single_files_and_a_one_line_include_of_a_solution() {
    // puzzle-02 solved and uploaded alone; puzzle-04 one line that includes the reference (by an
    // absolute path into the bundle, and by a path that climbs there): both score nothing, and
    // the grader's files are never quoted.
    let results = grade_all(
        "gradescope-single",
        &[
            ("puzzle-02.cu", solution("puzzle-02")),
            ("puzzle-03.cu", skeleton("puzzle-03")),
            (
                "puzzle-04.cu",
                "#include \"/autograder/source/workbook/solutions/puzzle-04.cu\"\n".into(),
            ),
            (
                "puzzle-05.cu",
                "#include \"../source/workbook/puzzles/puzzle-05/kernel.cu\"\n".into(),
            ),
            ("puzzle-06.cu", "#include \"/etc/passwd\"\n".into()),
        ],
    );
    assert_eq!(results["score"], 10.0, "puzzle 02 only");
    let text = results.to_string();
    assert!(text.contains("include_refused"), "{text}");
    assert!(!text.contains("root:x:"), "{text}");
}

/// `make-zip.sh` of the shipped conf into `zip`, with the runner built for these tests.
fn make_zip(zip: &Path) {
    let out = Command::new("bash")
        .arg(repo().join("graders/gradescope/make-zip.sh"))
        .arg(repo().join("graders/puzzles.conf"))
        .arg(zip)
        .env("RUNNER", runner())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn make_zip_puts_the_scripts_at_the_root_of_the_bundle() {
    let dir = scratch("gradescope-zip");
    let zip = dir.join("autograder.zip");
    make_zip(&zip);
    // Names and whether each is executable, as unzip on Gradescope's image will see them.
    let listing = Command::new("python3")
        .args(["-c", "import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, oct(i.external_attr >> 16))"])
        .arg(&zip)
        .output()
        .expect("python3 runs");
    let listing = String::from_utf8_lossy(&listing.stdout);
    for want in [
        "setup.sh 0o100755",
        "run_autograder 0o100755",
        "puzzles.conf ",
    ] {
        assert!(
            listing.lines().any(|l| l.starts_with(want)),
            "{want}: {listing}"
        );
    }
    for want in [
        "workbook/Cargo.toml",
        "workbook/runner/src/main.rs",
        "workbook/puzzles/puzzle-12/kernel.cu",
    ] {
        assert!(
            listing.lines().any(|l| l.starts_with(want)),
            "{want}: {listing}"
        );
    }
    // The students' copy: no solution travels to the grader.
    assert!(!listing.contains("solutions/"), "{listing}");
    assert!(!listing.contains("/tests/"), "{listing}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_classroom_workflow_is_made_from_puzzles_conf_and_its_commands_grade() {
    let made = Command::new("bash")
        .arg(repo().join("graders/github-classroom/make-workflow.sh"))
        .output()
        .expect("bash runs");
    assert!(made.status.success());
    let committed =
        std::fs::read_to_string(repo().join("graders/github-classroom/classroom.yml")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&made.stdout),
        committed,
        "classroom.yml is stale: run graders/github-classroom/make-workflow.sh > graders/github-classroom/classroom.yml"
    );
    // A student's repository: the students' copy with puzzle 01 solved, the rest skeletons, and
    // the runner where the workflow's build leaves it.
    let student = released(&scratch("classroom-student").join("repo"));
    std::fs::write(
        student.join("puzzles/puzzle-01/kernel.cu"),
        solution("puzzle-01"),
    )
    .unwrap();
    std::fs::create_dir_all(student.join("target/release")).unwrap();
    std::os::unix::fs::symlink(runner(), student.join("target/release/runner")).unwrap();
    // Every `target/release/runner ...` line the workflow runs, as its shell runs it, with the
    // points of its step.
    let mut graded = vec![];
    let mut points = 0.0;
    for line in committed.lines().map(str::trim) {
        let command = line
            .strip_prefix("command: ")
            .or(Some(line))
            .filter(|c| c.starts_with("target/release/runner "));
        if let Some(command) = command {
            let status = Command::new("bash")
                .args(["-c", command])
                .current_dir(&student)
                .env("WORKBOOK_STATE", student.join("state.json"))
                .env("NO_COLOR", "1")
                .output()
                .expect("bash runs")
                .status;
            let mut words = command.split_whitespace().skip_while(|w| *w != "check");
            let puzzle = words.nth(1).unwrap_or("").to_string();
            graded.push((puzzle, status.code()));
        }
        if let Some(score) = line.strip_prefix("max-score: ") {
            let passed = graded.last().is_some_and(|(_, code)| *code == Some(0));
            points += if passed {
                score.parse::<f64>().unwrap()
            } else {
                0.0
            };
        }
    }
    let mut want = vec![
        // The setup step: the runner runs, NVRTC installs (the skeleton fails, and that is fine).
        ("".to_string(), Some(0)),
        ("puzzle-01".to_string(), Some(0)),
        ("puzzle-01".to_string(), Some(0)),
    ];
    for n in 2..=12 {
        want.push((format!("puzzle-{n:02}"), Some(1)));
    }
    assert_eq!(graded, want);
    assert_eq!(points, 10.0);
    let _ = std::fs::remove_dir_all(student.parent().unwrap());
}

/// Writes an executable shell script `name` into `bin`.
fn shim(bin: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn setup_sh_and_run_autograder_work_end_to_end_in_gradescopes_layout() {
    // The bundle as Gradescope unpacks it into /autograder/source, here under a scratch root,
    // with the network stubbed by shims first on PATH: apt-get and curl log their calls, and
    // cargo "builds" by copying the runner built for these tests.
    let dir = scratch("gradescope-setup");
    let zip = dir.join("autograder.zip");
    make_zip(&zip);
    let root = dir.join("autograder");
    let source = root.join("source");
    std::fs::create_dir_all(&source).unwrap();
    let unzip = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&zip)
        .arg(&source)
        .status()
        .expect("python3 runs");
    assert!(unzip.success());
    let bin = dir.join("bin");
    let installed = dir.join("usr-local-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&installed).unwrap();
    let log = dir.join("network.log");
    shim(
        &bin,
        "apt-get",
        &format!("echo \"apt-get $*\" >> '{}'", log.display()),
    );
    shim(
        &bin,
        "curl",
        &format!("echo \"curl $*\" >> '{}'; exit 7", log.display()),
    );
    shim(
        &bin,
        "cargo",
        &format!(
            "echo \"cargo $*\" >> '{}'\nmkdir -p target/release && cp '{}' target/release/runner",
            log.display(),
            runner().display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let setup = Command::new("bash")
        .arg(source.join("setup.sh"))
        .env("PATH", &path)
        .env("AUTOGRADER_ROOT", &root)
        .env("RUNNER_BIN_DIR", &installed)
        .env("WORKBOOK_STATE", dir.join("state.json"))
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&setup.stdout).to_string()
        + &String::from_utf8_lossy(&setup.stderr);
    assert!(setup.status.success(), "setup.sh runs to the end: {said}");
    assert!(said.contains("the runner and NVRTC are ready"), "{said}");
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert!(lines[0].starts_with("apt-get update"), "{calls}");
    assert!(lines[1].starts_with("apt-get install"), "{calls}");
    assert!(
        !lines.iter().any(|l| l.starts_with("curl")),
        "cargo was there: no rustup: {calls}"
    );
    // A student's upload: puzzle 01 solved, with a space and a line break in its folder's name.
    let submission = root.join("submission/my work\nfinal");
    std::fs::create_dir_all(&submission).unwrap();
    std::fs::write(submission.join("puzzle-01.cu"), solution("puzzle-01")).unwrap();
    std::fs::write(source.join("puzzles.conf"), "puzzle-01 10\npuzzle-02 10\n").unwrap();
    let graded = Command::new("bash")
        .arg(source.join("run_autograder"))
        .env("PATH", format!("{}:{path}", installed.display()))
        .env("AUTOGRADER_ROOT", &root)
        .env("WORKBOOK_STATE", dir.join("state.json"))
        .env("NO_COLOR", "1")
        .status()
        .expect("bash runs");
    assert!(graded.success());
    let results = read_json(&root.join("results/results.json"));
    assert_valid(&results, "results.json after setup.sh");
    assert_eq!(results["score"], 10.0, "{results}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_classroom_workflow_refuses_a_repository_whose_graded_files_differ_from_the_template() {
    let dir = scratch("classroom-template");
    let template = released(&dir.join("template"));
    let made = Command::new("bash")
        .arg(repo().join("graders/github-classroom/make-workflow.sh"))
        .arg(repo().join("graders/puzzles.conf"))
        .arg(&template)
        .output()
        .expect("bash runs");
    assert!(made.status.success());
    let workflow = String::from_utf8_lossy(&made.stdout).to_string();
    // The step's script, as the runner's shell gets it from the YAML block (dedented).
    let script: String = workflow
        .lines()
        .skip_while(|l| !l.contains("# BEGIN graded-files check"))
        .take_while(|l| !l.contains("# END graded-files check"))
        .map(|l| format!("{}\n", l.strip_prefix("        ").unwrap_or(l)))
        .collect();
    assert!(script.contains("SUMS"), "{workflow}");
    let student = released(&dir.join("student"));
    let check = || {
        Command::new("bash")
            .args(["-c", &script])
            .current_dir(&student)
            .output()
            .expect("bash runs")
    };
    // The student's own kernels are theirs to change.
    std::fs::write(student.join("puzzles/puzzle-04/kernel.cu"), "// mine\n").unwrap();
    std::fs::write(student.join("puzzles/puzzle-04/impl.cuh"), "// mine\n").unwrap();
    let ok = check();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    // A widened tolerance, and a file added to the runner, are not.
    let rules = student.join("puzzles/puzzle-04/src/lib.rs");
    let text = std::fs::read_to_string(&rules).unwrap();
    std::fs::write(&rules, text.replace("atol: 1e-3", "atol: 1e9")).unwrap();
    std::fs::write(student.join("runner/src/extra.rs"), "// added\n").unwrap();
    let refused = check();
    let said = String::from_utf8_lossy(&refused.stdout);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("puzzles/puzzle-04/src/lib.rs"), "{said}");
    assert!(
        said.contains("runner/src/extra.rs: not in the template"),
        "{said}"
    );
    // On an exact cache hit the runner is not built again.
    assert!(
        workflow.contains(
            "if: steps.cache.outputs.cache-hit != 'true'\n      run: |\n        cargo build"
        ),
        "{workflow}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
