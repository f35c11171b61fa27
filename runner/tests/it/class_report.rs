//! The class report of `runner grade` on a class built from the project's own corpora:
//! `bench/class04` (correct kernels written eight ways, broken ones, lesson-skipping ones),
//! puzzle 04's lesson-skipping fixture, an include the grader refuses, a kernel that never ends,
//! a copy of a file, a copy with its comments and spacing changed, and a link. Its aggregates in
//! grade.json are checked against what each file is known to be and against
//! `graders/grade.schema.json`; its report.html is loaded in headless Chromium, where any
//! console message (an error, or a request refused by the page's Content-Security-Policy) fails.

use crate::common;

use common::{repo, run};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The class's folder, graded once for every test, with `CONV_WORKBOOK_TRACE`'s phases:
/// (folder, grade.json, what grade wrote on standard error).
fn graded() -> &'static (PathBuf, Value, String) {
    static CLASS: OnceLock<(PathBuf, Value, String)> = OnceLock::new();
    CLASS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("class-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(repo().join("bench/class04")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
        let fixtures = repo().join("runner/tests/fixtures");
        for f in ["p04_no_tile.cu", "include_absolute.cu", "endless.cu"] {
            std::fs::copy(fixtures.join(f), dir.join(f)).unwrap();
        }
        std::fs::copy(dir.join("solution.cu"), dir.join("same-solution.cu")).unwrap();
        // Two students who handed in the skeleton as it came.
        let skeleton = repo().join("puzzles/puzzle-04/kernel.cu");
        for f in ["skeleton-a.cu", "skeleton-b.cu"] {
            std::fs::copy(&skeleton, dir.join(f)).unwrap();
        }
        // The same kernel with its comments gone and its spacing changed.
        let text = std::fs::read_to_string(dir.join("correct-1-reversed.cu")).unwrap();
        let respaced: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| l.replace("    ", "\t") + "\n\n")
            .collect();
        std::fs::write(dir.join("same-respaced.cu"), respaced).unwrap();
        std::os::unix::fs::symlink("solution.cu", dir.join("link.cu")).unwrap();
        let out = common::command(&[
            "grade",
            "puzzle-04",
            dir.to_str().unwrap(),
            "--backend",
            "sim",
            // Fixed, so that the fresh cases, and every count below, are the same each run.
            "--seed",
            "1",
        ])
        .env("CONV_WORKBOOK_TRACE", "1")
        .output()
        .expect("runner runs");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let json = std::fs::read_to_string(dir.join("grade.json")).unwrap();
        let trace = String::from_utf8_lossy(&out.stderr).to_string();
        (dir, serde_json::from_str(&json).unwrap(), trace)
    })
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

fn kind<'a>(report: &'a Value, kind: &str) -> &'a Value {
    let kinds = report["misconceptions"].as_array().unwrap();
    (kinds.iter().find(|m| m["kind"] == kind)).unwrap_or_else(|| panic!("no {kind} in {kinds:?}"))
}

/// Whether a file of the class is known to be correct (by its name in the corpus).
fn correct(file: &str) -> bool {
    ["correct-", "solution", "same-", "printf-flood"]
        .iter()
        .any(|p| file.starts_with(p))
}

#[test]
fn the_class_aggregates_as_its_files_say() {
    let (_, json, _) = graded();
    let report = &json["report"];
    let rows = json["submissions"].as_array().unwrap();
    let files: Vec<&str> = rows.iter().map(|r| r["file"].as_str().unwrap()).collect();
    let passing: Vec<&str> = files.iter().copied().filter(|f| correct(f)).collect();
    assert_eq!(report["submissions"], files.len());
    assert_eq!(report["passed"], passing.len(), "{rows:?}");
    // The histogram holds every file once, the passing ones at all the cases (the published ones
    // and those drawn fresh from the seed).
    let total = report["cases_total"].as_u64().unwrap() as usize;
    assert!(total > 12, "fresh cases beside the published 12: {total}");
    let bins = report["cases_passed"].as_array().unwrap();
    assert_eq!(bins.len(), total + 1);
    let binned: usize = bins
        .iter()
        .map(|b| b["files"].as_array().unwrap().len())
        .sum();
    assert_eq!(binned, files.len());
    assert_eq!(strings(&bins[total]["files"]), passing);

    // The lesson skipped: puzzle 04's input read tap by tap, without a tile, counted against the
    // block's tile; and the commonest kind's lines fall on the sum, where those reads are.
    let skipped = report["lessons_skipped"].as_array().unwrap();
    for file in ["naive.cu", "grid-stride.cu", "p04_no_tile.cu"] {
        let o = (skipped.iter().find(|o| o["file"] == file)).unwrap_or_else(|| panic!("{file}"));
        assert_eq!(o["what"], "input elements read by one block");
        assert!(o["counted"].as_f64().unwrap() > o["allowed"].as_f64().unwrap());
    }
    let budget = kind(report, "budget_exceeded");
    assert_eq!(report["misconceptions"][0]["kind"], "budget_exceeded");
    let top = &budget["steps"][0];
    assert_eq!(top["step"], "sum");
    assert_eq!(top["skeleton"], "sum kernel_size products per output");
    let on_sum: Vec<&str> = (top["lines"].as_array().unwrap())
        .iter()
        .map(|l| l["file"].as_str().unwrap())
        .collect();
    assert_eq!(on_sum, ["grid-stride.cu", "naive.cu", "p04_no_tile.cu"]);
    // Broken kernels, each under its kind, at its step.
    let step_of = |k: &str, file: &str| {
        let steps = kind(report, k)["steps"].as_array().unwrap().clone();
        steps
            .iter()
            .find(|s| {
                s["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| l["file"] == file)
            })
            .map(|s| s["step"].as_str().unwrap().to_string())
    };
    assert_eq!(step_of("race", "race.cu").as_deref(), Some("sum"));
    assert_eq!(
        step_of("wrote_input", "write-input.cu").as_deref(),
        Some("store")
    );
    assert_eq!(
        step_of("uninitialized_read", "short-tile.cu").as_deref(),
        Some("sum")
    );
    assert_eq!(strings(&kind(report, "race")["files"]), ["race.cu"]);
    assert!(
        kind(report, "race")["example"]["message"]
            .as_str()
            .unwrap()
            .contains("__syncthreads")
    );

    // For the instructor: the include and the link refused, the endless loop, the copies.
    let attention = &report["attention"];
    let refused: Vec<&str> = (attention["refused"].as_array().unwrap())
        .iter()
        .map(|n| n["file"].as_str().unwrap())
        .collect();
    assert_eq!(refused, ["include_absolute.cu", "link.cu"]);
    assert_eq!(attention["timeouts"][0]["file"], "endless.cu");
    let identical = attention["identical"].as_array().unwrap();
    assert_eq!(identical.len(), 3, "{identical:?}");
    assert_eq!(identical[0]["how"], "identical");
    assert_eq!(
        strings(&identical[0]["files"]),
        ["same-solution.cu", "solution.cu"]
    );
    assert_eq!(identical[0]["skeleton"], false);
    assert_eq!(
        strings(&identical[1]["files"]),
        ["skeleton-a.cu", "skeleton-b.cu"]
    );
    assert_eq!(identical[1]["skeleton"], true);
    assert_eq!(
        identical[2]["how"],
        "identical without comments and whitespace"
    );
    assert_eq!(
        strings(&identical[2]["files"]),
        ["correct-1-reversed.cu", "same-respaced.cu"]
    );

    // Speed without a GPU: predicted for every passing file, none under the floor.
    let speed = &report["speed"];
    assert_eq!(speed["source"], "predicted");
    let timed: Vec<&str> = (speed["times"].as_array().unwrap())
        .iter()
        .map(|t| t["file"].as_str().unwrap())
        .collect();
    assert_eq!(timed, passing);
    let floor = speed["floor"]["seconds"].as_f64().unwrap();
    for t in speed["times"].as_array().unwrap() {
        assert!(
            t["seconds"].as_f64().unwrap() >= floor,
            "{t} under the floor {floor}"
        );
    }
    assert!(speed["reference_seconds"].as_f64().unwrap() >= floor);
}

#[test]
fn grade_json_follows_its_schema() {
    let (_, json, _) = graded();
    let text = std::fs::read_to_string(repo().join("graders/grade.schema.json")).unwrap();
    let schema = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
    let errors: Vec<String> = schema
        .iter_errors(json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The schema is strict about the report: a key it does not know is an error.
    let mut extra = json.clone();
    extra["report"]["unknown"] = Value::Bool(true);
    assert!(!schema.is_valid(&extra));
}

/// The time `runner profile ARGS --blocks 2` predicts (2 blocks: what grade samples), as it
/// prints it: "957.0 us".
fn profile_predicts(args: &[&str]) -> String {
    let text = common::profile(&[args, &["--blocks", "2"]].concat());
    let line = (text.lines())
        .find_map(|l| l.strip_prefix("predicted on an "))
        .unwrap_or_else(|| panic!("no prediction in {text}"));
    let (_, after) = line.split_once(": ").unwrap();
    after.split(',').next().unwrap().to_string()
}

#[test]
fn a_predicted_time_is_the_one_runner_profile_prints() {
    let (dir, json, _) = graded();
    let speed = &json["report"]["speed"];
    let us = |seconds: &Value| format!("{:.1} us", seconds.as_f64().unwrap() * 1e6);
    let times = speed["times"].as_array().unwrap();
    for file in ["correct-2-fmaf.cu", "same-respaced.cu"] {
        let t = (times.iter().find(|t| t["file"] == file)).unwrap_or_else(|| panic!("{file}"));
        let kernel = dir.join(file);
        let printed = profile_predicts(&["puzzle-04", "--kernel", kernel.to_str().unwrap()]);
        assert_eq!(us(&t["seconds"]), printed, "{file}");
    }
    let reference = profile_predicts(&["puzzle-04", "--solution"]);
    assert_eq!(us(&speed["reference_seconds"]), reference);
}

/// The work the report's times cost, bounded (a clock is no test): the full case is built once
/// for the class, each distinct passing text is simulated once and the reference solution once,
/// all while grading, none after it (a phase is traced when it ends).
#[test]
fn predictions_run_while_grading_once_per_distinct_text() {
    let (dir, json, trace) = graded();
    let lines: Vec<&str> = trace.lines().collect();
    let built = lines
        .iter()
        .filter(|l| l.contains("grade: build the full case to predict"));
    assert_eq!(built.count(), 1, "{trace}");
    let predicted: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("grade: predict the time of"))
        .collect();
    let rows = json["submissions"].as_array().unwrap();
    let mut texts: Vec<String> = rows
        .iter()
        .filter(|r| r["passed"] == true)
        .map(|r| std::fs::read_to_string(dir.join(r["file"].as_str().unwrap())).unwrap())
        .collect();
    let passing = texts.len();
    texts.sort();
    texts.dedup();
    // solution.cu and same-solution.cu are one text.
    assert_eq!(texts.len(), passing - 1);
    assert_eq!(predicted.len(), texts.len() + 1, "{trace}");
    let graded_at = (lines.iter())
        .position(|l| l.contains("grade: check every submission"))
        .unwrap();
    assert!(predicted.iter().all(|&i| i < graded_at), "{trace}");
}

/// The browser, if one is installed.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("which").arg(name).output().ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        })
}

/// `page` loaded in headless `browser`: its DOM after loading, and its console's lines.
fn load(browser: &Path, page: &Path) -> (String, Vec<String>) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("the browser runs");
    let log = String::from_utf8_lossy(&out.stderr);
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).to_string(), console)
}

#[test]
fn report_html_loads_in_headless_chromium_with_every_chart_and_no_request() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped: no chromium installed (apt-get install chromium) to load report.html in"
        );
        return;
    };
    let (dir, _, _) = graded();
    // The probe first: a page with the report's policy and one request, which the browser must
    // refuse and log, so that a silent log below means no request and no error.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let head = &html[..html.find("</head>").unwrap()];
    let probe = dir.join("probe.html");
    std::fs::write(
        &probe,
        format!("{head}</head><body><img src=\"https://example.invalid/x.png\"></body></html>"),
    )
    .unwrap();
    let (_, console) = load(&browser, &probe);
    assert!(
        console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "the browser did not log the probe's refused request: {console:?}"
    );
    let (dom, console) = load(&browser, &dir.join("report.html"));
    assert!(console.is_empty(), "console: {console:?}");
    for chart in ["cases", "kinds", "steps", "speed"] {
        let id = format!("id=\"puzzle-04-chart-{chart}\"");
        let at = dom
            .find(&id)
            .unwrap_or_else(|| panic!("no {id} in the page"));
        let svg = &dom[at..at + dom[at..].find("</svg>").unwrap()];
        assert!(svg.contains("<rect"), "{chart}: no bar");
        // Every bar links to the rows behind it, which are on the page.
        for href in svg.split("href=\"#").skip(1) {
            let target = &href[..href.find('"').unwrap()];
            assert!(
                dom.contains(&format!("id=\"{target}\"")),
                "{chart} links to #{target}, which is not on the page"
            );
        }
    }
    assert!(dom.contains("Predicted, not measured"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn on_a_gpu_the_times_are_measured_with_the_reference_beside_them() {
    let dir = std::env::temp_dir().join(format!("class-report-gpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["solution.cu", "correct-5-unroll4.cu", "naive.cu", "race.cu"] {
        std::fs::copy(repo().join("bench/class04").join(f), dir.join(f)).unwrap();
    }
    // `auto` on a GPU machine: the simulator's checks judge (a race, a skipped lesson), the GPU
    // times what passed.
    let out = run(&["grade", "puzzle-04", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("grade.json")).unwrap()).unwrap();
    let speed = &json["report"]["speed"];
    assert_eq!(speed["source"], "measured");
    let timed: Vec<&str> = (speed["times"].as_array().unwrap())
        .iter()
        .map(|t| t["file"].as_str().unwrap())
        .collect();
    assert_eq!(timed, ["correct-5-unroll4.cu", "solution.cu"], "{speed}");
    assert!(speed["reference_seconds"].as_f64().unwrap() > 0.0);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Measured on the GPU"));
    assert!(!html.contains("Predicted, not measured"));
}

#[test]
fn a_submissions_name_and_code_reach_the_report_as_text_never_as_markup() {
    // The report is read by the instructor in a browser: a student's file name, code line and
    // compiler message are untrusted, and must not open an element (a script, a forged row).
    let dir = std::env::temp_dir().join(format!("class-report-markup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let evil = "<b onmouseover=alert(1)>x.cu";
    let code = "extern \"C\" __global__ void conv1d(const float* input, const float* kernel, \
                float* output, int input_size, int kernel_size)\n{\n    \
                int x = <img src=x onerror=alert(2)>;\n}\n";
    std::fs::write(dir.join(evil), code).unwrap();
    let out = run(&[
        "grade",
        "puzzle-04",
        dir.to_str().unwrap(),
        "--backend",
        "sim",
        "--seed",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for markup in ["<b onmouseover", "<img"] {
        assert!(
            !html.contains(markup),
            "{markup} reached the page as markup"
        );
    }
    assert!(
        html.contains("&lt;b onmouseover=alert(1)&gt;x.cu"),
        "the name as text"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
