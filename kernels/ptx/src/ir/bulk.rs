//! The bulk copies as decoded ([`BulkOp`], the TMA unit's one-dimensional and tensor forms)
//! and the tensor-map object they copy through: its 128 bytes, the fields `tensormap.replace`
//! writes and where each lies ([`Field`]), and the instructions on it ([`MapOp`]).

use super::types::*;

/// One decoded bulk instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum BulkOp {
    /// Global `src` to shared `dst`, `size` bytes, completing on the mbarrier at `mbar`.
    Load {
        dst: Addr,
        src: Addr,
        size: Src,
        mbar: Addr,
    },
    /// Shared `src` to global `dst`, `size` bytes, in the thread's open bulk group.
    Store {
        dst: Addr,
        src: Addr,
        size: Src,
    },
    Commit,
    /// At most `keep` of the thread's committed groups left in flight (`read`: left reading
    /// their sources; their writes may still be in flight).
    Wait {
        keep: u32,
        read: bool,
    },
    /// The box at `coords` of the tensor map at `map` into shared `dst`, completing on `mbar`
    /// (`tensor_map`).
    TensorLoad {
        dst: Addr,
        map: Addr,
        coords: Vec<Src>,
        mbar: Addr,
    },
    /// Shared `src` to the box at `coords` of the tensor map at `map`, in the open bulk group.
    TensorStore {
        map: Addr,
        coords: Vec<Src>,
        src: Addr,
    },
}

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
