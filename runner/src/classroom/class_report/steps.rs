//! The step of the lesson a learner's line belongs to, so that different students' lines fall on
//! the same step: `tile[k] = input[g]` in one file and `s[t] = in[base + t]` in another are both
//! "the tile load".
//!
//! The steps are one catalogue for every puzzle ([`STEPS`]): the index, the guard, the tile load,
//! the halo, the barrier, the sum, the store, the launch shape, the tensor-core product. A line is
//! placed by what its code does ([`classify`]): the names it writes (a `__shared__` array of its
//! file, an output parameter of its kernel's signature), the barriers and intrinsics it calls, the
//! comparisons of a guard. Learners name their variables as they like, so names come from the
//! file itself, never from the solution. A line none of that places (a declaration, a helper's
//! arithmetic) takes the step of the nearest comment above it, matched to the steps' words by
//! text similarity (`similar`), where the learner wrote one; else it is "elsewhere".
//!
//! Each step is also given the skeleton's own words for it, where the skeleton's "Your code
//! here:" sentence has them ([`Lesson::of`]): puzzle 04's "wait" is its barrier, "load the
//! block's tile ... with a strided loop" its tile load (the clause most similar to the step's
//! words, over a threshold).

use serde::Serialize;
use similar::TextDiff;

/// One step of a lesson.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Launch,
    Index,
    Guard,
    Tile,
    Halo,
    Barrier,
    Sum,
    Tensor,
    Store,
    Elsewhere,
}

/// Every step, in the order a kernel usually takes them, with its name in the report and the
/// words that describe it (for the skeleton's clauses and the learner's comments).
pub const STEPS: [(Step, &str, &str); 10] = [
    (
        Step::Launch,
        "the launch shape",
        "choose the shape declare launch_shape threads block",
    ),
    (
        Step::Index,
        "the index",
        "find this thread's output index position",
    ),
    (
        Step::Guard,
        "the guard",
        "guard the output bounds check past the end return",
    ),
    (
        Step::Tile,
        "the tile load",
        "load copy stage the block's tile into shared memory strided loop",
    ),
    (
        Step::Halo,
        "the halo",
        "halo the inputs past the block's own zeros past the end",
    ),
    (
        Step::Barrier,
        "the barrier",
        "wait for the block barrier syncthreads",
    ),
    (
        Step::Sum,
        "the sum",
        "sum the taps products multiply-adds window registers accumulate",
    ),
    (
        Step::Tensor,
        "the tensor-core product",
        "tensor cores mma matrix product fragments",
    ),
    (
        Step::Store,
        "the store",
        "store write the output each output once masked store",
    ),
    (Step::Elsewhere, "elsewhere", ""),
];

impl Step {
    /// Its name in the report ("the tile load").
    pub fn name(self) -> &'static str {
        STEPS
            .iter()
            .find(|s| s.0 == self)
            .map_or("elsewhere", |s| s.1)
    }

    fn words(self) -> &'static str {
        STEPS.iter().find(|s| s.0 == self).map_or("", |s| s.2)
    }
}

/// Words that say nothing about a step.
const STOP: [&str; 16] = [
    "the", "a", "an", "of", "into", "with", "then", "per", "it", "and", "to", "for", "from", "in",
    "each", "this",
];

/// The words of `text`, lowercased, stop words left out.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .collect()
}

/// How alike two texts' words are, 0 to 1: `similar`'s ratio over their sequences of words
/// (twice the words in common, in order, over the words of both).
fn likeness(a: &str, b: &str) -> f32 {
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    TextDiff::from_slices(&a, &b).ratio()
}

/// The least likeness at which a clause or a comment names a step.
const NAMES_A_STEP: f32 = 0.25;

/// The step whose words `text` is most like, if any is like enough.
fn step_like(text: &str) -> Option<Step> {
    STEPS
        .iter()
        .filter(|s| s.0 != Step::Elsewhere)
        .map(|s| (s.0, likeness(text, s.2)))
        .filter(|(_, l)| *l >= NAMES_A_STEP)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(s, _)| s)
}

/// A puzzle's lesson as its skeleton words it: the clauses of the "Your code here:" sentence
/// inside `ANCHOR: solve`.
#[derive(Clone, Debug, Default)]
pub struct Lesson {
    pub clauses: Vec<String>,
}

impl Lesson {
    /// The lesson of the skeleton `text` (none when it has no "Your code here:" sentence).
    pub fn of(text: &str) -> Lesson {
        let mut sentence = String::new();
        let mut inside = false;
        for line in text.lines() {
            let t = line.trim();
            if t.contains("ANCHOR: solve") {
                inside = true;
                continue;
            }
            if t.contains("ANCHOR_END: solve") || (!sentence.is_empty() && !t.starts_with("//")) {
                break;
            }
            if !inside {
                continue;
            }
            let comment = t.trim_start_matches('/').trim();
            if let Some(rest) = comment.split_once("Your code here:") {
                sentence = rest.1.trim().to_string();
            } else if !sentence.is_empty() {
                sentence.push(' ');
                sentence.push_str(comment);
            }
        }
        // The first sentence only: what follows it describes the start, not the steps.
        let first = sentence
            .split(". ")
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        let clauses = first
            .split([',', ';'])
            .flat_map(|c| c.split(" then "))
            .map(|c| {
                let c = c.trim();
                let c = c.strip_prefix("and ").unwrap_or(c);
                c.strip_prefix("then ").unwrap_or(c).trim().to_string()
            })
            .filter(|c| !c.is_empty())
            .collect();
        Lesson { clauses }
    }

    /// The skeleton's words for `step`: the clause most like the step's words, if one is like
    /// enough.
    pub fn words_for(&self, step: Step) -> Option<&str> {
        if step == Step::Elsewhere {
            return None;
        }
        self.clauses
            .iter()
            .map(|c| (c, likeness(c, step.words())))
            .filter(|(_, l)| *l >= NAMES_A_STEP)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c.as_str())
    }
}

/// What a learner's file names: its `__shared__` arrays and its kernel's output parameters.
#[derive(Clone, Debug, Default)]
pub struct Names {
    shared: Vec<String>,
    /// Every pointer parameter of the kernel (a write through an input is a store too, a wrong
    /// one).
    pointers: Vec<String>,
}

impl Names {
    /// The names `text` declares.
    pub fn of(text: &str) -> Names {
        let mut names = Names::default();
        for line in text.lines() {
            if let Some((_, rest)) = line.split_once("__shared__") {
                // `__shared__ float tile[...]`, `extern __shared__ float4 s[]`, `__shared__ T a, b;`
                for part in rest.split(',') {
                    let before = part.split(['[', ';', '=']).next().unwrap_or("");
                    if let Some(name) = before.split_whitespace().last().map(ident)
                        && !name.is_empty()
                        && !is_type(&name)
                    {
                        names.shared.push(name);
                    }
                }
            }
        }
        // The kernel's signature: `__global__ void name(...)`: its pointers.
        if let Some(at) = text.find("__global__")
            && let Some(open) = text[at..].find('(')
            && let Some(close) = text[at + open..].find(')')
        {
            let params = &text[at + open + 1..at + open + close];
            for p in params.split(',') {
                let p = p.trim();
                if p.contains('*') {
                    let name = ident(p.rsplit(['*', ' ']).next().unwrap_or(""));
                    if !name.is_empty() {
                        names.pointers.push(name);
                    }
                }
            }
        }
        names
    }
}

fn ident(s: &str) -> String {
    s.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
        .to_string()
}

fn is_type(s: &str) -> bool {
    matches!(
        s,
        "float" | "float2" | "float4" | "int" | "double" | "half" | "unsigned" | "char"
    )
}

/// Whether `code` has `name` as a whole identifier.
fn mentions(code: &str, name: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    code.match_indices(name).any(|(i, _)| {
        !word(code[..i].chars().next_back()) && !word(code[i + name.len()..].chars().next())
    })
}

/// The left side of the line's assignment (`x[i] = ...`, `x[i] += ...`), if it assigns.
fn assigned(code: &str) -> Option<&str> {
    let bytes = code.as_bytes();
    (0..bytes.len()).find_map(|i| {
        let prev = if i > 0 { bytes[i - 1] } else { b' ' };
        let next = bytes.get(i + 1).copied().unwrap_or(b' ');
        let plain = bytes[i] == b'=' && next != b'=' && !matches!(prev, b'=' | b'!' | b'<' | b'>')
            || (bytes[i] == b'=' && matches!(prev, b'+' | b'-' | b'*' | b'|'));
        plain.then(|| code[..i].trim_end_matches(['+', '-', '*', '|']))
    })
}

/// Words of an index expression that reach past a block's own inputs: the halo.
const HALO: [&str; 7] = [
    "halo",
    "kernel_size - 1",
    "CONV - 1",
    "kernel_cols - 1",
    "kernel_rows - 1",
    "+ TPB",
    "+ blockDim",
];

/// The step of the learner's line `line` (1-based) of `text`, whose names are `names`.
pub fn classify(text: &str, names: &Names, line: u32) -> Step {
    let lines: Vec<&str> = text.lines().collect();
    let Some(raw) = (line as usize).checked_sub(1).and_then(|i| lines.get(i)) else {
        return Step::Elsewhere;
    };
    let code = raw.split("//").next().unwrap_or("").trim();
    by_code(code, names).unwrap_or_else(|| {
        // The nearest comment above the line (its own first), in the same function.
        let comment = lines[..line as usize]
            .iter()
            .rev()
            .take_while(|l| !l.trim_start().starts_with('}'))
            .find_map(|l| l.split_once("//").map(|c| c.1.to_string()));
        comment
            .and_then(|c| step_like(&c))
            .unwrap_or(Step::Elsewhere)
    })
}

/// The step `code` (one line, its comment cut) does, where what it writes or calls says.
fn by_code(code: &str, names: &Names) -> Option<Step> {
    if code.is_empty() {
        return None;
    }
    let has = |w: &str| code.contains(w);
    if has("launch_shape") {
        return Some(Step::Launch);
    }
    if [
        "__syncthreads",
        "__syncwarp",
        "bar.sync",
        "barrier",
        "cp.async.wait",
    ]
    .iter()
    .any(|w| has(w))
    {
        return Some(Step::Barrier);
    }
    if ["mma", "wmma::", "ldmatrix", "wgmma"]
        .iter()
        .any(|w| has(w))
    {
        return Some(Step::Tensor);
    }
    let target = assigned(code);
    // An element written through `name`: `name[i] = `, `*(name + i) = `, `((float*)name)[i] = `.
    let writes = |name: &str| {
        target.is_some_and(|t| mentions(t, name) && (t.contains('[') || t.starts_with('*')))
    };
    let atomic_on = |name: &str| has("atomic") && mentions(code, name);
    if names.pointers.iter().any(|o| writes(o) || atomic_on(o)) {
        return Some(Step::Store);
    }
    if code.starts_with("for") {
        // The loop's header, and the statement on its line after it, if any.
        let mut depth = 0;
        let close = code.char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => return None,
            }
            (depth == 0).then_some(i)
        });
        let (header, body) = close.map_or((code, ""), |i| code.split_at(i + 1));
        let body = body.trim().trim_start_matches('{').trim();
        let tap_loop = ["kernel_size", "CONV", "kernel_cols", "kernel_rows"]
            .iter()
            .any(|w| header.contains(w));
        return if HALO.iter().any(|h| header.contains(h)) {
            Some(Step::Halo)
        } else if let Some(step) = by_code(body, names) {
            Some(step)
        } else if tap_loop {
            Some(Step::Sum)
        } else {
            None
        };
    }
    if names.shared.iter().any(|s| writes(s)) {
        return Some(if HALO.iter().any(|h| has(h)) {
            Step::Halo
        } else {
            Step::Tile
        });
    }
    let compares = ["<", ">"].iter().any(|w| has(w)) && !has("<<");
    if (code.starts_with("if") || code.starts_with("return")) && compares
        || has("return") && code.starts_with("if")
    {
        return Some(Step::Guard);
    }
    if has("+=") || has("fma") || (target.is_some() && has("*") && has("sum")) {
        return Some(Step::Sum);
    }
    if target.is_some() && (has("blockIdx") || has("threadIdx")) {
        return Some(Step::Index);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const RACE: &str = "extern \"C\" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float tile[];
    int first = blockIdx.x * TPB;
    for (int k = threadIdx.x; k < TPB + kernel_size - 1; k += TPB) {
        tile[k] = g < input_size ? input[g] : 0.0f;
    }
    __syncthreads();
    int i = first + threadIdx.x;
    if (i >= output_size) return;
    for (int j = 0; j < kernel_size; j++) sum += tile[threadIdx.x + j] * kernel[j];
    output[i] = sum;
    // load the halo after the block's inputs
    s[t] = in[n];
}";

    #[test]
    fn a_files_own_names_place_its_lines() {
        let names = Names::of(RACE);
        assert_eq!(names.shared, ["tile"]);
        assert_eq!(names.pointers, ["input", "kernel", "output"]);
        let step = |line| classify(RACE, &names, line);
        assert_eq!(step(3), Step::Elsewhere, "a declaration is no step");
        assert_eq!(step(4), Step::Index);
        assert_eq!(step(5), Step::Halo, "the loop runs over the halo");
        assert_eq!(step(6), Step::Tile);
        assert_eq!(step(8), Step::Barrier);
        assert_eq!(step(10), Step::Guard);
        assert_eq!(step(11), Step::Sum);
        assert_eq!(step(12), Step::Store);
        // `s` is no shared array of this file: the comment above names the step.
        assert_eq!(step(14), Step::Halo);
        assert_eq!(step(99), Step::Elsewhere);
    }

    #[test]
    fn other_names_fall_on_the_same_steps() {
        let text = "__global__ void k(const float* in, const float* w, float* out, int n, int m) {
    __shared__ float buf[256 + 32], taps[32];
    buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    atomicAdd(&out[i], acc);
}";
        let names = Names::of(text);
        assert_eq!(names.shared, ["buf", "taps"]);
        assert_eq!(names.pointers, ["in", "w", "out"]);
        assert_eq!(classify(text, &names, 3), Step::Tile);
        assert_eq!(classify(text, &names, 4), Step::Barrier);
        assert_eq!(classify(text, &names, 5), Step::Store);
    }

    #[test]
    fn the_skeletons_clauses_name_the_steps() {
        let skeleton = "{
    // ANCHOR: solve
    // Your code here: load the block's tile of TPB + kernel_size - 1 inputs into dynamic shared
    // memory with a strided loop, wait, then sum kernel_size products per output.
    // ANCHOR_END: solve
}";
        let lesson = Lesson::of(skeleton);
        assert_eq!(lesson.clauses.len(), 3, "{:?}", lesson.clauses);
        assert_eq!(lesson.words_for(Step::Barrier), Some("wait"));
        assert!(
            lesson
                .words_for(Step::Tile)
                .is_some_and(|c| c.starts_with("load the block's tile"))
        );
        assert_eq!(
            lesson.words_for(Step::Sum),
            Some("sum kernel_size products per output")
        );
        assert_eq!(lesson.words_for(Step::Launch), None);
    }
}
