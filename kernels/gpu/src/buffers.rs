//! A launch's device buffers: inputs copied in, outputs poisoned on the device, and every one
//! zeroed before it is freed.
//!
//! A worker serves one learner after another in one CUDA context. Its outputs are poisoned with
//! `cuMemsetD32` (and `cuMemsetD2D32` for a pitched output's image) rather than built on the host
//! and copied (a full case's output has 67 million elements), and [`wipe`] zeroes a launch's
//! buffers, inputs and outputs, before they are freed, so that no later kernel finds an earlier
//! one's output in memory handed on from them.
#![allow(unsafe_code)] // cudarc's allocation and the driver's memsets are `unsafe fn`s.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DriverError, sys};
use spec::job::{Arg, Job};
use std::sync::Arc;

/// An output buffer as the launch finds it (see [`Arg::output_init`]), poisoned on the device:
/// no host array is built for it (a full case's output has 67 million elements).
pub(crate) fn output_buffer(
    stream: &Arc<CudaStream>,
    out: &Arg,
) -> Result<CudaSlice<f32>, DriverError> {
    let len = out.output_len().expect("an output buffer").max(1);
    // SAFETY: every element is set by the memsets below, queued before anything else can use it.
    let mut buf = unsafe { stream.alloc::<f32>(len) }?;
    let cu = stream.cu_stream();
    let (ptr, _record) = buf.device_ptr_mut(stream);
    let nan = f32::NAN.to_bits();
    // SAFETY: `ptr` holds `len` floats; a pitched output's rows x stride floats are its `len`.
    unsafe {
        match *out {
            Arg::Pitched {
                rows, cols, stride, ..
            } if stride > cols && rows * cols > 0 => {
                let sentinel = spec::job::PADDING_SENTINEL.to_bits();
                sys::cuMemsetD32Async(ptr, sentinel, len, cu).result()?;
                sys::cuMemsetD2D32Async(ptr, stride * 4, nan, cols, rows, cu).result()?;
            }
            _ => sys::cuMemsetD32Async(ptr, nan, len, cu).result()?,
        }
    }
    drop(_record);
    Ok(buf)
}

/// One device buffer per pointer argument (inputs copied, outputs poisoned), `None` for
/// integers.
pub(crate) fn allocate(
    stream: &Arc<CudaStream>,
    job: &Job,
) -> Result<Vec<Option<CudaSlice<f32>>>, DriverError> {
    job.args
        .iter()
        .map(|arg| match arg {
            Arg::Input { data, .. } => stream.clone_htod(data).map(Some),
            Arg::I32 { .. } => Ok(None),
            out => output_buffer(stream, out).map(Some),
        })
        .collect()
}

/// Zeroes `buffers` on `stream`, queued before they are freed: the worker serves one learner
/// after another in one CUDA context, where a freed buffer's memory is handed to the next
/// allocation as it was left, and a later kernel's stray pointer could read what an earlier one
/// wrote (a correct output is the expected one).
pub fn wipe(stream: &Arc<CudaStream>, buffers: &mut [Option<CudaSlice<f32>>]) {
    for buf in buffers.iter_mut().flatten() {
        let _ = stream.memset_zeros(buf);
    }
}
