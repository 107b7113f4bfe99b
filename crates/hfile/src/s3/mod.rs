//! `s3://bucket/key`: the HTTP transport with each request signed (AWS Signature Version 4) for
//! exactly the span the layers above asked for. No part size of its own: a bounded `Range` per
//! window, as for any HTTP object.
//!
//! Credentials, region, endpoint and addressing style are resolved as the AWS CLI resolves them
//! (see [`credentials`] and [`endpoint`]); with no credentials the requests go unsigned, which is
//! how public buckets are read. A bucket in another region than the one configured answers with a
//! redirect naming its region; the backend then retries there once.

pub mod credentials;
pub mod endpoint;
pub mod error_body;
pub mod profile;
pub mod signer;
pub mod sigv4;

use std::sync::Arc;

pub use error_body::{Auth, ErrorBody};

use crate::named::open_error;
use crate::{Backend, Hints, HttpBackend, OpenOptions, Result};
use credentials::Credentials;
use endpoint::{ObjectUrl, Settings};
use profile::{Env, Profile};
use signer::S3Signer;

/// S3 settings that a command line may give (`--s3-endpoint`, `--requester-pays`); the rest
/// comes from the environment and the AWS profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Options {
    /// An S3-compatible endpoint (`http://127.0.0.1:9000`); overrides `AWS_ENDPOINT_URL_S3`
    /// and `AWS_ENDPOINT_URL`.
    pub endpoint: Option<String>,
    /// Send `x-amz-request-payer: requester` (also set by `AWS_REQUEST_PAYER=requester`).
    pub requester_pays: bool,
}

/// What a profile resolved to: the credentials (none: unsigned) and the settings.
#[derive(Clone)]
pub(crate) struct Resolved {
    pub(crate) credentials: Option<Credentials>,
    pub(crate) settings: Settings,
}

pub(crate) fn open_s3(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    Ok(Box::new(S3Backend::open(location, options)?))
}

/// An S3 object read through signed, bounded `Range` requests.
pub struct S3Backend {
    /// The `s3://` location, which every message names.
    name: String,
    object: ObjectUrl,
    settings: Settings,
    credentials: Option<Credentials>,
    options: OpenOptions,
    signer: Arc<S3Signer>,
    inner: HttpBackend,
    limit: Option<u64>,
    /// The advice given, passed on again after a redirect to a new transport.
    advice: Vec<std::ops::Range<u64>>,
    tail: Option<u64>,
    /// A region redirect is followed once per backend.
    redirected: bool,
}

impl std::fmt::Debug for S3Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Backend")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .field("credentials", &self.credentials)
            .finish()
    }
}

impl S3Backend {
    /// Resolves credentials and settings from the process environment and the AWS files, and
    /// prepares the first request (nothing is sent yet).
    /// With a [`crate::Client`] in the options, each profile is resolved once per client.
    pub fn open(location: &str, options: &OpenOptions) -> Result<S3Backend> {
        S3Backend::open_with(&Env::process(), location, options, true)
    }

    /// As [`S3Backend::open`], with the environment given (always resolved afresh).
    pub fn open_in(env: &Env, location: &str, options: &OpenOptions) -> Result<S3Backend> {
        S3Backend::open_with(env, location, options, false)
    }

    fn open_with(
        env: &Env,
        location: &str,
        options: &OpenOptions,
        shared: bool,
    ) -> Result<S3Backend> {
        let object = ObjectUrl::parse(location).map_err(|m| open_error(location, m))?;
        let resolve = || {
            let profile_name = credentials::profile_name(env, object.profile.as_deref());
            let profile = Profile::load(env, &profile_name.name);
            let credentials =
                credentials::resolve(env, &profile, profile_name.named, object.profile.is_some())?;
            let settings = Settings::resolve(env, &profile, &options.s3)?;
            Ok(Resolved {
                credentials,
                settings,
            })
        };
        // A client resolves each profile once for all its readers (in the process
        // environment only).
        let resolved = match &options.client {
            Some(client) if shared => client.s3_profile(object.profile.as_deref(), resolve),
            _ => resolve(),
        };
        let Resolved {
            credentials,
            settings,
        } = resolved.map_err(|m| open_error(location, m))?;
        let (inner, signer) = connect(location, &object, &settings, &credentials, options, None)?;
        if options.verbosity >= 2 {
            eprintln!(
                "[hfile] {location}: {} as {}",
                inner.name(),
                credentials
                    .as_ref()
                    .map(|c| format!("{} from the {}", c.access_key_id, c.source))
                    .unwrap_or_else(|| "anonymous (no credentials found)".to_string())
            );
        }
        Ok(S3Backend {
            name: location.to_string(),
            object,
            settings,
            credentials,
            options: options.clone(),
            signer,
            inner,
            limit: None,
            advice: Vec::new(),
            tail: None,
            redirected: false,
        })
    }

    /// Runs `op` on the transport; after a refusal that named another region, once more there.
    fn with_redirect<T>(&mut self, mut op: impl FnMut(&mut HttpBackend) -> Result<T>) -> Result<T> {
        let first = op(&mut self.inner);
        let Err(error) = first else {
            return first;
        };
        let region = match (self.redirected, self.signer.take_redirect()) {
            (false, Some(region)) => region,
            _ => return Err(error.renamed(&self.name)),
        };
        self.redirected = true;
        if self.options.verbosity >= 1 {
            eprintln!(
                "[hfile] {}: the bucket is in region {region}; asking there",
                self.name
            );
        }
        let (mut inner, signer) = connect(
            &self.name,
            &self.object,
            &self.settings,
            &self.credentials,
            &self.options,
            Some(&region),
        )?;
        let position = self.inner.position();
        inner.seek(position)?;
        inner.set_readahead_limit(self.limit);
        let still: Vec<_> = self
            .advice
            .iter()
            .filter(|r| r.end > position)
            .cloned()
            .collect();
        if !still.is_empty() {
            inner.advise(&still);
        }
        if let Some(len) = self.tail {
            inner.advise_tail(len);
        }
        self.inner = inner;
        self.signer = signer;
        op(&mut self.inner).map_err(|e| e.renamed(&self.name))
    }
}

/// A transport on the object's URL for `region`, with a signer for it.
fn connect(
    name: &str,
    object: &ObjectUrl,
    settings: &Settings,
    credentials: &Option<Credentials>,
    options: &OpenOptions,
    region: Option<&str>,
) -> Result<(HttpBackend, Arc<S3Signer>)> {
    let target = endpoint::target(object, settings, region).map_err(|m| open_error(name, m))?;
    let signer = Arc::new(S3Signer::new(
        credentials.clone(),
        &target.region,
        &target.host,
        settings.requester_pays,
    ));
    let mut options = options.clone();
    options.hook = Some(signer.clone());
    // A redirect would need a new signature; S3's own are answered by `with_redirect`.
    options.max_redirects = 0;
    let inner = HttpBackend::open(&target.url, &options).map_err(|e| e.renamed(name))?;
    Ok((inner, signer))
}

impl Backend for S3Backend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.with_redirect(|inner| inner.read(buf))
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        self.inner.seek(pos).map_err(|e| e.renamed(&self.name))
    }

    fn position(&self) -> u64 {
        self.inner.position()
    }

    fn size(&mut self) -> Result<u64> {
        self.with_redirect(|inner| inner.size())
    }

    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        self.with_redirect(|inner| inner.read_tail(len))
    }

    fn object_info(&mut self) -> crate::ObjectInfo {
        self.inner.object_info()
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl Hints for S3Backend {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
        self.inner.set_readahead_limit(limit);
    }

    fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        self.advice = ranges.to_vec();
        self.inner.advise(ranges);
    }

    fn advise_tail(&mut self, len: u64) {
        self.tail = Some(len);
        self.inner.advise_tail(len);
    }

    fn abandon(&mut self) {
        self.inner.abandon();
    }
}
