//! Containment: a panic inside the simulator (a bug of ours, never the learner's) becomes an
//! `internal_error` diagnostic naming the PTX instruction that was running and asking for a
//! report, so one kernel the simulator mishandles cannot take the runner down, and the rest of
//! the check (other cases, the GPU) still reports.

use crate::failed;
use ptx::decode;
use spec::diag::{Diagnostic, Kind};
use spec::job::RunOutput;
use std::time::Instant;

/// Runs `f`, turning a panic into an `internal_error` output; `at` holds the index of the
/// instruction being executed (`None` before the launch starts).
pub(super) fn contained(
    ptx: &str,
    kernel: &str,
    at: &std::cell::Cell<Option<usize>>,
    f: impl FnOnce() -> RunOutput,
) -> RunOutput {
    let start = Instant::now();
    let panic = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(out) => return out,
        Err(p) => p,
    };
    let why = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    // Decoding is deterministic: decode again to name the instruction (it cannot be what
    // panicked when `at` is set, since the launch had started).
    let inst = at.get().and_then(|pc| {
        let prog = decode(ptx, kernel).ok()?;
        let i = prog.insts.get(pc)?;
        let text = prog.texts.get(i.text as usize).cloned().unwrap_or_default();
        Some((text, prog.file_name(i.file), i.line))
    });
    let mut d = match &inst {
        Some((text, _, _)) => Diagnostic::new(
            Kind::InternalError,
            format!(
                "the simulator failed while running the PTX instruction `{text}` ({why}); this is a bug of the runner, not of your kernel: please report it with this kernel. The GPU backend (`--backend gpu`) can run it meanwhile"
            ),
        ),
        None => Diagnostic::new(
            Kind::InternalError,
            format!(
                "the simulator failed while reading this kernel's PTX ({why}); this is a bug of the runner, not of your kernel: please report it with this kernel"
            ),
        ),
    };
    if let Some((_, file, line)) = inst.filter(|i| i.2 > 0) {
        d = d.at_line(file, line);
    }
    failed(d, start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::diag::Kind;

    const PTX: &str = include_str!("../../conformance/tests/fixtures/conv_naive.sm75.ptx");

    #[test]
    fn a_panic_while_running_is_an_internal_error_naming_the_instruction() {
        let prog = decode(PTX, "conv1d").expect("the fixture decodes");
        let pc = prog
            .insts
            .iter()
            .position(|i| i.line > 0)
            .expect("a located instruction");
        let at = std::cell::Cell::new(None);
        let out = contained(PTX, "conv1d", &at, || {
            at.set(Some(pc));
            panic!("index out of range")
        });
        let d = &out.diagnostics[0];
        let text = &prog.texts[prog.insts[pc].text as usize];
        assert_eq!(d.kind, Kind::InternalError);
        assert!(d.message.contains(&format!("`{text}`")), "{}", d.message);
        assert!(d.message.contains("index out of range") && d.message.contains("report"));
        assert_eq!(d.line, Some(prog.insts[pc].line));
        assert!(out.outputs.is_empty());
    }

    #[test]
    fn a_panic_before_the_launch_is_an_internal_error_about_reading_the_ptx() {
        let at = std::cell::Cell::new(None);
        let out = contained(PTX, "conv1d", &at, || panic!("bad token"));
        let d = &out.diagnostics[0];
        assert_eq!((d.kind, d.line), (Kind::InternalError, None));
        assert!(d.message.contains("reading this kernel's PTX (bad token)"));
    }
}
