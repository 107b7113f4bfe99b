//! `samtools view` on one file, in the order samtools does it (read the selection options,
//! open the input, edit the header, open the outputs, then select, edit and write the records
//! of the whole file, of each region or of all regions at once, then the indexes and the
//! count), except that any query is planned, and cached parts of a remote file shown current,
//! before an output is opened.

use std::io::Write;

use bam::{Header, Record};
use hts::alignment::Records;

use super::input;
use super::output;
use super::select::{self, Fate};
use super::sink::{self, Output, Pace};
use super::{io_failure, Failure, HeaderMode, ViewArgs};
use crate::filter::Selection;

/// samtools' `stringify_argv`: the words joined by spaces, tabs made spaces. The command line
/// goes into the output's `@PG` line: a signed URL in it would hand its signature on, and a
/// `--header 'Authorization: ...'` its credential, so query strings and the values of
/// credential headers are hidden.
pub fn command_line(program: &str, argv: &[String]) -> String {
    let mut words = vec![program.to_string(), "view".to_string()];
    words.extend(argv.iter().map(|word| {
        // `--header=Name: value` as well as `--header` `Name: value`.
        let (option, value) = match word.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (format!("{o}="), v),
            _ => (String::new(), word.as_str()),
        };
        format!("{option}{}", hfile::redact_text(value))
    }));
    hfile::redact_text(&words.join(" ").replace('\t', " "))
}

/// Where selected (and unselected) records go: the outputs, or only a count.
enum Sink {
    Records {
        main: Output,
        /// `-U`.
        unselected: Option<Output>,
    },
    Count,
}

/// `samtools view` on one file, as the arguments ask; `command_line` goes into the `@PG`
/// line. A [`Failure::Stale`] comes before anything is written: run again without the cache.
pub fn run(args: &ViewArgs, command_line: &str) -> Result<(), Failure> {
    let select = &args.select;
    if args.count && select.fetch_pairs {
        return Err(Failure::Message(
            "The options -P and -c cannot be combined".to_string(),
        ));
    }
    if select.unmap && select.unselected.is_some() {
        return Err(Failure::Message(
            "Options --unoutput and --unmap are mutually exclusive.".to_string(),
        ));
    }
    let name = args.positional.first().map_or("-", String::as_str);
    if hts::sniff::is_cram(name) || hts::sniff::is_local_cram(name) {
        keep_heap();
    }
    let mut selection = select
        .selection(args.require_flags, args.exclude_flags, args.min_mapq)
        .map_err(Failure::Message)?;
    let plan = output::plan(args, args.output.as_deref());
    let plan_unselected = select
        .unselected
        .as_deref()
        .map(|path| output::plan(args, Some(path)));
    let warn = |p: &Result<output::Plan, output::Unsupported>| {
        p.as_ref().is_ok_and(|p| p.warn_uncompressed_ignored)
    };
    if warn(&plan) || plan_unselected.as_ref().is_some_and(warn) {
        eprintln!("[view] Warning option -u ignored due to filename suffix");
    }
    let mut reader = input::open(args)?;
    // htslib parses the header text when a reference name is looked up or a line is added (@PG,
    // -r/-R); from then on the text's @SQ lines are references too (`Header::targets`), for
    // the records read and the names written. samtools has one header object: the input's is
    // parsed before the output's is made from it.
    if sink::edits_header(args) || input::looks_up_names(args) {
        let _ = reader.header().text_error();
    }
    let header = sink::header(args, reader.header(), command_line, name)?.into_owned();
    let cram = reader.is_cram();
    let mut records = input::plan(args, &mut reader, &header, &mut selection)?;
    // A BAM's EOF marker is looked for before its records (`bam_hdr_read`), a CRAM's found
    // missing once they are read (`hts_close`).
    if !cram && records.eof_marker()? == Some(false) {
        eprintln!("[W::bam_hdr_read] EOF marker is absent. The input is probably truncated");
    }
    let mut sink = if args.count {
        Sink::Count
    } else {
        let unsupported = |u: output::Unsupported| {
            Failure::Message(format!("hts view does not support writing {} yet", u.0))
        };
        let main = Output::open(args, &plan.map_err(unsupported)?, &header)?;
        let unselected = match plan_unselected {
            Some(p) => Some(Output::open(args, &p.map_err(unsupported)?, &header)?),
            None => None,
        };
        Sink::Records { main, unselected }
    };
    let mut count: u64 = 0;
    if args.header != HeaderMode::Only {
        let written = write_records(
            args,
            &mut selection,
            &header,
            &mut records,
            &mut sink,
            &mut count,
        );
        if let Err(failure) = written {
            // The records before the damage are written, at every thread count, as samtools
            // writes them; then the error. A stale cache is read again before anything is
            // written, and a closed pipe takes nothing more.
            if let (Failure::Message(_), Sink::Records { main, unselected }) = (&failure, sink) {
                let _ = main.abandon();
                if let Some(u) = unselected {
                    let _ = u.abandon();
                }
            }
            return Err(failure);
        }
    }
    report_filter_errors(&selection);
    if cram && records.eof_marker()? == Some(false) {
        eprintln!("[W::hts_close] EOF marker is absent. The input is probably truncated");
    }
    if let Sink::Records { main, unselected } = sink {
        main.finish()?;
        if let Some(u) = unselected {
            u.finish()?;
        }
    }
    print_count(args, count)
}

/// samtools' complaint about records a filter expression could not judge.
pub fn report_filter_errors(selection: &Selection) {
    let errors = selection.evaluation_errors();
    if let n @ 1.. = errors.count {
        let why = errors.first.map_or(String::new(), |e| format!(" ({e})"));
        eprintln!(
            "[E::sam_passes_filter] Couldn't process filter expression{why}: {n} records not selected"
        );
    }
}

/// With `-c`, the count of selected records, to the output.
pub fn print_count(args: &ViewArgs, count: u64) -> Result<(), Failure> {
    if args.count {
        let mut out = sink::create(args.output.as_deref().filter(|p| *p != "-"), 0)?;
        writeln!(out, "{count}")
            .and_then(|()| out.close())
            .map_err(|e| io_failure("writing the count failed", e))?;
    }
    Ok(())
}

/// samtools' `process_one_record` on every record: selected ones (edited) to the output and
/// the count, with `-p` unselected ones marked unmapped to the output, else to `-U`. A record
/// read in place is judged and written as it is when only its fixed fields decide and no edit
/// applies; otherwise it is copied into an owned record first.
fn write_records(
    args: &ViewArgs,
    selection: &mut Selection,
    header: &Header,
    records: &mut Records<'_>,
    sink: &mut Sink,
    count: &mut u64,
) -> Result<(), Failure> {
    if matches!(sink, Sink::Count) && selection.selects_all() && !args.select.fetch_pairs {
        // Nothing to judge: only how many records there are, and the same error where reading
        // them fails.
        *count += records.count()?;
        return Ok(());
    }
    let in_place = selection.by_fields_only()
        && !args.select.fetch_pairs
        && (args.count || !args.select.edits());
    let mut pace = Pace::new();
    while let Some(record) = records.next_record_ref()? {
        let written = if in_place {
            let fate = if selection.passes_fields(&record) {
                Fate::Selected
            } else {
                Fate::Unselected
            };
            deliver(sink, fate, &record, count)
        } else {
            let mut record = record.to_owned_record();
            let fate = select::process(&args.select, selection, &mut record, header, args.count)
                .map_err(Failure::Message)?;
            deliver(sink, fate, &record, count)
        };
        // A record the writer refuses (corrupt aux data) is named by where it is in the input.
        written.map_err(
            |e| match e.about_record("", bgzf::VirtualOffset::new(0, 0)) {
                bam::Error::Record { kind, .. } => Failure::from(records.record_error(kind)),
                e => Failure::from(e),
            },
        )?;
        if let Sink::Records { main, unselected } = sink {
            if pace.due() {
                main.flush_text()?;
                if let Some(u) = unselected {
                    u.flush_text()?;
                }
            }
        }
    }
    Ok(())
}

/// Counts a selected record and writes a record where its fate sends it.
#[inline]
fn deliver<D: AsRef<[u8]>>(
    sink: &mut Sink,
    fate: Fate,
    record: &Record<D>,
    count: &mut u64,
) -> bam::Result<()> {
    if fate == Fate::Selected {
        *count += 1;
    }
    let Sink::Records { main, unselected } = sink else {
        return Ok(());
    };
    match (fate, unselected.as_mut()) {
        (Fate::Selected | Fate::Unmapped, _) => main.write(record),
        (Fate::Unselected, Some(u)) => u.write(record),
        (Fate::Unselected | Fate::Dropped, _) => Ok(()),
    }
}

/// Has glibc keep the heap it has grown, for a CRAM. Each slice allocates and frees a few MB
/// (its blocks, its reference bases): by default glibc gives the free top of its heap back to
/// the system once it exceeds twice the largest block it has mapped, and every page given
/// back faults in again for the next slice (chr22 at one thread: 25 K page faults against
/// 5 K, once a slice's records keep no small allocations above them). Kept up to 64 MB, blocks
/// under 32 MB from the heap.
fn keep_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; called before any thread is
    // started by this command.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}
