//! A launch's ground laid from the job: the program's limits checked against what the
//! simulator (and a GPU) allow, and the memory spaces filled (arguments, module globals,
//! constant banks, the tensor maps the kernel declares, outputs poisoned with NaN, a pitched
//! output's padding with its sentinel).

use crate::memory::{Buffer, Memory, global_base};
use ptx::ir;
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job};
use spec::shape::MAX_SHARED_BYTES;

/// A program no GPU would launch (and that would exhaust the host's memory here).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TooLarge {
    #[error("the kernel declares {0} registers; the simulator allows 65536")]
    Registers(u32),
    #[error("the kernel needs {0} bytes of local memory per thread, more than 512 KiB")]
    Local(u64),
    #[error("the kernel's parameters or static shared arrays are larger than a GPU allows")]
    Params,
}

/// Rejects programs no GPU would launch (and that would exhaust the host's memory here).
pub(crate) fn limits(prog: &ir::Program) -> Result<(), TooLarge> {
    if prog.nregs > 1 << 16 {
        return Err(TooLarge::Registers(prog.nregs));
    }
    if prog.local_bytes > 512 * 1024 {
        return Err(TooLarge::Local(prog.local_bytes));
    }
    if prog.param_bytes > 32 * 1024 || prog.static_shared > u64::from(MAX_SHARED_BYTES) {
        return Err(TooLarge::Params);
    }
    Ok(())
}

/// The launch's global, const and param memory: arguments in regions 1.., output buffers NaN.
pub(crate) fn memory_for(prog: &ir::Program, job: &Job) -> Result<Memory, Box<Diagnostic>> {
    if job.args.len() != prog.params.len() {
        let msg = format!(
            "`{}` takes {} parameters but the puzzle passes {} ({}); keep the signature of the skeleton",
            job.kernel,
            prog.params.len(),
            job.args.len(),
            job.args
                .iter()
                .map(Arg::name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Err(Box::new(Diagnostic::new(Kind::SignatureMismatch, msg)));
    }
    let mut mem = Memory {
        params: vec![0; prog.param_bytes as usize],
        consts: prog.const_init.clone(),
        ..Memory::default()
    };
    for (i, (a, (pname, off, size))) in job.args.iter().zip(&prog.params).enumerate() {
        let (bytes, value, want): (Vec<u8>, u64, u64) = match a {
            Arg::Input { data, .. } => (
                data.iter().flat_map(|f| f.to_le_bytes()).collect(),
                global_base(i + 1),
                8,
            ),
            Arg::I32 { value, .. } => (Vec::new(), u64::from(*value as u32), 4),
            out => (
                out.output_init()
                    .expect("an output buffer")
                    .iter()
                    .flat_map(|f| f.to_le_bytes())
                    .collect(),
                global_base(i + 1),
                8,
            ),
        };
        if *size != want {
            let msg = format!(
                "parameter {} (`{pname}`) of `{}` has {size} bytes but `{}` needs {want}; keep the signature of the skeleton",
                i + 1,
                job.kernel,
                a.name()
            );
            return Err(Box::new(Diagnostic::new(Kind::SignatureMismatch, msg)));
        }
        let at = *off as usize;
        mem.params[at..at + want as usize].copy_from_slice(&value.to_le_bytes()[..want as usize]);
        mem.globals.push(Buffer {
            name: a.name().to_string(),
            bytes,
            elem: 4,
            read_only: matches!(a, Arg::Input { .. }),
        });
    }
    for (sym, init) in &prog.globals {
        mem.globals.push(Buffer {
            name: sym.name.clone(),
            bytes: init.clone(),
            elem: 4,
            read_only: false,
        });
    }
    if let Err(why) =
        crate::host_maps::write(&job.tensor_maps, &mut mem.globals, &mut mem.host_maps)
    {
        return Err(Box::new(Diagnostic::new(
            Kind::BadLaunchShape,
            why.to_string(),
        )));
    }
    for c in &job.constants {
        let Some(sym) = prog.consts.iter().find(|s| s.name == c.symbol) else {
            let msg = format!(
                "the kernel declares no `__constant__` array named `{}`",
                c.symbol
            );
            return Err(Box::new(Diagnostic::new(Kind::LaunchError, msg)));
        };
        let bytes: Vec<u8> = c.data.iter().flat_map(|f| f.to_le_bytes()).collect();
        if bytes.len() as u64 > sym.size || sym.offset as usize + bytes.len() > mem.consts.len() {
            let msg = format!(
                "`__constant__ {}` holds {} floats but the puzzle uploads {}",
                c.symbol,
                sym.size / 4,
                c.data.len()
            );
            return Err(Box::new(Diagnostic::new(Kind::LaunchError, msg)));
        }
        let at = sym.offset as usize;
        mem.consts[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(mem)
}
