//! Decoding the bulk copies (`cp.async.bulk`, `cp.async.bulk.tensor`, their commit and wait
//! groups) into [`BulkOp`]. `sim::bulk` runs them.

use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;
use crate::parse::Operand;

/// `cp.async.bulk...` (and `cp.reduce.async.bulk...`, refused).
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if w.has("reduce") {
        return w.unsupported("`cp.reduce.async.bulk` is not simulated");
    }
    if w.has("tensor") {
        return tensor(cx, w, ops);
    }
    if w.has("prefetch") {
        return Ok(Op::Nop);
    }
    if w.has("commit_group") {
        return Ok(Op::Bulk(Box::new(BulkOp::Commit)));
    }
    if w.has("wait_group") {
        w.need(1)?;
        let keep = match &ops[0] {
            Operand::Word { w: n, .. } => crate::parse::parse_int(n),
            _ => None,
        };
        return match keep.and_then(|k| u32::try_from(k).ok()) {
            Some(keep) => Ok(Op::Bulk(Box::new(BulkOp::Wait {
                keep,
                read: w.has("read"),
            }))),
            None => cx.bad(
                line,
                "`cp.async.bulk.wait_group` needs a constant count of groups",
            ),
        };
    }
    if w.mods.iter().any(|m| m.starts_with("multicast")) {
        return w.unsupported(
            "clusters are not simulated (a multicast bulk copy writes every block of one)",
        );
    }
    // The destination's state space comes first: `.shared::cluster.global` loads, `.global
    // .shared::cta` stores.
    let shared = |m: &&str| *m == "shared::cluster" || *m == "shared::cta" || *m == "shared";
    let first_space = w
        .mods
        .iter()
        .find(|m| shared(m) || **m == "global")
        .copied();
    let spaces = w.mods.iter().filter(|m| shared(m)).count();
    if spaces == 2 {
        return w.unsupported("clusters are not simulated (a shared-to-shared bulk copy writes another block of the cluster)");
    }
    match first_space {
        Some("global") if w.has("bulk_group") && spaces == 1 => {
            w.need(3)?;
            Ok(Op::Bulk(Box::new(BulkOp::Store {
                dst: cx.addr(&ops[0], line)?,
                src: cx.addr(&ops[1], line)?,
                size: cx.src(&ops[2], Ty::U32, line)?,
            })))
        }
        Some(s) if s != "global" && w.has("global") && w.has("mbarrier::complete_tx::bytes") => {
            w.need(4)?;
            Ok(Op::Bulk(Box::new(BulkOp::Load {
                dst: cx.addr(&ops[0], line)?,
                src: cx.addr(&ops[1], line)?,
                size: cx.src(&ops[2], Ty::U32, line)?,
                mbar: cx.addr(&ops[3], line)?,
            })))
        }
        _ => w.unsupported("of the bulk copies it runs `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` and `cp.async.bulk.global.shared::cta.bulk_group`, with `commit_group` and `wait_group`"),
    }
}

/// `cp.async.bulk.tensor...`: the tiled loads and stores (`tensor_map`).
fn tensor(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if let Some(m) = w
        .mods
        .iter()
        .find(|m| m.starts_with("im2col") || m.starts_with("gather") || m.starts_with("scatter"))
    {
        return w.unsupported(&format!(
            "the `.{m}` mode is not simulated: the simulator copies tiled boxes (`.tile`)"
        ));
    }
    if w.mods.iter().any(|m| m.starts_with("multicast")) {
        return w.unsupported(
            "clusters are not simulated (a multicast copy writes every block of one)",
        );
    }
    let dims = w
        .mods
        .iter()
        .find_map(|m| m.strip_suffix('d').and_then(|n| n.parse::<usize>().ok()));
    let first_space = w
        .mods
        .iter()
        .find(|m| **m == "global" || m.starts_with("shared"));
    match first_space {
        Some(s) if s.starts_with("shared") && w.has("mbarrier::complete_tx::bytes") => {
            w.need(3)?;
            let (map, coords) = crate::decode::tensor_map::tensor_operand(cx, &ops[1], line)?;
            if dims != Some(coords.len()) {
                return cx.bad(line, format!("`{}` gives {} coordinates", w.text, coords.len()));
            }
            Ok(Op::Bulk(Box::new(BulkOp::TensorLoad {
                dst: cx.addr(&ops[0], line)?,
                map,
                coords,
                mbar: cx.addr(&ops[2], line)?,
            })))
        }
        Some(&"global") if w.has("bulk_group") => {
            w.need(2)?;
            let (map, coords) = crate::decode::tensor_map::tensor_operand(cx, &ops[0], line)?;
            if dims != Some(coords.len()) {
                return cx.bad(line, format!("`{}` gives {} coordinates", w.text, coords.len()));
            }
            Ok(Op::Bulk(Box::new(BulkOp::TensorStore {
                map,
                coords,
                src: cx.addr(&ops[1], line)?,
            })))
        }
        _ => w.unsupported("of the tensor copies the simulator runs global to shared on an mbarrier (`.mbarrier::complete_tx::bytes`) and shared to global in bulk groups (`.bulk_group`)"),
    }
}
