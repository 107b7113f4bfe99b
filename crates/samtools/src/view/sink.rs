//! The output side of `hts view`: the header samtools writes (`@RG` lines of other groups
//! dropped for `-r`/`-R`, then its `@PG` line), the writers of `-o` and `-U` as the output plan
//! describes them, their indexes, and when buffered SAM is handed on.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

use bam::pg::Program;
use bam::{Header, Record, Writer, WriterOptions};
use index::build::Scheme;

use super::output::Plan;
use super::{io_failure, Failure};
use super::{HeaderMode, ViewArgs};
use hfile::outlet::Outlet;

/// Standard output, or a file created for writing, written as suits what it is (with a writer
/// thread into a pipe when `threads > 0`).
pub fn create(path: Option<&str>, threads: usize) -> Result<Outlet, Failure> {
    match path {
        None => Outlet::stdout(threads)
            .map_err(|e| Failure::Message(format!("failed to open standard output: {e}"))),
        Some(p) => File::create(p)
            .map(|f| Outlet::new(f, threads))
            .map_err(|e| Failure::Message(format!("failed to open \"{p}\" for writing: {e}"))),
    }
}

/// Whether samtools edits the header (`-r`/`-R`, an `@PG` line), which makes htslib parse its
/// text.
pub fn edits_header(args: &ViewArgs) -> bool {
    args.select.read_groups.is_some() || !(args.no_pg || args.count)
}

/// The header records are selected with and written with: the input's, without the `@RG`
/// lines of other groups (`-r`/`-R`), then with hts's `@PG` line when records are written
/// (not with `-c` or `--no-PG`), as samtools edits its header before it opens the outputs.
/// `name` is the input's, for the error of a header whose text cannot take the line.
/// The input's header itself when nothing changes it (a count, `--no-PG`): a copy cost as
/// much as the rest of a small query's work on a file in a cohort.
pub fn header<'a>(
    args: &ViewArgs,
    input: &'a Header,
    command_line: &str,
    name: &str,
) -> Result<Cow<'a, Header>, Failure> {
    let edited = match &args.select.read_groups {
        Some(groups) => Cow::Owned(crate::filter::readgroup::keep_read_groups(input, groups)),
        None => Cow::Borrowed(input),
    };
    if args.no_pg || args.count {
        return Ok(edited);
    }
    let program = Program {
        name: "hts",
        version: env!("CARGO_PKG_VERSION"),
        command_line,
    };
    edited.with_program(&program).map(Cow::Owned).map_err(|e| {
        let name = hfile::redact_text(name);
        Failure::Message(format!("{name}: failed to add PG line to the header: {e}"))
    })
}

/// One output file (`-o` or `-U`) being written, and where its index goes.
pub struct Output {
    writer: Box<Writer<Outlet>>,
    index_path: Option<String>,
}

impl Output {
    /// Creates the file of `plan` and writes the header (for SAM, when samtools would).
    pub fn open(args: &ViewArgs, plan: &Plan, header: &Header) -> Result<Output, Failure> {
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
        let threads = plan.threads.unwrap_or(args.threads);
        let out = create(plan.path.as_deref(), threads)?;
        let options = WriterOptions {
            format: plan.format,
            level: plan.level,
            threads,
            write_size: out.write_size(),
            sam_header: plan.force_header || args.header != HeaderMode::None,
            index,
            name: plan
                .path
                .clone()
                .unwrap_or_else(|| "standard output".to_string()),
        };
        Ok(Output {
            writer: Box::new(Writer::new(out, header, &options)?),
            index_path: plan.index.as_ref().map(|(path, _)| path.clone()),
        })
    }

    /// Writes a record: its stored bytes as they are, or as an edit left them.
    pub fn write<D: AsRef<[u8]>>(&mut self, record: &Record<D>) -> bam::Result<()> {
        self.writer.write_record(record)
    }

    /// Hands buffered SAM text on.
    pub fn flush_text(&mut self) -> Result<(), Failure> {
        Ok(self.writer.flush_text()?)
    }

    /// Writes what the records so far have produced, without an EOF marker or index: the
    /// output of a run that failed part-way.
    pub fn abandon(self) -> Result<(), Failure> {
        let out = self.writer.abandon()?;
        out.close().map_err(|e| io_failure("write failed", e))
    }

    /// Ends the file (EOF marker) and saves its index.
    pub fn finish(self) -> Result<(), Failure> {
        let bam::Finished { output: out, index } = self.writer.finish()?;
        out.close().map_err(|e| io_failure("write failed", e))?;
        if let (Some(built), Some(path)) = (index, self.index_path) {
            let file = File::create(&path)
                .map_err(|e| Failure::Message(format!("writing index failed: {path}: {e}")))?;
            built
                .write(io::BufWriter::new(file))
                .map_err(|e| Failure::Message(format!("writing index failed: {path}: {e}")))?;
        }
        Ok(())
    }
}

/// When to hand buffered output on: records come slowly from a slow link, and a reader of the
/// output should not wait for a full buffer. The clock is read every few records only.
pub(crate) struct Pace {
    records: u32,
    last: Instant,
}

impl Pace {
    const EVERY: u32 = 64;
    const AFTER: Duration = Duration::from_millis(200);

    /// A pace whose first flush is due after the first records.
    pub(crate) fn new() -> Pace {
        Pace {
            records: 0,
            last: Instant::now(),
        }
    }

    /// True when the output should be flushed now.
    pub(crate) fn due(&mut self) -> bool {
        self.records += 1;
        if self.records < Pace::EVERY {
            return false;
        }
        self.records = 0;
        let now = Instant::now();
        if now.duration_since(self.last) >= Pace::AFTER {
            self.last = now;
            return true;
        }
        false
    }
}
