//! Device functions' headers (`.func (ret) name(params)`) and kernel and function bodies: the
//! statements between the braces. Labels, `.reg`/`.local`/`.shared`
//! declarations, `.loc` lines, inline-asm `{ }` scopes and instructions with their guard and
//! operands (registers, immediates, `[base+off]` addresses, `{a, b}` vectors, `%r|%p` pairs).
//! A second `impl` block of the parser in `parse`.

use crate::lex::Tok;
use crate::parse::{
    Entry, Func, LINE_DIRECTIVES, Operand, PResult, Param, Parser, Stmt, parse_int,
};

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
        let mut chains = crate::inline::Chains::default();
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
