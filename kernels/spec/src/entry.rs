//! The PTX's entry list, checked against the puzzle's declared signature.
//!
//! NVRTC compiles whatever the learner wrote; before anything runs, the entry the puzzle names
//! must exist, unmangled (`extern "C"`), with the declared parameters. A mismatch is a diagnostic
//! that says what was found and what to write instead, never a launch with the wrong arguments.

use crate::diag::{Diagnostic, Kind};
use crate::{Param, ParamType};

/// One `.entry` of a PTX module: its name and its parameters' PTX types (`u64`, `u32`, `f32`...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub params: Vec<String>,
    /// The source line of the entry's first `.loc`, when the PTX has line info.
    pub line: Option<u32>,
}

/// Lists the `.entry` directives of `ptx`.
pub fn entries(ptx: &str) -> Vec<Entry> {
    let mut found = Vec::new();
    let mut lines = ptx.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(rest) = line
            .trim()
            .strip_prefix(".visible .entry ")
            .or_else(|| line.trim().strip_prefix(".entry "))
        else {
            continue;
        };
        let name = rest.split('(').next().unwrap_or("").trim().to_string();
        let mut params = Vec::new();
        let mut first_loc = None;
        for l in lines.by_ref() {
            let l = l.trim();
            if let Some(p) = l.strip_prefix(".param .") {
                params.push(p.split_whitespace().next().unwrap_or("").to_string());
            } else if let Some(loc) = l.strip_prefix(".loc") {
                first_loc = loc.split_whitespace().nth(1).and_then(|n| n.parse().ok());
                break;
            } else if l.starts_with('}') {
                break;
            }
        }
        found.push(Entry {
            name,
            params,
            line: first_loc,
        });
    }
    found
}

fn accepts(ty: ParamType, ptx_type: &str) -> bool {
    match ty {
        ParamType::ConstF32Ptr | ParamType::F32Ptr => ptx_type == "u64" || ptx_type == "b64",
        ParamType::I32 => matches!(ptx_type, "u32" | "s32" | "b32"),
    }
}

fn describe(ptx_type: &str) -> &'static str {
    match ptx_type {
        "u64" | "b64" | "s64" => "a pointer or 64-bit integer",
        "u32" | "s32" | "b32" => "int",
        "f32" => "float",
        "f64" => "double",
        _ => "a value of another type",
    }
}

/// Checks that `ptx` has the entry `kernel` with `params`. On failure returns the diagnostic, at
/// `file` (and the entry's line where known).
pub fn check(ptx: &str, kernel: &str, params: &[Param], file: &str) -> Result<(), Diagnostic> {
    let all = entries(ptx);
    let Some(entry) = all.iter().find(|e| e.name == kernel) else {
        return Err(not_found(&all, kernel, params, file));
    };
    let at = |d: Diagnostic| d.at_line(file, entry.line.unwrap_or(1));
    let wanted = signature(kernel, params);
    if entry.params.len() != params.len() {
        return Err(at(Diagnostic::new(
            Kind::SignatureMismatch,
            format!(
                "`{kernel}` takes {} parameters, but the puzzle passes {}: write `{wanted}`",
                entry.params.len(),
                params.len()
            ),
        )));
    }
    for (i, (p, got)) in params.iter().zip(&entry.params).enumerate() {
        if !accepts(p.ty, got) {
            return Err(at(Diagnostic::new(
                Kind::SignatureMismatch,
                format!(
                    "parameter {} of `{kernel}` (`{}`) should be {} but is {}: write `{wanted}`",
                    i + 1,
                    p.name,
                    p.ty.c_name(),
                    describe(got)
                ),
            )));
        }
    }
    Ok(())
}

/// The C signature a puzzle expects, for messages.
pub fn signature(kernel: &str, params: &[Param]) -> String {
    let list: Vec<String> = params
        .iter()
        .map(|p| format!("{} {}", p.ty.c_name(), p.name))
        .collect();
    format!("extern \"C\" __global__ void {kernel}({})", list.join(", "))
}

fn not_found(all: &[Entry], kernel: &str, params: &[Param], file: &str) -> Diagnostic {
    let mangled = format!("{}{kernel}", kernel.len());
    let message = if let Some(e) = all
        .iter()
        .find(|e| e.name.starts_with("_Z") && e.name.contains(&mangled))
    {
        format!(
            "found `{kernel}` only under its C++ name `{}`: the runner looks it up by its C name. \
             Put `extern \"C\"` before `__global__`: `{}`",
            e.name,
            signature(kernel, params)
        )
    } else if all.is_empty() {
        format!(
            "the file defines no `__global__` function; the puzzle needs `{}`",
            signature(kernel, params)
        )
    } else {
        let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        format!(
            "no kernel named `{kernel}` (found: {}); the puzzle needs `{}`",
            names.join(", "),
            signature(kernel, params)
        )
    };
    let line = all.iter().find_map(|e| e.line).unwrap_or(1);
    Diagnostic::new(Kind::KernelNotFound, message).at_line(file, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[Param] = &[
        Param {
            name: "a",
            ty: ParamType::F32Ptr,
        },
        Param {
            name: "n",
            ty: ParamType::I32,
        },
    ];

    fn ptx(name: &str, types: &[&str]) -> String {
        let params: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(i, t)| format!("\t.param .{t} {name}_param_{i}"))
            .collect();
        format!(
            ".visible .entry {name}(\n{}\n)\n{{\n\t.loc\t1 7 0\n\tret;\n}}\n",
            params.join(",\n")
        )
    }

    #[test]
    fn matching_entry_passes() {
        assert_eq!(
            check(&ptx("k", &["u64", "u32"]), "k", PARAMS, "f.cu"),
            Ok(())
        );
    }

    #[test]
    fn mangled_name_suggests_extern_c() {
        let d = check(&ptx("_Z1kPfi", &["u64", "u32"]), "k", PARAMS, "f.cu").unwrap_err();
        assert_eq!(d.kind, Kind::KernelNotFound);
        assert!(d.message.contains("extern \"C\""), "{}", d.message);
    }

    #[test]
    fn wrong_types_and_counts_are_mismatches() {
        let d = check(&ptx("k", &["u64", "f32"]), "k", PARAMS, "f.cu").unwrap_err();
        assert_eq!((d.kind, d.line), (Kind::SignatureMismatch, Some(7)));
        assert!(
            d.message.contains("should be int but is float"),
            "{}",
            d.message
        );
        let d = check(&ptx("k", &["u64"]), "k", PARAMS, "f.cu").unwrap_err();
        assert!(d.message.contains("takes 1 parameters"), "{}", d.message);
    }
}
