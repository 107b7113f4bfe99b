//! A file changed since its header and index went into the persistent cache is read anew by
//! the reader itself (htslib has no cache; the CLI reruns, and so does the facade): the query
//! answers the file as it is now. One test a process: the cache's folder is an environment
//! variable.

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{fixtures, regions, view};
use hts::alignment::Reader;
use hts::Options;
use testkit::Server;

/// Copies `from` to `to` with a modification time an hour on: a server's validators change.
fn put(from: &Path, to: &Path) {
    fs::copy(from, to).unwrap();
    let f = fs::File::options().write(true).open(to).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
}

fn query(url: &str, options: &Options, given: &[&str]) -> String {
    let mut reader = Reader::open(url, options).unwrap();
    let regions = regions(reader.header(), given);
    view(&mut reader, Some(&regions))
}

#[test]
fn a_changed_bam_and_cram_are_read_anew() {
    let tmp = std::env::temp_dir().join(format!("hts-stale-{}", std::process::id()));
    let (served, cache) = (tmp.join("served"), tmp.join("cache"));
    fs::create_dir_all(&served).unwrap();
    fs::create_dir_all(&cache).unwrap();
    // SAFETY: the only test of this binary; set before any thread reads the environment.
    unsafe { std::env::set_var("XDG_CACHE_HOME", &cache) };
    let (bam, cram) = (fixtures("conformance/data"), fixtures("cram"));
    let server = Server::start(&served).unwrap();
    let options = Options::new().reference(cram.join("ref.fa").to_str().unwrap());

    let bam_regions = ["CHROMOSOME_I:900-1000"];
    put(&bam.join("ce1000.bam"), &served.join("x.bam"));
    put(&bam.join("ce1000.bam.bai"), &served.join("x.bam.bai"));
    let first = query(&server.url("x.bam"), &options, &bam_regions);
    // The header and index went into the cache (entries are written beside the reading).
    std::thread::sleep(Duration::from_millis(200));
    let entries = walk(&cache);
    assert!(entries > 0, "nothing cached under {}", cache.display());
    put(&bam.join("range.bam"), &served.join("x.bam"));
    put(&bam.join("range.bam.bai"), &served.join("x.bam.bai"));
    let now = query(&server.url("x.bam"), &options, &bam_regions);
    let local = bam.join("range.bam");
    let want = query(local.to_str().unwrap(), &options, &bam_regions);
    assert_eq!(now, want);
    assert_ne!(first, now, "the two files differ in the region");

    let cram_regions = ["ref2:1000-1200", "ref1:300-400"];
    put(
        &cram.join("aligned-3.0-slices.cram"),
        &served.join("x.cram"),
    );
    put(
        &cram.join("aligned-3.0-slices.cram.crai"),
        &served.join("x.cram.crai"),
    );
    query(&server.url("x.cram"), &options, &cram_regions);
    put(&cram.join("aligned-3.0-multi.cram"), &served.join("x.cram"));
    put(
        &cram.join("aligned-3.0-multi.cram.crai"),
        &served.join("x.cram.crai"),
    );
    let now = query(&server.url("x.cram"), &options, &cram_regions);
    let local = cram.join("aligned-3.0-multi.cram");
    let want = query(local.to_str().unwrap(), &options, &cram_regions);
    assert_eq!(now, want);
    let _ = fs::remove_dir_all(&tmp);
}

/// The files under `dir`, at any depth.
fn walk(dir: &Path) -> usize {
    fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .map(|e| {
                let p = e.path();
                if p.is_dir() {
                    walk(&p)
                } else {
                    1
                }
            })
            .sum()
    })
}
