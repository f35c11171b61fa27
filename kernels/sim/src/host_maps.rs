//! Tensor maps the kernel declares (`spec::tensor_maps`), as the runner hands them to the
//! launch, and what the PTX ISA and the CUDA programming guide require of a kernel that uses a
//! map in global memory.
//!
//! On the GPU the runner encodes each declared map with the driver's `cuTensorMapEncodeTiled`
//! and copies the 128 bytes into the map's `__device__` global before the launch. Here
//! [`write`] puts the simulator's own encoding there (the layout `ptx::ir::Field`
//! names; the driver's is opaque), marked valid in bytes 124-127, which no field uses. The mark
//! travels with the bytes: a map copied to shared memory and back with plain loads and stores,
//! or with `tensormap.cp_fenceproxy`, stays valid. What the GPU would not promise is diagnosed:
//!
//! - `tensormap.replace` on an object that holds no valid map (a zeroed one, say): the PTX ISA
//!   lets it change a field of a valid map only, so a map built from zeros works by chance
//!   ([`Machine::replace_allowed`]);
//! - a copy through a map in global memory whose thread never acquired it with
//!   `fence.proxy.tensormap::generic.acquire` (at `.sys` scope for a map the host wrote, as the
//!   programming guide asks of a map written by a host copy): the copy may read a stale map
//!   ([`Machine::unusable`], which also refuses an object that holds no valid map). Whether the acquire came after the map's last change is not
//!   checked.

use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use crate::memory::{Buffer, CONST_REGION, PARAM_REGION, REGION_SHIFT, global_base};
use ptx::ir::Space;
use ptx::ir::{Field, MAP_BYTES};
use spec::tensor_maps::TensorMap;

/// Where the simulator's encoding marks a map as valid, and the mark.
pub(crate) const VALID_AT: u64 = 124;
pub(crate) const VALID: u32 = 0x4d41_5021;

/// The simulator's encoding of `map` over the buffer at `addr`: f32 elements, no interleave,
/// zeros outside the tensor, element strides 1, marked valid.
pub(crate) fn encode(map: &TensorMap, addr: u64) -> [u8; MAP_BYTES as usize] {
    let mut b = [0u8; MAP_BYTES as usize];
    let mut put = |f: Field, ord: u64, v: u64| {
        let (o, n) = f.slot(ord);
        b[o as usize..o as usize + n].copy_from_slice(&f.encode(v).to_le_bytes()[..n]);
    };
    put(Field::Address, 0, addr);
    put(Field::Rank, 0, map.dims.len() as u64 - 1);
    put(Field::ElemType, 0, 7); // f32, as `tensormap.replace.tile.elemtype` numbers it
    // The swizzle field: 0 none, 1 32 bytes, 2 64, 3 128.
    let swizzle = match map.swizzle {
        32 => 1,
        64 => 2,
        128 => 3,
        _ => 0,
    };
    put(Field::Swizzle, 0, swizzle);
    for (i, (&d, &bx)) in map.dims.iter().zip(&map.boxes).enumerate() {
        put(Field::GlobalDim, i as u64, d);
        put(Field::BoxDim, i as u64, u64::from(bx));
        put(Field::ElementStride, i as u64, 1);
    }
    for (i, &s) in map.strides.iter().enumerate() {
        put(Field::GlobalStride, i as u64, s);
    }
    b[VALID_AT as usize..].copy_from_slice(&VALID.to_le_bytes());
    b
}

/// The global a declared map goes into, missing or too small.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NoGlobal {
    #[error(
        "`tensor_maps` declares map `{0}`, but the kernel has no `__device__` global `{0}`: declare `__device__ __align__(64) unsigned char {0}[128];`"
    )]
    Missing(String),
    #[error("`{0}` has {1} bytes; a tensor map takes 128")]
    TooSmall(String, usize),
}

/// Writes each of `maps` into its global among `globals` (the arguments' buffers, then the
/// module's variables, in region order); `Err` says which global is missing or too small.
pub(crate) fn write(
    maps: &[TensorMap],
    globals: &mut [Buffer],
    host_maps: &mut Vec<u64>,
) -> Result<(), NoGlobal> {
    for m in maps {
        let Some(r) = globals.iter().position(|g| g.name == m.symbol) else {
            return Err(NoGlobal::Missing(m.symbol.clone()));
        };
        let g = &mut globals[r];
        if (g.bytes.len() as u64) < MAP_BYTES {
            return Err(NoGlobal::TooSmall(m.symbol.clone(), g.bytes.len()));
        }
        if m.dims.is_empty() {
            // Not made for this case (its `when` fails): no valid map there.
            g.bytes[..MAP_BYTES as usize].fill(0);
            continue;
        }
        g.bytes[..MAP_BYTES as usize].copy_from_slice(&encode(m, global_base(m.arg + 1)));
        host_maps.push(global_base(r + 1));
    }
    Ok(())
}

impl Machine<'_> {
    /// Whether the 128 bytes at `a` in `space` hold a valid map, for `tensormap.replace` by lane
    /// `l`; `Err` is the diagnostic of a map built from nothing.
    pub(crate) fn replace_allowed(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        l: usize,
        (space, a): (Space, u64),
    ) -> Result<(), Located> {
        let mark = {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
            sp.load_as(space, a + VALID_AT, 4, l, crate::check::Acc::Quiet)
        };
        match mark {
            Ok(v) if v as u32 == VALID => Ok(()),
            Ok(_) => {
                let text = &self.prog.texts[self.prog.insts[pc].text as usize];
                let detail = format!(
                    "`{text}` changes a field of a tensor map that was never a valid one (built from zeros, say): the PTX ISA lets `tensormap.replace` change only a valid map, so a GPU may take the result or refuse it. Declare the map in `tensor_maps` for the runner to encode with the driver, and copy it before changing a field"
                );
                Err(self.fault(Fault::BadTensorMap { detail }, Some(pc), Some(w), Some(l)))
            }
            Err(mem) => Err(self.fault(
                Fault::OutOfBounds { write: false, mem },
                Some(pc),
                Some(w),
                Some(l),
            )),
        }
    }

    /// Records the `fence.proxy.tensormap::generic.acquire` of the lanes `exec` of the warp
    /// whose first thread is `tid0`, each of the map at its address in `addrs`.
    pub(crate) fn acquire(&mut self, tid0: u32, exec: u32, addrs: &[u64; 32], sys: bool) {
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let (tid, a) = (tid0 + l as u32, addrs[l]);
            self.sync.acquired.retain(|&(t, at, _)| (t, at) != (tid, a));
            self.sync.acquired.push((tid, a, sys));
        }
    }

    /// Why lane `l` may not copy through the map `bytes` at generic address `a`, if it may not:
    /// they hold no valid map, or the map is in global memory and its thread never acquired it
    /// (at `.sys` scope where the host wrote it). The sentence follows the instruction's text.
    pub(crate) fn unusable(&self, w: &Warp, l: usize, a: u64, bytes: &[u8]) -> Option<String> {
        if bytes[VALID_AT as usize..VALID_AT as usize + 4] != VALID.to_le_bytes() {
            return Some("copies with a tensor map that holds no valid tensor map (only the driver makes one: declare the map in `tensor_maps` for the runner to encode and write, and see that its `when`, if any, holds for this case): on a GPU the launch stops with \"an illegal instruction was encountered\"".into());
        }
        let region = a >> REGION_SHIFT;
        if region == PARAM_REGION || region == CONST_REGION {
            return None;
        }
        let tid = w.first_tid + l as u32;
        let host = self.mem.host_maps.contains(&a);
        let fence =
            |scope: &str| format!("`fence.proxy.tensormap::generic.acquire.{scope} [map], 128;`");
        match self
            .sync
            .acquired
            .iter()
            .find(|&&(t, at, _)| (t, at) == (tid, a))
        {
            Some(&(_, _, sys)) if sys || !host => None,
            Some(_) => Some(format!(
                "reads a tensor map the host wrote, acquired at a narrower scope than `.sys`: the CUDA programming guide asks for {} before the first copy through a map a host copy wrote",
                fence("sys")
            )),
            None => Some(format!(
                "reads a tensor map in global memory that its thread never acquired: without {} (before the first copy, in the thread that copies) the PTX ISA does not promise the copy sees the map's bytes",
                fence(if host { "sys" } else { "gpu" })
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_map_encodes_its_fields_and_the_mark() {
        let map = TensorMap {
            symbol: "m".into(),
            arg: 0,
            dims: vec![64, 240],
            strides: vec![256],
            boxes: vec![32, 8],
            swizzle: 128,
        };
        let b = encode(&map, 0x1000);
        let at = |f: Field, ord: u64| {
            let (o, n) = f.slot(ord);
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(&b[o as usize..o as usize + n]);
            u64::from_le_bytes(v)
        };
        assert_eq!(at(Field::Address, 0), 0x1000);
        assert_eq!(at(Field::Rank, 0), 1, "the rank less one");
        assert_eq!(at(Field::GlobalDim, 1), 239, "sizes less one");
        assert_eq!(at(Field::BoxDim, 0), 31);
        assert_eq!(at(Field::GlobalStride, 0), 256);
        assert_eq!(at(Field::Swizzle, 0), 3);
        assert_eq!(at(Field::ElemType, 0), 7);
        assert_eq!(&b[VALID_AT as usize..], &VALID.to_le_bytes());
        for (bytes, code) in [(0, 0), (32, 1), (64, 2), (128, 3)] {
            let m = TensorMap {
                swizzle: bytes,
                boxes: vec![4, 8],
                ..map.clone()
            };
            let (o, _) = Field::Swizzle.slot(0);
            assert_eq!(u64::from(encode(&m, 0)[o as usize]), code, "{bytes}");
        }
    }
}
