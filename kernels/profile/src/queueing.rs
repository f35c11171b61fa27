//! The resident warps of one scheduler as a closed queueing network, for `model`'s queued bound:
//! where neither the throughput bounds nor a warp's critical path dominates, the two are
//! combined by exact mean value analysis rather than by taking the larger (perfect overlap).
//!
//! Each of a scheduler's `n` warps goes round the network once per wave of resident blocks:
//! it is served at each station in turn (the scheduler's issue slots, and its quarter of the
//! SM's L1 data path, constant path and DRAM share), for that station's demand, and waits out
//! the rest of its critical path at a delay station (an infinite server: latency that no other
//! warp holds up). Mean value analysis (Reiser and Lavenberg, "Mean-value analysis of closed
//! multichain queuing networks", J. ACM 27(2), 1980) gives the network's throughput for `n`
//! customers exactly where service is product form, from the demands alone: it is not fitted,
//! and it meets both asymptotes, `n` times the largest demand when many warps queue (the
//! roofline's bound) and the sum of the demands and the delay for one warp (its critical path).
//! In between it is above both, most where they are close (the knee).

/// Clocks for each of `n` customers to go once round a closed network of single-server
/// stations of `demands` (clocks each, per customer) and a delay station of `delay` clocks:
/// `n / X(n)`, with `X` the network's throughput by mean value analysis. A fractional `n` (a
/// scheduler's share of an SM's warps) interpolates the throughput between the whole numbers
/// around it.
pub fn cycle_clocks(n: f64, demands: &[f64], delay: f64) -> f64 {
    if n <= 0.0 || !n.is_finite() {
        return 0.0;
    }
    let (lo, hi) = (n.floor() as u32, n.ceil() as u32);
    let throughputs = throughput(hi, demands, delay);
    let at = |k: u32| {
        if k == 0 {
            0.0
        } else {
            throughputs[k as usize - 1]
        }
    };
    let x = at(lo) + (at(hi) - at(lo)) * (n - f64::from(lo));
    if x > 0.0 { n / x } else { 0.0 }
}

/// The network's throughput (customers round per clock) with 1 to `n` customers.
fn throughput(n: u32, demands: &[f64], delay: f64) -> Vec<f64> {
    let mut queue = vec![0.0; demands.len()];
    let mut out = Vec::with_capacity(n as usize);
    for k in 1..=n {
        // Each station's residence time: its demand, and the customers already queued there.
        let residence: Vec<f64> = (demands.iter().zip(&queue))
            .map(|(d, q)| d * (1.0 + q))
            .collect();
        let round = residence.iter().sum::<f64>() + delay;
        let x = if round > 0.0 {
            f64::from(k) / round
        } else {
            0.0
        };
        queue = residence.iter().map(|r| x * r).collect();
        out.push(x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn one_warp_takes_its_whole_path_and_many_take_the_busiest_station() {
        // One customer: every demand and the delay, one after the other.
        assert!(close(cycle_clocks(1.0, &[100.0, 30.0], 500.0), 630.0));
        // No delay and one station: n customers queue, n x the demand.
        assert!(close(cycle_clocks(16.0, &[100.0], 0.0), 1600.0));
        // Many customers: the busiest station's n x demand, approached from above.
        let many = cycle_clocks(200.0, &[100.0, 30.0], 500.0);
        assert!((20_000.0..20_000.0 * 1.01).contains(&many), "{many}");
    }

    #[test]
    fn at_the_knee_queueing_adds_to_both_asymptotes() {
        // The machine-repairman model: 16 customers, demand 128, delay 1,866 clocks, so that
        // 16 x 128 = 128 + 1,866 = 2,048 clocks (the roofline and the path meet).
        let t = cycle_clocks(16.0, &[128.0], 1866.0);
        assert!(t > 2048.0 * 1.1 && t < 2048.0 * 1.3, "{t}");
        // Its recurrence by hand for 2 customers: R1 = 128, X1 = 1/1994, Q1 = 128/1994;
        // R2 = 128 (1 + Q1), X2 = 2 / (R2 + 1866).
        let r2 = 128.0 * (1.0 + 128.0 / 1994.0);
        assert!(close(cycle_clocks(2.0, &[128.0], 1866.0), r2 + 1866.0));
    }

    #[test]
    fn a_kernel_at_the_knee_is_predicted_above_its_issue_bound_and_its_path() {
        use crate::H100;
        use crate::model::{Load, predict};
        // Puzzle 09's one thread per output at 3x3, in round figures: 62 waves of 8 blocks of 8
        // warps (16 a scheduler), each warp issuing 128 instructions, a block's path 2,000 clocks:
        // the issue bound (2,048 clocks a wave) and the chain nearly equal.
        let load = |path: Option<f64>| Load {
            blocks: 132 * 62 * 8,
            issued_per_block: 8.0 * 128.0,
            warps_per_scheduler: Some(16.0),
            resident_blocks: Some(8),
            critical_path_cycles: path,
            ..Default::default()
        };
        let p = predict(&H100, &load(Some(2000.0)));
        assert!(p.chain < p.issue && p.chain > 0.95 * p.issue, "{p:?}");
        assert!(
            p.seconds() > 1.1 * p.issue && p.seconds() == p.queued,
            "{p:?}"
        );
        // Queueing does not rename the bottleneck; without a path there is no queued time.
        assert_eq!(p.bound(), "issue-bound");
        let none = predict(&H100, &load(None));
        assert_eq!((none.queued, none.seconds()), (0.0, none.issue));
    }

    #[test]
    fn a_fractional_population_interpolates_and_none_takes_no_time() {
        let x = |n: f64| n / cycle_clocks(n, &[10.0], 50.0);
        assert!(close(x(7.5), (x(7.0) + x(8.0)) / 2.0));
        assert_eq!(cycle_clocks(0.0, &[10.0], 50.0), 0.0);
        assert_eq!(cycle_clocks(3.0, &[0.0], 0.0), 0.0);
    }
}
