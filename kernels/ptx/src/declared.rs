//! The learner's `__shared__` declarations as the CUDA source writes them. PTX knows a shared
//! array only as bytes (`.shared .align 8 .b8 sm[]`), so a diagnostic would name a `float2`
//! array's element 2600 as the 4-byte word `sm[5200]`; reading the declared element type and
//! dimensions from the source (`parse`) lets it say `sm[2600].x`, and a 3D array's element
//! `As[1][0][0]` (`SharedDecl::element`). Only what is understood is kept: a declaration
//! whose type is not a builtin scalar or vector type, or whose dimension is not an integer
//! expression of literals and constants the file defines, is left out, and the caller names the
//! bytes as before.

use std::collections::HashMap;

/// One `__shared__` array: its name, element type and dimensions (an `extern` array's first
/// dimension is unknown, `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedDecl {
    pub name: String,
    /// Bytes of one element (`float2`: 8).
    pub elem_bytes: u32,
    /// Components of a builtin vector type (`float2`: 2), 1 for a scalar.
    pub lanes: u32,
    pub dims: Vec<Option<u64>>,
}

impl SharedDecl {
    /// Bytes the declaration takes, where all its dimensions are known.
    pub fn bytes(&self) -> Option<u64> {
        self.dims
            .iter()
            .try_fold(u64::from(self.elem_bytes), |n, d| Some(n * (*d)?))
    }

    /// The element holding byte `byte` of the array, read or written `width` bytes at a time:
    /// `As[1][0][0]`, or `sm[2600].x` when the access takes one component of a vector.
    pub fn element(&self, byte: u64, width: u32) -> String {
        let flat = byte / u64::from(self.elem_bytes.max(1));
        let mut index = Vec::with_capacity(self.dims.len().max(1));
        let mut rest = flat;
        for d in self.dims.iter().skip(1).rev() {
            let d = d.unwrap_or(1).max(1);
            index.push(rest % d);
            rest /= d;
        }
        index.push(rest);
        index.reverse();
        let mut name = self.name.clone();
        for i in index {
            name.push_str(&format!("[{i}]"));
        }
        let comp = self.elem_bytes / self.lanes.max(1);
        if self.lanes > 1 && width < self.elem_bytes && comp > 0 {
            let lane = (byte % u64::from(self.elem_bytes)) / u64::from(comp);
            name.push('.');
            name.push(['x', 'y', 'z', 'w'][(lane as usize).min(3)]);
        }
        name
    }
}

/// Bytes and components of a builtin type name, `None` for one not understood.
fn builtin(ty: &str) -> Option<(u32, u32)> {
    let scalar = |s: &str| -> Option<u32> {
        Some(match s {
            "char" | "uchar" | "int8_t" | "uint8_t" | "bool" => 1,
            "short" | "ushort" | "half" | "__half" | "__nv_bfloat16" | "int16_t" | "uint16_t" => 2,
            "int" | "uint" | "unsigned" | "float" | "int32_t" | "uint32_t" => 4,
            "long" | "ulong" | "longlong" | "ulonglong" | "double" | "int64_t" | "uint64_t"
            | "size_t" => 8,
            _ => return None,
        })
    };
    if let Some(b) = scalar(ty) {
        return Some((b, 1));
    }
    match ty {
        "half2" | "__half2" => return Some((4, 2)),
        "__nv_bfloat162" => return Some((4, 2)),
        _ => {}
    }
    let lanes = ty.chars().last()?.to_digit(10)?;
    if !(1..=4).contains(&lanes) {
        return None;
    }
    let b = scalar(&ty[..ty.len() - 1])?;
    // Builtin vectors of three components take three elements' bytes.
    Some((b * lanes, lanes))
}

/// The type words before the name, joined to one builtin name (`unsigned int` is `uint`).
fn type_name(words: &[&str]) -> Option<String> {
    let kept: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "const" | "volatile" | "static" | "extern" | "__align__"))
        .filter(|w| !w.starts_with("__align__") && !w.starts_with("alignas"))
        .collect();
    match kept.as_slice() {
        [one] => Some(one.to_string()),
        ["unsigned", "int"] => Some("uint".into()),
        ["unsigned", "char"] => Some("uchar".into()),
        ["unsigned", "short"] => Some("ushort".into()),
        ["long", "long"] => Some("longlong".into()),
        ["unsigned", "long", "long"] => Some("ulonglong".into()),
        _ => None,
    }
}

/// The value of a dimension: integer literals, the file's `#define` and `constexpr`/`const`
/// integer constants, `+ - * / %` and parentheses (`consts` names the identifiers it may use).
pub fn eval(expr: &str, consts: &HashMap<String, i64>) -> Option<i64> {
    let toks = tokens(expr);
    let mut at = 0;
    let v = sum(&toks, &mut at, consts, 0)?;
    (at == toks.len()).then_some(v)
}

fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut w = String::new();
            while let Some(&c) = chars
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
            {
                w.push(c);
                chars.next();
            }
            out.push(w);
        } else {
            out.push(c.to_string());
            chars.next();
        }
    }
    out
}

fn sum(t: &[String], at: &mut usize, c: &HashMap<String, i64>, depth: u32) -> Option<i64> {
    let mut v = product(t, at, c, depth)?;
    while let Some(op) = t.get(*at).filter(|o| *o == "+" || *o == "-") {
        let plus = op == "+";
        *at += 1;
        let r = product(t, at, c, depth)?;
        v = if plus {
            v.checked_add(r)?
        } else {
            v.checked_sub(r)?
        };
    }
    Some(v)
}

fn product(t: &[String], at: &mut usize, c: &HashMap<String, i64>, depth: u32) -> Option<i64> {
    let mut v = atom(t, at, c, depth)?;
    while let Some(op) = t.get(*at).filter(|o| *o == "*" || *o == "/" || *o == "%") {
        let op = op.clone();
        *at += 1;
        let r = atom(t, at, c, depth)?;
        v = match op.as_str() {
            "*" => v.checked_mul(r)?,
            "/" => v.checked_div(r)?,
            _ => v.checked_rem(r)?,
        };
    }
    Some(v)
}

fn atom(t: &[String], at: &mut usize, c: &HashMap<String, i64>, depth: u32) -> Option<i64> {
    let tok = t.get(*at)?;
    *at += 1;
    if tok == "(" && depth < 32 {
        let v = sum(t, at, c, depth + 1)?;
        (t.get(*at)? == ")").then(|| *at += 1)?;
        return Some(v);
    }
    if tok == "-" {
        return atom(t, at, c, depth + 1)?.checked_neg();
    }
    let digits = tok.trim_end_matches(['u', 'U', 'l', 'L']);
    digits.parse().ok().or_else(|| c.get(tok.as_str()).copied())
}

/// The source with comments blanked out (string contents are left; a declaration never holds
/// one).
fn without_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Integer constants the file defines (`#define N 16`, `constexpr int N = 16;`,
/// `const int N = 16;`), and `extra` (the case's `-D` macros), in the order they appear.
fn constants(src: &str, extra: &[(String, String)]) -> HashMap<String, i64> {
    let mut c = HashMap::new();
    for (k, v) in extra {
        if let Some(n) = eval(v, &c) {
            c.insert(k.clone(), n);
        }
    }
    for line in src.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("#define") {
            let rest = rest.trim();
            let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if let Some(n) = eval(value, &c) {
                c.entry(name.to_string()).or_insert(n);
            }
        }
        for stmt in line.split(';') {
            let Some((lhs, rhs)) = stmt.split_once('=') else {
                continue;
            };
            let words: Vec<&str> = lhs.split_whitespace().collect();
            if words.len() >= 3
                && words.iter().any(|w| matches!(*w, "constexpr" | "const"))
                && let Some(n) = eval(rhs, &c)
            {
                c.insert(words[words.len() - 1].to_string(), n);
            }
        }
    }
    c
}

/// Every `__shared__` array of `src` whose type and dimensions are understood; `macros` are
/// the `-D` definitions the compile gives (name, value).
pub fn parse(src: &str, macros: &[(String, String)]) -> Vec<SharedDecl> {
    let src = without_comments(src);
    let consts = constants(&src, macros);
    let mut out: Vec<SharedDecl> = Vec::new();
    let mut rest = src.as_str();
    while let Some(at) = rest.find("__shared__") {
        let before = &rest[..at];
        let after = &rest[at + "__shared__".len()..];
        rest = after;
        let Some(end) = after.find([';', '{', '=']) else {
            break;
        };
        let stmt = &after[..end];
        // `extern` sits before `__shared__`; other qualifiers may sit on either side.
        let lead = before.rsplit([';', '{', '}', '\n']).next().unwrap_or("");
        let lead: Vec<&str> = lead.split_whitespace().collect();
        let is_extern = lead.contains(&"extern");
        let Some(bracket) = stmt.find('[') else {
            continue;
        };
        let head: Vec<&str> = stmt[..bracket].split_whitespace().collect();
        let Some((name, ty)) = head.split_last() else {
            continue;
        };
        let Some((elem_bytes, lanes)) = type_name(ty).as_deref().and_then(builtin) else {
            continue;
        };
        let mut dims = Vec::new();
        let mut ok = true;
        for (i, part) in stmt[bracket..].split('[').skip(1).enumerate() {
            let Some((inner, _)) = part.split_once(']') else {
                ok = false;
                break;
            };
            if inner.trim().is_empty() && i == 0 && is_extern {
                dims.push(None);
                continue;
            }
            match eval(inner, &consts).and_then(|n| u64::try_from(n).ok()) {
                Some(n) if n > 0 => dims.push(Some(n)),
                _ => ok = false,
            }
        }
        let valid_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok && valid_name && !out.iter().any(|d| d.name == *name) {
            out.push(SharedDecl {
                name: name.to_string(),
                elem_bytes,
                lanes,
                dims,
            });
        }
    }
    out
}

/// A pointer the learner declared into a `__shared__` array (`float* tile = smem + 2048;`, or into
/// another such pointer), and the source lines that index through it (`tile[...]`): a finding at
/// one of those lines names the pointer beside the declared array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedAlias {
    pub name: String,
    /// The declared array it points into.
    pub array: String,
    /// The 1-based source lines after its declaration that write `name[`.
    pub lines: Vec<u32>,
}

/// The pointer aliases of `src` into the arrays of `arrays` (see [`SharedAlias`]): each
/// declaration `T* NAME = EXPR;` (or `T *NAME`) whose `EXPR` names a declared array, or a pointer
/// already found, as a whole word. Line comments are left out; a pointer that is reassigned later
/// keeps its first array.
pub fn aliases(src: &str, arrays: &[SharedDecl]) -> Vec<SharedAlias> {
    let lines: Vec<&str> = src
        .lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect();
    let word = |text: &str, w: &str| {
        text.match_indices(w).any(|(at, _)| {
            let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
            let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
            let after = text[at + w.len()..]
                .chars()
                .next()
                .is_none_or(|c| !ident(c));
            before && after
        })
    };
    let mut out: Vec<SharedAlias> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        for stmt in line.split(';') {
            let Some((lhs, rhs)) = stmt.split_once('=') else {
                continue;
            };
            if rhs.starts_with('=') || lhs.ends_with(['!', '<', '>', '+', '-', '*', '/']) {
                continue; // a comparison or a compound assignment
            }
            let Some((_, name)) = lhs.rsplit_once('*') else {
                continue;
            };
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let target = arrays
                .iter()
                .map(|a| a.name.clone())
                .find(|a| word(rhs, a))
                .or_else(|| {
                    out.iter()
                        .find(|a| word(rhs, &a.name))
                        .map(|a| a.array.clone())
                });
            let Some(array) = target.filter(|a| a != name) else {
                continue;
            };
            let used = format!("{name}[");
            let uses = lines[n + 1..]
                .iter()
                .enumerate()
                .filter(|(_, l)| l.contains(&used) && word(l, name))
                .map(|(i, _)| (n + 2 + i) as u32)
                .collect();
            out.push(SharedAlias {
                name: name.to_string(),
                array,
                lines: uses,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(src: &str) -> SharedDecl {
        let d = parse(src, &[]);
        assert_eq!(d.len(), 1, "{d:?}");
        d[0].clone()
    }

    #[test]
    fn an_extern_float2_array_names_elements_and_components() {
        let d = one("extern __shared__ float2 sm[];");
        assert_eq!((d.elem_bytes, d.lanes, d.dims.clone()), (8, 2, vec![None]));
        assert_eq!(d.element(2600 * 8, 4), "sm[2600].x");
        assert_eq!(d.element(2600 * 8 + 4, 4), "sm[2600].y");
        assert_eq!(d.element(2600 * 8, 8), "sm[2600]");
    }

    #[test]
    fn a_3d_array_with_constants_is_unravelled() {
        let src = "#define BK 16\nconstexpr int PAD = 1;\n\
                   __global__ void k() { __shared__ float As[2][BK][BK + PAD]; }";
        let d = one(src);
        assert_eq!(d.dims, vec![Some(2), Some(16), Some(17)]);
        assert_eq!(d.bytes(), Some(2 * 16 * 17 * 4));
        assert_eq!(d.element(16 * 17 * 4, 4), "As[1][0][0]");
        assert_eq!(d.element((16 * 17 + 17 + 3) * 4, 4), "As[1][1][3]");
    }

    #[test]
    fn qualifiers_macros_and_vector_types_are_read() {
        let macros = [("TILE".to_string(), "8".to_string())];
        let d = parse(
            "__shared__ __align__(16) float4 a[TILE]; static __shared__ unsigned int b[3];\n\
             volatile __shared__ int2 c[4 * (2 + 1)];",
            &macros,
        );
        let got: Vec<(&str, u32, Option<u64>)> = d
            .iter()
            .map(|d| (d.name.as_str(), d.elem_bytes, d.bytes()))
            .collect();
        assert_eq!(
            got,
            vec![("a", 16, Some(128)), ("b", 4, Some(12)), ("c", 8, Some(96))]
        );
        assert_eq!(d[0].element(20, 4), "a[1].y");
    }

    #[test]
    fn what_is_not_understood_is_left_out() {
        let src = "// __shared__ float gone[4];\n__shared__ Foo f[4]; __shared__ float s[n];\n\
                   __shared__ float ok[4]; __shared__ float scalar;";
        let d = parse(src, &[]);
        assert_eq!(
            d.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["ok"]
        );
    }

    #[test]
    fn pointer_aliases_into_shared_arrays_are_found_with_the_lines_that_index_them() {
        let src = "extern __shared__ float smem[];\n\
                   float* tile = smem + 2048; // the second half\n\
                   const float *x = tile + threadIdx.x;\n\
                   float y = tile[1] + x[2];\n\
                   if (a == b) { c = d; }\n\
                   float* out = output + 4;\n\
                   out[0] = smem[3];\n";
        let arrays = parse(src, &[]);
        let found = aliases(src, &arrays);
        let names: Vec<(&str, &str, &[u32])> = found
            .iter()
            .map(|a| (a.name.as_str(), a.array.as_str(), a.lines.as_slice()))
            .collect();
        assert_eq!(names, [("tile", "smem", &[4][..]), ("x", "smem", &[4][..])]);
    }
}
