//! Random, well-defined CUDA expressions of each type the simulator runs: 32- and 64-bit signed
//! and unsigned integers, `float` and `double`, half precision through conversions, and
//! conditions. Nothing here is undefined in C++: signed arithmetic that may overflow goes through
//! unsigned types, divisors are odd and positive, shift counts are masked, float-to-integer
//! conversions use CUDA's saturating intrinsics. Only correctly rounded operations appear (no
//! `expf`, `__sinf`, ...: the approximate instructions are known to differ from the GPU).

use spec::Rng;

/// The types of the generated variables, with their C name and their prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum T {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

pub const TYPES: [T; 6] = [T::I32, T::U32, T::I64, T::U64, T::F32, T::F64];

impl T {
    pub fn c(self) -> &'static str {
        match self {
            T::I32 => "int",
            T::U32 => "unsigned",
            T::I64 => "long long",
            T::U64 => "unsigned long long",
            T::F32 => "float",
            T::F64 => "double",
        }
    }
    pub fn prefix(self) -> char {
        match self {
            T::I32 => 'i',
            T::U32 => 'u',
            T::I64 => 'l',
            T::U64 => 'w',
            T::F32 => 'f',
            T::F64 => 'd',
        }
    }
    pub fn wide(self) -> bool {
        matches!(self, T::I64 | T::U64 | T::F64)
    }
}

/// The variables in scope, by type, and the generator's random source.
pub struct Scope<'r> {
    pub rng: &'r mut Rng,
    pub vars: Vec<(T, String)>,
}

const ROUND: [&str; 4] = ["rn", "rz", "ru", "rd"];

impl Scope<'_> {
    pub fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
    fn round(&mut self) -> &'static str {
        ROUND[self.below(4)]
    }
    /// A variable of type `t` (every type has one from the start).
    pub fn var(&mut self, t: T) -> String {
        let of: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.0 == t)
            .map(|v| v.1.clone())
            .collect();
        let i = self.below(of.len());
        of[i].clone()
    }
    fn small(&mut self) -> u64 {
        [0, 1, 2, 3, 7, 31, 255, 0x8000_0000, 0xffff_ffff][self.below(9)]
    }

    /// An expression of type `t`, `depth` levels deep at most.
    pub fn expr(&mut self, t: T, depth: u32) -> String {
        if depth == 0 || self.below(4) == 0 {
            return self.var(t);
        }
        let d = depth - 1;
        match t {
            T::I32 => self.int(d),
            T::U32 => self.uint(d),
            T::I64 => self.long(d),
            T::U64 => self.ulong(d),
            T::F32 => self.float(d),
            T::F64 => self.double(d),
        }
    }

    fn int(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::I32, d), self.expr(T::I32, d));
        match self.below(16) {
            0..=2 => {
                let op = self.pick(&["+", "-", "*"]);
                format!("(int)((unsigned)({a}) {op} (unsigned)({b}))")
            }
            3 => format!("(({a}) >> (({b}) & 31))"),
            4 => format!("(({a}) {} ({b}))", self.pick(&["&", "|", "^"])),
            // Opaque: ptxas fuses a high product and a 64-bit subtraction with a wrong carry.
            5 => match self.pick(&["min", "max", "__mulhi"]) {
                "__mulhi" => format!("(int)opaque32((unsigned)__mulhi({a}, {b}))"),
                f => format!("{f}({a}, {b})"),
            },
            6 => format!("(({a}) {} ((({b}) & 0xff) | 1))", self.pick(&["/", "%"])),
            7 => {
                let u = self.expr(T::U32, d);
                format!("{}({u})", self.pick(&["__popc", "__clz", "__ffs"]))
            }
            8 => {
                let f = self.expr(T::F32, d);
                format!("__float2int_{}({f})", self.round())
            }
            9 => {
                let x = self.expr(T::F64, d);
                format!("__double2int_{}({x})", self.round())
            }
            10 => format!("(int)({})", self.expr(T::I64, d)),
            11 => format!("(int)({}({a}))", self.pick(&["(short)", "(signed char)"])),
            12 => format!("(({}) ? ({a}) : ({b}))", self.cond(d)),
            13 => format!("(int)({})", self.cond(d)),
            14 => format!("__double2hiint({})", self.expr(T::F64, d)),
            _ => format!("(~({a}))"),
        }
    }

    fn uint(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::U32, d), self.expr(T::U32, d));
        match self.below(16) {
            0..=2 => format!(
                "(({a}) {} ({b}))",
                self.pick(&["+", "-", "*", "&", "|", "^"])
            ),
            3 => format!("(({a}) {} (({b}) & 31))", self.pick(&["<<", ">>"])),
            4 => format!("(({a}) {} (({b}) | 1))", self.pick(&["/", "%"])),
            5 => match self.pick(&["min", "max", "__umulhi"]) {
                "__umulhi" => format!("opaque32(__umulhi({a}, {b}))"),
                f => format!("{f}({a}, {b})"),
            },
            6 => format!("__brev({a})"),
            7 => {
                let c = self.expr(T::U32, d);
                format!("__byte_perm({a}, {b}, ({c}) & 0x7777)")
            }
            8 => {
                let c = self.expr(T::U32, d);
                let f = self.pick(&["__funnelshift_l", "__funnelshift_r", "__funnelshift_lc"]);
                format!("{f}({a}, {b}, {c})")
            }
            9 => {
                let f = self.expr(T::F32, d);
                format!("__float2uint_{}({f})", self.round())
            }
            10 => format!("__float_as_uint({})", self.expr(T::F32, d)),
            11 => format!("(unsigned)({})", self.expr(T::U64, d)),
            12 => {
                let c = self.expr(T::U32, d);
                let (x, y) = (self.expr(T::I32, d), self.expr(T::I32, d));
                format!("__sad({x}, {y}, {c})")
            }
            13 => {
                let h = self.expr(T::F32, d);
                let r = self.round();
                // Opaque: ptxas folds `__float2ll_rz` of these bits read as a float wrongly.
                format!("opaque32((unsigned)__half_as_ushort(__float2half_{r}({h})))")
            }
            14 => format!("({}u + ({a}))", self.small()),
            _ => format!("(unsigned)({})", self.expr(T::I32, d)),
        }
    }

    fn long(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::I64, d), self.expr(T::I64, d));
        match self.below(10) {
            0..=2 => {
                let op = self.pick(&["+", "-", "*"]);
                format!("(long long)((unsigned long long)({a}) {op} (unsigned long long)({b}))")
            }
            3 => format!("(({a}) >> (({b}) & 63))"),
            4 => format!("{}({a}, {b})", self.pick(&["min", "max", "__mul64hi"])),
            5 => format!("(({a}) {} ((({b}) & 0xfff) | 1))", self.pick(&["/", "%"])),
            6 => {
                let f = self.expr(T::F32, d);
                format!("__float2ll_{}({f})", self.round())
            }
            7 => {
                let x = self.expr(T::F64, d);
                format!("__double2ll_{}({x})", self.round())
            }
            8 => format!("(long long)({})", self.expr(T::I32, d)),
            _ => format!("__double_as_longlong({})", self.expr(T::F64, d)),
        }
    }

    fn ulong(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::U64, d), self.expr(T::U64, d));
        match self.below(10) {
            0..=2 => format!(
                "(({a}) {} ({b}))",
                self.pick(&["+", "-", "*", "&", "|", "^"])
            ),
            3 => format!("(({a}) {} (({b}) & 63))", self.pick(&["<<", ">>"])),
            4 => format!("(({a}) {} (({b}) | 1))", self.pick(&["/", "%"])),
            5 => format!("{}({a}, {b})", self.pick(&["min", "max", "__umul64hi"])),
            6 => format!("__brevll({a})"),
            7 => {
                let x = self.expr(T::F64, d);
                format!("__double2ull_{}({x})", self.round())
            }
            8 => format!("(unsigned long long)({})", self.expr(T::U32, d)),
            _ => {
                let f = self.expr(T::F32, d);
                format!("__float2ull_{}({f})", self.round())
            }
        }
    }

    fn float(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::F32, d), self.expr(T::F32, d));
        let r = self.round();
        match self.below(18) {
            0..=1 => format!("(({a}) {} ({b}))", self.pick(&["+", "-", "*", "/"])),
            2..=3 => {
                let f = self.pick(&["__fadd", "__fsub", "__fmul", "__fdiv"]);
                format!("{f}_{r}({a}, {b})")
            }
            4 => {
                let c = self.expr(T::F32, d);
                format!("__fmaf_{r}({a}, {b}, {c})")
            }
            5 => {
                let c = self.expr(T::F32, d);
                format!("fmaf({a}, {b}, {c})")
            }
            6 => format!("{}_{r}({a})", self.pick(&["__fsqrt", "__frcp"])),
            7 => format!("{}({a}, {b})", self.pick(&["fminf", "fmaxf", "copysignf"])),
            8 => {
                let f = [
                    "fabsf",
                    "floorf",
                    "ceilf",
                    "truncf",
                    "rintf",
                    "sqrtf",
                    "__saturatef",
                ];
                format!("{}({a})", self.pick(&f))
            }
            9 => format!("(-({a}))"),
            // Opaque: ptxas folds a float's conversion to an integer, back to a float and to an
            // integer again (`__float2uint_ru(__uint2float_rn(__float2uint_rn(x)))`, or through
            // `__ull2float_rd`) into one conversion of x, wrongly.
            10 => format!(
                "__int2float_{r}((int)opaque32((unsigned)({})))",
                self.expr(T::I32, d)
            ),
            11 => format!("__uint2float_{r}(opaque32({}))", self.expr(T::U32, d)),
            12 => format!(
                "__ll2float_{r}((long long)opaque64((unsigned long long)({})))",
                self.expr(T::I64, d)
            ),
            13 => format!("__ull2float_{r}(opaque64({}))", self.expr(T::U64, d)),
            14 => format!("__double2float_{r}({})", self.expr(T::F64, d)),
            15 => format!("__half2float(__float2half_{r}({a}))"),
            16 => format!("__uint_as_float({})", self.expr(T::U32, d)),
            _ => format!("(({}) ? ({a}) : ({b}))", self.cond(d)),
        }
    }

    fn double(&mut self, d: u32) -> String {
        let (a, b) = (self.expr(T::F64, d), self.expr(T::F64, d));
        let r = self.round();
        match self.below(15) {
            0..=1 => format!("(({a}) {} ({b}))", self.pick(&["+", "-", "*", "/"])),
            14 => format!("(-({a}))"),
            2..=3 => {
                let f = self.pick(&["__dadd", "__dsub", "__dmul", "__ddiv"]);
                format!("{f}_{r}({a}, {b})")
            }
            4 => {
                let c = self.expr(T::F64, d);
                format!("__fma_{r}({a}, {b}, {c})")
            }
            5 => format!("{}_{r}({a})", self.pick(&["__dsqrt", "__drcp"])),
            6 => format!("{}({a}, {b})", self.pick(&["fmin", "fmax", "copysign"])),
            7 => format!(
                "{}({a})",
                self.pick(&["fabs", "floor", "ceil", "trunc", "rint", "sqrt"])
            ),
            8 => format!("(double)({})", self.expr(T::F32, d)),
            9 => format!("__int2double_rn({})", self.expr(T::I32, d)),
            10 => format!("__ll2double_{r}({})", self.expr(T::I64, d)),
            11 => format!("__ull2double_{r}({})", self.expr(T::U64, d)),
            12 => format!("__longlong_as_double({})", self.expr(T::I64, d)),
            _ => {
                let (hi, lo) = (self.expr(T::I32, d), self.expr(T::I32, d));
                format!("__hiloint2double({}, {})", unpacked(hi), unpacked(lo))
            }
        }
    }

    /// A condition: comparisons of any type (NaN included), tests and their combinations.
    pub fn cond(&mut self, d: u32) -> String {
        let t = TYPES[self.below(TYPES.len())];
        match self.below(8) {
            0..=4 => {
                let (a, b) = (self.expr(t, d), self.expr(t, d));
                let op = self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("(({a}) {op} ({b}))")
            }
            5 => {
                let f = self.expr(T::F32, d);
                format!(
                    "{}({f})",
                    self.pick(&["isnan", "isinf", "isfinite", "signbit"])
                )
            }
            6 if d > 0 => {
                let (a, b) = (self.cond(d - 1), self.cond(d - 1));
                format!("({a} {} {b})", self.pick(&["&&", "||"]))
            }
            _ => format!(
                "((({}) & {}u) != 0u)",
                self.expr(T::U32, d),
                1u32 << self.below(32)
            ),
        }
    }
}

/// Opaque: ptxas loses a double's half that a loop carries through `__double2hiint` into
/// `__hiloint2double` (the half's register is reused inside the loop: `bench/ptxas_fold.cu`,
/// pattern 4). Hidden behind a volatile copy, no random number drawn, so only such kernels change.
fn unpacked(half: String) -> String {
    if half.contains("__double2hiint(") {
        format!("(int)opaque32((unsigned)({half}))")
    } else {
        half
    }
}
