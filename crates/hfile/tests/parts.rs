//! Parts: an advised range longer than `part_size` goes out as several bounded requests at
//! once, read back in order; each part is checked like any response, and a part that fails,
//! ends short or answers for another object never passes for the end of the data.

use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hfile::{Backend, Hints, HttpBackend, OpenOptions};
// The connection threads are shared by the whole process: tests that time or count requests
// run one at a time ([`serial`]).
use testkit::{serial, Fault, Link, Rule, Server};

const SIZE: usize = 2_000_000;
const PART: u64 = 256 * 1024;

fn pattern() -> Vec<u8> {
    (0..SIZE as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect()
}

/// `data.bin` served through `link`, with `faults` on it (each for requests from its byte).
struct Served {
    server: Server,
    dir: PathBuf,
}

impl Served {
    fn new(link: Link, faults: Vec<(u64, Fault, Option<usize>)>) -> Served {
        let dir = std::env::temp_dir().join(format!(
            "hfile-parts-{}-{:?}",
            std::process::id(),
            Instant::now()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("data.bin"), pattern()).unwrap();
        let server = Server::start_with(&dir, 0, link).unwrap();
        for (start, fault, times) in faults {
            server.add_rule(Rule {
                path: "/data.bin".into(),
                fault: Fault::OnRange {
                    start,
                    fault: Box::new(fault),
                },
                times,
            });
        }
        Served { server, dir }
    }

    fn starts(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .server
            .ranges("/data.bin")
            .into_iter()
            .flatten()
            .filter_map(|r| {
                r.strip_prefix("bytes=")
                    .and_then(|r| r.split_once('-'))
                    .and_then(|(a, _)| a.parse().ok())
            })
            .collect();
        v.sort_unstable();
        v
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn options(part_size: u64) -> OpenOptions {
    OpenOptions {
        part_size,
        read_ahead: 4 * PART,
        fetchers: 4,
        retries: 3,
        retry_backoff: Duration::from_millis(10),
        retry_max_time: Duration::from_secs(10),
        low_speed_time: Duration::from_secs(1),
        ..OpenOptions::default()
    }
}

/// Advises `range` and reads it through, as the BGZF reader does for one span: the bytes, or
/// the first error; never fewer bytes than asked without one.
fn read_advised(url: &str, opts: &OpenOptions, range: Range<u64>) -> hfile::Result<Vec<u8>> {
    let mut b = HttpBackend::open(url, opts).unwrap();
    b.advise(std::slice::from_ref(&range));
    b.seek(range.start)?;
    b.set_readahead_limit(Some(range.end));
    let mut out = vec![0u8; (range.end - range.start) as usize];
    let mut done = 0;
    while done < out.len() {
        let n = b.read(&mut out[done..])?;
        assert!(
            n > 0,
            "end of data at {} of {range:?}",
            range.start + done as u64
        );
        done += n;
    }
    Ok(out)
}

/// Each connection at 2 MB/s, as an object store serves each GET.
fn capped() -> Link {
    Link {
        per_connection: Some(2e6),
        ..Link::default()
    }
}

#[test]
fn a_long_range_goes_out_as_parts_at_once_and_is_read_in_order() {
    let _g = serial();
    let data = pattern();
    let span = 1000..SIZE as u64;
    let timed = |part: u64| {
        let s = Served::new(capped(), Vec::new());
        let t = Instant::now();
        let got = read_advised(&s.server.url("data.bin"), &options(part), span.clone()).unwrap();
        let took = t.elapsed();
        assert!(got == data[1000..], "bytes of the span, part size {part}");
        (took, s.starts(), s.server.connections())
    };
    let (parted, starts, conns) = timed(PART);
    let expected: Vec<u64> = (0..)
        .map(|i| 1000 + i * PART)
        .take_while(|&s| s < SIZE as u64)
        .collect();
    assert_eq!(starts, expected, "one bounded request a part");
    assert!(conns >= 4, "parts on several connections: {conns}");
    // Switched off (one part as large as the span): the whole span at one connection's rate,
    // 1 s; in parts, four connections at once.
    let (whole, starts, _) = timed(8 << 20);
    // One request (a resume after a stall on a loaded machine starts mid-part, not at a part).
    assert_eq!(starts.first(), Some(&1000));
    assert!(
        starts[1..].iter().all(|s| (s - 1000) % PART != 0),
        "no parts: {starts:?}"
    );
    assert!(
        parted.as_secs_f64() * 2.0 < whole.as_secs_f64(),
        "parts {parted:?} against one request {whole:?}"
    );
}

#[test]
fn parts_arriving_out_of_order_or_stalling_are_read_in_order() {
    let _g = serial();
    let data = pattern();
    // The first part answers last; the third stalls after 1000 bytes (cut by the low-speed
    // timeout, then resumed from the byte where it broke).
    let s = Served::new(
        Link::default(),
        vec![
            (0, Fault::Delay(Duration::from_millis(400)), Some(1)),
            (2 * PART, Fault::Stall { after: Some(1000) }, Some(1)),
        ],
    );
    let got = read_advised(&s.server.url("data.bin"), &options(PART), 0..SIZE as u64).unwrap();
    assert!(got == data, "bytes in order");
    let starts = s.starts();
    assert!(
        starts.contains(&(2 * PART + 1000)),
        "the stalled part resumed where it broke: {starts:?}"
    );
}

#[test]
fn a_part_with_a_short_body_is_resumed_from_where_it_broke() {
    let _g = serial();
    let data = pattern();
    let s = Served::new(
        Link::default(),
        vec![(3 * PART, Fault::ShortBody { after: Some(5000) }, Some(1))],
    );
    let got = read_advised(&s.server.url("data.bin"), &options(PART), 0..SIZE as u64).unwrap();
    assert!(got == data, "bytes in order");
    assert!(s.starts().contains(&(3 * PART + 5000)), "{:?}", s.starts());
}

/// Every answer that does not fit the part it was asked for fails the read with one error
/// naming the object, at or before the part's first byte: nothing after it passes for data.
#[test]
fn a_part_refused_or_answering_for_another_object_fails_the_read() {
    let _g = serial();
    for fault in [
        Fault::RangeNotSatisfiable { total: None },
        Fault::WrongTotal {
            total: SIZE as u64 + 1,
        },
        Fault::ShiftedRange { shift: 7 },
        Fault::status(500),
    ] {
        let s = Served::new(Link::default(), vec![(4 * PART, fault.clone(), None)]);
        let Err(e) = read_advised(&s.server.url("data.bin"), &options(PART), 0..SIZE as u64) else {
            panic!("{fault:?} must fail the read");
        };
        let text = e.to_string();
        assert!(text.contains("/data.bin"), "{fault:?}: {text}");
        assert!(!text.contains('\n'), "{fault:?}: one line: {text}");
    }
}

/// A part from another version of the object (its ETag differs from the other parts') fails
/// the read with one error naming the object: bytes of two versions are never joined.
#[test]
fn a_part_of_another_version_of_the_object_fails_the_read() {
    let _g = serial();
    let s = Served::new(
        Link::default(),
        vec![(3 * PART, Fault::Etag("\"v2\"".into()), None)],
    );
    // Every other answer is of version 1 (rules apply in order: the part's first).
    s.server.add_rule(Rule {
        path: "/data.bin".into(),
        fault: Fault::Etag("\"v1\"".into()),
        times: None,
    });
    let Err(e) = read_advised(&s.server.url("data.bin"), &options(PART), 0..SIZE as u64) else {
        panic!("a part of another version must fail the read");
    };
    let text = e.to_string();
    assert!(text.contains("/data.bin"), "{text}");
    assert!(text.contains("changed"), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
}
