//! A program's peak memory: run it to its end (or a time limit) and read the largest resident
//! set it had, as the kernel counted it (`wait4`'s `ru_maxrss`), for tests of memory bounds.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::corpus::{apply_env, EnvChange, Outcome};

/// What a measured run gave: its outcome and its peak resident set in KiB.
pub struct Measured {
    pub outcome: Outcome,
    pub peak_kib: u64,
    pub took: Duration,
}

/// Runs `program args` in `dir` with stdin closed and `env` applied; an error if it does not
/// end within `timeout` (it is then killed).
pub fn run_measured(
    program: &Path,
    dir: &Path,
    args: &[String],
    env: &[EnvChange],
    timeout: Duration,
) -> Result<Measured, String> {
    // Output goes to files, not pipes: a pipe nobody reads while waiting could block the child.
    let tmp = crate::corpus::scratch_dir()?;
    let (out_path, err_path) = (tmp.join("out"), tmp.join("err"));
    let out_file = fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let err_file = fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let mut command = crate::command(program);
    apply_env(&mut command, env);
    let start = Instant::now();
    let child = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let pid = child.id() as libc::pid_t;
    // The child is reaped here, with its resource use; `child` is never waited on.
    let (status, usage) = loop {
        let mut status: libc::c_int = 0;
        // SAFETY: plain out-parameters for wait4 on our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break (status, usage);
        }
        if got < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if start.elapsed() > timeout {
            // SAFETY: the child has not been reaped, so the pid is still ours.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            let _ = fs::remove_dir_all(&tmp);
            return Err(format!("timed out after {}s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    drop(child);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let stdout = fs::read(&out_path).map_err(|e| e.to_string())?;
    let stderr = fs::read(&err_path).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(&tmp);
    Ok(Measured {
        outcome: Outcome {
            code,
            stdout,
            stderr,
        },
        // Linux counts ru_maxrss in KiB.
        peak_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        took,
    })
}
