//! The introduction's table of the broken corpora on three judges is drawn from the measurement,
//! `bench/broken.json` (written by `bench/broken_gpu.py` on a GPU machine), so the book cannot
//! drift from it: the table between the `broken-table` comments of `book/src/introduction.md`
//! must be the one this test draws (run with `BLESS=1` to write it there). The measurement must
//! also describe the fixtures as they are: each kernel it names exists, with the same mark at
//! the same line.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const BEGIN: &str =
    "<!-- broken-table: drawn from bench/broken.json by runner/tests/it/broken_table.rs -->\n";
const END: &str = "<!-- end of broken-table -->\n";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn measurement() -> Value {
    let text =
        std::fs::read_to_string(repo().join("bench/broken.json")).expect("bench/broken.json");
    serde_json::from_str(&text).expect("JSON")
}

/// Per fault kind (the fixtures' marks): kernels, those the GPU alone passes, those
/// compute-sanitizer flags (and whether any was not run), those the simulator diagnoses.
#[derive(Default)]
struct Tally {
    kernels: usize,
    gpu_passes: usize,
    sanitizer_flags: usize,
    sanitizer_skipped: usize,
    sim_diagnoses: usize,
    tools: Vec<String>,
}

fn tally(kernels: &[Value]) -> BTreeMap<String, Tally> {
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    for k in kernels {
        let t = by_kind
            .entry(k["expect"].as_str().unwrap().to_string())
            .or_default();
        t.kernels += 1;
        t.gpu_passes += usize::from(k["gpu"]["passed"].as_bool() == Some(true));
        match k["sanitizer"]["errors"].as_u64() {
            Some(n) => t.sanitizer_flags += usize::from(n > 0),
            None => t.sanitizer_skipped += 1,
        }
        let diagnosed = if k["expect"] == "clean" {
            k["sim"]["passed"].as_bool() == Some(true)
        } else {
            k["sim"]["diagnosed"].as_bool() == Some(true)
        };
        t.sim_diagnoses += usize::from(diagnosed);
        let tool = k["sanitizer"]["tool"].as_str().unwrap().to_string();
        if !t.tools.contains(&tool) {
            t.tools.push(tool);
        }
    }
    by_kind
}

fn row(label: &str, t: &Tally, clean: bool) -> String {
    let sanitizer = if t.sanitizer_skipped == t.kernels {
        "not run (endless loop)".to_string()
    } else {
        format!("{} ({})", t.sanitizer_flags, t.tools.join(", "))
    };
    let sim = if clean {
        format!("{} pass", t.sim_diagnoses)
    } else {
        t.sim_diagnoses.to_string()
    };
    format!(
        "| {label} | {} | {} | {sanitizer} | {sim} |\n",
        t.kernels, t.gpu_passes
    )
}

/// The table, with the line that says where and how it was measured.
fn draw(m: &Value) -> String {
    let kernels = m["kernels"].as_array().expect("kernels");
    let corpus = |c: &str| kernels.iter().filter(|k| k["corpus"] == c).count();
    let mut out = format!(
        "Measured on an {} ({}) with `{}`: {} kernels of the 1D corpus (`kernels/conformance/tests/fixtures/broken`, puzzles 01 to 03) and {} of the 2D corpus (`runner/tests/fixtures/broken2d`, puzzles 09 and 10).\n\n",
        m["gpu"].as_str().unwrap(),
        m["date"].as_str().unwrap(),
        m["command"].as_str().unwrap(),
        corpus("1D"),
        corpus("2D"),
    );
    for k in m["not_measured"].as_array().into_iter().flatten() {
        out += &format!(
            "Not in the table: `{}`, {}.\n\n",
            k["name"].as_str().unwrap(),
            k["why"].as_str().unwrap()
        );
    }
    out += "| fault (the fixture's mark) | kernels | pass on the GPU alone | flagged by compute-sanitizer (tool) | diagnosed by the simulator |\n";
    out += "|---|---|---|---|---|\n";
    let by_kind = tally(kernels);
    let mut total = Tally::default();
    for (kind, t) in by_kind.iter().filter(|(k, _)| k.as_str() != "clean") {
        out += &row(&format!("`{kind}`"), t, false);
        total.kernels += t.kernels;
        total.gpu_passes += t.gpu_passes;
        total.sanitizer_flags += t.sanitizer_flags;
        total.sim_diagnoses += t.sim_diagnoses;
        total.tools = vec!["the tool above".into()];
    }
    out += &row("**all broken kernels**", &total, false);
    if let Some(t) = by_kind.get("clean") {
        out += &row("correct kernels (no mark)", t, true);
    }
    out
}

#[test]
fn the_introductions_table_is_drawn_from_the_measurement() {
    let table = draw(&measurement());
    let path = repo().join("book/src/introduction.md");
    let book = std::fs::read_to_string(&path).unwrap();
    let start = book.find(BEGIN).expect("the broken-table comment") + BEGIN.len();
    let end = book[start..].find(END).expect("its end") + start;
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &book[..start], &book[end..])).unwrap();
        return;
    }
    assert!(
        book[start..end] == table,
        "book/src/introduction.md's table is not the one bench/broken.json gives: run `BLESS=1 cargo test -p runner --test it broken_table::`\nit should be:\n{table}"
    );
}

#[test]
fn the_measurement_describes_the_fixtures_as_they_are() {
    let m = measurement();
    for k in m["kernels"].as_array().unwrap() {
        let path = k["path"].as_str().unwrap();
        let src = std::fs::read_to_string(repo().join(path))
            .unwrap_or_else(|e| panic!("{path} is measured but cannot be read: {e}"));
        let mark = src
            .lines()
            .enumerate()
            .find_map(|(i, l)| {
                let kind = l.split("// expect: ").nth(1)?;
                Some((i as u64 + 1, kind.split_whitespace().next()?.to_string()))
            })
            .unwrap_or((0, "clean".into()));
        assert_eq!(
            (k["line"].as_u64().unwrap(), k["expect"].as_str().unwrap()),
            (mark.0, mark.1.as_str()),
            "{path}: measured with another mark; run bench/broken_gpu.py again"
        );
    }
}

#[test]
fn the_table_counts_each_judge() {
    let kernel = |expect: &str, gpu: bool, errors: Option<u64>, diagnosed: bool| {
        serde_json::json!({"corpus": "1D", "expect": expect, "gpu": {"passed": gpu},
            "sanitizer": {"tool": "memcheck", "errors": errors},
            "sim": {"passed": expect == "clean", "diagnosed": diagnosed}})
    };
    let m = serde_json::json!({"gpu": "G", "date": "D", "command": "C", "kernels": [
        kernel("out_of_bounds", true, Some(3), true),
        kernel("out_of_bounds", true, Some(0), true),
        kernel("race", false, Some(0), false),
        kernel("timeout", false, None, true),
        kernel("clean", true, Some(0), false),
    ]});
    let t = draw(&m);
    assert!(
        t.contains("| `out_of_bounds` | 2 | 2 | 1 (memcheck) | 2 |"),
        "{t}"
    );
    assert!(t.contains("| `race` | 1 | 0 | 0 (memcheck) | 0 |"), "{t}");
    assert!(
        t.contains("| `timeout` | 1 | 0 | not run (endless loop) | 1 |"),
        "{t}"
    );
    assert!(
        t.contains("| **all broken kernels** | 4 | 2 | 1 (the tool above) | 3 |"),
        "{t}"
    );
    assert!(
        t.contains("| correct kernels (no mark) | 1 | 1 | 0 (memcheck) | 1 pass |"),
        "{t}"
    );
}
