//! Decoding `wgmma.mma_async` (and its fence, commit and wait): the operands of one warpgroup
//! matrix multiply as [`WgOp`]. `sim::wgmma` runs them.

use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;
use crate::parse::Operand;

fn word(name: &str) -> Operand {
    Operand::Word {
        w: name.to_string(),
        neg: false,
        minus: false,
    }
}

/// `1` or `-1` as an immediate scale; true for -1.
fn scale(cx: &Ctx, o: &Operand, line: u32) -> Result<bool, DecodeError> {
    match o {
        Operand::Word { w, minus, .. } if w == "1" => Ok(*minus),
        Operand::Word {
            w, minus: false, ..
        } if w == "-1" => Ok(true),
        _ => cx.bad(
            line,
            format!("`wgmma` scales A and B by 1 or -1, found {o:?}"),
        ),
    }
}

/// The `wgmma` instruction, or `None` for every other one.
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Option<Op>, DecodeError> {
    if w.mn != "wgmma" {
        return Ok(None);
    }
    let line = w.line;
    let boxed = |m: WgOp| Ok(Some(Op::Wgmma(Box::new(m))));
    if w.has("fence") {
        return boxed(WgOp::Fence);
    }
    if w.has("commit_group") {
        return boxed(WgOp::Commit);
    }
    if w.has("wait_group") {
        w.need(1)?;
        let keep = match cx.src(&ops[0], Ty::U32, line)? {
            Src::Imm(v) => v as u32,
            _ => return cx.bad(line, "`wgmma.wait_group` needs a constant count of groups"),
        };
        return boxed(WgOp::Wait { keep });
    }
    if !w.has("mma_async") {
        return w
            .unsupported("of `wgmma` it runs fence, commit_group, wait_group and dense mma_async")
            .map(Some);
    }
    let shape = w.mods.iter().find(|m| m.starts_with("m64n")).copied();
    let (elem, k) = match w.mods.as_slice() {
        [.., "f32", "tf32", "tf32"] => (Elem::Tf32, 8),
        [.., "f32", "f16", "f16"] => (Elem::F16, 16),
        [.., "f32", "bf16", "bf16"] => (Elem::Bf16, 16),
        _ => {
            return w
                .unsupported(
                    "of `wgmma.mma_async` it runs tf32, f16 and bf16 with f32 accumulators",
                )
                .map(Some);
        }
    };
    let n = shape
        .and_then(|s| s.strip_prefix("m64n"))
        .and_then(|s| s.strip_suffix(if k == 8 { "k8" } else { "k16" }))
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|n| *n >= 8 && *n <= 256 && n % 8 == 0);
    let Some(n) = n else {
        return cx.bad(
            line,
            format!(
                "`{}`: the shape is m64nNk{k} with N = 8, 16, ..., 256",
                w.text
            ),
        );
    };
    // d, a, b-desc, scale-d, imm-scale-a, imm-scale-b{, imm-trans-a}{, imm-trans-b}
    w.need(6)?;
    let d: Vec<Slot> = match &ops[0] {
        Operand::Vec(v) if v.len() == n as usize / 2 => v
            .iter()
            .map(|r| cx.dst(&word(r), line))
            .collect::<Result<_, _>>()?,
        _ => {
            return cx.bad(
                line,
                format!("`wgmma .m64n{n}` writes a vector of {} registers", n / 2),
            );
        }
    };
    let a = match &ops[1] {
        Operand::Vec(v) if v.len() == 4 => {
            let mut r = [Src::Imm(0); 4];
            for (i, x) in v.iter().enumerate() {
                r[i] = cx.src(&word(x), Ty::B32, line)?;
            }
            AFrom::Regs(r)
        }
        o => AFrom::Desc(cx.src(o, Ty::B64, line)?),
    };
    // The transposes (f16/bf16 only) must be 0: only K-major operands are simulated.
    let trans_at = if elem == Elem::Tf32 {
        6..6
    } else {
        6..ops.len()
    };
    for o in &ops[trans_at] {
        if !matches!(o, Operand::Word { w, .. } if w == "0") {
            return w
                .unsupported("of `wgmma` it runs K-major operands only (imm-trans 0)")
                .map(Some);
        }
    }
    boxed(WgOp::Mma {
        elem,
        n,
        d,
        a,
        b: cx.src(&ops[2], Ty::B64, line)?,
        scale_d: cx.psrc(&ops[3], line)?,
        neg_a: scale(cx, &ops[4], line)?,
        neg_b: scale(cx, &ops[5], line)?,
    })
}
