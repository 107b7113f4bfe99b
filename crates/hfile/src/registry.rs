use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use crate::{Backend, Error, FileBackend, HFile, RequestHook, Result, S3Options};

/// How the HTTP backend shapes its `Range` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RangeMode {
    /// Every request is `bytes=X-Y`, bounded by the readahead limit or the request size, and each
    /// body is read to its end so the connection is reused.
    #[default]
    Bounded,
    /// htslib's way, kept for benchmarks: every request after a seek is open-ended (`bytes=X-`)
    /// on a fresh connection, and the transfer is abandoned once enough bytes have arrived.
    Unbounded,
}

/// Settings that transports may use; local files ignore them.
#[derive(Clone)]
pub struct OpenOptions {
    /// Extra request headers, `("Authorization", "Bearer ...")`.
    pub headers: Vec<(String, String)>,
    /// Called for every attempt of every request, for headers made per request (a signature,
    /// a fresh token) and for reading refusals. `s3://` and `gs://` set their own.
    pub hook: Option<Arc<dyn RequestHook>>,
    /// Settings for `s3://` objects given on the command line.
    pub s3: S3Options,
    /// 0: quiet; 1: transports log each request on stderr; 3 and up: libcurl's own trace too.
    pub verbosity: u8,
    /// How many times a transient failure (reset, timeout, short body, 429, 5xx) is retried.
    pub retries: u32,
    /// The first retry waits this long; each further one waits twice as long as the previous.
    pub retry_backoff: std::time::Duration,
    /// No retry starts once this much time has passed since the request's first attempt.
    pub retry_max_time: std::time::Duration,
    /// Time allowed to establish a connection (TCP and TLS).
    pub connect_timeout: std::time::Duration,
    /// A transfer slower than `low_speed_limit` bytes/s for this long is abandoned (and retried).
    pub low_speed_time: std::time::Duration,
    /// See `low_speed_time`.
    pub low_speed_limit: u32,
    /// Each attempt of a request may take `request_time` plus its bytes at `min_rate` bytes/s
    /// (0: no bound), then it is abandoned (and retried): a body trickled just above the
    /// low-speed limit still ends.
    pub request_time: std::time::Duration,
    /// See `request_time`.
    pub min_rate: u64,
    /// The whole query must be over by then (`hts view --timeout`): no request starts after it,
    /// running ones are cut at it, and no retry waits past it.
    pub deadline: Option<crate::Deadline>,
    /// The largest byte count one request asks for; reads with no readahead limit are split
    /// into requests of this size.
    pub request_size: u64,
    /// How many redirects are followed before giving up.
    pub max_redirects: u32,
    /// Bounded (default) or htslib-style open-ended ranges.
    pub range_mode: RangeMode,
    /// The most data requests in flight at once, each on its own connection (default 8: on the
    /// `s3` bench profile, 35 MB/s a connection and 20 ms a response, 8 beat 6 and 10; see
    /// docs/BENCHMARKS.md); up to two probes of a few bytes (the EOF marker, a cached index's one byte)
    /// may run beside them.
    pub fetchers: usize,
    /// The most bytes held for requests fetched ahead of the reader (default 64 MiB; at least
    /// one request is always allowed).
    pub fetch_budget: u64,
    /// Advised ranges longer than this go out as several bounded requests of at most this
    /// many bytes (parts), fetched at once on several connections and read in order: an
    /// object store serves each request at a bounded rate (default 1 MiB: on the `s3` bench
    /// profile it beat 2 and 4 MiB on chr22, 22:20-25 Mb and 10 regions; see docs/BENCHMARKS.md).
    pub part_size: u64,
    /// The read-ahead depth: a part (or advised range) is started ahead only while fewer than
    /// this many bytes are still to arrive for those before it (default 8 MiB). Enough for
    /// every fetcher to be busy on a large range (8 parts of 1 MiB); no more, so on a link
    /// whose bandwidth all connections share the bytes needed first are not held back by many
    /// behind them.
    pub read_ahead: u64,
    /// The [`crate::Client`] whose limits and state this reader shares with others (its byte
    /// budget over all readers, its resolved S3 profiles); `None`: the reader has its own
    /// budget. [`crate::Client::options`] sets it.
    pub client: Option<crate::Client>,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions {
            headers: Vec::new(),
            hook: None,
            s3: S3Options::default(),
            verbosity: 0,
            retries: 5,
            retry_backoff: std::time::Duration::from_millis(100),
            retry_max_time: std::time::Duration::from_secs(60),
            connect_timeout: std::time::Duration::from_secs(30),
            low_speed_time: std::time::Duration::from_secs(30),
            low_speed_limit: 1,
            request_time: std::time::Duration::from_secs(30),
            min_rate: 16 * 1024,
            deadline: None,
            request_size: 8 * 1024 * 1024,
            max_redirects: 5,
            range_mode: RangeMode::Bounded,
            fetchers: 8,
            fetch_budget: 64 * 1024 * 1024,
            part_size: 1024 * 1024,
            read_ahead: 8 * 1024 * 1024,
            client: None,
        }
    }
}

impl fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(k, v)| crate::redact_header(k, v))
            .collect();
        f.debug_struct("OpenOptions")
            .field("headers", &headers)
            .field("hook", &self.hook)
            .field("s3", &self.s3)
            .field("verbosity", &self.verbosity)
            .field("retries", &self.retries)
            .field("deadline", &self.deadline)
            .field("request_size", &self.request_size)
            .field("part_size", &self.part_size)
            .field("read_ahead", &self.read_ahead)
            .field("range_mode", &self.range_mode)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// Makes a backend for a location whose scheme it was registered for.
pub type Opener = fn(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>>;

fn registry() -> &'static RwLock<HashMap<String, Opener>> {
    static REGISTRY: OnceLock<RwLock<HashMap<String, Opener>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut map: HashMap<String, Opener> = HashMap::new();
        map.insert("file".to_string(), open_file_url);
        map.insert("http".to_string(), crate::http::open_http);
        map.insert("https".to_string(), crate::http::open_http);
        for scheme in ["s3", "s3+http", "s3+https"] {
            map.insert(scheme.to_string(), crate::s3::open_s3);
        }
        for scheme in ["gs", "gs+http", "gs+https"] {
            map.insert(scheme.to_string(), crate::gcs::open_gcs);
        }
        RwLock::new(map)
    })
}

/// Registers (or replaces) the opener for `scheme` (lower case, without `://`).
pub fn register_scheme(scheme: &str, opener: Opener) {
    let mut map = registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.insert(scheme.to_ascii_lowercase(), opener);
}

/// The scheme of `location` if it looks like a URL (`scheme://...`), lower-cased.
pub fn scheme_of(location: &str) -> Option<String> {
    let (scheme, _) = location.split_once("://")?;
    let valid = !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// Opens a path or URL with the backend registered for its scheme; plain paths are local files.
///
/// # Examples
///
/// ```no_run
/// use std::io::Read;
///
/// let mut f = hfile::open("https://example.org/sample.bam", &hfile::OpenOptions::default())?;
/// let mut magic = [0u8; 4];
/// f.read_exact(&mut magic)?;
/// println!("{} bytes", f.size()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open(location: &str, options: &OpenOptions) -> Result<HFile> {
    Ok(HFile::new(open_backend(location, options)?))
}

/// The backend [`open`] would wrap, for a caller that puts another backend around it (e.g. a
/// [`crate::PrefixBackend`] serving cached first bytes).
pub fn open_backend(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    let backend = match scheme_of(location) {
        None => Box::new(FileBackend::open(location, location)?) as Box<dyn Backend>,
        Some(scheme) => {
            let opener = {
                let map = registry()
                    .read()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                map.get(&scheme).copied()
            };
            match opener {
                Some(opener) => opener(location, options)?,
                None => {
                    return Err(Error::UnsupportedScheme {
                        name: location.to_string(),
                        scheme,
                    })
                }
            }
        }
    };
    Ok(backend)
}

fn open_file_url(location: &str, _options: &OpenOptions) -> Result<Box<dyn Backend>> {
    let rest = &location[location.find("://").map_or(0, |i| i + 3)..];
    // file:///abs/path and file://localhost/abs/path
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    Ok(Box::new(FileBackend::open(location, path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(scheme_of("https://x/y.bam").as_deref(), Some("https"));
        assert_eq!(scheme_of("S3://b/k").as_deref(), Some("s3"));
        assert_eq!(scheme_of("data/x.bam"), None);
        assert_eq!(scheme_of("weird:name://x"), None);
        assert_eq!(scheme_of("://x"), None);
    }

    #[test]
    fn unknown_scheme_is_an_error_naming_the_location() {
        let e = open("gopher://h/x", &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("gopher://h/x"), "{e}");
    }

    #[test]
    fn debug_hides_credential_headers() {
        let options = OpenOptions {
            headers: vec![("Authorization".into(), "Bearer secret-token".into())],
            ..OpenOptions::default()
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("secret-token"), "{shown}");
        assert!(shown.contains("Authorization: <redacted>"), "{shown}");
    }

    #[test]
    fn object_store_schemes_are_registered() {
        // A malformed location reaches the store's opener, which names what is wrong.
        let e = open("s3://bucket-only", &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("no object key"), "{e}");
        let e = open("gs://bucket-only", &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("gs://bucket/key"), "{e}");
    }

    #[test]
    fn missing_file_is_not_found() {
        let e = open("/nonexistent/x.bam", &OpenOptions::default()).unwrap_err();
        assert!(e.is_not_found());
        assert!(e.to_string().contains("/nonexistent/x.bam"));
    }
}
