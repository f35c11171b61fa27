//! `runner release DIR`, the students' copy: it holds every skeleton, the runner's source and the
//! book, and no reference solution anywhere (no `solutions/`, no solution section, no file that
//! holds a solution's `ANCHOR: solve` region); the runner run against it checks a skeleton and
//! says that `--solution` and `validate` are for instructors. (Building the copy's runner takes
//! minutes: not here; the copy's sources are the workbook's own files, copied.)

use crate::common;

use common::{repo, runner};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn release(dir: &Path) -> Output {
    Command::new(runner())
        .arg("--root")
        .arg(repo())
        .arg("release")
        .arg(dir)
        .output()
        .expect("runner runs")
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The learner's part of a solution: the text between its `ANCHOR: solve` markers.
fn solve_region(text: &str) -> String {
    let start = text.find("ANCHOR: solve").expect("a solve anchor");
    let body = &text[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let end = body.find("ANCHOR_END: solve").expect("an end anchor");
    let body = &body[..end];
    body[..body.rfind('\n').unwrap_or(0)].to_string()
}

fn in_copy(copy: &Path, args: &[&str]) -> Output {
    Command::new(runner())
        .arg("--root")
        .arg(copy)
        .args(args)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs")
}

#[test]
fn the_students_copy_has_every_skeleton_and_no_solution() {
    let dir = std::env::temp_dir().join(format!("release-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = release(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("solutions").exists());
    for n in 1..=12 {
        assert!(
            dir.join(format!("puzzles/puzzle-{n:02}/kernel.cu"))
                .is_file()
        );
        assert!(dir.join(format!("book/src/puzzle-{n:02}.md")).is_file());
    }
    for must in [
        "Cargo.toml",
        "Cargo.lock",
        "runner/src/main.rs",
        "kernels/toolchain/src/nvrtc.rs",
        "kernels/sim/src/lib.rs",
    ] {
        assert!(dir.join(must).is_file(), "{must}");
    }
    // Every crate the copy's manifests name by path is in it (a crate added to the workspace
    // and not to the copy's folders would leave the students a runner that does not build).
    for manifest in ["Cargo.toml", "runner/Cargo.toml"] {
        let text = std::fs::read_to_string(dir.join(manifest)).unwrap();
        let base = dir.join(manifest).parent().unwrap().to_path_buf();
        for path in text
            .split("path = \"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
        {
            assert!(
                base.join(path).join("Cargo.toml").is_file(),
                "{manifest} names {path}, which the students' copy does not hold"
            );
        }
    }
    let texts: Vec<(PathBuf, String)> = files_under(&dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    for (path, text) in texts
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "md"))
    {
        assert!(
            !text
                .lines()
                .any(|l| l.contains("{{#") && l.contains("solutions/")),
            "{} includes a solution",
            path.display()
        );
    }
    for n in 1..=12 {
        let solution =
            std::fs::read_to_string(repo().join(format!("solutions/puzzle-{n:02}.cu"))).unwrap();
        let region = solve_region(&solution);
        assert!(region.trim().len() > 40, "puzzle-{n:02}'s solve region");
        for (path, text) in &texts {
            assert!(
                !text.contains(&region),
                "{} holds puzzle-{n:02}'s solution",
                path.display()
            );
        }
    }

    // The runner against the copy: a skeleton is checked (and fails), what needs solutions says
    // it is for instructors.
    let check = in_copy(&dir, &["check", "puzzle-01", "--backend", "sim"]);
    assert_eq!(check.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("✗ puzzle-01: case"), "{stdout}");
    for args in [&["check", "puzzle-01", "--solution"][..], &["validate"][..]] {
        let out = in_copy(&dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("is for instructors"), "{args:?}: {stderr}");
    }
    let hint = in_copy(&dir, &["hint", "puzzle-01"]);
    assert!(hint.status.success());
    // A copy is written only into a new or empty folder.
    let again = release(&dir);
    assert_eq!(again.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
