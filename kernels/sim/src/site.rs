//! Where a diagnostic points in the learner's source. Each instruction carries the line of its
//! `.loc`; NVRTC inlines every `__device__` function it can, and then writes the line inside the
//! function together with the call it was inlined at (`inlined_at file line col`, the immediate
//! call only). A diagnostic stays at the inner line (that is where the instruction is), and says
//! which call it came through, so that a wait in a helper called from three places names the one
//! that hangs. An instruction of a header's function (wmma's `crt/mma.hpp`, `cuda_fp16.h`)
//! inlined into the learner's file is placed at the learner's call, with the header's line as a
//! note: the learner cannot change the header, only the call.

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
            let note = format!("line {} of {header}", inst.line);
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
            Some(i) if let Some(header) = self.header(i) => {
                format!("{}, in {header} line {}", i.call, i.line)
            }
            Some(i) if i.call > 0 && i.call_file == i.file && i.call != i.line => {
                format!("{}, in a function called on line {}", i.line, i.call)
            }
            Some(i) => i.line.to_string(),
            None => "0".to_string(),
        }
    }

    fn learner_line(&self, pc: u32) -> String {
        match self.insts.get(pc as usize) {
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
        let path = self.file_name(inst.file);
        let name = path.rsplit('/').next().unwrap_or(&path);
        Some(format!("`{name}`"))
    }
}

/// The header an instruction is in, where NVRTC inlined it from a call in another file.
trait Headed {
    /// `` `mma.hpp` `` for an instruction of a header's function called from another file.
    fn header(&self, inst: &Inst) -> Option<String>;
}

#[cfg(test)]
mod tests {
    use super::Locate;
    use ptx::decode::decode;
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
}
