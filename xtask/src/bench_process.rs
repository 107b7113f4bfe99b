//! Running one benchmarked process for `cargo xtask bench-local`: a verification pass that
//! digests its whole output and takes its peak RSS, and timed runs into a pipe read by another
//! process or into `/dev/null`, with the CPU time `wait4` reports.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Where a timed run's standard output goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sink {
    /// A pipe read by another process (`cat > /dev/null`): what users see.
    Pipe,
    /// `/dev/null`: writes cost nothing.
    Null,
}

/// One timed process.
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
}

/// What a verification pass saw on stdout.
#[derive(PartialEq, Eq, Debug)]
pub(crate) struct Output {
    pub(crate) bytes: u64,
    digest: u64,
    /// The text itself when it is short (a count).
    pub(crate) short: Option<String>,
}

/// A digest of a whole output: std's SipHash fed the bytes as a stream (std is built optimized,
/// so this keeps up with a pipe even in the xtask's debug build; only equality matters).
#[derive(Default)]
struct Digest {
    hasher: std::collections::hash_map::DefaultHasher,
    bytes: u64,
}

impl Digest {
    fn update(&mut self, data: &[u8]) {
        use std::hash::Hasher;
        self.bytes += data.len() as u64;
        self.hasher.write(data);
    }

    fn finish(self) -> u64 {
        use std::hash::Hasher;
        self.hasher.finish()
    }
}

/// Waits for `pid` and returns its resource use (`wait4` gives the child's own peak RSS, which
/// `std::process` does not).
fn wait_rusage(pid: u32) -> Result<(i32, libc::rusage), String> {
    let mut status = 0;
    // SAFETY: rusage is plain old data, fully written by wait4 on success.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a local status and rusage; pid is our child.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {err}"));
        }
    }
}

/// GNU time, when installed: the peak RSS a process reports through `wait4` includes the memory
/// of the process that started it (the kernel carries it across `exec`), so a small launcher is
/// needed for a true figure.
fn gnu_time() -> Option<&'static Path> {
    static TIME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    TIME.get_or_init(|| {
        let time = PathBuf::from("/usr/bin/time");
        let ok = Command::new(&time)
            .args(["-f", "%M", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(time)
    })
    .as_deref()
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// Starts `program args` with `stdout`, under GNU time when `rss_file` is given.
fn spawn(
    program: &Path,
    args: &[String],
    stdout: Stdio,
    rss_file: Option<&Path>,
) -> Result<std::process::Child, String> {
    let mut command = match (rss_file, gnu_time()) {
        (Some(file), Some(time)) => {
            let mut c = Command::new(time);
            c.arg("-f").arg("%M").arg("-o").arg(file).arg(program);
            c
        }
        _ => Command::new(program),
    };
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))
}

pub(crate) fn check_status(status: i32, program: &Path, args: &[String]) -> Result<(), String> {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    Err(format!(
        "{} {} failed (wait status {status:#x})",
        program.display(),
        args.join(" ")
    ))
}

/// The verification pass: runs `program args` once under GNU time (for a true peak RSS, in
/// KiB) and digests its stdout, read here.
pub(crate) fn verify_once(program: &Path, args: &[String]) -> Result<(Output, u64), String> {
    let rss_file = std::env::temp_dir().join(format!("bench-local-rss-{}", std::process::id()));
    let mut child = spawn(program, args, Stdio::piped(), Some(&rss_file))?;
    let mut digest = Digest::default();
    let mut short = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = stdout.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            if short.len() < 4096 {
                short.extend_from_slice(&buf[..n.min(4096)]);
            }
            digest.update(&buf[..n]);
        }
    }
    let (status, usage) = wait_rusage(child.id())?;
    check_status(status, program, args)?;
    let bytes = digest.bytes;
    let output = Output {
        bytes,
        digest: digest.finish(),
        short: (bytes < 4096).then(|| String::from_utf8_lossy(&short).into_owned()),
    };
    // Linux reports kilobytes, as GNU time does.
    let max_rss_kib = match std::fs::read_to_string(&rss_file) {
        Ok(text) => {
            let _ = std::fs::remove_file(&rss_file);
            text.trim().parse().unwrap_or(0)
        }
        Err(_) => usage.ru_maxrss as u64,
    };
    Ok((output, max_rss_kib))
}

/// One timed run: `program args` started directly (no GNU time, whose own start-up would weigh
/// on the start-up cases), its stdout into `sink`; with a pipe, the time runs until the
/// consumer has read everything and exited.
pub(crate) fn time_once(program: &Path, args: &[String], sink: Sink) -> Result<Sample, String> {
    let start = Instant::now();
    let (status, usage) = match sink {
        Sink::Null => {
            let child = spawn(program, args, Stdio::null(), None)?;
            wait_rusage(child.id())?
        }
        Sink::Pipe => {
            let mut child = spawn(program, args, Stdio::piped(), None)?;
            let stdout = child.stdout.take().ok_or("no stdout pipe")?;
            let consumer = Command::new("cat")
                .stdin(Stdio::from(stdout))
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run cat: {e}"))?;
            let waited = wait_rusage(child.id())?;
            let (cat_status, _) = wait_rusage(consumer.id())?;
            check_status(cat_status, Path::new("cat"), &[])?;
            waited
        }
    };
    let wall = start.elapsed().as_secs_f64();
    check_status(status, program, args)?;
    Ok(Sample {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
    })
}

#[cfg(test)]
mod tests {
    use super::Digest;

    fn digest(pieces: &[&[u8]]) -> (u64, u64) {
        let mut d = Digest::default();
        for p in pieces {
            d.update(p);
        }
        let n = d.bytes;
        (d.finish(), n)
    }

    #[test]
    fn digest_is_the_same_however_the_stream_is_cut() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let whole = digest(&[&data]);
        assert_eq!(whole.1, 10_000);
        for cut in [1, 7, 8, 9, 4096, 9_999] {
            assert_eq!(digest(&[&data[..cut], &data[cut..]]), whole, "cut at {cut}");
        }
        let mut other = data.clone();
        other[5_000] ^= 1;
        assert_ne!(digest(&[&other]).0, whole.0);
    }
}
