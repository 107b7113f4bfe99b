//! A server that never tells the object's size (`Content-Range: bytes A-B/*`, `HEAD` refused),
//! from `testkit::RawServer`: a span clamped short of what was asked is not the end of the
//! object; only the 416 to a request at the end says where it is. (The five-region query and a
//! whole-file read over such a server: crates/cli/tests/fault_matrix.rs.)

use std::time::Duration;

use hfile::{Backend, HttpBackend, OpenOptions};
use testkit::{RawFault, RawServer};

const SIZE: usize = 300_000;

#[test]
fn a_size_the_server_does_not_tell_ends_at_its_416() {
    let dir = std::env::temp_dir().join(format!("hfile-untold-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<u8> = (0..SIZE as u64).map(|i| ((i * 7919) >> 5) as u8).collect();
    std::fs::write(dir.join("data.bin"), &data).unwrap();
    let raw = RawServer::start(&dir).unwrap();
    raw.add_rule("/data.bin", RawFault::UnknownTotal, None);
    let options = OpenOptions {
        retries: 1,
        retry_backoff: Duration::from_millis(10),
        ..OpenOptions::default()
    };

    let mut b = HttpBackend::open(&raw.url("/data.bin"), &options).unwrap();
    // The last bytes, as the EOF check asks for them: the server resolved the suffix.
    assert_eq!(b.read_tail(28).unwrap(), &data[SIZE - 28..]);
    // A read to the end, from a request the server clamps.
    let start = SIZE - 100_000;
    b.seek(start as u64).unwrap();
    let mut all = Vec::new();
    let mut buf = vec![0u8; 70_000];
    loop {
        let n = b.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
    }
    assert!(all == data[start..], "{} bytes", all.len());
    assert_eq!(b.size().unwrap(), SIZE as u64);
    let at_end = format!("bytes={SIZE}-");
    let log = raw.log();
    assert!(
        log.iter()
            .any(|e| e.range.as_deref().is_some_and(|r| r.starts_with(&at_end))),
        "no request at the end: {log:?}"
    );

    // Asked for the size alone, it cannot be had: a typed error.
    let mut c = HttpBackend::open(&raw.url("/data.bin"), &options).unwrap();
    let e = c.size().unwrap_err();
    assert!(e.is_size_unknown(), "{e}");
    // Asked again, the answer is remembered: no more requests.
    let asked = raw.log().len();
    assert!(c.size().unwrap_err().is_size_unknown());
    assert_eq!(raw.log().len(), asked, "{:?}", raw.log());
    let _ = std::fs::remove_dir_all(&dir);
}
