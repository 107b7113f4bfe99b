//! The tools of the S3 test bed, installed on first use and cached: s3s-fs (from crates.io with
//! `cargo install`) and boto3 (from PyPI, in a virtual environment).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{ACCESS_KEY, REGION, SECRET_KEY};

/// The s3s-fs release known to build with this toolchain (newer ones need a newer rustc).
pub const S3S_FS_VERSION: &str = "0.14.1";
/// The boto3 release the pre-signed URL checks were written against.
pub const BOTO3_VERSION: &str = "1.44.8";

pub use crate::tools::tools_dir;
use crate::tools::INSTALLING;

/// The s3s-fs binary, installed with `cargo install` (about 3 minutes) when not yet cached.
pub fn s3s_fs() -> Result<PathBuf, String> {
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let root = tools_dir().join(format!("s3s-fs-{S3S_FS_VERSION}"));
    let binary = root.join("bin/s3s-fs");
    if binary.is_file() {
        return Ok(binary);
    }
    eprintln!(
        "testkit: installing s3s-fs {S3S_FS_VERSION} into {} (once; about 3 minutes)",
        root.display()
    );
    // Built beside the final folder and renamed into place, so that a concurrent or broken
    // install never leaves a half-made binary where it would be used.
    let staging = tools_dir().join(format!("s3s-fs-{S3S_FS_VERSION}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "install",
            &format!("s3s-fs@{S3S_FS_VERSION}"),
            "--features",
            "binary",
            "--locked",
            "--quiet",
        ])
        .arg("--root")
        .arg(&staging)
        .arg("--target-dir")
        .arg(staging.join("build"))
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run cargo install: {e}"))?;
    let built = staging.join("bin/s3s-fs");
    if !status.success() || !built.is_file() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(format!(
            "installing s3s-fs failed ({status}); by hand: cargo install s3s-fs@{S3S_FS_VERSION} \
             --features binary --locked --root {}",
            root.display()
        ));
    }
    let _ = std::fs::remove_dir_all(staging.join("build"));
    // Another process may have finished first: then its copy is used.
    if std::fs::rename(&staging, &root).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!("{} is missing after the install", binary.display()))
    }
}

/// A Python with boto3, in a virtual environment made (from PyPI) when not yet cached.
pub fn boto3_python() -> Result<PathBuf, String> {
    let venv = crate::tools::python_venv(
        &format!("boto3-{BOTO3_VERSION}"),
        &[&format!("boto3=={BOTO3_VERSION}")],
        "import boto3",
    )?;
    Ok(venv.join("bin/python"))
}

/// Pre-signed GET URLs made by boto3 (an independent SigV4 implementation) for `keys` of
/// `bucket`, valid for `expires` seconds, for the given endpoint and path-style addressing.
pub fn presign(
    python: &Path,
    endpoint: &str,
    bucket: &str,
    keys: &[&str],
    expires: u32,
) -> Result<Vec<String>, String> {
    const SCRIPT: &str = "
import sys, boto3
from botocore.config import Config
endpoint, access, secret, region, bucket, expires = sys.argv[1:7]
s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=access,
                  aws_secret_access_key=secret, region_name=region,
                  config=Config(signature_version='s3v4', s3={'addressing_style': 'path'}))
for key in sys.argv[7:]:
    print(s3.generate_presigned_url('get_object', Params={'Bucket': bucket, 'Key': key},
                                    ExpiresIn=int(expires)))
";
    let out = Command::new(python)
        .args([
            "-c", SCRIPT, endpoint, ACCESS_KEY, SECRET_KEY, REGION, bucket,
        ])
        .arg(expires.to_string())
        .args(keys)
        .env_remove("AWS_PROFILE")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "boto3 generate_presigned_url failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let urls: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    if urls.len() != keys.len() {
        return Err(format!(
            "boto3 printed {} URLs for {} keys",
            urls.len(),
            keys.len()
        ));
    }
    Ok(urls)
}
