//! The tensor maps a kernel declares (`spec::tensor_maps`), encoded by the driver and written
//! into the kernel's globals before each launch.
//!
//! Each map is encoded with `cuTensorMapEncodeTiled` over the device address of its argument's
//! buffer (f32 elements, no interleave, no L2 promotion, zeros outside the tensor, element
//! strides 1) and its 128 bytes are copied into the map's `__device__` global on the launch's
//! stream, so the copy lands after the launches before it and before the launch after it: a
//! timing that rotates through copies of the buffers gets maps of each copy. The kernel
//! acquires the map with `fence.proxy.tensormap::generic.acquire.sys` before its first copy,
//! as the CUDA programming guide asks of a map in global memory that a host copy wrote. The
//! declaration was checked against the encoder's documented limits when the case was resolved;
//! should the driver still refuse a map, that is the same `bad_launch_shape`. A map declared for
//! other cases only (its `when` fails) has its global zeroed: no stale map of an earlier case.

#![allow(unsafe_code)] // cudarc's cuTensorMapEncodeTiled is `unsafe fn`: the call says why it is sound.

use cudarc::driver::{CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, sys};
use spec::diag::{Diagnostic, Kind};
use spec::tensor_maps::TensorMap;
use std::sync::Arc;

/// Why the maps could not be written.
pub enum MapError {
    /// The declaration, which the driver or the module refuses (a `bad_launch_shape`).
    Refused(Refusal),
    Driver(DriverError),
}

/// What the driver or the module refuses in a declared map.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "`tensor_maps`: the driver's cuTensorMapEncodeTiled refused map `{}` ({result:?}): dims {:?}, strides {:?} bytes, box {:?}, swizzle {}",
        map.symbol, map.dims, map.strides, map.boxes, map.swizzle
    )]
    Encoder {
        map: Box<TensorMap>,
        result: sys::CUresult,
    },
    #[error("`tensor_maps`: map `{symbol}` covers argument {arg}, which is not a buffer")]
    NotABuffer { symbol: String, arg: usize },
    #[error(
        "`tensor_maps` declares map `{0}`, but the module has no global `{0}`: declare `__device__ __align__(64) unsigned char {0}[128];`"
    )]
    NoGlobal(String),
    #[error(
        "`{symbol}` is {len} bytes at an address {} 64-byte aligned; a tensor map takes 128 bytes, 64-byte aligned (`__align__(64)`)",
        if *aligned { "that is" } else { "not" }
    )]
    Global {
        symbol: String,
        len: usize,
        aligned: bool,
    },
}

impl MapError {
    /// As a diagnostic at line 1 of `file` (where the declarations are read from).
    pub fn diagnostic(self, file: &str) -> Diagnostic {
        match self {
            MapError::Refused(why) => {
                Diagnostic::new(Kind::BadLaunchShape, why.to_string()).at_line(file, 1)
            }
            MapError::Driver(e) => crate::launch_error(&e),
        }
    }
}

/// `map` encoded by the driver over the buffer at `base`.
fn encode(map: &TensorMap, base: sys::CUdeviceptr) -> Result<sys::CUtensorMap, Refusal> {
    let rank = map.dims.len();
    let ones = [1u32; 5];
    let mut out = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array holds `rank` entries (`strides` one fewer), as `TensorMap::check`
    // made sure when the case was resolved, and `out` is a writable CUtensorMap.
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut out,
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            rank as u32,
            base as *mut std::ffi::c_void,
            map.dims.as_ptr(),
            map.strides.as_ptr(),
            map.boxes.as_ptr(),
            ones.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            match map.swizzle {
                32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
                64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
                128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                _ => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            },
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    match result {
        sys::CUresult::CUDA_SUCCESS => Ok(out),
        result => Err(Refusal::Encoder {
            map: Box::new(map.clone()),
            result,
        }),
    }
}

/// Encodes `maps` over `buffers` (one per argument, `None` for integers) and copies each into
/// its global of `module`, on `stream`.
pub fn write(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    maps: &[TensorMap],
    buffers: &[Option<CudaSlice<f32>>],
) -> Result<(), MapError> {
    for map in maps {
        let bytes: Vec<u8> = match buffers.get(map.arg) {
            // Not made for this case (its `when` fails): zeros, not another case's map.
            _ if map.dims.is_empty() => vec![0; spec::tensor_maps::MAP_BYTES as usize],
            Some(Some(buf)) => {
                let encoded = encode(map, buf.device_ptr(stream).0).map_err(MapError::Refused)?;
                encoded
                    .opaque
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect()
            }
            _ => {
                return Err(MapError::Refused(Refusal::NotABuffer {
                    symbol: map.symbol.clone(),
                    arg: map.arg,
                }));
            }
        };
        let mut global = module
            .get_global(&map.symbol, stream)
            .map_err(|_| MapError::Refused(Refusal::NoGlobal(map.symbol.clone())))?;
        let at = global.device_ptr(stream).0;
        if global.len() < bytes.len() || at % 64 != 0 {
            return Err(MapError::Refused(Refusal::Global {
                symbol: map.symbol.clone(),
                len: global.len(),
                aligned: at % 64 == 0,
            }));
        }
        let mut head = global.slice_mut(..bytes.len());
        stream
            .memcpy_htod(&bytes, &mut head)
            .map_err(MapError::Driver)?;
    }
    Ok(())
}

/// [`write`] before a launch on `buffers`, once they were written at the load (so a refusal,
/// which the load reported, cannot come here but as the driver's invalid value).
pub fn before_launch(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    maps: &[TensorMap],
    buffers: &[Option<CudaSlice<f32>>],
) -> Result<(), DriverError> {
    write(module, stream, maps, buffers).map_err(|e| match e {
        MapError::Driver(e) => e,
        MapError::Refused(_) => DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
    })
}
