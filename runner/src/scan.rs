//! The judge's pass over an output: which elements are outside the tolerance, and the largest
//! error, on every core for a full-scale output.
//!
//! A full case has up to 67 million elements (puzzle 09's 8192 x 8192), judged in the GPU worker
//! on every check; element by element on one core, with a division per element to tell a 2D
//! output's padding from its image, that was a second of the check. [`scan`] walks a 2D output
//! row by row (no division) and splits the rows, or the elements, among threads; the result is
//! the same as the plain walk's (mismatches in ascending order; the maximum ignores NaN as
//! `f64::max` does), which `the_split_scan_equals_the_plain_one` checks.

use spec::Tolerance;
use spec::job::Pitch;

/// Below this many elements one thread does it all.
const SPLIT_FROM: usize = 1 << 20;

/// The image elements of `output` outside `tol` of `expected`, ascending, and the largest
/// |output - expected| over the image (NaN differences ignored; 0 when there are none).
pub fn scan(
    output: &[f32],
    expected: &[f64],
    pitch: Option<Pitch>,
    tol: &Tolerance,
) -> (Vec<usize>, f64) {
    // Units the work is split by: rows of a 2D output, else single elements.
    let (units, per_unit, cols) = match pitch {
        Some(p) => (output.len().div_ceil(p.stride.max(1)), p.stride, p.cols),
        None => (output.len(), 1, 1),
    };
    let part = |from: usize, to: usize| {
        let mut wrong = vec![];
        let mut max = 0.0f64;
        for u in from..to {
            let start = u * per_unit;
            let end = (start + cols).min(output.len());
            for i in start..end {
                let (o, e) = (output[i], expected[i]);
                if !tol.accepts(o, e) {
                    wrong.push(i);
                }
                max = max.max((f64::from(o) - e).abs());
            }
        }
        (wrong, max)
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
    let parts: Vec<(Vec<usize>, f64)> = std::thread::scope(|s| {
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
    (parts.into_iter().flat_map(|p| p.0).collect(), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk the judge made before: every element, padding told by division.
    fn plain(o: &[f32], e: &[f64], pitch: Option<Pitch>, tol: &Tolerance) -> (Vec<usize>, f64) {
        let image = |i: usize| !pitch.is_some_and(|p| p.is_padding(i));
        let wrong = (0..o.len())
            .filter(|&i| image(i) && !tol.accepts(o[i], e[i]))
            .collect();
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
        assert!(n >= SPLIT_FROM, "large enough to be split");
        for pitch in [Some(p), None] {
            let split = scan(&output, &expected, pitch, &tol);
            assert_eq!(split, plain(&output, &expected, pitch, &tol));
            assert!(!split.0.is_empty());
        }
    }
}
