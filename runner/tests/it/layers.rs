//! The rules the source itself is held to. The layers ARCHITECTURE.md draws: each crate of
//! `kernels/` depends only on the crates below it, and the simulator's modules import one another
//! without a circle. And no test that CI runs compares a clock reading with a bound: CI runs on a
//! shared two-core machine, where a slow minute must not turn a correct change red (speed is shown
//! by benchmark commands; a hang is ended by a bound on work, such as the simulator's instruction
//! budget, or by a watchdog of minutes that says it is one).
//! ARCHITECTURE.md stays a map: short, with an entry for every crate and runner folder; and no
//! file cites a document the project does not hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The workspace crates a manifest's `[dependencies]` names (dev-dependencies aside).
fn deps(krate: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("kernels").join(krate).join("Cargo.toml"))
        .expect("the crate's manifest");
    let section = text.split("[dependencies]").nth(1).unwrap_or("");
    let section = section.split("\n[").next().unwrap_or("");
    let ours = ["ptx", "spec", "sim", "toolchain", "gpu", "fuzz", "profile"];
    section
        .lines()
        .filter_map(|l| l.split(['.', ' ', '=']).next())
        .filter(|name| ours.contains(name))
        .map(str::to_string)
        .collect()
}

#[test]
fn each_kernels_crate_depends_only_on_the_crates_below_it() {
    let allowed: [(&str, &[&str]); 7] = [
        ("ptx", &[]),
        ("spec", &["ptx"]),
        ("sim", &["ptx", "spec"]),
        // `runner profile`'s model: nothing below imports it (none of these lists names it).
        ("profile", &["ptx", "spec", "sim"]),
        ("toolchain", &["spec"]),
        ("gpu", &["spec", "toolchain"]),
        ("fuzz", &["spec"]),
    ];
    for (krate, ok) in allowed {
        let got = deps(krate);
        let ok: BTreeSet<String> = ok.iter().map(|s| s.to_string()).collect();
        assert!(
            got.is_subset(&ok),
            "{krate} depends on {got:?}; allowed: {ok:?}"
        );
    }
}

/// `crate::name` references of each module of `dir` (tests aside) to the other modules.
fn module_graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    let names: BTreeSet<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut graph = BTreeMap::new();
    for p in &files {
        let me = p.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        // Doc comments name modules too; only code counts.
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut out = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + 7..];
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest.starts_with('{') {
                let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
                for w in group.split([',', ' ', '\n']) {
                    let w = w.split("::").next().unwrap_or("").trim();
                    if names.contains(w) && w != me {
                        out.insert(w.to_string());
                    }
                }
            } else if names.contains(&word) && word != me && me != "lib" {
                out.insert(word);
            }
        }
        graph.insert(me, out);
    }
    graph
}

/// The modules of the crate whose source folder is `src`, nested ones included, by path
/// (`ir`, `ir::types`, `decode::ctx`; `lib` for the root), each with its file.
fn module_files(src: &Path, prefix: &str, out: &mut BTreeMap<String, std::path::PathBuf>) {
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let p = e.path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let path = if prefix.is_empty() {
            stem.clone()
        } else {
            format!("{prefix}::{stem}")
        };
        if p.is_dir() {
            module_files(&p, &path, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let name = match (stem.as_str(), prefix) {
                ("mod", _) => prefix.to_string(),
                ("lib" | "main", "") => "lib".to_string(),
                _ => path,
            };
            out.insert(name, p);
        }
    }
}

/// Every module of the crate at `src`, nested ones included, with the modules it refers to:
/// paths from `crate::`, `super::` and `self::`, and a `mod.rs`'s `use child::`, each resolved to
/// the longest module it names (`crate::decode::ctx::Ctx` is `decode::ctx`). The root (`lib`)
/// refers to everything and counts for nothing; tests aside.
fn module_tree_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    module_files(src, "", &mut files);
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let longest = |segments: &[&str]| -> Option<String> {
        (1..=segments.len())
            .rev()
            .map(|n| segments[..n].join("::"))
            .find(|m| names.contains(m))
    };
    let mut graph = BTreeMap::new();
    for (me, p) in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join(" ");
        let is_dir_module = p.file_name().is_some_and(|f| f == "mod.rs");
        let parent: Vec<&str> = me.split("::").collect();
        // What `super::` and `self::` start from.
        let here: Vec<&str> = if is_dir_module {
            parent.clone()
        } else {
            parent[..parent.len() - 1].to_vec()
        };
        let up: Vec<&str> = here
            .iter()
            .copied()
            .take(here.len().saturating_sub(1))
            .collect();
        let mut out = BTreeSet::new();
        let mut refer = |start: &[&str], rest: &str| {
            // `a::b::{c, d::e}` becomes `a::b::c` and `a::b::d::e`.
            let (head, group) = match rest.find("::{") {
                Some(i) if !rest[..i].contains(' ') => {
                    (&rest[..i], rest[i + 3..].split('}').next().unwrap_or(""))
                }
                _ => (rest, ""),
            };
            let head: String = head
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let tails: Vec<String> = if group.is_empty() {
                vec![String::new()]
            } else {
                group.split(',').map(|t| t.trim().to_string()).collect()
            };
            for tail in tails {
                let mut segs: Vec<&str> = start.to_vec();
                segs.extend(head.split("::").filter(|s| !s.is_empty()));
                segs.extend(tail.split("::").map(str::trim).filter(|s| !s.is_empty()));
                if let Some(m) = longest(&segs)
                    && m != *me
                    && me != "lib"
                {
                    out.insert(m);
                }
            }
        };
        for (i, _) in code.match_indices("crate::") {
            if !code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                refer(&[], &code[i + 7..]);
            }
        }
        for (i, _) in code.match_indices("super::") {
            refer(&up, &code[i + 7..]);
        }
        for (i, _) in code.match_indices("self::") {
            refer(&here, &code[i + 6..]);
        }
        if is_dir_module {
            for (i, _) in code.match_indices("use ") {
                let rest = code[i + 4..].trim_start_matches("crate::");
                let first = rest.split("::").next().unwrap_or("");
                let child = format!("{me}::{first}");
                if names.contains(&child) {
                    refer(&here, rest);
                }
            }
        }
        graph.insert(me.clone(), out);
    }
    graph
}

/// Panics naming a circle in `graph`, if there is one.
fn assert_acyclic(graph: &BTreeMap<String, BTreeSet<String>>) {
    fn visit<'a>(
        m: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!(
                "a circle of imports: {}",
                path[i..].join(" -> ") + " -> " + m
            );
        }
        path.push(m);
        for n in &g[m] {
            visit(n, g, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, graph, &mut vec![], &mut done);
    }
}

#[test]
fn the_ptx_crates_modules_have_no_circle_and_its_families_import_no_dispatcher() {
    let graph = module_tree_graph(&root().join("kernels/ptx/src"));
    assert!(
        graph.len() > 20,
        "ptx's modules were read: {:?}",
        graph.keys()
    );
    assert_acyclic(&graph);
    // The IR and the syntax tree import no decoder; the shared helpers import no family.
    for (m, refs) in &graph {
        if m.starts_with("ir") || m.starts_with("parse") || m == "decode::ctx" {
            let decoders: Vec<_> = refs
                .iter()
                .filter(|r| r.starts_with("decode") && *r != "decode::ctx")
                .collect();
            assert!(decoders.is_empty(), "{m} imports {decoders:?}");
        }
    }
    for family in [
        "decode::mma",
        "decode::wgmma",
        "decode::bulk",
        "decode::mbarrier",
        "decode::tensor_map",
    ] {
        assert!(
            !graph[family].contains("decode") && !graph[family].contains("decode::body"),
            "{family} imports the dispatcher: {:?}",
            graph[family]
        );
    }
}

#[test]
fn the_module_rule_finds_a_circle_through_a_nested_module() {
    let dir = std::env::temp_dir().join(format!("layers-circle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "mod c;\npub use c::X;\n").unwrap();
    std::fs::write(dir.join("a/c.rs"), "use crate::b::{Y, Z};\npub struct X;\n").unwrap();
    std::fs::write(dir.join("b.rs"), "use crate::a::X;\npub struct Y;\n").unwrap();
    let graph = module_tree_graph(&dir);
    assert_eq!(graph["a"], BTreeSet::from(["a::c".to_string()]));
    assert_eq!(graph["a::c"], BTreeSet::from(["b".to_string()]));
    assert_eq!(graph["b"], BTreeSet::from(["a".to_string()]));
    let circle = std::panic::catch_unwind(|| assert_acyclic(&graph));
    assert!(circle.is_err(), "a -> a::c -> b -> a is a circle");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Panics naming a circle of imports among the modules of `krate`, if there is one.
fn assert_no_circle(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = match krate {
        "runner" => root().join("runner/src"),
        "runner/cmd" => root().join("runner/src/cmd"),
        _ => root().join("kernels").join(krate).join("src"),
    };
    // The runner's modules sit in subsystem folders: read them nested.
    let graph = if krate == "runner" {
        module_tree_graph(&dir)
    } else {
        module_graph(&dir)
    };
    assert!(graph.len() > 2, "{krate}'s modules were read");
    assert_acyclic(&graph);
    graph
}

#[test]
fn the_simulators_modules_import_one_another_without_a_circle() {
    let graph = assert_no_circle("sim");
    assert!(graph.len() > 30, "the simulator's modules were read");
    // A family never imports the executor.
    for family in [
        "copy", "bulk", "mbarrier", "named", "call", "wgmma", "wmma", "step", "exchange",
    ] {
        assert!(
            !graph[family].contains("exec"),
            "{family} imports the executor"
        );
    }
}

#[test]
fn the_toolchain_spec_gpu_fuzz_profile_and_runner_modules_have_no_circle() {
    for krate in ["toolchain", "spec", "gpu", "fuzz", "profile", "runner"] {
        assert_no_circle(krate);
    }
}

/// The `.rs` files of the workspace (build output aside).
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `line` without its string literals and its comment: only code counts.
fn code_of(line: &str) -> String {
    let (mut code, mut quoted, mut escaped) = (String::new(), false, false);
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match (quoted, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => quoted = false,
            (true, _) => {}
            (false, '"') => quoted = true,
            (false, '/') if chars.get(i + 1) == Some(&'/') => break,
            (false, _) => code.push(c),
        }
    }
    code
}

/// The lines of `text` that compare a clock reading with a bound, outside tests that need a GPU
/// (those run by hand on a GPU machine, never in CI), as `(line number, line)`. A clock reading is
/// `elapsed()`, a name bound to one (`let took = start.elapsed()`), or a `Duration`/`as_secs`
/// figure; comparing is `<`, `>`, `<=`, `>=` (rustfmt spaces them, unlike generics), `lt(`/`gt(`.
fn timed_comparisons(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let compares = |l: &str| {
        [" < ", " > ", " <= ", " >= ", ".lt(", ".gt(", ".le(", ".ge("]
            .iter()
            .any(|op| l.contains(op))
    };
    let mut clocks: Vec<String> = vec![];
    let mut found = vec![];
    for (i, line) in lines.iter().enumerate() {
        let code = code_of(line);
        let code = code.as_str();
        if let Some(rest) = code.trim_start().strip_prefix("let ")
            && code.contains("elapsed()")
        {
            let pattern = rest.split('=').next().unwrap_or("");
            clocks.extend(
                pattern
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty() && *w != "mut")
                    .map(str::to_string),
            );
            continue;
        }
        let words: Vec<&str> = code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        let clock = code.contains("elapsed()")
            || code.contains("Duration::from")
            || code.contains("as_secs")
            || code.contains("as_millis")
            || clocks.iter().any(|c| words.contains(&c.as_str()));
        if !(clock && compares(code)) {
            continue;
        }
        // The function this line is in, and its attributes: a GPU-only test may time itself.
        let start = (0..=i).rev().find(|&j| {
            let t = lines[j].trim_start();
            t.starts_with("fn ") || t.starts_with("pub fn ") || t.starts_with("async fn ")
        });
        let gpu_only = start.is_some_and(|j| {
            lines[..j]
                .iter()
                .rev()
                .take_while(|l| l.trim_start().starts_with("#[") || l.trim().is_empty())
                .any(|l| l.contains("#[ignore") && l.contains("GPU"))
        });
        if !gpu_only {
            found.push((i + 1, line.trim().to_string()));
        }
    }
    found
}

#[test]
fn no_test_that_ci_runs_compares_a_clock_reading_with_a_bound() {
    let mut files = vec![];
    rust_files(root(), &mut files);
    assert!(files.len() > 100, "the workspace's sources were read");
    let mut offences = vec![];
    let mut scanned = 0;
    for p in files {
        let text = std::fs::read_to_string(&p).expect("a source file");
        let path = p
            .strip_prefix(root())
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        let in_tests = path.contains("/tests/") || path.ends_with("_tests.rs");
        // A source file's own tests: from its `#[cfg(test)]` on.
        let (skip, tests) = match (in_tests, text.find("#[cfg(test)]")) {
            (true, _) => (0, text.as_str()),
            (false, Some(at)) => (text[..at].lines().count(), &text[at..]),
            (false, None) => continue,
        };
        scanned += 1;
        for (n, line) in timed_comparisons(tests) {
            offences.push(format!("{path}:{}: {line}", n + skip));
        }
    }
    assert!(scanned > 50, "the tests were found ({scanned} files)");
    assert!(
        offences.is_empty(),
        "tests CI runs compare a clock reading with a bound; bound the work instead (instructions, \
         blocks), or time it in a benchmark command:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_clock_rule_finds_a_timed_assertion_and_spares_a_gpu_test() {
    let timed =
        "#[test]\nfn quick() {\n    let took = start.elapsed();\n    assert!(took < LIMIT);\n}\n";
    assert_eq!(
        timed_comparisons(timed),
        vec![(4, "assert!(took < LIMIT);".to_string())]
    );
    let inline = "fn f() {\n    assert!(start.elapsed().as_secs() < 5);\n}\n";
    assert_eq!(timed_comparisons(inline).len(), 1);
    let bound = "fn f() {\n    let (o, t) = run();\n    assert!(t > Duration::from_secs(1));\n}\n";
    assert_eq!(timed_comparisons(bound).len(), 1);
    let gpu = "#[test]\n#[ignore = \"needs a CUDA GPU: run with --ignored\"]\nfn g() {\n    \
               let took = s.elapsed();\n    assert!(took < Duration::from_secs(5));\n}\n";
    assert!(timed_comparisons(gpu).is_empty());
    let printed = "fn f() {\n    let took = s.elapsed();\n    eprintln!(\"{took:?}\");\n}\n";
    assert!(timed_comparisons(printed).is_empty());
}

#[test]
fn the_project_cites_no_document_outside_itself() {
    // The brief the project was built from is not part of it: every contract the code relies on
    // is written in the project's own docs (the book's introduction, each chapter's "Contract and
    // launch", ARCHITECTURE.md), so no file may send a reader to a document it does not hold.
    // (Spelled in parts, so this file does not cite them itself.)
    let mut outside = ["DESIGN", "CURRICULUM", "STYLE", "LAYOUT"]
        .map(|n| format!("{n}.md"))
        .to_vec();
    outside.push(["shared", "seeds"].join("/"));
    let mut found = vec![];
    let mut read = 0;
    let mut stack = vec![root().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "target" && !name.starts_with('.') && name != "build" {
                    stack.push(p);
                }
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue; // binary files
            };
            read += 1;
            for (n, line) in text.lines().enumerate() {
                if outside.iter().any(|d| line.contains(d.as_str())) {
                    let path = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
                    found.push(format!("{path}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(read > 300, "the project's files were read ({read})");
    assert!(
        found.is_empty(),
        "cites a document outside the project:\n{}",
        found.join("\n")
    );
}

/// The relative targets of the markdown links in `text`: `[..](path)` and `[..](path#anchor)`,
/// web addresses aside.
fn link_targets(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .collect()
}

/// ARCHITECTURE.md is a map, not a log: at most 250 lines (decisions go to lab/HISTORY.md,
/// figures to bench/RESULTS.md), an entry for every crate of `kernels/` and every folder of
/// `runner/src`, and no link to a file the repository does not hold.
#[test]
fn the_code_map_is_short_names_every_crate_and_folder_and_its_links_resolve() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("the code map");
    let lines = text.lines().count();
    assert!(
        lines <= 250,
        "ARCHITECTURE.md has {lines} lines: the map holds at most 250 (history goes to lab/, figures to bench/RESULTS.md)"
    );
    let mut missing = vec![];
    let entries = |dir: &str| {
        let mut names: Vec<(std::path::PathBuf, String)> = std::fs::read_dir(root().join(dir))
            .expect("a folder of the workspace")
            .flatten()
            .map(|e| (e.path(), e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        names
    };
    for (path, name) in entries("kernels") {
        let entry = format!("`kernels/{name}`");
        if path.join("Cargo.toml").is_file() && !text.contains(&entry) {
            missing.push(entry);
        }
    }
    for (path, name) in entries("runner/src") {
        let entry = format!("`{name}/`");
        if path.is_dir() && !text.contains(&entry) {
            missing.push(format!("runner/src/{name}/ (as {entry})"));
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md has no entry for {}",
        missing.join(", ")
    );
    let broken: Vec<String> = link_targets(&text)
        .into_iter()
        .filter(|t| !root().join(t).exists())
        .collect();
    assert!(broken.is_empty(), "ARCHITECTURE.md links to {broken:?}");
}

#[test]
fn the_link_rule_reads_paths_and_skips_anchors_and_web_addresses() {
    let text =
        "see [a](lab/HISTORY.md), [b](book/src/x.md#part), [c](https://example.org/y), [d](#here)";
    assert_eq!(link_targets(text), ["lab/HISTORY.md", "book/src/x.md"]);
}

/// The subsystems of `runner/src`, each with the top-level modules that make it up and the
/// subsystems it may import. The order is one way: workbook, then judge, check, profile (the
/// runner's side of the `profile` crate), report, show and bench, classroom, and cmd at the top,
/// which nothing imports (`main` aside). Tests (`#[cfg(test)]` and after) are not held to it.
const RUNNER_SUBSYSTEMS: &[(&str, &[&str], &[&str])] = &[
    ("workbook", &["workbook"], &[]),
    ("judge", &["judge"], &["workbook"]),
    ("check", &["check"], &["judge", "workbook"]),
    ("profile", &["profile"], &["check", "judge", "workbook"]),
    ("report", &["report"], &["judge", "workbook"]),
    ("show", &["show"], &["check", "judge", "workbook"]),
    ("bench", &["bench"], &["check", "judge", "workbook"]),
    (
        "classroom",
        &["classroom"],
        &["bench", "report", "check", "judge", "profile", "workbook"],
    ),
    (
        "cmd",
        &["cmd"],
        &[
            "classroom",
            "bench",
            "show",
            "report",
            "check",
            "judge",
            "profile",
            "workbook",
        ],
    ),
];

/// The subsystem of top-level module `top`.
fn subsystem_of(top: &str) -> Option<&'static str> {
    RUNNER_SUBSYSTEMS
        .iter()
        .find(|(_, tops, _)| tops.contains(&top))
        .map(|(name, _, _)| *name)
}

/// Every import in the `.rs` files under `src` that goes against [`RUNNER_SUBSYSTEMS`], as
/// `file:line: what`; a file in no subsystem is one too. Paths from `crate::` (with
/// `crate::{a, b::c}` groups over several lines) and `super::` chains that climb out of a
/// subsystem count; tests (`#[cfg(test)]` and after) and comments do not.
fn runner_layer_violations(src: &Path) -> Vec<String> {
    let mut files = vec![];
    rust_files(src, &mut files);
    files.sort();
    let mut found = vec![];
    for path in files {
        let rel = path
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "main.rs" {
            continue;
        }
        // The module's path: `check/mod.rs` is `check`, `check/remote.rs` is `check::remote`.
        let mut module: Vec<String> = rel
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_string)
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let Some(me) = subsystem_of(&module[0]) else {
            found.push(format!("{rel}:1: in no subsystem of RUNNER_SUBSYSTEMS"));
            continue;
        };
        let allowed = RUNNER_SUBSYSTEMS
            .iter()
            .find(|(name, _, _)| *name == me)
            .map(|(_, _, ok)| *ok)
            .unwrap_or(&[]);
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let lines: Vec<String> = code.lines().map(code_of).collect();
        let joined = lines.join("\n");
        let line_of = |at: usize| joined[..at].matches('\n').count() + 1;
        let mut check = |at: usize, target: &str| {
            let Some(other) = subsystem_of(target) else {
                return;
            };
            if other != me && !allowed.contains(&other) {
                found.push(format!(
                    "{rel}:{}: {me} imports {other} (`{target}`); {me} may import {allowed:?}",
                    line_of(at)
                ));
            }
        };
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        for (i, _) in joined.match_indices("crate::") {
            if joined[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &joined[i + 7..];
            match rest.strip_prefix('{') {
                // `crate::{a, b::c}`: each item's first name (nested groups are not used here).
                Some(group) => {
                    let group = group.split('}').next().unwrap_or("");
                    let mut at = i + "crate::{".len();
                    for item in group.split(',') {
                        // The item's own line.
                        let lead = item.len() - item.trim_start().len();
                        check(at + lead, &ident(item));
                        at += item.len() + 1;
                    }
                }
                None => check(i, &ident(rest)),
            }
        }
        // `super::super::x` from `check::remote` climbs to the root, then names `x`.
        for (i, _) in joined.match_indices("super::") {
            if joined[..i].ends_with("super::")
                || joined[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let mut rest = &joined[i..];
            let mut ups = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                ups += 1;
                rest = r;
            }
            let is_dir_module = rel.ends_with("mod.rs");
            let depth = module.len() - usize::from(!is_dir_module);
            if ups >= depth {
                check(i, &ident(rest));
            }
        }
    }
    found
}

#[test]
fn runners_subsystems_import_one_way() {
    let src = root().join("runner/src");
    let found = runner_layer_violations(&src);
    assert!(
        found.is_empty(),
        "imports against the order:\n{}",
        found.join("\n")
    );
    // Every subsystem with a folder has one.
    for sub in [
        "workbook",
        "judge",
        "check",
        "report",
        "show",
        "bench",
        "classroom",
        "cmd",
    ] {
        assert!(
            src.join(sub).join("mod.rs").is_file(),
            "runner/src/{sub}/mod.rs"
        );
    }
}

#[test]
fn the_subsystem_rule_finds_an_import_against_the_order() {
    let dir = std::env::temp_dir().join(format!("layers-runner-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["judge", "check", "report", "cmd"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write("main.rs", "mod cmd;\nmod judge;\n");
    // judge may import workbook only: check (line 2) and report (line 4, in a group) are upward.
    write(
        "judge/mod.rs",
        "//! The judge.\nuse crate::check::Request;\nuse crate::{\n    workbook,\n    report::human,\n};\n",
    );
    // A `super::super::` chain out of check into cmd, and a comment that names cmd.
    write(
        "check/remote.rs",
        "// crate::cmd::x is only named here\nfn f() {\n    super::super::cmd::run();\n}\n",
    );
    // Allowed: report imports judge; a test may import anything.
    write(
        "report/mod.rs",
        "use crate::judge::outcome::Outcome;\n#[cfg(test)]\nmod tests {\n    use crate::cmd;\n}\n",
    );
    write("cmd/mod.rs", "use crate::report;\n");
    write("stray.rs", "\n");
    let found = runner_layer_violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let has = |prefix: &str| found.iter().any(|f| f.starts_with(prefix));
    assert!(has("judge/mod.rs:2: judge imports check"), "{found:#?}");
    assert!(has("judge/mod.rs:5: judge imports report"), "{found:#?}");
    assert!(has("check/remote.rs:3: check imports cmd"), "{found:#?}");
    assert!(has("stray.rs:1: in no subsystem"), "{found:#?}");
    assert_eq!(found.len(), 4, "{found:#?}");
}
