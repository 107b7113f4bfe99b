//! `hts view`: what samtools view does for the same arguments, byte for byte on stdout.

use std::io::{self, Write};
use std::process::ExitCode;

use bam::parse_region;
use bam::{Reader, Record};

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
    fn keeps(&self, r: &Record) -> bool {
        let flag = r.flag();
        flag & self.require == self.require && flag & self.exclude == 0 && r.mapq() >= self.min_mapq
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
    options.transport.s3 = bam::hfile::S3Options {
        endpoint: args.s3_endpoint.clone(),
        requester_pays: args.requester_pays,
    };
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
    let mut line = Vec::with_capacity(1 << 16);
    let mut count: u64 = 0;
    let mut pace = Pace::new();
    let mut emit = |record: &Record, out: &mut W, header: &bam::Header| -> Result<(), Failure> {
        if !filter.keeps(record) {
            return Ok(());
        }
        count += 1;
        if !args.count {
            line.clear();
            bam::write_sam(record, header, &mut line)
                .map_err(|e| format!("{}: {e}", bam::hfile::redact_url(file)))?;
            out.write_all(&line)?;
            if pace.due() {
                out.flush()?;
            }
        }
        Ok(())
    };

    if regions.is_empty() {
        while let Some(record) = reader.read_record()? {
            emit(&record, out, reader.header())?;
        }
    } else {
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
        while let Some(record) = query.next_record()? {
            emit(&record, out, query.header())?;
        }
    }
    if args.count {
        writeln!(out, "{count}")?;
    }
    Ok(())
}

/// When to hand buffered output on: records come slowly from a slow link, and a reader of the
/// output should not wait for a full buffer. The clock is read every few records only.
struct Pace {
    records: u32,
    last: std::time::Instant,
}

impl Pace {
    const EVERY: u32 = 64;
    const AFTER: std::time::Duration = std::time::Duration::from_millis(200);

    fn new() -> Pace {
        Pace {
            records: 0,
            last: std::time::Instant::now(),
        }
    }

    /// True when the output should be flushed now.
    fn due(&mut self) -> bool {
        self.records += 1;
        if self.records < Pace::EVERY {
            return false;
        }
        self.records = 0;
        let now = std::time::Instant::now();
        if now.duration_since(self.last) >= Pace::AFTER {
            self.last = now;
            return true;
        }
        false
    }
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
    // The command line goes into the output: a signed URL in it would hand its signature on.
    line.push_str(&format!(
        "\tVN:{}\tCL:{}\n",
        env!("CARGO_PKG_VERSION"),
        bam::hfile::redact_text(command_line)
    ));
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pg_line_hides_signed_query_strings() {
        let line = super::pg_line(
            b"@HD\tVN:1.6\n",
            "hts view -h https://h/x.bam?X-Amz-Signature=abc##idx##https://h/x.bai?sig=d chr1",
        );
        let line = String::from_utf8(line).unwrap();
        assert!(
            line.ends_with("\tCL:hts view -h https://h/x.bam?...##idx##https://h/x.bai?... chr1\n"),
            "{line}"
        );
    }
}
