//! The compile phase of a check: NVRTC once per distinct macro set, the PTX's entry checked
//! against the puzzle's, the launch a kernel declares resolved, and NVRTC's warnings; and the
//! helpers that place a diagnostic at its chapter and the line that declares what it is about.

use spec::{Case, Diagnostic, Kind, Puzzle};
use toolchain::nvrtc::{self, Compiled, Source, Target};
use toolchain::warnings::Warning;

/// Compiles `code` for every macro set of `cases`, checks each PTX's entry and declared launch,
/// and gathers NVRTC's warnings (each once); `Err` with the first failure's diagnostic.
pub fn cases(
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    cases: &[Case],
) -> Result<Vec<Warning>, Diagnostic> {
    let _compiling = gpu::trace::phase("compile to PTX, check the entry, warnings");
    let mut macro_sets: Vec<&Vec<(String, String)>> = cases.iter().map(|c| &c.macros).collect();
    macro_sets.dedup();
    let mut warnings: Vec<Warning> = vec![];
    for macros in macro_sets {
        // A puzzle whose kernel declares its launch (08) fails here too when the shape is
        // missing or impossible; each case's launch is set from it in `run_case`.
        let ptx = ptx(code, file, macros)?;
        spec::entry::check(&ptx, puzzle.kernel, puzzle.params, file)?;
        puzzle.resolve_launch(&ptx, file, &mut [])?;
        let source = Source { code, file, macros };
        for w in toolchain::warnings::of(&source, &Target::Ptx) {
            let w = explained(w, puzzle);
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    Ok(warnings)
}

/// `d` with its chapter, and at the line that declares what it is about (`at_declaration`).
pub fn located(puzzle: &Puzzle, code: &str, mut d: Diagnostic) -> Diagnostic {
    d.chapter = Some(format!("book/src/{}", puzzle.chapter_file()));
    at_declaration(d, code)
}

/// `case` with its launch set from the shape the kernel declares, for puzzles that let the
/// kernel choose (08); otherwise the case as it is.
pub fn with_declared_launch(
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    case: &Case,
) -> Result<Case, Diagnostic> {
    let mut own = case.clone();
    if puzzle.declared_launch.is_some() {
        let ptx = ptx(code, file, &case.macros)?;
        puzzle.resolve_launch(&ptx, file, std::slice::from_mut(&mut own))?;
    }
    Ok(own)
}

/// A declaration the runner refuses (a launch shape no GPU launches, a tensor map the encoder
/// would not take) is found knowing only the PTX, so its diagnostic says line 1; it belongs at
/// the line that declares the array its message names first (`` `launch_shape` = {...}: ...``,
/// `` `tensor_maps`: map ...``). One about a declaration that is missing stays at line 1.
fn at_declaration(mut d: Diagnostic, code: &str) -> Diagnostic {
    if d.kind != Kind::BadLaunchShape || d.line != Some(1) {
        return d;
    }
    let named = d.message.strip_prefix('`').and_then(|m| m.split_once('`'));
    let Some((symbol, _)) = named.filter(|(s, _)| !s.is_empty()) else {
        return d;
    };
    let declares = |l: &str| {
        let l = l.trim_start();
        !l.starts_with("//") && l.contains(&format!("{symbol}[")) && l.contains("__device__")
    };
    if let Some(n) = code.lines().position(declares) {
        d.line = Some(n as u32 + 1);
    }
    d
}

/// The simulator's options for `code` compiled with `macros`: the checks, with the learner's
/// `__shared__` declarations and pointers into them, so that findings name arrays in their
/// declared type and shape, and the pointer a line indexes through.
pub fn sim_options(code: &str, macros: &[(String, String)]) -> sim::SimOptions {
    let shared = ptx::declared::parse(code, macros);
    sim::SimOptions {
        aliases: ptx::declared::aliases(code, &shared),
        shared,
        ..sim::SimOptions::default()
    }
}

/// The PTX of `code` with `macros` (NVRTC memoizes: each macro set compiles once per process).
pub fn ptx(code: &str, file: &str, macros: &[(String, String)]) -> Result<String, Diagnostic> {
    match nvrtc::compile(&Source { code, file, macros }, &Target::Ptx)? {
        Compiled::Ptx(ptx) => Ok(ptx),
        Compiled::Cubin(_) => unreachable!("a PTX target gives PTX"),
    }
}

/// NVRTC's warning that a variable is "declared but never referenced", where the variable is the
/// launch shape the runner reads from the compiled kernel (a `const` without `extern "C"` has
/// internal linkage, so NVRTC sees no use of it): said as what it is, and how to avoid it.
fn explained(mut w: Warning, puzzle: &Puzzle) -> Warning {
    if let Some(d) = puzzle.declared_launch {
        let unused = format!(
            "variable \"{}\" was declared but never referenced",
            d.symbol
        );
        if w.message.starts_with(&unused) {
            w.message = format!(
                "{}: the runner reads `{}` from the compiled kernel, not your code, and it found it; declare it `extern \"C\" __device__ const int {}[...]`, as the chapter does, and NVRTC keeps it as used without this warning",
                w.message, d.symbol, d.symbol
            );
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unused_launch_shape_warning_is_explained_and_others_are_left_alone() {
        let warn = |m: &str| Warning {
            file: "k.cu".into(),
            line: 3,
            message: m.into(),
        };
        let p08 = puzzle_08::spec();
        let unused = "variable \"launch_shape\" was declared but never referenced (#177-D)";
        let w = explained(warn(unused), &p08);
        assert!(
            w.message.starts_with(unused) && w.message.contains("extern \"C\""),
            "{}",
            w.message
        );
        let other = "variable \"x\" was declared but never referenced (#177-D)";
        assert_eq!(explained(warn(other), &p08).message, other);
        assert_eq!(explained(warn(unused), &puzzle_04::spec()).message, unused);
    }
}
