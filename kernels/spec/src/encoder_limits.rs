//! What the driver's `cuTensorMapEncodeTiled` documents it refuses, checked on the host before
//! any backend encodes a declared tensor map (`tensor_maps`), so that a map the encoder would
//! refuse is the same `bad_launch_shape`, naming the field, on the simulator and on the GPU.

use crate::job::TensorMap;
use crate::tensor_maps::ELEM_BYTES;

impl TensorMap {
    /// What `cuTensorMapEncodeTiled` documents it refuses, for a map over a buffer of `bytes`
    /// bytes (16-byte aligned, as every device allocation is), and a map that would reach past
    /// the buffer (where `bytes` is known); `Err` names the field.
    pub fn check(&self, bytes: Option<u64>) -> Result<(), String> {
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return Err(format!("has {rank} dims; a tensor map has rank 1 to 5"));
        }
        if self.boxes.len() != rank {
            return Err(format!(
                "box has {} entries, but dims has {rank}: one box size per dimension",
                self.boxes.len()
            ));
        }
        if self.strides.len() != rank - 1 {
            return Err(format!(
                "strides has {} entries; a rank-{rank} map takes {} (bytes between indices of dimensions 1..; dimension 0 is contiguous)",
                self.strides.len(),
                rank - 1
            ));
        }
        for (i, &n) in self.dims.iter().enumerate() {
            if n == 0 || n > 1 << 32 {
                return Err(format!(
                    "dims[{i}] = {n}: each dimension holds 1 to 2^32 elements"
                ));
            }
        }
        for (i, &b) in self.boxes.iter().enumerate() {
            if b == 0 || b > 256 {
                return Err(format!(
                    "box[{i}] = {b}: a box holds 1 to 256 elements in each dimension"
                ));
            }
        }
        let row = u64::from(self.boxes[0]) * ELEM_BYTES;
        if !row.is_multiple_of(16) {
            return Err(format!(
                "box[0] = {} is {row} bytes; the box's inner dimension must be a multiple of 16 bytes (4 floats)",
                self.boxes[0]
            ));
        }
        if self.swizzle != 0 && row > u64::from(self.swizzle) {
            return Err(format!(
                "box[0] = {} is {row} bytes, more than the {}-byte swizzle span: under a swizzle the box's inner dimension is at most its span",
                self.boxes[0], self.swizzle
            ));
        }
        for (i, &s) in self.strides.iter().enumerate() {
            if s % 16 != 0 || s == 0 || s >= 1 << 40 {
                return Err(format!(
                    "strides[{i}] (dimension {}) = {s} bytes: a stride is a positive multiple of 16 bytes below 2^40 (without `strides {{..}}` they are dense: the product of the dims below, times 4 bytes)",
                    i + 1
                ));
            }
        }
        let last = self.dims[1..]
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n - 1).saturating_mul(s))
            .fold((self.dims[0] - 1) * ELEM_BYTES, u64::saturating_add)
            .saturating_add(ELEM_BYTES);
        if let Some(bytes) = bytes.filter(|&b| last > b) {
            return Err(format!(
                "reaches byte {last} of its tensor, which has {bytes} bytes ({} floats): dims or strides are too large",
                bytes / ELEM_BYTES
            ));
        }
        Ok(())
    }
}
