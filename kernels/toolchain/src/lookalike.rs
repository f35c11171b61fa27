//! Characters outside ASCII that look like C++ punctuation. Text pasted from a web page or a
//! book often carries them (U+2212 MINUS SIGN for `-`, curly quotes, a no-break space), and NVRTC
//! only says `unrecognized token` with a caret under bytes the terminal may not show. [`explain`]
//! names each such character on the line, with its code point and what to type instead.

/// (character, Unicode name, the ASCII a learner meant)
const KNOWN: &[(char, &str, &str)] = &[
    ('\u{2212}', "MINUS SIGN", "-"),
    ('\u{2010}', "HYPHEN", "-"),
    ('\u{2013}', "EN DASH", "-"),
    ('\u{2014}', "EM DASH", "-"),
    ('\u{00D7}', "MULTIPLICATION SIGN", "*"),
    ('\u{2217}', "ASTERISK OPERATOR", "*"),
    ('\u{2215}', "DIVISION SLASH", "/"),
    ('\u{2018}', "LEFT SINGLE QUOTATION MARK", "'"),
    ('\u{2019}', "RIGHT SINGLE QUOTATION MARK", "'"),
    ('\u{201C}', "LEFT DOUBLE QUOTATION MARK", "\""),
    ('\u{201D}', "RIGHT DOUBLE QUOTATION MARK", "\""),
    ('\u{2264}', "LESS-THAN OR EQUAL TO", "<="),
    ('\u{2265}', "GREATER-THAN OR EQUAL TO", ">="),
    ('\u{2260}', "NOT EQUAL TO", "!="),
    ('\u{00A0}', "NO-BREAK SPACE", "a space"),
    ('\u{200B}', "ZERO WIDTH SPACE", "nothing"),
    ('\u{FF1B}', "FULLWIDTH SEMICOLON", ";"),
];

/// A sentence naming the non-ASCII characters on line `line` (1-based) of `code`, or `None`
/// when the line is plain ASCII.
pub fn explain(code: &str, line: u32) -> Option<String> {
    let text = code.lines().nth(line.checked_sub(1)? as usize)?;
    let mut seen: Vec<char> = text.chars().filter(|c| !c.is_ascii()).collect();
    seen.dedup();
    if seen.is_empty() {
        return None;
    }
    let named: Vec<String> = seen
        .iter()
        .map(|&c| match KNOWN.iter().find(|k| k.0 == c) {
            Some((_, name, ascii)) => {
                format!("U+{:04X} {name} `{c}` (type {ascii} instead)", c as u32)
            }
            None => format!("U+{:04X} `{c}`", c as u32),
        })
        .collect();
    Some(format!(
        "line {line} holds {} outside ASCII, which C++ does not accept there: {}",
        if named.len() == 1 {
            "a character"
        } else {
            "characters"
        },
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_minus_sign_is_named() {
        let code = "int i = 0;\nout[i] = a[i] \u{2212} b[0];\n";
        let said = explain(code, 2).unwrap();
        assert!(said.contains("U+2212 MINUS SIGN"), "{said}");
        assert!(said.contains("type - instead"), "{said}");
        assert_eq!(explain(code, 1), None);
        assert_eq!(explain(code, 9), None);
    }
}
