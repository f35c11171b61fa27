//! What a learner's source may `#include`: CUDA's and NVRTC's headers (`<cuda_fp16.h>`, the
//! workbook's own `<cstdio>`), and files in the source's own folder; nothing else. A submission
//! reads nothing but itself: not the grader's reference solutions, not `/etc/passwd`.
//!
//! [`check`] reads every include directive of the source (after joining `\`-continued lines and
//! removing comments, which could hide one) and of each local file it includes, and refuses, as
//! one `include_refused` diagnostic at the learner's line: an absolute path, a path with a `..`
//! component, a computed include (`#include SOME_MACRO`), and a local file that resolves (links
//! followed) outside the source's folder. A directive may start with `#`, the digraph `%:` or the
//! trigraph `??=`, and may be `#include`, `#include_next`, `#import` or `#embed`.
//! [`quiet_log`] is the second line of defence: NVRTC's log keeps no line of a file outside the
//! submission, whatever NVRTC managed to read. The third is [`crate::sandbox`]: the compile itself
//! cannot open anything else where Landlock exists. Where it does not ([`crate::sandbox::protection`])
//! and compiles fail closed (a grade, [`crate::sandbox::fail_closed`]),
//! the check is strict: every include but a CUDA header (the workbook's own or one in CUDA's
//! header folder) is refused, and directives are looked for in the text both with comments and
//! strings removed and as it is, so that no literal or comment can hide one from the check.

use spec::diag::{Diagnostic, Kind};
use std::path::{Component, Path, PathBuf};

pub use crate::source::folder_of;

/// [`check`] of a compile's source, against the folder NVRTC reads it from: strict where compiles
/// fail closed and no confinement is possible ([`crate::sandbox::protection`]).
pub fn check_source(source: &crate::source::Source<'_>) -> Result<(), Diagnostic> {
    let strict = crate::sandbox::failing_closed()
        && *crate::sandbox::protection() != crate::sandbox::Protection::Landlock;
    check(source.code, source.file, &folder_of(source.file), strict)
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
/// a header or a file inside `folder`; with `strict`, only a CUDA header.
pub fn check(code: &str, file: &str, folder: &Path, strict: bool) -> Result<(), Diagnostic> {
    let home = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let mut seen: Vec<PathBuf> = vec![];
    let mut queue: Vec<(String, String)> = vec![(code.to_string(), file.to_string())];
    while let Some((text, shown)) = queue.pop() {
        let mut found = directives(&strip_comments(&text));
        if strict {
            found.extend(directives(&text));
        }
        for (line, target) in found {
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
            if strict && !is_cuda_header(&name, quoted, code) {
                return Err(refuse(format!(
                    "#include of \"{name}\": the compile cannot be confined on this machine (no Landlock), so only CUDA's headers may be included"
                )));
            }
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

/// The text of every local file `code` includes, and of those they include, as found in
/// `folder` (names in the order met, each once): what a compile reads besides `code` and the
/// headers, so the compile cache's key covers it ([`crate::cache::cache_key`]).
pub fn local_includes(code: &str, folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found: Vec<(String, Vec<u8>)> = vec![];
    let mut queue = vec![code.to_string()];
    while let Some(text) = queue.pop() {
        for (_, target) in directives(&strip_comments(&text)) {
            let Some((name, true)) = target else {
                continue;
            };
            if found.iter().any(|(seen, _)| *seen == name) || found.len() >= 256 {
                continue;
            }
            if let Ok(bytes) = std::fs::read(folder.join(&name)) {
                queue.push(String::from_utf8_lossy(&bytes).into_owned());
                found.push((name, bytes));
            }
        }
    }
    found
}

/// Whether `<name>` (not `quoted`) is one of CUDA's headers: the workbook's own, or a file in
/// CUDA's header folder, by a plain relative name.
fn is_cuda_header(name: &str, quoted: bool, code: &str) -> bool {
    let path = Path::new(name);
    let plain = path.is_relative() && path.components().all(|c| matches!(c, Component::Normal(_)));
    !quoted
        && plain
        && (crate::headers::OWN.iter().any(|(own, _)| *own == name)
            || crate::headers::include_dirs(&format!("#include <{name}>\n{code}"))
                .iter()
                .any(|dir| dir.join(path).is_file()))
}

/// The include directives of `code`: each line (1-based, in the original text) with the name
/// and whether it was quoted, or `None` for a computed include.
fn directives(code: &str) -> Vec<(u32, Option<(String, bool)>)> {
    let mut found = vec![];
    for (line, text) in logical_lines(code) {
        let text = text.trim_start();
        let Some(rest) = ["#", "%:", "??="].iter().find_map(|p| text.strip_prefix(p)) else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = ["include_next", "include", "import", "embed"]
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
/// they were); string and character literals, raw strings (`R"x(...)x"`) among them, are left
/// alone.
fn strip_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    let mut quote: Option<char> = None;
    let mut last = ' ';
    while let Some(c) = chars.next() {
        if quote.is_none() && c == '"' && last == 'R' {
            // A raw string: up to `)delim"`, newlines and all, with no escapes.
            out.push(c);
            let mut delim = String::new();
            while let Some(&n) = chars.peek() {
                if n == '(' || n == '\n' || delim.len() > 16 {
                    break;
                }
                delim.push(n);
                out.push(n);
                chars.next();
            }
            let end = format!("){delim}\"");
            let mut body = String::new();
            for n in chars.by_ref() {
                body.push(n);
                out.push(n);
                if body.ends_with(&end) {
                    break;
                }
            }
            last = '"';
            continue;
        }
        last = c;
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
        check(code, "k.cu", &dir, false)
            .err()
            .map(|d| (d.line.unwrap_or(0), d.message))
    }

    fn refused_strictly(code: &str) -> Option<String> {
        let dir = std::env::temp_dir();
        check(code, "k.cu", &dir, true).err().map(|d| d.message)
    }

    #[test]
    fn digraphs_trigraphs_and_embed_are_directives_too() {
        let (line, _) = refused("int a;\n%:include \"/etc/passwd\"\n").unwrap();
        assert_eq!(line, 2);
        assert!(refused("  %: include \"../grade.csv\"\n").is_some());
        assert!(refused("??=include \"/etc/passwd\"\n").is_some());
        assert!(refused("#embed \"/etc/passwd\"\n").is_some());
    }

    #[test]
    fn a_raw_string_does_not_open_a_comment_that_hides_an_include() {
        let code = "const char *s = R\"x(\" /*)x\";\n#include \"/etc/passwd\"\n// */\n";
        let (line, _) = refused(code).expect("the include is seen");
        assert_eq!(line, 2);
    }

    #[test]
    fn without_confinement_only_cuda_headers_pass() {
        assert_eq!(
            refused_strictly("#include <cstdio>\n#include <cmath>\n"),
            None
        );
        let msg = refused_strictly("#include \"impl.cuh\"\n").expect("a local file is refused");
        assert!(msg.contains("only CUDA's headers"), "{msg}");
        assert!(refused_strictly("#include <etc/passwd>\n").is_some());
        // Neither a comment nor a string hides one from the strict check.
        assert!(refused_strictly("/*\n#include \"x.h\"\n*/\n").is_some());
        assert!(refused_strictly("const char *s = R\"(\n#include \"x.h\"\n)\";\n").is_some());
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
