//! References at URLs for CRAM decoding (`REF_PATH`'s `http(s)://` entries, `-T URL`): the
//! cram crate's [`cram::remote::Remote`] through hfile, with bounded ranges and a time limit.

use hfile::Hints;

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
    /// References read with `transport`, each fetch bounded by `HTS_REF_TIMEOUT` seconds
    /// (30 unless it says).
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
    fn open(&self, url: &str) -> Result<Box<dyn bgzf::Source + Send>, String> {
        hfile::open(url, &self.transport)
            .map(|f| Box::new(f) as Box<dyn bgzf::Source + Send>)
            .map_err(|e| e.to_string())
    }
}
