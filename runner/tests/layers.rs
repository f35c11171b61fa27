//! The layers ARCHITECTURE.md draws, held: each crate of `kernels/` depends only on the crates
//! below it, and the simulator's modules import one another without a circle.

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
    let ours = ["ptx", "spec", "sim", "toolchain", "gpu", "fuzz"];
    section
        .lines()
        .filter_map(|l| l.split(['.', ' ', '=']).next())
        .filter(|name| ours.contains(name))
        .map(str::to_string)
        .collect()
}

#[test]
fn each_kernels_crate_depends_only_on_the_crates_below_it() {
    let allowed: [(&str, &[&str]); 6] = [
        ("ptx", &[]),
        ("spec", &["ptx"]),
        ("sim", &["ptx", "spec"]),
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

/// Panics naming a circle of imports among the modules of `krate`, if there is one.
fn assert_no_circle(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = match krate {
        "runner" => root().join("runner/src"),
        "runner/cmd" => root().join("runner/src/cmd"),
        _ => root().join("kernels").join(krate).join("src"),
    };
    let graph = module_graph(&dir);
    assert!(graph.len() > 2, "{krate}'s modules were read");
    // Depth-first search; a module met again while still on the path closes a circle.
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
        visit(m, &graph, &mut vec![], &mut done);
    }
    graph
}

#[test]
fn the_simulators_modules_import_one_another_without_a_circle() {
    let graph = assert_no_circle("sim");
    assert!(graph.len() > 30, "the simulator's modules were read");
    // A family never imports the executor.
    for family in [
        "copy", "bulk", "mbarrier", "named", "call", "wgmma", "wmma", "step_mem",
    ] {
        assert!(
            !graph[family].contains("exec"),
            "{family} imports the executor"
        );
    }
}

#[test]
fn the_toolchain_spec_gpu_fuzz_and_runner_modules_have_no_circle() {
    for krate in ["toolchain", "spec", "gpu", "fuzz", "runner"] {
        assert_no_circle(krate);
    }
}
