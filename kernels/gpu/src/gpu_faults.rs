//! What the GPU backend tells a learner beyond CUDA's error code: a `__trap()` or a failed
//! `assert` as a `trap` diagnostic (with the condition, file, line, block and thread the device
//! printed for the assert), and the input buffers the kernel changed (`wrote_input`).
//!
//! The driver prints a failed assert's line to the process's standard output when the context
//! synchronizes, which the worker captures (`capture`); [`assert_from_printed`] takes those lines
//! out of what the kernel printed and into the diagnostic. Inputs are compared with what was sent,
//! bit for bit, after every launch that completed.

use cudarc::driver::{DriverError, sys};
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job};

/// The `trap` diagnostic for a launch that failed with `e`, if the error is a trap's: a
/// device-side assert (`CUDA_ERROR_ASSERT`), or an illegal instruction or an exception on the
/// device in a kernel that calls `__trap()` (the driver reports a trap as one of those).
pub fn trap(e: &DriverError, code: &str) -> Option<Diagnostic> {
    use sys::CUresult::*;
    let traps = code.contains("__trap") || code.contains("trap;");
    let message = match e.0 {
        CUDA_ERROR_ASSERT => {
            "an `assert` failed on the device: a failed assert aborts the whole launch, and no output is kept"
        }
        CUDA_ERROR_ILLEGAL_INSTRUCTION | CUDA_ERROR_LAUNCH_FAILED if traps => {
            "the kernel executed `__trap()`: on a GPU this aborts the whole launch with an error and no output is kept"
        }
        _ => return None,
    };
    Some(Diagnostic::new(Kind::Trap, message))
}

/// Completes the `trap` diagnostic `d` of a failed assert with the first line the device printed
/// for it (`FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `COND` failed.`),
/// and takes every such line out of `printed` (the lines the worker captured).
pub fn assert_from_printed(d: &mut Diagnostic, printed: &mut Vec<String>) {
    let is_assert = |p: &String| p.contains("Assertion `") && p.trim_end().ends_with("failed.");
    let lines: Vec<String> = printed.iter().filter(|p| is_assert(p)).cloned().collect();
    printed.retain(|p| !is_assert(p));
    let Some(first) = lines.first() else {
        return;
    };
    if let Some(a) = parse_assert(first) {
        d.message = format!(
            "assertion `{}` failed in {} ({}:{}): on a GPU a failed assert aborts the whole launch, and no output is kept",
            a.cond, a.func, a.file, a.line
        );
        *d = d
            .clone()
            .at_line(a.file, a.line)
            .in_thread(a.block, a.thread);
    }
    if lines.len() > 1 {
        d.message += &format!(" ({} more threads failed it)", lines.len() - 1);
    }
}

struct Failed {
    file: String,
    line: u32,
    func: String,
    block: [u32; 3],
    thread: [u32; 3],
    cond: String,
}

fn parse_assert(text: &str) -> Option<Failed> {
    let (head, rest) = text.split_once(": block: [")?;
    let (place, func) = head.split_once(": ")?;
    let (file, line) = place.rsplit_once(':')?;
    let (block, rest) = rest.split_once("], thread: [")?;
    let (thread, rest) = rest.split_once("] Assertion `")?;
    let cond = rest.trim_end().strip_suffix("` failed.")?;
    let dims = |s: &str| -> Option<[u32; 3]> {
        let v: Vec<u32> = s
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?;
        v.try_into().ok()
    };
    Some(Failed {
        file: file.to_string(),
        line: line.parse().ok()?,
        func: func.to_string(),
        block: dims(block)?,
        thread: dims(thread)?,
        cond: cond.to_string(),
    })
}

/// The `wrote_input` diagnostic when the input buffers read back after the launch (`after`, in
/// argument order, `None` for the others) differ from what the job sent.
pub fn changed_inputs(job: &Job, after: &[Option<Vec<f32>>]) -> Option<Diagnostic> {
    for (arg, back) in job.args.iter().zip(after) {
        let (Arg::Input { name, data }, Some(back)) = (arg, back) else {
            continue;
        };
        let Some((first, count)) = differences(data, back) else {
            continue;
        };
        return Some(Diagnostic::new(
            Kind::WroteInput,
            format!(
                "the kernel changed {count} of {} elements of the input `{name}` (the first is `{name}[{first}]`): inputs are read-only, and blocks that read what another block overwrote get results that depend on the schedule; write only to the output (run with --backend sim for the line, block and thread)",
                data.len()
            ),
        ));
    }
    None
}

/// The first index where `a` and `b` differ bit for bit, and how many do; split among threads
/// for a full case's input (a hundred million elements).
fn differences(a: &[f32], b: &[f32]) -> Option<(usize, usize)> {
    let n = a.len().min(b.len());
    let part = |from: usize, to: usize| {
        let mut first = None;
        let mut count = 0;
        for i in from..to {
            if a[i].to_bits() != b[i].to_bits() {
                first = first.or(Some(i));
                count += 1;
            }
        }
        (first, count)
    };
    let threads = match n < 1 << 20 {
        true => 1,
        false => std::thread::available_parallelism().map_or(1, |t| t.get()),
    };
    let chunk = n.div_ceil(threads).max(1);
    let parts: Vec<(Option<usize>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|from| s.spawn(move || part(from, (from + chunk).min(n))))
            .collect();
        let joined = handles.into_iter().map(|h| h.join().expect("no panic"));
        joined.collect()
    });
    let first = parts.iter().find_map(|p| p.0)?;
    Some((first, parts.iter().map(|p| p.1).sum()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> String {
        text.to_string()
    }

    #[test]
    fn the_device_assert_line_becomes_the_diagnostic() {
        let mut printed = vec![
            line("hello"),
            line(
                "p/kernel.cu:12: void conv1d(const float *, float *, int): block: [3,0,0], thread: [4,0,0] Assertion `i < size` failed.",
            ),
            line(
                "p/kernel.cu:12: void conv1d(const float *, float *, int): block: [3,0,0], thread: [5,0,0] Assertion `i < size` failed.",
            ),
        ];
        let mut d = Diagnostic::new(Kind::Trap, "an `assert` failed");
        assert_from_printed(&mut d, &mut printed);
        assert_eq!(printed, vec![line("hello")]);
        assert_eq!((d.file.as_deref(), d.line), (Some("p/kernel.cu"), Some(12)));
        assert_eq!((d.block, d.thread), (Some([3, 0, 0]), Some([4, 0, 0])));
        assert!(
            d.message
                .contains("assertion `i < size` failed in void conv1d(")
        );
        assert!(
            d.message.ends_with("(1 more threads failed it)"),
            "{}",
            d.message
        );
    }

    #[test]
    fn a_changed_input_is_found_bit_for_bit() {
        let job = Job {
            args: vec![Arg::Input {
                name: "a".into(),
                data: vec![1.0, 0.0, 2.0],
            }],
            kernel: "k".into(),
            launch: spec::job::Launch::linear(1, 1),
            constants: vec![],
            tensor_maps: vec![],
            budget: None,
            work: 0,
        };
        assert!(changed_inputs(&job, &[Some(vec![1.0, 0.0, 2.0])]).is_none());
        let d = changed_inputs(&job, &[Some(vec![1.0, -0.0, 3.0])]).expect("changed");
        assert_eq!(d.kind, Kind::WroteInput);
        assert!(
            d.message
                .contains("2 of 3 elements of the input `a` (the first is `a[1]`)")
        );
    }

    #[test]
    fn a_large_input_is_compared_in_parts_with_the_same_answer() {
        let a: Vec<f32> = (0..3_000_001).map(|i| i as f32).collect();
        let mut b = a.clone();
        assert_eq!(differences(&a, &b), None);
        for i in [2_999_999, 1_500_000, 77] {
            b[i] = -1.0;
        }
        assert_eq!(differences(&a, &b), Some((77, 3)));
    }
}
