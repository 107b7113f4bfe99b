//! Buffers of finished transfers, kept for the next ones. A part's megabyte allocated afresh
//! is mapped, then faulted in and zeroed by the kernel a page at a time as the connection
//! thread fills it (about 7% of the CPU of a remote chromosome read in 1 MiB parts); a buffer
//! used before is already in memory. Buffers are allocated only when none is kept, so the
//! kept ones never add to the peak of the transfers in flight.

use std::sync::{Mutex, MutexGuard};

/// At most this many buffers are kept...
const KEPT: usize = 16;
/// ...holding at most this much in all (a larger buffer is freed).
const KEPT_BYTES: usize = 16 << 20;

static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn lock() -> MutexGuard<'static, Vec<Vec<u8>>> {
    SPARE.lock().unwrap_or_else(|p| p.into_inner())
}

/// An empty buffer with room for `len` bytes: the smallest kept one that has it, or a new one.
pub(crate) fn take(len: usize) -> Vec<u8> {
    let mut kept = lock();
    let best = kept
        .iter()
        .enumerate()
        .filter(|(_, b)| b.capacity() >= len)
        .min_by_key(|(_, b)| b.capacity())
        .map(|(i, _)| i);
    match best {
        Some(i) => kept.swap_remove(i),
        None => {
            drop(kept);
            Vec::with_capacity(len)
        }
    }
}

/// Keeps `buf` for a later transfer, if there is room.
pub(crate) fn give(mut buf: Vec<u8>) {
    if buf.capacity() == 0 {
        return;
    }
    buf.clear();
    let mut kept = lock();
    let held: usize = kept.iter().map(Vec::capacity).sum();
    if kept.len() < KEPT {
        if held + buf.capacity() <= KEPT_BYTES {
            kept.push(buf);
        }
        return;
    }
    // Full: a larger buffer takes the smallest one's place (parts come in a few sizes, and a
    // small buffer serves no larger part), if the bytes kept stay within the bound.
    let smallest = (0..kept.len()).min_by_key(|&i| kept[i].capacity());
    if let Some(i) = smallest {
        let freed = kept[i].capacity();
        if freed < buf.capacity() && held - freed + buf.capacity() <= KEPT_BYTES {
            kept[i] = buf;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_buffer_is_given_again_empty_and_a_large_one_is_not_kept() {
        let mut b = take(1 << 20);
        b.extend_from_slice(&[7u8; 1000]);
        let at = b.as_ptr();
        give(b);
        // Other tests of the crate may take it first: look for it among a few.
        let taken: Vec<Vec<u8>> = (0..KEPT).map(|_| take(1 << 20)).collect();
        let again = taken.iter().find(|b| b.as_ptr() == at);
        assert!(again.is_some_and(|b| b.is_empty() && b.capacity() >= 1 << 20));
        taken.into_iter().for_each(give);
        let huge = take(KEPT_BYTES + 1);
        let at = huge.as_ptr();
        give(huge);
        let taken: Vec<Vec<u8>> = (0..KEPT).map(|_| take(1)).collect();
        assert!(taken.iter().all(|b| b.as_ptr() != at));
        taken.into_iter().for_each(give);
    }
}
