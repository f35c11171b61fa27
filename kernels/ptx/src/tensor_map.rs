//! Decoding `tensormap.replace`, `tensormap.cp_fenceproxy` and the acquire fence
//! `fence.proxy.tensormap::generic.acquire`, and the layout of the 128-byte
//! tensor-map object (which bits hold which field). `sim::tensor_map` runs them.

use crate::decode::{Ctx as Dx, DecodeError};
use crate::ir::*;
use crate::opcode::Word;
use crate::parse::Operand;

/// Bytes of a tensor-map object.
pub const MAP_BYTES: u64 = 128;
/// The most dimensions a tensor map has.
pub const RANKS: usize = 5;

/// A field of a tensor map that `tensormap.replace` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Address,
    Rank,
    BoxDim,
    GlobalDim,
    GlobalStride,
    ElementStride,
    ElemType,
    Interleave,
    Swizzle,
    SwizzleAtomicity,
    Fill,
}

impl Field {
    pub fn parse(m: &str) -> Option<Field> {
        Some(match m {
            "global_address" => Field::Address,
            "rank" => Field::Rank,
            "box_dim" => Field::BoxDim,
            "global_dim" => Field::GlobalDim,
            "global_stride" => Field::GlobalStride,
            "element_stride" => Field::ElementStride,
            "elemtype" => Field::ElemType,
            "interleave_layout" => Field::Interleave,
            "swizzle_mode" => Field::Swizzle,
            "swizzle_atomicity" => Field::SwizzleAtomicity,
            "fill_mode" => Field::Fill,
            _ => return None,
        })
    }

    /// Whether the field has one value per dimension (`ord` picks it).
    pub fn ordinal(self) -> bool {
        matches!(
            self,
            Field::BoxDim | Field::GlobalDim | Field::GlobalStride | Field::ElementStride
        )
    }

    /// The byte offset and width of the field (dimension `ord`) in the simulator's encoding.
    pub fn slot(self, ord: u64) -> (u64, usize) {
        match self {
            Field::Address => (0, 8),
            Field::Rank => (8, 4),
            Field::ElemType => (12, 4),
            Field::Interleave => (16, 4),
            Field::Swizzle => (20, 4),
            Field::Fill => (24, 4),
            Field::SwizzleAtomicity => (28, 4),
            Field::GlobalDim => (32 + 4 * ord, 4),
            Field::GlobalStride => (52 + 8 * ord, 8),
            Field::BoxDim => (84 + 4 * ord, 4),
            Field::ElementStride => (104 + 4 * ord, 4),
        }
    }

    /// What is stored for `v`: sizes and strides in elements less one, so that zeros read as 1.
    pub fn encode(self, v: u64) -> u64 {
        match self {
            Field::GlobalDim | Field::BoxDim | Field::ElementStride => v.wrapping_sub(1),
            _ => v,
        }
    }
}

/// One decoded tensor-map instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum MapOp {
    /// `tensormap.replace`: `field` (dimension `ord`) of the map at `addr` in `space` := `val`.
    Replace {
        field: Field,
        space: Space,
        addr: Addr,
        ord: u64,
        val: Src,
    },
    /// `tensormap.cp_fenceproxy`: the 128 bytes at shared `src` to global `dst`.
    Publish { dst: Addr, src: Addr },
    /// `fence.proxy.tensormap::generic.acquire.<scope> [addr], 128`: the thread's later copies
    /// may use the map at `addr` (in global memory) that writes before it made; `sys`: at
    /// `.sys` scope, which a map the host wrote needs.
    Acquire { addr: Addr, sys: bool },
}

/// `fence.proxy.tensormap::generic.acquire.<scope> [addr], 128`.
pub fn acquire(cx: &mut Dx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
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
pub fn decode(cx: &mut Dx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
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
    cx: &mut Dx,
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
