//! Which files of a folder of submissions `runner grade` grades, and which it skips and why.
//!
//! The folder is walked to any depth (a class often hands in one folder per student), in sorted
//! order: every `.cu` file is a submission, named by its path relative to the folder
//! (`alice/kernel.cu`), so two students' `kernel.cu` stay two rows. Nothing is dropped in silence:
//! every other file, every folder that cannot be read, every link (not followed: it may point
//! outside the class's folder) and, where the grade writes into the class's folder, the grader's
//! own output (`grade.csv`, `grade.json`, `report.html`, `gradescope/`) is listed as skipped, with the reason,
//! under the table.
//!
//! A folder of cloned workbooks (one per student, as the trusted path for GitHub Classroom clones
//! them) is graded by each workbook's own kernel of the puzzle: in a folder that holds
//! `puzzles/`, only `puzzles/puzzle-NN/kernel.cu` is a submission, and nothing else in it is
//! walked (its other puzzles are graded by `runner grade` of theirs; `target/` and `.git/` hold
//! no submission).
//!
//! Names are data, never paths: a file's name in the table is its path in the folder with each
//! part as it is (a backslash is a character, a line break is shown as `\n`), and the name its
//! own output file gets ([`Submission::out`]) is made of safe characters only, one per
//! submission: two names that would read the same get `-2`, `-3`.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// One submission: the file, and its name in the table (its path relative to the folder).
#[derive(Debug)]
pub struct Submission {
    pub path: PathBuf,
    pub name: String,
    /// Its own output's path relative to an output folder, without extension (`alice/kernel`):
    /// safe characters only, no `..`, distinct from every other submission's.
    pub out: PathBuf,
}

/// One part of a name, made safe to be a file name: letters, digits, `.`, `_` and `-` kept,
/// anything else `_`, and a leading dot (`..`, a hidden file) made `_`.
pub fn safe_component(part: &str) -> String {
    let mut safe: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.starts_with('.') || safe.is_empty() {
        safe.insert(0, '_');
    }
    safe
}

/// A part of a file's name as the table shows it: control characters (a line break) escaped.
fn shown(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Sets every submission's [`Submission::out`]: its parts made safe, its extension dropped, and
/// `-2`, `-3`, ... after the ones taken already (compared without case, as some file systems do).
fn name_outputs(submissions: &mut [Submission], rel: &[Vec<String>]) {
    let mut taken: Vec<String> = vec![];
    for (s, parts) in submissions.iter_mut().zip(rel) {
        let mut safe: Vec<String> = parts.iter().map(|p| safe_component(p)).collect();
        if let Some(last) = safe.last_mut()
            && let Some(stem) = last.strip_suffix(".cu")
        {
            *last = safe_component(stem);
        }
        let base = safe.join("/");
        let mut name = base.clone();
        let mut n = 1;
        while taken.contains(&name.to_lowercase()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        taken.push(name.to_lowercase());
        s.out = PathBuf::from(name);
    }
}

/// What the walk found: the submissions in order, and every entry it did not grade.
#[derive(Debug, Default)]
pub struct Found {
    pub submissions: Vec<Submission>,
    /// `(name relative to the folder, why it was not graded)`.
    pub skipped: Vec<(String, String)>,
}

/// The grader's own output in the folder it writes to: never a submission.
const OWN_OUTPUT: [&str; 4] = ["grade.csv", "grade.json", "report.html", "gradescope"];

/// Walks `folder`. `Err` only when `folder` itself cannot be read, or holds no `.cu` file.
/// `writes_here`: the grade writes its output into `folder`, so its top-level `grade.csv`,
/// `grade.json`, `report.html` and `gradescope/` are the grader's (listed as skipped, with why).
/// `puzzle`: the id graded, whose kernel a workbook in the folder is graded by.
pub fn walk(folder: &Path, writes_here: bool, puzzle: &str) -> anyhow::Result<Found> {
    std::fs::read_dir(folder)
        .with_context(|| format!("cannot read the folder of submissions {}", folder.display()))?;
    let mut found = Found::default();
    let mut rel = vec![];
    let walk = Walk {
        writes_here,
        puzzle,
    };
    visit(folder, &[], &walk, &mut found, &mut rel);
    if found.submissions.is_empty() {
        anyhow::bail!(
            "no .cu files in {} (or its subfolders): nothing to grade",
            folder.display()
        );
    }
    name_outputs(&mut found.submissions, &rel);
    Ok(found)
}

/// What a walk is for: where it writes, and the puzzle it grades.
struct Walk<'a> {
    writes_here: bool,
    puzzle: &'a str,
}

fn name_of(parts: &[String]) -> String {
    parts.iter().map(|p| shown(p)).collect::<Vec<_>>().join("/")
}

fn visit(
    dir: &Path,
    parts: &[String],
    walk: &Walk<'_>,
    found: &mut Found,
    rel: &mut Vec<Vec<String>>,
) {
    let writes_here = walk.writes_here;
    let is_workbook = !parts.is_empty()
        && std::fs::symlink_metadata(dir.join("puzzles")).is_ok_and(|m| m.is_dir());
    if is_workbook {
        let inside = [
            "puzzles".to_string(),
            walk.puzzle.to_string(),
            "kernel.cu".into(),
        ];
        let own: Vec<String> = [parts, &inside].concat();
        let kernel = dir.join("puzzles").join(walk.puzzle).join("kernel.cu");
        match std::fs::symlink_metadata(&kernel) {
            Ok(m) if m.is_file() => {
                found.submissions.push(Submission {
                    path: kernel,
                    name: name_of(&own),
                    out: PathBuf::new(),
                });
                rel.push(own);
            }
            Ok(m) if m.file_type().is_symlink() => {
                found
                    .skipped
                    .push((name_of(&own), "a link (not followed)".into()));
            }
            _ => found.skipped.push((
                format!("{}/", name_of(parts)),
                format!("a workbook without puzzles/{}/kernel.cu", walk.puzzle),
            )),
        }
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found.skipped.push((
                format!("{}/", name_of(parts)),
                format!("cannot read it: {e}"),
            ));
            return;
        }
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let mut own = parts.to_vec();
        own.push(entry.file_name().to_string_lossy().into_owned());
        let name = name_of(&own);
        let Ok(kind) = entry.file_type() else {
            found.skipped.push((name, "cannot tell what it is".into()));
            continue;
        };
        let top_level_output =
            writes_here && parts.is_empty() && OWN_OUTPUT.iter().any(|o| entry.file_name() == *o);
        if top_level_output {
            let name = if kind.is_dir() {
                format!("{name}/")
            } else {
                name
            };
            found.skipped.push((
                name,
                "the grader's own output, written here (grade with --out DIR to grade a folder of this name)".into(),
            ));
            continue;
        }
        if kind.is_symlink() {
            found.skipped.push((name, "a link (not followed)".into()));
        } else if kind.is_dir() {
            visit(&entry.path(), &own, walk, found, rel);
        } else if !kind.is_file() {
            found.skipped.push((name, "not a regular file".into()));
        } else if entry.path().extension().is_some_and(|e| e == "cu") {
            found.submissions.push(Submission {
                path: entry.path(),
                name,
                out: PathBuf::new(),
            });
            rel.push(own);
        } else {
            found.skipped.push((name, "not a .cu file".into()));
        }
    }
}

/// The lines under the table that list what was skipped (none when nothing was).
pub fn skipped_lines(skipped: &[(String, String)]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut out = format!("skipped {} (not graded):\n", skipped.len());
    for (name, why) in skipped {
        out += &format!("  {name}: {why}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subfolders_are_walked_and_the_rest_listed() {
        let dir = std::env::temp_dir().join(format!("grade-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("alice/deep")).unwrap();
        std::fs::create_dir_all(dir.join("gradescope")).unwrap();
        for f in [
            "bob.cu",
            "alice/kernel.cu",
            "alice/deep/kernel.cu",
            "notes.txt",
        ] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        std::fs::write(dir.join("grade.csv"), "x").unwrap();
        std::fs::write(dir.join("gradescope/bob.json"), "x").unwrap();
        std::fs::write(dir.join("gradescope/carol.cu"), "x").unwrap();
        let found = walk(&dir, true, "puzzle-04").unwrap();
        let names: Vec<&str> = found.submissions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alice/deep/kernel.cu", "alice/kernel.cu", "bob.cu"]);
        let skipped: Vec<&str> = found.skipped.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(skipped, ["grade.csv", "gradescope/", "notes.txt"]);
        assert!(found.skipped[1].1.contains("--out"), "{:?}", found.skipped);
        // Written elsewhere, a folder of that name is a class's folder like any other.
        let found = walk(&dir, false, "puzzle-04").unwrap();
        let names: Vec<&str> = found.submissions.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"gradescope/carol.cu"), "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_of_cloned_workbooks_is_graded_by_each_ones_kernel() {
        let dir = std::env::temp_dir().join(format!("grade-clones-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for student in ["alice", "bob"] {
            for p in ["puzzle-01", "puzzle-04"] {
                let folder = dir.join(student).join("puzzles").join(p);
                std::fs::create_dir_all(&folder).unwrap();
                std::fs::write(folder.join("kernel.cu"), "x").unwrap();
            }
            std::fs::create_dir_all(dir.join(student).join("target")).unwrap();
            std::fs::write(dir.join(student).join("target/stray.cu"), "x").unwrap();
        }
        std::fs::create_dir_all(dir.join("carol/puzzles")).unwrap();
        let found = walk(&dir, false, "puzzle-04").unwrap();
        let names: Vec<&str> = found.submissions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "alice/puzzles/puzzle-04/kernel.cu",
                "bob/puzzles/puzzle-04/kernel.cu"
            ]
        );
        assert_eq!(found.skipped.len(), 1, "{:?}", found.skipped);
        assert!(
            found.skipped[0]
                .1
                .contains("without puzzles/puzzle-04/kernel.cu")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_names_are_safe_and_distinct() {
        let dir = std::env::temp_dir().join(format!("grade-names-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("zz")).unwrap();
        for f in [
            "..\\..\\..\\victim.cu",
            "zz\\..\\bob.cu",
            "bob.cu",
            "Bob.cu",
            "a\nb.cu",
            "=cmd.cu",
            "zz/bob.cu",
        ] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let found = walk(&dir, false, "puzzle-04").unwrap();
        let outs: Vec<String> = found
            .submissions
            .iter()
            .map(|s| s.out.display().to_string())
            .collect();
        for out in &outs {
            let path = Path::new(out);
            assert!(path.is_relative(), "{out}");
            assert!(
                path.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_))),
                "{out}"
            );
            assert!(!out.contains('\\') && !out.contains('\n'), "{out}");
        }
        let mut unique = outs.clone();
        unique.sort();
        unique.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
        assert_eq!(unique.len(), outs.len(), "{outs:?}");
        let names: Vec<&str> = found.submissions.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"zz\\..\\bob.cu"), "{names:?}");
        assert!(names.contains(&"a\\nb.cu"), "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
