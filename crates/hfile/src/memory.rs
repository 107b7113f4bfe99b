use crate::{Backend, Result};

/// Bytes held in memory (a downloaded index, a test fixture).
#[derive(Debug, Clone)]
pub struct MemoryBackend {
    name: String,
    data: Vec<u8>,
    pos: u64,
}

impl MemoryBackend {
    /// Wraps `data`; `name` is what messages call it.
    pub fn new(name: &str, data: Vec<u8>) -> MemoryBackend {
        MemoryBackend {
            name: name.to_string(),
            data,
            pos: 0,
        }
    }
}

impl Backend for MemoryBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let len = self.data.len() as u64;
        if self.pos >= len {
            return Ok(0);
        }
        let start = self.pos as usize;
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
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
        Ok(self.data.len() as u64)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Reads what it is asked for: every hint is ignored.
impl crate::Hints for MemoryBackend {}
