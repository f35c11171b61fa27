//! What a compiled CUBIN says about its kernels that the PTX does not: the registers a thread
//! of each kernel takes, as `ptxas` allotted them (which decide how many blocks share an SM).
//!
//! A CUBIN is an ELF file. Its `.nv.info` section is a list of attributes, each a format byte,
//! an attribute byte and a value; `EIATTR_REGCOUNT` (0x2f) has a sized value (format 0x04: a
//! 16-bit size, then 8 bytes): the symbol index of a kernel and its register count. (Older
//! CUBINs also kept the count in the top byte of the `.text.<kernel>` section's `sh_info`;
//! NVRTC 13.0's for sm_90 leave that byte zero, keeping only the symbol index there.) The ELF
//! itself, its symbols and sections, is read with the `object` crate.

use object::read::elf::ElfFile64;
use object::{Endianness, Object, ObjectSection, ObjectSymbol};

/// Why a CUBIN's register count could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CubinError {
    #[error("the CUBIN is not a 64-bit ELF file: {0}")]
    NotElf(String),
    #[error("the CUBIN has no symbol for a kernel `{0}`")]
    NoKernel(String),
    #[error("the CUBIN's .nv.info gives no register count for `{0}`")]
    NoRegisterCount(String),
}

/// `.nv.info`'s attribute of a kernel's register count.
const EIATTR_REGCOUNT: u8 = 0x2f;

/// The registers per thread of `kernel` (its entry name as in the PTX) in `cubin`.
pub fn registers(cubin: &[u8], kernel: &str) -> Result<u32, CubinError> {
    let elf =
        ElfFile64::<Endianness>::parse(cubin).map_err(|e| CubinError::NotElf(e.to_string()))?;
    let symbol = elf
        .symbols()
        .find(|s| s.name() == Ok(kernel))
        .ok_or_else(|| CubinError::NoKernel(kernel.to_string()))?;
    let info = elf
        .section_by_name(".nv.info")
        .and_then(|s| s.data().ok())
        .unwrap_or_default();
    attributes(info)
        .filter(|(attr, _)| *attr == EIATTR_REGCOUNT)
        .filter_map(|(_, v)| Some((word(v, 0)?, word(v, 4)?)))
        .find(|(sym, _)| *sym as usize == symbol.index().0)
        .map(|(_, count)| count)
        .ok_or_else(|| CubinError::NoRegisterCount(kernel.to_string()))
}

/// The little-endian 32-bit word at `at` of `bytes`.
fn word(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The (attribute, value) pairs of an `.nv.info` section; it stops at a format it does not know.
fn attributes(data: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let (&format, &attr) = (data.get(at)?, data.get(at + 1)?);
        let (start, len) = match format {
            0x01 => (at + 2, 0),
            0x02 => (at + 2, 1),
            0x03 => (at + 2, 2),
            0x04 => {
                let size = data.get(at + 2..at + 4)?;
                (at + 4, usize::from(u16::from_le_bytes([size[0], size[1]])))
            }
            _ => return None,
        };
        let value = data.get(start..start + len)?;
        at = start + len;
        Some((attr, value))
    })
}

/// The kernels (`.entry` names) of a PTX text, in order.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.split_once(".entry ").map(|(_, rest)| rest))
        .map(|rest| {
            rest.split(|c: char| c == '(' || c.is_whitespace())
                .next()
                .unwrap_or("")
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_from_the_ptx() {
        let ptx = ".visible .entry conv2d(\n\t.param .u64 a\n)\n.visible .entry other (\n";
        assert_eq!(entries(ptx), vec!["conv2d", "other"]);
    }

    #[test]
    fn attributes_of_each_format_are_read_in_turn() {
        // A register count (sized), a half-word attribute, and one of a format unknown here.
        let data = [
            0x04, 0x2f, 8, 0, 0x12, 0, 0, 0, 0xa8, 0, 0, 0, 0x03, 0x1b, 0xff, 0, 0x09, 0x00,
        ];
        let got: Vec<(u8, Vec<u8>)> = attributes(&data).map(|(a, v)| (a, v.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                (0x2f, vec![0x12, 0, 0, 0, 0xa8, 0, 0, 0]),
                (0x1b, vec![0xff, 0])
            ]
        );
    }

    #[test]
    fn what_is_not_an_elf_file_is_an_error_not_a_crash() {
        assert!(matches!(
            registers(b"not an ELF file", "k"),
            Err(CubinError::NotElf(_))
        ));
    }
}
