//! `hts view`: what samtools view does for the same arguments, in the same order (open the
//! input, open the output, add the `@PG` line, write the header, then the records of the whole
//! file or of each region, then the index and the count).

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use bam::index::build::Scheme;
use bam::pg::Program;
use bam::{parse_region, Header, Reader, Record, RecordRef, Writer, WriterOptions};

use crate::args::{parse_view, usage, HeaderMode, ViewArgs};
use crate::output::{self, Plan};
use crate::summary;

/// The status samtools ends with when its output pipe closes: killed by SIGPIPE, which a shell
/// reports as 128 + 13.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// Why `view` stopped.
enum Failure {
    /// The reader of the output went away: stop quietly.
    BrokenPipe,
    /// A cached header or index turned out stale before anything was written: read again
    /// without the cache.
    Stale(String),
    /// Printed as `hts view: MESSAGE`.
    Message(String),
}

impl From<bam::Error> for Failure {
    fn from(e: bam::Error) -> Failure {
        if e.is_broken_pipe() {
            Failure::BrokenPipe
        } else if e.is_changed() {
            Failure::Stale(e.to_string())
        } else {
            Failure::Message(e.to_string())
        }
    }
}

fn io_failure(what: &str, e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Message(format!("{what}: {e}"))
    }
}

/// Runs `view` with the arguments after `view`; `program` is how hts was invoked (for `CL:`).
pub fn run(program: &str, argv: &[String]) -> ExitCode {
    let stdin_is_tty = io::stdin().is_terminal();
    if argv.is_empty() && stdin_is_tty {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let args = match parse_view(argv) {
        Ok(a) => a,
        Err(e) if e.is_unsupported() => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("hts view: {e}");
            eprint!("{}", usage());
            return ExitCode::from(1);
        }
    };
    if args.help {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    if args.positional.is_empty() && stdin_is_tty {
        eprintln!("hts view: No input provided or missing option argument.");
        eprint!("{}", usage());
        return ExitCode::from(1);
    }
    let command_line = command_line(program, argv);
    let started = std::time::Instant::now();
    let mut result = view(&args, &command_line);
    if let Err(Failure::Stale(why)) = &result {
        eprintln!("[W::hts] {why}; reading the file again without the cache");
        let fresh = ViewArgs {
            no_cache: true,
            ..args.clone()
        };
        result = view(&fresh, &command_line);
    }
    if args.verbosity >= 1 {
        let stats = bam::hfile::settled_transfer_stats(summary::SETTLE);
        eprintln!("{}", summary::line(&stats, started.elapsed()));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BrokenPipe) => ExitCode::from(BROKEN_PIPE_STATUS),
        Err(Failure::Message(m) | Failure::Stale(m)) => {
            eprintln!("hts view: {m}");
            ExitCode::from(1)
        }
    }
}

/// samtools' `stringify_argv`: the words joined by spaces, tabs made spaces. The command line
/// goes into the output's `@PG` line: a signed URL in it would hand its signature on, so query
/// strings are hidden.
fn command_line(program: &str, argv: &[String]) -> String {
    let mut words = vec![program.to_string(), "view".to_string()];
    words.extend(argv.iter().cloned());
    bam::hfile::redact_text(&words.join(" ").replace('\t', " "))
}

/// samtools' `process_aln` for the filters hts has: keep when all `-f` bits are set, no `-F`
/// bit is, and MAPQ is at least `-q` (all compared as C `int`s).
struct Filter {
    require: i32,
    exclude: i32,
    min_mapq: i32,
}

impl Filter {
    fn keeps<D: AsRef<[u8]>>(&self, r: &Record<D>) -> bool {
        let flag = i32::from(r.flag());
        flag & self.require == self.require
            && flag & self.exclude == 0
            && i32::from(r.mapq()) >= self.min_mapq
    }
}

/// Where records go: a writer (and where its index is saved), or only a count.
enum Sink {
    Records {
        writer: Box<Writer<Box<dyn Write>>>,
        index_path: Option<String>,
    },
    Count,
}

/// The index file named with `-X`, and the regions (samtools' positional arguments).
fn index_and_regions(args: &ViewArgs) -> Result<(Option<&str>, &[String]), Failure> {
    if !args.explicit_index {
        return Ok((None, args.positional.get(1..).unwrap_or(&[])));
    }
    match args.positional.get(1) {
        Some(ix) if args.positional.len() > 2 => Ok((Some(ix.as_str()), &args.positional[2..])),
        _ => Err(Failure::Message(
            "Incorrect number of arguments for -X option. Aborting.".to_string(),
        )),
    }
}

fn open_input(args: &ViewArgs) -> Result<Reader, Failure> {
    let file = args.positional.first().map_or("-", String::as_str);
    let (index_location, regions) = index_and_regions(args)?;
    // For a remote file the index is fetched while the header is, when regions will need it.
    let index = match (regions.is_empty(), index_location) {
        (true, _) => bam::IndexHint::None,
        (false, Some(at)) => bam::IndexHint::At(at.to_string()),
        (false, None) => bam::IndexHint::Auto,
    };
    let mut options = bam::OpenOptions {
        threads: args.threads,
        index,
        no_cache: args.no_cache,
        ..Default::default()
    };
    options.transport.headers = args.request_headers.clone();
    options.transport.verbosity = args.verbosity;
    options.transport.s3 = bam::hfile::S3Options {
        endpoint: args.s3_endpoint.clone(),
        requester_pays: args.requester_pays,
    };
    if let Some(n) = args.fetchers {
        options.transport.fetchers = n;
    }
    match args.fetch_mode.as_deref() {
        Some("open-ended") => {
            options.transport.range_mode = bam::hfile::RangeMode::Unbounded;
            options.fetch_plan = bam::FetchPlan::PerChunk;
        }
        Some("per-chunk") => options.fetch_plan = bam::FetchPlan::PerChunk,
        _ => {}
    }
    let reader = Reader::open(file, &options)?;
    for warning in reader.header().warnings() {
        eprintln!("{warning}");
    }
    Ok(reader)
}

/// Where the records come from: the whole file in order, or a query of the regions.
enum Records<'r> {
    File(&'r mut Reader),
    Query(bam::Query<'r>),
}

impl Records<'_> {
    fn has_eof_marker(&mut self) -> bam::Result<bool> {
        match self {
            Records::File(r) => r.has_eof_marker(),
            Records::Query(q) => q.has_eof_marker(),
        }
    }

    fn header(&self) -> &Header {
        match self {
            Records::File(r) => r.header(),
            Records::Query(q) => q.header(),
        }
    }

    /// The next record, read in place (it borrows the reader's block buffer).
    #[inline]
    fn next(&mut self) -> bam::Result<Option<RecordRef<'_>>> {
        match self {
            Records::File(r) => r.read_record_ref(),
            Records::Query(q) => q.next_record_ref(),
        }
    }
}

/// The records to write. With regions, the query is planned first (its spans on their way),
/// and cached parts of the file are shown current before anything is written.
fn plan_records<'r>(
    args: &ViewArgs,
    reader: &'r mut Reader,
) -> Result<(Records<'r>, Vec<String>), Failure> {
    let (index_location, regions) = index_and_regions(args)?;
    if regions.is_empty() || args.header == HeaderMode::Only {
        reader.confirm()?;
        return Ok((Records::File(reader), Vec::new()));
    }
    reader.select_index(index_location)?;
    if let Some(e) = reader.header().text_error() {
        eprintln!("{e}");
    }
    let mut targets = Vec::with_capacity(regions.len());
    let mut names = Vec::with_capacity(regions.len());
    for region in regions {
        match parse_region(region, reader.header()) {
            Ok(target) => {
                targets.push(target);
                names.push(region.clone());
            }
            Err(e) => {
                if let Some(message) = e.htslib_message() {
                    eprintln!("{message}");
                }
                eprintln!("{}", e.samtools_warning());
            }
        }
    }
    // One plan for every region; records still come region by region, as samtools prints them.
    let query = reader.query_all(&targets)?;
    for (i, name) in names.iter().enumerate() {
        if query.is_invalid(i) {
            eprintln!("{}", bam::region::invalid_region_warning(name));
        }
    }
    Ok((Records::Query(query), names))
}

fn create(path: Option<&str>) -> Result<Box<dyn Write>, Failure> {
    match path {
        None => Ok(Box::new(io::stdout())),
        Some(p) => File::create(p)
            .map(|f| Box::new(f) as Box<dyn Write>)
            .map_err(|e| Failure::Message(format!("failed to open \"{p}\" for writing: {e}"))),
    }
}

/// The header to write: the input's, with hts's `@PG` line unless `--no-PG`.
fn output_header(args: &ViewArgs, input: &Header, command_line: &str) -> Result<Header, Failure> {
    if args.no_pg {
        return Ok(input.clone());
    }
    let program = Program {
        name: "hts",
        version: env!("CARGO_PKG_VERSION"),
        command_line,
    };
    input.with_program(&program).map_err(|e| {
        eprintln!("{e}");
        Failure::Message("failed to add PG line to the header".to_string())
    })
}

fn open_output(
    args: &ViewArgs,
    plan: &Plan,
    header: &Header,
) -> Result<Writer<Box<dyn Write>>, Failure> {
    let index = match &plan.index {
        None if args.write_index => {
            return Err(Failure::Message(
                "--write-index needs an output file (-o FILE)".to_string(),
            ))
        }
        None => None,
        Some((_, Scheme::Bai)) => Some(Scheme::Bai),
        Some((_, Scheme::Csi { min_shift, .. })) => Some(Scheme::csi_for(
            *min_shift,
            header.refs().iter().map(|r| u64::from(r.len)),
        )),
    };
    if index.is_some() && plan.format == bam::OutputFormat::Sam {
        return Err(Failure::Message(format!(
            "failed to open index \"{}\" for writing: uncompressed SAM cannot be indexed",
            plan.index.as_ref().map_or("", |i| i.0.as_str())
        )));
    }
    let options = WriterOptions {
        format: plan.format,
        level: plan.level,
        threads: plan.threads.unwrap_or(args.threads),
        sam_header: plan.force_header || args.header != HeaderMode::None,
        index,
        name: plan
            .path
            .clone()
            .unwrap_or_else(|| "standard output".to_string()),
    };
    let out = create(plan.path.as_deref())?;
    Ok(Writer::new(out, header, &options)?)
}

fn view(args: &ViewArgs, command_line: &str) -> Result<(), Failure> {
    let plan = output::plan(args);
    if plan.as_ref().is_ok_and(|p| p.warn_uncompressed_ignored) {
        eprintln!("[view] Warning option -u ignored due to filename suffix");
    }
    let mut reader = open_input(args)?;
    let (mut records, _) = plan_records(args, &mut reader)?;
    if !records.has_eof_marker()? {
        eprintln!("[W::bam_hdr_read] EOF marker is absent. The input is probably truncated");
    }
    let mut sink = if args.count {
        Sink::Count
    } else {
        let plan = plan.map_err(|u| {
            Failure::Message(format!("hts view does not support writing {} yet", u.0))
        })?;
        let header = output_header(args, records.header(), command_line)?;
        let writer = open_output(args, &plan, &header)?;
        Sink::Records {
            writer: Box::new(writer),
            index_path: plan.index.map(|(path, _)| path),
        }
    };
    let mut count: u64 = 0;
    if args.header != HeaderMode::Only {
        write_records(args, &mut records, &mut sink, &mut count)?;
    }
    if let Sink::Records { writer, index_path } = sink {
        let (mut out, index) = writer.finish()?;
        out.flush().map_err(|e| io_failure("write failed", e))?;
        if let (Some(built), Some(path)) = (index, index_path) {
            let file = File::create(&path)
                .map_err(|e| Failure::Message(format!("writing index failed: {path}: {e}")))?;
            built
                .write(io::BufWriter::new(file))
                .map_err(|e| Failure::Message(format!("writing index failed: {path}: {e}")))?;
        }
    }
    if args.count {
        let mut out = create(args.output.as_deref().filter(|p| *p != "-"))?;
        writeln!(out, "{count}")
            .and_then(|()| out.flush())
            .map_err(|e| io_failure("writing the count failed", e))?;
    }
    Ok(())
}

fn write_records(
    args: &ViewArgs,
    records: &mut Records,
    sink: &mut Sink,
    count: &mut u64,
) -> Result<(), Failure> {
    let filter = Filter {
        require: args.require_flags,
        exclude: args.exclude_flags,
        min_mapq: args.min_mapq,
    };
    let mut pace = Pace::new();
    while let Some(record) = records.next()? {
        if !filter.keeps(&record) {
            continue;
        }
        *count += 1;
        if let Sink::Records { writer, .. } = sink {
            writer.write_record(&record)?;
            if pace.due() {
                writer.flush_text()?;
            }
        }
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
