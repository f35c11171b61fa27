//! Who touched what: the observer behind `runner show`, and the picture's model it fills.
//!
//! [`Recorder`] watches one block of one launch (`sim::observe`): for every global
//! buffer and `__shared__` array, per barrier phase (the accesses between two
//! `__syncthreads()`), which threads read and which wrote each element (4 bytes of a buffer; of a
//! shared array, one of its declared type, named in its declared shape). After the launch
//! the simulator hands over its marks (the fault that stopped it, the races and reads of
//! unwritten shared words and writes into a pitched output's padding the checks found); those of
//! this block are placed at their element and phase. `picture` draws a [`Touches`] in the terminal, `svg` as an image.

use ptx::ir::{Op, Space};
use sim::observe::{
    Acc, Array, Launched, Mark, MarkKind, Observer, Side, Touch, shared_arrays, shared_element,
};
use std::collections::BTreeMap;

/// A global buffer or a `__shared__` array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Area {
    pub name: String,
    pub shared: bool,
    /// Elements (4 bytes each; a shared array's of its declared type).
    pub len: usize,
    /// Elements per row where the buffer is 2D (drawn as rows in the SVG).
    pub columns: Option<usize>,
    /// A 2D output's image width: the columns from here to `columns` are its rows' padding,
    /// which no thread may write.
    pub padding_from: Option<usize>,
    /// A `__shared__` array's declaration, where the source's agrees with the PTX: an array of
    /// two or more dimensions is drawn by its rows (`columns`: its last dimension), each named
    /// as the learner indexes it (`sb[1][0]`).
    pub decl: Option<ptx::declared::SharedDecl>,
}

impl Area {
    /// Row `r` of a `__shared__` array of two or more dimensions, as the learner indexes it:
    /// `sb[1][0]`.
    pub fn row_name(&self, r: i64) -> Option<String> {
        let (d, c) = (self.decl.as_ref()?, self.columns? as u64);
        let bytes = u64::from(d.elem_bytes);
        let e = d.element(u64::try_from(r).ok()? * c * bytes, d.elem_bytes);
        Some(e[..e.rfind('[').unwrap_or(e.len())].to_string())
    }
}

/// What `runner show` knows of a global buffer before the launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extent {
    pub name: String,
    /// Elements (4 bytes each).
    pub len: usize,
    /// Elements per row where the buffer is 2D.
    pub columns: Option<usize>,
    /// A 2D output's image width (the rest of each row is padding).
    pub padding_from: Option<usize>,
}

/// The threads (block-linear) that read and that wrote one element in one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub readers: Vec<u32>,
    pub writers: Vec<u32>,
}

/// The accesses between two barriers: per area, the touched elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phase {
    /// The line of the `__syncthreads()` that ends it (`None`: the kernel's end).
    pub until: Option<u32>,
    pub cells: Vec<BTreeMap<i64, Cell>>,
}

/// A mark placed at its element and phase, with its sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub kind: MarkKind,
    pub area: usize,
    pub index: i64,
    pub phase: usize,
    /// Whether the access drawn with the mark is a write (it goes on the write row).
    pub write: bool,
    /// The thread of that access (drawn in the cell where nothing else touched it).
    pub thread: u32,
    pub text: String,
}

/// Everything `runner show` draws for one block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touches {
    pub block: [u32; 3],
    pub threads: [u32; 3],
    pub areas: Vec<Area>,
    pub phases: Vec<Phase>,
    pub marks: Vec<Placed>,
}

impl Touches {
    /// The elements of area `a` drawn: from the first to the last touched or marked.
    pub fn span(&self, a: usize) -> Option<(i64, i64)> {
        let touched = self
            .phases
            .iter()
            .flat_map(|p| p.cells[a].keys().copied())
            .chain(self.marks.iter().filter(|m| m.area == a).map(|m| m.index));
        touched.fold(None, |s, i| match s {
            None => Some((i, i)),
            Some((lo, hi)) => Some((lo.min(i), hi.max(i))),
        })
    }

    /// The mark at element `index` of area `a` in phase `p`, if any.
    pub fn mark_at(&self, a: usize, p: usize, index: i64) -> Option<&Placed> {
        self.marks
            .iter()
            .find(|m| m.area == a && m.phase == p && m.index == index)
    }
}

/// The observer: records block `block` (launch-linear) of the launch it watches.
pub struct Recorder {
    block: u32,
    recording: bool,
    lines: Vec<u32>,
    /// The line of each instruction that is a `bar.sync`.
    bars: Vec<Option<u32>>,
    last_bar: Option<u32>,
    arrays: Vec<Array>,
    globals: usize,
    grid: [u32; 3],
    extents: Vec<Extent>,
    pub touches: Touches,
}

impl Recorder {
    /// A recorder of block `block` of a launch of `grid` whose global buffers are `extents`.
    pub fn new(block: [u32; 3], grid: [u32; 3], extents: Vec<Extent>) -> Self {
        Recorder {
            block: block[0] + grid[0] * (block[1] + grid[1] * block[2]),
            recording: false,
            lines: vec![],
            bars: vec![],
            last_bar: None,
            arrays: vec![],
            globals: 0,
            grid,
            extents,
            touches: Touches {
                block,
                ..Touches::default()
            },
        }
    }

    fn line(&self, inst: u32) -> u32 {
        self.lines.get(inst as usize).copied().unwrap_or(0)
    }

    fn record(&mut self, area: usize, index: i64, thread: u32, write: bool) {
        let Some(phase) = self.touches.phases.last_mut() else {
            return;
        };
        let cell = phase.cells[area].entry(index).or_default();
        let ids = if write {
            &mut cell.writers
        } else {
            &mut cell.readers
        };
        if let Err(at) = ids.binary_search(&thread) {
            ids.insert(at, thread);
        }
    }

    /// The phase in which `thread` touched element `index` of `area` (the last one), else the last.
    fn phase_of(&self, area: usize, index: i64, thread: u32) -> usize {
        let last = self.touches.phases.len().saturating_sub(1);
        (0..=last)
            .rev()
            .find(|&p| {
                self.touches.phases[p].cells[area]
                    .get(&index)
                    .is_some_and(|c| c.readers.contains(&thread) || c.writers.contains(&thread))
            })
            .unwrap_or(last)
    }
}

impl Observer for Recorder {
    fn start(&mut self, l: &Launched<'_>) {
        self.lines = l.prog.insts.iter().map(|i| i.line).collect();
        self.bars = l
            .prog
            .insts
            .iter()
            .map(|i| matches!(i.op, Op::Bar).then_some(i.line))
            .collect();
        self.arrays = shared_arrays(l.prog, l.shared_bytes);
        self.globals = l.buffers.len();
        self.grid = l.grid;
        self.touches.threads = l.block;
        self.touches.areas = l
            .buffers
            .iter()
            .map(|name| {
                let known = self.extents.iter().find(|e| &e.name == name);
                Area {
                    name: name.clone(),
                    shared: false,
                    len: known.map_or(0, |e| e.len),
                    columns: known.and_then(|e| e.columns),
                    padding_from: known.and_then(|e| e.padding_from),
                    decl: None,
                }
            })
            .chain(self.arrays.iter().map(|a| {
                Area {
                    name: a.name.clone(),
                    shared: true,
                    len: a.len(),
                    columns: (a.decl.as_ref())
                        .filter(|d| d.dims.len() > 1)
                        .and_then(|d| *d.dims.last()?)
                        .map(|c| c as usize),
                    padding_from: None,
                    decl: a.decl.clone(),
                }
            }))
            .collect();
    }

    fn begin_block(&mut self, _block: [u32; 3], linear: u32, _shared: usize) {
        self.recording = linear == self.block;
        if self.recording {
            self.new_phase();
        }
    }

    fn issue(&mut self, i: sim::observe::Issue) {
        if self.recording
            && let Some(Some(line)) = self.bars.get(i.inst as usize)
        {
            self.last_bar = Some(*line);
        }
    }

    fn access(&mut self, t: &Touch) {
        if !self.recording || t.acc == Acc::Quiet {
            return;
        }
        // A shared array's elements are its declared type's (`float2`: 8 bytes), else words.
        let (area, first, elem) = match t.space {
            Space::Global => (t.buf, t.byte, 4),
            Space::Shared => match shared_element(&self.arrays, t.byte) {
                Some((a, _)) => {
                    let at = self.arrays.iter().position(|x| x == a).unwrap_or(0);
                    (self.globals + at, t.byte - a.offset, a.elem())
                }
                None => return,
            },
            _ => return,
        };
        let last = first + t.bytes.max(1) as usize - 1;
        for e in first / elem..=last / elem {
            let e = e as i64;
            if t.acc != Acc::Write {
                self.record(area, e, t.thread, false);
            }
            if t.acc != Acc::Read {
                self.record(area, e, t.thread, true);
                self.padding_write(area, e, t);
            }
        }
    }

    fn barrier(&mut self) {
        if self.recording {
            if let Some(p) = self.touches.phases.last_mut() {
                p.until = self.last_bar;
            }
            self.new_phase();
        }
    }

    fn end_block(&mut self) {
        self.recording = false;
    }

    fn mark(&mut self, m: &Mark) {
        if m.block != self.block {
            return;
        }
        let Some(area) = self
            .touches
            .areas
            .iter()
            .position(|a| a.name == m.name && a.shared == (m.space == Space::Shared))
        else {
            return;
        };
        let Some(last) = m.sides.last() else {
            return;
        };
        // The checks' padding write was marked when this block made it.
        if self
            .touches
            .marks
            .iter()
            .any(|p| p.kind == m.kind && p.area == area && p.index == m.index)
        {
            return;
        }
        let t = |s: &Side| {
            let own = s.block == self.block;
            let who = if own {
                format!("thread {}", s.thread)
            } else {
                format!("thread {} of block {}", s.thread, s.block)
            };
            let verb = if s.write { "wrote" } else { "read" };
            format!("{who} {verb} it (line {})", self.line(s.inst))
        };
        let a = &self.touches.areas[area];
        let what = match (m.kind, a.columns, a.padding_from) {
            (MarkKind::OutOfBounds, ..) => "out of bounds".to_string(),
            (MarkKind::Race, ..) => "race".to_string(),
            (MarkKind::Uninit, ..) => "read before any thread wrote it".to_string(),
            (MarkKind::Padding, Some(stride), Some(cols)) => format!(
                "written in the padding (row {}, column {}; the image has {cols} columns)",
                m.index / stride as i64,
                m.index % stride as i64
            ),
            (MarkKind::Padding, ..) => "written in the padding".to_string(),
        };
        let sides: Vec<String> = m.sides.iter().map(t).collect();
        let element = match self.arrays.iter().find(|x| a.shared && x.name == a.name) {
            _ if let Some(e) = &m.element => e.clone(),
            Some(x) => x.element(m.index),
            None => format!("{}[{}]", m.name, m.index),
        };
        let text = format!("{element}: {what}: {}", sides.join(", then "));
        let phase = if m.kind == MarkKind::OutOfBounds {
            self.touches.phases.len().saturating_sub(1)
        } else {
            self.phase_of(area, m.index, last.thread)
        };
        self.touches.marks.push(Placed {
            kind: m.kind,
            area,
            index: m.index,
            phase,
            write: last.write,
            thread: last.thread,
            text,
        });
    }
}

impl Recorder {
    /// Marks a write into a 2D output's padding (every one of the block, where the checks
    /// report the first of the launch).
    fn padding_write(&mut self, area: usize, index: i64, t: &Touch) {
        let a = &self.touches.areas[area];
        let (Some(stride), Some(cols)) = (a.columns, a.padding_from) else {
            return;
        };
        let marked = |m: &Placed| m.kind == MarkKind::Padding && m.area == area && m.index == index;
        if a.shared
            || (index as usize) % stride.max(1) < cols
            || self.touches.marks.iter().any(marked)
        {
            return;
        }
        let side = Side {
            block: self.block,
            thread: t.thread,
            inst: t.inst,
            write: true,
        };
        self.mark(&Mark {
            kind: MarkKind::Padding,
            space: Space::Global,
            name: a.name.clone(),
            index,
            block: self.block,
            sides: vec![side],
            element: None,
        });
    }

    fn new_phase(&mut self) {
        let n = self.touches.areas.len();
        self.touches.phases.push(Phase {
            until: None,
            cells: vec![BTreeMap::new(); n],
        });
    }
}
