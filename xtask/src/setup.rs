//! What the tests and benchmarks need from the system, installed when missing: with apt as root
//! (as on CI and a fresh Debian machine), otherwise an error naming the one command to run.
//! The Python tools (boto3, Snakemake) and s3s-fs are not here: testkit installs them into
//! `~/.cache/hts-tools` on first use.

use std::process::{Command, Stdio};

/// A Debian package and how to tell it is there.
pub struct Need {
    /// The package apt installs.
    pub package: &'static str,
    /// A command that succeeds when the package is usable.
    pub probe: &'static [&'static str],
}

/// samtools 1.16.1: the conformance-extra checks, the differential tests, the benchmarks.
pub const SAMTOOLS: Need = Need {
    package: "samtools",
    probe: &["samtools", "--version"],
};

/// tabix and bgzip 1.16: the tabix benchmarks and the corpus' `make.sh`.
pub const TABIX: Need = Need {
    package: "tabix",
    probe: &["tabix", "--version"],
};

/// nginx: the conformance corpus over a real third-party server.
pub const NGINX: Need = Need {
    package: "nginx-light",
    probe: &["nginx", "-v"],
};

/// Python's venv with pip: testkit makes the virtual environments for boto3 and Snakemake.
pub const PYTHON_VENV: Need = Need {
    package: "python3-venv",
    probe: &["python3", "-c", "import venv, ensurepip"],
};

/// What `cargo xtask test` needs.
pub const FOR_TESTS: &[Need] = &[SAMTOOLS, NGINX, PYTHON_VENV];

fn present(need: &Need) -> bool {
    let Some((program, args)) = need.probe.split_first() else {
        return true;
    };
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// Installs the packages of `needs` that are missing, or says which command would.
pub fn ensure(needs: &[Need]) -> Result<(), String> {
    let missing: Vec<&Need> = needs.iter().filter(|n| !present(n)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|n| n.package).collect();
    let command = format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    );
    let apt = Command::new("apt-get")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !(apt && is_root()) {
        return Err(format!(
            "missing: {}; install them first: sudo {command}",
            packages.join(", ")
        ));
    }
    println!("==> apt-get update && {command}");
    let script = format!("apt-get update -qq && DEBIAN_FRONTEND=noninteractive {command} -qq");
    let ok = Command::new("sh")
        .args(["-c", &script])
        .status()
        .is_ok_and(|s| s.success());
    let still: Vec<&str> = missing
        .iter()
        .filter(|n| !present(n))
        .map(|n| n.package)
        .collect();
    match (ok, still.is_empty()) {
        (true, true) => Ok(()),
        _ => Err(format!(
            "`{command}` did not make {} usable",
            if still.is_empty() {
                packages.join(", ")
            } else {
                still.join(", ")
            }
        )),
    }
}
