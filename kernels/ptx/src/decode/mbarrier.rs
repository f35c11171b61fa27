//! Decoding the `mbarrier` family (`mbarrier.init/arrive/test_wait/try_wait/inval/pending_count`
//! and `cp.async.mbarrier.arrive`, with the transaction counts of `arrive.expect_tx`,
//! `expect_tx` and `complete_tx`) into one [`MbarOp`], once; `mbarrier` runs them.
//! `arrive_drop` and `.shared::cluster` decode to `unsupported_instruction`.

use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;
use crate::parse::Operand;

fn space_of(w: &Word<'_>) -> Result<Space, &'static str> {
    if w.has("shared::cluster") {
        Err("clusters are not simulated")
    } else if w.has("shared") || w.has("shared::cta") {
        Ok(Space::Shared)
    } else {
        Ok(Space::Generic)
    }
}

/// `mbarrier.*`, and `cp.async.mbarrier.arrive` (`cp`).
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    let space = match space_of(w) {
        Ok(s) => s,
        Err(why) => return w.unsupported(why),
    };
    if w.mods.iter().any(|x| x.starts_with("arrive_drop")) {
        return w.unsupported("`mbarrier.arrive_drop` is not simulated");
    }
    if w.mn == "cp" {
        w.need(1)?;
        let addr = cx.addr(&ops[0], line)?;
        return Ok(Op::Mbar(Box::new(MbarOp::CpAsyncArrive {
            addr,
            space,
            noinc: w.has("noinc"),
        })));
    }
    let sink = |o: &Operand| matches!(o, Operand::Word { w, .. } if w == "_");
    let op = match w.mods.first().copied() {
        Some("init") => {
            w.need(2)?;
            MbarOp::Init {
                addr: cx.addr(&ops[0], line)?,
                space,
                count: cx.src(&ops[1], Ty::U32, line)?,
            }
        }
        Some(m @ ("expect_tx" | "complete_tx")) => {
            w.need(2)?;
            MbarOp::Tx {
                addr: cx.addr(&ops[0], line)?,
                space,
                bytes: cx.src(&ops[1], Ty::U32, line)?,
                expect: m == "expect_tx",
            }
        }
        Some("arrive") => {
            // The third operand: `arrive.expect_tx`'s bytes, or an arrival count.
            let tx = w.has("expect_tx");
            w.need(if tx { 3 } else { 2 })?;
            let third = match ops.get(2) {
                Some(o) => Some(cx.src(o, Ty::U32, line)?),
                None => None,
            };
            MbarOp::Arrive {
                d: if sink(&ops[0]) {
                    None
                } else {
                    Some(cx.dst(&ops[0], line)?)
                },
                addr: cx.addr(&ops[1], line)?,
                space,
                count: if tx { None } else { third },
                no_complete: w.has("noComplete"),
                expect_tx: if tx { third } else { None },
            }
        }
        Some("test_wait" | "try_wait") => {
            w.need(3)?;
            MbarOp::Wait {
                p: cx.pdst(&ops[0], line)?,
                addr: cx.addr(&ops[1], line)?,
                space,
                parity: w.has("parity"),
                token: cx.src(&ops[2], Ty::U64, line)?,
            }
        }
        Some("inval") => {
            w.need(1)?;
            MbarOp::Inval {
                addr: cx.addr(&ops[0], line)?,
                space,
            }
        }
        Some("pending_count") => {
            w.need(2)?;
            MbarOp::PendingCount {
                d: cx.dst(&ops[0], line)?,
                state: cx.src(&ops[1], Ty::U64, line)?,
            }
        }
        _ => return w.unsupported("not simulated"),
    };
    Ok(Op::Mbar(Box::new(op)))
}
