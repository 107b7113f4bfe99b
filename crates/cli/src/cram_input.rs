//! Where a CRAM is read from: a local file, a URL through hfile (which takes a query's advice:
//! the containers it will read, each container's end), or standard input, read once in order.

use std::io::{self, BufRead, Read, Seek, SeekFrom};

use bam::hfile::{self, HFile};

/// A CRAM's bytes.
pub enum Input {
    Local(std::fs::File),
    Remote(Box<HFile>),
    Stdin(Stream),
}

/// Opens `file`: `-` is standard input, a URL goes through hfile with `transport`. The error
/// names no file (the caller does).
pub fn open(file: &str, transport: &hfile::OpenOptions) -> Result<Input, String> {
    if file == "-" {
        return Ok(Input::Stdin(Stream::default()));
    }
    if hfile::scheme_of(file).is_some() {
        return hfile::open(file, transport)
            .map(|f| Input::Remote(Box::new(f)))
            .map_err(|e| e.to_string());
    }
    std::fs::File::open(file)
        .map(Input::Local)
        .map_err(|e| e.to_string())
}

/// Whether standard input starts with CRAM's magic, looked at in stdin's own buffer: nothing
/// is consumed, so the BAM reader that opens `-` otherwise gets every byte.
pub fn stdin_is_cram() -> bool {
    io::stdin()
        .lock()
        .fill_buf()
        .is_ok_and(|b| b.starts_with(b"CRAM"))
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Local(f) => f.read(buf),
            Input::Remote(f) => f.read(buf),
            Input::Stdin(s) => s.read(buf),
        }
    }
}

impl Seek for Input {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Input::Local(f) => f.seek(pos),
            Input::Remote(f) => f.seek(pos),
            Input::Stdin(s) => s.seek(pos),
        }
    }
}

impl cram::reader::Source for Input {
    fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        if let Input::Remote(f) = self {
            f.advise(ranges);
        }
    }

    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        if let Input::Remote(f) = self {
            f.set_readahead_limit(limit);
        }
    }

    fn size(&mut self) -> io::Result<Option<u64>> {
        match self {
            Input::Stdin(_) => Ok(None),
            other => other.seek(SeekFrom::End(0)).map(Some),
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

/// How long one reference may take to arrive from a URL unless `HTS_REF_TIMEOUT` says
/// otherwise (seconds): an MD5 server that hangs (htslib #412) ends in an error naming the
/// reference and the URL.
const REF_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// References at URLs (`REF_PATH` entries, `-T URL`) read through hfile: bounded ranges, each
/// fetch bounded in time as well as by the query's own limit.
pub struct References {
    transport: hfile::OpenOptions,
    limit: std::time::Duration,
}

impl References {
    pub fn new(transport: &hfile::OpenOptions) -> References {
        let limit = std::env::var("HTS_REF_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(REF_TIME_LIMIT, std::time::Duration::from_secs_f64);
        References {
            transport: transport.clone(),
            limit,
        }
    }

    /// The transport with this fetch's time limit (the query's when that ends sooner).
    fn options(&self) -> hfile::OpenOptions {
        let mut t = self.transport.clone();
        let own = hfile::Deadline::after(self.limit);
        t.deadline = match t.deadline {
            Some(d) if d.remaining().is_none_or(|r| r < self.limit) => Some(d),
            _ => Some(own),
        };
        t.request_time = t.request_time.min(self.limit);
        t.connect_timeout = t.connect_timeout.min(self.limit);
        t
    }
}

/// The most bytes read of a file fetched whole (a `.fai` or `.gzi`).
const MAX_WHOLE: u64 = 256 << 20;

/// Up to `len` bytes from here, grown as they arrive: a length from a hostile header costs no
/// more memory than the server sends.
fn read_up_to(f: &mut hfile::HFile, len: u64) -> hfile::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while (out.len() as u64) < len {
        let want = chunk
            .len()
            .min(usize::try_from(len - out.len() as u64).unwrap_or(usize::MAX));
        let n = f.read_some(&mut chunk[..want])?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    Ok(out)
}

impl cram::remote::Remote for References {
    fn fetch(
        &self,
        url: &str,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<Option<Vec<u8>>, String> {
        let mut f = hfile::open(url, &self.options()).map_err(|e| e.to_string())?;
        let got = match range {
            Some(r) => {
                f.set_readahead_limit(Some(r.end));
                f.advise(std::slice::from_ref(&r));
                f.seek_to(r.start)
                    .and_then(|()| read_up_to(&mut f, r.end - r.start))
            }
            // An index beside a FASTA: a few MB for a whole genome; one that does not end is
            // refused rather than held.
            None => read_up_to(&mut f, MAX_WHOLE + 1).and_then(|b| {
                if b.len() as u64 > MAX_WHOLE {
                    Err(hfile::Error::Protocol {
                        name: hfile::redact_url(url),
                        offset: MAX_WHOLE,
                        message: format!("more than {MAX_WHOLE} bytes for an index file"),
                    })
                } else {
                    Ok(b)
                }
            }),
        };
        match got {
            Ok(bytes) => Ok(Some(bytes)),
            Err(hfile::Error::Status {
                status: 404 | 410, ..
            }) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// A remote FASTA is read slice by slice for the whole run: only the query's own time
    /// limit bounds it (and hfile's per-request ones).
    fn open(&self, url: &str) -> Result<Box<dyn bam::bgzf::Source>, String> {
        hfile::open(url, &self.transport)
            .map(|f| Box::new(f) as Box<dyn bam::bgzf::Source>)
            .map_err(|e| e.to_string())
    }
}
