//! Tensor maps a kernel declares for the TMA unit, as it declares its launch shape.
//!
//! A kernel that copies by `cp.async.bulk.tensor` names each map it wants in one string, and
//! declares a 128-byte, 64-byte-aligned `__device__` global per map for the runner to fill:
//!
//! ```text
//! __device__ __align__(64) unsigned char input_map[128];
//! extern "C" __device__ const char tensor_maps[] =
//!     "input_map: input, dims {input_channels, batch * input_rows * input_cols}, box {32, 136},"
//!     " swizzle 128;";
//! ```
//!
//! Each entry (`;` ends one) is the global's name, the kernel argument (a buffer) the map
//! covers, and its fields in the driver's order, dimension 0 innermost (contiguous) as
//! `cuTensorMapEncodeTiled` and the copies' coordinates take them: `dims` (elements, integer
//! expressions of the kernel's int arguments and the case's macros), `box` (elements a copy
//! moves per dimension), optionally `strides` (bytes from one index of dimensions 1.. to the
//! next; dense by default), `swizzle` (`none`, 32, 64 or 128 bytes), and `when` (comparisons
//! of such expressions joined by `&&`: the map is encoded only for the cases where it holds,
//! say those whose channels a box's row fits; elsewhere its global holds no valid map).
//! Elements are f32, elements outside the tensor read as zeros, no interleave, element
//! strides 1.
//!
//! [`declared`] reads the string from the PTX (NVRTC keeps it as a `.global .b8` array) and
//! [`resolve`] evaluates it for a case into [`TensorMap`]s, checked against what the driver's
//! encoder documents it refuses ([`TensorMap::check`]): what it would refuse is a
//! `bad_launch_shape` naming the map and the field, on both backends. The GPU backend encodes
//! each map with the driver and writes it into its global before the launch; the simulator
//! writes its own encoding there (`sim::tensor_map`).

pub use crate::job::TensorMap;
use crate::job::{Arg, Job};
use crate::shape::impossible;
use std::collections::HashMap;

/// The string a kernel declares its maps in.
pub const SYMBOL: &str = "tensor_maps";
/// Bytes of a tensor map (the IR's fact), and the alignment its global needs.
pub use ptx::ir::MAP_BYTES;
pub const MAP_ALIGN: u32 = 64;
pub use crate::job::ELEM_BYTES;

/// The declaration a learner writes, for messages.
const WANTED: &str = "extern \"C\" __device__ const char tensor_maps[] = \"NAME: TENSOR, dims {D0, D1}, box {B0, B1}, swizzle 128;\";";

/// One map as the string declares it, its sizes not yet evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The `__device__` global the runner writes the map into.
    pub symbol: String,
    /// The kernel argument whose buffer the map covers.
    pub tensor: String,
    pub dims: Vec<String>,
    pub boxes: Vec<String>,
    pub strides: Option<Vec<String>>,
    /// Bytes of the swizzle span (0: none).
    pub swizzle: u32,
    /// The condition under which the map is encoded (`when a == b && ..`), if any.
    pub when: Option<String>,
}

fn ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `s` split at the commas outside braces.
fn top_level(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[from..].trim());
    out
}

/// The text of a declaration; `Err` says what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Declared>, String> {
    let mut maps = Vec::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((symbol, rest)) = entry.split_once(':') else {
            return Err(format!(
                "the entry `{entry}` names no map: write `NAME: TENSOR, dims {{..}}, box {{..}}`"
            ));
        };
        let symbol = symbol.trim().to_string();
        let at = |why: String| format!("map `{symbol}`: {why}");
        if !ident(&symbol) {
            return Err(format!(
                "`{symbol}` is not the name of a `__device__` global"
            ));
        }
        let parts = top_level(rest);
        let tensor = parts[0].to_string();
        if !ident(&tensor) {
            return Err(at(format!(
                "`{tensor}` is not a kernel argument's name (the entry starts `{symbol}: TENSOR,`)"
            )));
        }
        let mut map = Declared {
            symbol: symbol.clone(),
            tensor,
            dims: vec![],
            boxes: vec![],
            strides: None,
            swizzle: 0,
            when: None,
        };
        for part in &parts[1..] {
            let (key, value) = part.split_once(char::is_whitespace).unwrap_or((part, ""));
            let value = value.trim();
            let list = || -> Result<Vec<String>, String> {
                let inner = value
                    .strip_prefix('{')
                    .and_then(|v| v.strip_suffix('}'))
                    .ok_or_else(|| {
                        at(format!("`{key}` takes a list in braces: `{key} {{a, b}}`"))
                    })?;
                Ok(inner.split(',').map(|e| e.trim().to_string()).collect())
            };
            match key {
                "dims" => map.dims = list()?,
                "box" => map.boxes = list()?,
                "strides" => map.strides = Some(list()?),
                "swizzle" => {
                    map.swizzle = match value {
                        "none" | "0" => 0,
                        "32" => 32,
                        "64" => 64,
                        "128" => 128,
                        v => {
                            return Err(at(format!(
                                "swizzle `{v}` is not one the TMA unit has: none, 32, 64 or 128 (bytes)"
                            )));
                        }
                    }
                }
                "when" => map.when = Some(value.to_string()),
                "type" if value == "f32" => {}
                "type" => {
                    return Err(at(format!(
                        "type `{value}`: the puzzles' tensors are f32 (`type f32`, the default)"
                    )));
                }
                other => {
                    return Err(at(format!(
                        "`{other}` is not a field of a map (dims, box, strides, swizzle, type, when)"
                    )));
                }
            }
        }
        if map.dims.is_empty() || map.boxes.is_empty() {
            return Err(at("needs both `dims {..}` and `box {..}`".into()));
        }
        if maps.iter().any(|m: &Declared| m.symbol == map.symbol) {
            return Err(at("is declared twice".into()));
        }
        maps.push(map);
    }
    if maps.is_empty() {
        return Err("the string declares no map".into());
    }
    Ok(maps)
}

/// The maps the PTX declares, `None` where it declares none; a declaration the runner cannot
/// read is a `bad_launch_shape` at `file`.
pub fn declared(ptx: &str, file: &str) -> Result<Option<Vec<Declared>>, crate::Diagnostic> {
    // An array of that name without an initializer is some other global, not a declaration.
    let Some(array) = ptx::module_array(ptx, SYMBOL).filter(|a| a.initialized) else {
        return Ok(None);
    };
    let fail = |why: String| impossible(file, format!("`{SYMBOL}`: {why}; declare `{WANTED}`"));
    let text = String::from_utf8_lossy(&array.bytes);
    let maps = parse(text.trim_end_matches('\0')).map_err(fail)?;
    for m in &maps {
        let global = ptx::module_array(ptx, &m.symbol);
        let fits = global
            .as_ref()
            .is_some_and(|g| g.bytes.len() as u64 >= MAP_BYTES && g.align >= MAP_ALIGN);
        if !fits {
            return Err(impossible(
                file,
                format!(
                    "`{SYMBOL}`: map `{0}` needs its global: declare `__device__ __align__(64) unsigned char {0}[128];` (128 bytes, 64-byte aligned, for the runner to write the encoded map into)",
                    m.symbol
                ),
            ));
        }
    }
    Ok(Some(maps))
}

/// Why a declared map cannot be made for a case: the map (its symbol) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{}`: map `{symbol}`: {why}", SYMBOL)]
pub struct Unresolved {
    pub symbol: String,
    pub why: Unresolvable,
}

/// What is wrong with a declared map for a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unresolvable {
    #[error(
        "when `{0}` is not a condition the runner reads: comparisons (== != < <= > >=) of integer expressions, joined by &&"
    )]
    Condition(String),
    #[error(
        "covers `{tensor}`, which is not a buffer argument of the kernel (its buffers: {buffers})"
    )]
    NotABuffer { tensor: String, buffers: String },
    #[error(
        "{field}[{index}] = `{expr}` is not a non-negative integer expression of literals, the kernel's int arguments ({ints}), + - * / % and parentheses"
    )]
    NotAnInteger {
        field: String,
        index: usize,
        expr: String,
        ints: String,
    },
    #[error(transparent)]
    Encoder(#[from] crate::encoder_limits::EncoderRefusal),
}

/// `maps` evaluated for `job` (integers: its int arguments, then `macros`), each checked;
/// `Err` names the map and the field.
pub fn resolve(
    maps: &[Declared],
    job: &Job,
    macros: &[(String, String)],
) -> Result<Vec<TensorMap>, Unresolved> {
    let mut names: HashMap<String, i64> = macros
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?)))
        .collect();
    for a in &job.args {
        if let Arg::I32 { name, value } = a {
            names.insert(name.clone(), i64::from(*value));
        }
    }
    let mut out = Vec::new();
    for d in maps {
        let wanted = match &d.when {
            Some(cond) => holds(cond, &names).ok_or_else(|| Unresolved {
                symbol: d.symbol.clone(),
                why: Unresolvable::Condition(cond.clone()),
            })?,
            None => true,
        };
        out.push(match wanted {
            true => resolve_one(d, job, &names)?,
            // Not made for this case: its global is cleared, not left with another case's map.
            false => TensorMap {
                symbol: d.symbol.clone(),
                arg: 0,
                dims: vec![],
                strides: vec![],
                boxes: vec![],
                swizzle: 0,
            },
        });
    }
    Ok(out)
}

/// Whether `cond` (comparisons of integer expressions joined by `&&`) holds; `None` where it
/// does not read.
fn holds(cond: &str, names: &HashMap<String, i64>) -> Option<bool> {
    let mut all = true;
    for part in cond.split("&&") {
        let op = ["==", "!=", "<=", ">=", "<", ">"]
            .into_iter()
            .find(|op| part.contains(op))?;
        let (a, b) = part.split_once(op)?;
        let (a, b) = (
            ptx::declared::eval(a, names)?,
            ptx::declared::eval(b, names)?,
        );
        all &= match op {
            "==" => a == b,
            "!=" => a != b,
            "<=" => a <= b,
            ">=" => a >= b,
            "<" => a < b,
            _ => a > b,
        };
    }
    Some(all)
}

fn resolve_one(
    d: &Declared,
    job: &Job,
    names: &HashMap<String, i64>,
) -> Result<TensorMap, Unresolved> {
    let at = |why: Unresolvable| Unresolved {
        symbol: d.symbol.clone(),
        why,
    };
    let buffers: Vec<&str> = job
        .args
        .iter()
        .filter(|a| !matches!(a, Arg::I32 { .. }))
        .map(Arg::name)
        .collect();
    let Some(arg) = job
        .args
        .iter()
        .position(|a| a.name() == d.tensor && !matches!(a, Arg::I32 { .. }))
    else {
        return Err(at(Unresolvable::NotABuffer {
            tensor: d.tensor.clone(),
            buffers: buffers.join(", "),
        }));
    };
    let eval = |field: &str, list: &[String]| -> Result<Vec<u64>, Unresolved> {
        let mut ints: Vec<&String> = names.keys().collect();
        ints.sort();
        list.iter()
            .enumerate()
            .map(|(i, e)| {
                ptx::declared::eval(e, names)
                    .and_then(|v| u64::try_from(v).ok())
                    .ok_or_else(|| {
                        at(Unresolvable::NotAnInteger {
                            field: field.to_string(),
                            index: i,
                            expr: e.clone(),
                            ints: ints
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                        })
                    })
            })
            .collect()
    };
    let dims = eval("dims", &d.dims)?;
    let boxes = eval("box", &d.boxes)?;
    let strides = match &d.strides {
        Some(s) => eval("strides", s)?,
        None => dims
            .iter()
            .scan(ELEM_BYTES, |acc, &n| {
                *acc = acc.saturating_mul(n);
                Some(*acc)
            })
            .take(dims.len().saturating_sub(1))
            .collect(),
    };
    let map = TensorMap {
        symbol: d.symbol.clone(),
        arg,
        dims,
        strides,
        boxes: boxes
            .iter()
            .map(|&b| b.min(u64::from(u32::MAX)) as u32)
            .collect(),
        swizzle: d.swizzle,
    };
    // A job whose inputs were left out (a full case's stub) has no length to check against.
    let bytes = match &job.args[arg] {
        Arg::Input { data, .. } if data.is_empty() => None,
        Arg::Input { data, .. } => Some(data.len()),
        out => out.output_len(),
    };
    map.check(bytes.map(|n| n as u64 * ELEM_BYTES))
        .map_err(|e| at(e.into()))?;
    Ok(map)
}

#[cfg(test)]
#[path = "tensor_maps_tests.rs"]
mod tests;
