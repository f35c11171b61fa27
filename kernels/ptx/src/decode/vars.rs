//! Variables laid out: where each `.shared`, `.const`, `.global` and `.local` declaration of a
//! module or function lives, how many bytes it takes, and its initial bytes.

use crate::addr::global_base;
use crate::decode::ctx::Ctx;
use crate::ir::imm_bits;
use crate::ir::*;
use crate::parse::Var;

pub fn align_up(x: u64, a: u64) -> u64 {
    let a = a.clamp(1, 1 << 16);
    x.div_ceil(a).saturating_mul(a)
}

pub fn elem_bytes(ty: &str) -> u64 {
    Ty::parse(ty.trim_start_matches('.')).map_or(1, |t| u64::from(t.bytes().max(1)))
}

/// The initial bytes of a variable (zeros where there is no initializer).
pub fn init_bytes(v: &Var) -> Vec<u8> {
    let eb = elem_bytes(&v.ty) as usize;
    let n = (v.count.unwrap_or(0) as usize).saturating_mul(eb);
    let mut out = vec![0u8; n.min(1 << 24)];
    let ty = Ty::parse(v.ty.trim_start_matches('.')).unwrap_or(Ty::B8);
    for (i, w) in v.init.iter().enumerate() {
        let bits = imm_bits(w, ty).unwrap_or(0);
        let at = i * eb;
        if at + eb <= out.len() {
            out[at..at + eb].copy_from_slice(&bits.to_le_bytes()[..eb]);
        }
    }
    out
}

impl Ctx {
    pub fn declare_var(&mut self, v: &Var) {
        let size = v.count.unwrap_or(0).saturating_mul(elem_bytes(&v.ty));
        let align = u64::from(v.align).max(elem_bytes(&v.ty));
        let p = &mut self.prog;
        let sym = |offset| Symbol {
            name: v.name.clone(),
            space: Space::Shared,
            offset,
            size,
        };
        match v.space.as_str() {
            ".shared" if v.count.is_none() || v.extern_ => {
                p.dyn_shared_name.get_or_insert(v.name.clone());
                self.symbols.insert(v.name.clone(), u64::MAX); // patched in `finish_layout`
            }
            ".shared" => {
                let at = align_up(p.static_shared, align);
                p.shared.push(sym(at));
                p.static_shared = at.saturating_add(size);
                self.symbols.insert(v.name.clone(), at);
            }
            ".const" => {
                let at = align_up(p.const_init.len() as u64, align);
                p.const_init.resize(at as usize, 0);
                p.const_init.extend(init_bytes(v));
                p.consts.push(Symbol {
                    space: Space::Const,
                    ..sym(at)
                });
                self.symbols.insert(v.name.clone(), at);
            }
            ".local" | ".param" => {
                if v.space == ".param" {
                    self.call_params.insert(v.name.clone());
                }
                let at = align_up(p.local_bytes, align);
                p.locals.push(Symbol {
                    space: Space::Local,
                    ..sym(at)
                });
                p.local_bytes = at.saturating_add(size);
                self.symbols.insert(v.name.clone(), at);
            }
            _ => {
                // `.global`: its own region after the kernel's buffers (see `memory`).
                let region = 1 + p.params.len() + p.globals.len();
                p.globals.push((
                    Symbol {
                        space: Space::Global,
                        ..sym(0)
                    },
                    init_bytes(v),
                ));
                self.symbols.insert(v.name.clone(), global_base(region));
            }
        }
    }
}
