//! `cargo xtask soak`: many threads of one process querying random regions of corpus BAMs over
//! HTTP, through the test server with faults scattered over its answers, every answer compared
//! with the same query on the local file. Bounded in time; a watchdog times every query.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use bam::{OpenOptions, Reader};
use region::Region;
use testkit::{Chaos, Fault, Server};

use crate::{flag_value, root};

pub const HELP: &str = "\
cargo xtask soak [--seconds N] [--threads T] [--every K] [--seed S]
  Serves fixtures/ on the in-process test server with faults on about one request in K
  (default 6): 503, 500, 429 with Retry-After, resets before the headers and mid-body, short
  bodies, stalls, delays and trickles. T threads (default 8) of this one process open the
  corpus BAMs over HTTP (index loaded as far as queries need, 5 queries per open) and query
  random regions for N seconds (default 60); every answer is compared with the local file's.
  Prints queries answered, faults served, retries, mismatches, failed queries, the longest
  query, and the peak RSS (VmHWM) before, at 10%, at the middle and at the end. Fails on any
  mismatch, failed query, or query running past the 60 s watchdog.";

/// The BAMs queried (each has a `.bai` beside it).
const FILES: [&str; 4] = ["rand.bam", "long.bam", "manyrefs.bam", "ce1000.bam"];

/// A query still running after this long is stuck.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Queries made on one open reader before it is dropped and the file opened again.
const QUERIES_PER_OPEN: usize = 5;

/// One thread's running query: when it started (ms since the soak began, 0: none) and what.
#[derive(Default)]
struct Slot {
    started_ms: AtomicU64,
    query: std::sync::Mutex<String>,
}

#[derive(Default)]
struct Totals {
    queries: AtomicU64,
    records: AtomicU64,
    mismatches: AtomicU64,
    failures: AtomicU64,
    opens: AtomicU64,
}

/// The soak's settings, from the command line.
struct Settings {
    seconds: u64,
    threads: usize,
    every: u32,
    seed: u64,
}

impl Settings {
    fn parse(args: &[String]) -> Result<Settings, String> {
        let number = |name: &str, default: u64| -> Result<u64, String> {
            flag_value(args, name).map_or(Ok(default), |v| {
                v.parse().map_err(|_| format!("{name}: not a number: {v}"))
            })
        };
        Ok(Settings {
            seconds: number("--seconds", 60)?,
            threads: number("--threads", 8)? as usize,
            every: number("--every", 6)? as u32,
            seed: number("--seed", 1)?,
        })
    }
}

/// What the watching of the running soak saw: the server's log drained as it went, the
/// longest query, a stuck one, and the peak RSS at 10% and at the middle.
#[derive(Default)]
struct Watched {
    faults: u64,
    requests: u64,
    longest: Duration,
    stuck: Option<String>,
    hwm_warm: Option<u64>,
    hwm_middle: Option<u64>,
    /// Threads that came back, and the problems they found.
    back: usize,
    problems: Vec<String>,
}

impl Watched {
    /// Takes the server's log so far into the counts.
    fn drain(&mut self, server: &Server) {
        let log = server.take_log();
        self.requests += log.len() as u64;
        self.faults += log.iter().filter(|e| e.fault.is_some()).count() as u64;
    }
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let settings = Settings::parse(args)?;
    let data = root().join("fixtures/conformance/data");
    let server = Server::start(&root().join("fixtures"))?;
    server.add_chaos(Chaos {
        faults: soak_faults(),
        ..Chaos::transient("/conformance/data/", settings.every, settings.seed)
    });
    let base = server.url("conformance/data");
    hfile::reset_transfer_stats();

    let begin = Instant::now();
    let hwm_start = vm("VmHWM");
    let stop = Arc::new(AtomicBool::new(false));
    let totals = Arc::new(Totals::default());
    let slots: Arc<Vec<Slot>> = Arc::new((0..settings.threads).map(|_| Slot::default()).collect());
    let done_rx = spawn_workers(&settings, &base, &data, &stop, &totals, &slots, begin)?;
    let mut watched = Watched::default();
    watch(&settings, &server, &slots, &totals, begin, &mut watched);
    stop.store(true, Ordering::SeqCst);
    join(&settings, &done_rx, &slots, begin, &mut watched);
    let elapsed = begin.elapsed().as_secs_f64();
    watched.drain(&server);
    report(&settings, &totals, &watched, elapsed, hwm_start);
    verdict(&settings, &totals, watched)
}

/// Starts the worker threads; each sends its problems on the channel when it ends.
fn spawn_workers(
    settings: &Settings,
    base: &str,
    data: &std::path::Path,
    stop: &Arc<AtomicBool>,
    totals: &Arc<Totals>,
    slots: &Arc<Vec<Slot>>,
    begin: Instant,
) -> Result<mpsc::Receiver<(usize, Vec<String>)>, String> {
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<String>)>();
    for t in 0..settings.threads {
        let ctx = Worker {
            id: t,
            rng: Rng(settings.seed.wrapping_mul(1000).wrapping_add(t as u64 + 1)),
            base: base.to_string(),
            data: data.to_path_buf(),
            stop: Arc::clone(stop),
            totals: Arc::clone(totals),
            slots: Arc::clone(slots),
            begin,
        };
        let tx = done_tx.clone();
        std::thread::Builder::new()
            .name(format!("soak-{t}"))
            .spawn(move || {
                let problems = ctx.run();
                let _ = tx.send((t, problems));
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
    }
    Ok(done_rx)
}

/// The clock, the watchdog and the server's log, drained as it goes, until the time is up or
/// a query is stuck.
fn watch(
    settings: &Settings,
    server: &Server,
    slots: &[Slot],
    totals: &Totals,
    begin: Instant,
    w: &mut Watched,
) {
    let seconds = settings.seconds;
    let deadline = begin + Duration::from_secs(seconds);
    let mut last_report = Instant::now();
    while Instant::now() < deadline && w.stuck.is_none() {
        std::thread::sleep(Duration::from_millis(100));
        w.drain(server);
        let (age, what) = oldest(slots, begin);
        w.longest = w.longest.max(age);
        if age > WATCHDOG {
            w.stuck = Some(what);
        }
        if w.hwm_warm.is_none() && begin.elapsed() >= Duration::from_secs(seconds / 10) {
            w.hwm_warm = Some(vm("VmHWM"));
        }
        if w.hwm_middle.is_none() && begin.elapsed() >= Duration::from_secs(seconds / 2) {
            w.hwm_middle = Some(vm("VmHWM"));
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            println!(
                "  {:>4.0} s: {} queries, {} faults, VmRSS {} kB, VmHWM {} kB, {} threads",
                begin.elapsed().as_secs_f64(),
                totals.queries.load(Ordering::Relaxed),
                w.faults,
                vm("VmRSS"),
                vm("VmHWM"),
                vm("Threads")
            );
        }
    }
}

/// Every thread must come back: a query running on gets the watchdog's time to end.
fn join(
    settings: &Settings,
    done_rx: &mpsc::Receiver<(usize, Vec<String>)>,
    slots: &[Slot],
    begin: Instant,
    w: &mut Watched,
) {
    let wait_until = Instant::now() + WATCHDOG;
    while w.back < settings.threads && w.stuck.is_none() {
        let left = wait_until.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left.min(Duration::from_millis(100))) {
            Ok((_, p)) => {
                w.back += 1;
                w.problems.extend(p);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let (age, what) = oldest(slots, begin);
                w.longest = w.longest.max(age);
                if age > WATCHDOG || Instant::now() >= wait_until {
                    w.stuck = Some(what);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// Prints the soak's figures and the first problems.
fn report(settings: &Settings, totals: &Totals, w: &Watched, elapsed: f64, hwm_start: u64) {
    let Settings {
        threads,
        every,
        seed,
        ..
    } = *settings;
    let stats = hfile::transfer_stats();
    let hwm_end = vm("VmHWM");
    let q = totals.queries.load(Ordering::Relaxed);
    println!(
        "soak: {threads} threads, {elapsed:.1} s, faults on ~1 request in {every} (seed {seed})"
    );
    println!(
        "  queries answered {q} ({:.0}/s), records compared {}, readers opened {}",
        q as f64 / elapsed,
        totals.records.load(Ordering::Relaxed),
        totals.opens.load(Ordering::Relaxed)
    );
    println!(
        "  requests served {}, faults injected {}, client retries {}",
        w.requests, w.faults, stats.retries
    );
    println!(
        "  mismatches {}, failed queries {}",
        totals.mismatches.load(Ordering::Relaxed),
        totals.failures.load(Ordering::Relaxed)
    );
    println!(
        "  longest query {:.2} s (watchdog {} s)",
        w.longest.as_secs_f64(),
        WATCHDOG.as_secs()
    );
    println!(
        "  peak RSS (VmHWM): before {hwm_start} kB, at 10% {} kB, middle {} kB, end {hwm_end} kB \
         (VmRSS at the end {} kB)",
        w.hwm_warm.unwrap_or(0),
        w.hwm_middle.unwrap_or(0),
        vm("VmRSS")
    );
    for p in w.problems.iter().take(20) {
        println!("  !! {p}");
    }
}

/// The soak fails on a stuck or missing thread, a mismatch, a failed query, or no fault.
fn verdict(settings: &Settings, totals: &Totals, w: Watched) -> Result<(), String> {
    let mismatches = totals.mismatches.load(Ordering::Relaxed);
    let failures = totals.failures.load(Ordering::Relaxed);
    if let Some(what) = w.stuck {
        return Err(format!("a thread is stuck: {what}"));
    }
    if w.back < settings.threads {
        return Err(format!(
            "{} thread(s) did not come back",
            settings.threads - w.back
        ));
    }
    if mismatches > 0 || failures > 0 {
        return Err(format!(
            "{mismatches} mismatches, {failures} failed queries"
        ));
    }
    if w.faults == 0 {
        return Err("no fault was injected".to_string());
    }
    Ok(())
}

/// The transient faults of [`Chaos::transient`], and stalls, delays and trickles.
fn soak_faults() -> Vec<Fault> {
    let mut faults = Chaos::transient("/", 1, 0).faults;
    faults.extend([
        Fault::Stall { after: None },
        Fault::Delay(Duration::from_millis(300)),
        Fault::Trickle {
            bytes_per_sec: 512 * 1024,
        },
        Fault::ResetMidBody { after: Some(1) },
    ]);
    faults
}

/// The longest-running query now, and what it is.
fn oldest(slots: &[Slot], begin: Instant) -> (Duration, String) {
    let now = begin.elapsed().as_millis() as u64;
    slots
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let at = s.started_ms.load(Ordering::SeqCst);
            (at > 0).then(|| {
                let what = s.query.lock().map(|q| q.clone()).unwrap_or_default();
                (
                    Duration::from_millis(now.saturating_sub(at)),
                    format!("thread {i}: {what}"),
                )
            })
        })
        .max_by_key(|(d, _)| *d)
        .unwrap_or_default()
}

/// A field of /proc/self/status in kB (0 if unreadable).
fn vm(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

struct Worker {
    id: usize,
    rng: Rng,
    base: String,
    data: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    totals: Arc<Totals>,
    slots: Arc<Vec<Slot>>,
    begin: Instant,
}

impl Worker {
    /// Queries until told to stop; returns what went wrong (at most a few messages).
    fn run(mut self) -> Vec<String> {
        let mut problems = Vec::new();
        let options = OpenOptions {
            no_cache: true,
            transport: hfile::OpenOptions {
                // A stalled body is given up (and retried) after 2 s rather than 30.
                low_speed_time: Duration::from_secs(2),
                ..Default::default()
            },
            ..Default::default()
        };
        while !self.stop.load(Ordering::SeqCst) {
            let file = FILES[self.rng.below(FILES.len() as u64) as usize];
            let local_path = self.data.join(file);
            let mut local = match Reader::open(
                &local_path.to_string_lossy(),
                &OpenOptions {
                    no_cache: true,
                    ..Default::default()
                },
            )
            .and_then(|mut r| r.load_index(None).map(|()| r))
            {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("{file} (local): {e}"));
                    self.totals.failures.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            };
            let url = format!("{}/{file}", self.base);
            self.enter(&format!("open {url}"));
            let remote =
                Reader::open(&url, &options).and_then(|mut r| r.select_index(None).map(|()| r));
            self.leave();
            self.totals.opens.fetch_add(1, Ordering::Relaxed);
            let mut remote = match remote {
                Ok(r) => r,
                Err(e) => {
                    self.fail(&mut problems, format!("open {url}: {e}"));
                    continue;
                }
            };
            for _ in 0..QUERIES_PER_OPEN {
                if self.stop.load(Ordering::SeqCst) {
                    break;
                }
                let (target, shown) = self.pick(local.header());
                let want = match answer(&mut local, target) {
                    Ok(lines) => lines,
                    Err(e) => {
                        self.fail(&mut problems, format!("{file} {shown} (local): {e}"));
                        continue;
                    }
                };
                self.enter(&format!("{url} {shown}"));
                let got = answer(&mut remote, target);
                self.leave();
                match got {
                    Ok(got) if got == want => {
                        self.totals.queries.fetch_add(1, Ordering::Relaxed);
                        self.totals
                            .records
                            .fetch_add(bytecount_lines(&got), Ordering::Relaxed);
                    }
                    Ok(got) => {
                        self.totals.mismatches.fetch_add(1, Ordering::Relaxed);
                        if problems.len() < 5 {
                            problems.push(format!(
                                "{file} {shown}: {} bytes over HTTP, {} locally",
                                got.len(),
                                want.len()
                            ));
                        }
                    }
                    Err(e) => self.fail(&mut problems, format!("{url} {shown}: {e}")),
                }
            }
        }
        problems
    }

    fn fail(&self, problems: &mut Vec<String>, message: String) {
        self.totals.failures.fetch_add(1, Ordering::Relaxed);
        if problems.len() < 5 {
            problems.push(message);
        }
    }

    fn enter(&self, what: &str) {
        let slot = &self.slots[self.id];
        if let Ok(mut q) = slot.query.lock() {
            q.clear();
            q.push_str(what);
        }
        let now = (self.begin.elapsed().as_millis() as u64).max(1);
        slot.started_ms.store(now, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.slots[self.id].started_ms.store(0, Ordering::SeqCst);
    }

    /// A random region: a reference of the header, a start anywhere in it, a length from a
    /// base pair to the whole reference; now and then the unplaced reads.
    fn pick(&mut self, header: &bam::Header) -> (Region, String) {
        let refs = header.refs();
        if refs.is_empty() || self.rng.below(40) == 0 {
            return (Region::Unplaced, "*".to_string());
        }
        let tid = self.rng.below(refs.len() as u64) as usize;
        let len = u64::from(refs[tid].len).max(1);
        let span = match self.rng.below(5) {
            0 => 1,
            1 => 100,
            2 => 10_000,
            3 => 200_000,
            _ => len,
        };
        let beg = self.rng.below(len);
        let end = (beg + span).min(len).max(beg + 1);
        let name = String::from_utf8_lossy(&refs[tid].name).into_owned();
        (
            Region::Ref {
                tid: region::RefId::new(tid),
                beg: region::Position::new(beg),
                end: region::Position::new(end),
            },
            format!("{name}:{}-{end}", beg + 1),
        )
    }
}

/// The SAM text of a query's records.
fn answer(reader: &mut Reader, target: Region) -> Result<Vec<u8>, String> {
    let mut query = reader.query(target).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(record) = query.next_record().map_err(|e| e.to_string())? {
        bam::write_sam(&record, query.header(), &mut out).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn bytecount_lines(text: &[u8]) -> u64 {
    text.iter().filter(|&&b| b == b'\n').count() as u64
}
