//! The ordered list of puzzles, and lookup by name with a suggestion for typos.
//!
//! Order is the curriculum's: `runner list` prints it and a pass names the next one. Ids are
//! `puzzle-NN`, unique, and each has its chapter in the book (tests below hold all of that).
//! Beside each puzzle's reference solution, [`SHOWPIECES`] lists the second checked solutions:
//! kernels that go further than the one a learner reads, each with a label (`--solution=LABEL`).

use spec::Puzzle;

/// Every puzzle, in the order a learner takes them.
pub fn all() -> Vec<Puzzle> {
    vec![
        puzzle_01::spec(),
        puzzle_02::spec(),
        puzzle_03::spec(),
        puzzle_04::spec(),
        puzzle_05::spec(),
        puzzle_06::spec(),
        puzzle_07::spec(),
        puzzle_08::spec(),
        puzzle_09::spec(),
        puzzle_10::spec(),
        puzzle_11::spec(),
        puzzle_12::spec(),
    ]
}

/// A second checked solution of a puzzle, beside `solutions/puzzle-NN.cu`: `validate` checks it,
/// `check --solution=LABEL` runs it, and `bench` times it in a row of its own.
#[derive(Clone, Copy, Debug)]
pub struct Showpiece {
    pub puzzle: &'static str,
    /// The name after `--solution=`: one lowercase word.
    pub label: &'static str,
    /// Relative to the workbook's root.
    pub file: &'static str,
    /// The only GPU architecture it compiles for (`sm_90`: it uses sm_90a's instructions), if one;
    /// the simulator runs it everywhere.
    pub arch: Option<&'static str>,
    /// One line: what it adds to the reference solution.
    pub adds: &'static str,
}

/// Every second checked solution.
pub const SHOWPIECES: &[Showpiece] = &[
    Showpiece {
        puzzle: "puzzle-11",
        label: "hopper",
        file: "solutions/puzzle-11-hopper.cu",
        arch: Some("sm_90"),
        adds: "wgmma, TMA copies, mbarriers and a producer warpgroup, persistent blocks, for an H100's sm_90a",
    },
    Showpiece {
        puzzle: "puzzle-12",
        label: "hopper",
        file: "solutions/puzzle-12-hopper.cu",
        arch: Some("sm_90"),
        adds: "the same three products on wgmma, X read by descriptor from swizzled half rows, for an H100's sm_90a",
    },
];

/// One solution of a puzzle: the reference (no label) or a showpiece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    pub label: Option<&'static str>,
    pub file: String,
    pub arch: Option<&'static str>,
}

impl Solution {
    /// The option of `runner check` that picks this solution.
    pub fn option(&self) -> String {
        match self.label {
            None => "--solution".into(),
            Some(label) => format!("--solution={label}"),
        }
    }
}

/// The solutions of `p`, the reference first.
pub fn solutions(p: &Puzzle) -> Vec<Solution> {
    let reference = Solution {
        label: None,
        file: p.solution_path(),
        arch: None,
    };
    let showpieces = SHOWPIECES.iter().filter(|s| s.puzzle == p.id);
    std::iter::once(reference)
        .chain(showpieces.map(|s| Solution {
            label: Some(s.label),
            file: s.file.into(),
            arch: s.arch,
        }))
        .collect()
}

/// The solution of `p` labelled `label` (the reference for none or an empty one). On failure, the
/// message names the labels there are.
pub fn solution(p: &Puzzle, label: Option<&str>) -> Result<Solution, Unknown> {
    let label = label.filter(|l| !l.is_empty());
    let all = solutions(p);
    if let Some(s) = all.iter().find(|s| s.label == label) {
        return Ok(s.clone());
    }
    let others: Vec<String> = all
        .iter()
        .map(|s| {
            let adds = SHOWPIECES
                .iter()
                .find(|x| x.puzzle == p.id && Some(x.label) == s.label)
                .map_or("the reference", |x| x.adds);
            format!("{} ({adds})", s.option())
        })
        .collect();
    Err(Unknown(format!(
        "{} has no solution labelled `{}`; its solutions: {}",
        p.id,
        label.unwrap_or_default(),
        others.join("; ")
    )))
}

/// The puzzle named `name`; accepts `puzzle-05`, `puzzle-5`, `05` and `5`. On failure, the
/// message says which puzzles exist, and for a misspelt name (not a number) suggests the closest.
pub fn find(name: &str) -> Result<Puzzle, Unknown> {
    let puzzles = all();
    let lower = name.trim().to_lowercase();
    let number = lower
        .strip_prefix("puzzle-")
        .unwrap_or(&lower)
        .parse::<u32>();
    let normalized = match number {
        Ok(n) => format!("puzzle-{n:02}"),
        Err(_) => lower.clone(),
    };
    if let Some(p) = puzzles.iter().find(|p| p.id == normalized) {
        return Ok(*p);
    }
    let closest = puzzles
        .iter()
        .map(|p| (edit_distance(&normalized, p.id), p.id))
        .min()
        .filter(|(d, _)| number.is_err() && *d <= 3)
        .map(|(_, id)| format!("did you mean {id}? "))
        .unwrap_or_default();
    let (first, last) = (puzzles[0].id, puzzles[puzzles.len() - 1].id);
    Err(Unknown(format!(
        "no puzzle named `{name}`; {closest}the puzzles are {first} to {last} (`{} list` shows them)",
        crate::workbook::runner_command()
    )))
}

/// A puzzle or solution name the registry does not know; the message names the ones it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown(pub String);

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unknown {}

/// The puzzle after `id`, if any.
pub fn next(id: &str) -> Option<Puzzle> {
    let puzzles = all();
    let at = puzzles.iter().position(|p| p.id == id)?;
    puzzles.get(at + 1).copied()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    fn ids_are_unique_numbered_and_in_order() {
        let ids: Vec<&str> = all().iter().map(|p| p.id).collect();
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(*id, format!("puzzle-{:02}", n + 1));
        }
    }

    #[test]
    fn every_puzzle_has_hints_files_chapter_and_cases() {
        for p in all() {
            assert!(p.hints.len() >= 2, "{} needs at least two hints", p.id);
            assert!(p.hints.iter().all(|h| !h.is_empty()));
            assert!((1..=5).contains(&p.grade));
            for file in [
                p.kernel_path(),
                p.solution_path(),
                format!("book/src/{}", p.chapter_file()),
            ] {
                assert!(root().join(&file).is_file(), "{}: missing {file}", p.id);
            }
            let cases = (p.cases)(spec::Scale::Small);
            assert!(
                cases.iter().any(|c| c.name.starts_with("example")),
                "{}",
                p.id
            );
            assert!(cases.iter().any(|c| c.name.starts_with("edge")), "{}", p.id);
            assert!(
                cases.iter().any(|c| c.name.starts_with("random")),
                "{}",
                p.id
            );
        }
    }

    #[test]
    fn every_puzzle_draws_fresh_cases_from_a_seed() {
        use spec::{Arg, FRESH, Scale};
        let data = |c: &spec::Case| -> Vec<f32> {
            c.job
                .args
                .iter()
                .filter_map(|a| match a {
                    Arg::Input { data, .. } => Some(data.clone()),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        for p in all() {
            // Compared as text: puzzle 09's padding is NaN, which equals nothing.
            let text = |cases: &[spec::Case]| format!("{cases:?}");
            let published = (p.cases)(Scale::Small);
            let same = text(&p.graded_cases(Scale::Small)) == text(&published);
            assert!(same, "{}: check runs the published cases only", p.id);
            let graded = p.drawn(7).graded_cases(Scale::Small);
            let kept = text(&graded[..published.len()]) == text(&published);
            assert!(
                kept,
                "{}: the published cases come first, as they are",
                p.id
            );
            let fresh = &graded[published.len()..];
            let mut names: Vec<&str> = graded.iter().map(|c| c.name.as_str()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), graded.len(), "{}: names are unique", p.id);
            for c in &published {
                let twin = fresh
                    .iter()
                    .find(|f| f.name == format!("{FRESH}{}", c.name))
                    .unwrap_or_else(|| panic!("{}: a twin of {}", p.id, c.name));
                assert_eq!(
                    twin.params(),
                    c.params(),
                    "{}: {} keeps its sizes",
                    p.id,
                    c.name
                );
                let new = format!("{:?}", data(twin)) != format!("{:?}", data(c));
                assert!(new, "{}: {} has new data", p.id, c.name);
            }
            assert!(fresh.len() >= published.len() + 3, "{}", p.id);
            let again = p.drawn(7).graded_cases(Scale::Small);
            assert_eq!(text(&again), text(&graded), "{}: seeded", p.id);
            let other = p.drawn(8).graded_cases(Scale::Small);
            assert_ne!(
                text(&other),
                text(&graded),
                "{}: another seed, other cases",
                p.id
            );
        }
    }

    #[test]
    fn showpieces_belong_to_puzzles_and_exist() {
        let mut seen = vec![];
        for s in SHOWPIECES {
            let p = find(s.puzzle).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(p.id, s.puzzle, "a showpiece names its puzzle by id");
            assert!(
                !s.label.is_empty() && s.label.chars().all(|c| c.is_ascii_lowercase()),
                "{}: a label is one lowercase word",
                s.file
            );
            assert!(!seen.contains(&(s.puzzle, s.label)), "{} twice", s.label);
            seen.push((s.puzzle, s.label));
            assert!(root().join(s.file).is_file(), "missing {}", s.file);
            assert_ne!(s.file, p.solution_path());
            assert!(!s.adds.is_empty());
            let found = solution(&p, Some(s.label)).unwrap();
            assert_eq!(found.file, s.file);
            assert_eq!(found.option(), format!("--solution={}", s.label));
        }
    }

    #[test]
    fn only_showpieces_for_sm_90_name_its_own_instructions() {
        // The words by which the toolchain compiles a source for sm_90a (`nvrtc::hopper_specific`):
        // a reference solution naming one, even in a comment, would be compiled for sm_90a only.
        let names_sm90a = |file: &str| {
            let text = std::fs::read_to_string(root().join(file)).unwrap();
            ["wgmma", "setmaxnreg"].iter().any(|w| text.contains(w))
        };
        for p in all() {
            for s in solutions(&p) {
                assert_eq!(names_sm90a(&s.file), s.arch == Some("sm_90"), "{}", s.file);
            }
        }
    }

    #[test]
    fn the_reference_comes_first_and_unknown_labels_are_named() {
        let p = find("puzzle-11").unwrap();
        let all = solutions(&p);
        assert_eq!(all[0].label, None);
        assert_eq!(all[0].file, "solutions/puzzle-11.cu");
        assert!(all.iter().any(|s| s.label == Some("hopper")));
        assert_eq!(solution(&p, Some("")).unwrap(), all[0]);
        let err = solution(&p, Some("ampere")).unwrap_err().0;
        assert!(
            err.contains("--solution=hopper") && err.contains("`ampere`"),
            "{err}"
        );
        let one = find("puzzle-01").unwrap();
        assert_eq!(solutions(&one).len(), 1);
    }

    #[test]
    fn lookup_accepts_short_forms_and_suggests() {
        assert_eq!(find("2").unwrap().id, "puzzle-02");
        assert_eq!(find("puzzle-03").unwrap().id, "puzzle-03");
        assert_eq!(find("puzzle-1").unwrap().id, "puzzle-01");
        assert_eq!(find("Puzzle-7").unwrap().id, "puzzle-07");
        let err = find("puzzle-0l").unwrap_err().0;
        assert!(err.contains("did you mean puzzle-01"), "{err}");
        assert!(
            find("nothing-like-it")
                .unwrap_err()
                .0
                .contains("runner list")
        );
        // A number past the last puzzle is not a typo of puzzle-01: say which puzzles exist.
        let last = all().last().unwrap().id;
        for name in ["99", "puzzle-99", "puzzle-0"] {
            let err = find(name).unwrap_err().0;
            assert!(!err.contains("did you mean"), "{err}");
            assert!(
                err.contains(&format!("the puzzles are puzzle-01 to {last}")),
                "{err}"
            );
        }
    }
}
