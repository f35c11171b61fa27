//! Decoding `cp.async` (the copy and its commit and wait groups) into `Op::CpAsync` and its
//! kin; `sim::copy` runs them.

use crate::decode::ctx::{Ctx, DecodeError, Name, Word};
use crate::ir::*;
use crate::parse::Operand;

/// `cp.async...`: the copy `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size{, src_size |
/// ignore_src}{, policy}` and its groups; the bulk forms go to `bulk`, the `mbarrier` ones to
/// `mbar_decode`.
pub fn cp_async(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if w.has("bulk") {
        return crate::decode::bulk::decode(cx, w, ops);
    }
    if w.has("mbarrier") {
        return crate::decode::mbarrier::decode(cx, w, ops);
    }
    if w.has("commit_group") {
        return Ok(Op::CpAsyncCommit);
    }
    if w.has("wait_all") {
        return Ok(Op::CpAsyncWait {
            keep: 0,
            commit: true,
        });
    }
    // A constant operand (the group count, the copy size).
    let constant = |o: &Operand| match o {
        Operand::Word { w: n, .. } => crate::parse::parse_int(n),
        _ => None,
    };
    if w.has("wait_group") {
        w.need(1)?;
        return match constant(&ops[0]).and_then(|k| u32::try_from(k).ok()) {
            Some(keep) => Ok(Op::CpAsyncWait {
                keep,
                commit: false,
            }),
            None => cx.bad(
                line,
                "`cp.async.wait_group` needs a constant count of groups",
            ),
        };
    }
    if !(w.has("shared") || w.has("shared::cta")) || !w.has("global") || w.has("bulk") {
        return w.unsupported("of the asynchronous copies it runs only `cp.async.ca/cg.shared.global`, `commit_group` and `wait_group`/`wait_all`");
    }
    w.need(3)?;
    let size = match constant(&ops[2]) {
        Some(n @ (4 | 8 | 16)) if n == 16 || w.has("ca") => n as u32,
        _ => return cx.bad(line, "`cp.async` copies 4, 8 or 16 bytes (`.cg`: 16)"),
    };
    // The optional fourth operand: a predicate is `ignore-src`, anything else `src-size`; a fifth
    // (with `.L2::cache_hint`) is a cache policy, which changes nothing here.
    let hint = usize::from(w.mods.iter().any(|m| m.ends_with("cache_hint")));
    let (mut src_size, mut ignore_src) = (None, None);
    if ops.len() > 3 + hint {
        let o = &ops[3];
        let pred =
            matches!(o, Operand::Word { w: n, .. } if matches!(cx.lookup(n), Some(Name::Pred(_))));
        if pred {
            ignore_src = Some(cx.psrc(o, line)?);
        } else {
            src_size = Some(cx.src(o, Ty::U32, line)?);
        }
    }
    Ok(Op::CpAsync {
        size,
        dst: cx.addr(&ops[0], line)?,
        src: cx.addr(&ops[1], line)?,
        src_size,
        ignore_src,
    })
}
