//! Parse NVRTC's PTX text into a light syntax tree: module variables and kernel bodies.
//!
//! The lexer turns text into words (`ld.global.f32`, `%r1`, `%tid.x`, `0f3F800000`, `$L__BB0_4`)
//! and punctuation, each tagged with its source line. The parser knows PTX's statement shapes and
//! nothing of instruction semantics: an instruction is its opcode word, an optional guard and a
//! list of [`Operand`]s; `decode` gives them meaning. Directives that end at the end of a line
//! (`.version`, `.loc`, `.file`, `.maxntid`, ...) are read up to the line's end. Nothing here
//! panics: malformed input is an `Err` with the PTX line. A body (a kernel's or a device
//! function's, after its `.func (ret) name(params)` header) is labels, `.reg`/`.local`/`.shared`
//! declarations, `.loc` lines, inline-asm `{ }` scopes and instructions with their guard and
//! operands (registers, immediates, `[base+off]` addresses, `{a, b}` vectors, `%r|%p` pairs).

mod inline;
mod lex;

use lex::{Tok, Token, lex};
use std::fmt;

/// A parse failure: what was wrong and on which PTX line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PTX line {}: {}", self.line, self.message)
    }
}

pub type PResult<T> = Result<T, ParseError>;

/// One instruction operand, before registers are resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special register, symbol, label or immediate word; `neg` for a leading `!`
    /// and `minus` for a leading `-`.
    Word { w: String, neg: bool, minus: bool },
    /// `[base+off]`: base is a register or symbol (or absent for an absolute address).
    Addr { base: Option<String>, off: i64 },
    /// `{a, b, c, d}`.
    Vec(Vec<String>),
    /// `%r1|%p1`.
    Pair(String, String),
    /// `[tensorMap, {c0, c1, ...}]`, the tensor copies' operand: the map's address and the
    /// coordinates of the box's first element.
    Tensor {
        base: Option<String>,
        off: i64,
        coords: Vec<String>,
    },
}

/// One statement of a kernel body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `.reg .f32 %f<30>;` or `.reg .b32 a, b;` (names expanded).
    Reg {
        ty: String,
        names: Vec<String>,
    },
    /// A variable in a state space declared inside the body (`.shared`, `.local`).
    Var(Var),
    Label(String),
    /// `.loc file line col{, function_name f, inlined_at file2 line2 col2}`: `call` is the line
    /// of the call a function was inlined at (0: none), `call_file` its file, `via` the header
    /// calls between, outermost first (`inline`: a header line is placed at the learner's call).
    Loc {
        file: u32,
        line: u32,
        call: u32,
        call_file: u32,
        via: Vec<(u32, u32)>,
    },
    Instr {
        guard: Option<(String, bool)>,
        opcode: String,
        operands: Vec<Operand>,
        line: u32,
    },
    /// `.pragma "text";`: a hint to the next instruction (`used_bytes_mask 4095` says which bytes
    /// of the next load are used).
    Pragma(String),
    /// `{` and `}` of an inline-asm scope.
    Open,
    Close,
}

/// A declared variable: `.shared .align 4 .b8 tile[1024];`, with its initializer if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    pub space: String,
    pub align: u32,
    pub ty: String,
    pub name: String,
    /// Elements; `None` for `name[]` (an unsized `.extern` array).
    pub count: Option<u64>,
    pub extern_: bool,
    pub init: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: String,
    pub name: String,
    pub align: u32,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}

/// A `.func` with a body: a device function NVRTC did not inline (`__noinline__`, recursion).
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Its name, parameters and body, as an entry's.
    pub def: Entry,
    /// The return value's `.param`, if it returns one.
    pub ret: Option<Param>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub vars: Vec<Var>,
    pub entries: Vec<Entry>,
    /// Device functions with bodies (declarations without one, such as `vprintf`, are skipped).
    pub funcs: Vec<Func>,
    /// `.file` index to path.
    pub files: Vec<(u32, String)>,
}

pub struct Parser {
    pub toks: Vec<Token>,
    pub pos: usize,
}

pub const LINE_DIRECTIVES: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".file",
    ".loc",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnreg",
    ".maxnctapersm",
    ".noreturn",
    ".explicitcluster",
    ".reqnctapercluster",
    ".maxclusterrank",
];

impl Parser {
    pub fn err<T>(&self, message: impl Into<String>) -> PResult<T> {
        let line = self
            .toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(0, |t| t.line);
        Err(ParseError {
            line,
            message: message.into(),
        })
    }
    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    pub fn line(&self) -> u32 {
        self.toks.get(self.pos).map_or(0, |t| t.line)
    }
    pub(crate) fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => self.err("unexpected end of PTX"),
        }
    }
    pub fn word(&mut self) -> PResult<String> {
        match self.next()? {
            Tok::Word(w) => Ok(w),
            t => self.err(format!("expected a word, found {t:?}")),
        }
    }
    pub fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    pub fn eat(&mut self, c: char) -> bool {
        let hit = self.is_punct(c);
        self.pos += usize::from(hit);
        hit
    }
    pub fn expect(&mut self, c: char) -> PResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.err(format!("expected `{c}`"))
        }
    }
    /// The rest of the current source line, as words.
    pub fn rest_of_line(&mut self, line: u32) -> Vec<String> {
        let mut words = Vec::new();
        while let Some(t) = self.toks.get(self.pos).filter(|t| t.line == line) {
            if let Tok::Word(w) | Tok::Str(w) = &t.tok {
                words.push(w.clone());
            }
            self.pos += 1;
        }
        words
    }
    pub fn skip_braces(&mut self) -> PResult<()> {
        self.expect('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }
    pub fn number(&mut self) -> PResult<u64> {
        let w = self.word()?;
        parse_int(&w)
            .map(|v| v as u64)
            .ok_or(())
            .or_else(|_| self.err(format!("bad number `{w}`")))
    }

    pub fn module(&mut self) -> PResult<Module> {
        let mut m = Module::default();
        while let Some(t) = self.peek().cloned() {
            let line = self.line();
            match t {
                Tok::Word(w) if w == ".file" => {
                    self.pos += 1;
                    let rest = self.rest_of_line(line);
                    if let (Some(i), Some(p)) =
                        (rest.first().and_then(|s| s.parse().ok()), rest.get(1))
                    {
                        m.files.push((i, p.clone()));
                    }
                }
                Tok::Word(w) if LINE_DIRECTIVES.contains(&w.as_str()) => {
                    self.pos += 1;
                    self.rest_of_line(line);
                }
                Tok::Word(w) if w == ".section" => {
                    self.pos += 1;
                    self.word()?;
                    self.skip_braces()?;
                }
                Tok::Word(w)
                    if matches!(w.as_str(), ".visible" | ".extern" | ".weak" | ".common") =>
                {
                    self.pos += 1;
                    if let Some(Tok::Word(n)) = self.peek()
                        && matches!(n.as_str(), ".global" | ".const" | ".shared")
                        && w == ".extern"
                    {
                        let mut v = self.var()?;
                        v.extern_ = true;
                        m.vars.push(v);
                    }
                }
                Tok::Word(w) if w == ".entry" => {
                    self.pos += 1;
                    m.entries.push(self.entry()?);
                }
                Tok::Word(w) if w == ".func" => {
                    self.pos += 1;
                    if let Some(f) = self.func()? {
                        m.funcs.push(f);
                    }
                }
                Tok::Word(w) if matches!(w.as_str(), ".global" | ".const" | ".shared") => {
                    m.vars.push(self.var()?);
                }
                _ => return self.err(format!("unexpected {t:?} at module level")),
            }
        }
        Ok(m)
    }

    /// `[.align N] .type name[count]` after the state space word.
    pub fn decl(&mut self, space: String) -> PResult<Var> {
        let mut v = Var {
            space,
            align: 0,
            ty: String::new(),
            name: String::new(),
            count: Some(1),
            extern_: false,
            init: vec![],
        };
        loop {
            let w = self.word()?;
            match w.as_str() {
                ".align" => v.align = self.number()? as u32,
                ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                _ if w.starts_with('.') => v.ty = w,
                _ => {
                    v.name = w;
                    break;
                }
            }
        }
        if self.eat('[') {
            v.count = if self.eat(']') {
                None
            } else {
                let n = self.number()?;
                self.expect(']')?;
                Some(n)
            };
        }
        Ok(v)
    }

    /// `.space [.align N] .type name[count] [= init];`
    pub fn var(&mut self) -> PResult<Var> {
        let space = self.word()?;
        let mut v = self.decl(space)?;
        if self.eat('=') {
            let braced = self.eat('{');
            let mut depth = 0;
            while !self.is_punct(';') {
                match self.next()? {
                    Tok::Word(w) => v.init.push(w),
                    Tok::Punct('-') => {
                        let w = self.word()?;
                        v.init.push(format!("-{w}"));
                    }
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') if depth > 0 => depth -= 1,
                    Tok::Punct('}') if braced => {}
                    _ => {}
                }
            }
        }
        self.expect(';')?;
        Ok(v)
    }

    pub fn entry(&mut self) -> PResult<Entry> {
        let name = self.word()?;
        let params = self.params()?;
        while !self.is_punct('{') {
            if self.is_punct(';') {
                return self.err(format!("`{name}` is declared but has no body"));
            }
            self.next()?;
        }
        self.expect('{')?;
        let body = self.body()?;
        Ok(Entry { name, params, body })
    }
}

/// Parses a PTX module.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    Parser {
        toks: lex(src),
        pos: 0,
    }
    .module()
}

/// Parses an integer word: decimal, `0x` hex, `0` octal-free, with an optional `U` suffix.
pub fn parse_int(w: &str) -> Option<i64> {
    let w = w.trim_end_matches('U');
    if let Some(h) = w.strip_prefix("0x").or(w.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok().map(|v| v as i64)
    } else {
        w.parse::<i64>()
            .ok()
            .or_else(|| w.parse::<u64>().ok().map(|v| v as i64))
    }
}

impl Parser {
    /// `(.param ...)` lists of an entry or a function.
    pub fn params(&mut self) -> PResult<Vec<Param>> {
        let mut params = Vec::new();
        if self.eat('(') {
            while !self.eat(')') {
                let space = self.word()?;
                if space != ".param" {
                    return self.err(format!("expected `.param`, found `{space}`"));
                }
                let v = self.decl(space)?;
                params.push(Param {
                    ty: v.ty,
                    name: v.name,
                    align: v.align,
                    count: v.count.unwrap_or(1),
                });
                self.eat(',');
            }
        }
        Ok(params)
    }

    /// `.func [(ret)] name(params) [directives] { body }` after `.func`; `None` for a
    /// declaration without a body.
    pub fn func(&mut self) -> PResult<Option<Func>> {
        let ret = if self.is_punct('(') {
            self.params()?.into_iter().next()
        } else {
            None
        };
        let name = self.word()?;
        let params = self.params()?;
        while !self.is_punct('{') {
            if self.eat(';') {
                return Ok(None);
            }
            self.next()?;
        }
        self.expect('{')?;
        let body = self.body()?;
        Ok(Some(Func {
            def: Entry { name, params, body },
            ret,
        }))
    }

    pub fn body(&mut self) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        let mut depth = 0u32;
        let mut chains = inline::Chains::default();
        loop {
            let line = self.line();
            match self.next()? {
                Tok::Punct('{') => {
                    depth += 1;
                    out.push(Stmt::Open);
                }
                Tok::Punct('}') if depth == 0 => return Ok(out),
                Tok::Punct('}') => {
                    depth -= 1;
                    out.push(Stmt::Close);
                }
                Tok::Punct('@') => {
                    let neg = self.eat('!');
                    let p = self.word()?;
                    let opcode = self.word()?;
                    out.push(self.instr(Some((p, neg)), opcode, line)?);
                }
                Tok::Word(w) if w == ".reg" => {
                    let ty = self.word()?;
                    let mut names = Vec::new();
                    loop {
                        let n = self.word()?;
                        if self.eat('<') {
                            let count = self.number()?;
                            self.expect('>')?;
                            if count > 1 << 20 {
                                return self.err("too many registers");
                            }
                            names.extend((0..count).map(|i| format!("{n}{i}")));
                        } else {
                            names.push(n);
                        }
                        if !self.eat(',') {
                            break;
                        }
                    }
                    self.expect(';')?;
                    out.push(Stmt::Reg { ty, names });
                }
                Tok::Word(w)
                    if matches!(
                        w.as_str(),
                        ".shared" | ".local" | ".const" | ".global" | ".param"
                    ) =>
                {
                    self.pos -= 1;
                    out.push(Stmt::Var(self.var()?));
                }
                Tok::Word(w) if w == ".loc" => {
                    let rest = self.rest_of_line(line);
                    let word = |k: usize| rest.get(k).and_then(|s| s.parse::<u32>().ok());
                    let (file, l) = (word(0).unwrap_or(0), word(1).unwrap_or(0));
                    let at = rest.iter().position(|s| s == "inlined_at");
                    let num = |k: usize| at.and_then(|a| word(a + k));
                    let call = match (num(1), num(2)) {
                        (Some(f), Some(c)) => Some((f, c, num(3).unwrap_or(0))),
                        _ => None,
                    };
                    let pos = (file, l, word(2).unwrap_or(0));
                    let called = chains.loc(pos, call);
                    out.push(Stmt::Loc {
                        file,
                        line: l,
                        call: called.line,
                        call_file: called.file,
                        via: called.via,
                    });
                }
                Tok::Word(w) if w == ".pragma" => {
                    let mut text = String::new();
                    while !self.eat(';') {
                        if let Tok::Str(s) = self.next()? {
                            text.push_str(&s);
                        }
                    }
                    out.push(Stmt::Pragma(text));
                }
                Tok::Word(w) if LINE_DIRECTIVES.contains(&w.as_str()) => {
                    self.rest_of_line(line);
                }
                Tok::Word(w) if self.is_punct(':') => {
                    self.pos += 1;
                    out.push(Stmt::Label(w));
                }
                Tok::Word(w) => out.push(self.instr(None, w, line)?),
                t => return self.err(format!("unexpected {t:?} in a kernel body")),
            }
        }
    }

    pub fn instr(
        &mut self,
        guard: Option<(String, bool)>,
        opcode: String,
        line: u32,
    ) -> PResult<Stmt> {
        let mut operands = Vec::new();
        while !self.eat(';') {
            operands.push(self.operand()?);
            if !self.eat(',') && !self.is_punct(';') {
                return self.err(format!(
                    "expected `,` or `;` after an operand of `{opcode}`"
                ));
            }
        }
        Ok(Stmt::Instr {
            guard,
            opcode,
            operands,
            line,
        })
    }

    pub fn operand(&mut self) -> PResult<Operand> {
        match self.next()? {
            Tok::Punct('[') => {
                let mut base = None;
                let mut off = 0i64;
                let mut sign = 1i64;
                while !self.eat(']') {
                    match self.next()? {
                        Tok::Punct('+') => {}
                        Tok::Punct('-') => sign = -sign,
                        Tok::Word(w) => match parse_int(&w) {
                            Some(v) => {
                                off = off.wrapping_add(sign.wrapping_mul(v));
                                sign = 1;
                            }
                            None if base.is_none() => base = Some(w),
                            None => return self.err(format!("bad address part `{w}`")),
                        },
                        Tok::Punct(',') => {
                            // `[tensorMap, {coordinates}]`, the tensor copies' operand.
                            let coords =
                                match self.operand()? {
                                    Operand::Vec(v) => v,
                                    o => return self.err(format!(
                                        "expected `{{coordinates}}` after a tensor map, found {o:?}"
                                    )),
                                };
                            if !self.eat(']') {
                                return self.err("expected `]` after a tensor copy's coordinates");
                            }
                            return Ok(Operand::Tensor { base, off, coords });
                        }
                        t => return self.err(format!("unexpected {t:?} in an address")),
                    }
                }
                Ok(Operand::Addr { base, off })
            }
            Tok::Punct(open @ ('{' | '(')) => {
                let close = if open == '{' { '}' } else { ')' };
                let mut items = Vec::new();
                while !self.eat(close) {
                    items.push(self.word()?);
                    self.eat(',');
                }
                Ok(Operand::Vec(items))
            }
            Tok::Punct('!') => Ok(Operand::Word {
                w: self.word()?,
                neg: true,
                minus: false,
            }),
            Tok::Punct('-') => Ok(Operand::Word {
                w: self.word()?,
                neg: false,
                minus: true,
            }),
            Tok::Word(w) => {
                if self.eat('|') {
                    Ok(Operand::Pair(w, self.word()?))
                } else {
                    Ok(Operand::Word {
                        w,
                        neg: false,
                        minus: false,
                    })
                }
            }
            t => self.err(format!("unexpected {t:?} as an operand")),
        }
    }
}
