//! `hts idxstats FILE`: per-reference counts from the index alone (samtools idxstats), or by
//! reading the records when there is no usable index.

use std::io::{self, Write};
use std::process::ExitCode;

use bam::Reader;
use samtools::idxstats::{Counter, IdxStats, SlowError};

use crate::getopt::Spec;
use crate::opts;

const USAGE: &str = "\
Usage: hts idxstats [options] <in.bam>
  -@, --threads INT
               Number of additional threads to use [0]
      --verbosity INT
               Set level of verbosity
";

const SPECS: &[Spec<char>] = &[opts::THREADS, opts::VERBOSITY];

/// The counts the index holds, once the cached parts of the file (header, index prefix) are
/// shown current: counts from a stale cached index would be another file's.
fn index_stats(reader: &mut Reader) -> bam::Result<Option<IdxStats>> {
    reader.load_index(None)?;
    Ok(IdxStats::from_index(&reader.confirm()?))
}

pub fn run(argv: &[String]) -> ExitCode {
    let (options, files) = match opts::parse_or_usage(argv, SPECS, "idxstats", USAGE) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let threads = opts::threads(&options);
    let file = match opts::single_file(&files, USAGE) {
        Ok(f) => f,
        Err(status) => return status,
    };
    if file != "-" && hts::sniff::is_cram(file) {
        return cram_stats(file);
    }
    // The index is fetched beside the header (one round trip for a remote file). The same
    // reader counts the records when there is no index: a pipe or standard input can be read
    // only once (samtools reads the stream once too).
    let open = bam::OpenOptions {
        index: bam::IndexHint::Auto,
        threads,
        ..Default::default()
    };
    let mut reader = match opts::open(file, &open, |e| {
        format!("hts idxstats: failed to open \"{file}\": {e}")
    }) {
        Ok(r) => r,
        Err(status) => return status,
    };
    let fresh = bam::OpenOptions {
        no_cache: true,
        ..open.clone()
    };
    let from_index = opts::again_if_stale(index_stats(&mut reader), opts::changed, || {
        Reader::open(file, &fresh).and_then(|mut r| index_stats(&mut r))
    });
    let stats = match from_index {
        Ok(stats) => stats,
        Err(e) => {
            eprintln!(
                "hts idxstats: fail to load index for \"{file}\", reverting to slow method ({e})"
            );
            None
        }
    };
    let stats = match stats {
        Some(s) => s,
        None => match slow_stats(&mut reader, file, &fresh) {
            Ok(s) => s,
            Err(SlowError::NotSorted) => {
                eprintln!("hts idxstats: file is not position sorted");
                eprintln!("hts idxstats: failed to process \"{file}\"");
                return ExitCode::from(1);
            }
            Err(SlowError::Read(e)) => {
                eprintln!("hts idxstats: failed to process \"{file}\": {e}");
                return ExitCode::from(1);
            }
        },
    };
    print(&stats)
}

/// Counts by reading the records, from the reader that was opened (it stands at the first
/// record: looking for an index moved nothing); a stale cached part of a remote file is read
/// again without the cache.
fn slow_stats(
    reader: &mut Reader,
    file: &str,
    fresh: &bam::OpenOptions,
) -> Result<IdxStats, SlowError> {
    let stale = |e: &SlowError| match e {
        SlowError::Read(e) => opts::changed(e),
        SlowError::NotSorted => None,
    };
    opts::again_if_stale(IdxStats::by_reading(reader), stale, || {
        let options = bam::OpenOptions {
            index: bam::IndexHint::default(),
            ..fresh.clone()
        };
        Reader::open(file, &options)
            .map_err(SlowError::Read)
            .and_then(|mut r| IdxStats::by_reading(&mut r))
    })
}

/// A CRAM file, local or remote: samtools counts its records (the `.crai` has no counts),
/// reading no reference.
fn cram_stats(file: &str) -> ExitCode {
    let counted = (|| -> Result<IdxStats, String> {
        let mut reader = hts::cram_open::open_unreferenced(file, &Default::default())?;
        reader.without_bases();
        let refs = reader.header().references.clone();
        let mut counter = Counter::new(refs.len());
        while let Some(records) = reader.next_container().map_err(|e| e.to_string())? {
            for a in &records {
                counter
                    .add(
                        region::RefId::from_stored(a.ref_id),
                        bam::Flags::from_bits(a.flags),
                    )
                    .map_err(|e| match e {
                        SlowError::NotSorted => "file is not position sorted".to_string(),
                        SlowError::Read(e) => e.to_string(),
                    })?;
            }
        }
        Ok(counter.finish(refs.into_iter()))
    })();
    match counted {
        Ok(stats) => print(&stats),
        Err(e) => {
            eprintln!("hts idxstats: failed to process \"{file}\": {e}");
            ExitCode::from(1)
        }
    }
}

fn print(stats: &IdxStats) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match stats.write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hts idxstats: error writing output: {e}");
            ExitCode::from(1)
        }
    }
}
