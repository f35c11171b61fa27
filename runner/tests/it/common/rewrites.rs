//! The ways a learner writes a solution's kernel differently (`variants.rs` runs them on the
//! simulator, `gpu_variants.rs` on both backends): each solution of `solutions/` rewritten
//! (without its `#pragma unroll`s, every loop rolled, every loop unrolled by 4, shared memory
//! `volatile`, a solution's option turned the other way), and the hand-written variants of
//! `fixtures/variants/`.

use super::repo;
use std::path::{Path, PathBuf};

/// Each rewrite: its name and the rewritten source, or `None` where it does not apply.
pub type Rewrite = fn(&str) -> Option<String>;

fn map_lines(src: &str, f: impl Fn(&str) -> Option<String>) -> String {
    src.lines()
        .filter_map(f)
        .map(|l| l + "\n")
        .collect::<String>()
}

fn is_unroll(line: &str) -> bool {
    line.trim_start().starts_with("#pragma unroll")
}

pub const REWRITES: [(&str, Rewrite); 5] = [
    ("no-unroll", |s| {
        Some(map_lines(s, |l| (!is_unroll(l)).then(|| l.to_string())))
    }),
    ("rolled", |s| {
        Some(map_lines(s, |l| {
            Some(if is_unroll(l) {
                "#pragma unroll 1".into()
            } else {
                l.to_string()
            })
        }))
    }),
    ("unroll-4", |s| {
        let mut out = String::new();
        let mut after_pragma = false;
        for l in s.lines() {
            if l.trim_start().starts_with("for (") && !after_pragma {
                out += "#pragma unroll 4\n";
            }
            after_pragma = is_unroll(l);
            out += l;
            out += "\n";
        }
        Some(out)
    }),
    // A solution's option that is on for the runner, turned off: puzzle 11's copies by
    // `cp.async` rather than by the TMA unit (blocks of more than 64 output channels then take
    // the row path rather than the walk).
    ("cp-async", |s| {
        let on = "#ifndef TMA\n#define TMA 1\n";
        s.contains(on)
            .then(|| s.replacen(on, "#ifndef TMA\n#define TMA 0\n", 1))
    }),
    ("volatile", |s| {
        if s.contains("reinterpret_cast") {
            return None;
        }
        let (head, body) = s.split_at(s.find("ANCHOR_END: signature")?);
        let body = body
            .replace("__shared__ float", "__shared__ volatile float")
            .replace("const float* ", "const volatile float* ");
        Some(format!("{head}{body}"))
    }),
];

/// Every solution and its id, from `solutions/`.
pub fn solutions() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(repo().join("solutions"))
        .expect("solutions/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let id = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "cu").then(|| (id, std::fs::read_to_string(&p).unwrap()))
        })
        .collect();
    out.sort();
    out
}

/// The hand-written variants, `fixtures/variants/puzzle-NN.WHAT.cu`, sorted.
pub fn hand_written() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("runner/tests/fixtures/variants"))
        .expect("fixtures/variants")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Every rewrite of every solution that changes it, written to `dir`: its puzzle, its name
/// (`SOLUTION.REWRITE`) and its file.
pub fn rewritten(dir: &Path) -> Vec<(String, String, PathBuf)> {
    std::fs::create_dir_all(dir).unwrap();
    let mut out = vec![];
    for (id, src) in &solutions() {
        for (name, rewrite) in REWRITES {
            let Some(variant) = rewrite(src).filter(|v| v != src) else {
                continue;
            };
            let file = dir.join(format!("{id}.{name}.cu"));
            std::fs::write(&file, variant).unwrap();
            // `puzzle-NN`: a second solution's stem goes on past it (`puzzle-11-hopper`).
            out.push((id[..9].to_string(), format!("{id}.{name}"), file));
        }
    }
    out
}
