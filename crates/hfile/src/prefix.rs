//! A byte source that keeps the first bytes of an object in memory: given at the start (a
//! cached header or index prefix), and grown by the reads that continue them. A header or an
//! index prefix read once can then be parsed again, extended, or cached, without asking the
//! server for it twice.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{Backend, ObjectInfo, Result};

/// The first bytes of an object, shared between a [`PrefixBackend`] and its owner.
pub type Prefix = Arc<Mutex<Vec<u8>>>;

/// Serves `[0, prefix.len())` from memory and everything after from `rest`; bytes read from
/// `rest` right after the prefix are added to it (up to `cap` bytes in all).
///
/// ```
/// use hfile::{Backend, MemoryBackend, PrefixBackend};
/// let whole = b"0123456789".to_vec();
/// let rest = Box::new(MemoryBackend::new("m", whole));
/// let mut b = PrefixBackend::new(b"0123".to_vec(), rest, 6);
/// let prefix = b.shared_prefix();
/// let mut buf = [0u8; 10];
/// assert_eq!(b.read(&mut buf).unwrap(), 4, "a read stops at the end of the prefix");
/// assert_eq!(b.read(&mut buf).unwrap(), 6);
/// assert_eq!(&buf[..6], b"456789");
/// assert_eq!(&*prefix.lock().unwrap(), b"012345", "grown up to the cap");
/// ```
pub struct PrefixBackend {
    prefix: Prefix,
    rest: Box<dyn Backend>,
    pos: u64,
    cap: usize,
}

impl PrefixBackend {
    /// `prefix` (the object's first bytes), then `rest`.
    pub fn new(prefix: Vec<u8>, rest: Box<dyn Backend>, cap: usize) -> PrefixBackend {
        PrefixBackend {
            prefix: Arc::new(Mutex::new(prefix)),
            rest,
            pos: 0,
            cap,
        }
    }

    /// The prefix, shared: it grows as the backend reads on from it.
    pub fn shared_prefix(&self) -> Prefix {
        Arc::clone(&self.prefix)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        self.prefix.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn prefix_len(&self) -> u64 {
        self.lock().len() as u64
    }

    /// The bytes `ranges` ask for from the prefix's end `p` on (without a gap) will be added
    /// to it as they are read, up to the cap: room for them is made at once, rather than the
    /// prefix growing (and being copied) step by step as they arrive.
    fn make_room(&self, p: u64, ranges: &[Range<u64>]) {
        let mut starts: Vec<&Range<u64>> = ranges.iter().collect();
        starts.sort_by_key(|r| r.start);
        let mut reach = p;
        for r in starts {
            if r.start > reach {
                break;
            }
            reach = reach.max(r.end);
        }
        let want = usize::try_from(reach).unwrap_or(usize::MAX).min(self.cap);
        let mut prefix = self.lock();
        if want > prefix.capacity() {
            let more = want - prefix.len();
            prefix.reserve_exact(more);
        }
    }
}

impl Backend for PrefixBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        {
            let prefix = self.lock();
            if self.pos < prefix.len() as u64 {
                let from = self.pos as usize;
                let n = buf.len().min(prefix.len() - from);
                buf[..n].copy_from_slice(&prefix[from..from + n]);
                drop(prefix);
                self.pos += n as u64;
                return Ok(n);
            }
        }
        self.rest.seek(self.pos)?;
        let n = self.rest.read(buf)?;
        let mut prefix = self.lock();
        if self.pos == prefix.len() as u64 {
            let room = self.cap.saturating_sub(prefix.len());
            prefix.extend_from_slice(&buf[..n.min(room)]);
        }
        drop(prefix);
        self.pos += n as u64;
        Ok(n)
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        self.pos = pos;
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        self.rest.size()
    }

    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        self.rest.read_tail(len)
    }

    fn object_info(&mut self) -> ObjectInfo {
        self.rest.object_info()
    }

    fn probe(&mut self) -> Result<ObjectInfo> {
        self.rest.probe()
    }

    fn name(&self) -> &str {
        self.rest.name()
    }
}

impl crate::Hints for PrefixBackend {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.rest.set_readahead_limit(limit);
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        // What the prefix holds needs no fetching.
        let p = self.prefix_len();
        self.make_room(p, ranges);
        let beyond: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.end > p)
            .map(|r| r.start.max(p)..r.end)
            .collect();
        self.rest.advise(&beyond);
    }

    fn advise_tail(&mut self, len: u64) {
        self.rest.advise_tail(len);
    }

    fn abandon(&mut self) {
        self.rest.abandon();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hints, MemoryBackend};

    #[test]
    fn seeks_cross_the_prefix_boundary_and_reads_grow_it() {
        let whole: Vec<u8> = (0..100u8).collect();
        let rest = Box::new(MemoryBackend::new("m", whole.clone()));
        let mut b = PrefixBackend::new(whole[..30].to_vec(), rest, 1000);
        let prefix = b.shared_prefix();
        let mut buf = [0u8; 20];
        b.seek(25).unwrap();
        assert_eq!(b.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], &whole[25..30]);
        assert_eq!(b.read(&mut buf).unwrap(), 20);
        assert_eq!(&buf[..], &whole[30..50]);
        assert_eq!(
            prefix.lock().unwrap().len(),
            50,
            "the read continued the prefix"
        );
        // Bytes advised right after it are given room (up to the cap), others not.
        b.advise(&[60..70, 50..60, 200..300]);
        assert_eq!(prefix.lock().unwrap().capacity(), 70);
        b.advise(std::slice::from_ref(&(0..5000)));
        assert_eq!(prefix.lock().unwrap().capacity(), 1000);
        // A read elsewhere does not.
        b.seek(80).unwrap();
        assert_eq!(b.read(&mut buf[..5]).unwrap(), 5);
        assert_eq!(prefix.lock().unwrap().len(), 50);
        b.seek(10).unwrap();
        assert_eq!(b.read(&mut buf[..5]).unwrap(), 5);
        assert_eq!(&buf[..5], &whole[10..15]);
        assert_eq!(b.size().unwrap(), 100);
        assert_eq!(b.read_tail(3).unwrap(), vec![97, 98, 99]);
    }
}
