//! What the driver's `cuTensorMapEncodeTiled` documents it refuses, checked on the host before
//! any backend encodes a declared tensor map (`tensor_maps`), so that a map the encoder would
//! refuse is the same `bad_launch_shape`, naming the field, on the simulator and on the GPU.

use crate::job::{ELEM_BYTES, TensorMap};

/// What `cuTensorMapEncodeTiled` refuses in a map, naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncoderRefusal {
    #[error("has {0} dims; a tensor map has rank 1 to 5")]
    Rank(usize),
    #[error("box has {boxes} entries, but dims has {rank}: one box size per dimension")]
    BoxRank { boxes: usize, rank: usize },
    #[error(
        "strides has {strides} entries; a rank-{rank} map takes {} (bytes between indices of dimensions 1..; dimension 0 is contiguous)",
        rank - 1
    )]
    StrideRank { strides: usize, rank: usize },
    #[error("dims[{0}] = {1}: each dimension holds 1 to 2^32 elements")]
    Dim(usize, u64),
    #[error("box[{0}] = {1}: a box holds 1 to 256 elements in each dimension")]
    Box(usize, u32),
    #[error(
        "box[0] = {0} is {1} bytes; the box's inner dimension must be a multiple of 16 bytes (4 floats)"
    )]
    BoxRow(u32, u64),
    #[error(
        "box[0] = {0} is {1} bytes, more than the {2}-byte swizzle span: under a swizzle the box's inner dimension is at most its span"
    )]
    Swizzle(u32, u64, u32),
    #[error(
        "strides[{index}] (dimension {}) = {stride} bytes: a stride is a positive multiple of 16 bytes below 2^40 (without `strides {{..}}` they are dense: the product of the dims below, times 4 bytes)",
        index + 1
    )]
    Stride { index: usize, stride: u64 },
    #[error(
        "reaches byte {last} of its tensor, which has {bytes} bytes ({} floats): dims or strides are too large",
        bytes / ELEM_BYTES
    )]
    PastTheEnd { last: u64, bytes: u64 },
}

impl TensorMap {
    /// What `cuTensorMapEncodeTiled` documents it refuses, for a map over a buffer of `bytes`
    /// bytes (16-byte aligned, as every device allocation is), and a map that would reach past
    /// the buffer (where `bytes` is known); `Err` names the field.
    pub fn check(&self, bytes: Option<u64>) -> Result<(), EncoderRefusal> {
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return Err(EncoderRefusal::Rank(rank));
        }
        if self.boxes.len() != rank {
            return Err(EncoderRefusal::BoxRank {
                boxes: self.boxes.len(),
                rank,
            });
        }
        if self.strides.len() != rank - 1 {
            return Err(EncoderRefusal::StrideRank {
                strides: self.strides.len(),
                rank,
            });
        }
        for (i, &n) in self.dims.iter().enumerate() {
            if n == 0 || n > 1 << 32 {
                return Err(EncoderRefusal::Dim(i, n));
            }
        }
        for (i, &b) in self.boxes.iter().enumerate() {
            if b == 0 || b > 256 {
                return Err(EncoderRefusal::Box(i, b));
            }
        }
        let row = u64::from(self.boxes[0]) * ELEM_BYTES;
        if !row.is_multiple_of(16) {
            return Err(EncoderRefusal::BoxRow(self.boxes[0], row));
        }
        if self.swizzle != 0 && row > u64::from(self.swizzle) {
            return Err(EncoderRefusal::Swizzle(self.boxes[0], row, self.swizzle));
        }
        for (i, &s) in self.strides.iter().enumerate() {
            if s % 16 != 0 || s == 0 || s >= 1 << 40 {
                return Err(EncoderRefusal::Stride {
                    index: i,
                    stride: s,
                });
            }
        }
        let last = self.dims[1..]
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n - 1).saturating_mul(s))
            .fold((self.dims[0] - 1) * ELEM_BYTES, u64::saturating_add)
            .saturating_add(ELEM_BYTES);
        if let Some(bytes) = bytes.filter(|&b| last > b) {
            return Err(EncoderRefusal::PastTheEnd { last, bytes });
        }
        Ok(())
    }
}
