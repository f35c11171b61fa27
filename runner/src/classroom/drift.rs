//! Skeleton against solution: the learner's file must be the reference solution with only the
//! learner's regions (`ANCHOR: solve` .. `ANCHOR_END: solve`) cut out, so the two cannot drift.
//!
//! [`compare`] walks both files outside those regions, line by line (trailing whitespace aside), and
//! reports the first difference with both files' line numbers.
use crate::classroom::book;

/// Where skeleton and solution first differ outside the learner's regions (1-based lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drift {
    pub skeleton_line: usize,
    pub solution_line: usize,
    pub problem: String,
}

impl Drift {
    pub fn describe(&self, skeleton: &str, solution: &str) -> String {
        format!(
            "{skeleton}:{} and {solution}:{} differ outside the learner's part ({}): make them equal; \
             only lines between `ANCHOR: solve` and `ANCHOR_END: solve` may differ",
            self.skeleton_line, self.solution_line, self.problem
        )
    }
}

const START: &str = "ANCHOR:";
const END: &str = "ANCHOR_END:";
const REGION: &str = "solve";

/// The lines outside the learner's regions, with their 1-based numbers; the marker lines are kept
/// (both files must have the same regions). Errors: an unclosed region, or a stray end marker.
fn outside(text: &str) -> Result<Vec<(usize, &str)>, (usize, String)> {
    let mut kept = vec![];
    let mut open: Option<usize> = None;
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end())) {
        let starts = book::anchor_on(line, START) == Some(REGION);
        let ends = book::anchor_on(line, END) == Some(REGION);
        match (open, starts, ends) {
            (None, true, _) => {
                open = Some(n);
                kept.push((n, line));
            }
            (Some(_), _, true) => {
                open = None;
                kept.push((n, line));
            }
            (Some(at), true, _) => {
                return Err((
                    n,
                    format!("`ANCHOR: solve` again before the one of line {at} ends"),
                ));
            }
            (None, _, true) => return Err((n, "`ANCHOR_END: solve` with no region open".into())),
            (None, false, false) => kept.push((n, line)),
            (Some(_), false, false) => {}
        }
    }
    match open {
        Some(at) => Err((
            at,
            "`ANCHOR: solve` is never closed by `ANCHOR_END: solve`".into(),
        )),
        None => Ok(kept),
    }
}

/// Compares a skeleton with its solution outside the learner's regions, line by line (trailing
/// whitespace ignored). The solution must have at least one region.
pub fn compare(skeleton: &str, solution: &str) -> Result<(), Drift> {
    let drift = |skeleton_line, solution_line, problem: String| Drift {
        skeleton_line,
        solution_line,
        problem,
    };
    let sk = outside(skeleton).map_err(|(n, why)| drift(n, 0, format!("skeleton: {why}")))?;
    let so = outside(solution).map_err(|(n, why)| drift(0, n, format!("solution: {why}")))?;
    if !so
        .iter()
        .any(|(_, l)| book::anchor_on(l, START) == Some(REGION))
    {
        return Err(drift(
            0,
            0,
            "the solution has no `ANCHOR: solve` region".into(),
        ));
    }
    for i in 0..sk.len().max(so.len()) {
        match (sk.get(i), so.get(i)) {
            (Some((a, x)), Some((b, y))) if x != y => {
                return Err(drift(
                    *a,
                    *b,
                    format!("`{}` against `{}`", x.trim(), y.trim()),
                ));
            }
            (Some(_), Some(_)) => {}
            (Some((a, x)), None) => {
                let end = solution.lines().count();
                return Err(drift(
                    *a,
                    end,
                    format!("the skeleton goes on with `{}`", x.trim()),
                ));
            }
            (None, Some((b, y))) => {
                let end = skeleton.lines().count();
                return Err(drift(
                    end,
                    *b,
                    format!("the solution goes on with `{}`", y.trim()),
                ));
            }
            (None, None) => unreachable!("i is below the longer length"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOLUTION: &str = "// head\nvoid k() {\n    // ANCHOR: solve\n    int i = 1;\n    out[i] = 2;\n    // ANCHOR_END: solve\n}\n";
    const SKELETON: &str = "// head\nvoid k() {\n    // ANCHOR: solve\n    // Your code here.\n    // ANCHOR_END: solve\n}\n";

    #[test]
    fn skeleton_equal_outside_the_region_agrees() {
        assert_eq!(compare(SKELETON, SOLUTION), Ok(()));
        // Trailing whitespace is not drift.
        assert_eq!(compare(&SKELETON.replace("{\n", "{  \n"), SOLUTION), Ok(()));
    }

    #[test]
    fn a_changed_line_is_reported_with_both_line_numbers() {
        let solution = SOLUTION.replace("}\n", "}\n// tail\n");
        let skeleton = SKELETON.replace("}\n", "}\n// tall\n");
        let d = compare(&skeleton, &solution).unwrap_err();
        assert_eq!((d.skeleton_line, d.solution_line), (7, 8), "{d:?}");
        assert!(d.problem.contains("`// tall` against `// tail`"), "{d:?}");
    }

    #[test]
    fn a_signature_change_is_drift() {
        let d = compare(&SKELETON.replace("void k()", "void k(int n)"), SOLUTION).unwrap_err();
        assert_eq!((d.skeleton_line, d.solution_line), (2, 2));
    }

    #[test]
    fn a_skeleton_without_markers_drifts_at_the_marker() {
        let skeleton = SOLUTION
            .replace("    // ANCHOR: solve\n", "")
            .replace("    // ANCHOR_END: solve\n", "");
        let d = compare(&skeleton, SOLUTION).unwrap_err();
        assert_eq!((d.skeleton_line, d.solution_line), (3, 3), "{d:?}");
    }

    #[test]
    fn extra_lines_at_the_end_are_drift() {
        let d = compare(&format!("{SKELETON}// extra\n"), SOLUTION).unwrap_err();
        assert_eq!((d.skeleton_line, d.solution_line), (7, 7), "{d:?}");
        assert!(d.problem.contains("skeleton goes on"), "{d:?}");
    }

    #[test]
    fn unclosed_or_missing_regions_are_errors() {
        let open = SKELETON.replace("    // ANCHOR_END: solve\n", "");
        let d = compare(&open, SOLUTION).unwrap_err();
        assert!(d.problem.contains("never closed"), "{d:?}");
        assert_eq!(d.skeleton_line, 3);
        let none = "void k() {}\n";
        assert!(
            compare(none, none)
                .unwrap_err()
                .problem
                .contains("no `ANCHOR: solve`")
        );
    }
}
