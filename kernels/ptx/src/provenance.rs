//! Which `__shared__` array each shared access belongs to, for bounds per array.
//!
//! PTX addresses a shared array as its symbol plus an offset computed in registers, so the block's
//! shared window alone cannot tell `sa[64]` from `sb[0]` when `sb` follows `sa`. The rule: a
//! register *derives from* an array when the array's symbol flows into it through register
//! arithmetic (`mov`, `add`, `mul`, `shl`, `cvt`, `cvta`, `selp`, `shfl`, ...), computed once per
//! kernel over all instructions together (flow-insensitively, to a fixpoint). A load, an atomic or
//! a comparison starts no derivation: a value read from memory is not an address derived from an
//! array. An access `[%r+off]` whose base register derives from exactly one array, or `[sym+off]`,
//! is attributed to that array, and every byte it touches must lie in the array's [start, end)
//! (the dynamic `extern __shared__` array ends at the launch's dynamic size); otherwise it is
//! `out_of_bounds`, naming the array, the index (in units of the access width) and its length.
//!
//! Limits: a register that may derive from two arrays (a pointer chosen between them, a loop
//! register reused for both, the difference of two arrays' pointers added to a third) is
//! attributed to none, and so is a pointer stored to memory and loaded back: those accesses get
//! only the block-window check. A pointer computed from one array on purpose to reach another
//! (`sa + TPB` used as `sb`) is reported, as C++ leaves it undefined too. Only the first name of
//! several `extern __shared__` arrays is known (they all alias the dynamic array).

use crate::ir::*;

/// No array: the access gets only the window check.
pub const NONE: u32 = u32::MAX;
const MANY: u32 = u32::MAX - 1;

fn join(a: u32, b: u32) -> u32 {
    match (a, b) {
        (NONE, x) | (x, NONE) => x,
        (x, y) if x == y => x,
        _ => MANY,
    }
}

/// The registers an operation writes and the sources it computes them from, for the
/// operations through which an address keeps its array.
fn flow(op: &Op) -> (Vec<Slot>, Vec<Src>) {
    match op {
        Op::Un { d, a, .. } | Op::Cvt { d, a, .. } | Op::Cvta { d, a, .. } => (vec![*d], vec![*a]),
        Op::Shfl { d, a, .. } => (vec![*d], vec![*a]),
        Op::Bin { d, a, b, .. } | Op::Selp { d, a, b, .. } => (vec![*d], vec![*a, *b]),
        Op::Tern { d, a, b, c, .. } => (vec![*d], vec![*a, *b, *c]),
        Op::Bfi { d, f, b, .. } => (vec![*d], vec![*f, *b]),
        Op::Pack { d, parts, .. } => (vec![*d], parts.clone()),
        Op::Unpack { ds, a, .. } => (ds.iter().flatten().copied().collect(), vec![*a]),
        _ => (vec![], vec![]),
    }
}

/// The array of each instruction's shared access ([`NONE`] where unknown or not an access),
/// from the symbol uses noted while decoding: (instruction, array, used as the address).
/// Array `prog.shared.len()` is the dynamic one.
pub fn attribute(prog: &Program, uses: &[(u32, u32, bool)]) -> Vec<u32> {
    let mut tag = vec![NONE; prog.nregs as usize];
    let mut from_syms = vec![NONE; prog.insts.len()];
    let mut addr_sym = vec![NONE; prog.insts.len()];
    for &(i, a, addr) in uses {
        let slot = if addr { &mut addr_sym } else { &mut from_syms };
        if let Some(t) = slot.get_mut(i as usize) {
            *t = join(*t, a);
        }
    }
    let flows: Vec<_> = prog.insts.iter().map(|i| flow(&i.op)).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (i, (ds, srcs)) in flows.iter().enumerate() {
            if ds.is_empty() {
                continue;
            }
            let mut t = from_syms[i];
            for s in srcs {
                if let Src::Reg(r) = s {
                    t = join(t, tag[*r as usize]);
                }
            }
            for d in ds {
                let n = join(tag[*d as usize], t);
                if n != tag[*d as usize] {
                    tag[*d as usize] = n;
                    changed = true;
                }
            }
        }
    }
    prog.insts
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let addr = match &inst.op {
                Op::Ld { addr, .. }
                | Op::St { addr, .. }
                | Op::Atom { addr, .. }
                | Op::CpAsync { dst: addr, .. } => addr,
                _ => return NONE,
            };
            let a = addr.base.map_or(addr_sym[i], |r| tag[r as usize]);
            if a == MANY { NONE } else { a }
        })
        .collect()
}

/// The shared byte range [start, end) of array `a` in a block of `shared_len` bytes.
#[inline]
pub fn range(prog: &Program, a: u32, shared_len: usize) -> (u64, u64) {
    match prog.shared.get(a as usize) {
        Some(s) => (s.offset, s.offset + s.size),
        None => (prog.dyn_shared_offset, shared_len as u64),
    }
}

/// The learner's name of array `a`.
pub fn name(prog: &Program, a: u32) -> String {
    let n = match prog.shared.get(a as usize) {
        Some(s) => s.name.as_str(),
        None => prog.dyn_shared_name.as_deref().unwrap_or("extern shared"),
    };
    crate::local_name(n).to_string()
}
