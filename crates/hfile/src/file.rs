use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use crate::{Backend, Error, Result};

/// A local file. The readahead limit is ignored: the kernel's page cache already does better.
#[derive(Debug)]
pub struct FileBackend {
    name: String,
    file: File,
    pos: u64,
}

impl FileBackend {
    /// Opens `path` for reading; `name` is what messages call it.
    pub fn open(name: &str, path: &str) -> Result<FileBackend> {
        let file = File::open(path).map_err(|source| Error::Open {
            name: name.to_string(),
            source,
        })?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(Error::Open {
                name: name.to_string(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory"),
            });
        }
        Ok(FileBackend {
            name: name.to_string(),
            file,
            pos: 0,
        })
    }

    /// A file the caller already opened (to look at its first bytes, say), read from where it
    /// stands; `name` is what messages call it. The caller checked it is a regular file.
    pub fn from_file(name: &str, mut file: File) -> Result<FileBackend> {
        let pos = file.stream_position().map_err(|source| Error::Io {
            name: name.to_string(),
            offset: 0,
            source,
        })?;
        Ok(FileBackend {
            name: name.to_string(),
            file,
            pos,
        })
    }
}

impl Backend for FileBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        read_counting(&mut self.file, buf, &self.name, &mut self.pos)
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        if pos == self.pos {
            return Ok(());
        }
        self.file
            .seek(SeekFrom::Start(pos))
            .map_err(|source| Error::Io {
                name: self.name.clone(),
                offset: pos,
                source,
            })?;
        self.pos = pos;
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|source| Error::Io {
                name: self.name.clone(),
                offset: self.pos,
                source,
            })
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Reads what it is asked for: every hint is ignored.
impl crate::Hints for FileBackend {}

/// Reads once from `reader` (again when interrupted), adding what was read to `pos`; an error
/// names the source and the offset.
pub(crate) fn read_counting(
    reader: &mut impl Read,
    buf: &mut [u8],
    name: &str,
    pos: &mut u64,
) -> Result<usize> {
    loop {
        match reader.read(buf) {
            Ok(n) => {
                *pos += n as u64;
                return Ok(n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(Error::Io {
                    name: name.to_string(),
                    offset: *pos,
                    source,
                })
            }
        }
    }
}
