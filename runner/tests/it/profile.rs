//! `runner profile`: a predicted time and what bounds it (that every solution is profiled at full
//! scale within 10 s is `profile_time.rs`, a binary of its own); the per-line table names the line of
//! the inner loop; the shared tile of puzzle 04 has no bank conflicts and the naive kernel's
//! loads of neighbouring inputs are coalesced (about 4 sectors for the 32 floats of a warp); the
//! tensor-core solutions are bound by the tensor cores, a `wgmma`'s B operand read once, and at
//! one block an SM by their stores after the products; a learner's implicit GEMM pays for its
//! integer divisions as the SASS does; a kernel with few warps, each waiting on its loads one
//! after the other, is bound by that chain.

use crate::common;

use common::{profile, profile_row as row};

#[test]
fn puzzle_04s_tile_is_free_of_bank_conflicts_and_its_loop_is_the_hot_line() {
    let text = profile(&["puzzle-04", "--solution", "--case", "random-halo"]);
    // `sum += tile[threadIdx.x + j] * kernel[j];` is line 32 of the solution.
    let hot = row(&text, "32");
    assert_eq!(hot[6], "1.00", "wavefronts per shared request: {text}");
    assert_eq!(
        hot[4], "1.00",
        "kernel[j] is one sector for the whole warp: {text}"
    );
    assert!(
        !text.contains("simulated "),
        "a small case runs whole: {text}"
    );
    // Whole, its totals are exact: one wavefront per shared request over the whole kernel.
    let exact = text
        .lines()
        .find(|l| l.starts_with("exact: "))
        .expect("exact totals");
    let n: Vec<u64> = exact.split(' ').filter_map(|w| w.parse().ok()).collect();
    assert_eq!(n.len(), 7, "{exact}");
    assert_eq!(n[3], n[4], "{exact}");
    // Every global request of this kernel touches at most 4 lines: one wavefront each.
    assert_eq!(n[0], n[2], "{exact}");
}

#[test]
fn the_naive_kernels_neighbouring_loads_are_coalesced() {
    let text = profile(&["puzzle-01", "--solution", "--case", "large"]);
    let kernel = row(&text, "kernel");
    // a[i + j]: 32 consecutive floats, 4 or 5 sectors; b[j]: 1 sector. Half each.
    let sectors: f64 = kernel[4].parse().unwrap();
    assert!((2.5..=3.1).contains(&sectors), "{text}");
    assert!(text.contains("predicted on an NVIDIA H100"), "{text}");
}

#[test]
fn constant_reads_indexed_by_the_thread_are_serialised_and_bound_the_time() {
    let kernel = "runner/tests/fixtures/p05_const_by_thread.cu";
    let small = profile(&["puzzle-05", "--kernel", kernel, "--case", "random-halo"]);
    // `sum += tile[threadIdx.x + j] * c_kernel[j];` is line 25: an address per active lane.
    let (lanes, addresses) = (&row(&small, "25")[2], &row(&small, "25")[7]);
    assert_eq!(addresses, lanes, "{small}");
    assert!(addresses.parse::<f64>().unwrap() > 31.0, "{small}");
    let full = profile(&["puzzle-05", "--kernel", kernel]);
    assert!(
        full.contains("constant-bound (distinct constant addresses)"),
        "{full}"
    );
    // The solution reads one address per request, but its 8 KB of taps overflow the constant
    // cache (2 KB) with 64 warps a SM: every request misses (ncu's `imc_miss` stall, 29 cycles per
    // instruction issued on an H100), which the misses, not the addresses, bound.
    let solution = profile(&["puzzle-05", "--solution"]);
    assert!(
        solution.contains("constant-bound (constant cache misses)"),
        "{solution}"
    );
}

#[test]
fn puzzle_06s_few_warps_keep_the_same_taps_in_the_constant_cache() {
    // The same 8 KB of taps as puzzle 05, read by 24 warps a SM, fewer than the cache's 32
    // lines: no misses, and the L1 data path binds, as measured.
    let solution = profile(&["puzzle-06", "--solution"]);
    assert!(solution.contains("shared-bound"), "{solution}");
}

/// The figure of `term` (e.g. "tensor") in the prediction's parenthesis (its last mention), in us.
fn bound_us(text: &str, term: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("predicted on "))
        .unwrap_or_else(|| panic!("no prediction in\n{text}"));
    let at = line
        .rfind(&format!(" {term} "))
        .unwrap_or_else(|| panic!("no {term} bound in {line}"));
    line[at + term.len() + 2..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {term} in {line}"))
}

/// The issue bound, the parenthesis's first figure, in us.
fn issue_us(text: &str) -> f64 {
    text.split("(issue ")
        .nth(1)
        .and_then(|r| r.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no issue bound in\n{text}"))
}

/// Both Hopper solutions hold one block an SM, so their tiles' stores follow their products:
/// puzzle 11's N16 case writes 31.5 MB, 11.2 us at the DRAM bandwidth, on top of 19.0 us of
/// products (30.2 us; the H100 took 42.1, where the products alone were 0.45 of it).
/// Queued together with the warps' issue and DRAM share (`queueing`) they predict 32.4 us.
#[test]
fn the_tensor_core_solutions_are_bound_by_the_tensor_cores() {
    let p11 = profile(&["puzzle-11", "--solution=hopper"]);
    let then = "tensor-bound (tensor cores, and the stores after them: one block per SM)";
    assert!(p11.contains(then), "{p11}");
    let (tensor, stores) = (bound_us(&p11, "tensor"), bound_us(&p11, "stores"));
    assert!(
        (18.5..19.5).contains(&tensor) && (11.0..11.4).contains(&stores),
        "{p11}"
    );
    let total: f64 = (p11.split("SXM5 80GB: ").nth(1))
        .and_then(|t| t.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no prediction in {p11}"));
    // The prediction is the two added up, or the warps queued at the issue slots, the data
    // path and DRAM where that is longer (32.4 us here: 3 warps a scheduler).
    assert!(
        total > tensor + stores - 0.15 && total < 1.15 * (tensor + stores),
        "{p11}"
    );
    // Puzzle 12's wgmma path: 2 warpgroups x 264 k-steps x 3 m64n96k8 a block, one block an SM,
    // at 1,837 tf32 FLOP a clock: 42.8 us (the H100 runs it in 54). Its B tiles, counted once
    // per warpgroup, keep the shared data path under that; counted for each of the four warps
    // they would bind it at 82 us.
    let text = profile(&["puzzle-12", "--solution=hopper"]);
    assert!(text.contains(then), "{text}");
    let tensor = bound_us(&text, "tensor");
    assert!((42.0..44.0).contains(&tensor), "{text}");
    assert!(bound_us(&text, "shared") < tensor / 1.5, "{text}");
    // A kernel without tensor cores names no tensor bound.
    assert!(!profile(&["puzzle-08", "--solution"]).contains(" tensor "));
}

/// Puzzle 11's Hopper kernel (`--solution=hopper`) is persistent (its first `%nsmid` blocks walk the pixels, the
/// rest return). Told one SM, as the checks tell it, block 0 did the whole grid's work, the
/// sample stopped at its budget inside it and scaled it by 377: a minute and numbers far off.
/// Told the H100's 132, the sample is drawn from the 132 blocks that work and scaled to them,
/// and the tensor bound is the case's work at the wgmma rate (6.88 GFLOP: 14.3 us).
#[test]
fn a_persistent_kernel_is_sampled_among_the_blocks_that_work() {
    let text = profile(&[
        "puzzle-11",
        "--solution=hopper",
        "--case",
        "full-n32-56x56-ic64-oc64",
    ]);
    assert!(
        text.contains("the kernel reads %nsmid (132 SMs, the H100's)")
            && text.contains("simulated 6 of its blocks")
            && text.contains("(x22.0)"),
        "{text}"
    );
    let tensor = bound_us(&text, "tensor");
    assert!((14.0..15.5).contains(&tensor), "{text}");
}

/// Issue 36: a learner's first `wmma` kernel computes its im2col addresses with divisions by the
/// image's sizes. Each is one PTX instruction and about 24 in SASS; counting the PTX's, the
/// profile predicted 179 us on the N16 case where an H100 took 829 us (ncu: 488M SASS
/// instructions against 182M PTX ones). Counted as SASS spells them, and at the clock the H100
/// keeps while its tensor cores work, the issue bound is 516 us.
#[test]
fn a_learners_implicit_gemm_counts_its_divisions_as_sass_spells_them() {
    let text = profile(&[
        "puzzle-11",
        "--kernel",
        "runner/tests/fixtures/learners/p11_wmma.cu",
    ]);
    // "predicted on an NVIDIA H100 SXM5 80GB: 550.1 us, issue-bound (issue 515.8 us, ..., all
    // queued 550.1 us)": the issue bound names it, its warps' queueing adds a little.
    let issue = issue_us(&text);
    assert!(text.contains(" us, issue-bound ("), "{text}");
    assert!((480.0..560.0).contains(&issue), "{text}");
    // 72 registers a thread (ncu's `launch__registers_per_thread` on the H100): 7 blocks of 4
    // warps an SM, 7 warps a scheduler, enough to hide the arithmetic's dependencies.
    assert!(
        text.contains("occupancy on an H100: 72 registers a thread (ptxas, sm_90)")
            && text.contains("7 blocks of 4 warps per SM (limited by registers), 28 warps"),
        "{text}"
    );
    assert!(!text.contains(", latency "), "{text}");
    // The profile says why: 13.3M divisions and remainders on this case, ~24 SASS instructions each.
    assert!(
        text.contains("integer division: ") && text.contains("no integer divider"),
        "{text}"
    );
    // A kernel without divisions by a value says nothing of them.
    assert!(!profile(&["puzzle-04", "--solution"]).contains("integer division"));
}

/// Issue 36: puzzle 11's solution takes 221 registers a thread (ncu's
/// `launch__registers_per_thread` on an H100), so an SM holds 2 of its 4-warp blocks: 2 warps a
/// scheduler, each waiting 4 clocks for the instruction its next one depends on. Its issue
/// bound was 0.42 of the H100's 76.7 us on this case; that latency bound is twice it (0.83), and
/// its warps' chains of dependent loads and products (`critical`) take it to 77.0 us (1.00).
#[test]
fn few_warps_a_scheduler_make_puzzle_11s_solution_latency_bound() {
    let text = profile(&[
        "puzzle-11",
        "--solution",
        "--case",
        "full-n32-56x56-ic64-oc64",
    ]);
    assert!(
        text.contains("occupancy on an H100: 221 registers a thread (ptxas, sm_90)")
            && text.contains(
                "2 blocks of 4 warps per SM (limited by registers), 8 warps, 2.0 per scheduler"
            ),
        "{text}"
    );
    assert!(text.contains(", latency-bound ("), "{text}");
    let issue = issue_us(&text);
    let latency = bound_us(&text, "latency");
    assert!(latency / issue > 1.99, "{text}");
    assert!((60.0..85.0).contains(&latency), "{text}");
}

/// Issue 36: the persistent puzzle 01 variant keeps one block of 8 warps an SM working (2 a
/// scheduler), and each warp waits on its loads one after the other. With 4 clocks an
/// instruction the latency bound was 78.6 us, 0.28 of the H100's 278 us; following each warp's
/// registers through its loads (L1 hits, and misses at L2's and DRAM's latencies) the block
/// takes about 394k clocks alone, 199 us (0.72; queued with its issue and data path, 239 us).
#[test]
fn a_warps_chain_of_dependent_loads_bounds_a_kernel_with_few_warps() {
    let text = profile(&[
        "puzzle-01",
        "--kernel",
        "runner/tests/fixtures/variants/puzzle-01.persistent.cu",
    ]);
    assert!(text.contains("critical path: a block takes "), "{text}");
    assert!(
        text.contains("latency-bound (each warp's chain of dependent loads and arithmetic"),
        "{text}"
    );
    let latency = bound_us(&text, "latency");
    assert!((150.0..250.0).contains(&latency), "{text}");
}

/// Issue 36: puzzle 09's naive kernel (one thread per output) at 4096 x 4096, 3x3: 16 warps a
/// scheduler, an issue bound of 64 us and a critical path of 63 us in 62 waves. Taking the
/// larger (perfect overlap) predicted 0.57 of the H100's 113 us. Queued together, by mean value
/// analysis of each scheduler's warps (`queueing`), they take 81 us (0.72).
#[test]
fn where_issue_and_the_path_are_close_the_warps_queue_above_both() {
    let text = profile(&[
        "puzzle-09",
        "--kernel",
        "runner/tests/fixtures/learners/p09_naive.cu",
    ]);
    assert!(text.contains(" us, issue-bound ("), "{text}");
    let issue = issue_us(&text);
    let queued = bound_us(&text, "queued");
    assert!((1.15..1.45).contains(&(queued / issue)), "{text}");
    assert!(
        text.contains(&format!(": {queued:.1} us, issue-bound")),
        "{text}"
    );
}
