//! One process of `cargo xtask mutate`, bounded in time and address space, and what a mutant's
//! run of hts comes to beside samtools' or tabix's on the same mutant and the undamaged file's
//! output.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address space a process may map (`ulimit -v`): a hostile length must fail, not swap.
const ADDRESS_SPACE: u64 = 4 << 30;

/// Output kept of a process; the rest is read and dropped (a mutant can make a lot of it).
const KEPT: usize = 64 << 20;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed at the time limit.
    Timeout,
}

/// A finished process.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) exit: Exit,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

impl Run {
    pub(crate) fn ok(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// samtools/tabix succeeded: exit 0 and no htslib error logged (htslib takes some
    /// failures, a damaged container header among them, for the end of the file).
    fn tool_ok(&self) -> bool {
        self.ok() && !String::from_utf8_lossy(&self.stderr).contains("[E::")
    }

    /// The last line it wrote to standard error (its error line).
    pub(crate) fn last_error_line(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    }
}

/// Runs `program args` in `dir` with standard input closed, killed after `limit`.
pub(crate) fn run(
    program: &Path,
    args: &[String],
    dir: &Path,
    limit: Duration,
) -> Result<Run, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut p) = pipe {
                let mut buf = [0u8; 64 << 10];
                while let Ok(n) = p.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = KEPT.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buf[..room]);
                }
            }
            kept
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let exit = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                use std::os::unix::process::ExitStatusExt;
                break match (status.code(), status.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(s)) => Exit::Signal(s),
                    (None, None) => Exit::Signal(0),
                };
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Exit::Timeout;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("waiting for {}: {e}", program.display())),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Run {
        exit,
        stdout,
        stderr,
    })
}

/// What one run of hts on a mutant comes to, from harmless to the defects looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Class {
    /// Same exit and, on success, the same output as samtools/tabix.
    Identical,
    /// Both exit 0 with the same output, missing records of the undamaged file: hts loses
    /// what samtools/tabix loses, no more.
    SameLoss,
    /// Both fail.
    BothFail,
    /// hts prints the undamaged file's output where samtools/tabix fails or prints less.
    Recovers,
    /// Both succeed with different output, but hts lacks nothing samtools/tabix found.
    Differs,
    /// hts fails where samtools/tabix exits 0 having printed something else than the undamaged
    /// output (it misreads the damage; hts refuses it).
    Refuses,
    /// hts fails where samtools/tabix prints the undamaged output (a regression to look at).
    HtsFails,
    /// hts fails with an error line that does not name the input file.
    Nameless,
    /// hts exits 0 with records of the undamaged file missing that samtools/tabix found (or
    /// that it failed on): the defect looked for.
    Lost,
    /// hts panicked or died of a signal.
    Panic,
    /// hts ran past the time limit.
    Hang,
}

impl Class {
    pub(crate) const ALL: [Class; 11] = [
        Class::Identical,
        Class::SameLoss,
        Class::BothFail,
        Class::Recovers,
        Class::Differs,
        Class::Refuses,
        Class::HtsFails,
        Class::Nameless,
        Class::Lost,
        Class::Panic,
        Class::Hang,
    ];

    /// A defect: the campaign fails when one occurs.
    pub(crate) fn is_defect(self) -> bool {
        matches!(
            self,
            Class::Nameless | Class::Lost | Class::Panic | Class::Hang
        )
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Class::Identical => "identical",
            Class::SameLoss => "same loss",
            Class::BothFail => "both fail",
            Class::Recovers => "hts whole",
            Class::Differs => "differs",
            Class::Refuses => "refuses",
            Class::HtsFails => "hts fails",
            Class::Nameless => "NAMELESS",
            Class::Lost => "LOST",
            Class::Panic => "PANIC",
            Class::Hang => "HANG",
        }
    }
}

/// How a record of the output is known: by its first `n` tab-separated fields (a SAM line by
/// its name and flags: a record whose damaged data decodes to other values is there, not
/// lost), or, with 0, by the whole line.
#[derive(Clone, Copy)]
pub(crate) struct Key(pub(crate) usize);

impl Key {
    fn of(self, line: &[u8]) -> &[u8] {
        if self.0 == 0 {
            return line;
        }
        let mut tabs = line.iter().enumerate().filter(|(_, &b)| b == b'\t');
        match tabs.nth(self.0 - 1) {
            Some((i, _)) => &line[..i],
            None => line,
        }
    }
}

/// Classifies hts's run against the tool's on the same mutant; `undamaged` is the tool's
/// output on the undamaged input, `names` the file names an error line may name, `key` how a
/// record is known.
pub(crate) fn classify(hts: &Run, tool: &Run, undamaged: &[u8], names: &[&str], key: Key) -> Class {
    let panicked = String::from_utf8_lossy(&hts.stderr).contains("panicked");
    match hts.exit {
        Exit::Timeout => return Class::Hang,
        Exit::Signal(_) | Exit::Code(101) => return Class::Panic,
        _ if panicked => return Class::Panic,
        _ => {}
    }
    if !hts.ok() {
        let line = hts.last_error_line();
        if !names.iter().any(|n| line.contains(n)) {
            return Class::Nameless;
        }
        return match (tool.tool_ok(), tool.stdout == undamaged) {
            (true, true) => Class::HtsFails,
            (true, false) => Class::Refuses,
            _ => Class::BothFail,
        };
    }
    if tool.ok() && hts.stdout == tool.stdout {
        return match missing(undamaged, &hts.stdout, key).is_empty() {
            true => Class::Identical,
            false => Class::SameLoss,
        };
    }
    let tool_ok = tool.tool_ok();
    if hts.stdout == undamaged {
        return Class::Recovers;
    }
    // Lines of the undamaged output hts lacks; of those, the ones the tool found, when it
    // succeeded (what it could not find is no loss of hts's).
    let mut missing = missing(undamaged, &hts.stdout, key);
    if tool_ok {
        let found = lines(&tool.stdout, key);
        missing.retain(|l, _| found.contains_key(l));
    }
    if missing.is_empty() {
        Class::Differs
    } else {
        Class::Lost
    }
}

/// The records of `whole` that `got` lacks (each as often as it lacks it), by `key`.
fn missing<'a>(whole: &'a [u8], got: &[u8], key: Key) -> HashMap<&'a [u8], usize> {
    let mut out = lines(whole, key);
    for l in got.split_inclusive(|&b| b == b'\n') {
        if let Some(n) = out.get_mut(key.of(l)) {
            *n = n.saturating_sub(1);
        }
    }
    out.retain(|_, n| *n > 0);
    out
}

/// The records of `text` by `key` and how often each occurs.
fn lines(text: &[u8], key: Key) -> HashMap<&[u8], usize> {
    let mut out = HashMap::new();
    for l in text.split_inclusive(|&b| b == b'\n') {
        *out.entry(key.of(l)).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, out: &str, err: &str) -> Run {
        Run {
            exit: Exit::Code(code),
            stdout: out.as_bytes().to_vec(),
            stderr: err.as_bytes().to_vec(),
        }
    }

    #[test]
    fn runs_are_classed_against_the_tool_and_the_undamaged_output() {
        let whole = "a\nb\nc\n";
        let c = |h: &Run, t: &Run| classify(h, t, whole.as_bytes(), &["x.cram"], Key(0));
        assert_eq!(
            c(&run(0, "a\nb\n", ""), &run(0, "a\nb\n", "")),
            Class::SameLoss
        );
        assert_eq!(c(&run(0, whole, ""), &run(0, whole, "")), Class::Identical);
        let logged = run(0, "a\n", "[E::x] bad");
        assert_eq!(c(&run(0, "a\n", ""), &logged), Class::SameLoss);
        assert_eq!(c(&run(0, "", ""), &logged), Class::Lost);
        assert_eq!(c(&run(1, "", "x.cram: bad"), &logged), Class::BothFail);
        assert_eq!(c(&run(0, "a\nb\n", ""), &run(1, "", "bad")), Class::Lost);
        assert_eq!(c(&run(0, "a\n", ""), &run(0, "a\nb\n", "")), Class::Lost);
        assert_eq!(
            c(&run(0, "a\nb\nb\n", ""), &run(0, "a\nb\n", "")),
            Class::Differs
        );
        assert_eq!(c(&run(0, whole, ""), &run(1, "", "")), Class::Recovers);
        assert_eq!(
            c(&run(1, "", "x.cram: bad at byte 9"), &run(1, "", "")),
            Class::BothFail
        );
        let bad = run(1, "", "x.cram: bad");
        assert_eq!(c(&bad, &run(0, "a\n", "")), Class::Refuses);
        assert_eq!(c(&bad, &run(0, whole, "")), Class::HtsFails);
        assert_eq!(
            c(&run(1, "", "bad block"), &run(1, "", "")),
            Class::Nameless
        );
        assert_eq!(c(&run(101, "", ""), &run(1, "", "")), Class::Panic);
        // Known by name and flags, a record whose other fields changed is there.
        let sam = "r1\t0\tc\t5\nr2\t16\tc\t9\n";
        let keyed = |h: &str, t: &Run| classify(&run(0, h, ""), t, sam.as_bytes(), &[], Key(2));
        let failed = run(1, "", "");
        assert_eq!(
            keyed("r1\t0\tc\t6\nr2\t16\tc\t9\n", &failed),
            Class::Differs
        );
        assert_eq!(keyed("r1\t0\tc\t5\n", &failed), Class::Lost);
        let hung = Run {
            exit: Exit::Timeout,
            ..run(0, "", "")
        };
        assert_eq!(c(&hung, &run(1, "", "")), Class::Hang);
    }
}
