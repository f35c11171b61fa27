//! `show`'s pictures: who read and wrote which element of one block, per barrier phase, recorded
//! by the simulator's observer (`touches`) and drawn in the terminal (`picture`) or as SVG (`svg`).
//!
//! May import `check`, `judge` and `workbook`; never `report`, `bench`, `classroom` or `cmd`.

pub mod picture;
pub mod svg;
pub mod touches;
