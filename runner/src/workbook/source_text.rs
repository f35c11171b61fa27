//! Reading a learner's source leniently: a file that is not valid UTF-8 (a Latin-1 `é` in a
//! comment, saved by an old editor) is still checked, never refused as unreadable. Each byte
//! that is not UTF-8 becomes U+FFFD, and one warning names the first such byte, its line and how
//! many there are, so the learner can save the file as UTF-8. A correct kernel with such a
//! comment passes.

use anyhow::Context;
use std::path::Path;

/// The file's text, and a warning when some of its bytes were not UTF-8.
pub fn read(path: &Path, shown_as: &str) -> anyhow::Result<(String, Option<String>)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(decode(&bytes, shown_as))
}

/// `bytes` as text, and a warning naming the first byte that is not UTF-8 (none when all are).
pub fn decode(bytes: &[u8], shown_as: &str) -> (String, Option<String>) {
    let first_bad = match std::str::from_utf8(bytes) {
        Ok(text) => return (text.to_string(), None),
        Err(e) => e.valid_up_to(),
    };
    let text = String::from_utf8_lossy(bytes).into_owned();
    let line = bytes[..first_bad].iter().filter(|&&b| b == b'\n').count() + 1;
    let bad = text
        .chars()
        .filter(|&c| c == char::REPLACEMENT_CHARACTER)
        .count();
    let more = if bad > 1 {
        format!(" ({bad} such bytes in all)")
    } else {
        String::new()
    };
    let warning = format!(
        "warning: {shown_as}:{line}: byte 0x{:02X} is not UTF-8{more}; it was read as U+FFFD (save the file as UTF-8 to silence this)",
        bytes[first_bad]
    );
    (text, Some(warning))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latin1_byte_is_named_with_its_line() {
        let (text, warning) = decode(b"int x;\n// caf\xe9\nint y;\n", "k.cu");
        assert!(text.contains("int y;"));
        let warning = warning.expect("a warning");
        assert!(warning.contains("k.cu:2: byte 0xE9"), "{warning}");
    }

    #[test]
    fn utf8_reads_without_a_warning() {
        assert_eq!(
            decode("// é\n".as_bytes(), "k.cu"),
            ("// é\n".to_string(), None)
        );
    }
}
