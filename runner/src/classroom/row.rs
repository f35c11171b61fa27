//! One submission's grade as `grade` writes it (a row of the table, of grade.csv and of
//! grade.json) and the class report reads it: a leaf, so the report needs nothing of `grade`.

use serde::Serialize;

/// One submission's grade: a row of the table, of grade.csv and of grade.json.
#[derive(Debug, Serialize)]
pub struct Row {
    /// The file's path relative to the folder (`alice/kernel.cu` for a file in a subfolder).
    pub file: String,
    pub passed: bool,
    pub cases_passed: usize,
    pub cases_total: usize,
    /// The kinds of its diagnostics, each once, in the order they came.
    pub diagnostics: Vec<String>,
    /// The first diagnostic's message.
    pub message: Option<String>,
    /// Median seconds on the full case, timed as `runner bench` times it; only for a submission
    /// that passed on a GPU (empty without one).
    pub bench_seconds: Option<f64>,
}
