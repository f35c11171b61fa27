//! What instructors run: `grade` (a folder of submissions, each from a private copy, with the
//! class report), `validate` (every solution passes, every skeleton fails, the book matches the
//! code: `book`, `figures`, `drift`), and the files of a grade (`grade_files`).
//!
//! May import `bench`, `report`, `check`, `judge`, `workbook` and the profile model; never `cmd`.

pub mod book;
pub mod class_report;
pub mod drift;
pub mod figures;
pub mod grade;
pub mod grade_files;
pub mod private;
pub mod row;
pub mod validate;
