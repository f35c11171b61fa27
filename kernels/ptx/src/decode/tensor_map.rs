//! Decoding `tensormap.replace`, `tensormap.cp_fenceproxy` and the acquire fence
//! `fence.proxy.tensormap::generic.acquire`, and the layout of the 128-byte
//! tensor-map object (which bits hold which field). `sim::tensor_map` runs them.

use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;
use crate::parse::Operand;

/// `fence.proxy.tensormap::generic.acquire.<scope> [addr], 128`.
pub fn acquire(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    w.need(2)?;
    let size = match &ops[1] {
        Operand::Word { w: n, .. } => crate::parse::parse_int(n),
        _ => None,
    };
    if size != Some(MAP_BYTES as i64) {
        return cx.bad(
            w.line,
            "`fence.proxy.tensormap::generic.acquire` fences a 128-byte tensor map",
        );
    }
    Ok(Op::TensorMap(Box::new(MapOp::Acquire {
        addr: cx.addr(&ops[0], w.line)?,
        sys: w.has("sys"),
    })))
}

/// `tensormap.*`.
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if w.has("cp_fenceproxy") {
        w.need(3)?;
        if !(w.has("global") && w.has("shared::cta")) {
            return w.unsupported("of `tensormap.cp_fenceproxy` the simulator runs the copy from `.shared::cta` to `.global`");
        }
        let size = match &ops[2] {
            Operand::Word { w: n, .. } => crate::parse::parse_int(n),
            _ => None,
        };
        if size != Some(MAP_BYTES as i64) {
            return cx.bad(
                line,
                "`tensormap.cp_fenceproxy` copies a 128-byte tensor map",
            );
        }
        return Ok(Op::TensorMap(Box::new(MapOp::Publish {
            dst: cx.addr(&ops[0], line)?,
            src: cx.addr(&ops[1], line)?,
        })));
    }
    if !w.has("replace") {
        return w.unsupported("of the tensor-map instructions the simulator runs `tensormap.replace` and `tensormap.cp_fenceproxy`");
    }
    if !w.has("tile") {
        return w.unsupported("only tiled tensor maps (`.tile`) are simulated");
    }
    let Some(field) = w.mods.iter().find_map(|m| Field::parse(m)) else {
        return cx.bad(line, format!("`{}` names no field of a tensor map", w.text));
    };
    let space = if w.has("global") {
        Space::Global
    } else {
        Space::Shared
    };
    let ord = if field.ordinal() {
        w.need(3)?;
        match &ops[1] {
            Operand::Word { w: n, .. } => crate::parse::parse_int(n)
                .and_then(|v| u64::try_from(v).ok())
                .filter(|&v| (v as usize) < RANKS),
            _ => None,
        }
        .map_or_else(
            || {
                cx.bad(
                    line,
                    "a tensor map's dimension (`ord`) is a constant below 5",
                )
            },
            Ok,
        )?
    } else {
        w.need(2)?;
        0
    };
    let ty = if field.slot(0).1 == 8 {
        Ty::U64
    } else {
        Ty::U32
    };
    Ok(Op::TensorMap(Box::new(MapOp::Replace {
        field,
        space,
        addr: cx.addr(&ops[0], line)?,
        ord,
        val: cx.src(&ops[if field.ordinal() { 2 } else { 1 }], ty, line)?,
    })))
}

/// The address part of a `[map, {coordinates}]` operand, and its coordinates.
pub fn tensor_operand(
    cx: &mut Ctx,
    o: &Operand,
    line: u32,
) -> Result<(Addr, Vec<Src>), DecodeError> {
    let Operand::Tensor { base, off, coords } = o else {
        return cx.bad(
            line,
            format!("expected `[tensorMap, {{coordinates}}]`, found {o:?}"),
        );
    };
    let addr = cx.addr(
        &Operand::Addr {
            base: base.clone(),
            off: *off,
        },
        line,
    )?;
    let coords = coords
        .iter()
        .map(|c| {
            let o = Operand::Word {
                w: c.clone(),
                neg: false,
                minus: false,
            };
            cx.src(&o, Ty::S32, line)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((addr, coords))
}
