//! Timing on the GPU: a job launched many times with device events, and the device's own limits.
//!
//! [`time_job`] warms up, then times each launch with CUDA events, rotating among several copies
//! of the input buffers so that the L2 cache cannot hold them all and flatter the result. The timed
//! launches are queued back to back, so no sample includes the host's submission of its launch.
//! [`measure_peaks`] measures what the device can do: the FP32 FMA rate (independent FMA chains in
//! every thread, a grid that fills every SM) and the device-to-device copy bandwidth (bytes read
//! plus bytes written). Like [`crate::execute`], these run only inside a worker process.

use crate::launch_error;
use serde::{Deserialize, Serialize};
use spec::diag::Diagnostic;
use spec::job::{Arg, Job, Launch};
use toolchain::nvrtc::Source;

mod wgmma;

/// How to time a job.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub warmup: usize,
    pub runs: usize,
    /// Bytes of input copies to rotate through (more than the L2 cache holds).
    pub rotate_bytes: usize,
}

/// Per-launch times in milliseconds, in the order they ran.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Timing {
    pub times_ms: Vec<f32>,
    pub copies: usize,
}

/// Times `job` per `plan`, after checking nothing: the caller checks correctness first.
pub fn time_job(source: &Source<'_>, job: &Job, plan: Plan) -> Result<Timing, Diagnostic> {
    let loaded = crate::load(source, job)?;
    let bytes: usize = job
        .args
        .iter()
        .map(|a| match a {
            Arg::Input { data, .. } => data.len() * 4,
            out => out.output_len().unwrap_or(0) * 4,
        })
        .sum();
    let copies = plan.rotate_bytes.div_ceil(bytes.max(1)).clamp(1, 64);
    let mut sets = vec![loaded.buffers().to_vec()];
    for _ in 1..copies {
        sets.push(loaded.fresh_buffers().map_err(|e| launch_error(&e))?);
    }
    let launch_error = |e| launch_error(&e);
    for n in 0..plan.warmup {
        loaded
            .launch_with(Some(&sets[n % copies]))
            .map_err(launch_error)?;
    }
    // The timed runs are queued back to back and waited for once: each pair of events then times
    // one kernel, not the host's submission of it (which an idle GPU would otherwise wait for).
    let events = (0..plan.runs)
        .map(|n| loaded.enqueue(&sets[n % copies]))
        .collect::<Result<Vec<_>, _>>()
        .map_err(launch_error)?;
    loaded.stream.synchronize().map_err(launch_error)?;
    let times_ms = events
        .iter()
        .map(|(start, end)| start.elapsed_ms(end))
        .collect::<Result<Vec<_>, _>>()
        .map_err(launch_error)?;
    for set in &mut sets {
        crate::wipe(&loaded.stream, set);
    }
    Ok(Timing { times_ms, copies })
}

/// What the device can do, measured.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Peaks {
    /// FP32 FMA rate, counting an FMA as two floating-point operations.
    pub fma_tflops: f64,
    /// Device-to-device copy, bytes read plus bytes written.
    pub copy_gbps: f64,
    /// The tensor cores' tf32 rate through `mma.sync` m16n8k8 (2 * 16 * 8 * 8 operations each);
    /// `None` on a GPU without tf32 tensor cores (before compute capability 8.0).
    #[serde(default)]
    pub tf32_tflops: Option<f64>,
    /// The tf32 rate through `wgmma` m64n256k8 (`bench::wgmma`); `None` off sm_90.
    #[serde(default)]
    pub wgmma_tf32_tflops: Option<f64>,
}

impl Peaks {
    /// The fastest tf32 rate measured, the tensor floors' rate: `wgmma`'s where the device has
    /// it, else `mma.sync`'s.
    pub fn tensor_tflops(&self) -> Option<f64> {
        self.tf32_tflops
            .into_iter()
            .chain(self.wgmma_tf32_tflops)
            .reduce(f64::max)
    }
}

/// Where the peaks measured on `device` are cached.
pub fn peaks_path(device: &crate::Device) -> std::path::PathBuf {
    let name: String = device
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    toolchain::nvrtc::cache_dir().join(format!("peaks-v{PEAKS_VERSION}-{name}.json"))
}

/// The peaks `runner bench` measured on `device`, if it has.
pub fn cached_peaks(device: &crate::Device) -> Option<Peaks> {
    let text = std::fs::read_to_string(peaks_path(device)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Version of the measuring kernels: cached peaks measured by an older version are measured again.
/// 2: 512 FMAs per trip of the FMA loop instead of 32, whose loop instructions (3%) read a peak 3% low.
/// 3: the tf32 tensor-core rate added. 4: the `wgmma` tf32 rate added on sm_90.
pub const PEAKS_VERSION: u32 = 4;

/// FMAs per chain in one trip of `fma_peak`'s loop: 8 chains × 64 = 512 FMAs per trip, so the
/// loop's own four instructions cost under 1% of its issue slots.
const STEPS: u32 = 64;

/// Floating-point operations of one `fma_peak` launch (an FMA counts two).
fn peak_flops(iters: i32, threads: u32) -> f64 {
    2.0 * 8.0 * f64::from(STEPS) * f64::from(iters) * f64::from(threads)
}

const PEAK_SOURCE: &str = r#"
extern "C" __global__ void fma_peak(float* out, int iters)
{
    float a[8];
    for (int k = 0; k < 8; k++) a[k] = threadIdx.x + k;
    const float b = 0.999f, c = 0.001f;
    for (int i = 0; i < iters; i++) {
        // STEPS FMAs per chain per trip, 8 independent chains (see STEPS in bench.rs).
        #pragma unroll
        for (int u = 0; u < STEPS; u++) {
            #pragma unroll
            for (int k = 0; k < 8; k++) a[k] = fmaf(a[k], b, c);
        }
    }
    float s = 0.0f;
    for (int k = 0; k < 8; k++) s += a[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void copy(const float4* in, float4* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = in[i];
    }
}
"#;

/// Independent accumulator chains per warp in `mma_peak`, and mma's per chain per trip.
const CHAINS: u32 = 8;
const MMA_STEPS: u32 = 16;

/// Chains of `mma.sync` m16n8k8 tf32 on operands of 1.0: each adds 8 to every accumulator
/// element, so a thread's sum is exact (CHAINS * 4 * 8 * trips) and shows how many ran.
const MMA_PEAK_SOURCE: &str = r#"
extern "C" __global__ void mma_peak(float* out, int iters)
{
    const unsigned one = 0x3f800000u;
    float acc[CHAINS][4];
    for (int c = 0; c < CHAINS; c++)
        for (int q = 0; q < 4; q++) acc[c][q] = 0.0f;
    for (int i = 0; i < iters; i++) {
        #pragma unroll
        for (int u = 0; u < MMA_STEPS; u++) {
            #pragma unroll
            for (int c = 0; c < CHAINS; c++) {
                asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                             "{%4,%4,%4,%4}, {%4,%4}, {%0,%1,%2,%3};"
                             : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                             : "r"(one));
            }
        }
    }
    float s = 0.0f;
    for (int c = 0; c < CHAINS; c++)
        for (int q = 0; q < 4; q++) s += acc[c][q];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"#;

fn mma_macros() -> [(String, String); 2] {
    [
        ("CHAINS".to_string(), CHAINS.to_string()),
        ("MMA_STEPS".to_string(), MMA_STEPS.to_string()),
    ]
}

fn mma_source(macros: &[(String, String)]) -> Source<'_> {
    Source {
        code: MMA_PEAK_SOURCE,
        file: "mma_peak.cu",
        macros,
    }
}

/// Floating-point operations of one `mma_peak` launch: 2 * 16 * 8 * 8 per mma per warp.
fn mma_flops(iters: i32, threads: u32) -> f64 {
    2048.0 * f64::from(CHAINS * MMA_STEPS) * f64::from(iters) * f64::from(threads / 32)
}

fn median(times: &mut [f32]) -> f64 {
    times.sort_by(f32::total_cmp);
    f64::from(times[times.len() / 2])
}

fn peak_macros() -> [(String, String); 1] {
    [("STEPS".to_string(), STEPS.to_string())]
}

fn peak_source(macros: &[(String, String)]) -> Source<'_> {
    Source {
        code: PEAK_SOURCE,
        file: "peaks.cu",
        macros,
    }
}

/// `fma_peak` over `blocks` of `threads`, `iters` trips each.
fn fma_job(blocks: u32, threads: u32, iters: i32) -> Job {
    peak_job("fma_peak", blocks, threads, iters)
}

/// One of the peak kernels (`out`, `iters`) over `blocks` of `threads`.
fn peak_job(kernel: &str, blocks: u32, threads: u32, iters: i32) -> Job {
    Job {
        kernel: kernel.into(),
        launch: Launch::linear(blocks, threads),
        args: vec![
            Arg::Output {
                name: "out".into(),
                len: (threads * blocks) as usize,
            },
            Arg::I32 {
                name: "iters".into(),
                value: iters,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 0,
    }
}

/// Measures the device's FMA rate, copy bandwidth and, on compute capability 8.0 and later,
/// tf32 tensor-core rate, through `wgmma` too on 9.0 (`hopper`; about a second of GPU time).
pub fn measure_peaks(sms: u32, tensor_cores: bool, hopper: bool) -> Result<Peaks, Diagnostic> {
    let macros = peak_macros();
    let source = peak_source(&macros);
    let plan = Plan {
        warmup: 3,
        runs: 11,
        rotate_bytes: 0,
    };
    let (threads, blocks, iters) = (256u32, sms * 8, 256);
    let fma = fma_job(blocks, threads, iters);
    let mut t = time_job(&source, &fma, plan)?.times_ms;
    let flops = peak_flops(iters, threads * blocks);
    let fma_tflops = flops / (median(&mut t) * 1e-3) / 1e12;
    let n4 = 64 << 20; // float4s: 1 GiB read and 1 GiB written
    let copy = Job {
        kernel: "copy".into(),
        launch: Launch::linear(sms * 8, 512),
        args: vec![
            Arg::Input {
                name: "in".into(),
                data: vec![1.0; n4 * 4],
            },
            Arg::Output {
                name: "out".into(),
                len: n4 * 4,
            },
            Arg::I32 {
                name: "n".into(),
                value: n4 as i32,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 0,
    };
    let mut t = time_job(&source, &copy, plan)?.times_ms;
    let copy_gbps = 2.0 * (n4 * 16) as f64 / (median(&mut t) * 1e-3) / 1e9;
    let tf32_tflops = if tensor_cores {
        let macros = mma_macros();
        let (threads, blocks, iters) = (256u32, sms * 4, 64);
        let job = peak_job("mma_peak", blocks, threads, iters);
        let mut t = time_job(&mma_source(&macros), &job, plan)?.times_ms;
        Some(mma_flops(iters, threads * blocks) / (median(&mut t) * 1e-3) / 1e12)
    } else {
        None
    };
    let wgmma_tf32_tflops = if hopper {
        let code = wgmma::source();
        let (blocks, iters) = (sms * 2, 64);
        let job = peak_job("wgmma_peak", blocks, wgmma::THREADS, iters);
        let mut t = time_job(&wgmma::compiled(&code), &job, plan)?.times_ms;
        let flops = wgmma::flops(iters, wgmma::THREADS * blocks);
        Some(flops / (median(&mut t) * 1e-3) / 1e12)
    } else {
        None
    };
    Ok(Peaks {
        fma_tflops,
        copy_gbps,
        tf32_tflops,
        wgmma_tf32_tflops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim;
    use toolchain::nvrtc::{self, Compiled, Target};

    /// The FLOP count that turns the peak kernel's time into TFLOP/s must count the FMAs it runs:
    /// the simulator runs one trip and every thread's sum must be STEPS FMAs per chain, no more.
    #[test]
    fn the_peak_kernel_runs_the_fmas_its_flop_count_claims() {
        let location = nvrtc::locate()
            .or_else(|| nvrtc::install().ok().map(nvrtc::Location::Path))
            .expect("NVRTC found or installed");
        nvrtc::load(&location).expect("NVRTC loads");
        let macros = peak_macros();
        let ptx = match nvrtc::compile(&peak_source(&macros), &Target::Ptx).expect("compiles") {
            Compiled::Ptx(p) => p,
            Compiled::Cubin(_) => unreachable!("asked for PTX"),
        };
        let (threads, iters) = (32, 2);
        let out = sim::run(&ptx, &fma_job(1, threads, iters));
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        for (t, got) in out.outputs[0].iter().enumerate() {
            let want: f32 = (0..8)
                .map(|k| {
                    let mut a = (t + k) as f32;
                    for _ in 0..iters as u32 * STEPS {
                        a = a.mul_add(0.999, 0.001);
                    }
                    a
                })
                .fold(0.0, |s, a| s + a);
            assert_eq!(got.to_bits(), want.to_bits(), "thread {t}");
        }
        assert_eq!(peak_flops(iters, threads), 2.0 * 8.0 * 64.0 * 2.0 * 32.0);
    }

    /// Likewise for the tensor cores: each thread's sum counts the mma's its warp ran.
    #[test]
    fn the_mma_peak_kernel_runs_the_mmas_its_flop_count_claims() {
        let location = nvrtc::locate()
            .or_else(|| nvrtc::install().ok().map(nvrtc::Location::Path))
            .expect("NVRTC found or installed");
        nvrtc::load(&location).expect("NVRTC loads");
        let macros = mma_macros();
        let ptx = match nvrtc::compile(&mma_source(&macros), &Target::Ptx).expect("compiles") {
            Compiled::Ptx(p) => p,
            Compiled::Cubin(_) => unreachable!("asked for PTX"),
        };
        let (threads, iters) = (64, 3);
        let out = sim::run(&ptx, &peak_job("mma_peak", 1, threads, iters));
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let mmas = CHAINS * MMA_STEPS * iters as u32;
        for (t, got) in out.outputs[0].iter().enumerate() {
            assert_eq!(*got, (4 * 8 * mmas) as f32, "thread {t}");
        }
        assert_eq!(
            mma_flops(iters, threads),
            2.0 * 2.0 * 16.0 * 8.0 * 8.0 * mmas as f64
        );
    }
}
