//! AWS credentials in the AWS CLI's order: the environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the profile (`AWS_PROFILE`, else `default`)
//! in the shared credentials file and the config file. No credentials at all means unsigned
//! requests (public buckets); half a pair, or a profile that names a mechanism this crate does not
//! run, is an error rather than a silent fall back to anonymous access.

use std::fmt;

use super::profile::{Env, Profile};
use super::sigv4::Secret;

/// An access key pair, with a session token for temporary credentials.
#[derive(Clone)]
pub struct Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Secret,
    /// The session token of temporary credentials.
    pub session_token: Option<Secret>,
    /// Where they came from, for messages: `environment` or `profile 'dev'`.
    pub source: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key)
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .field("source", &self.source)
            .finish()
    }
}

/// The name of the profile a request uses ([`profile_name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileName {
    /// The profile's name.
    pub name: String,
    /// True when the user named it (then it must exist); false for `default`.
    pub named: bool,
}

/// The profile a request uses: the one named in the URL (`s3://NAME@bucket/key`), else
/// `AWS_PROFILE` (or the older `AWS_DEFAULT_PROFILE`), else `default`.
pub fn profile_name(env: &Env, from_url: Option<&str>) -> ProfileName {
    match from_url.or_else(|| env.first(&["AWS_PROFILE", "AWS_DEFAULT_PROFILE"])) {
        Some(name) => ProfileName {
            name: name.to_string(),
            named: true,
        },
        None => ProfileName {
            name: "default".to_string(),
            named: false,
        },
    }
}

/// Settings in a profile that obtain credentials by means this crate does not implement.
const UNSUPPORTED: [(&str, &str); 5] = [
    ("credential_process", "credential_process"),
    ("sso_session", "AWS SSO"),
    ("sso_start_url", "AWS SSO"),
    ("role_arn", "an assumed role (role_arn)"),
    ("web_identity_token_file", "web identity federation"),
];

/// Resolves credentials. `profile` was loaded for the name [`profile_name`] gave; `explicit`
/// is true when that name came from the URL, whose profile then wins over the environment (as
/// `--profile` does for the AWS CLI).
pub fn resolve(
    env: &Env,
    profile: &Profile,
    named: bool,
    from_url: bool,
) -> Result<Option<Credentials>, String> {
    if !from_url {
        let key = env.var("AWS_ACCESS_KEY_ID");
        let secret = env.var("AWS_SECRET_ACCESS_KEY");
        match (key, secret) {
            (Some(key), Some(secret)) => {
                return Ok(Some(Credentials {
                    access_key_id: key.trim().to_string(),
                    secret_access_key: Secret::new(secret.trim()),
                    session_token: env
                        .first(&["AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"])
                        .map(|t| Secret::new(t.trim())),
                    source: "environment".to_string(),
                }))
            }
            (Some(_), None) => {
                return Err("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into())
            }
            (None, Some(_)) => {
                return Err("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".into())
            }
            (None, None) => {}
        }
    }
    if !profile.found {
        if named {
            return Err(format!(
                "the AWS profile '{}' is not in {} or {}",
                profile.name,
                shown(env.credentials_file()),
                shown(env.config_file())
            ));
        }
        return Ok(None);
    }
    let key = profile.get("aws_access_key_id");
    let secret = profile.get("aws_secret_access_key");
    match (key, secret) {
        (Some(key), Some(secret)) => Ok(Some(Credentials {
            access_key_id: key.to_string(),
            secret_access_key: Secret::new(secret),
            session_token: profile
                .get("aws_session_token")
                .or_else(|| profile.get("aws_security_token"))
                .map(Secret::new),
            source: format!("profile '{}'", profile.name),
        })),
        (Some(_), None) | (None, Some(_)) => Err(format!(
            "the AWS profile '{}' has only one of aws_access_key_id and aws_secret_access_key",
            profile.name
        )),
        (None, None) => match UNSUPPORTED.iter().find(|(k, _)| profile.get(k).is_some()) {
            Some((_, what)) => Err(format!(
                "the AWS profile '{}' obtains credentials through {what}, which hts does not run; \
                 export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN instead \
                 (e.g. from `aws configure export-credentials --format env`)",
                profile.name
            )),
            None => Ok(None),
        },
    }
}

fn shown(path: Option<std::path::PathBuf>) -> String {
    path.map(|p| p.display().to_string())
        .unwrap_or_else(|| "(no home folder)".to_string())
}

#[cfg(test)]
mod tests {
    use super::super::profile::IniFile;
    use super::*;

    fn profile(name: &str, creds: &str, config: &str) -> Profile {
        Profile::from_files(
            name,
            Some(&IniFile::parse(creds)),
            Some(&IniFile::parse(config)),
        )
    }

    #[test]
    fn environment_first_with_session_token() {
        let env = Env::from_pairs([
            ("AWS_ACCESS_KEY_ID", "AKENV"),
            ("AWS_SECRET_ACCESS_KEY", "secret-env"),
            ("AWS_SESSION_TOKEN", "tok"),
        ]);
        let p = profile(
            "default",
            "[default]\naws_access_key_id=AKFILE\naws_secret_access_key=s\n",
            "",
        );
        let c = resolve(&env, &p, false, false).unwrap().unwrap();
        assert_eq!(c.access_key_id, "AKENV");
        assert_eq!(c.secret_access_key.expose(), "secret-env");
        assert_eq!(c.session_token.as_ref().map(Secret::expose), Some("tok"));
        assert_eq!(c.source, "environment");
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("secret-env") && !shown.contains("tok\""),
            "{shown}"
        );
        // A profile named in the URL wins over the environment.
        let c = resolve(&env, &p, true, true).unwrap().unwrap();
        assert_eq!(c.access_key_id, "AKFILE");
    }

    #[test]
    fn profile_from_either_file() {
        let env = Env::default();
        let p = profile(
            "dev",
            "",
            "[profile dev]\naws_access_key_id = AKCFG\naws_secret_access_key = s2\naws_session_token = t2\n",
        );
        let c = resolve(&env, &p, true, false).unwrap().unwrap();
        assert_eq!(c.access_key_id, "AKCFG");
        assert_eq!(c.session_token.as_ref().map(Secret::expose), Some("t2"));
        assert_eq!(c.source, "profile 'dev'");
    }

    #[test]
    fn absent_partial_and_unsupported() {
        let env = Env::default();
        // Nothing anywhere: unsigned.
        assert!(resolve(&env, &profile("default", "", ""), false, false)
            .unwrap()
            .is_none());
        // A profile with only a region: unsigned too.
        assert!(resolve(
            &env,
            &profile("default", "", "[default]\nregion=x\n"),
            false,
            false
        )
        .unwrap()
        .is_none());
        let e = resolve(&env, &profile("dev", "", ""), true, false).unwrap_err();
        assert!(e.contains("'dev' is not in"), "{e}");
        let e = resolve(
            &env,
            &profile("default", "[default]\naws_access_key_id=A\n", ""),
            false,
            false,
        )
        .unwrap_err();
        assert!(e.contains("only one of"), "{e}");
        let e = resolve(
            &env,
            &profile("p", "", "[profile p]\ncredential_process = /bin/x\n"),
            true,
            false,
        )
        .unwrap_err();
        assert!(e.contains("credential_process"), "{e}");
        let half = Env::from_pairs([("AWS_ACCESS_KEY_ID", "A")]);
        assert!(resolve(&half, &profile("default", "", ""), false, false).is_err());
    }

    #[test]
    fn profile_names() {
        let env = Env::from_pairs([("AWS_PROFILE", "work")]);
        let named = |name: &str, named| ProfileName {
            name: name.to_string(),
            named,
        };
        assert_eq!(profile_name(&env, None), named("work", true));
        assert_eq!(profile_name(&env, Some("u")), named("u", true));
        assert_eq!(profile_name(&Env::default(), None), named("default", false));
    }
}
