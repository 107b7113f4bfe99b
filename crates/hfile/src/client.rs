//! One client for many readers: a process (or an application) that reads a thousand remote
//! files at once keeps one bound on requests in flight, one byte budget for what is fetched
//! ahead, one persistent cache and one resolution of each S3 profile, whatever the number of
//! readers. The connections are the process's already (kept alive per origin and reused across
//! objects, `http::connections`), and so are the rate limits a server imposes
//! (`http::throttle`).
//!
//! ```
//! use hfile::{Client, ClientOptions};
//! let client = Client::new(ClientOptions {
//!     max_in_flight: 32,
//!     byte_budget: 256 << 20,
//!     ..ClientOptions::default()
//! });
//! // Every reader opened through the client (or with its options) shares its limits.
//! let options = client.options();
//! assert_eq!(options.fetchers, 32);
//! assert!(options.client.is_some());
//! assert_eq!(client.held_bytes(), 0);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::cache::Cache;
use crate::{Backend, HFile, OpenOptions, Result};

/// What a [`Client`] is made from. The default is what one `hts view` uses for one file, so a
/// client of defaults changes nothing for a single reader.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The most data requests in flight at once over all the client's readers (each on its own
    /// connection; probes of a few bytes may run beside them). Default 8.
    pub max_in_flight: usize,
    /// The most bytes held for requests fetched ahead of their readers, over all of them
    /// (each reader may always have one request on its way, so that none is starved).
    /// Default 64 MiB.
    pub byte_budget: u64,
    /// Transport settings for every reader: headers, timeouts, retries, S3 endpoint, part size.
    /// Its `fetchers` and `fetch_budget` are replaced by the two limits above.
    pub transport: OpenOptions,
    /// The persistent cache the readers share; `None`: none.
    pub cache: Option<Cache>,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        let transport = OpenOptions::default();
        ClientOptions {
            max_in_flight: transport.fetchers,
            byte_budget: transport.fetch_budget,
            transport,
            cache: None,
        }
    }
}

/// A handle on limits and state shared by many readers; cheap to clone, and every clone is the
/// same client. Open readers with [`Client::open`], or give [`Client::options`] to a layer
/// above (a BAM or CRAM reader) that opens its own.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    /// The transport settings, without the client (which would hold itself).
    transport: OpenOptions,
    cache: Option<Cache>,
    budget: u64,
    /// Bytes held for fetched-ahead requests by all readers now.
    held: AtomicU64,
    /// What each S3 profile resolved to (credentials and settings), by the profile the URL
    /// names (`None`: the environment's).
    profiles: Mutex<HashMap<Option<String>, crate::s3::Resolved>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("max_in_flight", &self.inner.transport.fetchers)
            .field("byte_budget", &self.inner.budget)
            .field("held", &self.held_bytes())
            .field("cache", &self.inner.cache)
            .finish_non_exhaustive()
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new(ClientOptions::default())
    }
}

impl Client {
    /// A client with these limits.
    pub fn new(options: ClientOptions) -> Client {
        let mut transport = options.transport;
        transport.fetchers = options.max_in_flight.max(1);
        transport.fetch_budget = options.byte_budget;
        transport.client = None;
        Client {
            inner: Arc::new(Inner {
                transport,
                cache: options.cache,
                budget: options.byte_budget,
                held: AtomicU64::new(0),
                profiles: Mutex::default(),
            }),
        }
    }

    /// The options readers open with: the transport settings, the client's limits, and the
    /// client itself (so that their requests count against its budget).
    pub fn options(&self) -> OpenOptions {
        OpenOptions {
            client: Some(self.clone()),
            ..self.inner.transport.clone()
        }
    }

    /// Opens a path or URL as [`crate::open`] does, as one of the client's readers.
    pub fn open(&self, location: &str) -> Result<HFile> {
        crate::open(location, &self.options())
    }

    /// The backend [`Client::open`] would wrap.
    pub fn open_backend(&self, location: &str) -> Result<Box<dyn Backend>> {
        crate::open_backend(location, &self.options())
    }

    /// The persistent cache the readers share, if any.
    pub fn cache(&self) -> Option<&Cache> {
        self.inner.cache.as_ref()
    }

    /// The most data requests in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.inner.transport.fetchers
    }

    /// The most bytes held for fetched-ahead requests, over all readers.
    pub fn byte_budget(&self) -> u64 {
        self.inner.budget
    }

    /// The bytes held for fetched-ahead requests by all the client's readers now.
    pub fn held_bytes(&self) -> u64 {
        self.inner.held.load(Ordering::Relaxed)
    }

    /// Whether both are the same client.
    pub fn same(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Moves a reader's charge against the budget from `was` to `now` bytes.
    pub(crate) fn recharge(&self, was: u64, now: u64) {
        if now >= was {
            self.inner.held.fetch_add(now - was, Ordering::Relaxed);
        } else {
            self.inner.held.fetch_sub(was - now, Ordering::Relaxed);
        }
    }

    /// What the profile named by an `s3://` URL (`None`: the environment's) resolved to, once
    /// per client: the AWS files are read once, not once per object.
    pub(crate) fn s3_profile(
        &self,
        named: Option<&str>,
        resolve: impl FnOnce() -> std::result::Result<crate::s3::Resolved, String>,
    ) -> std::result::Result<crate::s3::Resolved, String> {
        let key = named.map(str::to_string);
        let mut profiles = self
            .inner
            .profiles
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(r) = profiles.get(&key) {
            return Ok(r.clone());
        }
        let r = resolve()?;
        profiles.insert(key, r.clone());
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn each_profile_is_resolved_once_per_client() {
        let client = Client::default();
        let calls = Cell::new(0);
        let anonymous = || {
            calls.set(calls.get() + 1);
            Ok(crate::s3::Resolved {
                credentials: None,
                settings: Default::default(),
            })
        };
        for named in [None, Some("dev"), None, Some("dev"), Some("prod")] {
            assert!(client.s3_profile(named, anonymous).is_ok());
        }
        assert_eq!(calls.get(), 3);
        // A failure is not remembered: the next reader tries again.
        let failing = || Err("no such profile".to_string());
        assert!(client.s3_profile(Some("gone"), failing).is_err());
        assert!(client.s3_profile(Some("gone"), anonymous).is_ok());
        assert_eq!(calls.get(), 4);
        // Another client resolves afresh; a clone is the same client.
        assert!(Client::default().s3_profile(None, anonymous).is_ok());
        assert_eq!(calls.get(), 5);
        assert!(client.clone().same(&client));
    }
}
