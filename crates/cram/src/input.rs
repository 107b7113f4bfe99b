//! Where a CRAM is read from: a local file, a URL through hfile (which takes a query's advice:
//! the containers it will read, each container's end), or standard input, read once in order.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, OnceLock};

use hfile::{HFile, Hints, ObjectInfo};

/// A CRAM's bytes.
pub enum Input {
    /// A local file.
    Local(std::fs::File),
    /// A URL through hfile.
    Remote(Box<RemoteInput>),
    /// Standard input, read once in order.
    Stdin(Stream),
}

/// A remote CRAM through hfile.
pub struct RemoteInput {
    file: HFile,
    /// The size, when the cache told it (asking the file would wait for a response).
    size: Option<u64>,
    /// What the first response said of the object (its validators), once the reader asked
    /// for its size: what a cache entry of its opening is kept with.
    seen: Seen,
}

/// What a remote file's first response said of it, once known.
pub type Seen = Arc<OnceLock<ObjectInfo>>;

impl Input {
    /// A remote file's input, `size` its size if known, and where what its first response
    /// says of it is put.
    pub fn remote(file: HFile, size: Option<u64>) -> (Input, Seen) {
        let seen = Arc::new(OnceLock::new());
        let remote = RemoteInput {
            file,
            size,
            seen: Arc::clone(&seen),
        };
        (Input::Remote(Box::new(remote)), seen)
    }
}

/// Opens `file`: `-` is standard input, a URL goes through hfile with `transport`. The error
/// names no file (the caller does).
pub fn open(file: &str, transport: &hfile::OpenOptions) -> Result<Input, String> {
    if file == "-" {
        return Ok(Input::Stdin(Stream::default()));
    }
    if hfile::scheme_of(file).is_some() {
        return hfile::open(file, transport)
            .map(|f| Input::remote(f, None).0)
            .map_err(|e| e.to_string());
    }
    std::fs::File::open(file)
        .map(Input::Local)
        .map_err(|e| e.to_string())
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Local(f) => f.read(buf),
            Input::Remote(r) => r.file.read(buf),
            Input::Stdin(s) => s.read(buf),
        }
    }
}

impl Seek for Input {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Input::Local(f) => f.seek(pos),
            Input::Remote(r) => r.file.seek(pos),
            Input::Stdin(s) => s.seek(pos),
        }
    }
}

/// A remote file takes the hints; a local one and standard input read what they are asked for.
impl Hints for Input {
    fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        if let Input::Remote(r) = self {
            r.file.advise(ranges);
        }
    }

    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        if let Input::Remote(r) = self {
            r.file.set_readahead_limit(limit);
        }
    }
}

impl crate::reader::Source for Input {
    fn size(&mut self) -> io::Result<Option<u64>> {
        match self {
            Input::Stdin(_) => Ok(None),
            Input::Remote(r) => match r.size {
                Some(size) => Ok(Some(size)),
                None => {
                    let size = r.file.seek(SeekFrom::End(0))?;
                    let _ = r.seen.set(r.file.object_info());
                    Ok(Some(size))
                }
            },
            local => local.seek(SeekFrom::End(0)).map(Some),
        }
    }
}

/// Standard input with the bytes from the last seek on kept, so that the reader can go back
/// to the start of the container it is reading (it reads a header's worth ahead); a seek
/// forward drops the bytes before it, so what is kept is at most a container and a header.
#[derive(Default)]
pub struct Stream {
    kept: Vec<u8>,
    /// Offset of `kept[0]`.
    kept_start: u64,
    pos: u64,
}

impl Stream {
    fn kept_end(&self) -> u64 {
        self.kept_start + self.kept.len() as u64
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.kept_end() {
            let from = (self.pos - self.kept_start) as usize;
            let n = buf.len().min(self.kept.len() - from);
            buf[..n].copy_from_slice(&self.kept[from..from + n]);
            self.pos += n as u64;
            return Ok(n);
        }
        let n = io::stdin().lock().read(buf)?;
        self.kept.extend_from_slice(&buf[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Stream {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(0) => return Ok(self.pos),
            _ => return Err(io::Error::other("standard input cannot seek")),
        };
        if to < self.kept_start {
            return Err(io::Error::other(format!(
                "standard input cannot go back to byte {to}"
            )));
        }
        if to <= self.kept_end() {
            self.kept.drain(..(to - self.kept_start) as usize);
        } else {
            let skip = to - self.kept_end();
            let skipped = io::copy(&mut io::stdin().lock().take(skip), &mut io::sink())?;
            if skipped < skip {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("standard input ends before byte {to}"),
                ));
            }
            self.kept.clear();
        }
        self.kept_start = to;
        self.pos = to;
        Ok(to)
    }
}
