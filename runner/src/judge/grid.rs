//! Judging and showing 2D outputs (puzzles 09 and 10): elements named by (row, column), the
//! output's padding checked bit for bit, a guess at the cause of a wrong output, and the diff as
//! a grid.
//!
//! A pitched output ([`spec::job::Arg::Pitched`]) comes back with its padding, which must
//! still hold [`PADDING_SENTINEL`]: any other bits are `padding_written` (the simulator says
//! which thread wrote it and at which line; the GPU only which element changed). Inside the
//! image, NaN with the runner's poison bits is an element nobody wrote; any other NaN was
//! computed, and only the input's padding holds NaN, so the kernel read past the end of a row.
//! Where the wrong values are what the contract gives with the input's rows taken
//! `input_cols` apart instead of `input_stride`, the diagnosis says the stride was ignored; where
//! the output's rows landed `output_cols` apart (every element up to `rows * output_cols` written,
//! none after), `padding_written` says the store's index ignores `output_stride`.

use crate::judge::outcome::CaseResult;
use colored::Colorize;
use spec::job::{Arg, PADDING_SENTINEL, Pitch};
use spec::{Case, Diagnostic, Kind, Tolerance};

/// `(row r, col c)` for flat element `i` of a pitched output.
pub fn place(p: Pitch, i: usize) -> String {
    let (r, c) = p.at(i);
    format!("(row {r}, col {c})")
}

/// Whether output element `i` (inside the image) is still the NaN the runner poisoned it with.
pub fn poisoned(v: f32) -> bool {
    v.to_bits() == f32::NAN.to_bits()
}

/// The padding elements of `output` that no longer hold the sentinel, and the diagnostic for
/// them (none when they are all intact).
pub fn padding_written(p: Pitch, output: &[f32]) -> Option<Diagnostic> {
    // Row by row: no division per element (a full case has 67 million); counted, the first
    // three kept.
    let mut changed = (0..output.len().div_ceil(p.stride.max(1)))
        .flat_map(|r| (p.cols..p.stride).map(move |c| r * p.stride + c))
        .filter(|&i| i < output.len() && output[i].to_bits() != PADDING_SENTINEL.to_bits());
    let first: Vec<usize> = changed.by_ref().take(3).collect();
    let count = first.len() + changed.count();
    let &first_one = first.first()?;
    let shown: Vec<String> = first
        .iter()
        .map(|&i| format!("{} now {}", place(p, i), output[i]))
        .collect();
    Some(Diagnostic::new(
        Kind::PaddingWritten,
        format!(
            "{} padding element{} of the output changed, first {}: {}; columns {} to {} of each row are padding (output_stride {} is wider than the {} output columns) and must be left as they were: guard the store with c < output_cols, not with the stride",
            count,
            if count == 1 { "" } else { "s" },
            place(p, first_one),
            shown.join(", "),
            p.cols,
            p.stride - 1,
            p.stride,
            p.cols
        ),
    ))
}

/// Whether `output` is what a store indexed `r * output_cols + c` leaves in a pitched output:
/// its first `rows * cols` elements all written (padding included) and every later one as the
/// runner left it, so the rows landed `output_cols` apart instead of `output_stride`.
pub fn rows_packed(p: Pitch, output: &[f32]) -> bool {
    let (n, end) = (p.rows * p.cols, p.rows * p.stride);
    if p.stride <= p.cols || p.rows < 2 || output.len() < end {
        return false;
    }
    let untouched = |i: usize| {
        if p.is_padding(i) {
            output[i].to_bits() == PADDING_SENTINEL.to_bits()
        } else {
            poisoned(output[i])
        }
    };
    (0..n).all(|i| !untouched(i)) && (n..end).all(untouched)
}

/// The sentence for a store whose rows land `output_cols` apart ([`rows_packed`]).
pub fn packed_sentence(p: Pitch) -> String {
    format!(
        "the store's index ignores output_stride: the output's rows landed output_cols ({}) elements apart instead of output_stride ({}), so the first rows spill into the padding and the last rows of the buffer stay unwritten; index the output as output[r * output_stride + c]",
        p.cols, p.stride
    )
}

/// A sentence on the likely cause of wrong values at `wrong` (image elements), when the data says.
pub fn guess(case: &Case, output: &[f32], wrong: &[usize], tol: &Tolerance) -> Option<String> {
    let p = case.job.output_pitch()?;
    let get = |name: &str| case.job.scalar(name).map(|v| v as usize);
    let (cols, stride) = (get("input_cols")?, get("input_stride")?);
    let (kr, kc) = (get("kernel_rows")?, get("kernel_cols")?);
    let (Some(Arg::Input { data: x, .. }), Some(Arg::Input { data: k, .. })) =
        (case.job.args.first(), case.job.args.get(1))
    else {
        return None;
    };
    // What output (r, c) is when the input's rows are taken `row` floats apart.
    let with_rows = |i: usize, row: usize| -> Option<f64> {
        let (r, c) = p.at(i);
        let mut sum = 0f64;
        for a in 0..kr {
            for b in 0..kc {
                sum += f64::from(*x.get((r + a) * row + c + b)?) * f64::from(k[a * kc + b]);
            }
        }
        Some(sum)
    };
    let same = |v: f32, want: Option<f64>| match want {
        Some(w) if w.is_nan() => v.is_nan(),
        Some(w) => tol.accepts(v, w),
        None => false,
    };
    let sample: Vec<usize> = wrong.iter().copied().take(16).collect();
    if stride != cols && sample.iter().all(|&i| same(output[i], with_rows(i, cols))) {
        return Some(format!(
            "the values are what the sum gives with the input's rows input_cols = {cols} floats apart: the input's stride was probably ignored; element (r, c) of the input is input[r * input_stride + c], and input_stride is {stride}"
        ));
    }
    if sample
        .iter()
        .any(|&i| output[i].is_nan() && !poisoned(output[i]))
    {
        return Some(format!(
            "NaN came out of the sum: only the input's padding (columns {cols} to {} of each row) holds NaN, so the kernel read past the end of a row; the input's stride was probably ignored, or a column index runs past input_cols",
            stride - 1
        ));
    }
    None
}

/// Rows of the output shown as a grid when the whole output fits, else the first differing rows.
const GRID_ROWS: usize = 8;
const GRID_COLS: usize = 8;
const ROWS_SHOWN: usize = 3;
const COLS_SHOWN: usize = 8;

/// The diff of a wrong 2D output: the whole grid for small outputs (yours, each wrong element
/// marked and followed by the expected value), else the first rows that differ, around their
/// first wrong column.
pub fn diff(case: &CaseResult, p: Pitch, tol: &Tolerance) -> String {
    let at = |r: usize, c: usize| r * p.stride + c;
    let bad = |r: usize, c: usize| !tol.accepts(case.output[at(r, c)], case.expected[at(r, c)]);
    // Every cell is 20 characters wide: yours, then the expected value in brackets where yours
    // is wrong.
    let cell = |r: usize, c: usize| {
        let (v, e) = (case.output[at(r, c)], case.expected[at(r, c)]);
        if bad(r, c) {
            let expected = format!("({e:.3})");
            format!("{:>9}", format!("{v:.3}")).red().to_string() + &format!(" {expected:<10}")
        } else {
            format!("{v:>9.3}{:11}", "")
        }
    };
    let mut out = format!(
        "  {} {} x {} outputs: yours, and (expected) after each wrong one:\n",
        case.name.dimmed(),
        p.rows,
        p.cols,
    );
    if p.rows <= GRID_ROWS && p.cols <= GRID_COLS {
        out += &format!(
            "  {:>7}{}\n",
            "",
            (0..p.cols)
                .map(|c| format!("{:>9}{:11}", format!("col {c}"), ""))
                .collect::<String>()
                .trim_end()
        );
        for r in 0..p.rows {
            let cells: Vec<String> = (0..p.cols).map(|c| cell(r, c)).collect();
            out += &format!("  row {r:>3}{}\n", cells.join("").trim_end());
        }
        return out;
    }
    let rows: Vec<usize> = (0..p.rows)
        .filter(|&r| (0..p.cols).any(|c| bad(r, c)))
        .collect();
    for &r in rows.iter().take(ROWS_SHOWN) {
        let first = (0..p.cols).find(|&c| bad(r, c)).unwrap_or(0);
        let start = first.saturating_sub(2);
        let end = (start + COLS_SHOWN).min(p.cols);
        let wrong = (0..p.cols).filter(|&c| bad(r, c)).count();
        out += &format!(
            "  row {r} ({wrong} of {} wrong), columns {start}..{end}:\n",
            p.cols
        );
        let cells: Vec<String> = (start..end).map(|c| cell(r, c)).collect();
        out += &format!("    {}\n", cells.join("").trim_end());
    }
    if rows.len() > ROWS_SHOWN {
        out += &format!("  and {} more rows differ\n", rows.len() - ROWS_SHOWN);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Pitch = Pitch {
        rows: 2,
        cols: 3,
        stride: 5,
    };

    fn intact() -> Vec<f32> {
        (0..10)
            .map(|i| {
                if P.is_padding(i) {
                    PADDING_SENTINEL
                } else {
                    1.0
                }
            })
            .collect()
    }

    #[test]
    fn a_changed_padding_bit_is_found_without_the_simulator() {
        assert!(padding_written(P, &intact()).is_none());
        let mut out = intact();
        out[8] = 0.0; // row 1, column 3
        let d = padding_written(P, &out).unwrap();
        assert_eq!(d.kind, Kind::PaddingWritten);
        assert!(
            d.message
                .starts_with("1 padding element of the output changed, first (row 1, col 3)")
        );
        out[9] = -PADDING_SENTINEL;
        assert!(
            padding_written(P, &out)
                .unwrap()
                .message
                .starts_with("2 padding elements")
        );
    }

    /// A judged 2D case of `rows` x 3 outputs (stride 5) whose output differs at (1, 2) and (9, 0).
    fn wrong(rows: usize) -> (CaseResult, Pitch) {
        let p = Pitch {
            rows,
            cols: 3,
            stride: 5,
        };
        let expected: Vec<f64> = (0..rows * 5).map(|i| i as f64).collect();
        let mut output: Vec<f32> = expected.iter().map(|&e| e as f32).collect();
        output[7] = 99.0;
        if rows > 9 {
            output[45] = -1.0;
        }
        let result = CaseResult {
            name: "c".into(),
            backend: crate::judge::outcome::Backend::Sim,
            passed: false,
            max_abs_err: None,
            params: Default::default(),
            seconds: 0.0,
            instructions: None,
            stats: None,
            output,
            expected,
            first_mismatch: Some(7),
            pitch: Some(p),
            nhwc: None,
            shrunk_from: None,
            printed: vec![],
            printed_more: 0,
            findings: vec![],
            not_run: None,
            diff: None,
            context_lost: false,
        };
        (result, p)
    }

    #[test]
    fn a_small_output_is_a_grid_and_a_large_one_its_wrong_rows() {
        colored::control::set_override(false);
        let tol = Tolerance {
            atol: 1e-3,
            rtol: 1e-3,
        };
        let (small, p) = wrong(2);
        let grid = diff(&small, p, &tol);
        assert!(grid.contains("col 2"), "{grid}");
        assert!(grid.contains("row   1    5.000"), "{grid}");
        assert!(grid.contains("99.000 (7.000)"), "{grid}");
        let (large, p) = wrong(12);
        let rows = diff(&large, p, &tol);
        assert!(
            rows.contains("row 1 (1 of 3 wrong), columns 0..3"),
            "{rows}"
        );
        assert!(rows.contains("row 9 (1 of 3 wrong)"), "{rows}");
        assert!(!rows.contains("row 2 "), "only rows that differ: {rows}");
    }

    #[test]
    fn only_the_poison_counts_as_unwritten() {
        assert!(poisoned(f32::NAN));
        assert!(!poisoned(f32::from_bits(0x7fff_ffff)), "a computed NaN");
        assert!(
            !poisoned(f32::from_bits(0x7fc0_0bad)),
            "the input's padding"
        );
        assert_eq!(place(P, 7), "(row 1, col 2)");
    }

    #[test]
    fn rows_landing_output_cols_apart_are_recognized() {
        assert!(!rows_packed(P, &intact()));
        // Before the launch: the image poisoned, the padding the sentinel.
        let fresh: Vec<f32> = intact()
            .iter()
            .map(|&v| if v == 1.0 { f32::NAN } else { v })
            .collect();
        let mut packed = fresh.clone();
        packed[..6].fill(1.0);
        assert!(rows_packed(P, &packed));
        // A stray padding write beside rows written in place is not that pattern.
        let mut stray = intact();
        stray[3] = 2.0;
        assert!(!rows_packed(P, &stray));
        assert!(!rows_packed(P, &fresh));
        assert!(
            packed_sentence(P)
                .contains("output_cols (3) elements apart instead of output_stride (5)")
        );
    }
}
