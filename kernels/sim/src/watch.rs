//! How the machine tells the observers (`observe`) what happens: the checks as the static
//! observer, an attached one through `dyn`, each access and issued instruction as it happens,
//! and after the launch the checks' findings and the fault as [`Mark`]s at their element.

use crate::check::Checks;
use crate::finding::{Finding, Kept};
use crate::machine::Machine;
use crate::memory::Spaces;
use crate::observe::*;
use ptx::ir::Space;

impl Observer for Checks {
    fn begin_block(&mut self, _block: [u32; 3], linear: u32, shared_bytes: usize) {
        Checks::begin_block(self, linear, shared_bytes);
    }
    #[inline(always)]
    fn access(&mut self, t: &Touch) {
        match t.space {
            Space::Shared => self.shared(t.byte, t.bytes as usize, t.thread, t.inst, t.acc),
            Space::Global => self.global(t.buf, t.byte, t.thread, t.inst, t.acc),
            _ => {}
        }
    }
    fn barrier(&mut self) {
        Checks::barrier(self);
    }
    fn end_block(&mut self) {
        Checks::end_block(self);
    }
}

impl Spaces<'_> {
    /// Whether anyone sees accesses: the checks or an attached observer.
    #[inline(always)]
    pub(super) fn watched(&self) -> bool {
        self.watch
    }

    /// Hands one access to the checks and the attached observer.
    #[inline(always)]
    pub(super) fn touch(&mut self, t: Touch) {
        if self.chk.on {
            Observer::access(self.chk, &t);
        }
        if self.obs.is_some() && !self.unobserved {
            self.tell(&t);
        }
    }

    /// The attached observer's share of [`Spaces::touch`], out of the checks' way.
    #[inline(never)]
    fn tell(&mut self, t: &Touch) {
        if let Some(o) = self.obs.as_deref_mut() {
            o.access(t);
        }
    }
}

impl Machine<'_> {
    /// Calls `f` on the checks, then on the attached observer.
    pub(super) fn seen(&mut self, f: impl Fn(&mut dyn Observer)) {
        f(&mut self.chk);
        if let Some(o) = self.obs.as_deref_mut() {
            f(o);
        }
    }

    /// Tells the attached observer that a warp issued an instruction.
    #[inline(always)]
    pub(super) fn issued(&mut self, warp: u32, inst: usize, active: u32, exec: u32) {
        if let Some(o) = self.obs.as_deref_mut() {
            o.issue(Issue {
                warp,
                inst: inst as u32,
                active,
                exec,
            });
        }
    }
}

/// A finding of the checks as a [`Mark`] (`None` for those with no one element: budgets,
/// unwritten outputs, which the report describes in full).
pub(super) fn finding_mark(k: &Kept, l: &Launched<'_>) -> Option<Mark> {
    let tpb = l.block.iter().product::<u32>().max(1);
    let side = |block: u32, a: &crate::finding::Access| Side {
        block,
        thread: a.thread,
        inst: a.inst,
        write: a.write,
    };
    // One access of a global element by a launch-linear thread.
    let one = |kind, buf: usize, index: usize, at: &crate::finding::Access| Mark {
        kind,
        space: Space::Global,
        name: l.buffers.get(buf).cloned().unwrap_or_default(),
        index: index as i64,
        block: at.thread / tpb,
        sides: vec![Side {
            block: at.thread / tpb,
            thread: at.thread % tpb,
            ..side(0, at)
        }],
        element: None,
    };
    let arrays = shared_arrays(l.prog, l.shared_bytes);
    let shared = |byte: u32| {
        shared_element(&arrays, byte as usize).map_or(
            (format!("shared byte {byte}"), i64::from(byte / 4)),
            |(a, i)| (a.name.clone(), i),
        )
    };
    // The element as the diagnostic names it, from the learner's declaration.
    let named = |byte: u32, width: u32| {
        let n = crate::finding::shared_name(l.prog, byte, width);
        (!n.starts_with("shared byte")).then(|| n.trim_matches('`').to_string())
    };
    Some(match &k.finding {
        Finding::SharedRace {
            block,
            byte,
            width,
            first,
            second,
            ..
        } => {
            let (name, index) = shared(*byte);
            Mark {
                kind: MarkKind::Race,
                space: Space::Shared,
                name,
                index,
                block: *block,
                sides: vec![side(*block, first), side(*block, second)],
                element: named(*byte, *width),
            }
        }
        Finding::Uninit {
            block,
            byte,
            width,
            reader,
        } => {
            let (name, index) = shared(*byte);
            Mark {
                kind: MarkKind::Uninit,
                space: Space::Shared,
                name,
                index,
                block: *block,
                sides: vec![side(*block, reader)],
                element: named(*byte, *width),
            }
        }
        Finding::GlobalRace {
            buf,
            index,
            first,
            second,
        } => {
            let global = |a: &crate::finding::Access| Side {
                block: a.thread / tpb,
                thread: a.thread % tpb,
                ..side(0, a)
            };
            Mark {
                kind: MarkKind::Race,
                space: Space::Global,
                name: l.buffers.get(*buf).cloned().unwrap_or_default(),
                index: *index as i64,
                block: second.thread / tpb,
                sides: vec![global(first), global(second)],
                element: None,
            }
        }
        Finding::ReadUnwritten { buf, index, at, .. } => one(MarkKind::Uninit, *buf, *index, at),
        Finding::Padding { buf, index, at, .. } => one(MarkKind::Padding, *buf, *index, at),
        Finding::OverBudget { .. }
        | Finding::ProductsOverBudget { .. }
        | Finding::TensorShort { .. }
        | Finding::TileOverBudget { .. }
        | Finding::SharedOverBudget { .. }
        | Finding::StagedOverBudget { .. }
        | Finding::Unwritten { .. } => {
            return None;
        }
    })
}

/// The out-of-bounds fault that stopped a launch, as a [`Mark`].
pub(super) fn fault_mark(f: &crate::fault::Located, l: &Launched<'_>) -> Option<Mark> {
    let crate::fault::Fault::OutOfBounds { write, mem } = &f.fault else {
        return None;
    };
    let [x, y, z] = f.block;
    let block = x + l.grid[0] * (y + l.grid[1] * z);
    let thread = f
        .thread
        .map_or(0, |[tx, ty, tz]| tx + l.block[0] * (ty + l.block[1] * tz));
    // Shared faults outside every array are indexed in bytes; name them by element (of the
    // array's declared type, as `runner show` draws it).
    let elem = match (&mem.name, mem.space) {
        (Some(n), Space::Shared) => shared_arrays(l.prog, l.shared_bytes)
            .iter()
            .find(|a| &a.name == n)
            .map_or(4, |a| a.elem() as i64),
        _ => 4,
    };
    let index = if mem.name.is_none() {
        mem.index.div_euclid(4)
    } else {
        (mem.index * i64::from(mem.elem.max(1))).div_euclid(elem)
    };
    Some(Mark {
        kind: MarkKind::OutOfBounds,
        space: mem.space,
        name: mem.name.clone().unwrap_or_else(|| "shared".into()),
        index,
        block,
        sides: vec![Side {
            block,
            thread,
            inst: f.inst.unwrap_or(0) as u32,
            write: *write,
        }],
        element: None,
    })
}
