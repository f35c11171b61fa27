//! Judging a run: its output against the case's reference, element by element, and the two
//! backends' outputs against each other.
//!
//! [`judge`] turns a backend's [`RunOutput`] into a [`CaseResult`] and the diagnostics it earned:
//! `unwritten_output` for elements still NaN, `wrong_output` for the rest outside the puzzle's
//! tolerance, each naming the first indices and the threads that own them. A backend's own
//! diagnostics (a fault, a race) make the case fail even when every value is right. 2D outputs
//! (puzzles 09 and 10) are named by row and column and their padding judged bit for bit (`grid`).
//!
//! Also what a check found, as data (`outcome`), and a wrong case's diff as text (`diff`).
//! May import `workbook` only: never `check`, `report` or anything above.

pub mod diff;
pub mod grid;
pub mod outcome;
pub mod scan;

use crate::judge::outcome::{Agreement, Backend, CaseResult};
use crate::judge::scan::Mismatches;
use spec::{Case, Diagnostic, Kind, Puzzle, RunOutput};

/// Compares the sim and GPU outputs of every case both backends ran.
pub fn agreement(results: &[CaseResult]) -> Option<Agreement> {
    let ulps = |a: f32, b: f32| {
        (a.to_bits() as i32)
            .wrapping_sub(b.to_bits() as i32)
            .unsigned_abs()
    };
    let pairs: Vec<(&CaseResult, &CaseResult)> = results
        .iter()
        .filter(|r| r.backend == Backend::Sim && !r.output.is_empty())
        .filter_map(|s| {
            let g = results
                .iter()
                .find(|g| g.backend == Backend::Gpu && g.name == s.name)?;
            (g.output.len() == s.output.len()).then_some((s, g))
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let identical = pairs
        .iter()
        .filter(|(s, g)| {
            s.output
                .iter()
                .zip(&g.output)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        })
        .count();
    let max_ulp = pairs
        .iter()
        .flat_map(|(s, g)| s.output.iter().zip(&g.output).map(|(&a, &b)| ulps(a, b)))
        .max()
        .unwrap_or(0);
    Some(Agreement {
        cases: pairs.len(),
        identical,
        max_ulp,
    })
}

/// Compares a run with the case's reference; returns the result and the diagnostics it earned.
pub fn judge(
    puzzle: &Puzzle,
    case: &Case,
    backend: Backend,
    out: RunOutput,
) -> (CaseResult, Vec<Diagnostic>) {
    judge_with(puzzle, case, backend, out, true)
}

/// [`judge`], with the reference copied into the result only if `keep_expected` (a full case's is
/// hundreds of megabytes; the worker that judges it lends it to the diff instead, see `remote`).
pub fn judge_with(
    puzzle: &Puzzle,
    case: &Case,
    backend: Backend,
    out: RunOutput,
    keep_expected: bool,
) -> (CaseResult, Vec<Diagnostic>) {
    let output = out.outputs.into_iter().next().unwrap_or_default();
    let mut diagnostics = out.diagnostics;
    let complete = output.len() == case.expected.len();
    // A 2D output's padding is judged bit for bit below, not against the tolerance.
    let pitch = case.job.output_pitch();
    // Only the runner's own poison is "never written" in a 2D output: its input's padding holds
    // NaN too, and a NaN that came out of a sum is a wrong value (see `grid`).
    let unwritten_nan: fn(f32) -> bool = match pitch {
        Some(_) => grid::poisoned,
        None => f32::is_nan,
    };
    let (mismatches, max_abs_err) = if complete {
        let (m, e) = crate::judge::scan::scan(
            &output,
            &case.expected,
            pitch,
            &puzzle.tolerance,
            unwritten_nan,
        );
        (m, Some(e))
    } else {
        (Mismatches::default(), None)
    };
    let max_abs_err = max_abs_err.filter(|e: &f64| e.is_finite());
    // An output and a reference of different lengths, with nothing else said, is the runner's
    // fault (a damaged reference file, say), never a silent failure of the learner's.
    if !complete && diagnostics.is_empty() && !output.is_empty() && !case.expected.is_empty() {
        diagnostics.push(size_mismatch(case, output.len()));
    }
    if complete && !mismatches.is_empty() && diagnostics.is_empty() {
        diagnostics.extend(value_diagnostics(puzzle, case, &output, &mismatches));
    }
    if let Some(p) = pitch.filter(|_| complete) {
        padding_diagnostics(p, &output, &mut diagnostics);
    }
    let passed = complete && mismatches.is_empty() && diagnostics.is_empty();
    let result = CaseResult {
        name: case.name.clone(),
        backend,
        passed,
        max_abs_err,
        params: case.params().into_iter().collect(),
        seconds: out.seconds,
        instructions: out.instructions,
        stats: out.stats,
        output,
        expected: match keep_expected {
            true => case.expected.clone(),
            false => vec![],
        },
        first_mismatch: mismatches.first(),
        pitch,
        nhwc: image_shape(case),
        shrunk_from: None,
        printed: out.printed,
        printed_more: out.printed_more,
        findings: vec![],
        not_run: None,
        diff: None,
        context_lost: out.context_lost,
    };
    (result, diagnostics)
}

/// The runner's own fault: a run of `outputs` elements where the reference has another count.
fn size_mismatch(case: &Case, outputs: usize) -> Diagnostic {
    Diagnostic::new(
        Kind::InternalError,
        format!(
            "the run gave {} output elements where case {}'s reference has {}: a bug of the \
             runner, not of your kernel (deleting {} makes the runner compute its references \
             again)",
            outputs,
            case.name,
            case.expected.len(),
            spec::cache_dir().join("references").display()
        ),
    )
}

/// What the values of a complete output earned: `unwritten_output` for the elements still NaN,
/// `wrong_output` for the rest outside the tolerance, each at the thread that owns its first.
fn value_diagnostics(
    puzzle: &Puzzle,
    case: &Case,
    output: &[f32],
    mismatches: &Mismatches,
) -> Vec<Diagnostic> {
    let pitch = case.job.output_pitch();
    let mut found = vec![];
    let located = |mut d: Diagnostic, i: usize| match owner(case, i) {
        Some((block, Some(thread))) => d.in_thread(block, thread),
        Some((block, None)) => {
            d.block = Some(block);
            d
        }
        None => d,
    };
    let unwritten = &mismatches.first_unwritten;
    if let Some(&first) = unwritten.first() {
        let d = Diagnostic::new(
            Kind::UnwrittenOutput,
            format!(
                "{} of {} output elements are still NaN after the launch: {}; \
                 either no thread wrote them (check the guard and that every output \
                 index is covered), or they were only updated (`+=`, `atomicAdd`) from \
                 the NaN the runner leaves in outputs (it does not zero them)",
                mismatches.unwritten,
                output.len(),
                listing(case, unwritten, mismatches.unwritten, |_| String::new()),
            ),
        );
        found.push(located(d, first));
    }
    let wrong = &mismatches.first_wrong;
    if let Some(&first) = wrong.first() {
        let values =
            |i: usize| format!(" yours {:.6}, expected {:.6}", output[i], case.expected[i]);
        let mut message = format!(
            "{} of {} elements differ: {}",
            mismatches.wrong,
            pitch.map_or(output.len(), |p| p.rows * p.cols),
            listing(case, wrong, mismatches.wrong, values)
        );
        if let Some(why) = grid::guess(case, output, wrong, &puzzle.tolerance) {
            message += &format!("; {why}");
        }
        let d = Diagnostic::new(Kind::WrongOutput, message);
        found.push(located(d, first));
    }
    found
}

/// A 2D output's padding, judged bit for bit: where the simulator did not name the thread that
/// wrote into it, the judge finds it; a padding write that is the whole output packed at
/// `output_cols` says why, not where.
fn padding_diagnostics(p: spec::job::Pitch, output: &[f32], diagnostics: &mut Vec<Diagnostic>) {
    // The simulator names the thread that wrote into the padding; elsewhere the judge finds it.
    if !diagnostics.iter().any(|d| d.kind == Kind::PaddingWritten)
        && let Some(d) = grid::padding_written(p, output)
    {
        diagnostics.push(d);
    }
    // A padding write that is the whole output packed at output_cols says why, not where.
    if grid::rows_packed(p, output) {
        for d in diagnostics
            .iter_mut()
            .filter(|d| d.kind == Kind::PaddingWritten)
        {
            d.message = grid::packed_sentence(p);
        }
    }
}

/// The first few of `indices` (the first of `total`), each with `detail` and the thread that owns
/// it.
fn listing(
    case: &Case,
    indices: &[usize],
    total: usize,
    detail: impl Fn(usize) -> String,
) -> String {
    const SHOWN: usize = 3;
    let mut parts: Vec<String> = indices
        .iter()
        .take(SHOWN)
        .map(|&i| {
            let who = owner(case, i)
                .map(|(b, t)| match (t, case.job.output_pitch()) {
                    (Some(t), Some(_)) => {
                        format!(" (block ({},{}) thread ({},{}))", b[0], b[1], t[0], t[1])
                    }
                    (Some(t), None) => format!(" (block {} thread {})", b[0], t[0]),
                    (None, _) if case.block_tile.is_some() => {
                        format!(" (block ({},{}))", b[0], b[1])
                    }
                    (None, _) => format!(" (block {})", b[0]),
                })
                .unwrap_or_default();
            let at = match (case.job.output_pitch(), gemm_place(case, i)) {
                (Some(p), _) => grid::place(p, i),
                (None, Some((m, o))) => match image_shape(case) {
                    Some(shape) => {
                        let [b, r, c, o] = image_place(shape, i);
                        format!("[{i}] (image {b}, row {r}, column {c}, channel {o})")
                    }
                    None => format!("[{i}] (pixel {m}, channel {o})"),
                },
                (None, None) => format!("[{i}]"),
            };
            format!("{at}{}{who}", detail(i))
        })
        .collect();
    if total > SHOWN {
        parts.push(format!("and {} more", total - SHOWN));
    }
    parts.join(", ")
}

/// Output `i` of an implicit-GEMM case (puzzle 11) as (pixel, output channel): the output is M
/// pixels of `output_channels` values.
fn gemm_place(case: &Case, i: usize) -> Option<(usize, usize)> {
    case.block_tile?;
    let n = case.job.scalar("output_channels")?.max(1) as usize;
    Some((i / n, i % n))
}

/// Rows, columns and channels of each output image of a valid convolution over NHWC images
/// (puzzle 11), where the case's sizes account for the whole output.
fn image_shape(case: &Case) -> Option<[usize; 3]> {
    case.block_tile?;
    let s = |n: &str| case.job.scalar(n).and_then(|v| usize::try_from(v).ok());
    let rows = (s("input_rows")? + 1).checked_sub(s("kernel_rows")?)?;
    let cols = (s("input_cols")? + 1).checked_sub(s("kernel_cols")?)?;
    let (batch, oc) = (s("batch")?, s("output_channels")?);
    let len = case.job.args.iter().find_map(|a| a.output_len())?;
    (rows > 0 && cols > 0 && oc > 0 && batch * rows * cols * oc == len).then_some([rows, cols, oc])
}

/// (image, row, column, channel) of output `i` of NHWC images of `[rows, cols, channels]`.
pub fn image_place([rows, cols, oc]: [usize; 3], i: usize) -> [usize; 4] {
    let m = i / oc;
    [m / (rows * cols), m / cols % rows, m % cols, i % oc]
}

/// The block and thread that own output `i` under the puzzle's launch rule: for a 1D launch the
/// kernel declares (puzzle 08), the block of OUTPUTS_PER_BLOCK outputs and no thread (how a block
/// shares its outputs is the kernel's own choice); from the case's macros, ROW_BLOCK and COL_BLOCK
/// (puzzle 09: a 2D grid, one output per thread, x walking the columns), OUTPUTS_PER_THREAD
/// (puzzle 06: thread t of a block owns its outputs t * OUTPUTS_PER_THREAD + r), BLOCK_SIZE and
/// THREADS (puzzle 07: a block owns BLOCK_SIZE outputs, thread t the rows t, t + THREADS, ...),
/// otherwise one output per thread; for puzzle 11's declared tiles, the block of BLOCK_M x
/// BLOCK_N and no thread. `None` where the rule does not say (puzzle 10's declared tiles).
pub fn owner(case: &Case, i: usize) -> Option<([u32; 3], Option<[u32; 3]>)> {
    let l = case.job.launch;
    if let (Some([bm, bn]), Some((m, o))) = (case.block_tile, gemm_place(case, i)) {
        // An implicit-GEMM tile the kernel declares (puzzle 11): the block is the tile's, the
        // thread the kernel's own choice.
        let block = [
            (m / bm.max(1) as usize) as u32,
            (o / bn.max(1) as usize) as u32,
            0,
        ];
        return (block[0] < l.grid[0] && block[1] < l.grid[1]).then_some((block, None));
    }
    if let Some(n) = case.outputs_per_block {
        // A launch the kernel declares (puzzle 08): the block is the shape's, the thread the
        // kernel's own choice.
        let block = i / n.max(1) as usize;
        return (block < l.blocks() as usize).then_some(([block as u32, 0, 0], None));
    }
    if let Some(p) = case.job.output_pitch() {
        let (bx, by) = (l.block[0] as usize, l.block[1] as usize);
        let one_per_thread = case.macros.iter().any(|(k, _)| k == "COL_BLOCK")
            && l.grid[0] as usize == p.cols.div_ceil(bx.max(1))
            && l.grid[1] as usize == p.rows.div_ceil(by.max(1));
        let (r, c) = p.at(i);
        return one_per_thread.then(|| {
            (
                [(c / bx) as u32, (r / by) as u32, 0],
                Some([(c % bx) as u32, (r % by) as u32, 0]),
            )
        });
    }
    let threads = u64::from(l.threads_per_block()) * l.blocks();
    let one_dimensional = l.grid[1] * l.grid[2] * l.block[1] * l.block[2] == 1;
    if !one_dimensional || threads == 0 {
        return None;
    }
    let tpb = l.block[0] as usize;
    let mac = |name: &str| -> Option<usize> {
        let (_, v) = case.macros.iter().find(|(k, _)| k == name)?;
        v.parse().ok().filter(|&v| v > 0)
    };
    let (block, thread) = match (mac("OUTPUTS_PER_THREAD"), mac("BLOCK_SIZE")) {
        (Some(r), _) => (i / (tpb * r), i % (tpb * r) / r),
        (None, Some(size)) => (i / size, i % size % tpb),
        (None, None) if (case.expected.len() as u64) <= threads => (i / tpb, i % tpb),
        (None, None) => return None,
    };
    (block < l.blocks() as usize).then_some(([block as u32, 0, 0], Some([thread as u32, 0, 0])))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference of another length than the output (the damaged reference file of a full case)
    /// is the runner's internal error, named, not a failed case with nothing said.
    #[test]
    fn an_output_and_a_reference_of_different_lengths_is_an_internal_error() {
        let puzzle = crate::workbook::registry::find("puzzle-01").expect("puzzle 01");
        let mut case = (puzzle.cases)(spec::Scale::Small).remove(0);
        let output: Vec<f32> = case.expected.iter().map(|&e| e as f32).collect();
        case.expected.pop();
        let out = RunOutput {
            outputs: vec![output],
            ..RunOutput::default()
        };
        let (result, diagnostics) = judge(&puzzle, &case, Backend::Gpu, out);
        assert!(!result.passed);
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].kind, Kind::InternalError);
        assert!(diagnostics[0].message.contains("reference has"));
    }
}
