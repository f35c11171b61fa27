//! The ordered list of puzzles, and lookup by name with a suggestion for typos.
//!
//! Order is the curriculum's: `runner list` prints it and a pass names the next one. Ids are
//! `puzzle-NN`, unique, and each has its chapter in the book (tests below hold all of that).

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

/// The puzzle named `name`; accepts `puzzle-05`, `puzzle-5`, `05` and `5`. On failure, the
/// message says which puzzles exist, and for a misspelt name (not a number) suggests the closest.
pub fn find(name: &str) -> Result<Puzzle, String> {
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
    Err(format!(
        "no puzzle named `{name}`; {closest}the puzzles are {first} to {last} (`{} list` shows them)",
        crate::workbook::runner_command()
    ))
}

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
    fn lookup_accepts_short_forms_and_suggests() {
        assert_eq!(find("2").unwrap().id, "puzzle-02");
        assert_eq!(find("puzzle-03").unwrap().id, "puzzle-03");
        assert_eq!(find("puzzle-1").unwrap().id, "puzzle-01");
        assert_eq!(find("Puzzle-7").unwrap().id, "puzzle-07");
        let err = find("puzzle-0l").unwrap_err();
        assert!(err.contains("did you mean puzzle-01"), "{err}");
        assert!(find("nothing-like-it").unwrap_err().contains("runner list"));
        // A number past the last puzzle is not a typo of puzzle-01: say which puzzles exist.
        let last = all().last().unwrap().id;
        for name in ["99", "puzzle-99", "puzzle-0"] {
            let err = find(name).unwrap_err();
            assert!(!err.contains("did you mean"), "{err}");
            assert!(
                err.contains(&format!("the puzzles are puzzle-01 to {last}")),
                "{err}"
            );
        }
    }
}
