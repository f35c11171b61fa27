//! Where a diagnostic points in the learner's source. Each instruction carries the line of its
//! `.loc`; NVRTC inlines every `__device__` function it can, and then writes the line inside the
//! function together with the call it was inlined at (`inlined_at file line col`, the immediate
//! call only). A diagnostic stays at the inner line (that is where the instruction is), and says
//! which call it came through, so that a wait in a helper called from three places names the one
//! that hangs. An instruction of a header's function (wmma's `crt/mma.hpp`, `cuda_fp16.h`)
//! inlined into the learner's file is placed at the learner's call, with the header's line as a
//! note: the learner cannot change the header, only the call. Where the header's function was
//! reached through other header functions (`__pipeline_memcpy_async` into
//! `cuda_pipeline_helpers.h`), the call is the first of the whole chain in the learner's file
//! (`ptx`'s `parse::inline`), and the note gives the header calls on the way.

use ptx::ir::{Inst, Program};
use spec::diag::Diagnostic;

/// Where an instruction is in the learner's source, for the simulator's diagnostics.
pub trait Locate {
    /// `d` placed at instruction `inst`'s learner line (see the impl).
    fn locate(&self, d: Diagnostic, inst: &Inst) -> Diagnostic;
    /// Instruction `pc`'s learner line for a sentence.
    fn site(&self, pc: u32) -> String;
    /// Instruction `pc`'s line, or where it is in a header's function the learner's call with
    /// the header's line (`76, in `mma.hpp` line 415`).
    fn learner_line(&self, pc: u32) -> String;
}

impl Locate for Program {
    /// `d` placed at instruction `inst`'s learner line (when it has one); where that line is in a
    /// function NVRTC inlined, the message also says which call it came through (unless it says
    /// so already).
    fn locate(&self, mut d: Diagnostic, inst: &Inst) -> Diagnostic {
        if inst.line == 0 {
            return d;
        }
        if let Some(header) = self.header(inst) {
            let note = match self.hops(inst) {
                Some(hops) => format!("in {hops}"),
                None => format!("line {} of {header}", inst.line),
            };
            if !d.message.contains(&note) {
                d.message += &format!(" ({note}, which line {} calls)", inst.call);
            }
            return d.at_line(self.file_name(inst.call_file), inst.call);
        }
        let called = format!("called on line {}", inst.call);
        if inst.call > 0
            && inst.call_file == inst.file
            && inst.call != inst.line
            && !d.message.contains(&called)
        {
            d.message += &format!(" (line {} is in a function {called})", inst.line);
        }
        d.at_line(self.file_name(inst.file), inst.line)
    }

    /// Instruction `pc`'s learner line for a sentence: `438`, or `438, in a function called on
    /// line 527` where NVRTC inlined it.
    fn site(&self, pc: u32) -> String {
        match self.insts.get(pc as usize) {
            Some(i) if self.header(i).is_some() => self.learner_line(pc),
            Some(i) if i.call > 0 && i.call_file == i.file && i.call != i.line => {
                format!("{}, in a function called on line {}", i.line, i.call)
            }
            Some(i) => i.line.to_string(),
            None => "0".to_string(),
        }
    }

    fn learner_line(&self, pc: u32) -> String {
        match self.insts.get(pc as usize) {
            Some(i) if let Some(hops) = self.hops(i) => format!("{}, in {hops}", i.call),
            Some(i) if let Some(header) = self.header(i) => {
                format!("{}, in {header} line {}", i.call, i.line)
            }
            Some(i) => i.line.to_string(),
            None => "0".to_string(),
        }
    }
}

impl Headed for Program {
    fn header(&self, inst: &Inst) -> Option<String> {
        if inst.call == 0 || inst.call_file == inst.file {
            return None;
        }
        Some(self.short(inst.file))
    }

    fn short(&self, file: u32) -> String {
        let path = self.file_name(file);
        format!("`{}`", path.rsplit('/').next().unwrap_or(&path))
    }

    fn hops(&self, inst: &Inst) -> Option<String> {
        let via = self.vias.get(inst.via.checked_sub(1)? as usize)?;
        let mut hops: Vec<(u32, Vec<String>)> = vec![];
        for &(f, l) in via.iter().chain([(inst.file, inst.line)].iter()) {
            match hops.last_mut() {
                Some((g, lines)) if *g == f => lines.push(l.to_string()),
                _ => hops.push((f, vec![l.to_string()])),
            }
        }
        let hop = |(f, lines): &(u32, Vec<String>)| {
            let s = if lines.len() > 1 { "s" } else { "" };
            format!("{} line{s} {}", self.short(*f), lines.join(", "))
        };
        Some(hops.iter().map(hop).collect::<Vec<_>>().join(" -> "))
    }
}

/// The header an instruction is in, where NVRTC inlined it from a call in another file.
trait Headed {
    /// `` `mma.hpp` `` for an instruction of a header's function called from another file.
    fn header(&self, inst: &Inst) -> Option<String>;
    /// `` `file.h` `` for `.file` index `file`.
    fn short(&self, file: u32) -> String;
    /// The header calls of an instruction reached through other header functions, outermost
    /// first, down to its line: `` `a.h` line 103 -> `b.h` lines 292, 261, 166 ``.
    fn hops(&self, inst: &Inst) -> Option<String>;
}

#[cfg(test)]
mod tests {
    use super::Locate;
    use ptx::decode;
    use spec::diag::{Diagnostic, Kind};

    const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.file 1 "kernel.cu"
.file 2 "helper.h"
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<4>;
.loc 1 7 3
mov.u32 %r1, 1;
.loc 1 3 5, function_name $L__info_string0, inlined_at 1 9 3
add.u32 %r2, %r1, 1;
.loc 2 4 5, function_name $L__info_string1, inlined_at 1 2 1
add.u32 %r3, %r2, 1;
ret;
}
"#;

    #[test]
    fn an_inlined_line_names_its_call_and_a_header_line_is_placed_at_the_learners_call() {
        let prog = decode(PTX, "k").expect("decodes");
        let calls: Vec<(u32, u32)> = prog.insts.iter().map(|i| (i.line, i.call)).collect();
        assert_eq!(&calls[..3], &[(7, 0), (3, 9), (4, 2)]);
        assert_eq!(prog.site(0), "7");
        assert_eq!(prog.site(1), "3, in a function called on line 9");
        let d = prog.locate(Diagnostic::new(Kind::Race, "a race"), &prog.insts[1]);
        assert_eq!(
            (d.message.as_str(), d.line),
            ("a race (line 3 is in a function called on line 9)", Some(3))
        );
        let plain = prog.locate(Diagnostic::new(Kind::Race, "a race"), &prog.insts[0]);
        assert_eq!((plain.message.as_str(), plain.line), ("a race", Some(7)));
        assert_eq!(prog.learner_line(0), "7");
        assert_eq!(prog.learner_line(2), "2, in `helper.h` line 4");
        assert_eq!(prog.site(2), "2, in `helper.h` line 4");
        let header = prog.locate(Diagnostic::new(Kind::Race, "a race"), &prog.insts[2]);
        assert_eq!(
            (header.message.as_str(), header.line),
            ("a race (line 4 of `helper.h`, which line 2 calls)", Some(2))
        );
        assert!(
            header
                .file
                .as_deref()
                .is_some_and(|f| f.ends_with("kernel.cu"))
        );
    }

    #[test]
    fn a_header_line_reached_through_header_functions_is_placed_at_the_learners_call() {
        let ptx = PTX
            .replace(
                ".file 2 \"helper.h\"",
                ".file 2 \"outer.h\"\n.file 3 \"inner.h\"",
            )
            .replace(
                ".loc 2 4 5, function_name $L__info_string1, inlined_at 1 2 1",
                ".loc 2 40 9, function_name $L__info_string1, inlined_at 1 12 3\n.loc 3 50 5, function_name $L__info_string2, inlined_at 2 40 9\n.loc 3 60 7, function_name $L__info_string3, inlined_at 3 50 5",
            );
        let prog = decode(&ptx, "k").expect("decodes");
        let i = &prog.insts[2];
        assert_eq!((i.file, i.line, i.call_file, i.call), (3, 60, 1, 12));
        let at = "12, in `outer.h` line 40 -> `inner.h` lines 50, 60";
        assert_eq!(
            (prog.site(2).as_str(), prog.learner_line(2).as_str()),
            (at, at)
        );
        let d = prog.locate(Diagnostic::new(Kind::Race, "a race"), i);
        assert_eq!(
            (d.message.as_str(), d.line),
            (
                "a race (in `outer.h` line 40 -> `inner.h` lines 50, 60, which line 12 calls)",
                Some(12)
            )
        );
        assert!(d.file.as_deref().is_some_and(|f| f.ends_with("kernel.cu")));
    }
}
