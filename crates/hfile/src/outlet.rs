//! Where output bytes leave the process, written the way that serves what the descriptor is.
//!
//! A pipe holds 64 KiB unless asked for more: a larger write blocks until the reader has
//! drained it, and while the writer then formats its next large piece the reader waits, so the
//! two take turns instead of running side by side. A pipe is therefore asked to hold 1 MiB, and
//! text is handed on in pieces of a quarter of what it holds; with worker threads (`-@`) a
//! writer thread, started once the output outgrows a piece, takes them through a bounded
//! queue, so that formatting never waits on a blocked write while the queue has room. A regular
//! file or `/dev/null` takes large writes at no cost; a terminal gets small ones, soon.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

/// What a descriptor writes to, as far as the size and timing of writes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pipe or a socket: a reader runs beside us, with a small buffer between.
    Pipe,
    /// A terminal: a person reads it.
    Terminal,
    /// `/dev/null`: writes cost nothing.
    Null,
    /// A regular file, or anything else: large writes are cheapest.
    File,
}

/// Linux's `/dev/null` is character device 1:3.
const DEV_NULL: (u64, u64) = (1, 3);

impl Kind {
    /// What `file` is (`fstat`).
    pub fn of(file: &File) -> Kind {
        if file.is_terminal() {
            return Kind::Terminal;
        }
        let Ok(meta) = file.metadata() else {
            return Kind::File;
        };
        let ty = meta.file_type();
        if ty.is_fifo() || ty.is_socket() {
            Kind::Pipe
        } else if ty.is_char_device() && (major(meta.rdev()), minor(meta.rdev())) == DEV_NULL {
            Kind::Null
        } else {
            Kind::File
        }
    }

    /// How much text to gather before handing it on: a part of what a pipe holds, for a
    /// terminal a screenful or two, for a file or `/dev/null` a megabyte.
    pub fn write_size(self) -> usize {
        match self {
            Kind::Pipe => PIPE_WRITE,
            Kind::Terminal => 4 << 10,
            Kind::Null | Kind::File => 1 << 20,
        }
    }
}

/// glibc's `gnu_dev_major`/`gnu_dev_minor` encoding of `st_rdev`.
fn major(rdev: u64) -> u64 {
    ((rdev >> 32) & 0xffff_f000) | ((rdev >> 8) & 0xfff)
}

fn minor(rdev: u64) -> u64 {
    ((rdev >> 12) & 0xffff_ff00) | (rdev & 0xff)
}

/// The size of writes into a pipe whose capacity is not known (a socket).
pub const PIPE_WRITE: usize = 16 << 10;

/// What a pipe is asked to hold: Linux's default `/proc/sys/fs/pipe-max-size`, the most an
/// unprivileged process may ask for unless the administrator changed it.
const PIPE_CAPACITY: usize = 1 << 20;

/// Asks the pipe behind `file` to hold [`PIPE_CAPACITY`] and returns what it holds (`None`: not
/// a pipe, a socket say). A larger pipe lets the reader drain while we format and lets our
/// writes be larger: fewer system calls and fewer wake-ups of the reader. The pipe is the
/// user's too, but only its capacity changes: the bytes, their order, and when the reader sees
/// end of file stay the same; the kernel memory (1 MiB at most) is freed with the pipe, and a
/// refusal (the limit lowered, the user's pipe pages over `pipe-user-pages-soft`) leaves the
/// pipe as it was. The kernel counts those pages against the user while the pipe lives: past
/// about 64 such pipes at once (16,384 pages, the default soft limit) the user's new pipes are
/// made small until some close, the price of a pipe that keeps both sides running.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn enlarge_pipe(file: &File) -> Option<usize> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETPIPE_SZ and F_SETPIPE_SZ on a descriptor we hold open read or change only
    // the capacity of the pipe behind it (or fail: not a pipe, above the limit) and touch no
    // memory of ours.
    let held = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
    let held = usize::try_from(held).ok().filter(|&n| n > 0)?;
    // A pipe already as large (made so by another stage, `pv` say) is left as it is: setting
    // the size would shrink it.
    if held >= PIPE_CAPACITY {
        return Some(held);
    }
    // SAFETY: as above.
    let set = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_CAPACITY as libc::c_int) };
    Some(usize::try_from(set).ok().filter(|&n| n > 0).unwrap_or(held))
}

/// Elsewhere a pipe's capacity can be neither read nor changed: it gets the pieces of a socket.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn enlarge_pipe(_file: &File) -> Option<usize> {
    None
}

/// The size of writes into a pipe that holds `capacity` bytes: a quarter of it, so that a write
/// finds room while the reader keeps up and the reader finds data while the next piece is
/// formatted. Into Linux's default 64 KiB pipe that is 16 KiB, measured on chr22 of the
/// benchmark BAM into a Python reader: 16 KiB 0.50 s, 32 KiB 0.54 s, 64 KiB 0.75 s, 8 KiB
/// 0.60 s, 1 MiB 0.67 s (samtools, 4 KiB writes: 0.65 s).
fn pipe_write_size(capacity: Option<usize>) -> usize {
    capacity.map_or(PIPE_WRITE, |c| (c / 4).clamp(4 << 10, 1 << 20))
}

/// The pieces a writer thread writes: its writes may block, so they can be large (fewer system
/// calls) without keeping the reader waiting.
const QUEUED_PIECE: usize = 128 << 10;

/// Pieces queued for the writer thread before the caller waits: 4 MiB, the most the queue holds
/// whatever the reader does.
const QUEUED_PIECES: usize = 32;

/// An output: a descriptor written directly, or through a writer thread.
pub struct Outlet {
    write_size: usize,
    way: Way,
}

enum Way {
    Direct(File),
    Queued(Queue),
}

impl Outlet {
    /// Standard output (a duplicate of descriptor 1, written without std's line buffer),
    /// through a writer thread when the output is a pipe and `threads > 0`.
    pub fn stdout(threads: usize) -> io::Result<Outlet> {
        let file = File::from(io::stdout().as_fd().try_clone_to_owned()?);
        Ok(Outlet::new(file, threads))
    }

    /// `file`, through a writer thread when it is a pipe and `threads > 0`.
    pub fn new(file: File, threads: usize) -> Outlet {
        let kind = Kind::of(&file);
        let write_size = match kind {
            Kind::Pipe => pipe_write_size(enlarge_pipe(&file)),
            _ => kind.write_size(),
        };
        let way = if kind == Kind::Pipe && threads > 0 {
            Way::Queued(Queue::new(file, QUEUED_PIECE))
        } else {
            Way::Direct(file)
        };
        Outlet { write_size, way }
    }

    /// How much text to gather before handing it on: [`Kind::write_size`], for a pipe a
    /// quarter of what it holds.
    pub fn write_size(&self) -> usize {
        self.write_size
    }

    /// Writes everything handed on so far and reports the first failure of the writer thread.
    pub fn close(self) -> io::Result<()> {
        match self.way {
            Way::Direct(mut file) => file.flush(),
            Way::Queued(queue) => queue.close(),
        }
    }
}

impl Write for Outlet {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.way {
            Way::Direct(file) => file.write(buf),
            Way::Queued(queue) => queue.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.way {
            Way::Direct(file) => file.write_all(buf),
            Way::Queued(queue) => queue.write_all(buf),
        }
    }

    /// Hands pending bytes on; with a writer thread, without waiting for them to be written
    /// (a reader that is slow must not stall the formatting). [`Outlet::close`] waits.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.way {
            Way::Direct(file) => file.flush(),
            Way::Queued(queue) => queue.hand_on(),
        }
    }
}

/// A writer thread fed pieces of at most `piece` bytes through a bounded queue; buffers come
/// back for reuse, so memory stays at the queue's depth times the piece size.
struct Queue {
    pending: Vec<u8>,
    piece: usize,
    stage: Stage,
}

/// Who writes the file.
enum Stage {
    /// Nobody yet: the thread starts when the first piece is handed on.
    Waiting(File),
    /// The writer thread, fed pieces, giving buffers back.
    Running {
        pieces: Sender<Vec<u8>>,
        spare: Receiver<Vec<u8>>,
        thread: JoinHandle<io::Result<()>>,
    },
    /// The queue's owner, directly: no thread could be started (tried once).
    Direct(File),
    /// Nobody: the thread was stopped.
    Stopped,
}

impl Queue {
    /// A queue to `file` whose thread starts when the first piece is handed on: an output that
    /// ends before it fills a piece (a few small regions) is written at the close, directly,
    /// without a thread's start-up.
    fn new(file: File, piece: usize) -> Queue {
        Queue {
            pending: Vec::new(),
            piece,
            stage: Stage::Waiting(file),
        }
    }

    /// Starts the writer thread on the file, if it has not started; without a thread (none
    /// can be started) the file is written here from then on.
    fn start(&mut self) {
        let file = match std::mem::replace(&mut self.stage, Stage::Stopped) {
            Stage::Waiting(file) => file,
            other => {
                self.stage = other;
                return;
            }
        };
        let (pieces, incoming) = crossbeam_channel::bounded::<Vec<u8>>(QUEUED_PIECES);
        let (give_back, spare) = crossbeam_channel::bounded::<Vec<u8>>(QUEUED_PIECES + 2);
        // The file is shared with the thread only once it has started.
        let (file_tx, file_rx) = crossbeam_channel::bounded::<File>(1);
        let spawned = std::thread::Builder::new()
            .name("output".to_string())
            .spawn(move || -> io::Result<()> {
                let Ok(mut file) = file_rx.recv() else {
                    return Ok(());
                };
                for mut piece in incoming.iter() {
                    file.write_all(&piece)?;
                    piece.clear();
                    // The queue's owner may be gone, or hold enough spares already.
                    let _ = give_back.try_send(piece);
                }
                file.flush()
            });
        self.stage = match spawned {
            Ok(thread) => match file_tx.send(file) {
                Ok(()) => Stage::Running {
                    pieces,
                    spare,
                    thread,
                },
                Err(e) => Stage::Direct(e.into_inner()),
            },
            Err(_) => Stage::Direct(file),
        };
    }

    fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.write(buf)?;
            buf = &buf[n..];
        }
        Ok(())
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (self.piece - self.pending.len()).min(buf.len());
        self.pending.extend_from_slice(&buf[..n]);
        if self.pending.len() >= self.piece {
            self.hand_on()?;
        }
        Ok(n)
    }

    /// Queues the pending bytes, waiting only while the queue is full (the first time, starts
    /// the thread).
    fn hand_on(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.start();
        let Stage::Running { pieces, spare, .. } = &self.stage else {
            return self.write_direct();
        };
        let next = spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.piece));
        let piece = std::mem::replace(&mut self.pending, next);
        if pieces.send(piece).is_ok() {
            return Ok(());
        }
        // The thread stopped: its error says why.
        Err(self.stop().err().unwrap_or_else(|| {
            io::Error::other("the output thread stopped before the output ended")
        }))
    }

    /// Writes what is pending: directly when no thread has started, else through the queue.
    fn write_pending(&mut self) -> io::Result<()> {
        match self.stage {
            Stage::Waiting(_) | Stage::Direct(_) => self.write_direct(),
            Stage::Running { .. } | Stage::Stopped => self.hand_on(),
        }
    }

    /// Writes what is pending to the file held here (no thread writes it), and clears it
    /// whether or not the write succeeds: a failed write is reported once, and the close does
    /// not write the same bytes again. With the thread stopped, its error was reported.
    fn write_direct(&mut self) -> io::Result<()> {
        let written = match &mut self.stage {
            Stage::Waiting(file) | Stage::Direct(file) => file.write_all(&self.pending),
            Stage::Running { .. } => return Ok(()),
            Stage::Stopped => Err(io::Error::other(
                "the output thread stopped before the output ended",
            )),
        };
        self.pending.clear();
        written
    }

    /// Ends the queue and waits for the thread.
    fn stop(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.stage, Stage::Stopped) {
            Stage::Running { pieces, thread, .. } => {
                // The thread's loop ends with the queue.
                drop(pieces);
                thread
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the output thread panicked")))
            }
            other => {
                self.stage = other;
                Ok(())
            }
        }
    }

    fn close(mut self) -> io::Result<()> {
        self.write_pending()?;
        self.stop()
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // What was handed on is written; a failure has nobody left to hear it.
        let _ = self.write_pending();
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pipe() -> (File, File) {
        let (r, w) = io::pipe().expect("a pipe");
        (
            File::from(std::os::fd::OwnedFd::from(r)),
            File::from(std::os::fd::OwnedFd::from(w)),
        )
    }

    #[test]
    fn kinds() {
        let (r, w) = pipe();
        assert_eq!(Kind::of(&w), Kind::Pipe);
        assert_eq!(Kind::of(&r), Kind::Pipe);
        let null = File::create("/dev/null").expect("/dev/null");
        assert_eq!(Kind::of(&null), Kind::Null);
        let zero = File::open("/dev/zero").expect("/dev/zero");
        assert_eq!(Kind::of(&zero), Kind::File);
        let file = tempfile_in_target();
        assert_eq!(Kind::of(&file), Kind::File);
        assert_eq!(Kind::Pipe.write_size(), PIPE_WRITE);
    }

    fn capacity(file: &File) -> usize {
        // SAFETY: F_GETPIPE_SZ only reads the capacity of the pipe behind an open descriptor.
        let n = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(n).expect("a pipe's capacity")
    }

    #[test]
    fn a_pipe_is_enlarged_and_written_in_quarters() {
        let (r, w) = pipe();
        let before = capacity(&w);
        let out = Outlet::new(w, 0);
        // Whatever the limit on this machine, the pipe holds no less than before, and writes
        // are a quarter of what it holds.
        let held = capacity(&r);
        assert!(held >= before, "{held} < {before}");
        assert_eq!(out.write_size(), held / 4);
        let allowed: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        if allowed >= PIPE_CAPACITY {
            assert_eq!(held, PIPE_CAPACITY);
        }
    }

    #[test]
    fn a_small_output_is_written_without_a_thread() {
        let (mut r, w) = pipe();
        let mut out = Outlet::new(w, 2);
        out.write_all(b"a few lines\n").expect("write");
        let Way::Queued(queue) = &out.way else {
            panic!("a pipe with threads is queued");
        };
        assert!(matches!(queue.stage, Stage::Waiting(_)));
        out.close().expect("close");
        let mut all = Vec::new();
        r.read_to_end(&mut all).expect("read");
        assert_eq!(all, b"a few lines\n");
    }

    fn tempfile_in_target() -> File {
        let path = std::env::temp_dir().join(format!("outlet-kind-{}", std::process::id()));
        let file = File::create(&path).expect("a temporary file");
        let _ = std::fs::remove_file(&path);
        file
    }

    #[test]
    fn queued_output_is_complete_and_in_order() {
        let (mut r, w) = pipe();
        let mut out = Outlet::new(w, 1);
        assert!(matches!(out.way, Way::Queued(_)));
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut buf = [0u8; 1000];
            loop {
                let n = r.read(&mut buf).expect("read");
                if n == 0 {
                    return all;
                }
                all.extend_from_slice(&buf[..n]);
                // A slow reader.
                if all.len() % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            }
        });
        let mut expected = Vec::new();
        for i in 0..100_000u32 {
            let line = format!("{i}\n");
            out.write_all(line.as_bytes()).expect("write");
            expected.extend_from_slice(line.as_bytes());
            if i % 5000 == 0 {
                out.flush().expect("flush");
            }
        }
        out.close().expect("close");
        assert_eq!(reader.join().expect("reader"), expected);
    }

    #[test]
    fn a_closed_reader_is_a_broken_pipe() {
        let (r, w) = pipe();
        drop(r);
        let mut out = Outlet::new(w, 1);
        let piece = vec![b'x'; QUEUED_PIECE];
        let mut result = Ok(());
        for _ in 0..QUEUED_PIECES * 4 {
            result = out.write_all(&piece);
            if result.is_err() {
                break;
            }
        }
        let err = result.and_then(|()| out.close()).expect_err("no reader");
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }
}
