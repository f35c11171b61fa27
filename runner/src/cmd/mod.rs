//! One module per subcommand, each with its `Args` (clap derive; doc comments are the help) and
//! its `execute`, which returns the process's exit status.

pub mod bench;
pub mod book;
pub mod check;
pub mod grade;
pub mod hint;
pub mod list;
pub mod validate;
