//! NVRTC's log of a compile that failed, as one `compile_error` diagnostic at the learner's file
//! and the first error's line (NVRTC writes `FILE(LINE): error: MESSAGE`). Where that line holds
//! characters outside ASCII (a minus sign pasted from a web page), the message names them
//! ([`crate::lookalike`]): NVRTC itself says only `unrecognized token`.

use crate::source::Source;
use spec::diag::{Diagnostic, Kind};

/// Turns NVRTC's log into a diagnostic at the first error's line.
/// NVRTC writes errors as `FILE(LINE): error: MESSAGE`.
pub fn compile_error(source: &Source<'_>, log: &str) -> Diagnostic {
    let first_error = log.lines().find_map(|l| {
        let (head, rest) = l.split_once("): error")?;
        let (_, line) = head.rsplit_once('(')?;
        Some((
            line.parse::<u32>().ok()?,
            rest.trim_start_matches(':').trim(),
        ))
    });
    let text = if log.is_empty() {
        "NVRTC rejected the source without a message"
    } else {
        log
    };
    match first_error {
        Some((line, _)) => {
            // A character pasted from elsewhere (U+2212 for `-`) shows as `unrecognized token`.
            let named = crate::lookalike::explain(source.code, line);
            let text = named.map_or(text.to_string(), |n| format!("{text}\n\n{n}"));
            Diagnostic::new(Kind::CompileError, text).at_line(source.file, line)
        }
        None => Diagnostic::new(Kind::CompileError, text).at_line(source.file, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_line_is_taken_from_the_log() {
        let src = Source {
            code: "",
            file: "k.cu",
            macros: &[],
        };
        let log = "k.cu(12): error: identifier \"x\" is undefined\n\n1 error detected";
        let d = compile_error(&src, log);
        assert_eq!((d.kind, d.line), (Kind::CompileError, Some(12)));
        assert!(d.message.contains("identifier \"x\""));
    }

    #[test]
    fn a_non_ascii_character_on_the_error_line_is_named() {
        let src = Source {
            code: "int x;\nx = 1 \u{2212} 2;\n",
            file: "k.cu",
            macros: &[],
        };
        let d = compile_error(&src, "k.cu(2): error: unrecognized token\n");
        assert!(d.message.contains("U+2212 MINUS SIGN"), "{}", d.message);
    }
}
