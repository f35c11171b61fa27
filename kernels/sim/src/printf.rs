//! `printf` in the simulator: the `vprintf(format, args)` call that NVRTC compiles it to.
//!
//! The format is a C string at a generic address (a module `.global` for a literal). The arguments
//! sit in the thread's local memory, one after another, each at the next offset aligned to its size:
//! 4 bytes for `int`, `unsigned` and `char`, 8 for `long`, pointers and `double` (every `float`
//! argument arrives promoted to `double`). [`format`] walks the conversions, takes each argument
//! (and an `int` for each `*` width or precision) and formats it as C's printf does: flags
//! `-+ #0`, width, precision, `d i u o x X c s p f F e E g G` (`a A` as `e E`) and `%%`. Formatting
//! is written here because a C-faithful `%g` (and a zero that does not panic) was not to be had
//! from a crate; the tests compare it with the C library's `snprintf`.

use crate::finding::Acc;
use crate::memory::{MemFault, Spaces};
use ptx::ir::Space;

/// The longest format string, or `%s` argument, read.
const MAX_STRING: usize = 4096;

/// What one conversion (or `*`) takes from the argument buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    I32,
    U32,
    I64,
    U64,
    F64,
    Char,
    Str,
}

impl Arg {
    fn bytes(self) -> u64 {
        match self {
            Arg::I32 | Arg::U32 | Arg::Char => 4,
            _ => 8,
        }
    }
}

/// An argument's value: its bits, and for `%s` the string it points to.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Bits(u64),
    Str(String),
}

/// One conversion's flags, width and precision.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

impl Spec {
    /// `body` after `sign` (and a `0x`-style prefix, part of `sign` here), padded to the width:
    /// zeros after the sign with `0` (not for `-`, nor for an integer with a precision), else
    /// spaces before, or after with `-`.
    fn pad(&self, sign: &str, body: &str, zeros_allowed: bool) -> String {
        let len = sign.chars().count() + body.chars().count();
        let fill = self.width.saturating_sub(len);
        if self.left {
            format!("{sign}{body}{}", " ".repeat(fill))
        } else if self.zero && zeros_allowed {
            format!("{sign}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{sign}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        match (negative, self.plus, self.space) {
            (true, _, _) => "-",
            (false, true, _) => "+",
            (false, false, true) => " ",
            _ => "",
        }
    }
}

/// The characters of a format string still to read.
type Chars<'f> = std::iter::Peekable<std::str::CharIndices<'f>>;

/// Formats `fmt` as C's printf, taking each argument from `next` by the kind its conversion reads.
/// A conversion it does not know ends the text there, with the rest of the format as it is.
fn format<E>(fmt: &str, mut next: impl FnMut(Arg) -> Result<Value, E>) -> Result<(String, u64), E> {
    let mut out = String::new();
    let mut taken = 0u64;
    let mut it = fmt.char_indices().peekable();
    let mut take = |k: Arg| {
        taken += 1;
        next(k)
    };
    while let Some((start, c)) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if it.next_if(|&(_, c)| c == '%').is_some() {
            out.push('%');
            continue;
        }
        let (s, long) = spec(&mut it, &mut take)?;
        let text = match it.next() {
            Some((_, conv)) => convert(conv, s, long, &mut take)?,
            None => None,
        };
        match text {
            Some(text) => out.push_str(&text),
            None => {
                out.push_str(&fmt[start..]);
                break;
            }
        }
    }
    Ok((out, taken))
}

/// One conversion's flags, width, precision (an `int` taken for each `*`) and whether a length
/// modifier makes it 64-bit, read from after its `%` up to its conversion character.
fn spec<E>(
    it: &mut Chars<'_>,
    take: &mut impl FnMut(Arg) -> Result<Value, E>,
) -> Result<(Spec, bool), E> {
    let mut s = Spec::default();
    while let Some((_, f)) = it.next_if(|&(_, c)| "-+ #0".contains(c)) {
        match f {
            '-' => s.left = true,
            '+' => s.plus = true,
            ' ' => s.space = true,
            '#' => s.alt = true,
            _ => s.zero = true,
        }
    }
    let number = |it: &mut Chars<'_>| {
        let mut n = 0usize;
        while let Some((_, d)) = it.next_if(|&(_, c)| c.is_ascii_digit()) {
            n = n
                .saturating_mul(10)
                .saturating_add(d as usize - '0' as usize);
        }
        n
    };
    if it.next_if(|&(_, c)| c == '*').is_some() {
        let w = bits(take(Arg::I32)?) as u32 as i32;
        s.left |= w < 0;
        s.width = w.unsigned_abs() as usize;
    } else {
        s.width = number(it);
    }
    if it.next_if(|&(_, c)| c == '.').is_some() {
        s.prec = if it.next_if(|&(_, c)| c == '*').is_some() {
            let p = bits(take(Arg::I32)?) as u32 as i32;
            usize::try_from(p).ok()
        } else {
            Some(number(it))
        };
    }
    s.width = s.width.min(MAX_STRING);
    s.prec = s.prec.map(|p| p.min(MAX_STRING));
    let mut long = false;
    while let Some((_, m)) = it.next_if(|&(_, c)| "hlLqjzt".contains(c)) {
        long |= m != 'h';
    }
    Ok((s, long))
}

/// The text of conversion `conv` under `s` (`long`: a 64-bit integer), its argument taken;
/// `None` for a conversion this does not know.
fn convert<E>(
    conv: char,
    s: Spec,
    long: bool,
    take: &mut impl FnMut(Arg) -> Result<Value, E>,
) -> Result<Option<String>, E> {
    let int = |s: &Spec, negative: bool, digits: String, prefix: &str| {
        let digits = match s.prec {
            Some(0) if digits == "0" => String::new(),
            Some(p) => format!("{}{digits}", "0".repeat(p.saturating_sub(digits.len()))),
            None => digits,
        };
        s.pad(
            &format!("{}{prefix}", s.sign(negative)),
            &digits,
            s.prec.is_none(),
        )
    };
    let text = match conv {
        'd' | 'i' => {
            let v = bits(take(if long { Arg::I64 } else { Arg::I32 })?);
            let v = if long {
                v as i64
            } else {
                i64::from(v as u32 as i32)
            };
            int(&s, v < 0, v.unsigned_abs().to_string(), "")
        }
        'u' | 'o' | 'x' | 'X' => {
            let v = bits(take(if long { Arg::U64 } else { Arg::U32 })?);
            let v = if long { v } else { v & 0xffff_ffff };
            let s = Spec {
                plus: false,
                space: false,
                ..s
            };
            match conv {
                'u' => int(&s, false, v.to_string(), ""),
                'o' if s.alt && v != 0 => int(&s, false, format!("0{v:o}"), ""),
                'o' => int(&s, false, format!("{v:o}"), ""),
                'x' => int(
                    &s,
                    false,
                    format!("{v:x}"),
                    if s.alt && v != 0 { "0x" } else { "" },
                ),
                _ => int(
                    &s,
                    false,
                    format!("{v:X}"),
                    if s.alt && v != 0 { "0X" } else { "" },
                ),
            }
        }
        'p' => {
            let v = bits(take(Arg::U64)?);
            s.pad("", &format!("0x{v:x}"), false)
        }
        'c' => {
            let v = bits(take(Arg::Char)?);
            s.pad("", &char::from(v as u8).to_string(), false)
        }
        's' => {
            let text = match take(Arg::Str)? {
                Value::Str(t) => t,
                Value::Bits(_) => "(null)".to_string(),
            };
            let text: String = match s.prec {
                Some(p) => text.chars().take(p).collect(),
                None => text,
            };
            s.pad("", &text, false)
        }
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
            let v = f64::from_bits(bits(take(Arg::F64)?));
            float(&s, conv, v)
        }
        _ => return Ok(None),
    };
    Ok(Some(text))
}

fn bits(v: Value) -> u64 {
    match v {
        Value::Bits(b) => b,
        Value::Str(_) => 0,
    }
}

/// `%e`'s digits: `d.ddde±XX`, with at least two exponent digits.
fn sci(v: f64, prec: usize, alt: bool) -> String {
    let t = format!("{v:.prec$e}");
    let (mant, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if alt && prec == 0 { "." } else { "" };
    format!(
        "{mant}{dot}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    )
}

/// `%f`, `%e` or `%g` (and their capitals) of `v`, as C prints them.
fn float(s: &Spec, conv: char, v: f64) -> String {
    let upper = conv.is_ascii_uppercase();
    // A negative NaN prints as `-nan`, as glibc and the GPU print it.
    let sign = s.sign(v.is_sign_negative());
    let a = v.abs();
    if !a.is_finite() {
        let t = if a.is_nan() { "nan" } else { "inf" };
        let t = if upper {
            t.to_uppercase()
        } else {
            t.to_string()
        };
        return s.pad(sign, &t, false);
    }
    let prec = s.prec.unwrap_or(6);
    let body = match conv.to_ascii_lowercase() {
        'f' => {
            let dot = if s.alt && prec == 0 { "." } else { "" };
            format!("{a:.prec$}{dot}")
        }
        'g' => {
            let p = prec.max(1);
            // The exponent %e would show at p significant digits decides the style.
            let x: i32 = sci(a, p - 1, false)
                .split_once('e')
                .and_then(|(_, e)| e.parse().ok())
                .unwrap_or(0);
            let t = if x < -4 || x >= p as i32 {
                sci(a, p - 1, s.alt)
            } else {
                let digits = (p as i32 - 1 - x).max(0) as usize;
                let dot = if s.alt && digits == 0 { "." } else { "" };
                format!("{a:.digits$}{dot}")
            };
            if s.alt { t } else { strip_zeros(&t) }
        }
        'a' if s.prec.is_none() => hex(a),
        _ => sci(a, prec, s.alt),
    };
    let body = if upper { body.to_uppercase() } else { body };
    s.pad(sign, &body, true)
}

/// `%a` of a finite `a >= 0`: `0x1.8p+1`, the fraction's hex digits without trailing zeros.
fn hex(a: f64) -> String {
    if a == 0.0 {
        return "0x0p+0".into();
    }
    let bits = a.to_bits();
    let exp = (bits >> 52) as i32;
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let digits = format!("{:013x}", bits & ((1 << 52) - 1));
    let digits = digits.trim_end_matches('0');
    let dot = if digits.is_empty() { "" } else { "." };
    format!("0x{lead}{dot}{digits}p{e:+}")
}

/// `%g` without `#`: trailing zeros of the fraction go, and a point left alone.
fn strip_zeros(t: &str) -> String {
    let (mant, exp) = match t.find('e') {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}{exp}")
}

/// The NUL-terminated string at generic address `addr`, as `lane` sees memory. Reading it, like
/// reading the arguments, is `printf`'s business: the checks and the access budget do not see it.
pub(super) fn c_string(sp: &mut Spaces<'_>, lane: usize, addr: u64) -> Result<String, MemFault> {
    let mut bytes = Vec::new();
    while bytes.len() < MAX_STRING {
        let at = addr.wrapping_add(bytes.len() as u64);
        let b = sp.load_as(Space::Generic, at, 1, lane, Acc::Quiet)? as u8;
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Formats one `printf` of `lane`: the format string at generic address `fmt`, its arguments at
/// generic address `args`. Returns the text and the number of arguments read (`vprintf`'s result).
pub(super) fn vprintf(
    sp: &mut Spaces<'_>,
    lane: usize,
    fmt: u64,
    args: u64,
) -> Result<(String, u64), MemFault> {
    let text = c_string(sp, lane, fmt)?;
    let mut at = 0u64;
    format(&text, |k| {
        let n = k.bytes();
        at = at.div_ceil(n) * n;
        let v = sp.load_as(
            Space::Generic,
            args.wrapping_add(at),
            n as usize,
            lane,
            Acc::Quiet,
        )?;
        at += n;
        Ok(match k {
            Arg::Str if v != 0 => Value::Str(c_string(sp, lane, v)?),
            _ => Value::Bits(v),
        })
    })
}

#[cfg(test)]
#[allow(unsafe_code)] // the C library's snprintf, to compare with
#[path = "tests/printf.rs"]
mod tests;
