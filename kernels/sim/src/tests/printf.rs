//! Tests of `printf`: each conversion against the C library's snprintf.

use super::*;
use std::ffi::CString;

/// What C's snprintf makes of `fmt` with one argument.
fn c1<T>(fmt: &str, v: T) -> String {
    let f = CString::new(fmt).expect("no NUL");
    let mut buf = vec![0u8; 512];
    // SAFETY: the buffer's length is passed, and each call site's format reads exactly one
    // argument of the type passed (variadic promotion: i32, u32, i64, f64, pointers).
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), f.as_ptr(), v) };
    buf.truncate(n.max(0) as usize);
    String::from_utf8(buf).expect("ASCII")
}

fn ours(fmt: &str, vals: &[Value]) -> String {
    let mut vals = vals.iter().cloned();
    format(fmt, |_| Ok::<_, ()>(vals.next().unwrap_or(Value::Bits(0))))
        .expect("formats")
        .0
}

#[test]
fn floats_format_as_the_c_library_does() {
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.5,
        2.0,
        0.25,
        100.0,
        1e-5,
        1.5e-4,
        123456789.0,
        0.1,
        2.5,
        std::f64::consts::PI,
        999999.5,
        9.9999e-5,
        1e300,
        -7.25e-12,
        0.000123456,
        65536.0,
        f64::INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MIN_POSITIVE,
    ];
    let formats = [
        "%a", "%A", "%f", "%e", "%g", "%G", "%E", "%.0f", "%.0e", "%.0g", "%#.0f", "%#g", "%.3g",
        "%.10g", "%12.4f", "%-12.3e|", "%+g", "% f", "%08.2f", "%-+9.2g|", "%.1f", "%#.3g",
        "%015.3e",
    ];
    for f in formats {
        for v in values {
            if f.contains('#') && v == 999999.5 {
                continue; // glibc prints `%#g` of it as "1.e+06", dropping the zeros `#` keeps
            }
            assert_eq!(ours(f, &[Value::Bits(v.to_bits())]), c1(f, v), "{f} of {v}");
        }
    }
}

#[test]
fn integers_strings_and_chars_format_as_the_c_library_does() {
    for f in [
        "%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d", "%.0d", "%8.3d", "%i",
    ] {
        for v in [0i32, 7, -7, 123456, i32::MIN, i32::MAX] {
            assert_eq!(
                ours(f, &[Value::Bits(v as u32 as u64)]),
                c1(f, v),
                "{f} of {v}"
            );
        }
    }
    for f in [
        "%u", "%x", "%X", "%#x", "%o", "%#o", "%08x", "%#10X", "%.4x",
    ] {
        for v in [0u32, 1, 255, 0xdead_beef, u32::MAX] {
            assert_eq!(
                ours(f, &[Value::Bits(u64::from(v))]),
                c1(f, v),
                "{f} of {v}"
            );
        }
    }
    for f in ["%ld", "%lu", "%llx", "%zu", "%20ld"] {
        for v in [0i64, -5, i64::MIN, 1 << 40] {
            assert_eq!(ours(f, &[Value::Bits(v as u64)]), c1(f, v), "{f} of {v}");
        }
    }
    for f in ["%c", "%3c", "%-3c|"] {
        assert_eq!(
            ours(f, &[Value::Bits(u64::from(b'z'))]),
            c1(f, i32::from(b'z'))
        );
    }
    let s = CString::new("hello").expect("no NUL");
    for f in ["%s", "%8s", "%-8s|", "%.2s", "%8.3s"] {
        assert_eq!(
            ours(f, &[Value::Str("hello".into())]),
            c1(f, s.as_ptr()),
            "{f}"
        );
    }
}

#[test]
fn stars_percent_signs_and_unknown_conversions() {
    let int = |v: i32| Value::Bits(v as u32 as u64);
    let one = Value::Bits(1.0f64.to_bits());
    assert_eq!(ours("[%*d]", &[int(5), int(42)]), "[   42]");
    assert_eq!(ours("[%-*d]", &[int(5), int(42)]), "[42   ]");
    assert_eq!(ours("[%*d]", &[int(-5), int(42)]), "[42   ]");
    assert_eq!(ours("%.*f", &[int(2), one.clone()]), "1.00");
    assert_eq!(ours("100%% sure, %d%%", &[int(3)]), "100% sure, 3%");
    assert_eq!(
        ours("a %d then %y stops: %d", &[int(1), int(2)]),
        "a 1 then %y stops: %d"
    );
    assert_eq!(ours("%s", &[Value::Bits(0)]), "(null)");
    assert_eq!(ours("dangling %", &[]), "dangling %");
    let (text, n) = format("%d %f %s", |_| Ok::<_, ()>(Value::Bits(0))).expect("formats");
    assert_eq!((text.as_str(), n), ("0 0.000000 (null)", 3));
}
