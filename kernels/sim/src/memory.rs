//! The state spaces and the one address map that joins them.
//!
//! Generic addresses are 64-bit: bits 40 and up name a region. Global region `r` (1-based: the
//! kernel's pointer arguments in order, then module `.global` variables) starts at
//! [`global_base`]`(r)`, in the middle of its region, so that an index a little below zero or a
//! little past the end still lands in the same region and the fault can name the buffer. Shared,
//! const, local and param windows have regions of their own; inside their state space their
//! addresses are plain offsets from 0, as `ld.shared [%r1]` expects. Every access is checked:
//! a fault is a [`MemFault`] value, never a panic. Shadow state for the teaching checks (which
//! thread last wrote a shared word, which output elements were written) can sit beside the byte
//! vectors here, indexed the same way.

use crate::check::{Acc, Checks};
use crate::observe::{Observer, Touch};
pub use ptx::addr::*;
use ptx::ir::{Program, Space};
use ptx::provenance::{self, NONE};

/// A global buffer: a kernel argument or a module `.global` variable.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub bytes: Vec<u8>,
    /// Bytes per element, for indices in diagnostics (4 for the float buffers).
    pub elem: u32,
    /// A kernel input: a store into it is `wrote_input`.
    pub read_only: bool,
}

/// An access that no buffer holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemFault {
    pub space: Space,
    /// The buffer or variable nearest to the address, if any.
    pub name: Option<String>,
    /// Index in elements (global) or byte offset (other spaces), possibly negative.
    pub index: i64,
    /// Length in the same unit.
    pub len: u64,
    pub elem: u32,
    /// A store into memory that is read-only: a kernel input, a `.const` or `.param` byte.
    pub read_only: bool,
}

/// Global, const and param memory of one launch.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub globals: Vec<Buffer>,
    pub consts: Vec<u8>,
    pub params: Vec<u8>,
    /// The global addresses of the tensor maps the runner wrote before the launch
    /// (`host_maps`).
    pub host_maps: Vec<u64>,
}

/// A view of every space for one warp: the launch memory, its block's shared memory and its
/// lanes' local memory (`local_bytes` per lane, lane-major), and the launch's checks with the
/// warp's first thread (block-linear) and the instruction, to record each access and to
/// hold a shared access to the array it is attributed to (`provenance`).
pub struct Spaces<'a> {
    pub prog: &'a Program,
    pub mem: &'a mut Memory,
    pub shared: &'a mut [u8],
    pub local: &'a mut [u8],
    pub local_bytes: usize,
    pub chk: &'a mut Checks,
    /// The observer attached to the launch, if any (`observe`).
    pub obs: Option<&'a mut dyn Observer>,
    /// `chk.on || obs.is_some()`, once per instruction: whether anyone sees accesses.
    pub watch: bool,
    /// Accesses the observer does not see, the checks still do: a `wgmma` operand that all four
    /// warps of a warpgroup read, which the hardware reads once (a profile counts it for the
    /// first warp).
    pub unobserved: bool,
    pub tid0: u32,
    pub inst: u32,
}

#[inline]
fn read(b: &[u8], off: usize, n: usize) -> u64 {
    match n {
        4 => u64::from(u32::from_le_bytes([
            b[off],
            b[off + 1],
            b[off + 2],
            b[off + 3],
        ])),
        8 => u64::from_le_bytes(b[off..off + 8].try_into().unwrap_or([0; 8])),
        2 => u64::from(u16::from_le_bytes([b[off], b[off + 1]])),
        _ => u64::from(b[off]),
    }
}

#[inline]
fn write(b: &mut [u8], off: usize, n: usize, v: u64) {
    b[off..off + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

impl Spaces<'_> {
    /// Resolves `addr` in `space` to (the space, a byte offset in it, its length in bytes).
    #[inline]
    fn locate(
        &self,
        space: Space,
        addr: u64,
        n: usize,
        lane: usize,
    ) -> Result<(Space, usize), MemFault> {
        let (space, off) = match space {
            Space::Generic => {
                let r = addr >> REGION_SHIFT;
                match r {
                    SHARED_REGION => (Space::Shared, addr - window_base(Space::Shared)),
                    CONST_REGION => (Space::Const, addr - window_base(Space::Const)),
                    LOCAL_REGION => (Space::Local, addr - window_base(Space::Local)),
                    PARAM_REGION => (Space::Param, addr - window_base(Space::Param)),
                    _ => (Space::Global, addr),
                }
            }
            s => (s, addr),
        };
        let len = match space {
            Space::Shared => {
                let a = self.prog.access_array.get(self.inst as usize);
                if let Some(&a) = a.filter(|&&a| a != NONE) {
                    self.in_array(a, off, n)?;
                }
                self.shared.len()
            }
            Space::Const => self.mem.consts.len(),
            Space::Param => self.mem.params.len(),
            Space::Local => self.local_bytes,
            _ => return self.locate_global(off, n),
        };
        if off.checked_add(n as u64).is_none_or(|end| end > len as u64) {
            return Err(MemFault {
                space,
                name: None,
                index: off as i64,
                len: len as u64,
                elem: 1,
                read_only: false,
            });
        }
        let off = off as usize;
        Ok((
            space,
            if space == Space::Local {
                lane * self.local_bytes + off
            } else {
                off
            },
        ))
    }

    /// Checks that a shared access of `n` bytes at `off` stays in array `a`.
    #[inline]
    fn in_array(&self, a: u32, off: u64, n: usize) -> Result<(), MemFault> {
        let (lo, hi) = provenance::range(self.prog, a, self.shared.len());
        if off >= lo && off.checked_add(n as u64).is_some_and(|end| end <= hi) {
            return Ok(());
        }
        // A 32-bit address that went below zero wraps at 2^32, a 64-bit one at 2^64.
        let d = off.wrapping_sub(lo);
        let d = if off >> 32 == 0 {
            i64::from(d as u32 as i32)
        } else {
            d as i64
        };
        let e = n.max(1) as i64;
        Err(MemFault {
            space: Space::Shared,
            name: Some(provenance::name(self.prog, a)),
            index: d.div_euclid(e),
            len: (hi - lo) / e as u64,
            elem: e as u32,
            read_only: false,
        })
    }

    #[inline]
    fn locate_global(&self, addr: u64, n: usize) -> Result<(Space, usize), MemFault> {
        let r = (addr >> REGION_SHIFT) as usize;
        let Some(buf) = r.checked_sub(1).and_then(|i| self.mem.globals.get(i)) else {
            return Err(MemFault {
                space: Space::Global,
                name: None,
                index: addr as i64,
                len: 0,
                elem: 1,
                read_only: false,
            });
        };
        let off = addr.wrapping_sub(global_base(r)) as i64;
        if off < 0 || off as u64 + n as u64 > buf.bytes.len() as u64 {
            let e = i64::from(buf.elem.max(1));
            return Err(MemFault {
                space: Space::Global,
                name: Some(buf.name.clone()),
                index: off.div_euclid(e),
                len: buf.bytes.len() as u64 / e as u64,
                elem: buf.elem,
                read_only: false,
            });
        }
        Ok((Space::Global, (off as usize) | (r << 48)))
    }

    fn bytes_mut(&mut self, space: Space, at: usize) -> (&mut [u8], usize) {
        match space {
            Space::Shared => (self.shared, at),
            Space::Const => (&mut self.mem.consts, at),
            Space::Param => (&mut self.mem.params, at),
            Space::Local => (self.local, at),
            _ => {
                let (r, off) = (at >> 48, at & ((1 << 48) - 1));
                (&mut self.mem.globals[r - 1].bytes, off)
            }
        }
    }

    /// Refuses a store at `at` (a located global byte) into a kernel input.
    #[inline]
    fn writable(&self, at: usize) -> Result<(), MemFault> {
        let (r, off) = (at >> 48, at & ((1 << 48) - 1));
        let buf = &self.mem.globals[r - 1];
        if !buf.read_only {
            return Ok(());
        }
        let e = buf.elem.max(1) as usize;
        Err(MemFault {
            space: Space::Global,
            name: Some(buf.name.clone()),
            index: (off / e) as i64,
            len: (buf.bytes.len() / e) as u64,
            elem: buf.elem,
            read_only: true,
        })
    }

    /// Fast path of [`Spaces::load`] for a 4-byte global access (the convolution's loads).
    #[inline(always)]
    pub fn load_global4(&mut self, addr: u64, lane: usize) -> Result<u64, MemFault> {
        let r = (addr >> REGION_SHIFT) as usize;
        if let Some(buf) = r.checked_sub(1).and_then(|i| self.mem.globals.get(i)) {
            let off = addr.wrapping_sub(global_base(r)) as usize;
            if let Some(b) = buf.bytes.get(off..off.wrapping_add(4)) {
                let v = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                if self.watched() {
                    self.touch(Touch {
                        space: Space::Global,
                        buf: r - 1,
                        byte: off,
                        bytes: 4,
                        thread: self.tid0 + lane as u32,
                        inst: self.inst,
                        acc: Acc::Read,
                    });
                }
                return Ok(v);
            }
        }
        self.load(Space::Global, addr, 4, lane)
    }

    /// Records an access for the checks and the observer (`observe`).
    #[inline(always)]
    fn note(&mut self, space: Space, at: usize, n: usize, lane: usize, acc: Acc) {
        let (buf, byte) = match space {
            Space::Shared | Space::Const => (0, at),
            Space::Global => ((at >> 48) - 1, at & ((1 << 48) - 1)),
            _ => return,
        };
        self.touch(Touch {
            space,
            buf,
            byte,
            bytes: n as u32,
            thread: self.tid0 + lane as u32,
            inst: self.inst,
            acc,
        });
    }

    /// Loads `n` bytes (1, 2, 4 or 8) at `addr` in `space` for `lane`.
    #[inline]
    pub fn load(
        &mut self,
        space: Space,
        addr: u64,
        n: usize,
        lane: usize,
    ) -> Result<u64, MemFault> {
        self.load_as(space, addr, n, lane, Acc::Read)
    }

    /// [`Spaces::load`], seen by the checks as `acc`.
    #[inline]
    pub fn load_as(
        &mut self,
        space: Space,
        addr: u64,
        n: usize,
        lane: usize,
        acc: Acc,
    ) -> Result<u64, MemFault> {
        let (sp, at) = self.locate(space, addr, n, lane)?;
        if self.watched() {
            self.note(sp, at, n, lane, acc);
        }
        let (b, off) = self.bytes_mut(sp, at);
        Ok(read(b, off, n))
    }

    /// Stores the low `n` bytes of `v` at `addr` in `space` for `lane`.
    #[inline]
    pub fn store(
        &mut self,
        space: Space,
        addr: u64,
        n: usize,
        v: u64,
        lane: usize,
    ) -> Result<(), MemFault> {
        self.store_as(space, addr, n, v, lane, Acc::Write)
    }

    /// [`Spaces::store`], seen by the checks as `acc`.
    #[inline]
    pub fn store_as(
        &mut self,
        space: Space,
        addr: u64,
        n: usize,
        v: u64,
        lane: usize,
        acc: Acc,
    ) -> Result<(), MemFault> {
        let (sp, at) = self.locate(space, addr, n, lane)?;
        if sp == Space::Const || sp == Space::Param {
            return Err(MemFault {
                space: sp,
                name: Some("read-only memory".into()),
                index: at as i64,
                len: 0,
                elem: 1,
                read_only: true,
            });
        }
        if sp == Space::Global {
            self.writable(at)?;
        }
        if self.watched() {
            self.note(sp, at, n, lane, acc);
        }
        let (b, off) = self.bytes_mut(sp, at);
        write(b, off, n, v);
        Ok(())
    }
}
