//! Tools from package registries that tests and demos need, installed on first use into a
//! cache folder and reused: Python packages in their own virtual environments (from PyPI).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The Snakemake release the cohort workflow is tested with (it needs Python 3.11 or newer).
pub const SNAKEMAKE_VERSION: &str = "9.27.1";

/// Where installed tools are kept between runs: `$HTS_TOOLS_DIR`, else
/// `$XDG_CACHE_HOME/hts-tools`, else `~/.cache/hts-tools`.
pub fn tools_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HTS_TOOLS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("hts-tools")
}

/// Installs are serialised within a process (tests run on several threads).
pub(crate) static INSTALLING: Mutex<()> = Mutex::new(());

fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cmd` with standard input closed; a failure becomes a message naming the program.
pub fn run_command(cmd: &mut Command) -> Result<(), String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status})"))
    }
}

fn run(program: &Path, args: &[&str]) -> Result<(), String> {
    run_command(Command::new(program).args(args)).map_err(|e| format!("{e}: {}", args.join(" ")))
}

/// A virtual environment `tools_dir()/NAME` holding `requirements` (pip specifiers), made with
/// `python3 -m venv` when `check` (a Python statement) fails in it. Returns the folder.
///
/// A virtual environment records its own path, so it is made in place; one that an
/// interrupted install left behind fails `check` and is made again.
pub fn python_venv(name: &str, requirements: &[&str], check: &str) -> Result<PathBuf, String> {
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let venv = tools_dir().join(name);
    let works = || succeeds(Command::new(venv.join("bin/python")).args(["-c", check]));
    if works() {
        return Ok(venv);
    }
    eprintln!(
        "testkit: installing {} into {} (once)",
        requirements.join(" "),
        venv.display()
    );
    let _ = std::fs::remove_dir_all(&venv);
    let mut pip = vec!["install", "--quiet", "--disable-pip-version-check"];
    pip.extend_from_slice(requirements);
    let made = run(
        Path::new("python3"),
        &["-m", "venv", &venv.display().to_string()],
    )
    .and_then(|()| run(&venv.join("bin/pip"), &pip));
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&venv);
        return Err(format!(
            "{e} (needs python3 with venv and pip, e.g. apt-get install python3-venv, and PyPI)"
        ));
    }
    if works() {
        Ok(venv)
    } else {
        Err(format!("'{check}' fails in {}", venv.display()))
    }
}

/// The `snakemake` program of [`SNAKEMAKE_VERSION`], installed from PyPI on first use.
pub fn snakemake() -> Result<PathBuf, String> {
    let python3_ok = succeeds(
        Command::new("python3").args(["-c", "import sys; sys.exit(sys.version_info < (3, 11))"]),
    );
    if !python3_ok {
        return Err("Snakemake needs python3 3.11 or newer on PATH".to_string());
    }
    let check =
        format!("import snakemake.common as c; assert c.__version__ == '{SNAKEMAKE_VERSION}'");
    let venv = python_venv(
        &format!("snakemake-{SNAKEMAKE_VERSION}"),
        &[&format!("snakemake=={SNAKEMAKE_VERSION}")],
        &check,
    )?;
    Ok(venv.join("bin/snakemake"))
}

/// What the Python package's tests need, pinned: pysam is their oracle, maturin builds the
/// wheel, pyarrow, polars, pandas and DuckDB take its Arrow stream, oxbow names its columns.
pub const PYTHON_TEST_REQUIREMENTS: &[&str] = &[
    "pysam==0.24.1",
    "pytest==9.2.0",
    "maturin==1.16.0",
    "pyarrow==26.0.1",
    "polars==2.1.0",
    "pandas==3.1.1",
    "duckdb==2.0.1",
    "oxbow==0.8.2",
];

/// The virtual environment of the Python package's tests and benchmark
/// ([`PYTHON_TEST_REQUIREMENTS`]), installed from PyPI on first use; its folder. The wheel
/// under test is installed into it by the caller.
pub fn python_test_venv() -> Result<PathBuf, String> {
    // The name changes with the requirements, so a new pin makes a new environment.
    let mut tag = 0u64;
    for r in PYTHON_TEST_REQUIREMENTS {
        for b in r.bytes() {
            tag = tag.wrapping_mul(31).wrapping_add(u64::from(b));
        }
    }
    let check = "import pysam, pytest, maturin, pyarrow, polars, pandas, duckdb, oxbow; \
                 assert pysam.__version__ == '0.24.1'";
    python_venv(
        &format!("python-tests-{:08x}", tag & 0xffff_ffff),
        PYTHON_TEST_REQUIREMENTS,
        check,
    )
}

/// The third-party CRAM corpus' registry half (fixtures/cram-thirdparty/REGISTRY.tsv: test
/// files of htsjdk, Picard, htslib, samtools and seven more projects, from Debian's source
/// archives and PyPI's sdists), laid out by `collect.py` in `tools_dir()/cram-thirdparty` on
/// first use: some 250 MB downloaded once, each archive and file checked against its SHA-256;
/// later calls find the layout's stamp and return at once. Needs samtools (it indexes the CRAMs
/// shipped without an index). Its folder.
pub fn cram_thirdparty() -> Result<PathBuf, String> {
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let dest = tools_dir().join("cram-thirdparty");
    let script = crate::workspace_root().join("fixtures/cram-thirdparty/collect.py");
    run_command(Command::new("python3").arg(&script).arg(&dest))?;
    Ok(dest)
}
