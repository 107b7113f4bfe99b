//! A transfer works when the process holds many files open: its socket is then numbered past
//! 1023, where `select()` cannot look (`FD_SETSIZE`). The bundled curl must wait with
//! `poll()`: built as curl-sys builds it, it fell back to `select()` and failed every such
//! transfer with "A libcurl function was given a bad argument" (a cohort at 256 requests in
//! flight; any application with a thousand files open). Its own test binary: the files held
//! are the process's.

use std::fs::File;

use hfile::OpenOptions;

/// Enough open files that a socket made after them is numbered past `FD_SETSIZE` (1024).
const HELD: usize = 1100;

#[test]
fn a_transfer_works_with_its_socket_numbered_past_1023() {
    raise_the_open_file_limit();
    let held: Vec<File> = (0..HELD)
        .map(|_| File::open("/dev/null").expect("a file can be opened"))
        .collect();
    let dir = std::env::temp_dir().join(format!("hfile-many-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    std::fs::write(dir.join("data.bin"), &data).unwrap();
    let server = testkit::Server::start(&dir).unwrap();
    let mut f = hfile::open(&server.url("/data.bin"), &OpenOptions::default()).unwrap();
    let got = f.read_to_end_vec().unwrap();
    assert_eq!(got.len(), data.len());
    assert!(got == data, "the bytes read differ");
    drop(held);
    std::fs::remove_dir_all(&dir).ok();
}

/// The soft limit raised to the hard one, which must allow the files this test holds (a
/// machine that cannot is reported, not skipped).
fn raise_the_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write or read the one struct given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    assert!(
        limit.rlim_cur as usize > HELD + 100,
        "this machine allows {} open files; the test needs {}",
        limit.rlim_cur,
        HELD + 100
    );
}
