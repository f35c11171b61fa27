//! What the checks found, as values: a [`Finding`] (a race, an uninitialized read, an access
//! over budget, unwritten outputs, a write into a pitched output's padding) with the [`Access`]es involved, kept with its repeat count;
//! and the learner's names of shared memory (`tile[12]`, demangled from NVRTC's
//! `_ZZ6conv1dE4tile`). `fault` writes the sentences.

use ptx::ir::Program;
use ptx::local_name;

/// How an access touches memory, for the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acc {
    Read,
    Write,
    /// An atomic read-modify-write: counts as one write and never races with another atomic.
    Atomic,
    /// Not seen by the checks (the store half of an atomic).
    Quiet,
}

/// One side of a finding: a thread (block-linear for shared, launch-linear for global), the
/// instruction, and whether it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub thread: u32,
    pub inst: u32,
    pub write: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// `byte`: the first byte both touched; `width`: the later access's size in bytes (the
    /// element size its array is indexed by).
    SharedRace {
        block: u32,
        byte: u32,
        width: u32,
        first: Access,
        second: Access,
        /// `first` is a `cp.async` or bulk copy still in flight (`inflight`), not landed or not
        /// waited for.
        flight: bool,
    },
    GlobalRace {
        buf: usize,
        index: usize,
        first: Access,
        second: Access,
    },
    Uninit {
        block: u32,
        byte: u32,
        width: u32,
        reader: Access,
    },
    OverBudget {
        at: Access,
        limit: u32,
        /// The buffer and element of the access past the budget.
        buf: usize,
        index: usize,
    },
    /// More products on the CUDA cores per output (rounded up) than the budget's `limit`:
    /// `products` in all over `outputs`; `inst`: the latest such instruction.
    ProductsOverBudget {
        per_output: u32,
        limit: u32,
        products: u64,
        outputs: u64,
        inst: u32,
    },
    /// The tensor cores did `done` multiply-adds of the `needed` the convolution makes, fewer
    /// than all but the `cuda` the budget lets the CUDA cores do.
    TensorShort { done: u64, needed: u64, cuda: u64 },
    /// More shared reads per product on the CUDA cores than the budget's ratio `limit` (reads,
    /// products); `made`: the launch's (shared reads, products); `inst`: the latest shared read.
    SharedOverBudget {
        made: (u64, u64),
        limit: (u32, u32),
        inst: u32,
    },
    /// Block `block` read `reads` elements of buffer `buf` where its tile is `tile` (and
    /// `allowed` with the slack); `first`: its first read past `allowed`, of element `index`.
    TileOverBudget {
        block: u32,
        buf: usize,
        reads: u64,
        tile: u64,
        allowed: u64,
        first: Access,
        index: usize,
    },
    /// More reads of buffer `buf` (the input of puzzle 10) than the budget `allowed` from the
    /// blocks' staged regions; `outputs`: the output elements; `inst`: the latest read.
    StagedOverBudget {
        buf: usize,
        reads: u64,
        allowed: u64,
        outputs: u64,
        inst: u32,
    },
    Unwritten {
        buf: usize,
        count: usize,
        len: usize,
        first: usize,
        /// The launch-linear thread that should have written `first`, when the pattern says.
        owner: Option<u32>,
        /// The instruction that wrote the nearest written element.
        store: Option<u32>,
        /// Threads in the launch, when one thread per element would need more.
        short: Option<u64>,
    },
    /// A write into the padding of a pitched output (the flat element, its row and column).
    Padding {
        buf: usize,
        index: usize,
        row: usize,
        col: usize,
        at: Access,
    },
    /// A read or an atomic of an output element no thread of the launch had written yet.
    ReadUnwritten {
        buf: usize,
        index: usize,
        at: Access,
        atomic: bool,
    },
}

impl Finding {
    /// Findings with one key are one diagnostic: the kind and the learner's lines.
    pub fn key(&self, lines: &[u32]) -> (u8, u32, u32) {
        let line = |i: u32| lines.get(i as usize).copied().unwrap_or(0);
        match self {
            Finding::SharedRace { first, second, .. }
            | Finding::GlobalRace { first, second, .. } => {
                let (a, b) = (line(first.inst), line(second.inst));
                (0, a.min(b), a.max(b))
            }
            Finding::Uninit { reader, .. } => (1, line(reader.inst), 0),
            Finding::OverBudget { at, .. } => (2, line(at.inst), u32::from(at.write)),
            Finding::Unwritten { buf, .. } => (3, *buf as u32, 0),
            Finding::ProductsOverBudget { .. } => (6, 0, 0),
            Finding::TensorShort { .. } => (9, 0, 0),
            Finding::TileOverBudget { first, .. } => (10, line(first.inst), 0),
            Finding::SharedOverBudget { .. } => (7, 0, 0),
            Finding::StagedOverBudget { .. } => (8, 0, 0),
            Finding::Padding { at, .. } => (4, line(at.inst), 0),
            Finding::ReadUnwritten { at, .. } => (5, line(at.inst), 0),
        }
    }
}

/// A kept finding, how often its key recurred, and (on the last kept of its kind) how many
/// other findings of its kind were dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    pub finding: Finding,
    pub repeats: u32,
    pub hidden: u32,
}

/// The learner's name of shared byte `byte` read or written `width` bytes at a time: in the
/// array's declared type and shape where the source's declaration is known and fits the bytes
/// (`sm[2600].x`, `As[1][0][0]`), else `array[index]` with elements of that width.
pub fn shared_name(prog: &Program, byte: u32, width: u32) -> String {
    let b = u64::from(byte);
    match array_at(prog, b) {
        Some((name, at, size)) => {
            let name = local_name(name);
            match declared(prog, name, size) {
                Some(d) => format!("`{}`", d.element(b - at, width)),
                None => format!("`{name}[{}]`", (b - at) / u64::from(width.clamp(1, 16))),
            }
        }
        None => format!("shared byte {byte}"),
    }
}

/// The shared array holding byte `b`: its PTX name, its first byte and its size (`None` for the
/// dynamic array, which runs to the end).
fn array_at(prog: &Program, b: u64) -> Option<(&str, u64, Option<u64>)> {
    prog.shared
        .iter()
        .find(|s| s.offset <= b && b < s.offset + s.size)
        .map(|s| (s.name.as_str(), s.offset, Some(s.size)))
        .or_else(|| {
            prog.dyn_shared_name
                .as_deref()
                .filter(|_| b >= prog.dyn_shared_offset)
                .map(|n| (n, prog.dyn_shared_offset, None))
        })
}

/// Where the access at instruction `inst` to shared byte `byte` goes through a pointer the
/// learner declared into the array holding it, and indexes at that line: ` through your pointer
/// `tile``; empty otherwise.
pub fn through(prog: &Program, byte: u32, inst: u32) -> String {
    match array_at(prog, u64::from(byte)) {
        Some((name, _, _)) => through_array(prog, local_name(name), inst),
        None => String::new(),
    }
}

/// [`through`] for an access to shared array `array` (as the learner declared it).
pub fn through_array(prog: &Program, array: &str, inst: u32) -> String {
    let Some(line) = prog.insts.get(inst as usize).map(|i| i.line) else {
        return String::new();
    };
    let mut names = prog
        .aliases
        .iter()
        .filter(|a| a.array == array && a.lines.contains(&line))
        .map(|a| format!("`{}`", a.name));
    match names.next() {
        Some(first) => format!(" through your pointer {first}"),
        None => String::new(),
    }
}

/// The source's declaration of shared array `name` of `size` bytes (`None` for the dynamic
/// array), where it agrees with the PTX: a static one of the same bytes, an `extern` one
/// unsized.
pub fn declared<'p>(
    prog: &'p Program,
    name: &str,
    size: Option<u64>,
) -> Option<&'p ptx::declared::SharedDecl> {
    let d = prog.declared.iter().find(|d| d.name == name)?;
    match size {
        Some(bytes) => (d.bytes() == Some(bytes)).then_some(d),
        None => (d.dims.first() == Some(&None)).then_some(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx::ir::{Space, Symbol};

    #[test]
    fn shared_bytes_are_named_in_the_declared_type_and_shape_where_it_fits() {
        let mut prog = Program {
            dyn_shared_name: Some("sm".into()),
            dyn_shared_offset: 2 * 16 * 17 * 4,
            shared: vec![Symbol {
                name: "_ZZ1kE2As".into(),
                space: Space::Shared,
                offset: 0,
                size: 2 * 16 * 17 * 4,
            }],
            ..Program::default()
        };
        let sm = 2 * 16 * 17 * 4;
        assert_eq!(shared_name(&prog, sm + 2600 * 8, 4), "`sm[5200]`");
        assert_eq!(shared_name(&prog, 16 * 17 * 4, 4), "`As[272]`");
        prog.declared = ptx::declared::parse(
            "extern __shared__ float2 sm[]; __shared__ float As[2][16][17];",
            &[],
        );
        assert_eq!(shared_name(&prog, sm + 2600 * 8, 4), "`sm[2600].x`");
        assert_eq!(shared_name(&prog, 16 * 17 * 4, 4), "`As[1][0][0]`");
        // A declaration whose bytes disagree with the PTX's is not trusted.
        prog.declared = ptx::declared::parse("__shared__ float As[2][16][16];", &[]);
        assert_eq!(shared_name(&prog, 16 * 17 * 4, 4), "`As[272]`");
    }
}
