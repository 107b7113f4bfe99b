//! flagstat, idxstats and quickcheck on a file name, BAM and CRAM alike through the facade:
//! what samtools 1.16.1 printed for the CRAM fixtures, local and over HTTP (127.0.0.1), and a
//! remote BAM's idxstats from its header and index alone.

use std::io::Read;
use std::path::PathBuf;

use samtools::flagstat::{self, Format};
use samtools::idxstats;
use samtools::{quickcheck, Warning};
use testkit::Server;

fn cram_dir() -> PathBuf {
    testkit::workspace_root().join("fixtures/cram")
}

/// A samtools 1.16.1 output kept gzipped beside the CRAM fixtures.
fn golden(name: &str) -> Vec<u8> {
    let path = cram_dir().join(format!("expected/{name}.out.gz"));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// No persistent cache: servers on reused ports of other test processes would meet its entries.
fn options() -> hts::Options {
    hts::Options::new().no_cache(true)
}

fn flagstat_text(file: &str) -> Vec<u8> {
    let mut warnings = Vec::new();
    let stats = flagstat::flagstat(file, &options(), &mut |w| warnings.push(w)).unwrap();
    assert_eq!(warnings, vec![], "{file}");
    let mut out = Vec::new();
    stats.write(Format::Default, &mut out).unwrap();
    out
}

fn idxstats_text(file: &str) -> (Vec<u8>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let stats = idxstats::idxstats(file, &options(), &mut |w| warnings.push(w)).unwrap();
    let mut out = Vec::new();
    stats.write(&mut out).unwrap();
    (out, warnings)
}

#[test]
fn cram_counts_as_samtools_local_and_remote() {
    let server = Server::start(&cram_dir()).expect("test server");
    for f in ["aligned-3.0", "rand-3.0-gzip"] {
        let local = cram_dir().join(format!("{f}.cram")).display().to_string();
        let url = server.url(&format!("{f}.cram"));
        for file in [&local, &url] {
            assert!(
                flagstat_text(file) == golden(&format!("flagstat-{f}")),
                "{file}"
            );
        }
    }
    for f in ["aligned-3.0-multi", "rand-3.0-gzip"] {
        let local = cram_dir().join(format!("{f}.cram")).display().to_string();
        let url = server.url(&format!("{f}.cram"));
        for file in [&local, &url] {
            let (out, warnings) = idxstats_text(file);
            assert!(out == golden(&format!("idxstats-{f}")), "{file}");
            // The .crai holds no counts: the records are counted, with no fall-back warning.
            assert_eq!(warnings, vec![], "{file}");
        }
    }
}

#[test]
fn quickcheck_reads_the_cram_eof_container() {
    let file = cram_dir().join("aligned-3.0.cram");
    let whole = quickcheck::check(file.to_str().unwrap(), &options(), false);
    assert_eq!(whole.state, 0, "{:?}", whole.problems);
    // Cut before its EOF container (38 bytes in CRAM 3.0): the definition and header still read.
    let bytes = std::fs::read(&file).unwrap();
    let cut = std::env::temp_dir().join(format!("commands-cut-{}.cram", std::process::id()));
    std::fs::write(&cut, &bytes[..bytes.len() - 38]).unwrap();
    let report = quickcheck::check(cut.to_str().unwrap(), &options(), false);
    let _ = std::fs::remove_file(&cut);
    assert_eq!(
        report.state,
        quickcheck::NO_EOF_BLOCK,
        "{:?}",
        report.problems
    );
}

#[test]
fn remote_bam_idxstats_reads_header_and_index_only() {
    let s = Server::start(&testkit::corpus_dir()).expect("test server");
    let local = testkit::corpus_dir().join("data/rand.bam");
    let (want, _) = idxstats_text(local.to_str().unwrap());
    let (got, warnings) = idxstats_text(&s.url("data/rand.bam"));
    assert!(got == want, "{}", String::from_utf8_lossy(&got));
    assert_eq!(warnings, vec![]);
    let bam_gets: Vec<_> = s
        .log()
        .into_iter()
        .filter(|e| e.method == "GET" && e.path.ends_with("rand.bam"))
        .collect();
    assert!(bam_gets.len() <= 2, "{bam_gets:?}");
    for e in &bam_gets {
        assert!(e.is_header_or_eof(), "{e:?}");
    }
}

#[test]
fn a_bam_without_index_is_counted_after_a_warning() {
    let dir = std::env::temp_dir().join(format!("commands-noindex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bam = dir.join("x.bam");
    std::fs::copy(testkit::corpus_dir().join("data/rand.bam"), &bam).unwrap();
    let (got, warnings) = idxstats_text(bam.to_str().unwrap());
    let (want, _) = idxstats_text(
        testkit::corpus_dir()
            .join("data/rand.bam")
            .to_str()
            .unwrap(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(got == want);
    assert!(
        matches!(warnings.as_slice(), [Warning::SlowMethod(_)]),
        "{warnings:?}"
    );
}
