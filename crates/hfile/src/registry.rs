use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use crate::{Backend, Error, FileBackend, HFile, Result};

/// Settings that transports may use; local files ignore them.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Extra request headers, `("Authorization", "Bearer ...")`.
    pub headers: Vec<(String, String)>,
    /// 0: quiet; 1 and up: transports log each request on stderr.
    pub verbosity: u8,
}

/// Makes a backend for a location whose scheme it was registered for.
pub type Opener = fn(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>>;

fn registry() -> &'static RwLock<HashMap<String, Opener>> {
    static REGISTRY: OnceLock<RwLock<HashMap<String, Opener>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut map: HashMap<String, Opener> = HashMap::new();
        map.insert("file".to_string(), open_file_url);
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
pub fn open(location: &str, options: &OpenOptions) -> Result<HFile> {
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
    Ok(HFile::new(backend))
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
    fn missing_file_is_not_found() {
        let e = open("/nonexistent/x.bam", &OpenOptions::default()).unwrap_err();
        assert!(e.is_not_found());
        assert!(e.to_string().contains("/nonexistent/x.bam"));
    }
}
