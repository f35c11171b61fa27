//! `runner show`: snapshots of the terminal picture of the solutions of puzzles 02, 03 and 04
//! (the case a correct kernel gets by default, its first example) and of a 2D kernel writing
//! into its output's padding, a broken kernel's races marked at their elements with the command
//! `check` prints to draw them, and the SVG: well-formed,
//! of a sane size, every text inside its `viewBox`. (`bench/show_svg.sh` renders it in headless
//! Chromium; CI does not need a browser.)

use crate::common;

use std::process::Command;

fn show(args: &[&str]) -> (String, bool) {
    let out = Command::new(common::runner())
        .current_dir(common::repo())
        .args(["show", "--color", "never"])
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("runner runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.success())
}

#[test]
fn puzzle_02_solution() {
    insta::assert_snapshot!(show(&["puzzle-02", "--solution"]).0);
}

#[test]
fn puzzle_03_solution() {
    insta::assert_snapshot!(show(&["puzzle-03", "--solution"]).0);
}

#[test]
fn puzzle_04_solution() {
    insta::assert_snapshot!(show(&["puzzle-04", "--solution"]).0);
}

/// The arguments of the `draw it: runner show ...` line of `runner check PUZZLE --kernel KERNEL`.
fn draw_line(puzzle: &str, kernel: &str) -> String {
    let check = Command::new(common::runner())
        .current_dir(common::repo())
        .args(["check", puzzle, "--backend", "sim", "--kernel", kernel])
        .env("NO_COLOR", "1")
        .output()
        .expect("runner runs");
    let report = String::from_utf8_lossy(&check.stdout);
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix("draw it: runner show "))
        .unwrap_or_else(|| panic!("no draw line in:\n{report}"))
        .to_string()
}

/// A puzzle-09 store guarded by the stride: every padding element the block wrote is marked `P`
/// at its element (the default case and block are those of the diagnostic), as on `check`'s
/// `draw it:` line.
#[test]
fn padding_writes_of_a_2d_output() {
    let kernel = "runner/tests/fixtures/broken2d/p09_store_guard_by_stride.cu";
    let draw = draw_line("puzzle-09", kernel);
    let mut args: Vec<&str> = draw.split_whitespace().collect();
    args.extend(["--buffer", "output"]);
    let (pic, _) = show(&args);
    assert_eq!(
        pic,
        show(&["puzzle-09", "--kernel", kernel, "--buffer", "output"]).0,
        "the default case and block are the diagnostic's"
    );
    // Drawn by image rows: each of the block's rows under its label, its 8 columns in one grid row.
    assert!(
        pic.contains("image row 1 (columns 32..40)\n       72  73"),
        "{pic}"
    );
    insta::assert_snapshot!(pic);
}

#[test]
fn a_missing_barrier_is_marked_where_it_races_and_check_says_how_to_draw_it() {
    let kernel = "kernels/conformance/tests/fixtures/broken/p03_missing_barrier.cu";
    let draw = draw_line("puzzle-03", kernel);
    assert!(draw.contains("--case example-1 --block 0"), "{draw}");
    let args: Vec<&str> = draw.split_whitespace().collect();
    let (pic, _) = show(&args);
    // One phase (no barrier), the race on `sb[0]` of the diagnostic marked on the read row.
    assert!(
        pic.contains("phase 1 of 1: from the start to the end"),
        "{pic}"
    );
    assert!(
        pic.contains("! sb[0]: race: thread 0 wrote it (line 16), then thread 1 read it (line 23)"),
        "{pic}"
    );
    let sb = pic.split("  sb (shared").nth(1).expect("sb drawn");
    assert!(
        sb.lines().nth(2).is_some_and(|l| l.contains("0-5!")),
        "{sb}"
    );
}

/// Shared arrays are drawn and marked in their declared elements, as `check` names them: a
/// `float2` array's element is its 8 bytes (its mark `sab[0].y`, not the 4-byte word `sab[1]`),
/// a 3D array's is named by its three indices and drawn by its rows.
#[test]
fn shared_arrays_are_drawn_in_their_declared_elements() {
    let dir = "runner/tests/fixtures/shared_names";
    let (pic, _) = show(
        &draw_line("puzzle-02", &format!("{dir}/p02_float2_race.cu"))
            .split_whitespace()
            .collect::<Vec<_>>(),
    );
    assert!(pic.contains("  sab (shared, 8 elements"), "{pic}");
    for mark in [
        "! sab[0].y: race: thread 0 wrote it (line 12), then thread 1 read it (line 19)",
        "! sab[1].x: race: thread 1 wrote it (line 9), then thread 0 read it (line 19)",
    ] {
        assert!(pic.contains(mark), "{pic}");
    }
    let (pic, _) = show(
        &draw_line("puzzle-02", &format!("{dir}/p02_3d_race.cu"))
            .split_whitespace()
            .collect::<Vec<_>>(),
    );
    assert!(pic.contains("  sb (shared, 12 elements"), "{pic}");
    // Drawn by its rows, each named as the kernel indexes it, the race in row `sb[1][0]`.
    let row = pic
        .split("   sb[1][0] (columns 0..1)\n")
        .nth(1)
        .expect("row sb[1][0]");
    assert!(
        row.lines().nth(1).is_some_and(|l| l.contains("0-5!")),
        "{pic}"
    );
    assert!(
        pic.contains("! sb[1][0][0]: race: thread 0 wrote it (line 13), then thread 1 read it"),
        "{pic}"
    );
    // The SVG names its rows as the text does.
    let svg = std::env::temp_dir().join(format!("show-rows-{}.svg", std::process::id()));
    let line = draw_line("puzzle-02", &format!("{dir}/p02_3d_race.cu"));
    let mut args: Vec<&str> = line.split_whitespace().collect();
    args.extend(["--svg", svg.to_str().unwrap()]);
    show(&args);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains(">sb[1][0]</text>"), "{drawn}");
    let _ = std::fs::remove_file(&svg);
}

#[test]
fn one_buffer_and_one_block_can_be_chosen() {
    let (pic, _) = show(&[
        "puzzle-04",
        "--solution",
        "--case",
        "edge-three-blocks",
        "--block",
        "2",
        "--buffer",
        "tile",
    ]);
    assert!(pic.contains("block (2,0,0), 32 threads"), "{pic}");
    assert!(pic.contains("  tile (shared, 38 elements)"), "{pic}");
    assert!(!pic.contains("  input (global"), "{pic}");
}

/// A minimal XML reader: every tag closes in order, attributes are quoted, and it returns each
/// `<text>`'s x, y, font size and content.
fn parse(svg: &str) -> Vec<(f64, f64, f64, String)> {
    let mut stack: Vec<String> = vec![];
    let mut texts = vec![];
    let mut rest = svg.trim();
    while let Some(open) = rest.find('<') {
        let content = &rest[..open];
        assert!(!content.contains('>'), "stray `>` in {content:?}");
        let close = rest[open..].find('>').expect("tag closes") + open;
        let tag = &rest[open + 1..close];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "closing {name}");
        } else {
            let name = tag
                .split_whitespace()
                .next()
                .expect("tag name")
                .trim_end_matches('/');
            assert_eq!(tag.matches('"').count() % 2, 0, "quotes in <{tag}>");
            if name == "text" {
                let attr = |k: &str| -> f64 {
                    let at = tag.find(&format!(" {k}=\"")).expect(k) + k.len() + 3;
                    tag[at..at + tag[at..].find('"').unwrap()]
                        .parse()
                        .expect("number")
                };
                let end = rest[close..].find("</text>").expect("text closes") + close;
                let body = rest[close + 1..end].to_string();
                texts.push((attr("x"), attr("y"), attr("font-size"), body));
            }
            if !tag.ends_with('/') {
                stack.push(name.to_string());
            }
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    texts
}

#[test]
fn the_svg_is_well_formed_sane_in_size_and_its_text_inside_the_view_box() {
    let dir = std::env::temp_dir().join(format!("show-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (puzzle, kernel) in [
        (
            "puzzle-03",
            "kernels/conformance/tests/fixtures/broken/p03_missing_barrier.cu",
        ),
        ("puzzle-04", "solutions/puzzle-04.cu"),
        (
            "puzzle-09",
            "runner/tests/fixtures/broken2d/p09_store_guard_by_stride.cu",
        ),
    ] {
        let file = dir.join(format!("{puzzle}.svg"));
        let (text, _) = show(&[puzzle, "--kernel", kernel, "--svg", file.to_str().unwrap()]);
        assert!(text.contains("wrote "), "{text}");
        let svg = std::fs::read_to_string(&file).unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        let head = &svg[..svg.find('>').unwrap()];
        let num = |k: &str| -> f64 {
            let at = head.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
            head[at..at + head[at..].find('"').unwrap()]
                .parse()
                .unwrap()
        };
        let (w, h) = (num("width"), num("height"));
        assert!(head.contains(&format!("viewBox=\"0 0 {w} {h}\"")), "{head}");
        assert!(
            (300.0..=2000.0).contains(&w) && (100.0..=6000.0).contains(&h),
            "{w}x{h}"
        );
        let texts = parse(&svg);
        assert!(texts.len() > 10, "{}", texts.len());
        for (x, y, size, body) in &texts {
            let chars = body.chars().count() as f64;
            // Left-aligned text runs right of x; centred text (the cells') half each way.
            let right = if body.len() < 8 {
                x + chars * size * 0.3
            } else {
                x + chars * size * 0.6
            };
            assert!(
                *x >= 0.0 && right <= w && *y - size >= 0.0 && *y <= h && *size >= 9.0,
                "text {body:?} at ({x},{y}) size {size} outside {w}x{h}"
            );
        }
        if puzzle == "puzzle-03" {
            assert!(
                texts.iter().any(|t| t.3.contains("sb[0]: race")),
                "the mark's sentence"
            );
        }
        if puzzle == "puzzle-09" {
            assert!(
                texts
                    .iter()
                    .any(|t| t.3.starts_with("P output[34]: written in the padding")),
                "the padding mark's sentence"
            );
            assert!(texts.iter().any(|t| t.3 == "P"), "the marked cell");
        }
    }
}

#[test]
fn the_books_picture_is_what_show_draws_now() {
    let file = std::env::temp_dir().join(format!("book-show-{}.svg", std::process::id()));
    show(&[
        "puzzle-03",
        "--solution",
        "--case",
        "example-2",
        "--block",
        "0",
        "--svg",
        file.to_str().unwrap(),
    ]);
    let now = std::fs::read_to_string(&file).unwrap();
    let book = std::fs::read_to_string(common::repo().join("book/src/img/puzzle-03-show.svg"))
        .expect("the book's picture");
    assert!(
        now == book,
        "book/src/img/puzzle-03-show.svg is stale: run `runner show puzzle-03 --solution --case example-2 --block 0 --svg book/src/img/puzzle-03-show.svg`"
    );
}

/// `check`'s commands as data, not a line parsed back: with `--kernel` in a folder whose name holds
/// a space and the word `check`, and with `--stats` and `--timeout` (which `show` does not take),
/// the `Fix it` line names the file as one shell word, and the `draw it:` line, split as a shell
/// splits it, runs `show` on that file and draws the race.
#[test]
fn a_kernel_path_with_a_space_reaches_the_fix_and_draw_commands_whole() {
    let dir = std::env::temp_dir().join(format!("my check {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kernel = dir.join("k 1.cu");
    let broken = "kernels/conformance/tests/fixtures/broken/p03_missing_barrier.cu";
    std::fs::copy(common::repo().join(broken), &kernel).unwrap();
    let path = kernel
        .to_str()
        .expect("a UTF-8 temporary folder")
        .to_string();
    let check = Command::new(common::runner())
        .current_dir(common::repo())
        .args([
            "check",
            "puzzle-03",
            "--backend",
            "sim",
            "--stats",
            "--timeout",
            "5",
        ])
        .args(["--kernel", &path])
        .env("NO_COLOR", "1")
        .output()
        .expect("runner runs");
    let report = String::from_utf8_lossy(&check.stdout).to_string();
    let quoted = format!("'{path}'");
    assert!(
        report.contains(&format!(
            "Fix it, then run: runner check puzzle-03 --kernel {quoted} --backend sim --stats --timeout 5\n"
        )),
        "{report}"
    );
    let draw = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("draw it: runner show "))
        .unwrap_or_else(|| panic!("no draw line in:\n{report}"));
    assert_eq!(
        draw,
        format!("puzzle-03 --kernel {quoted} --case example-1 --block 0")
    );
    // Split as a shell splits it: the quoted path is one word.
    let mut args: Vec<String> = vec![];
    for (i, part) in draw.split('\'').enumerate() {
        if i % 2 == 1 {
            args.push(part.to_string());
        } else {
            args.extend(part.split_whitespace().map(str::to_string));
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (pic, _) = show(&args);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(pic.contains("! sb[0]: race"), "{pic}");
}
