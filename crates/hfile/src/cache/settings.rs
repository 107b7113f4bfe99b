//! Where the cache lives, how big it may grow, and whether it is used, from the environment
//! (`HTS_CACHE`, `HTS_CACHE_MAX`, `XDG_CACHE_HOME`, `HOME`) and the command line (`--no-cache`).

use std::path::PathBuf;

use super::Cache;

/// The default size cap: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// How to open the cache. Start from [`Settings::from_env`], then apply command-line options:
///
/// ```
/// let mut settings = hfile::cache::Settings::from_vars(|name| match name {
///     "HOME" => Some("/home/me".to_string()),
///     "HTS_CACHE_MAX" => Some("500M".to_string()),
///     _ => None,
/// });
/// assert_eq!(settings.dir, Some("/home/me/.cache/hts".into()));
/// assert_eq!(settings.max_bytes, 500 << 20);
/// let no_cache = true; // --no-cache
/// if no_cache {
///     settings.enabled = false;
/// }
/// assert!(settings.open().is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// False for `HTS_CACHE=off` (or `0`, `no`, `false`) or `--no-cache`.
    pub enabled: bool,
    /// `$XDG_CACHE_HOME/hts`, else `$HOME/.cache/hts`; `None` when neither is set to an
    /// absolute path (the cache is then off: it never goes in the working directory).
    pub dir: Option<PathBuf>,
    /// `HTS_CACHE_MAX` (bytes, or with a K, M, G or T suffix), else [`DEFAULT_MAX_BYTES`].
    pub max_bytes: u64,
    /// Problems found in the environment (an unparsable `HTS_CACHE_MAX`), for the caller to
    /// report.
    pub warnings: Vec<String>,
}

impl Settings {
    /// The settings the process environment gives.
    pub fn from_env() -> Settings {
        Settings::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings given by the variables `var` returns (for tests and embedding).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Settings {
        let enabled = !var("HTS_CACHE").is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "off" | "0" | "no" | "false"
            )
        });
        // The XDG base directory spec says relative paths are to be ignored.
        let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let dir = absolute("XDG_CACHE_HOME")
            .map(|d| d.join("hts"))
            .or_else(|| absolute("HOME").map(|h| h.join(".cache").join("hts")));
        let mut warnings = Vec::new();
        let max_bytes = match var("HTS_CACHE_MAX") {
            None => DEFAULT_MAX_BYTES,
            Some(text) => parse_size(&text).unwrap_or_else(|| {
                warnings.push(format!(
                    "ignoring HTS_CACHE_MAX={text:?}: expected bytes, or a number with K, M, G or T; \
                     using {DEFAULT_MAX_BYTES}"
                ));
                DEFAULT_MAX_BYTES
            }),
        };
        Settings {
            enabled,
            dir,
            max_bytes,
            warnings,
        }
    }

    /// The cache these settings describe; `None` when it is disabled, has nowhere to live, or
    /// may hold nothing (a cap of 0).
    pub fn open(&self) -> Option<Cache> {
        if !self.enabled || self.max_bytes == 0 {
            return None;
        }
        Some(Cache::new(self.dir.clone()?, self.max_bytes))
    }
}

/// Parses a size: plain bytes, or a number with a K, M, G or T suffix (powers of 1024, case
/// and a trailing `B` or `iB` ignored).
///
/// ```
/// use hfile::cache::parse_size;
/// assert_eq!(parse_size("2G"), Some(2 << 30));
/// assert_eq!(parse_size("1.5k"), Some(1536));
/// assert_eq!(parse_size("100MiB"), Some(100 << 20));
/// assert_eq!(parse_size("12345"), Some(12345));
/// assert_eq!(parse_size("lots"), None);
/// ```
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (number, shift) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 10),
        'm' => (&t[..t.len() - 1], 20),
        'g' => (&t[..t.len() - 1], 30),
        't' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let number = number.trim();
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(1u64 << shift);
    }
    let x: f64 = number.parse().ok()?;
    let bytes = x * (1u64 << shift) as f64;
    (x.is_finite() && x >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Settings {
        Settings::from_vars(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn location() {
        let s = settings(&[("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/u")]);
        assert_eq!(s.dir, Some(PathBuf::from("/x/cache/hts")));
        let s = settings(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/u")]);
        assert_eq!(s.dir, Some(PathBuf::from("/home/u/.cache/hts")));
        // Nowhere to put it: off, never the working directory.
        let s = settings(&[("HOME", "")]);
        assert_eq!(s.dir, None);
        assert!(s.open().is_none());
    }

    #[test]
    fn switches_and_sizes() {
        for off in ["off", "OFF", "0", "no", "false"] {
            let s = settings(&[("HOME", "/h"), ("HTS_CACHE", off)]);
            assert!(!s.enabled && s.open().is_none(), "{off}");
        }
        let s = settings(&[("HOME", "/h"), ("HTS_CACHE", "on")]);
        assert!(s.enabled);
        assert_eq!(s.open().unwrap().max_bytes(), DEFAULT_MAX_BYTES);
        let s = settings(&[("HOME", "/h"), ("HTS_CACHE_MAX", "10k")]);
        assert_eq!(s.max_bytes, 10240);
        let s = settings(&[("HOME", "/h"), ("HTS_CACHE_MAX", "ten")]);
        assert_eq!(s.max_bytes, DEFAULT_MAX_BYTES);
        assert!(s.warnings[0].contains("HTS_CACHE_MAX"), "{:?}", s.warnings);
        let s = settings(&[("HOME", "/h"), ("HTS_CACHE_MAX", "0")]);
        assert!(s.open().is_none());
        assert_eq!(parse_size("3T"), Some(3 << 40));
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("k"), None);
    }
}
