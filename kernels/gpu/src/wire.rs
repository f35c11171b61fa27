//! Frames between the runner and its GPU worker: a JSON header, and float arrays kept apart.
//!
//! JSON suits the small part of a message (the kernel's source, the launch, diagnostics) but not a
//! full-scale input of 1.5 million floats, which it would print and parse digit by digit, nor an
//! output whose unwritten elements are NaN, which it cannot express. A [`Frame`] carries the
//! arrays as their raw bits instead. Layout, every length a little-endian u64: the header's length
//! and bytes, the number of arrays, then each array's length in floats and its floats'
//! little-endian bit patterns.

use serde::Serialize;
use std::io::{self, Read, Write};

/// One message: the JSON header and the arrays that travel beside it.
pub struct Frame {
    pub header: Vec<u8>,
    pub arrays: Vec<Vec<f32>>,
}

impl Frame {
    pub fn new(header: &impl Serialize, arrays: Vec<Vec<f32>>) -> Frame {
        Frame {
            header: serde_json::to_vec(header).expect("a message serializes"),
            arrays,
        }
    }
}

/// Writes `frame` and flushes.
pub fn write(w: &mut impl Write, frame: &Frame) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, w);
    w.write_all(&(frame.header.len() as u64).to_le_bytes())?;
    w.write_all(&frame.header)?;
    w.write_all(&(frame.arrays.len() as u64).to_le_bytes())?;
    for array in &frame.arrays {
        w.write_all(&(array.len() as u64).to_le_bytes())?;
        for chunk in array.chunks(1 << 14) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
            w.write_all(&bytes)?;
        }
    }
    w.flush()
}

/// Reads one frame; `UnexpectedEof` when the other side closed before a frame began or in one.
pub fn read(r: &mut impl Read) -> io::Result<Frame> {
    let header_len = length(r)?;
    let mut header = vec![0; header_len];
    r.read_exact(&mut header)?;
    let count = length(r)?;
    let arrays = (0..count)
        .map(|_| {
            let mut bytes = vec![0; length(r)? * 4];
            r.read_exact(&mut bytes)?;
            Ok(bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect())
        })
        .collect::<io::Result<_>>()?;
    Ok(Frame { header, arrays })
}

/// A length, refused past 4 GiB (a corrupt frame, not a reason to allocate without bound).
fn length(r: &mut impl Read) -> io::Result<usize> {
    let mut bytes = [0u8; 8];
    r.read_exact(&mut bytes)?;
    let n = u64::from_le_bytes(bytes);
    if n > 1 << 32 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame claims {n} elements"),
        ));
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_bit_for_bit_and_end_cleanly() {
        let arrays = vec![
            vec![1.0, f32::NAN, -0.0, f32::from_bits(0x7fc0_0001)],
            vec![],
        ];
        let mut bytes = vec![];
        write(&mut bytes, &Frame::new(&("hello", 3), arrays.clone())).unwrap();
        write(&mut bytes, &Frame::new(&"second", vec![])).unwrap();
        let mut r = bytes.as_slice();
        let first = read(&mut r).unwrap();
        assert_eq!(first.header, br#"["hello",3]"#);
        let bits = |a: &[Vec<f32>]| -> Vec<Vec<u32>> {
            a.iter()
                .map(|v| v.iter().map(|x| x.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&first.arrays), bits(&arrays));
        assert_eq!(read(&mut r).unwrap().header, br#""second""#);
        assert_eq!(
            read(&mut r).err().map(|e| e.kind()),
            Some(io::ErrorKind::UnexpectedEof)
        );
    }
}
