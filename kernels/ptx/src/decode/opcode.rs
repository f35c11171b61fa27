//! Opcode words to [`Op`]s: `ld.global.nc.v4.f32` becomes `Op::Ld { space: Global, ty: F32, .. }`.
//!
//! One match arm per mnemonic; modifiers are read once here so that `exec` never looks at text.
//! Modifiers that do not change the result on one simulated device (cache hints, memory-order
//! and scope qualifiers, `.aligned`, `.uni`) are accepted and ignored. An unknown mnemonic or a
//! known one with a type or mode this simulator lacks becomes `Op::Unsupported`. Memory, control
//! flow and warp collectives (`ld`, `st`, `atom`, `red`, `cp.async` and its groups, `cvta`, `bra`,
//! `ret`/`exit`, `bar`, `shfl.sync`, `vote.sync`, `activemask`, and the fences and hints that change
//! nothing on one simulated device) are `decode_mem`'s; the families with operand types of their
//! own go to their decoders (`mma`, `wgmma`, `bulk`, `mbarrier`, `tensor_map`, `named`).

use crate::decode::copy::cp_async;
use crate::decode::ctx::{Ctx, DecodeError, Word, space_of};
pub use crate::decode::mods::fmods;
use crate::decode::mods::{bool_of, cmp_of};
use crate::ir::*;
use crate::parse::Operand;

pub fn decode_op(
    cx: &mut Ctx,
    opcode: &str,
    ops: &[Operand],
    line: u32,
) -> Result<Op, DecodeError> {
    let w = Word::new(opcode, ops, line);
    let (mn, mods, tys, ty) = (w.mn, &w.mods[..], &w.tys, w.ty);
    let has = |m: &str| w.has(m);
    let m = fmods(mods);
    let unsupported = |why: &str| w.unsupported(why);
    let need = |n: usize| w.need(n);
    if let Some(op) = crate::decode::wgmma::decode(cx, &w, ops)? {
        return Ok(op);
    }
    if let Some(op) = crate::decode::mma::decode(cx, &w, ops)? {
        return Ok(op);
    }
    if matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::B128)
        && !matches!(mn, "cvt" | "mov" | "ld" | "st")
    {
        return unsupported("half-precision and 128-bit arithmetic are not simulated");
    }
    let un = |cx: &mut Ctx, op: Un| -> Result<Op, DecodeError> {
        need(2)?;
        Ok(Op::Un {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
        })
    };
    let bin = |cx: &mut Ctx, op: Bin| -> Result<Op, DecodeError> {
        need(3)?;
        let bty = if matches!(op, Bin::Shl | Bin::Shr) {
            Ty::U32
        } else {
            ty
        };
        Ok(Op::Bin {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
            b: cx.src(&ops[2], bty, line)?,
        })
    };
    let tern = |cx: &mut Ctx, op: Tern| -> Result<Op, DecodeError> {
        need(4)?;
        let (bt, ct) = match op {
            Tern::Bfe => (Ty::U32, Ty::U32),
            Tern::MadWide => (ty, if ty.signed() { Ty::S64 } else { Ty::U64 }),
            _ => (ty, ty),
        };
        Ok(Op::Tern {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
            b: cx.src(&ops[2], bt, line)?,
            c: cx.src(&ops[3], ct, line)?,
        })
    };
    let pred_ty = ty == Ty::Pred;
    Ok(match mn {
        "mov" if pred_ty => {
            need(2)?;
            Op::PredOp {
                op: None,
                not: false,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: None,
            }
        }
        "mov" => {
            need(2)?;
            match (&ops[0], &ops[1]) {
                (Operand::Vec(parts), _) => {
                    let n = parts.len().max(1) as u32;
                    let mut ds = Vec::new();
                    for p in parts {
                        ds.push(if p == "_" {
                            None
                        } else {
                            Some(cx.dst(
                                &Operand::Word {
                                    w: p.clone(),
                                    neg: false,
                                    minus: false,
                                },
                                line,
                            )?)
                        });
                    }
                    Op::Unpack {
                        part_bits: ty.bits() / n,
                        ds,
                        a: cx.src(&ops[1], ty, line)?,
                    }
                }
                (_, Operand::Vec(parts)) => {
                    let n = parts.len().max(1) as u32;
                    let mut srcs = Vec::new();
                    for p in parts {
                        srcs.push(cx.src(
                            &Operand::Word {
                                w: p.clone(),
                                neg: false,
                                minus: false,
                            },
                            ty,
                            line,
                        )?);
                    }
                    Op::Pack {
                        part_bits: ty.bits() / n,
                        d: cx.dst(&ops[0], line)?,
                        parts: srcs,
                    }
                }
                _ => un(cx, Un::Mov)?,
            }
        }
        "and" | "or" | "xor" if pred_ty => {
            need(3)?;
            Op::PredOp {
                op: bool_of(mn),
                not: false,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: Some(cx.psrc(&ops[2], line)?),
            }
        }
        "not" if pred_ty => {
            need(2)?;
            Op::PredOp {
                op: None,
                not: true,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: None,
            }
        }
        "neg" => un(cx, Un::Neg)?,
        "abs" => un(cx, Un::Abs)?,
        "not" => un(cx, Un::Not)?,
        "cnot" => un(cx, Un::Cnot)?,
        "popc" => un(cx, Un::Popc)?,
        "clz" => un(cx, Un::Clz)?,
        "brev" => un(cx, Un::Brev)?,
        "bfind" => un(
            cx,
            if has("shiftamt") {
                Un::BfindShift
            } else {
                Un::Bfind
            },
        )?,
        "sqrt" => un(cx, Un::Sqrt)?,
        "rsqrt" => un(cx, Un::Rsqrt)?,
        "rcp" => un(cx, Un::Rcp)?,
        "ex2" => un(cx, Un::Ex2)?,
        "lg2" => un(cx, Un::Lg2)?,
        "sin" => un(cx, Un::Sin)?,
        "cos" => un(cx, Un::Cos)?,
        "tanh" => un(cx, Un::Tanh)?,
        "add" if has("sat") && !ty.float() => bin(cx, Bin::AddSat)?,
        "sub" if has("sat") && !ty.float() => bin(cx, Bin::SubSat)?,
        "add" => bin(cx, Bin::Add)?,
        "sub" => bin(cx, Bin::Sub)?,
        "mul" if has("hi") => bin(cx, Bin::MulHi)?,
        "mul" if has("wide") => bin(cx, Bin::MulWide)?,
        "mul" => bin(cx, Bin::MulLo)?,
        "div" => bin(cx, Bin::Div)?,
        "rem" => bin(cx, Bin::Rem)?,
        "min" => bin(cx, Bin::Min)?,
        "max" => bin(cx, Bin::Max)?,
        "and" => bin(cx, Bin::And)?,
        "or" => bin(cx, Bin::Or)?,
        "xor" => bin(cx, Bin::Xor)?,
        "shl" => bin(cx, Bin::Shl)?,
        "shr" => bin(cx, Bin::Shr)?,
        "copysign" => bin(cx, Bin::Copysign)?,
        "mad" if ty.float() => tern(cx, Tern::Fma)?,
        "mad" if has("hi") => tern(cx, Tern::MadHi)?,
        "mad" if has("wide") => tern(cx, Tern::MadWide)?,
        "mad" => tern(cx, Tern::MadLo)?,
        "fma" => tern(cx, Tern::Fma)?,
        "bfe" => tern(cx, Tern::Bfe)?,
        "sad" => tern(cx, Tern::Sad)?,
        "dp4a" | "dp2a" => {
            need(4)?;
            let signed = |i: usize| w.tys.get(i).is_some_and(|t| t.signed());
            let (a_signed, b_signed) = (signed(0), signed(1));
            let op = if mn == "dp4a" {
                Tern::Dp4a { a_signed, b_signed }
            } else {
                Tern::Dp2a {
                    hi: has("hi"),
                    a_signed,
                    b_signed,
                }
            };
            let ty = if a_signed || b_signed {
                Ty::S32
            } else {
                Ty::U32
            };
            Op::Tern {
                op,
                ty,
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::B32, line)?,
                b: cx.src(&ops[2], Ty::B32, line)?,
                c: cx.src(&ops[3], ty, line)?,
            }
        }
        "fns" => {
            need(4)?;
            Op::Tern {
                op: Tern::Fns,
                ty: Ty::B32,
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::B32, line)?,
                b: cx.src(&ops[2], Ty::U32, line)?,
                c: cx.src(&ops[3], Ty::S32, line)?,
            }
        }
        "shf" => {
            let op = Tern::Shf {
                left: has("l"),
                clamp: has("clamp"),
            };
            tern(cx, op)?
        }
        "prmt" if mods.len() == 1 => tern(cx, Tern::Prmt)?,
        "bfi" => {
            need(5)?;
            Op::Bfi {
                ty,
                d: cx.dst(&ops[0], line)?,
                f: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                pos: cx.src(&ops[3], Ty::U32, line)?,
                len: cx.src(&ops[4], Ty::U32, line)?,
            }
        }
        "setp" => {
            need(3)?;
            let Some(cmp) = mods.first().and_then(|c| cmp_of(c)) else {
                return unsupported("comparison");
            };
            let (p, q) = match &ops[0] {
                Operand::Pair(a, b) => (cx.pname(a, line)?, Some(cx.pname(b, line)?)),
                o => (cx.pdst(o, line)?, None),
            };
            let comb = match mods.get(1).and_then(|b| bool_of(b)) {
                Some(b) => {
                    need(4)?;
                    Some((b, cx.psrc(&ops[3], line)?))
                }
                None => None,
            };
            Op::Setp {
                cmp,
                ty,
                ftz: m.ftz,
                p,
                q,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                comb,
            }
        }
        "set" if tys.len() == 2 && mods.len() == 3 => {
            need(3)?;
            let Some(cmp) = cmp_of(mods[0]) else {
                return unsupported("comparison");
            };
            Op::Set {
                cmp,
                ty,
                dty: tys[0],
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
            }
        }
        "selp" => {
            need(4)?;
            Op::Selp {
                ty,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                p: cx.psrc(&ops[3], line)?,
            }
        }
        "cvt" if tys.len() == 2 && !has("pack") && !has("relu") => {
            need(2)?;
            Op::Cvt {
                dty: tys[0],
                sty: tys[1],
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], tys[1], line)?,
            }
        }
        _ => return decode_mem(cx, &w, ops),
    })
}

/// A `.param` access through a call's argument or return value reads or writes local memory,
/// where the decoder laid those variables out.
fn call_space(cx: &Ctx, space: Space, addr: &Operand) -> Space {
    match addr {
        Operand::Addr { base: Some(b), .. }
            if space == Space::Param && cx.call_params.contains(b) =>
        {
            Space::Local
        }
        _ => space,
    }
}

/// `call[.uni] [(ret),] func, (args...);`: `vprintf` (what `printf` compiles to), `__assertfail`
/// (a failed `assert`) and the module's own device functions (see `call`); any other function is
/// not simulated.
fn call(cx: &Ctx, ops: &[Operand], line: u32) -> Result<Op, DecodeError> {
    let (ret, rest) = match ops.first() {
        Some(Operand::Vec(r)) => (r.first(), &ops[1..]),
        _ => (None, ops),
    };
    let func = match rest.first() {
        Some(Operand::Word { w, .. }) => w.as_str(),
        _ => return cx.bad(line, "`call` needs a function name"),
    };
    let args = match rest.get(1) {
        Some(Operand::Vec(a)) => a.as_slice(),
        _ => &[],
    };
    let local = |name: &String| -> Result<u64, DecodeError> {
        match cx.symbols.get(name.as_str()) {
            Some(&at) if cx.call_params.contains(name) => Ok(at),
            _ => cx.bad(line, format!("`{name}` is not a declared call parameter")),
        }
    };
    Ok(match (func, args) {
        ("vprintf", [fmt, a]) => Op::Printf {
            fmt: local(fmt)?,
            args: local(a)?,
            ret: ret.map(local).transpose()?,
        },
        ("__assertfail", [m, f, l, func, _]) => Op::AssertFail {
            args: [local(m)?, local(f)?, local(l)?, local(func)?],
        },
        _ => match cx.funcs.get(func) {
            Some(&index) => Op::Call {
                func: index,
                args: args.iter().map(local).collect::<Result<_, _>>()?,
                ret: ret.map(local).transpose()?,
            },
            None => Op::Unsupported {
                why: format!(
                    "`call` to `{func}` (it runs `printf`, `assert` and the kernel's own device functions, not functions defined elsewhere)"
                ),
            },
        },
    })
}

fn vec_names(o: &Operand) -> Vec<String> {
    match o {
        Operand::Vec(v) => v.clone(),
        Operand::Word { w, .. } => vec![w.clone()],
        _ => vec![],
    }
}

/// The register named `w` (one side of a `d|p` pair) as an operand.
fn named(w: &str) -> Operand {
    Operand::Word {
        w: w.to_string(),
        neg: false,
        minus: false,
    }
}

/// A destination `d` or `d|p` (`p` may be `_`): the register and the optional predicate.
fn dst_pred(cx: &mut Ctx, o: &Operand, line: u32) -> Result<(Slot, Option<PSlot>), DecodeError> {
    Ok(match o {
        Operand::Pair(a, b) => (
            cx.dst(&named(a), line)?,
            if b == "_" {
                None
            } else {
                Some(cx.pname(b, line)?)
            },
        ),
        o => (cx.dst(o, line)?, None),
    })
}

pub fn decode_mem(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let (mn, mods, ty, line) = (w.mn, &w.mods[..], w.ty, w.line);
    let has = |m: &str| w.has(m);
    let unsupported = |why: &str| w.unsupported(why);
    let need = |n: usize| w.need(n);
    Ok(match mn {
        "ld" | "ldu" => {
            need(2)?;
            let space = call_space(cx, space_of(mods), &ops[1]);
            let mut ds = Vec::new();
            for n in vec_names(&ops[0]) {
                ds.push(cx.dst(
                    &Operand::Word {
                        w: n,
                        neg: false,
                        minus: false,
                    },
                    line,
                )?);
            }
            Op::Ld {
                space,
                ty,
                ds,
                addr: cx.addr(&ops[1], line)?,
                unused: 0,
            }
        }
        "st" => {
            need(2)?;
            let space = call_space(cx, space_of(mods), &ops[0]);
            let mut srcs = Vec::new();
            for n in vec_names(&ops[1]) {
                srcs.push(cx.src(
                    &Operand::Word {
                        w: n,
                        neg: false,
                        minus: false,
                    },
                    ty,
                    line,
                )?);
            }
            Op::St {
                space,
                ty,
                srcs,
                addr: cx.addr(&ops[0], line)?,
            }
        }
        "atom" | "red" => {
            let op = match mods.iter().find_map(|m| atom_op(m)) {
                Some(op) => op,
                None => return unsupported("atomic operation"),
            };
            let (d, rest) = if mn == "atom" {
                need(3)?;
                (Some(cx.dst(&ops[0], line)?), &ops[1..])
            } else {
                need(2)?;
                (None, ops)
            };
            let c = match rest.get(2) {
                Some(o) => Some(cx.src(o, ty, line)?),
                None => None,
            };
            Op::Atom {
                space: space_of(mods),
                op,
                ty,
                d,
                addr: cx.addr(&rest[0], line)?,
                b: cx.src(&rest[1], ty, line)?,
                c,
            }
        }
        "call" => call(cx, ops, line)?,
        "cp" if has("async") => cp_async(cx, w, ops)?,
        "tensormap" => crate::decode::tensor_map::decode(cx, w, ops)?,
        "cvta" => {
            need(2)?;
            Op::Cvta {
                to: has("to"),
                space: space_of(mods),
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::U64, line)?,
            }
        }
        "bra" | "brx" if mn == "bra" => {
            need(1)?;
            let Operand::Word { w, .. } = &ops[0] else {
                return cx.bad(line, "bra needs a label");
            };
            Op::Bra {
                target: cx.label(w, line)?,
            }
        }
        "ret" if cx.in_func => Op::Ret,
        "ret" | "exit" => Op::Exit,
        "trap" => Op::Trap,
        "bar" | "barrier" if has("warp") => Op::BarWarp {
            mask: match ops.first() {
                Some(o) => cx.src(o, Ty::B32, line)?,
                None => Src::Imm(u64::from(u32::MAX)),
            },
        },
        "bar" | "barrier" => crate::decode::named::decode(cx, w, ops)?,
        "mbarrier" => crate::decode::mbarrier::decode(cx, w, ops)?,
        "setmaxnreg" => crate::decode::named::decode_setmaxnreg(cx, w, ops)?,
        "shfl" if has("sync") => {
            need(5)?;
            let mode = match mods.get(1).copied() {
                Some("up") => ShflMode::Up,
                Some("down") => ShflMode::Down,
                Some("bfly") => ShflMode::Bfly,
                Some("idx") => ShflMode::Idx,
                _ => return unsupported("shuffle mode"),
            };
            let (d, p) = dst_pred(cx, &ops[0], line)?;
            Op::Shfl {
                mode,
                d,
                p,
                a: cx.src(&ops[1], Ty::B32, line)?,
                b: cx.src(&ops[2], Ty::U32, line)?,
                c: cx.src(&ops[3], Ty::U32, line)?,
                mask: cx.src(&ops[4], Ty::B32, line)?,
            }
        }
        "vote" if has("sync") => {
            need(3)?;
            let mode = match mods.get(1).copied() {
                Some("all") => VoteMode::All,
                Some("any") => VoteMode::Any,
                Some("uni") => VoteMode::Uni,
                Some("ballot") => VoteMode::Ballot,
                _ => return unsupported("vote mode"),
            };
            let (d, dp) = if mode == VoteMode::Ballot {
                (Some(cx.dst(&ops[0], line)?), None)
            } else {
                (None, Some(cx.pdst(&ops[0], line)?))
            };
            Op::Vote {
                mode,
                d,
                dp,
                a: cx.psrc(&ops[1], line)?,
                mask: cx.src(&ops[2], Ty::B32, line)?,
            }
        }
        "elect" if has("sync") => {
            // `elect.sync d|p, membermask`, either side `_`: a vote every lane takes part in.
            need(2)?;
            let Operand::Pair(a, b) = &ops[0] else {
                return cx.bad(line, "`elect.sync` writes `d|p` (either may be `_`)");
            };
            Op::Vote {
                mode: VoteMode::Elect,
                d: (a != "_").then(|| cx.dst(&named(a), line)).transpose()?,
                dp: (b != "_").then(|| cx.pname(b, line)).transpose()?,
                a: PSrc::Const(true),
                mask: cx.src(&ops[1], Ty::B32, line)?,
            }
        }
        "redux" if has("sync") => {
            need(3)?;
            if ty.bits() != 32 || ty.float() {
                return unsupported("of `redux.sync` it runs the 32-bit integer forms");
            }
            let op = match mods.get(1).copied() {
                Some("add") => ReduxOp::Add,
                Some("min") => ReduxOp::Min,
                Some("max") => ReduxOp::Max,
                Some("and") => ReduxOp::And,
                Some("or") => ReduxOp::Or,
                Some("xor") => ReduxOp::Xor,
                _ => return unsupported("redux mode"),
            };
            Op::Redux {
                op,
                signed: ty.signed(),
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], ty, line)?,
                mask: cx.src(&ops[2], Ty::B32, line)?,
            }
        }
        "match" if has("sync") => {
            need(3)?;
            let all = match mods.first().copied() {
                Some("any") => false,
                Some("all") => true,
                _ => return unsupported("match mode"),
            };
            let (d, p) = dst_pred(cx, &ops[0], line)?;
            Op::Match {
                all,
                wide: ty.bits() == 64,
                d,
                p,
                a: cx.src(&ops[1], ty, line)?,
                mask: cx.src(&ops[2], Ty::B32, line)?,
            }
        }
        "activemask" => {
            need(1)?;
            Op::Activemask {
                d: cx.dst(&ops[0], line)?,
            }
        }
        "fence" if has("tensormap::generic") && has("acquire") => {
            crate::decode::tensor_map::acquire(cx, w, ops)?
        }
        "membar" | "fence" | "prefetch" | "prefetchu" | "nanosleep" | "pmevent" | "discard"
        | "griddepcontrol" | "brkpt" => Op::Nop,
        _ => return unsupported("not simulated"),
    })
}

fn atom_op(m: &str) -> Option<AtomOp> {
    Some(match m {
        "add" => AtomOp::Add,
        "min" => AtomOp::Min,
        "max" => AtomOp::Max,
        "exch" => AtomOp::Exch,
        "cas" => AtomOp::Cas,
        "and" => AtomOp::And,
        "or" => AtomOp::Or,
        "xor" => AtomOp::Xor,
        "inc" => AtomOp::Inc,
        "dec" => AtomOp::Dec,
        _ => return None,
    })
}

/// What a `.pragma` just before an instruction changes in it: `used_bytes_mask M` (decimal or
/// `0x` hex) before a load marks the elements none of whose bytes are used as no access at all.
/// NVRTC widens a masked or partly used load to a vector and says so this way; on the GPU the
/// unused lanes are never read, so checking them would be a false alarm.
pub fn apply_pragma(op: &mut Op, pragma: Option<&str>) {
    let mask = pragma
        .and_then(|t| t.trim().strip_prefix("used_bytes_mask"))
        .and_then(|m| crate::parse::parse_int(m.trim()));
    if let (Some(mask), Op::Ld { ty, ds, unused, .. }) = (mask, op) {
        *unused = unused_elements(mask as u64, ds.len(), ty.bytes());
    }
}

/// Bit `i` set for each of `n` elements of `bytes` bytes none of whose bytes `mask` marks used.
pub fn unused_elements(mask: u64, n: usize, bytes: u32) -> u32 {
    let one = (1u64 << bytes.min(63)) - 1;
    (0..n.min(32) as u32)
        .filter(|&i| i * bytes >= 64 || (mask >> (i * bytes)) & one == 0)
        .fold(0, |acc, i| acc | 1 << i)
}
