//! Which files of a folder of submissions `runner grade` grades, and which it skips and why.
//!
//! The folder is walked to any depth (a class often hands in one folder per student), in sorted
//! order: every `.cu` file is a submission, named by its path relative to the folder
//! (`alice/kernel.cu`), so two students' `kernel.cu` stay two rows. Nothing is dropped in silence:
//! every other file, every folder that cannot be read, every link (not followed: it may point
//! outside the class's folder) and the grader's own output (`grade.csv`, `grade.json`,
//! `report.html`, `gradescope/`) is listed as skipped, with the reason, under the table.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// One submission: the file, and its name in the table (its path relative to the folder).
#[derive(Debug)]
pub struct Submission {
    pub path: PathBuf,
    pub name: String,
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
pub fn walk(folder: &Path) -> anyhow::Result<Found> {
    std::fs::read_dir(folder)
        .with_context(|| format!("cannot read the folder of submissions {}", folder.display()))?;
    let mut found = Found::default();
    visit(folder, Path::new(""), &mut found);
    if found.submissions.is_empty() {
        anyhow::bail!(
            "no .cu files in {} (or its subfolders): nothing to grade",
            folder.display()
        );
    }
    Ok(found)
}

fn visit(dir: &Path, rel: &Path, found: &mut Found) {
    let name_of = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found
                .skipped
                .push((format!("{}/", name_of(rel)), format!("cannot read it: {e}")));
            return;
        }
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let own = rel.join(entry.file_name());
        let name = name_of(&own);
        let Ok(kind) = entry.file_type() else {
            found.skipped.push((name, "cannot tell what it is".into()));
            continue;
        };
        let top_level_output =
            rel.as_os_str().is_empty() && OWN_OUTPUT.iter().any(|o| entry.file_name() == *o);
        if top_level_output {
            continue;
        }
        if kind.is_symlink() {
            found.skipped.push((name, "a link (not followed)".into()));
        } else if kind.is_dir() {
            visit(&entry.path(), &own, found);
        } else if !kind.is_file() {
            found.skipped.push((name, "not a regular file".into()));
        } else if entry.path().extension().is_some_and(|e| e == "cu") {
            found.submissions.push(Submission {
                path: entry.path(),
                name,
            });
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
        let found = walk(&dir).unwrap();
        let names: Vec<&str> = found.submissions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alice/deep/kernel.cu", "alice/kernel.cu", "bob.cu"]);
        assert_eq!(
            found.skipped,
            [("notes.txt".to_string(), "not a .cu file".to_string())]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
