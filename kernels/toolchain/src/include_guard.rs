//! What a learner's source may `#include`: CUDA's and NVRTC's headers (`<cuda_fp16.h>`, the
//! workbook's own `<cstdio>`), and files in the source's own folder; nothing else. A submission
//! reads nothing but itself: not the grader's reference solutions, not `/etc/passwd`.
//!
//! [`check`] reads every include directive of the source (after joining `\`-continued lines and
//! removing comments, which could hide one) and of each local file it includes, and refuses, as
//! one `include_refused` diagnostic at the learner's line: an absolute path, a path with a `..`
//! component, a computed include (`#include SOME_MACRO`), and a local file that resolves (links
//! followed) outside the source's folder. [`quiet_log`] is the second line of defence: NVRTC's log
//! keeps no line of a file outside the submission, whatever NVRTC managed to read. The third is
//! [`crate::sandbox`]: the compile itself cannot open anything else where Landlock exists.

use spec::diag::{Diagnostic, Kind};
use std::path::{Component, Path, PathBuf};

/// The folder NVRTC resolves the source's quoted includes against: the folder of `file` as NVRTC
/// sees it (relative names are relative to the working directory).
pub fn folder_of(file: &str) -> PathBuf {
    let path = Path::new(file);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    abs.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// [`check`] of a compile's source, against the folder NVRTC reads it from.
pub fn check_source(source: &crate::source::Source<'_>) -> Result<(), Diagnostic> {
    check(source.code, source.file, &folder_of(source.file))
}

/// [`quiet_log`] for a compile of `source`: its own file, files in its folder and the header
/// folders' files (public, and what a learner's misuse of a CUDA header is reported in) are kept.
pub fn quiet_source_log(source: &crate::source::Source<'_>, log: &str) -> String {
    let folder = folder_of(source.file);
    let headers = crate::headers::include_dirs(source.code);
    let own = |file: &str| {
        let path = Path::new(file);
        // NVRTC names an included file as it opened it: relative to the working directory.
        let abs = std::env::current_dir().unwrap_or_default().join(path);
        file == source.file
            || crate::headers::OWN.iter().any(|(name, _)| *name == file)
            || (!file.contains("..") && abs.starts_with(&folder))
            || headers.iter().any(|h| path.starts_with(h))
    };
    quiet_log(log, &own)
}

/// `Ok` when every include of `code` (shown as `file`) and of the local files it includes names
/// a header or a file inside `folder`.
pub fn check(code: &str, file: &str, folder: &Path) -> Result<(), Diagnostic> {
    let home = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let mut seen: Vec<PathBuf> = vec![];
    let mut queue: Vec<(String, String)> = vec![(code.to_string(), file.to_string())];
    while let Some((text, shown)) = queue.pop() {
        for (line, target) in directives(&text) {
            let refuse = |why: String| {
                Diagnostic::new(
                    Kind::IncludeRefused,
                    format!(
                        "{why}. A submission may include CUDA's headers (<cuda_fp16.h>, <mma.h>, <cstdio>, ...) and files in its own folder, nothing else: remove the #include or copy what you need into your file"
                    ),
                )
                .at_line(&shown, line)
            };
            let Some((name, quoted)) = target else {
                return Err(refuse(
                    "this #include names its file through a macro (a computed include)".into(),
                ));
            };
            let path = Path::new(&name);
            if path.is_absolute() || name.starts_with('~') {
                return Err(refuse(format!("#include of \"{name}\", an absolute path")));
            }
            if path.components().any(|c| c == Component::ParentDir) {
                return Err(refuse(format!(
                    "#include of \"{name}\" climbs out of the file's folder (`..`)"
                )));
            }
            // A name NVRTC could find from the working directory, outside the folder.
            let from_cwd = std::env::current_dir().unwrap_or_default().join(path);
            if !home.join(path).exists() && from_cwd.exists() {
                return Err(refuse(format!(
                    "#include of \"{name}\" names a file outside the file's folder"
                )));
            }
            // A quoted name found beside the source is read from there: it must stay inside
            // the folder (a link may point anywhere), and its own includes are checked too.
            let local = home.join(path);
            if quoted && local.exists() {
                let real = std::fs::canonicalize(&local).unwrap_or(local);
                if !real.starts_with(&home) {
                    return Err(refuse(format!(
                        "#include of \"{name}\" leads outside the file's folder (a link)"
                    )));
                }
                if !seen.contains(&real) {
                    let bytes = std::fs::read(&real).unwrap_or_default();
                    queue.push((String::from_utf8_lossy(&bytes).into_owned(), name.clone()));
                    seen.push(real);
                }
            }
        }
    }
    Ok(())
}

/// The include directives of `code`: each line (1-based, in the original text) with the name
/// and whether it was quoted, or `None` for a computed include.
fn directives(code: &str) -> Vec<(u32, Option<(String, bool)>)> {
    let mut found = vec![];
    for (line, text) in logical_lines(&strip_comments(code)) {
        let Some(rest) = text.trim_start().strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = ["include_next", "include", "import"]
            .iter()
            .find_map(|d| rest.strip_prefix(d))
        else {
            continue;
        };
        let rest = rest.trim();
        let target = match rest.chars().next() {
            Some('<') => rest[1..]
                .find('>')
                .map(|e| (rest[1..1 + e].to_string(), false)),
            Some('"') => rest[1..]
                .find('"')
                .map(|e| (rest[1..1 + e].to_string(), true)),
            _ => None,
        };
        found.push((line, target));
    }
    found
}

/// `code` with `//` and `/* */` comments replaced by spaces (newlines kept, so lines stay where
/// they were); string and character literals are left alone.
fn strip_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == q || c == '\n' {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push(' ');
                let mut last = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            ('"' | '\'', _) => {
                quote = Some(c);
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Lines joined where one ends in `\`, each with the number of its first physical line.
fn logical_lines(code: &str) -> Vec<(u32, String)> {
    let mut lines = vec![];
    let mut current: Option<(u32, String)> = None;
    for (n, raw) in code.split('\n').enumerate() {
        let raw = raw.trim_end_matches('\r');
        let (start, mut text) = current.take().unwrap_or((n as u32 + 1, String::new()));
        match raw.strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                current = Some((start, text));
            }
            None => {
                text.push_str(raw);
                lines.push((start, text));
            }
        }
    }
    lines.extend(current);
    lines
}

/// NVRTC's `log` with every message about a file outside the submission cut down to its first
/// line's place (`FILE(LINE)`), so no line of such a file is ever quoted back. `own(file)` says
/// whether a file named in the log belongs to the submission (or is a public header).
pub fn quiet_log(log: &str, own: &dyn Fn(&str) -> bool) -> String {
    let mut out = vec![];
    let mut hiding = false;
    for line in log.lines() {
        if let Some((file, at)) = message_head(line) {
            hiding = !own(file);
            if hiding {
                out.push(format!(
                    "{file}({at}): a message about a file outside your submission (not shown)"
                ));
                continue;
            }
        } else if line.trim().is_empty() || line.contains("error detected") {
            hiding = false;
        }
        if !hiding {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// `FILE(LINE): ...` at the head of a message: the file and the line.
fn message_head(line: &str) -> Option<(&str, &str)> {
    let (head, rest) = line.split_once("): ")?;
    let (file, at) = head.rsplit_once('(')?;
    (!file.is_empty() && at.chars().all(|c| c.is_ascii_digit()) && !rest.is_empty())
        .then_some((file, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(code: &str) -> Option<(u32, String)> {
        let dir = std::env::temp_dir();
        check(code, "k.cu", &dir)
            .err()
            .map(|d| (d.line.unwrap_or(0), d.message))
    }

    #[test]
    fn headers_and_local_names_pass() {
        let code = "#include <cuda_fp16.h>\n#include <cstdio>\n#include \"no-such-helper.cuh\"\n";
        assert_eq!(refused(code), None);
    }

    #[test]
    fn absolute_climbing_and_computed_includes_are_refused_at_their_line() {
        let (line, msg) = refused("int x;\n#include \"/etc/passwd\"\n").unwrap();
        assert_eq!(line, 2);
        assert!(msg.contains("absolute path"), "{msg}");
        let (_, msg) = refused("#include \"../../solutions/puzzle-04.cu\"\n").unwrap();
        assert!(msg.contains("climbs out"), "{msg}");
        let (line, msg) = refused("#define F \"/etc/passwd\"\n\n#include F\n").unwrap();
        assert_eq!(line, 3);
        assert!(msg.contains("computed include"), "{msg}");
        assert!(refused("#include <../../../etc/passwd>\n").is_some());
    }

    #[test]
    fn comments_and_continued_lines_do_not_hide_an_include() {
        assert!(refused("#/* hidden */include \"/etc/passwd\"\n").is_some());
        let (line, _) = refused("int a;\n#inc\\\nlude \"/etc/passwd\"\n").unwrap();
        assert_eq!(line, 2);
        assert_eq!(refused("// #include \"/etc/passwd\"\n"), None);
        assert_eq!(refused("const char *s = \"#include </etc>\";\n"), None);
    }

    #[test]
    fn foreign_lines_are_cut_from_the_log() {
        let log = "/etc/passwd(1): error: identifier \"root\" is undefined\n  root:x:0:0:root:/root:/bin/bash\n  ^\n\nk.cu(3): error: expected a \";\"\n  int x\n\n2 errors detected in the compilation of \"k.cu\".";
        let quiet = quiet_log(log, &|f| f == "k.cu");
        assert!(!quiet.contains("root"), "{quiet}");
        assert!(quiet.contains("/etc/passwd(1): a message about a file outside"));
        assert!(quiet.contains("k.cu(3): error: expected a \";\"\n  int x"));
    }
}
