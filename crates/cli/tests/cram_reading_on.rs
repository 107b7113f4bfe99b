//! A region of a remote CRAM reads on past its planned containers by their headers (as htslib
//! reads on from `cram_seek_to_refpos`), but of the container that ends the region only its
//! header's bytes are asked for, at every thread count: the workers read containers ahead of
//! the records, so the container after a region's last is met before any record ends it.

use std::path::PathBuf;

use testkit::{hts, Server};

/// spaced-3.0.cram and the `.crai` samtools makes of it: chr1's containers at bytes 337
/// (positions 3-98763), 49277 (83253-191613) and 97619.
fn site() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-reading-on-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cram = dir.join("spaced.cram");
    std::fs::copy(
        testkit::workspace_root().join("fixtures/cram/spaced-3.0.cram"),
        &cram,
    )
    .unwrap();
    let indexed = testkit::command("samtools")
        .arg("index")
        .arg(&cram)
        .status()
        .unwrap();
    assert!(indexed.success());
    dir
}

/// The last byte of the CRAM any request asked for.
fn furthest_byte(server: &Server) -> u64 {
    server
        .log()
        .iter()
        .filter(|e| e.path.ends_with("spaced.cram"))
        .filter_map(|e| e.range.as_deref())
        .filter_map(|r| r.strip_prefix("bytes=")?.split('-').nth(1)?.parse().ok())
        .max()
        .unwrap_or(0)
}

#[test]
fn the_container_that_ends_a_region_is_read_only_to_its_header() {
    let dir = site();
    let region = "chr1:1000-2000";
    let golden = testkit::command("samtools")
        .current_dir(&dir)
        .args(["view", "spaced.cram", region])
        .output()
        .unwrap();
    assert!(golden.status.success() && !golden.stdout.is_empty());
    for threads in ["0", "2"] {
        let server = Server::start(&dir).unwrap();
        let out = testkit::command(hts())
            .env("HTS_CACHE", "off")
            .args(["view", "-@", threads])
            .arg(server.url("spaced.cram"))
            .arg(region)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, golden.stdout, "-@ {threads}");
        // The region's container ends at 49277; the next ends the region by its header.
        let furthest = furthest_byte(&server);
        assert!(
            (49_276..49_277 + 256).contains(&furthest),
            "-@ {threads}: bytes up to {furthest} asked for (the container at 49277 ends the \
             region: its header is read, not its 48 kB)"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
