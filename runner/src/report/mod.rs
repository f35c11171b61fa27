//! Reports of a check's [`Outcome`](crate::judge::outcome::Outcome): for people (`human`), for
//! scripts (`json`), for Gradescope (`gradescope`), and the commands they suggest (`rerun`).
//!
//! May import `judge` and `workbook`, never `check` (a report reads the outcome as data, it
//! runs nothing), `show`, `bench`, `classroom` or `cmd`.

pub mod gradescope;
pub mod human;
pub mod json;
pub mod rerun;

pub use human::{View, human, stats};
pub use rerun::Rerun;
