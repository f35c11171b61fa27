//! What `runner profile` prints of a [`Profiled`] case: the launch and how it was sampled, a
//! table of counts per source line and for the kernel, the instruction mix, the bytes per
//! output, the occupancy, the critical path, and the predicted time with its bounds.

use super::Profiled;
use ::profile::{Counts, H100, Occupancy, Prediction};

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

/// The report of `profiled`, a case of the kernel `code` (shown as `file`) of `puzzle`: the
/// launch and its sample, the table of counts, what they add up to, and the prediction.
pub fn report(puzzle: &spec::Puzzle, file: &str, code: &str, profiled: &Profiled) -> String {
    let factor = profiled.blocks as f64 / profiled.runs.max(1) as f64;
    header(puzzle, file, profiled, factor)
        + &table(code, profiled, factor)
        + &summary(profiled, factor)
        + &prediction(&profiled.prediction)
}

/// The case and its launch, a persistent grid, the sample the counts are scaled from (by
/// `factor`), and the diagnostics where the counts stop.
fn header(puzzle: &spec::Puzzle, file: &str, profiled: &Profiled, factor: f64) -> String {
    let Profiled {
        case,
        diagnostics,
        persistent,
        first,
        blocks,
        runs,
        ..
    } = profiled;
    let (blocks, runs) = (*blocks, *runs);
    let gpu = H100;
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
    if *persistent {
        text += &format!(
            "the kernel reads %nsmid ({} SMs, the H100's) and the grid's last block returned without reading or writing memory: a persistent grid, counted as the first {} blocks of each row\n",
            gpu.sms, first[0]
        );
    }
    if runs < blocks {
        text += &format!(
            "simulated {} of its blocks, spread over the grid (a sample: the first, the last, and between); counts scaled to the whole grid (x{factor:.1})\n",
            runs
        );
    }
    for d in diagnostics {
        text += &format!(
            "{}: {}  (the counts stop there)\n",
            d.kind.name(),
            d.message
        );
    }
    text
}

/// The counts per source line of `code` and for the kernel, scaled by `factor`; exact where
/// every block ran.
fn table(code: &str, profiled: &Profiled, factor: f64) -> String {
    let prof = &profiled.prof;
    let mut text = String::new();
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
    if profiled.runs == profiled.blocks {
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
    text
}

/// The instruction mix, integer division's SASS, the bytes per output, the occupancy and the
/// critical path.
fn summary(profiled: &Profiled, factor: f64) -> String {
    let Profiled {
        prof,
        occupancy,
        outputs,
        dram,
        per_sm,
        path,
        ..
    } = profiled;
    let total = prof.total();
    let mut text = String::new();
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
        total.sectors as f64 * 32.0 * factor / *outputs as f64,
        dram / *outputs as f64
    );
    text += &occupancy_line(occupancy, prof.shared_bytes, *per_sm);
    if let Some((clocks, share)) = *path {
        text += &format!(
            "critical path: a block takes {} clocks alone (its longest warp's chain of dependent loads and arithmetic; {:.0}% of its L1 misses from DRAM, the rest L2 hits)\n",
            si(clocks),
            100.0 * share
        );
    }
    text
}

/// The predicted time on the model's GPU, its bound and the bounds beside it.
fn prediction(p: &Prediction) -> String {
    let gpu = H100;
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
    format!(
        "predicted on an {}: {}, {} (issue {}{latency}, shared {}, constant {}, memory {}{tensor}{queued}); the model and its sources: kernels/profile/src/model.rs\n",
        gpu.name,
        us(p.seconds()),
        p.bound(),
        us(p.issue),
        us(p.shared),
        us(p.constant),
        us(p.memory)
    )
}

/// What the occupancy is and what limits it, or why it is not known.
fn occupancy_line(o: &Option<(u32, Occupancy)>, shared: usize, per_sm: u64) -> String {
    let Some((registers, o)) = o else {
        return "occupancy: not known (no register count from the CUBIN for sm_90), so no latency bound\n".into();
    };
    let mut line = format!(
        "occupancy on an H100: {registers} registers a thread (ptxas, sm_90) and {:.1} KB of shared memory a block: {} block{} of {} warps per SM (limited by {}), {} warps, {:.1} per scheduler",
        shared as f64 / 1024.0,
        o.blocks,
        if o.blocks == 1 { "" } else { "s" },
        o.warps_per_block,
        o.limited_by.join(" and "),
        o.warps(),
        f64::from(o.warps()) / 4.0
    );
    if per_sm < u64::from(o.blocks) {
        let warps = per_sm * u64::from(o.warps_per_block);
        line += &format!(
            "; the grid gives each SM {per_sm} block{}: {warps} warps, {:.1} per scheduler",
            if per_sm == 1 { "" } else { "s" },
            warps as f64 / 4.0
        );
    }
    line + "\n"
}
