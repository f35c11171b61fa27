//! The judge's pass over an output: which elements are outside the tolerance, and the largest
//! error, on every core for a full-scale output.
//!
//! A full case has up to 67 million elements (puzzle 09's 8192 x 8192), judged in the GPU worker
//! on every check; element by element on one core, with a division per element to tell a 2D
//! output's padding from its image, that was a second of the check, and a kernel that got every
//! element wrong made a list of 67 million indices (1.5 s). [`scan`] walks a 2D output row by row
//! (no division) and splits the rows, or the elements, among threads, and it counts the
//! mismatches of each kind, keeping only the first few ([`Mismatches`]); the result is the same
//! as the plain walk's (the first mismatches in ascending order; the maximum ignores NaN as
//! `f64::max` does), which `the_split_scan_equals_the_plain_one` checks.

use spec::Tolerance;
use spec::job::Pitch;

/// Below this many elements one thread does it all.
const SPLIT_FROM: usize = 1 << 20;

/// How many of each kind of mismatch a scan keeps (the report shows three; `grid::guess` reads
/// sixteen).
pub const KEPT: usize = 16;

/// The elements outside the tolerance, in two kinds: unwritten (still the runner's NaN) and
/// wrong (any other value). Each is counted, and its first [`KEPT`] indices kept in ascending
/// order: nothing is allocated per mismatch, however many there are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mismatches {
    pub unwritten: usize,
    pub first_unwritten: Vec<usize>,
    pub wrong: usize,
    pub first_wrong: Vec<usize>,
}

impl Mismatches {
    pub fn is_empty(&self) -> bool {
        self.unwritten + self.wrong == 0
    }

    /// The first mismatch of either kind.
    pub fn first(&self) -> Option<usize> {
        let a = self.first_unwritten.first();
        let b = self.first_wrong.first();
        a.into_iter().chain(b).min().copied()
    }

    fn note(&mut self, i: usize, unwritten: bool) {
        let (count, first) = match unwritten {
            true => (&mut self.unwritten, &mut self.first_unwritten),
            false => (&mut self.wrong, &mut self.first_wrong),
        };
        *count += 1;
        if first.len() < KEPT {
            first.push(i);
        }
    }

    /// `self` followed by `later` (a part that comes after it).
    fn then(mut self, later: Mismatches) -> Mismatches {
        self.unwritten += later.unwritten;
        self.wrong += later.wrong;
        let room = KEPT - self.first_unwritten.len();
        self.first_unwritten
            .extend(later.first_unwritten.into_iter().take(room));
        let room = KEPT - self.first_wrong.len();
        self.first_wrong
            .extend(later.first_wrong.into_iter().take(room));
        self
    }
}

/// The image elements of `output` outside `tol` of `expected` (`unwritten` tells an element no
/// thread wrote from a wrong one), and the largest |output - expected| over the image (NaN
/// differences ignored; 0 when there are none).
pub fn scan(
    output: &[f32],
    expected: &[f64],
    pitch: Option<Pitch>,
    tol: &Tolerance,
    unwritten: fn(f32) -> bool,
) -> (Mismatches, f64) {
    // Units the work is split by: rows of a 2D output, else single elements.
    let (units, per_unit, cols) = match pitch {
        Some(p) => (output.len().div_ceil(p.stride.max(1)), p.stride, p.cols),
        None => (output.len(), 1, 1),
    };
    let part = |from: usize, to: usize| {
        let mut found = Mismatches::default();
        let mut max = 0.0f64;
        for u in from..to {
            let start = u * per_unit;
            let end = (start + cols).min(output.len());
            for i in start..end {
                let (o, e) = (output[i], expected[i]);
                if !tol.accepts(o, e) {
                    found.note(i, unwritten(o));
                }
                max = max.max((f64::from(o) - e).abs());
            }
        }
        (found, max)
    };
    let threads = if output.len() < SPLIT_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    if threads <= 1 {
        return part(0, units);
    }
    let chunk = units.div_ceil(threads);
    let parts: Vec<(Mismatches, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (from, to) = ((t * chunk).min(units), ((t + 1) * chunk).min(units));
                s.spawn(move || part(from, to))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a scan does not panic"))
            .collect()
    });
    let max = parts.iter().map(|p| p.1).fold(0.0, f64::max);
    let found = parts
        .into_iter()
        .map(|p| p.0)
        .fold(Mismatches::default(), Mismatches::then);
    (found, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk the judge made before: every element, padding told by division, every mismatch
    /// collected.
    fn plain(o: &[f32], e: &[f64], pitch: Option<Pitch>, tol: &Tolerance) -> (Mismatches, f64) {
        let image = |i: usize| !pitch.is_some_and(|p| p.is_padding(i));
        let all: Vec<usize> = (0..o.len())
            .filter(|&i| image(i) && !tol.accepts(o[i], e[i]))
            .collect();
        let (unwritten, wrong): (Vec<usize>, Vec<usize>) =
            all.iter().partition(|&&i| o[i].is_nan());
        let wrong = Mismatches {
            unwritten: unwritten.len(),
            first_unwritten: unwritten.into_iter().take(KEPT).collect(),
            wrong: wrong.len(),
            first_wrong: wrong.into_iter().take(KEPT).collect(),
        };
        let max = (0..o.len())
            .filter(|&i| image(i))
            .map(|i| (f64::from(o[i]) - e[i]).abs())
            .fold(0.0, f64::max);
        (wrong, max)
    }

    #[test]
    fn the_split_scan_equals_the_plain_one() {
        let tol = Tolerance {
            atol: 1e-3,
            rtol: 1e-3,
        };
        let p = Pitch {
            rows: 1500,
            cols: 1000,
            stride: 1003,
        };
        let n = p.rows * p.stride;
        let expected: Vec<f64> = (0..n).map(|i| (i % 97) as f64 * 0.5).collect();
        let mut output: Vec<f32> = expected.iter().map(|&e| e as f32).collect();
        for i in [5, 1001, 700_000, n - 1, n - 5] {
            output[i] = if i % 2 == 0 { f32::NAN } else { 9.0 };
        }
        // More wrong elements than are kept, spread over every thread's part.
        for i in (3..n).step_by(n / 40) {
            output[i] = -7.0;
        }
        assert!(n >= SPLIT_FROM, "large enough to be split");
        for pitch in [Some(p), None] {
            let split = scan(&output, &expected, pitch, &tol, f32::is_nan);
            assert_eq!(split, plain(&output, &expected, pitch, &tol));
            assert!(
                split.0.wrong > KEPT && split.0.unwritten > 0,
                "{:?}",
                split.0
            );
            assert_eq!(split.0.first(), Some(3));
        }
    }
}
