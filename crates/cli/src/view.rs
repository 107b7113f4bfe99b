//! `hts view`: what samtools view does for the same arguments, byte for byte on stdout.

use std::io::{self, Write};
use std::process::ExitCode;

use bam::parse_region;
use bam::{Reader, Record, SamWriteError, SamWriter};

use crate::args::{parse_view, HeaderMode, ViewArgs};

pub fn run(argv: &[String]) -> ExitCode {
    let args = match parse_view(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("hts view: {e}");
            return ExitCode::from(1);
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let result = view(&args, &mut out);
    // Whatever was printed before a failure goes out first, as samtools' output does.
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) => {
            eprintln!("hts view: {e}");
            ExitCode::from(1)
        }
        (Ok(()), Err(e)) => {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("hts view: error writing output: {e}");
            ExitCode::from(1)
        }
    }
}

/// Failures of the command: the message names the file and offset where it applies.
type Failure = Box<dyn std::error::Error>;

struct Filter {
    require: u16,
    exclude: u16,
    min_mapq: u8,
}

impl Filter {
    fn keeps<D: AsRef<[u8]>>(&self, r: &Record<D>) -> bool {
        let flag = r.flag();
        flag & self.require == self.require && flag & self.exclude == 0 && r.mapq() >= self.min_mapq
    }
}

/// Where the records that pass the filter go: counted (`-c`), or written as SAM.
enum Output<W: Write> {
    Count(u64),
    Sam(Box<SamWriter<W>>),
}

impl<W: Write> Output<W> {
    fn take<D: AsRef<[u8]>>(&mut self, record: &Record<D>) -> Result<(), SamWriteError> {
        match self {
            Output::Count(n) => {
                *n += 1;
                Ok(())
            }
            Output::Sam(w) => w.write_record(record),
        }
    }

    /// Writes what is pending; the count for `-c`.
    fn finish(self) -> Result<Option<u64>, SamWriteError> {
        match self {
            Output::Count(n) => Ok(Some(n)),
            Output::Sam(w) => w.finish().map(|_| None),
        }
    }
}

fn view<W: Write>(args: &ViewArgs, out: &mut W) -> Result<(), Failure> {
    let Some(file) = args.positional.first() else {
        return Err(format!("no input file\n{}", crate::args::USAGE).into());
    };
    let (index_location, regions) = if args.explicit_index {
        match args.positional.get(1) {
            Some(ix) if args.positional.len() > 2 => (Some(ix.as_str()), &args.positional[2..]),
            _ => return Err("Incorrect number of arguments for -X option. Aborting.".into()),
        }
    } else {
        (None, &args.positional[1..])
    };

    let index = match (regions.is_empty(), index_location) {
        (true, _) => bam::IndexHint::None,
        (false, Some(at)) => bam::IndexHint::At(at.to_string()),
        (false, None) => bam::IndexHint::Auto,
    };
    let mut options = bam::OpenOptions {
        threads: args.threads,
        index,
        ..Default::default()
    };
    options.transport.headers = args.request_headers.clone();
    options.transport.verbosity = args.verbosity;
    if let Some(n) = args.fetchers {
        options.transport.fetchers = n.max(1);
    }
    match args.fetch_mode.as_deref() {
        Some("open-ended") => {
            options.transport.range_mode = bam::hfile::RangeMode::Unbounded;
            options.fetch_plan = bam::FetchPlan::PerChunk;
        }
        Some("per-chunk") => options.fetch_plan = bam::FetchPlan::PerChunk,
        _ => {}
    }

    let mut reader = Reader::open(file, &options)?;
    for warning in reader.header().warnings() {
        eprintln!("{warning}");
    }
    if !reader.has_eof_marker()? {
        eprintln!("[W::bam_hdr_read] EOF marker is absent. The input is probably truncated");
    }
    if args.header != HeaderMode::None && !args.count {
        let mut text = reader.header().text_for_output();
        if !args.no_pg {
            text.extend_from_slice(&pg_line(
                reader.header().text_for_output().as_slice(),
                &args.command_line,
            ));
        }
        out.write_all(&text)?;
    }
    if args.header == HeaderMode::Only {
        if args.count {
            writeln!(out, "0")?;
        }
        return Ok(());
    }

    let filter = Filter {
        require: args.require_flags,
        exclude: args.exclude_flags,
        min_mapq: args.min_mapq,
    };
    let mut output = if args.count {
        Output::Count(0)
    } else {
        let header = reader.header().clone();
        // Records that come slowly (a slow link) still reach the reader of the output.
        let pace = std::time::Duration::from_millis(200);
        Output::Sam(Box::new(
            SamWriter::new(&mut *out, &header, args.threads).flush_every(pace),
        ))
    };
    let read = read_records(&mut reader, index_location, regions, &filter, &mut output);
    // The records before a failure are written before it is reported. A record that cannot be
    // formatted comes before any later read error, so its error is the one to report.
    let count = match (read, output.finish()) {
        (_, Err(e @ SamWriteError::Record(_))) => return Err(write_failure(file, e)),
        (Err(e), _) => return Err(e),
        (Ok(()), Err(e)) => return Err(write_failure(file, e)),
        (Ok(()), Ok(count)) => count,
    };
    if let Some(count) = count {
        writeln!(out, "{count}")?;
    }
    Ok(())
}

/// A record that cannot be formatted is reported with the file's name, as before any I/O error.
fn write_failure(file: &str, e: SamWriteError) -> Failure {
    match e {
        SamWriteError::Record(e) => format!("{file}: {e}").into(),
        SamWriteError::Io(e) => e.into(),
    }
}

/// Reads the whole file (records in place), or the regions, into `output`.
fn read_records<W: Write>(
    reader: &mut Reader,
    index_location: Option<&str>,
    regions: &[String],
    filter: &Filter,
    output: &mut Output<W>,
) -> Result<(), Failure> {
    let file = reader.location().to_string();
    let formatting_error = |e| write_failure(&file, e);
    if regions.is_empty() {
        while let Some(record) = reader.read_record_ref()? {
            if filter.keeps(&record) {
                output.take(&record).map_err(formatting_error)?;
            }
        }
        return Ok(());
    }
    reader.load_index(index_location)?;
    let mut targets = Vec::with_capacity(regions.len());
    let mut names = Vec::with_capacity(regions.len());
    for region in regions {
        match parse_region(region, reader.header()) {
            Ok(target) => {
                targets.push(target);
                names.push(region.as_str());
            }
            Err(e) => {
                if let Some(message) = e.htslib_message() {
                    eprintln!("{message}");
                }
                eprintln!("{}", e.samtools_warning());
            }
        }
    }
    let mut query = reader.query_all(&targets)?;
    for (i, name) in names.iter().enumerate() {
        if query.is_invalid(i) {
            eprintln!("{}", bam::region::invalid_region_warning(name));
        }
    }
    while let Some(record) = query.next_record_ref()? {
        if filter.keeps(&record) {
            output.take(&record).map_err(formatting_error)?;
        }
    }
    Ok(())
}

/// The @PG line samtools would add, with our name: a unique ID and PP chained to the last @PG.
fn pg_line(text: &[u8], command_line: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let ids: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("@PG\t"))
        .filter_map(|l| l.split('\t').find_map(|f| f.strip_prefix("ID:")))
        .collect();
    let mut id = "hts".to_string();
    let mut n = 0;
    while ids.contains(&id.as_str()) {
        n += 1;
        id = format!("hts.{n}");
    }
    let mut line = format!("@PG\tID:{id}\tPN:hts");
    if let Some(last) = ids.last() {
        line.push_str(&format!("\tPP:{last}"));
    }
    line.push_str(&format!(
        "\tVN:{}\tCL:{}\n",
        env!("CARGO_PKG_VERSION"),
        command_line
    ));
    line.into_bytes()
}
