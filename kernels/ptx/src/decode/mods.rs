//! The modifier words of arithmetic instructions: rounding, flush-to-zero and saturation
//! (`fmods`), comparisons (`cmp_of`) and boolean combinations (`bool_of`).

use crate::ir::*;

pub fn fmods(mods: &[&str]) -> FMods {
    let mut m = FMods {
        rnd: Rnd::Default,
        ftz: false,
        sat: false,
        approx: false,
    };
    for x in mods {
        match *x {
            "rn" => m.rnd = Rnd::Rn,
            "rz" => m.rnd = Rnd::Rz,
            "rm" => m.rnd = Rnd::Rm,
            "rp" => m.rnd = Rnd::Rp,
            "rni" => m.rnd = Rnd::Rni,
            "rzi" => m.rnd = Rnd::Rzi,
            "rmi" => m.rnd = Rnd::Rmi,
            "rpi" => m.rnd = Rnd::Rpi,
            "ftz" => m.ftz = true,
            "sat" => m.sat = true,
            "approx" | "full" => m.approx = true,
            _ => {}
        }
    }
    m
}

pub fn cmp_of(m: &str) -> Option<Cmp> {
    Some(match m {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lo" => Cmp::Lo,
        "ls" => Cmp::Ls,
        "hi" => Cmp::Hi,
        "hs" => Cmp::Hs,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

pub fn bool_of(m: &str) -> Option<BoolOp> {
    Some(match m {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        "xor" => BoolOp::Xor,
        _ => return None,
    })
}
