//! `gs://bucket/key` as htslib reads it: an HTTPS object at
//! `https://storage.googleapis.com/bucket/key` (host from `HTS_GCS_HOST`; `gs+http://` for plain
//! HTTP), with `Authorization: Bearer $GCS_OAUTH_TOKEN` when the token is set and
//! `X-Goog-User-Project: $GCS_REQUESTER_PAYS_PROJECT` for requester-pays buckets.

use std::sync::Arc;

use crate::hook::{Request, RequestHook};
use crate::named::{open_error, Named};
use crate::s3::profile::Env;
use crate::s3::sigv4::{uri_encode, Secret};
use crate::{Backend, HttpBackend, OpenOptions, Result};

/// The default host of Google Cloud Storage's XML API.
pub const DEFAULT_HOST: &str = "storage.googleapis.com";

/// The HTTPS URL of `gs://bucket/key` (also `gs+http://`, `gs+https://`).
pub fn gcs_url(location: &str, host: Option<&str>) -> std::result::Result<String, String> {
    let (scheme, rest) = location
        .split_once("://")
        .ok_or_else(|| "not a gs:// URL".to_string())?;
    let mut scheme = match scheme.to_ascii_lowercase().as_str() {
        "gs" | "gs+https" => "https",
        "gs+http" => "http",
        other => return Err(format!("'{other}://' is not a Google Cloud Storage scheme")),
    };
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() || key.is_empty() {
        return Err("expected gs://bucket/key".to_string());
    }
    let mut host = host.unwrap_or(DEFAULT_HOST).trim().trim_end_matches('/');
    if let Some((s, h)) = host.split_once("://") {
        scheme = match s {
            "http" => "http",
            "https" => "https",
            _ => return Err(format!("HTS_GCS_HOST '{host}' is not http:// or https://")),
        };
        host = h;
    }
    Ok(format!(
        "{scheme}://{host}/{}/{}",
        uri_encode(bucket.as_bytes(), false),
        uri_encode(key.as_bytes(), true)
    ))
}

/// Adds the bearer token and the requester-pays project to every request.
struct GcsHook {
    token: Option<Secret>,
    project: Option<String>,
}

impl RequestHook for GcsHook {
    fn headers(&self, _request: &Request) -> std::result::Result<Vec<(String, String)>, String> {
        let mut headers = Vec::new();
        if let Some(token) = &self.token {
            headers.push((
                "Authorization".to_string(),
                format!("Bearer {}", token.expose()),
            ));
        }
        if let Some(project) = &self.project {
            headers.push(("X-Goog-User-Project".to_string(), project.clone()));
        }
        Ok(headers)
    }
}

pub(crate) fn open_gcs(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    open_gcs_in(&Env::process(), location, options)
}

/// Opens `gs://bucket/key` with the settings of `env` (`HTS_GCS_HOST`, `GCS_OAUTH_TOKEN`,
/// `GCS_REQUESTER_PAYS_PROJECT`).
pub fn open_gcs_in(env: &Env, location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    let url = gcs_url(location, env.var("HTS_GCS_HOST")).map_err(|m| open_error(location, m))?;
    let hook = GcsHook {
        token: env.var("GCS_OAUTH_TOKEN").map(|t| Secret::new(t.trim())),
        project: env
            .var("GCS_REQUESTER_PAYS_PROJECT")
            .map(|p| p.trim().to_string()),
    };
    let mut options = options.clone();
    options.hook = Some(Arc::new(hook));
    let inner = HttpBackend::open(&url, &options).map_err(|e| e.renamed(location))?;
    Ok(Box::new(Named {
        name: location.to_string(),
        inner,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            gcs_url("gs://bkt/dir/a b.bam", None).unwrap(),
            "https://storage.googleapis.com/bkt/dir/a%20b.bam"
        );
        assert_eq!(
            gcs_url("gs+http://bkt/k", Some("127.0.0.1:8080")).unwrap(),
            "http://127.0.0.1:8080/bkt/k"
        );
        assert_eq!(
            gcs_url("gs://bkt/k", Some("http://127.0.0.1:1/")).unwrap(),
            "http://127.0.0.1:1/bkt/k"
        );
        assert!(gcs_url("gs://bkt", None).is_err());
        assert!(gcs_url("gs://bkt/k", Some("ftp://x")).is_err());
    }

    #[test]
    fn hook_headers() {
        let hook = GcsHook {
            token: Some(Secret::new("ya29.tok")),
            project: Some("proj".into()),
        };
        let request = Request {
            method: "GET",
            url: "https://h/b/k",
            range: None,
        };
        assert_eq!(
            hook.headers(&request).unwrap(),
            vec![
                ("Authorization".to_string(), "Bearer ya29.tok".to_string()),
                ("X-Goog-User-Project".to_string(), "proj".to_string())
            ]
        );
        let none = GcsHook {
            token: None,
            project: None,
        };
        assert!(none.headers(&request).unwrap().is_empty());
    }

    #[test]
    fn open_reads_the_environment() {
        let env = Env::from_pairs([("HTS_GCS_HOST", "http://127.0.0.1:9")]);
        let backend = open_gcs_in(&env, "gs://b/k", &OpenOptions::default()).unwrap();
        assert_eq!(backend.name(), "gs://b/k");
    }
}
