//! Host buffers a worker reads large outputs and inputs back into, kept from one request to the
//! next.
//!
//! A full case's output is up to 67 million floats (puzzle 09's 8192 x 8192). Read back into a
//! fresh `Vec`, it costs more in page faults than in the copy itself: 0.23 s for 256 MB on an
//! H200, against 0.02 s into memory already touched. So the worker reads into a buffer [`take`]n
//! from here, and whoever is done with it (the judge, the input check) [`give`]s it back. Small
//! buffers are plain allocations; at most [`KEPT`] large ones wait here, the largest kept.

use std::sync::Mutex;

/// Buffers shorter than this are not kept.
const FROM: usize = 1 << 20;
/// Large buffers kept at most.
const KEPT: usize = 4;

static SPARE: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// A buffer of `len` floats whose contents are to be overwritten: a kept one of that length if
/// there is one, else one that has room (cut or grown in place), else a new one.
pub fn take(len: usize) -> Vec<f32> {
    if len >= FROM
        && let Ok(mut spare) = SPARE.lock()
    {
        let exact = spare.iter().position(|v| v.len() == len);
        let roomy = || spare.iter().position(|v| v.capacity() >= len);
        if let Some(i) = exact.or_else(roomy) {
            let mut v = spare.swap_remove(i);
            v.resize(len, 0.0);
            return v;
        }
    }
    vec![0.0; len]
}

/// Gives back a buffer from [`take`] (or any large one) for a later request.
pub fn give(v: Vec<f32>) {
    if v.capacity() < FROM {
        return;
    }
    if let Ok(mut spare) = SPARE.lock() {
        spare.push(v);
        if spare.len() > KEPT {
            let smallest = (0..spare.len())
                .min_by_key(|&i| spare[i].capacity())
                .expect("not empty");
            spare.swap_remove(smallest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_taken_again_without_a_new_allocation() {
        let v = take(FROM + 3);
        assert_eq!(v.len(), FROM + 3);
        let at = v.as_ptr();
        give(v);
        let again = take(FROM + 3);
        assert_eq!(again.as_ptr(), at, "the same memory");
        let shorter = {
            give(again);
            take(FROM + 1)
        };
        assert_eq!((shorter.len(), shorter.as_ptr()), (FROM + 1, at));
        give(shorter);
        assert_eq!(take(10).len(), 10, "small ones are plain");
        drop(take(FROM + 1));
    }
}
