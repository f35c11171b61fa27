//! `runner profile [puzzle]`: what a kernel asks of the hardware, counted by the simulator, and
//! the time that predicts on an H100 (no GPU needed).
//!
//! By default the (first) full-scale case, of which a sample of blocks (`--blocks`, spread over the grid)
//! is simulated and the counts scaled to the whole grid; `--case NAME` profiles one small case
//! whole instead (what `bench/profile_vs_ncu.py` compares with `ncu`). Per source line and for
//! the kernel: warp-instructions issued, active lanes per issue, global sectors per request,
//! shared wavefronts per request, distinct constant addresses per constant request; the
//! instruction mix; bytes per output; the occupancy (`occupancy`, from the registers a thread
//! takes in NVRTC's sm_90 CUBIN, `toolchain::cubin`); a block's critical path (`critical`); the
//! predicted time from `model`, with the bound that sets it.

use super::KernelChoice;
use crate::check;
use crate::critical::{self, Critical};
use crate::model::{self, Load};
use crate::occupancy::{self, Occupancy};
use crate::profile::{Counts, Profiler};
use crate::workbook::install;
use sim::SimOptions;
use spec::{Arg, Scale};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// Profile this case: a small one whole, every block of it; a full-scale one (2D puzzles
    /// have several) by a sample of its blocks.
    #[arg(long, value_name = "NAME")]
    case: Option<String>,
    /// Blocks of the full-scale case to simulate (spread over its grid, first and last
    /// included); those that would start after 250 million simulated thread-instructions are left out.
    #[arg(long, default_value_t = 6, value_name = "N")]
    blocks: u64,
}

/// 1234567 as 1.23M.
fn si(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.2}G", x / 1e9),
        x if x >= 1e6 => format!("{:.2}M", x / 1e6),
        x if x >= 1e3 => format!("{:.1}k", x / 1e3),
        x => format!("{x:.0}"),
    }
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

fn row(label: &str, c: &Counts, scale: f64, source: &str) -> String {
    let line = format!(
        "{label:>6} {:>8} {:>6} {:>8} {:>7} {:>8} {:>7} {:>6}  {source}",
        si(c.issued as f64 * scale),
        ratio(c.lanes, c.issued),
        si(c.global_requests as f64 * scale),
        ratio(c.sectors, c.global_requests),
        si(c.shared_requests as f64 * scale),
        ratio(c.wavefronts, c.shared_requests),
        ratio(c.const_addresses, c.const_requests),
    );
    line.trim_end().to_string() + "\n"
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, path) = args.target.resolve()?;
    let file = crate::workbook::display(&path);
    let (code, warning) = crate::workbook::source_text::read(&path, &file)?;
    warning.iter().for_each(|w| eprintln!("{w}"));
    if let Err(d) = install::ensure_nvrtc() {
        println!("{}: {}", d.kind.name(), d.message);
        return Ok(ExitCode::from(1));
    }
    // A small case by name runs whole; the full-scale cases (the first by default, or one by
    // name) are sampled.
    let small = (puzzle.cases)(Scale::Small);
    let named = |cases: &[spec::Case]| {
        let name = args.case.as_deref();
        let found = cases.iter().find(|c| match name {
            Some(n) => c.name == n,
            None => c.scale == Scale::Full,
        });
        found.cloned()
    };
    let chosen = match named(&small) {
        Some(c) if args.case.is_some() => Some(c),
        _ => named(&(puzzle.cases)(Scale::Full)),
    };
    let Some(case) = chosen else {
        let names: Vec<String> = (puzzle.cases)(Scale::Full)
            .iter()
            .map(|c| c.name.clone())
            .collect();
        anyhow::bail!(
            "{} has no such case; its cases are: {}",
            puzzle.id,
            names.join(", ")
        );
    };
    let profiled = match profiled(&puzzle, &code, &file, &case, args.blocks) {
        Ok(x) => x,
        Err(d) => {
            println!("{}: {}", d.kind.name(), d.message);
            return Ok(ExitCode::from(1));
        }
    };
    let (persistent, first, blocks, runs) = (
        profiled.persistent,
        profiled.first,
        profiled.blocks,
        profiled.runs,
    );
    let (outputs, dram, per_sm, path, p) = (
        profiled.outputs,
        profiled.dram,
        profiled.per_sm,
        profiled.path,
        profiled.prediction,
    );
    let Profiled {
        case,
        prof,
        diagnostics,
        occupancy,
        ..
    } = profiled;
    let gpu = model::H100;
    let job = &case.job;
    let params: Vec<String> = case
        .params()
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let threads = job.launch.threads_per_block();
    let mut text = format!(
        "{} {file}, case {} ({}): {} blocks of {threads} threads\n",
        puzzle.id,
        case.name,
        params.join(", "),
        job.launch.blocks()
    );
    if persistent {
        text += &format!(
            "the kernel reads %nsmid ({} SMs, the H100's) and the grid's last block returned without reading or writing memory: a persistent grid, counted as the first {} blocks of each row\n",
            gpu.sms, first[0]
        );
    }
    let factor = blocks as f64 / runs.max(1) as f64;
    if runs < blocks {
        text += &format!(
            "simulated {} of its blocks, spread over the grid (a sample: the first, the last, and between); counts scaled to the whole grid (x{factor:.1})\n",
            runs
        );
    }
    for d in &diagnostics {
        text += &format!(
            "{}: {}  (the counts stop there)\n",
            d.kind.name(),
            d.message
        );
    }
    text += &format!(
        "\n{:>6} {:>8} {:>6} {:>8} {:>7} {:>8} {:>7} {:>6}  source\n",
        "line", "issued", "lanes", "global", "sectors", "shared", "wavefr", "const"
    );
    text += &format!(
        "{:>6} {:>8} {:>6} {:>8} {:>7} {:>8} {:>7} {:>6}\n",
        "", "warp-in", "/issue", "requests", "/req", "requests", "/req", "addr/r"
    );
    let source: Vec<&str> = code.lines().collect();
    let mut lines: Vec<u32> = prof.lines.clone();
    lines.sort_unstable();
    lines.dedup();
    for line in lines {
        let mut c = Counts::default();
        (0..prof.per_inst.len())
            .filter(|&i| prof.lines[i] == line)
            .for_each(|i| c.add(&prof.per_inst[i]));
        if c.issued == 0 {
            continue;
        }
        let src = match line {
            0 => "(no source line)".to_string(),
            l => source
                .get(l as usize - 1)
                .map_or("", |s| s.trim())
                .chars()
                .take(60)
                .collect(),
        };
        text += &row(&line.to_string(), &c, factor, &src);
    }
    let total = prof.total();
    text += &row("kernel", &total, factor, "");
    if runs == blocks {
        text += &format!(
            "exact: {} global requests, {} sectors, {} global wavefronts, {} shared requests, {} shared wavefronts, {} constant requests, {} constant addresses\n",
            total.global_requests,
            total.sectors,
            total.global_wavefronts,
            total.shared_requests,
            total.wavefronts,
            total.const_requests,
            total.const_addresses
        );
    }
    let issued: u64 = prof.mix().iter().map(|m| m.1).sum();
    let mix: Vec<String> = prof
        .mix()
        .iter()
        .filter(|m| m.1 > 0)
        .map(|(k, n)| {
            format!(
                "{} {:.1}%",
                k.name(),
                100.0 * *n as f64 / issued.max(1) as f64
            )
        })
        .collect();
    text += &format!(
        "\ninstruction mix (warp-instructions): {}\n",
        mix.join(", ")
    );
    let (ptx_issued, sass_issued) = (prof.total().issued, prof.sass_issued());
    if sass_issued > ptx_issued + ptx_issued / 10 {
        text += &format!(
            "integer division: {} warp-instructions divide by a value or take a remainder, about 20 instructions each in SASS (the GPU has no integer divider), so the issue bound counts {} warp-instructions rather than {}\n",
            si(prof.expanded() as f64 * factor),
            si(sass_issued as f64 * factor),
            si(ptx_issued as f64 * factor)
        );
    }
    text += &format!(
        "bytes per output: {:.1} through L1 (global sectors x 32 B), {:.1} from and to DRAM at the least (each input read once, each output written once)\n",
        total.sectors as f64 * 32.0 * factor / outputs as f64,
        dram / outputs as f64
    );
    text += &occupancy::line(&occupancy, prof.shared_bytes, per_sm);
    if let Some((clocks, share)) = path {
        text += &format!(
            "critical path: a block takes {} clocks alone (its longest warp's chain of dependent loads and arithmetic; {:.0}% of its L1 misses from DRAM, the rest L2 hits)\n",
            si(clocks),
            100.0 * share
        );
    }
    let us = |s: f64| format!("{:.1} us", s * 1e6);
    // The tensor bound is named only for a kernel that uses the tensor cores.
    let tensor = if p.stores > 0.0 {
        format!(", tensor {}, then stores {}", us(p.tensor), us(p.stores))
    } else if p.tensor > 0.0 {
        format!(", tensor {}", us(p.tensor))
    } else {
        String::new()
    };
    // The latency bound is named only where it exceeds the issue bound.
    let latency = if p.latency > p.issue {
        format!(", latency {}", us(p.latency))
    } else {
        String::new()
    };
    // The queued time is named only where it is the prediction.
    let queued = if p.queued > p.largest_bound() {
        format!(", all queued {}", us(p.queued))
    } else {
        String::new()
    };
    text += &format!(
        "predicted on an {}: {}, {} (issue {}{latency}, shared {}, constant {}, memory {}{tensor}{queued}); the model and its sources: runner/src/model.rs\n",
        gpu.name,
        us(p.seconds()),
        p.bound(),
        us(p.issue),
        us(p.shared),
        us(p.constant),
        us(p.memory)
    );
    print!("{text}");
    Ok(if diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What `profile` counted and predicted for one case of a kernel.
pub struct Profiled {
    /// The case as launched (a declared launch resolved).
    pub case: spec::Case,
    pub prof: Profiler,
    /// The simulator's diagnostics (where the counts stop).
    pub diagnostics: Vec<spec::Diagnostic>,
    /// A persistent grid: the counts stand for the first `first[0]` blocks of each row.
    pub persistent: bool,
    pub first: [u32; 3],
    /// The blocks the counts stand for, and how many of them ran.
    pub blocks: u64,
    pub runs: u64,
    pub outputs: usize,
    /// Bytes from and to DRAM at the least.
    pub dram: f64,
    pub occupancy: Option<(u32, Occupancy)>,
    pub per_sm: u64,
    pub path: Option<(f64, f64)>,
    pub prediction: model::Prediction,
}

/// Profiles `case` of `code` (shown as `file`), a full-scale one by a sample of `sample`
/// blocks, and predicts its time on an H100.
pub fn profiled(
    puzzle: &spec::Puzzle,
    code: &str,
    file: &str,
    case: &spec::Case,
    sample: u64,
) -> Result<Profiled, spec::Diagnostic> {
    let sampled = case.scale == Scale::Full;
    let case = check::with_declared_launch(puzzle, code, file, case)?;
    let ptx = check::ptx(code, file, &case.macros)?;
    let job = &case.job;
    let gpu = model::H100;
    // A kernel that reads %nsmid is told the H100's SMs. A persistent one gives work to the first
    // blocks of each row (as many as SMs) and returns from the rest at once, so where the grid is
    // wider than that the sample is drawn from those first blocks, plus the grid's last block as
    // a probe: if the probe read and wrote no memory (it returned before any work), the counts
    // are scaled to the first blocks only.
    let grid = job.launch.grid;
    let wide = sampled && ptx.contains("%nsmid") && grid[0] > gpu.sms;
    let first = [grid[0].min(gpu.sms), grid[1], grid[2]];
    let probe = [grid[0] - 1, grid[1] - 1, grid[2] - 1];
    let sample = sampled.then(|| {
        let mut s = sample_blocks(if wide { first } else { grid }, sample.max(1));
        if wide {
            s.push(probe);
        }
        s
    });
    let mut prof = Profiler::new(sample);
    prof.critical = Some(Critical::new(gpu.latencies()));
    prof.probe = wide.then_some(probe);
    let opts = SimOptions {
        checks: false,
        sms: gpu.sms,
        ..SimOptions::default()
    };
    let out = sim::run_observed(&ptx, job, &opts, &mut prof);
    // The blocks run among the first of each row, and whether those past them (the probe) did
    // no work.
    let (within, beyond): (Vec<&([u32; 3], u64)>, Vec<_>) =
        prof.block_accesses.iter().partition(|b| b.0[0] < gpu.sms);
    let persistent = wide && !beyond.is_empty() && beyond.iter().all(|b| b.1 == 0);
    let blocks = if persistent {
        u64::from(first[0]) * u64::from(first[1]) * u64::from(first[2])
    } else {
        job.launch.blocks()
    };
    // The blocks the counts stand for, and how many of them ran.
    let runs = if persistent {
        within.len() as u64
    } else {
        prof.blocks_run()
    };
    let total = prof.total();
    let outputs: usize = job.output_names().count().max(1) * case.expected.len().max(1);
    let written = |a: &Arg| match a {
        Arg::Output { len, .. } => *len as f64 * 4.0,
        // Only the image is written, not its rows' padding.
        Arg::Pitched { rows, cols, .. } => (rows * cols) as f64 * 4.0,
        Arg::Input { .. } | Arg::I32 { .. } => 0.0,
    };
    let store_bytes: f64 = job.args.iter().map(written).sum();
    let dram: f64 = job
        .args
        .iter()
        .map(|a| match a {
            Arg::Input { data, .. } => data.len() as f64 * 4.0,
            out => written(out),
        })
        .sum::<f64>()
        + job
            .constants
            .iter()
            .map(|c| c.data.len() as f64 * 4.0)
            .sum::<f64>();
    let threads = job.launch.threads_per_block();
    let occupancy = occupancy::registers(code, file, &case.macros, &ptx).map(|r| {
        let o = occupancy::occupancy(&occupancy::SM_90, threads, r, prof.shared_bytes as u32);
        (r, o)
    });
    // The warps that have work: as many blocks as fit, or as the grid gives each SM.
    let per_sm = blocks.div_ceil(u64::from(gpu.sms)).max(1);
    let working = |o: &Occupancy| u64::from(o.blocks).min(per_sm) * u64::from(o.warps_per_block);
    // A persistent grid's path is that of the blocks that work.
    let dram_read = (dram - store_bytes) / blocks.max(1) as f64;
    let path = (prof.critical.as_ref()).and_then(|k| {
        critical::block_path(&k.blocks, |b| !persistent || b[0] < gpu.sms, dram_read)
    });
    let ran = runs.max(1) as f64;
    let (sync_work, wg_work) = prof.tensor_work();
    let load = Load {
        blocks,
        issued_per_block: prof.sass_issued() as f64 / ran,
        wavefronts_per_block: (total.wavefronts + total.global_wavefronts) as f64 / ran,
        const_addresses_per_block: total.const_addresses as f64 / ran,
        const_requests_per_block: total.const_requests as f64 / ran,
        const_bytes: prof.const_lines.bytes(),
        dram_bytes: dram,
        mma_sync_flop_per_block: sync_work as f64 / ran,
        wgmma_flop_per_block: wg_work as f64 / ran,
        warps_per_scheduler: occupancy.as_ref().map(|(_, o)| working(o) as f64 / 4.0),
        resident_blocks: (occupancy.as_ref()).map(|(_, o)| u64::from(o.blocks).min(per_sm)),
        store_bytes,
        critical_path_cycles: path.map(|p| p.0),
    };
    Ok(Profiled {
        prediction: model::predict(&gpu, &load),
        diagnostics: out.diagnostics,
        case,
        prof,
        persistent,
        first,
        blocks,
        runs,
        outputs,
        dram,
        occupancy,
        per_sm,
        path,
    })
}

/// Up to `n` blocks spread evenly over a grid of `grid` (the first and the last included).
pub fn sample_blocks(grid: [u32; 3], n: u64) -> Vec<[u32; 3]> {
    let total: u64 = grid.iter().map(|&g| u64::from(g)).product();
    let n = n.min(total);
    let pick = |k: u64| {
        let lin = if n <= 1 { 0 } else { k * (total - 1) / (n - 1) };
        let x = (lin % u64::from(grid[0])) as u32;
        let y = ((lin / u64::from(grid[0])) % u64::from(grid[1])) as u32;
        let z = (lin / (u64::from(grid[0]) * u64::from(grid[1]))) as u32;
        [x, y, z]
    };
    let mut blocks: Vec<[u32; 3]> = (0..n).map(pick).collect();
    blocks.dedup();
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_over_the_grid_and_include_both_ends() {
        assert_eq!(
            sample_blocks([10, 1, 1], 3),
            vec![[0, 0, 0], [4, 0, 0], [9, 0, 0]]
        );
        assert_eq!(sample_blocks([2, 2, 1], 8).len(), 4);
        assert_eq!(sample_blocks([5, 1, 1], 1), vec![[0, 0, 0]]);
    }
}
