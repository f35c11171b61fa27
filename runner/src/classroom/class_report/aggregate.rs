//! The class's aggregates, from each submission's results ([`Submitted`]): what `report.html`
//! draws and what grade.json holds under `report` (its schema: `graders/grade.schema.json`).
//! Pure: no file is read and nothing is run here, so a class of any size aggregates in
//! milliseconds, and a test can build one by hand.

use super::steps::{self, Lesson, Names, Step};
use super::{Overrun, Submitted};
use serde::Serialize;
use spec::Kind;
use std::collections::{BTreeMap, HashMap};

/// One puzzle's class, aggregated.
#[derive(Clone, Debug, Serialize)]
pub struct Class {
    pub puzzle: String,
    pub title: String,
    pub submissions: usize,
    pub passed: usize,
    /// `passed / submissions`, 0 to 1.
    pub pass_rate: f64,
    /// The most cases any submission was graded on.
    pub cases_total: usize,
    /// For every count of cases passed from 0 to `cases_total`, the submissions that passed that
    /// many.
    pub cases_passed: Vec<Bin>,
    /// The diagnostic kinds, the commonest first: each with the submissions it was found in, one
    /// real message, and the steps of the lesson where it was found.
    pub misconceptions: Vec<Misconception>,
    /// Budget refusals (a lesson skipped): what was counted against what was allowed.
    pub lessons_skipped: Vec<Overrun>,
    /// The times of the submissions that passed, measured or predicted; `None` when none has one.
    pub speed: Option<Speed>,
    pub attention: Attention,
    /// The table at the bottom of the page, a row per submission (grade.json has its own).
    #[serde(skip)]
    pub rows: Vec<ClassRow>,
}

/// A submission's row in the page's table.
#[derive(Clone, Debug)]
pub struct ClassRow {
    pub file: String,
    pub passed: bool,
    pub cases_passed: usize,
    pub cases_total: usize,
    pub kinds: Vec<String>,
    pub seconds: Option<f64>,
    pub message: Option<String>,
}

/// The submissions that passed `cases` cases.
#[derive(Clone, Debug, Serialize)]
pub struct Bin {
    pub cases: usize,
    pub files: Vec<String>,
}

/// One diagnostic kind across the class.
#[derive(Clone, Debug, Serialize)]
pub struct Misconception {
    pub kind: String,
    /// The submissions with at least one diagnostic of this kind.
    pub files: Vec<String>,
    /// The first such submission's message, as its student read it.
    pub example: Example,
    /// Where in the lesson the kind's lines fall, the commonest step first (the submissions
    /// whose diagnostic names no line of their own file are in none).
    pub steps: Vec<StepCount>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Example {
    pub file: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The submissions whose diagnostic of one kind falls on one step.
#[derive(Clone, Debug, Serialize)]
pub struct StepCount {
    pub step: Step,
    /// The step's name in the report ("the barrier").
    pub name: String,
    /// The skeleton's own words for the step, where its "Your code here:" sentence has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skeleton: Option<String>,
    pub lines: Vec<Place>,
}

/// A line of a submission.
#[derive(Clone, Debug, Serialize)]
pub struct Place {
    pub file: String,
    pub line: u32,
    /// The line's code, trimmed.
    pub code: String,
}

/// The times, as a histogram, with the reference solution and the hardware's floor.
#[derive(Clone, Debug, Serialize)]
pub struct Speed {
    /// `measured` (on a GPU, as `runner bench` times) or `predicted` (`runner profile`'s model).
    pub source: String,
    /// The device measured on, or the GPU the model predicts for.
    pub on: String,
    pub times: Vec<Time>,
    /// The histogram: each bin's bounds (seconds, a log scale) and its submissions.
    pub bins: Vec<TimeBin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Time {
    pub file: String,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TimeBin {
    pub from_seconds: f64,
    pub to_seconds: f64,
    pub files: Vec<String>,
}

/// The time no kernel can beat, and what sets it.
#[derive(Clone, Debug, Serialize)]
pub struct Floor {
    pub seconds: f64,
    pub what: String,
}

/// What an instructor should look at themselves.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Attention {
    /// Submissions refused (an include refused, a link, a file that cannot be read), with why.
    pub refused: Vec<Note>,
    pub timeouts: Vec<Note>,
    /// Groups of two or more files with the same text.
    pub identical: Vec<Group>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Note {
    pub file: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// `identical`, or `identical without comments and whitespace` (and not identical).
    pub how: String,
    pub files: Vec<String>,
    /// The files are the puzzle's skeleton, unchanged (in the same sense).
    pub skeleton: bool,
}

/// The speed inputs that are the class's, not a submission's.
#[derive(Clone, Debug)]
pub struct SpeedFrame {
    pub measured: bool,
    pub on: String,
    pub reference_seconds: Option<f64>,
    pub floor: Option<Floor>,
}

/// What the aggregation needs besides the submissions.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub puzzle: String,
    pub title: String,
    /// The skeleton's text (for its steps' words and to tell an unchanged skeleton).
    pub skeleton: String,
    /// Entries of the folder that were not graded, with why (`grade_files`).
    pub skipped: Vec<(String, String)>,
    pub speed: Option<SpeedFrame>,
}

/// Bins of the speed histogram.
const TIME_BINS: usize = 12;

/// The class's aggregates.
pub fn aggregate(subs: &[Submitted], cx: &Context) -> Class {
    let passed = subs.iter().filter(|s| s.passed).count();
    let cases_total = subs.iter().map(|s| s.cases_total).max().unwrap_or(0);
    let mut cases_passed: Vec<Bin> = (0..=cases_total)
        .map(|cases| Bin {
            cases,
            files: vec![],
        })
        .collect();
    for s in subs {
        cases_passed[s.cases_passed.min(cases_total)]
            .files
            .push(s.file.clone());
    }
    Class {
        puzzle: cx.puzzle.clone(),
        title: cx.title.clone(),
        submissions: subs.len(),
        passed,
        pass_rate: if subs.is_empty() {
            0.0
        } else {
            passed as f64 / subs.len() as f64
        },
        cases_total,
        cases_passed,
        misconceptions: misconceptions(subs, &Lesson::of(&cx.skeleton)),
        lessons_skipped: subs.iter().filter_map(|s| s.overrun.clone()).collect(),
        speed: cx.speed.as_ref().and_then(|f| speed(subs, f)),
        attention: attention(subs, cx),
        rows: subs.iter().map(row).collect(),
    }
}

fn row(s: &Submitted) -> ClassRow {
    let mut kinds: Vec<String> = s.refused.iter().map(|_| "unreadable".to_string()).collect();
    for d in &s.diagnostics {
        if !kinds.iter().any(|k| k == d.kind.name()) {
            kinds.push(d.kind.name().into());
        }
    }
    ClassRow {
        file: s.file.clone(),
        passed: s.passed,
        cases_passed: s.cases_passed,
        cases_total: s.cases_total,
        kinds,
        seconds: s.seconds,
        message: (s.diagnostics.first().map(|d| d.message.clone())).or_else(|| s.refused.clone()),
    }
}

/// A kind's lines by the step they fall on.
type ByStep = BTreeMap<Step, Vec<Place>>;

fn misconceptions(subs: &[Submitted], lesson: &Lesson) -> Vec<Misconception> {
    // Each kind's name, files, example and places by step, in the order kinds are first met.
    let mut kinds: Vec<(String, Vec<String>, Example, ByStep)> = vec![];
    for s in subs {
        let names = s.text.as_deref().map(Names::of).unwrap_or_default();
        let mut seen: Vec<Kind> = vec![];
        for d in &s.diagnostics {
            if seen.contains(&d.kind) {
                continue;
            }
            seen.push(d.kind);
            let at = match kinds.iter().position(|k| k.0 == d.kind.name()) {
                Some(at) => at,
                None => {
                    let example = Example {
                        file: s.file.clone(),
                        message: d.message.clone(),
                        line: d.line,
                    };
                    kinds.push((d.kind.name().into(), vec![], example, BTreeMap::new()));
                    kinds.len() - 1
                }
            };
            kinds[at].1.push(s.file.clone());
            let own_line = d.line.filter(|_| s.owns(d.file.as_deref()));
            let code = |text: &str, line: u32| {
                let code = text.lines().nth(line as usize - 1).unwrap_or("").trim();
                (!code.is_empty()).then(|| code.to_string())
            };
            // A line of the file's own that has code (`kernel_not_found` names line 1 of any).
            let placed = own_line
                .zip(s.text.as_deref())
                .and_then(|(line, text)| Some((line, text, code(text, line)?)));
            if let Some((line, text, code)) = placed {
                let step = steps::classify(text, &names, line);
                kinds[at].3.entry(step).or_default().push(Place {
                    file: s.file.clone(),
                    line,
                    code: code.chars().take(160).collect(),
                });
            }
        }
    }
    let mut out: Vec<Misconception> = kinds
        .into_iter()
        .map(|(kind, files, example, by_step)| {
            let mut steps: Vec<StepCount> = by_step
                .into_iter()
                .map(|(step, lines)| StepCount {
                    step,
                    name: step.name().into(),
                    skeleton: lesson.words_for(step).map(str::to_string),
                    lines,
                })
                .collect();
            // The commonest step first; ties in the lesson's order (stable sort).
            steps.sort_by_key(|s| std::cmp::Reverse(s.lines.len()));
            Misconception {
                kind,
                files,
                example,
                steps,
            }
        })
        .collect();
    out.sort_by_key(|m| std::cmp::Reverse(m.files.len()));
    out
}

fn speed(subs: &[Submitted], frame: &SpeedFrame) -> Option<Speed> {
    let times: Vec<Time> = subs
        .iter()
        .filter_map(|s| {
            s.seconds.filter(|t| *t > 0.0).map(|seconds| Time {
                file: s.file.clone(),
                seconds,
            })
        })
        .collect();
    if times.is_empty() {
        return None;
    }
    // Log-scale bins over the times, the reference and the floor, so that all three show.
    let marks = (frame.reference_seconds.iter()).chain(frame.floor.as_ref().map(|f| &f.seconds));
    let all: Vec<f64> = times
        .iter()
        .map(|t| t.seconds)
        .chain(marks.copied())
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min).log10();
    let hi = all.iter().copied().fold(0.0, f64::max).log10();
    let (lo, hi) = if hi - lo < 0.1 {
        (lo - 0.05, hi + 0.05)
    } else {
        (lo, hi)
    };
    let width = (hi - lo) / TIME_BINS as f64;
    let mut bins: Vec<TimeBin> = (0..TIME_BINS)
        .map(|i| TimeBin {
            from_seconds: 10f64.powf(lo + width * i as f64),
            to_seconds: 10f64.powf(lo + width * (i + 1) as f64),
            files: vec![],
        })
        .collect();
    for t in &times {
        let i = ((t.seconds.log10() - lo) / width).floor().max(0.0) as usize;
        bins[i.min(TIME_BINS - 1)].files.push(t.file.clone());
    }
    Some(Speed {
        source: if frame.measured {
            "measured"
        } else {
            "predicted"
        }
        .into(),
        on: frame.on.clone(),
        times,
        bins,
        reference_seconds: frame.reference_seconds,
        floor: frame.floor.clone(),
    })
}

fn attention(subs: &[Submitted], cx: &Context) -> Attention {
    let mut at = Attention::default();
    for s in subs {
        for d in &s.diagnostics {
            let note = || Note {
                file: s.file.clone(),
                reason: d.message.clone(),
            };
            match d.kind {
                Kind::IncludeRefused => at.refused.push(note()),
                Kind::Timeout => at.timeouts.push(note()),
                _ => {}
            }
        }
        if let Some(why) = &s.refused {
            at.refused.push(Note {
                file: s.file.clone(),
                reason: why.clone(),
            });
        }
    }
    for (name, why) in &cx.skipped {
        if name.ends_with(".cu") || name.ends_with('/') || why.contains("link") {
            at.refused.push(Note {
                file: name.clone(),
                reason: format!("not graded: {why}"),
            });
        }
    }
    at.identical = identical(subs, &cx.skeleton);
    at
}

/// Groups of files with the same text, then groups with the same text once comments and
/// whitespace are removed (those not already a group of the first kind).
fn identical(subs: &[Submitted], skeleton: &str) -> Vec<Group> {
    let texts: Vec<(&str, &str)> = subs
        .iter()
        .filter_map(|s| Some((s.file.as_str(), s.text.as_deref()?)))
        .collect();
    let mut groups = vec![];
    let exact = groups_by(&texts, |t| t.to_string());
    let skeleton_bare = bare(skeleton);
    for files in &exact {
        let text = texts.iter().find(|t| t.0 == files[0]).map_or("", |t| t.1);
        groups.push(Group {
            how: "identical".into(),
            files: files.clone(),
            skeleton: text == skeleton,
        });
    }
    for files in groups_by(&texts, bare) {
        if exact.contains(&files) {
            continue;
        }
        let text = texts.iter().find(|t| t.0 == files[0]).map_or("", |t| t.1);
        groups.push(Group {
            how: "identical without comments and whitespace".into(),
            files,
            skeleton: bare(text) == skeleton_bare,
        });
    }
    groups
}

/// The files whose `key` is equal, in groups of two or more, each in the files' order.
fn groups_by(texts: &[(&str, &str)], key: impl Fn(&str) -> String) -> Vec<Vec<String>> {
    let mut by: HashMap<String, Vec<String>> = HashMap::new();
    let mut order = vec![];
    for (file, text) in texts {
        let k = key(text);
        let entry = by.entry(k.clone()).or_default();
        if entry.is_empty() {
            order.push(k);
        }
        entry.push(file.to_string());
    }
    order
        .into_iter()
        .filter_map(|k| by.remove(&k))
        .filter(|files| files.len() > 1)
        .collect()
}

/// CUDA source without its comments and whitespace (string and character literals kept as
/// they are, so `"a b"` and `"ab"` stay apart).
pub fn bare(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' | '\'' => {
                out.push(c);
                let mut escaped = false;
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c && !escaped {
                        break;
                    }
                    escaped = d == '\\' && !escaped;
                }
            }
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_whitespace_go_literals_stay() {
        let a = "int a = 1; // one\n/* two\n */ printf(\"a  b // c\");";
        assert_eq!(bare(a), "inta=1;printf(\"a  b // c\");");
        assert_ne!(bare("x(\"a b\")"), bare("x(\"ab\")"));
        assert_eq!(bare("char c = '\\'';"), "charc='\\'';");
    }
}
