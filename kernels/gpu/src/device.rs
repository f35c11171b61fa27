//! The GPU backend on cudarc: detect a device, compile a CUBIN for its own arch, launch, read back.
//!
//! Nothing here may take the runner down. [`probe`] asks whether libcuda and a device exist without
//! letting cudarc panic. [`execute`] runs one job in *this* process and turns every CUDA error into
//! a diagnostic; the runner calls it only inside a worker child process ([`crate::worker`]), so that
//! an illegal address (which poisons the CUDA context) or an endless loop (which never returns)
//! ends the child, not the learner's session. Outputs are poisoned with NaN before each launch.
//! A worker serves many jobs: each module is loaded once per process and kept ([`MODULES`]).
#![allow(unsafe_code)] // cudarc's kernel launch is `unsafe fn`: each call says why it is sound.

use crate::buffers::{allocate, output_buffer, wipe};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg, sys,
};
use serde::{Deserialize, Serialize};
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job, RunOutput};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use toolchain::nvrtc::{self, Compiled, Source, Target};

/// The device the GPU backend would use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub major: i32,
    pub minor: i32,
    pub multiprocessors: i32,
}

impl Device {
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }
}

/// Whether libcuda can be loaded at all: a question for the dynamic loader only, with no CUDA
/// call, so it is cheap enough to ask before starting a worker.
pub fn libcuda_present() -> bool {
    // SAFETY: only asks the dynamic loader whether libcuda can be opened.
    unsafe { sys::is_culib_present() }
}

/// Whether this process's CUDA context still works: after an illegal address or a trap the
/// driver refuses every further call in the process ("sticky" errors), and only a new process
/// gets a working context.
pub fn healthy() -> bool {
    CudaContext::new(0).is_ok_and(|ctx| ctx.synchronize().is_ok())
}

/// Device 0, if libcuda loads and reports one. Never panics.
pub fn probe() -> Option<Device> {
    if !libcuda_present() {
        return None;
    }
    if CudaContext::device_count().ok()? < 1 {
        return None;
    }
    let ctx = CudaContext::new(0).ok()?;
    let (major, minor) = ctx.compute_capability().ok()?;
    let multiprocessors = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .ok()?;
    Some(Device {
        name: ctx.name().ok()?,
        major,
        minor,
        multiprocessors,
    })
}

/// Explains a CUDA error to a learner.
pub fn launch_error(e: &DriverError) -> Diagnostic {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{e:?}"));
    let why = match e.0 {
        sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => {
            "the kernel read or wrote memory outside every buffer (a missing guard, or an index past the end)"
        }
        sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
            "the launch shape or the shared memory size is not valid for this device"
        }
        sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => {
            "the block needs more registers than the device has for it: use fewer threads per block"
        }
        sys::CUresult::CUDA_ERROR_MISALIGNED_ADDRESS => {
            "a vector load or store used an address that is not a multiple of its width"
        }
        _ => "the CUDA driver refused or aborted the launch",
    };
    Diagnostic::new(
        Kind::LaunchError,
        format!("{why} ({name}); run with --backend sim to see which thread and line"),
    )
}

/// A loaded kernel with its device buffers, ready to launch (and relaunch, for benchmarks).
pub struct Loaded {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    function: cudarc::driver::CudaFunction,
    module: Arc<CudaModule>, // whose globals take the declared tensor maps (`maps`)
    inputs: Vec<Option<CudaSlice<f32>>>,
    config: LaunchConfig,
    job: Job,
}

/// Compiles `source` for the device, loads it, fills constants and inputs, and poisons outputs.
pub fn load(source: &Source<'_>, job: &Job) -> Result<Loaded, Diagnostic> {
    let driver = |e: DriverError| launch_error(&e);
    let ctx = CudaContext::new(0).map_err(driver)?;
    let (major, minor) = ctx.compute_capability().map_err(driver)?;
    let compile = crate::trace::phase("compile and load the module");
    let module = module(&ctx, source, major, minor)?;
    drop(compile);
    let function = module.load_function(&job.kernel).map_err(|_| {
        Diagnostic::new(
            Kind::KernelNotFound,
            format!("the CUBIN has no entry `{}`", job.kernel),
        )
    })?;
    let stream = ctx.default_stream();
    for upload in &job.constants {
        let mut symbol = module.get_global(&upload.symbol, &stream).map_err(|_| {
            Diagnostic::new(
                Kind::SignatureMismatch,
                format!(
                    "the puzzle fills `__constant__ float {}[]`, but the file does not declare it",
                    upload.symbol
                ),
            )
            .at_line(source.file, 1)
        })?;
        let room = symbol.len() / 4;
        if room < upload.data.len() {
            return Err(Diagnostic::new(
                Kind::SignatureMismatch,
                format!(
                    "`{}` holds {room} floats, but the case needs {}",
                    upload.symbol,
                    upload.data.len()
                ),
            )
            .at_line(source.file, 1));
        }
        // SAFETY: the symbol holds at least `data.len()` floats (checked above), and f32 has no
        // invalid bit patterns.
        let mut floats =
            unsafe { symbol.transmute_mut::<f32>(upload.data.len()) }.expect("size checked");
        stream
            .memcpy_htod(&upload.data, &mut floats)
            .map_err(driver)?;
    }
    if job.launch.shared_bytes > 48 * 1024 {
        function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                job.launch.shared_bytes as i32,
            )
            .map_err(driver)?;
    }
    let upload = crate::trace::phase("upload inputs, poison outputs");
    let inputs = allocate(&stream, job).map_err(driver)?;
    crate::maps::write(&module, &stream, &job.tensor_maps, &inputs)
        .map_err(|e| e.diagnostic(source.file))?;
    if crate::trace::on() {
        stream.synchronize().map_err(driver)?; // so that the phase holds the copies
    }
    drop(upload);
    let l = job.launch;
    let config = LaunchConfig {
        grid_dim: (l.grid[0], l.grid[1], l.grid[2]),
        block_dim: (l.block[0], l.block[1], l.block[2]),
        shared_mem_bytes: l.shared_bytes,
    };
    Ok(Loaded {
        ctx,
        stream,
        function,
        module,
        inputs,
        config,
        job: without_data(job),
    })
}

thread_local! {
    /// Modules loaded in this process, by source, macros and arch: a warm worker loads each once.
    static MODULES: std::cell::RefCell<HashMap<u64, Arc<CudaModule>>> = Default::default();
}

/// Modules kept loaded at most; past it the memo starts again (a `grade` of many submissions).
const MODULES_KEPT: usize = 64;

/// The module of `source` for `sm_{major}{minor}`, compiled (NVRTC memoizes) and loaded once.
fn module(
    ctx: &Arc<CudaContext>,
    source: &Source<'_>,
    major: i32,
    minor: i32,
) -> Result<Arc<CudaModule>, Diagnostic> {
    let mut h = std::hash::DefaultHasher::new();
    (source.code, source.file, source.macros, major, minor).hash(&mut h);
    let key = h.finish();
    if let Some(m) = MODULES.with_borrow(|m| m.get(&key).cloned()) {
        return Ok(m);
    }
    let Compiled::Cubin(cubin) = nvrtc::compile(source, &Target::Cubin { major, minor })? else {
        unreachable!("a CUBIN target gives a CUBIN");
    };
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
        .map_err(|e| launch_error(&e))?;
    MODULES.with_borrow_mut(|m| {
        if m.len() >= MODULES_KEPT {
            m.clear();
        }
        m.insert(key, module.clone());
    });
    Ok(module)
}

/// `job` with its inputs' data left out (a full case's are hundreds of megabytes): a loaded
/// kernel keeps its inputs on the device.
fn without_data(job: &Job) -> Job {
    let args = job.args.iter().map(|a| match a {
        Arg::Input { name, .. } => Arg::Input {
            name: name.clone(),
            data: vec![],
        },
        other => other.clone(),
    });
    Job {
        kernel: job.kernel.clone(),
        launch: job.launch,
        args: args.collect(),
        constants: vec![],
        tensor_maps: job.tensor_maps.clone(),
        budget: job.budget,
        work: job.work,
    }
}

impl Loaded {
    /// Launches once with the buffers given (defaults to the job's own), timing it with events,
    /// and waits for it. Returns milliseconds.
    pub fn launch_with(
        &self,
        buffers: Option<&[Option<CudaSlice<f32>>]>,
    ) -> Result<f32, DriverError> {
        let (start, end) = self.enqueue(buffers.unwrap_or(&self.inputs))?;
        end.synchronize()?;
        start.elapsed_ms(&end)
    }

    /// Queues one launch between two timing events, without waiting: launches queued back to
    /// back keep the GPU busy, so the events time the kernel and not the host's submission.
    pub fn enqueue(
        &self,
        buffers: &[Option<CudaSlice<f32>>],
    ) -> Result<(CudaEvent, CudaEvent), DriverError> {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, end) = (self.ctx.new_event(timing)?, self.ctx.new_event(timing)?);
        let mut builder = self.stream.launch_builder(&self.function);
        for (arg, buf) in self.job.args.iter().zip(buffers) {
            match (arg, buf) {
                (Arg::I32 { value, .. }, _) => builder.arg(value),
                (_, Some(buf)) => builder.arg(buf),
                (_, None) => unreachable!("every pointer argument has a buffer"),
            };
        }
        crate::maps::before_launch(&self.module, &self.stream, &self.job.tensor_maps, buffers)?;
        start.record(&self.stream)?;
        // SAFETY: the entry's parameter list was checked against the puzzle's (entry::check) before
        // any launch: one device pointer per buffer argument and one i32 per integer, in order.
        // Out-of-bounds accesses by the kernel are caught by the driver and reported as errors.
        unsafe { builder.launch(self.config) }?;
        end.record(&self.stream)?;
        Ok((start, end))
    }

    /// A new set of device buffers for the same job: inputs copied again, outputs poisoned.
    pub fn fresh_buffers(&self) -> Result<Vec<Option<CudaSlice<f32>>>, DriverError> {
        // The inputs from the device's first copy (the job kept here has no data).
        (self.job.args.iter().zip(&self.inputs))
            .map(|(arg, first)| match (arg, first) {
                (Arg::Input { .. }, Some(first)) => self.stream.clone_dtod(first).map(Some),
                (Arg::I32 { .. }, _) => Ok(None),
                (out, _) => output_buffer(&self.stream, out).map(Some),
            })
            .collect()
    }

    /// The job's own device buffers (inputs and outputs, `None` for integers), in argument order.
    pub fn buffers(&self) -> &[Option<CudaSlice<f32>>] {
        &self.inputs
    }

    /// Copies the output buffers back, in parameter order.
    pub fn outputs(&self) -> Result<Vec<Vec<f32>>, DriverError> {
        self.job
            .args
            .iter()
            .zip(&self.inputs)
            .filter_map(|(arg, buf)| match (arg, buf) {
                (arg, Some(buf)) => Some((arg.output_len()?, buf)),
                _ => None,
            })
            .map(|(len, buf)| {
                let mut host = crate::scratch::take(buf.len());
                self.stream.memcpy_dtoh(buf, &mut host)?;
                self.stream.synchronize()?;
                host.truncate(len);
                Ok(host)
            })
            .collect()
    }
}

/// Runs `job` once in this process. Call it only inside a worker process (see module docs). A
/// trap or a failed assert is a `trap` diagnostic (see `gpu_faults`); inputs the kernel changed
/// are `wrote_input`.
pub fn execute(source: &Source<'_>, job: &Job) -> RunOutput {
    let loaded = match load(source, job) {
        Ok(loaded) => loaded,
        Err(d) => return RunOutput::failed(d),
    };
    let launch = crate::trace::phase("launch");
    let ran = loaded.launch_with(None).and_then(|ms| {
        drop(launch);
        let _back = crate::trace::phase("read outputs and inputs back");
        Ok((ms, loaded.outputs()?, loaded.inputs_after()?))
    });
    match ran {
        Ok((ms, outputs, inputs)) => {
            let _compare = crate::trace::phase("compare inputs bit for bit");
            let changed = crate::gpu_faults::changed_inputs(job, &inputs);
            inputs.into_iter().flatten().for_each(crate::scratch::give);
            RunOutput {
                outputs,
                seconds: f64::from(ms) / 1e3,
                diagnostics: changed.into_iter().collect(),
                ..RunOutput::default()
            }
        }
        Err(e) => RunOutput::failed(
            crate::gpu_faults::trap(&e, source.code).unwrap_or_else(|| launch_error(&e)),
        ),
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let _wipe = crate::trace::phase("zero the buffers before they are freed");
        wipe(&self.stream, &mut self.inputs);
    }
}

impl Loaded {
    /// The input buffers read back (`None` for the other arguments), in argument order.
    fn inputs_after(&self) -> Result<Vec<Option<Vec<f32>>>, DriverError> {
        self.job
            .args
            .iter()
            .zip(&self.inputs)
            .map(|(arg, buf)| match (arg, buf) {
                (Arg::Input { .. }, Some(buf)) => {
                    let mut host = crate::scratch::take(buf.len());
                    self.stream.memcpy_dtoh(buf, &mut host)?;
                    self.stream.synchronize()?;
                    Ok(Some(host))
                }
                _ => Ok(None),
            })
            .collect()
    }
}
