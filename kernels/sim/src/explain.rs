//! How a finding of the checks reads to the learner: [`finding_diagnostic`] turns a kept
//! finding (a race, an uninitialized read, an unwritten output, a budget) into a diagnostic at
//! the learner's line, with the arrays, elements and threads named as the learner wrote them
//! ([`Names`]). `fault` says the same for the fault that stops a launch.

use crate::finding::{Access, Finding, Kept, shared_name, through};
use crate::site::Locate;
use ptx::ir::BulkOp;
use ptx::ir::{Op, Program};
use spec::diag::{Diagnostic, Kind};
use spec::job::Pitch;

/// What the diagnostics of the checks need to name threads, buffers and lines.
pub struct Names<'a> {
    pub prog: &'a Program,
    pub buffers: &'a [String],
    /// Input buffers the runner also copied into a `__constant__` array: (buffer, symbol).
    pub copies: &'a [(String, String)],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Per buffer, its shape when it is a pitched 2D output (its elements are named by row and
    /// column).
    pub pitches: &'a [Option<Pitch>],
}

impl Names<'_> {
    fn coords(dims: [u32; 3], linear: u32) -> [u32; 3] {
        [
            linear % dims[0],
            (linear / dims[0]) % dims[1],
            linear / (dims[0] * dims[1]),
        ]
    }
    fn thread(&self, tid: u32) -> [u32; 3] {
        Self::coords(self.block, tid)
    }
    /// Block and thread of launch-linear thread `g`.
    fn global(&self, g: u32) -> ([u32; 3], [u32; 3]) {
        let tpb = self.block.iter().product::<u32>().max(1);
        (Self::coords(self.grid, g / tpb), self.thread(g % tpb))
    }
    /// Instruction `inst`'s line for a sentence: the learner's call where it is in a header's
    /// function (`76, in `mma.hpp` line 415`).
    fn line(&self, inst: u32) -> String {
        self.prog.learner_line(inst)
    }
    fn located(&self, d: Diagnostic, inst: u32) -> Diagnostic {
        match self.prog.insts.get(inst as usize) {
            Some(i) => self.prog.locate(d, i),
            None => d,
        }
    }
    fn buffer(&self, buf: usize) -> &str {
        self.buffers.get(buf).map_or("?", |s| s.as_str())
    }
    /// Element `i` of buffer `buf` as the learner indexes it: `output[7]`, or for a pitched 2D
    /// output `output` at row 1, column 2.
    fn element(&self, buf: usize, i: usize) -> String {
        let name = self.buffer(buf);
        match self.pitches.get(buf).copied().flatten() {
            Some(p) => {
                let (r, c) = p.at(i);
                format!("`{name}` at row {r}, column {c} (`{name}[{i}]`)")
            }
            None => format!("`{name}[{i}]`"),
        }
    }
}

fn t3(t: [u32; 3]) -> String {
    format!("({},{},{})", t[0], t[1], t[2])
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The learner's diagnostic for a finding of the checks.
pub fn finding_diagnostic(k: &Kept, n: &Names<'_>) -> Diagnostic {
    let (d, inst) = match &k.finding {
        &Finding::SharedRace {
            block,
            byte,
            width,
            ref first,
            ref second,
            flight,
        } => shared_race(n, block, (byte, width), first, second, flight),
        &Finding::GlobalRace {
            buf,
            index,
            ref first,
            ref second,
        } => global_race(n, (buf, index), first, second),
        Finding::Uninit {
            block,
            byte,
            width,
            reader,
        } => {
            let block = Names::coords(n.grid, *block);
            let msg = format!(
                "thread {} reads {} (line {}), but no thread of block {} has written it in this launch, so it holds garbage; usually an element that is never loaded, such as the halo past the block's own inputs or the zeros past the end of the input",
                t3(n.thread(reader.thread)),
                shared_name(n.prog, *byte, *width) + &through(n.prog, *byte, reader.inst),
                n.line(reader.inst),
                t3(block)
            );
            (
                Diagnostic::new(Kind::UninitializedRead, msg)
                    .in_thread(block, n.thread(reader.thread)),
                reader.inst,
            )
        }
        &Finding::OverBudget {
            ref at,
            limit,
            buf,
            index,
        } => over_budget(n, at, limit, (buf, index)),
        Finding::ProductsOverBudget {
            per_output,
            limit,
            products,
            outputs,
            inst,
        } => {
            let msg = format!(
                "the kernel made {} products on the CUDA cores for {} ({per_output} per output; each multiply counts once, a `fma`, `mul` or packed half of any precision, as here), and this puzzle allows {limit} per output, what an epilogue needs: the products belong on the tensor cores, through `mma.sync` in tf32 (or wmma, or wgmma on sm_90a); the budget is in the chapter's \"Contract and launch\"",
                grouped(*products),
                counted(*outputs, "output"),
            );
            (Diagnostic::new(Kind::BudgetExceeded, msg), *inst)
        }
        Finding::TensorShort { done, needed, cuda } => {
            let msg = format!(
                "the tensor cores did {} of the convolution's {} multiply-adds (counted from the `mma.sync`, `wmma.mma` and `wgmma` instructions the kernel ran, each its shape's M x N x K), and this puzzle wants all but the {} the CUDA cores may do there: the products belong on the tensor cores; the budget is in the chapter's \"Contract and launch\"",
                grouped(*done),
                grouped(*needed),
                grouped(*cuda),
            );
            (Diagnostic::new(Kind::BudgetExceeded, msg), u32::MAX)
        }
        Finding::SharedOverBudget {
            made: (reads, products),
            limit: (lr, lp),
            inst,
        } => {
            let per = |r: u64, f: u64| r as f64 / f.max(1) as f64;
            let msg = format!(
                "the kernel read {} elements of shared memory for {} products ({:.2} per product, the latest read here; each multiply of any instruction counts once, a `fma` or a `mul`), and this puzzle allows {:.2}, the share of a register window (the lesson of register blocking): keep OUTPUTS_PER_THREAD inputs in registers so that each shared read feeds OUTPUTS_PER_THREAD products; the budget is in the chapter's \"Contract and launch\"",
                grouped(*reads),
                grouped(*products),
                per(*reads, *products),
                per(u64::from(*lr), u64::from(*lp)),
            );
            (Diagnostic::new(Kind::BudgetExceeded, msg), *inst)
        }
        Finding::TileOverBudget {
            block,
            buf,
            reads,
            tile,
            allowed,
            first,
            index,
        } => {
            let (_, t) = n.global(first.thread);
            let b = Names::coords(n.grid, *block);
            let msg = format!(
                "block {} read {} elements of `{}` for a tile of {} (the inputs of its outputs and the kernel_size - 1 after them; with the ends of aligned vector loads a block may read {}); the first past them was `{}[{index}]`, by thread {} at line {}: load each element of the tile into shared memory once and read the window from there",
                t3(b),
                grouped(*reads),
                n.buffer(*buf),
                grouped(*tile),
                grouped(*allowed),
                n.buffer(*buf),
                t3(t),
                n.line(first.inst),
            );
            (
                Diagnostic::new(Kind::BudgetExceeded, msg).in_thread(b, t),
                first.inst,
            )
        }
        Finding::StagedOverBudget {
            buf,
            reads,
            allowed,
            outputs,
            inst,
        } => {
            let per = |r: u64| r as f64 / (*outputs).max(1) as f64;
            let msg = format!(
                "the kernel read {} elements of `{}` for {} ({:.2} per output, the latest read here), and this puzzle allows {} ({:.2} per output), the blocks' staged regions and a quarter more (the lesson of staging the tile once): load each block's (TILE_ROWS + kernel_rows - 1) x (TILE_COLS + kernel_cols - 1) region into shared memory once and read the window from there; the budget is in the chapter's \"Contract and launch\"",
                grouped(*reads),
                n.buffer(*buf),
                counted(*outputs, "output"),
                per(*reads),
                grouped(*allowed),
                per(*allowed),
            );
            (Diagnostic::new(Kind::BudgetExceeded, msg), *inst)
        }
        Finding::ReadUnwritten {
            buf,
            index,
            at,
            atomic,
        } => {
            let name = n.buffer(*buf);
            let (b, t) = n.global(at.thread);
            let what = if *atomic {
                "updates with an atomic"
            } else {
                "reads"
            };
            let msg = format!(
                "block {} thread {} {what} `{name}[{index}]` (line {}) before any thread of this launch has written it: the runner does not zero the outputs (they hold NaN, as memory from cudaMalloc holds whatever was there), so the value it starts from is garbage; write each output element once with a plain store, or sum into a register first",
                t3(b),
                t3(t),
                n.line(at.inst)
            );
            (
                Diagnostic::new(Kind::UninitializedRead, msg).in_thread(b, t),
                at.inst,
            )
        }
        Finding::Unwritten {
            buf,
            count,
            len,
            first,
            owner,
            store,
            short,
        } => (
            unwritten(n, *buf, (*count, *len, *first), *owner, *short),
            store.unwrap_or(u32::MAX),
        ),
        Finding::Padding {
            buf, row, col, at, ..
        } => {
            let (b, t) = n.global(at.thread);
            let msg = format!(
                "block {} thread {} wrote `{name}` at row {row}, column {col} (line {}): that column is past the image's last one, in the row's padding, which must be left as it was; the store's guard must test the column against the output's width (output_cols = input_cols - kernel_cols + 1), not against the stride",
                t3(b),
                t3(t),
                n.line(at.inst),
                name = n.buffer(*buf),
            );
            (
                Diagnostic::new(Kind::PaddingWritten, msg).in_thread(b, t),
                at.inst,
            )
        }
    };
    let mut d = n.located(d, inst);
    if k.repeats > 0 {
        d.message += &format!(" (the same happened {} more times)", k.repeats);
    }
    if k.hidden > 0 {
        d.message += &format!(
            " ({} more {} diagnostics at other lines not shown)",
            k.hidden, d.kind
        );
    }
    d
}

/// A race on shared memory: who did what where, with the copy's window where one side is a
/// `cp.async` or bulk copy; placed at the copy when it is still in flight.
fn shared_race(
    n: &Names<'_>,
    block: u32,
    (byte, width): (u32, u32),
    first: &Access,
    second: &Access,
    flight: bool,
) -> (Diagnostic, u32) {
    let t = RaceText {
        what: shared_name(n.prog, byte, width) + &through(n.prog, byte, second.inst),
        a: t3(n.thread(first.thread)),
        b: t3(n.thread(second.thread)),
        la: n.line(first.inst),
        lb: n.line(second.inst),
    };
    let msg = async_race(
        n,
        &t,
        (first, second),
        flight,
        race_sentence(&t, first, second),
    );
    let block = Names::coords(n.grid, block);
    // A race with a copy is placed at the copy, whose window the fix closes.
    let at = if is_copy(n, first) && flight {
        first
    } else {
        second
    };
    (
        Diagnostic::new(Kind::Race, msg).in_thread(block, n.thread(at.thread)),
        at.inst,
    )
}

/// A shared race's sides as its sentences name them: the element, the two threads and their
/// lines.
struct RaceText {
    what: String,
    a: String,
    b: String,
    la: String,
    lb: String,
}

/// The sentence of a race between two plain accesses: a write before a read, a read before a
/// write, or two writes.
fn race_sentence(t: &RaceText, first: &Access, second: &Access) -> String {
    let RaceText { what, a, b, la, lb } = t;
    match (first.write, second.write) {
        (true, false) => format!(
            "thread {b} reads {what} (line {lb}), which thread {a} wrote (line {la}) with no __syncthreads() in between: nothing makes the write happen before the read, and the threads of a warp are not guaranteed to run in lockstep; a __syncthreads() between filling shared memory and reading it is missing"
        ),
        (false, true) => format!(
            "thread {b} writes {what} (line {lb}) after thread {a} read it (line {la}) with no __syncthreads() in between, so the read may see the old or the new value; a __syncthreads() between the two is missing"
        ),
        _ => format!(
            "threads {a} and {b} both write {what} (lines {la} and {lb}) with no __syncthreads() in between, so the value that stays depends on timing; give each shared element one writer, or separate the writes with a barrier"
        ),
    }
}

/// Whether `x` is a `cp.async` copy's write.
fn is_copy(n: &Names<'_>, x: &Access) -> bool {
    x.write && matches!(op_of(n, x), Some(Op::CpAsync { .. }))
}

/// Whether `x` is a bulk copy's: into shared memory (`load`), or out of it.
fn is_bulk(n: &Names<'_>, x: &Access, load: bool) -> bool {
    matches!(op_of(n, x), Some(Op::Bulk(b)) if matches!(**b, BulkOp::Load { .. } | BulkOp::TensorLoad { .. }) == load)
}

fn op_of<'p>(n: &Names<'p>, x: &Access) -> Option<&'p Op> {
    n.prog.insts.get(x.inst as usize).map(|i| &i.op)
}

/// A race where a side is a `cp.async` or bulk copy: when and how the copy lands, in place of
/// the plain sentence `msg` (kept where no copy is involved).
fn async_race(
    n: &Names<'_>,
    t: &RaceText,
    (first, second): (&Access, &Access),
    flight: bool,
    msg: String,
) -> String {
    let RaceText { what, a, b, la, lb } = t;
    let copy = |x: &Access| is_copy(n, x);
    let bulk = |x: &Access, load: bool| is_bulk(n, x, load);
    const LANDS: &str = "a `cp.async` copy lands at any moment between its issue and the `cp.async.wait_group` (or `wait_all`) of its own thread that covers it";
    if copy(first) && copy(second) && first.thread == second.thread {
        format!(
            "thread {b} copies into {what} with `cp.async` (line {lb}) while its own earlier copy there (line {la}) may still be in flight: {LANDS}, and two copies that no wait separates land in either order, so the value that stays depends on timing; wait for the first copy's group (`cp.async.wait_group`, or `wait_all`) before copying into the same bytes again"
        )
    } else if copy(first) && flight {
        let does = if second.write { "writes" } else { "reads" };
        format!(
            "thread {b} {does} {what} (line {lb}) while the `cp.async` copy that thread {a} issued (line {la}) may still be writing it: {LANDS}, so touch the bytes only after that wait and a __syncthreads(), and refill a buffer only after a __syncthreads() that follows every read of its old contents (in a double buffer, the barrier at the end of each step)"
        )
    } else if flight && bulk(first, true) {
        let does = if second.write { "writes" } else { "reads" };
        format!(
            "thread {b} {does} {what} (line {lb}) without waiting for the copy: the bulk copy that thread {a} issued (line {la}) may still be writing it, since a bulk copy (`cp.async.bulk`) lands, its tensor form too, at any moment until the phase of its mbarrier that counts its bytes completes, and only a wait on that phase (`mbarrier.try_wait.parity`) orders a thread after it, so touch the bytes only after that wait (or after a __syncthreads() that follows it), and refill a stage only once every read of its old contents is ordered before the copy (the barrier at the end of each step, or an mbarrier its readers arrive on)"
        )
    } else if copy(first) && !second.write {
        format!(
            "{msg}. The write is a `cp.async` copy, which lands only when its own thread waits for it: `cp.async.wait_group` (or `wait_all`), then __syncthreads(), then read"
        )
    } else if copy(second) {
        let did = if first.write { "wrote" } else { "read" };
        format!(
            "the `cp.async` copy that thread {b} issued (line {lb}) may write {what} while thread {a} {did} it (line {la}) with no __syncthreads() in between: {LANDS}, from its issue on, so refill a buffer only after a __syncthreads() that follows every read of its old contents (in a double buffer, the barrier at the end of each step), and read a copy only after that wait and a __syncthreads()"
        )
    } else if first.write && !second.write && bulk(first, true) {
        format!(
            "thread {b} reads {what} (line {lb}), which a bulk copy that thread {a} issued (line {la}) writes, without waiting for the copy: a bulk copy (`cp.async.bulk`) has landed only once the phase of its mbarrier completes, so wait on that mbarrier (`mbarrier.try_wait.parity`) before reading the bytes"
        )
    } else if !first.write && second.write && bulk(second, true) {
        format!(
            "thread {a} read {what} (line {la}) before the bulk copy that thread {b} issued (line {lb}) wrote it, without waiting for the copy: a bulk copy (`cp.async.bulk`) has landed only once the phase of its mbarrier completes, so wait on that mbarrier (`mbarrier.try_wait.parity`) before reading the bytes"
        )
    } else if !first.write && second.write && bulk(first, false) {
        format!(
            "thread {b} writes {what} (line {lb}) while the bulk copy to global memory that thread {a} issued (line {la}) may still be reading it: a bulk store (`cp.async.bulk...bulk_group`, tensor form included) reads its shared source until the thread that issued it has committed its group and waited for it (`cp.async.bulk.commit_group`, then `cp.async.bulk.wait_group.read`), so write the buffer again only after that wait (and a barrier, where other threads write it)"
        )
    } else {
        msg
    }
}

/// A race on global memory: two writers of an element, a read of another thread's output, or an
/// access while a bulk store still writes it.
fn global_race(
    n: &Names<'_>,
    (buf, index): (usize, usize),
    first: &Access,
    second: &Access,
) -> (Diagnostic, u32) {
    let what = format!("`{}[{index}]`", n.buffer(buf));
    let ((ba, ta), (bb, tb)) = (n.global(first.thread), n.global(second.thread));
    let a = format!("block {} thread {}", t3(ba), t3(ta));
    let b = format!("block {} thread {}", t3(bb), t3(tb));
    let (la, lb) = (n.line(first.inst), n.line(second.inst));
    let store = matches!(n.prog.insts.get(first.inst as usize).map(|i| &i.op), Some(Op::Bulk(o)) if matches!(**o, BulkOp::Store { .. } | BulkOp::TensorStore { .. }));
    let msg = if store {
        let does = if second.write { "writes" } else { "reads" };
        format!(
            "{b} {does} {what} (line {lb}) while the bulk store that {a} issued (line {la}) may still be writing it: a bulk store (`cp.async.bulk...bulk_group`, tensor form included) writes global memory until the thread that issued it has committed its group and waited for it with `cp.async.bulk.wait_group` (`.read` only says its shared source was read), so touch its destination only after that wait (and a barrier, for other threads of the block)"
        )
    } else if first.write && second.write {
        format!(
            "{b} writes {what} (line {lb}), which {a} also wrote (line {la}) in this launch: the value that stays depends on which thread runs last; each output element needs exactly one writing thread (check how the index is computed)"
        )
    } else {
        let (r, w, lr, lw) = if first.write {
            (&b, &a, lb, la)
        } else {
            (&a, &b, la, lb)
        };
        format!(
            "{r} reads {what} (line {lr}) that {w} writes (line {lw}) in the same launch: threads of different blocks cannot wait for each other, so the read may see either value; read the inputs, not another thread's output"
        )
    };
    (
        Diagnostic::new(Kind::Race, msg).in_thread(bb, tb),
        second.inst,
    )
}

/// A thread past its budget of global reads or writes, or a read of a buffer the puzzle reads
/// no element of.
fn over_budget(
    n: &Names<'_>,
    at: &Access,
    limit: u32,
    (buf, index): (usize, usize),
) -> (Diagnostic, u32) {
    let (b, t) = n.global(at.thread);
    let what = format!("`{}[{index}]`", n.buffer(buf));
    let msg = if limit == 0 && !at.write {
        let copy = n.copies.iter().find(|(b, _)| b == n.buffer(buf));
        format!(
            "block {} thread {} reads {what} (line {}), but this puzzle reads no element of `{}`: {}",
            t3(b),
            t3(t),
            n.line(at.inst),
            n.buffer(buf),
            match copy {
                Some((_, symbol)) => format!(
                    "the runner copied it into `{symbol}` (constant memory) before the launch; read `{symbol}` instead"
                ),
                None => "its values are elsewhere".into(),
            }
        )
    } else if at.write {
        format!(
            "block {} thread {} makes its {} global write ({what}, line {}), but this puzzle allows {limit} per thread: accumulate in a register and write each output once",
            t3(b),
            t3(t),
            ordinal(limit + 1),
            n.line(at.inst)
        )
    } else {
        format!(
            "block {} thread {} makes its {} global read ({what}, line {}), but this puzzle allows {limit} per thread: {}",
            t3(b),
            t3(t),
            ordinal(limit + 1),
            n.line(at.inst),
            match n.copies.iter().find(|(b, _)| b == n.buffer(buf)) {
                Some((_, symbol)) => format!(
                    "the runner copied `{}` into `{symbol}` (constant memory) before the launch; read `{symbol}` instead",
                    n.buffer(buf)
                ),
                None => "load each element into shared memory once and read it from there".into(),
            }
        )
    };
    (
        Diagnostic::new(Kind::BudgetExceeded, msg).in_thread(b, t),
        at.inst,
    )
}

/// Output elements nobody wrote: how many, the first, and the thread that should have (by the
/// pattern of the other writes) or the launch too small to reach it.
fn unwritten(
    n: &Names<'_>,
    buf: usize,
    (count, len, first): (usize, usize, usize),
    owner: Option<u32>,
    short: Option<u64>,
) -> Diagnostic {
    let name = n.buffer(buf);
    let mut msg = format!(
        "{count} of {len} elements of `{name}` were never written (still NaN after the launch), the first is {}",
        n.element(buf, first)
    );
    if let Some(g) = owner {
        let (b, t) = n.global(g);
        msg += &format!(
            "; by the pattern of the other writes, block {} thread {} should have written it",
            t3(b),
            t3(t)
        );
    }
    if let Some(t) = short {
        msg += &format!(
            "; the launch has only {t} threads and each writes one element, so no thread reaches it"
        );
    }
    msg += ": check the guard and the index, every output element needs a thread that writes it";
    let mut d = Diagnostic::new(Kind::UnwrittenOutput, msg);
    if let Some(g) = owner {
        let (b, t) = n.global(g);
        d = d.in_thread(b, t);
    }
    d
}

/// `n` with its thousands grouped by commas, as the budgets' messages write counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` grouped, and `what` after it in the singular or the plural: "1 output", "1,024 outputs".
fn counted(n: u64, what: &str) -> String {
    format!("{} {what}{}", grouped(n), if n == 1 { "" } else { "s" })
}
