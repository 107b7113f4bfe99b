//! Local files are opened once, as samtools 1.16.1 opens them: a BAM the caller opened already
//! (to tell BAM from CRAM) is read through that handle, and the index search stops at the first
//! name that exists (samtools stats `x.bam.csi`, `x.csi`, `x.bam.bai`, `x.bai` in turn and
//! opens only the first found), shown with a named pipe after it, whose open would block.

#![cfg(unix)]

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A folder holding `x.bam`, its CSI as `x.bam.csi`, and a named pipe as `x.bam.bai`.
fn folder() -> PathBuf {
    let data = testkit::corpus_dir().join("data");
    let dir = std::env::temp_dir().join(format!("bam-index-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::copy(data.join("rand_small.bam"), dir.join("x.bam")).expect("the BAM");
    std::fs::copy(data.join("rand_small.idx.csi"), dir.join("x.bam.csi")).expect("its CSI");
    let fifo = dir.join("x.bam.bai");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", fifo.display());
    dir
}

#[test]
fn the_names_after_the_first_found_are_not_opened() {
    let dir = folder();
    let bam = dir.join("x.bam").display().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let counted = (|| {
            let mut reader = bam::Reader::open(&bam, &bam::OpenOptions::default())?;
            reader.select_index(None)?;
            let target = region::parse_region("sm1:10000-20000", reader.header()).map_err(|e| {
                bam::Error::Query {
                    name: bam.clone(),
                    reason: e.to_string(),
                }
            })?;
            let counted = reader.query(target)?.count_records();
            counted
        })();
        let _ = tx.send(counted);
    });
    let counted = rx.recv_timeout(Duration::from_secs(30));
    // Unblock an open of the pipe, if one was made, before failing.
    if counted.is_err() {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("x.bam.bai"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let counted = counted.expect("the query ends: x.bam.bai is not opened");
    // `samtools view -c rand_small.bam sm1:10000-20000` (1.16.1).
    assert_eq!(counted.expect("the query reads"), 85);
}

#[test]
fn a_file_opened_by_the_caller_is_read_through_its_handle() {
    let data = testkit::corpus_dir().join("data");
    let dir = std::env::temp_dir().join(format!("bam-open-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let path = dir.join("gone.bam");
    std::fs::copy(data.join("rand_small.bam"), &path).expect("the BAM");
    let file = std::fs::File::open(&path).expect("opens");
    // The path is gone: only the handle can be read.
    std::fs::remove_file(&path).expect("removed");
    let _ = std::fs::remove_dir_all(&dir);
    let location = path.display().to_string();
    let mut reader = bam::Reader::open_file(&location, file, &bam::OpenOptions::default())
        .expect("read through the handle");
    assert_eq!(reader.location(), location);
    // `samtools view -c rand_small.bam` (1.16.1).
    let count = reader.records().expect("a query").count_records();
    assert_eq!(count.expect("every record reads"), 612);
}
