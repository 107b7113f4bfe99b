//! The environment and the AWS CLI's shared files (`~/.aws/credentials`, `~/.aws/config`), read
//! the way the AWS CLI and boto3 read them. Everything here takes an [`Env`] rather than the
//! process environment, so that tests can describe a whole machine without touching globals.

use std::collections::HashMap;
use std::path::PathBuf;

/// A snapshot of environment variables (and the home folder) to resolve settings from.
/// `Debug` shows the names only: values include secret keys and tokens.
#[derive(Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("Env").field("vars", &names).finish()
    }
}

impl Env {
    /// The process environment.
    pub fn process() -> Env {
        Env {
            vars: std::env::vars().collect(),
        }
    }

    /// An environment made of these variables only (for tests and embedding).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Env {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// A variable's value; an empty value counts as unset, as the AWS CLI treats it.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// The first of `names` that is set.
    pub fn first(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|n| self.var(n))
    }

    fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`.
    pub fn credentials_file(&self) -> Option<PathBuf> {
        self.path_var("AWS_SHARED_CREDENTIALS_FILE")
            .or_else(|| self.home().map(|h| h.join(".aws").join("credentials")))
    }

    /// `AWS_CONFIG_FILE`, else `~/.aws/config`.
    pub fn config_file(&self) -> Option<PathBuf> {
        self.path_var("AWS_CONFIG_FILE")
            .or_else(|| self.home().map(|h| h.join(".aws").join("config")))
    }

    fn path_var(&self, name: &str) -> Option<PathBuf> {
        let value = self.var(name)?;
        // `~/x` as the CLI expands it.
        match (value.strip_prefix("~/"), self.home()) {
            (Some(rest), Some(home)) => Some(home.join(rest)),
            _ => Some(PathBuf::from(value)),
        }
    }
}

/// The sections of one INI-style AWS file: section name -> key -> value. Keys of a nested block
/// (`s3 =` followed by indented `addressing_style = path`) are stored as `s3.addressing_style`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IniFile {
    sections: HashMap<String, HashMap<String, String>>,
}

impl IniFile {
    /// Parses the text of a credentials or config file. Malformed lines are ignored, as the AWS
    /// CLI's parser would reject the file with a message we cannot improve on; the setting they
    /// held is then simply absent.
    pub fn parse(text: &str) -> IniFile {
        let mut file = IniFile::default();
        let mut section: Option<String> = None;
        let mut parent: Option<String> = None;
        for raw in text.lines() {
            let indented = raw.starts_with([' ', '\t']);
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = Some(name.split_whitespace().collect::<Vec<_>>().join(" "));
                parent = None;
                continue;
            }
            let (Some(current), Some((key, value))) = (&section, line.split_once('=')) else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim().to_string();
            let entries = file.sections.entry(current.clone()).or_default();
            match (&parent, indented) {
                (Some(p), true) => {
                    entries.insert(format!("{p}.{key}"), value);
                }
                _ => {
                    parent = value.is_empty().then(|| key.clone());
                    entries.insert(key, value);
                }
            }
        }
        file
    }

    /// Reads and parses a file; `None` when it does not exist or cannot be read.
    pub fn read(path: &std::path::Path) -> Option<IniFile> {
        std::fs::read_to_string(path)
            .ok()
            .map(|t| IniFile::parse(&t))
    }

    /// The settings of a section, if present.
    pub fn section(&self, name: &str) -> Option<&HashMap<String, String>> {
        self.sections.get(name)
    }
}

/// One profile's settings, merged from the credentials file (first) and the config file.
/// `Debug` shows the setting names only: values include secret keys.
#[derive(Clone, Default)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// Which files had a section for it.
    pub found: bool,
    settings: HashMap<String, String>,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.settings.keys().collect();
        names.sort();
        f.debug_struct("Profile")
            .field("name", &self.name)
            .field("found", &self.found)
            .field("settings", &names)
            .finish()
    }
}

impl Profile {
    /// Loads profile `name` from the shared files `env` points at.
    pub fn load(env: &Env, name: &str) -> Profile {
        let credentials = env.credentials_file().and_then(|p| IniFile::read(&p));
        let config = env.config_file().and_then(|p| IniFile::read(&p));
        Profile::from_files(name, credentials.as_ref(), config.as_ref())
    }

    /// Merges a profile from already parsed files.
    pub fn from_files(
        name: &str,
        credentials: Option<&IniFile>,
        config: Option<&IniFile>,
    ) -> Profile {
        let mut profile = Profile {
            name: name.to_string(),
            ..Profile::default()
        };
        // The config file names profiles `[profile NAME]`; `[default]` may appear either way.
        let config_names = if name == "default" {
            vec!["default".to_string(), "profile default".to_string()]
        } else {
            vec![format!("profile {name}")]
        };
        let sections = credentials.and_then(|c| c.section(name)).into_iter().chain(
            config_names
                .iter()
                .filter_map(|n| config.and_then(|c| c.section(n))),
        );
        for section in sections {
            profile.found = true;
            for (k, v) in section {
                profile
                    .settings
                    .entry(k.clone())
                    .or_insert_with(|| v.clone());
            }
        }
        // `services = NAME` points at a `[services NAME]` section with per-service settings.
        let services = profile
            .get("services")
            .and_then(|name| config?.section(&format!("services {name}")));
        if let Some(endpoint) = services.and_then(|s| s.get("s3.endpoint_url")) {
            profile
                .settings
                .insert("services.s3.endpoint_url".to_string(), endpoint.clone());
        }
        profile
    }

    /// A setting (`region`, `aws_access_key_id`, `s3.addressing_style`, ...), if set and non-empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_comments_and_nested_keys() {
        let f = IniFile::parse(
            "# comment\n[default]\naws_access_key_id = AK\n; another\nregion=eu-west-1\n\
             s3 =\n    addressing_style = path\n    endpoint_url = http://x\nother = 1\n\
             [profile  dev ]\nregion = us-west-2\n  stray = nested-without-parent\n",
        );
        let d = f.section("default").unwrap();
        assert_eq!(d["aws_access_key_id"], "AK");
        assert_eq!(d["region"], "eu-west-1");
        assert_eq!(d["s3.addressing_style"], "path");
        assert_eq!(d["s3.endpoint_url"], "http://x");
        assert_eq!(d["other"], "1");
        let dev = f.section("profile dev").unwrap();
        assert_eq!(dev["region"], "us-west-2");
        assert_eq!(dev["stray"], "nested-without-parent");
    }

    #[test]
    fn profile_merges_credentials_before_config() {
        let creds = IniFile::parse("[dev]\naws_access_key_id = FROMCREDS\n");
        let config = IniFile::parse(
            "[profile dev]\naws_access_key_id = FROMCONFIG\nregion = ap-south-1\n[dev]\nregion = wrong\n",
        );
        let p = Profile::from_files("dev", Some(&creds), Some(&config));
        assert!(p.found);
        assert_eq!(p.get("aws_access_key_id"), Some("FROMCREDS"));
        assert_eq!(p.get("region"), Some("ap-south-1"));
        let none = Profile::from_files("nope", Some(&creds), Some(&config));
        assert!(!none.found);
        let default = Profile::from_files(
            "default",
            None,
            Some(&IniFile::parse("[profile default]\nregion = r1\n")),
        );
        assert_eq!(default.get("region"), Some("r1"));
    }

    #[test]
    fn services_section() {
        let config = IniFile::parse(
            "[profile p]\nservices = local\n[services local]\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n",
        );
        let p = Profile::from_files("p", None, Some(&config));
        assert_eq!(
            p.get("services.s3.endpoint_url"),
            Some("http://127.0.0.1:9000")
        );
    }

    #[test]
    fn env_paths_and_empty_values() {
        let env = Env::from_pairs([
            ("HOME", "/home/u"),
            ("AWS_CONFIG_FILE", "~/cfg"),
            ("AWS_REGION", " "),
        ]);
        assert_eq!(env.config_file(), Some(PathBuf::from("/home/u/cfg")));
        assert_eq!(
            env.credentials_file(),
            Some(PathBuf::from("/home/u/.aws/credentials"))
        );
        assert_eq!(env.var("AWS_REGION"), None);
    }
}
