//! The PTX lexer: text to words (`ld.global.f32`, `%r1`, `%tid.x`, `0f3F800000`,
//! `$L__BB0_4`), strings and punctuation, each tagged with its source line. Comments are
//! dropped. It never fails: whatever it does not recognize becomes punctuation, which the
//! parser then rejects with the line.

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Word(String),
    Str(String),
    Punct(char),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
}

pub fn lex(src: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line) = (0usize, 1u32);
    let is_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                line += u32::from(chars[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != '"' && chars[i] != '\n' {
                i += 1;
            }
            let s: String = chars[start..i.min(chars.len())].iter().collect();
            out.push(Token {
                tok: Tok::Str(s),
                line,
            });
            i += 1;
        } else if is_word(c) {
            let start = i;
            while i < chars.len()
                && (is_word(chars[i])
                    || (chars[i] == ':' && chars.get(i + 1) == Some(&':'))
                    || (chars[i] == ':' && i > 0 && chars[i - 1] == ':'))
            {
                i += 1;
            }
            let w: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Word(w),
                line,
            });
        } else {
            out.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        }
    }
    out
}
