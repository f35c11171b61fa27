//! The corpus of broken kernels in `fixtures/broken/`, shared by `sim_broken` and `sim_shared`:
//! the puzzles' launch rules and budgets, the job of each fixture's case, the `// expect: KIND`
//! mark of a source, the run that checks a fixture's first diagnostic against its mark, and the
//! run that checks a correct fixture stays clean.

use super::ARCHS;
use spec::Rng;
use spec::job::{Arg, Budget, Job, Launch};
use spec::{Diagnostic, Kind};

/// The puzzles' launch rules and budgets, and the random case each fixture was compiled for
/// (its `// defines:` line): puzzle 01 random-2, puzzle 02 random-1, puzzle 03 random-1.
pub struct Shape {
    pub tpb: u32,
    pub size: usize,
    pub conv: usize,
    pub seed: u64,
    pub one_block: bool,
    pub budget: Option<Budget>,
}

pub const P01: Shape = Shape {
    tpb: 32,
    size: 100,
    conv: 7,
    seed: 12,
    one_block: false,
    budget: None,
};
pub const P02: Shape = Shape {
    tpb: 64,
    size: 50,
    conv: 6,
    seed: 21,
    one_block: true,
    budget: Some(Budget {
        reads: 2,
        writes: 1,
        ..Budget::NONE
    }),
};
pub const P03: Shape = Shape {
    tpb: 32,
    size: 100,
    conv: 9,
    seed: 31,
    one_block: false,
    budget: Some(Budget {
        reads: 3,
        writes: 1,
        ..Budget::NONE
    }),
};

pub fn job(s: &Shape) -> Job {
    let mut rng = Rng::new(s.seed);
    let (a, b) = (rng.signal(s.size), rng.signal(s.conv));
    let blocks = if s.one_block {
        1
    } else {
        s.size.div_ceil(s.tpb as usize) as u32
    };
    Job {
        budget: s.budget,
        ..super::conv_job("conv1d", a, b, s.size, Launch::linear(blocks, s.tpb))
    }
}

pub fn dir() -> String {
    format!("{}/tests/fixtures/broken", env!("CARGO_MANIFEST_DIR"))
}

/// The kind and line marked `// expect: KIND` in `name.cu`.
pub fn expected(name: &str) -> (String, u32) {
    let src = std::fs::read_to_string(format!("{}/{name}.cu", dir())).expect("fixture source");
    let marks: Vec<(String, u32)> = src
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            l.split_once("// expect: ")
                .map(|(_, k)| (k.trim().to_string(), i as u32 + 1))
        })
        .collect();
    assert_eq!(marks.len(), 1, "{name}: one `// expect:` mark");
    marks[0].clone()
}

/// Runs fixture `name` on `shape` for both architectures; checks the first diagnostic's kind,
/// file and line against the mark, and returns the diagnostics of the sm90 run.
pub fn check(name: &str, shape: &Shape) -> Vec<Diagnostic> {
    let (kind, line) = expected(name);
    let mut last = vec![];
    for arch in ARCHS {
        let path = format!("{}/{name}.{arch}.ptx", dir());
        let ptx = std::fs::read_to_string(&path).expect("fixture PTX");
        let out = sim::run(&ptx, &job(shape));
        let d = out.diagnostics;
        assert!(!d.is_empty(), "{name} {arch}: no diagnostic");
        assert_eq!(d[0].kind.name(), kind, "{name} {arch}: {d:#?}");
        assert_eq!(d[0].line, Some(line), "{name} {arch}: {}", d[0]);
        assert_eq!(
            d[0].file.as_deref(),
            Some(format!("kernels/conformance/tests/fixtures/broken/{name}.cu").as_str()),
            "{name} {arch}"
        );
        assert!(
            d[0].block.is_some() && d[0].thread.is_some(),
            "{name} {arch}"
        );
        last = d;
    }
    last
}

pub fn has(d: &[Diagnostic], kind: Kind, words: &[&str]) -> bool {
    d.iter()
        .any(|x| x.kind == kind && words.iter().all(|w| x.message.contains(w)))
}

/// Runs the correct fixture `name` (no `// expect:` mark) on `shape` for both architectures and
/// checks that it is free of diagnostics and computes the right outputs.
pub fn clean(name: &str, shape: &Shape) {
    for arch in ARCHS {
        let ptx = std::fs::read_to_string(format!("{}/{name}.{arch}.ptx", dir())).expect("PTX");
        let j = job(shape);
        let out = sim::run(&ptx, &j);
        assert!(
            out.diagnostics.is_empty(),
            "{name} {arch}: {:#?}",
            out.diagnostics
        );
        let (Arg::Input { data: a, .. }, Arg::Input { data: b, .. }) = (&j.args[0], &j.args[1])
        else {
            unreachable!()
        };
        for (i, &o) in out.outputs[0].iter().enumerate() {
            let want: f32 = (0..shape.conv.min(shape.size - i))
                .map(|k| a[i + k] * b[k])
                .sum();
            assert!(
                (o - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "{name} {arch} out[{i}]"
            );
        }
    }
}
