//! Where an `s3://bucket/key` object is fetched from: the `s3://` URL itself, the region, the
//! endpoint (AWS's or an S3-compatible store's), and path-style or virtual-hosted addressing.

use super::profile::{Env, Profile};
use super::sigv4::uri_encode;
use super::S3Options;

/// A parsed `s3://[PROFILE@]BUCKET/KEY` (or `s3+http://`, `s3+https://`, which choose the scheme
/// used to reach a custom endpoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectUrl {
    /// A profile named in the URL (`s3://work@bucket/key`), as htslib allows.
    pub profile: Option<String>,
    /// The bucket.
    pub bucket: String,
    /// The key exactly as written (`%` is a literal character in S3 keys, as for the AWS CLI).
    pub key: String,
    /// `http` or `https` when the scheme said so.
    pub scheme: Option<&'static str>,
}

impl ObjectUrl {
    /// Parses an `s3://` location.
    pub fn parse(location: &str) -> Result<ObjectUrl, String> {
        let (scheme, rest) = location
            .split_once("://")
            .ok_or_else(|| "not an s3:// URL".to_string())?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "s3" => None,
            "s3+http" => Some("http"),
            "s3+https" => Some("https"),
            other => return Err(format!("'{other}://' is not an S3 scheme")),
        };
        let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
        let (profile, bucket) = match authority.rsplit_once('@') {
            Some((user, _)) if user.contains(':') => {
                return Err(
                    "credentials in an s3:// URL are not accepted (they would show in \
                            process lists and logs): use AWS_ACCESS_KEY_ID and \
                            AWS_SECRET_ACCESS_KEY, or a profile (s3://PROFILE@bucket/key)"
                        .to_string(),
                )
            }
            Some((user, bucket)) => (Some(user.to_string()), bucket),
            None => (None, authority),
        };
        if bucket.is_empty() {
            return Err("no bucket name (expected s3://bucket/key)".to_string());
        }
        if key.is_empty() {
            return Err("no object key (expected s3://bucket/key)".to_string());
        }
        Ok(ObjectUrl {
            profile: profile.filter(|p| !p.is_empty()),
            bucket: bucket.to_string(),
            key: key.to_string(),
            scheme,
        })
    }
}

/// Path-style (`https://host/bucket/key`) or virtual-hosted (`https://bucket.host/key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Addressing {
    /// Virtual-hosted on AWS when the bucket name allows it, path-style elsewhere: an
    /// S3-compatible store serves path-style without any configuration, virtual-hosted only with.
    #[default]
    Auto,
    /// `https://host/bucket/key`.
    Path,
    /// `https://bucket.host/key`.
    Virtual,
}

impl std::str::FromStr for Addressing {
    type Err = String;

    fn from_str(s: &str) -> Result<Addressing, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Addressing::Auto),
            "path" => Ok(Addressing::Path),
            "virtual" => Ok(Addressing::Virtual),
            other => Err(format!(
                "unknown S3 addressing style '{other}' (expected auto, path or virtual)"
            )),
        }
    }
}

/// Region, endpoint, addressing and requester-pays, resolved from options, environment and profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `None`: not configured; AWS requests then go to the global endpoint, signed for
    /// `us-east-1`, and a redirect tells the bucket's region.
    pub region: Option<String>,
    /// A custom endpoint (`http://127.0.0.1:9000`, `minio.example.org`), or `None` for AWS.
    pub endpoint: Option<String>,
    /// Path-style or virtual-hosted URLs.
    pub addressing: Addressing,
    /// Sends `x-amz-request-payer: requester` (the requester pays for the transfer).
    pub requester_pays: bool,
}

impl Settings {
    /// Resolves the settings: the option (`--s3-endpoint`) first, then the environment, then the
    /// profile, as the AWS CLI orders them; htslib's `HTS_S3_HOST` and `HTS_S3_ADDRESS_STYLE`
    /// are honoured after the AWS names.
    pub fn resolve(env: &Env, profile: &Profile, options: &S3Options) -> Result<Settings, String> {
        let region = env
            .first(&["AWS_REGION", "AWS_DEFAULT_REGION"])
            .or_else(|| profile.get("region"))
            .map(|r| r.trim().to_string());
        let configured = !env
            .var("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let endpoint = options
            .endpoint
            .clone()
            .filter(|e| !e.trim().is_empty())
            .or_else(|| {
                configured
                    .then(|| {
                        env.first(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"])
                            .or_else(|| profile.get("services.s3.endpoint_url"))
                            .or_else(|| profile.get("s3.endpoint_url"))
                            .or_else(|| profile.get("endpoint_url"))
                    })
                    .flatten()
                    .map(str::to_string)
            })
            .or_else(|| env.var("HTS_S3_HOST").map(str::to_string));
        let addressing = match env
            .first(&["AWS_S3_ADDRESSING_STYLE", "HTS_S3_ADDRESS_STYLE"])
            .or_else(|| profile.get("s3.addressing_style"))
        {
            Some(style) => style.parse()?,
            None => Addressing::Auto,
        };
        let requester_pays = options.requester_pays
            || env
                .var("AWS_REQUEST_PAYER")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("requester"));
        Ok(Settings {
            region,
            endpoint,
            addressing,
            requester_pays,
        })
    }
}

/// One object's request target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL requested.
    pub url: String,
    /// The `Host` header sent and signed (with the port when the URL has one).
    pub host: String,
    /// The URL's path, percent-encoded as sent (what the signature covers).
    pub path: String,
    /// The region the request is signed for.
    pub region: String,
}

/// The region requests are signed for when none is configured (AWS's global endpoint's).
pub const DEFAULT_REGION: &str = "us-east-1";

/// The request target of `object` under `settings`; `region` (a redirect's answer) overrides
/// the configured region.
pub fn target(
    object: &ObjectUrl,
    settings: &Settings,
    region: Option<&str>,
) -> Result<Target, String> {
    let region = region.or(settings.region.as_deref());
    let (scheme, authority, prefix, custom) = match &settings.endpoint {
        Some(endpoint) => {
            let (scheme, rest) = match endpoint.split_once("://") {
                Some((s, rest)) => (s.to_ascii_lowercase(), rest),
                None => (
                    object.scheme.unwrap_or("https").to_string(),
                    endpoint.as_str(),
                ),
            };
            if scheme != "http" && scheme != "https" {
                return Err(format!(
                    "the S3 endpoint '{endpoint}' is not http:// or https://"
                ));
            }
            let (authority, prefix) = match rest.find('/') {
                Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
                None => (rest, ""),
            };
            if authority.is_empty() || authority.contains('@') {
                return Err(format!("the S3 endpoint '{endpoint}' has no usable host"));
            }
            (scheme, authority.to_string(), prefix.to_string(), true)
        }
        None => {
            let host = match region {
                None => "s3.amazonaws.com".to_string(),
                Some(r) if r.starts_with("cn-") => format!("s3.{r}.amazonaws.com.cn"),
                Some(r) => format!("s3.{r}.amazonaws.com"),
            };
            (
                object.scheme.unwrap_or("https").to_string(),
                host,
                String::new(),
                false,
            )
        }
    };
    let virtual_host = match settings.addressing {
        Addressing::Path => false,
        Addressing::Virtual => true,
        Addressing::Auto => !custom && dns_compatible(&object.bucket, scheme == "https"),
    };
    let key = uri_encode(object.key.as_bytes(), true);
    let (host, path) = if virtual_host {
        if !dns_compatible(&object.bucket, false) {
            return Err(format!(
                "the bucket name '{}' cannot be used in a host name: use path-style addressing \
                 (AWS_S3_ADDRESSING_STYLE=path)",
                object.bucket
            ));
        }
        (
            format!("{}.{authority}", object.bucket),
            format!("{prefix}/{key}"),
        )
    } else {
        (
            authority,
            format!(
                "{prefix}/{}/{key}",
                uri_encode(object.bucket.as_bytes(), false)
            ),
        )
    };
    Ok(Target {
        url: format!("{scheme}://{host}{path}"),
        host,
        path,
        region: region.unwrap_or(DEFAULT_REGION).to_string(),
    })
}

/// A bucket name usable as a DNS label sequence; with TLS, no dots either (AWS's wildcard
/// certificate covers one label only).
fn dns_compatible(bucket: &str, tls: bool) -> bool {
    let b = bucket.as_bytes();
    (3..=63).contains(&b.len())
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && !bucket.contains("..")
        && !bucket.contains(".-")
        && !bucket.contains("-.")
        && bucket.parse::<std::net::Ipv4Addr>().is_err()
        && !(tls && bucket.contains('.'))
}

#[cfg(test)]
mod tests {
    use super::super::profile::IniFile;
    use super::*;

    fn obj(s: &str) -> ObjectUrl {
        ObjectUrl::parse(s).unwrap()
    }

    #[test]
    fn urls() {
        let o = obj("s3://work@my-bucket/dir/a b%20.bam");
        assert_eq!(o.profile.as_deref(), Some("work"));
        assert_eq!(o.bucket, "my-bucket");
        assert_eq!(o.key, "dir/a b%20.bam");
        assert_eq!(obj("s3+http://b/k").scheme, Some("http"));
        assert!(ObjectUrl::parse("s3://id:secret@b/k")
            .unwrap_err()
            .contains("not accepted"));
        assert!(ObjectUrl::parse("s3://b").is_err());
        assert!(ObjectUrl::parse("s3:///k").is_err());
        assert!(ObjectUrl::parse("https://b/k").is_err());
    }

    #[test]
    fn aws_targets() {
        let s = Settings::default();
        let t = target(&obj("s3://my-bucket/a b.bam"), &s, None).unwrap();
        assert_eq!(t.url, "https://my-bucket.s3.amazonaws.com/a%20b.bam");
        assert_eq!(t.region, "us-east-1");
        let t = target(&obj("s3://my-bucket/x"), &s, Some("eu-west-1")).unwrap();
        assert_eq!(t.url, "https://my-bucket.s3.eu-west-1.amazonaws.com/x");
        assert_eq!(t.host, "my-bucket.s3.eu-west-1.amazonaws.com");
        assert_eq!(t.region, "eu-west-1");
        // Dots and TLS: path-style.
        let t = target(&obj("s3://my.bucket/x"), &s, Some("us-west-2")).unwrap();
        assert_eq!(t.url, "https://s3.us-west-2.amazonaws.com/my.bucket/x");
        assert_eq!(t.path, "/my.bucket/x");
        let t = target(&obj("s3://Upper_Case/x"), &s, None).unwrap();
        assert_eq!(t.url, "https://s3.amazonaws.com/Upper_Case/x");
        let t = target(&obj("s3://b-1/x"), &s, Some("cn-north-1")).unwrap();
        assert_eq!(t.host, "b-1.s3.cn-north-1.amazonaws.com.cn");
    }

    #[test]
    fn custom_endpoints() {
        let s = Settings {
            endpoint: Some("http://127.0.0.1:9000/".into()),
            ..Settings::default()
        };
        let t = target(&obj("s3://bucket/k"), &s, None).unwrap();
        assert_eq!(t.url, "http://127.0.0.1:9000/bucket/k");
        assert_eq!(t.host, "127.0.0.1:9000");
        let s = Settings {
            endpoint: Some("localhost:9000/prefix".into()),
            addressing: Addressing::Virtual,
            ..Settings::default()
        };
        let t = target(&obj("s3+http://bucket/k"), &s, None).unwrap();
        assert_eq!(t.url, "http://bucket.localhost:9000/prefix/k");
        assert_eq!(t.path, "/prefix/k");
        let bad = Settings {
            endpoint: Some("ftp://x".into()),
            ..Settings::default()
        };
        assert!(target(&obj("s3://bucket/k"), &bad, None).is_err());
        let s = Settings {
            addressing: Addressing::Virtual,
            ..Settings::default()
        };
        assert!(target(&obj("s3://Bad_Name/k"), &s, None).is_err());
    }

    #[test]
    fn resolution_order() {
        let config = IniFile::parse(
            "[default]\nregion = eu-central-1\ns3 =\n  addressing_style = virtual\n  endpoint_url = http://cfg\n",
        );
        let profile = Profile::from_files("default", None, Some(&config));
        let env = Env::from_pairs([
            ("AWS_ENDPOINT_URL", "http://env"),
            ("AWS_REQUEST_PAYER", "Requester"),
        ]);
        let s = Settings::resolve(&env, &profile, &S3Options::default()).unwrap();
        assert_eq!(s.region.as_deref(), Some("eu-central-1"));
        assert_eq!(s.endpoint.as_deref(), Some("http://env"));
        assert_eq!(s.addressing, Addressing::Virtual);
        assert!(s.requester_pays);
        let env = Env::from_pairs([
            ("AWS_ENDPOINT_URL_S3", "http://s3env"),
            ("AWS_ENDPOINT_URL", "http://env"),
            ("AWS_DEFAULT_REGION", "r2"),
            ("AWS_S3_ADDRESSING_STYLE", "path"),
        ]);
        let opts = S3Options {
            endpoint: Some("http://option".into()),
            requester_pays: false,
        };
        let s = Settings::resolve(&env, &profile, &opts).unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://option"));
        assert_eq!(s.region.as_deref(), Some("r2"));
        assert_eq!(s.addressing, Addressing::Path);
        assert!(!s.requester_pays);
        let s = Settings::resolve(&env, &profile, &S3Options::default()).unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://s3env"));
        let ignore = Env::from_pairs([
            ("AWS_ENDPOINT_URL", "http://env"),
            ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true"),
        ]);
        let s = Settings::resolve(&ignore, &profile, &S3Options::default()).unwrap();
        assert_eq!(s.endpoint, None);
        let bad = Env::from_pairs([("AWS_S3_ADDRESSING_STYLE", "sideways")]);
        assert!(Settings::resolve(&bad, &Profile::default(), &S3Options::default()).is_err());
    }
}
