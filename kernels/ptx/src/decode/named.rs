//! Decoding `bar`/`barrier` (named barriers, counts) and `setmaxnreg`. `sim::named` runs them.

use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;

/// `bar`/`barrier` other than `bar.warp.sync`: `Op::Bar` for `bar.sync 0` / `barrier.sync 0`
/// with no count, `Op::NamedBar` otherwise.
pub fn decode(
    cx: &mut Ctx,
    w: &Word<'_>,
    ops: &[crate::parse::Operand],
) -> Result<Op, DecodeError> {
    if w.has("cluster") {
        return w.unsupported("cluster barriers are not simulated");
    }
    if w.has("red") {
        return w.unsupported("`bar.red` (`__syncthreads_count/and/or`) is not simulated");
    }
    let wait = !w.has("arrive");
    let zero = matches!(ops.first(), Some(crate::parse::Operand::Word { w: n, .. }) if crate::parse::parse_int(n) == Some(0));
    if ops.is_empty() || wait && zero && ops.len() == 1 {
        return Ok(Op::Bar);
    }
    let id = cx.src(&ops[0], Ty::U32, w.line)?;
    let count = match ops.get(1) {
        Some(o) => Some(cx.src(o, Ty::U32, w.line)?),
        None if !wait => return cx.bad(w.line, "`bar.arrive` needs a thread count"),
        None => None,
    };
    Ok(Op::NamedBar { id, count, wait })
}

/// `setmaxnreg.{inc,dec}.sync.aligned.u32 n`: `n` must be a constant (its range is checked
/// when it runs, at the learner's line).
pub fn decode_setmaxnreg(
    cx: &mut Ctx,
    w: &Word<'_>,
    ops: &[crate::parse::Operand],
) -> Result<Op, DecodeError> {
    w.need(1)?;
    match &ops[0] {
        crate::parse::Operand::Word { w: n, .. } => match crate::parse::parse_int(n) {
            Some(n) => Ok(Op::SetMaxNreg { n: n as u64 }),
            None => cx.bad(w.line, "`setmaxnreg` needs a constant register count"),
        },
        _ => cx.bad(w.line, "`setmaxnreg` needs a constant register count"),
    }
}
