//! `hts view` on a CRAM file: the facade's CRAM parts (opening through the cache, the
//! `.crai` plan, records laid out as BAM by the decoding workers), then records selected and
//! written as for BAM. Whole files, or regions through the `.crai` index.

use bam::{Header, Record};
use cram::pass::{self, Pass};
use hts::cram_cache::RemoteParts;
use hts::cram_layout::{bam_header, lay_out, to_bam_in};
use hts::cram_regions;

use super::cram_pairs;
use super::output;
use super::select::{self, Fate};
use super::sink::{self, Output};
use super::{print_count, report_filter_errors, Failure};
use super::{HeaderMode, ViewArgs};

/// The value of `--input-fmt-option KEY=VALUE` (the last one given).
fn input_option<'a>(args: &'a ViewArgs, key: &str) -> Option<&'a str> {
    args.input_options
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The reader of `file`, with its reference (`-T`, else found by the `@SQ` tags) and the
/// options `--input-fmt-option` and `-@` give it.
fn open_reader(
    args: &ViewArgs,
    file: &str,
    transport: &hfile::OpenOptions,
    fetched: &mut RemoteParts,
) -> Result<cram::Reader, Failure> {
    let reference = args
        .reference
        .as_deref()
        .or(input_option(args, "reference"));
    let mut reader = hts::cram_open::open(file, reference, transport, fetched)?;
    for warning in hts::cram_open::length_warnings(&reader) {
        eprintln!("{warning}");
    }
    let set =
        |key: &str| input_option(args, key).map(|v| v.trim().parse::<i64>().unwrap_or(0) != 0);
    if let Some(on) = set("decode_md") {
        reader.set_decode_md(on);
    }
    if let Some(on) = set("ignore_md5") {
        reader.set_ignore_md5(on);
    }
    reader.set_threads(args.threads);
    Ok(reader)
}

/// Where the records go and what has been counted: `view`'s outputs, its selection and the
/// multi-region iterator's choice.
struct Writer<'a> {
    args: &'a ViewArgs,
    file: &'a str,
    header: &'a Header,
    selection: crate::filter::Selection,
    keep: Option<cram_pairs::Keep>,
    main: Option<Output>,
    unselected: Option<Output>,
    count: u64,
    /// A written record's bytes, laid out again for the next one.
    spare: Vec<u8>,
}

impl Writer<'_> {
    /// Each pass's records, selected and written.
    fn passes(&mut self, passes: &[Pass], reader: &mut cram::Reader) -> Result<(), Failure> {
        // Ranges are read as one: their containers are decoded ahead across them.
        let joined = pass::joined(passes);
        let passes = joined.as_ref().map_or(passes, std::slice::from_ref);
        // Records are laid out as BAM where they are made whole, each in one reused record
        // (not with the multi-region iterator, which looks at each CRAM record before its
        // layout).
        let laid = self.keep.is_none();
        if laid {
            reader.set_layout(std::sync::Arc::new(lay_out));
        }
        for pass in passes {
            pass.start(reader);
            if laid {
                while let Some(records) = reader.next_laid_out().map_err(|e| self.failed(e))? {
                    for (i, bytes) in records.records().enumerate() {
                        self.laid(bytes, records.slice_of(i))?;
                    }
                    if let Some(e) = records.error() {
                        return Err(self.failed(e));
                    }
                    reader.recycle_laid(records);
                }
                continue;
            }
            while let Some(records) = reader.next_container().map_err(|e| self.failed(e))? {
                for a in &records {
                    self.record(a)?;
                }
                reader.recycle(records);
            }
        }
        Ok(())
    }

    /// An error about the file's records, named by the file (a URL's secrets redacted).
    fn failed(&self, e: impl std::fmt::Display) -> Failure {
        Failure::Message(format!("{}: {e}", hfile::redact_text(self.file)))
    }

    /// An error about a record of the slice at byte `slice`.
    fn bad_record(&self, slice: u64, e: impl std::fmt::Display) -> Failure {
        self.failed(format!("a record of the slice at byte {slice}: {e}"))
    }

    /// One record laid out as BAM by a decoding worker (from the slice at byte `slice`):
    /// copied into the record buffer kept for it, then selected and written.
    fn laid(&mut self, bytes: &[u8], slice: u64) -> Result<(), Failure> {
        let mut buf = std::mem::take(&mut self.spare);
        buf.clear();
        buf.extend_from_slice(bytes);
        let n_ref = self.header.refs().len();
        let r = Record::decode(buf, n_ref).map_err(|e| self.bad_record(slice, e))?;
        self.selected(r, slice)
    }

    /// One record: the multi-region iterator's check first (on the CRAM record: one it drops
    /// is not laid out as BAM), then the selection, then the output it goes to.
    fn record(&mut self, a: &cram::Alignment) -> Result<(), Failure> {
        if self.keep.as_mut().is_some_and(|k| !k.placed(a)) {
            return Ok(());
        }
        let n_ref = self.header.refs().len();
        let spare = std::mem::take(&mut self.spare);
        let r = to_bam_in(a, n_ref, spare).map_err(|e| self.bad_record(a.slice, e))?;
        if self.keep.as_ref().is_some_and(|k| !k.mate_kept(&r)) {
            self.spare = r.into_data();
            return Ok(());
        }
        self.selected(r, a.slice)
    }

    /// A record as BAM (from the slice at byte `slice`): the selection, then the output it
    /// goes to. A record the output cannot take (its tags corrupt) is an error about the
    /// input, where it came from.
    fn selected(&mut self, mut r: Record, slice: u64) -> Result<(), Failure> {
        let args = self.args;
        let fate = select::process(
            &args.select,
            &mut self.selection,
            &mut r,
            self.header,
            args.count,
        )
        .map_err(Failure::Message)?;
        if fate == Fate::Selected {
            self.count += 1;
        }
        let out = match fate {
            Fate::Selected | Fate::Unmapped => self.main.as_mut(),
            Fate::Unselected => self.unselected.as_mut(),
            Fate::Dropped => None,
        };
        if let Some(out) = out {
            let at = bgzf::VirtualOffset::new(0, 0);
            out.write(&r)
                .map_err(|e| match e.about_record(self.file, at) {
                    bam::Error::Record { kind, .. } => self.bad_record(slice, kind),
                    e => Failure::from(e),
                })?;
        }
        self.spare = r.into_data();
        Ok(())
    }

    /// The outputs given up after an error (a partial file is removed as samtools does).
    fn abandon(&mut self) {
        if let Some(m) = self.main.take() {
            let _ = m.abandon();
        }
        if let Some(u) = self.unselected.take() {
            let _ = u.abandon();
        }
    }
}

/// The transport options of a remote CRAM: the command line's, [`hts::cram_open::FETCHERS`]
/// unless it says.
fn transport(args: &ViewArgs) -> hfile::OpenOptions {
    let mut transport = hts::cram_open::transport();
    super::input::set_transport(args, &mut transport);
    transport
}

/// Has glibc keep the heap it has grown. Each slice allocates and frees a few MB (its blocks,
/// its reference bases): by default glibc gives the free top of its heap back to the system
/// once it exceeds twice the largest block it has mapped, and every page given back faults in
/// again for the next slice (chr22 at one thread: 25 K page faults against 5 K, once a
/// slice's records keep no small allocations above them). Kept up to 64 MB, blocks under
/// 32 MB from the heap.
fn keep_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; called before any thread is
    // started by this command.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// `hts view` on a CRAM file.
pub fn view(args: &ViewArgs, command_line: &str) -> Result<(), Failure> {
    keep_heap();
    let file = args.positional.first().map_or("-", String::as_str);
    let (index, regions) = super::input::index_and_regions(args)?;
    // The command line is judged before anything goes out (a bad filter is an error at once).
    let selection = args
        .select
        .selection(args.require_flags, args.exclude_flags, args.min_mapq)
        .map_err(Failure::Message)?;
    let transport = transport(args);
    // `-M` reads the index for its BED lines too.
    let multi = args.select.multi_region && args.header != HeaderMode::Only;
    let queries = !regions.is_empty() || multi;
    let mut fetched = RemoteParts::start(file, index, queries, args.no_cache, &transport);
    // A failure before the cached parts were shown current may come of their being stale.
    let asked = Asked {
        file,
        index,
        regions,
        multi,
        selection,
    };
    view_with(args, command_line, asked, &transport, &mut fetched)
        .map_err(|f| fetched.stale().map_or(f, Failure::from))
}

/// What the command line asks to read, and how records are selected.
struct Asked<'a> {
    file: &'a str,
    /// `-X`'s index.
    index: Option<&'a str>,
    regions: &'a [String],
    /// `-M` with more than the header: one pass over the index's containers for every region.
    multi: bool,
    selection: crate::filter::Selection,
}

/// [`view`] with the remote parts on their way (`fetched`).
fn view_with(
    args: &ViewArgs,
    command_line: &str,
    asked: Asked,
    transport: &hfile::OpenOptions,
    fetched: &mut RemoteParts,
) -> Result<(), Failure> {
    let Asked {
        file,
        index,
        regions,
        multi,
        mut selection,
    } = asked;
    let plan = output::plan(args, args.output.as_deref());
    let mut reader = open_reader(args, file, transport, fetched)?;
    let shown = hfile::redact_text(file);
    let input =
        bam_header(reader.header()).map_err(|e| Failure::Message(format!("{shown}: {e}")))?;
    let header = sink::header(args, &input, command_line, file)?;
    let (passes, keep, entries) = {
        let mut read_index = |name: &str| fetched.read_index(name);
        if multi {
            let (_, entries) = cram_regions::read_index(file, index, &mut read_index)?;
            let (pass, keep) = cram_pairs::passes(
                args,
                &mut reader,
                &entries,
                &header,
                regions,
                &mut selection,
            )?;
            (vec![pass], Some(keep), entries)
        } else {
            let (passes, entries) = cram_regions::plan(
                file,
                index,
                regions,
                &input,
                reader.file_len(),
                reader.data_end(),
                &mut read_index,
            )?;
            (passes, None, entries)
        }
    };
    let remote = hfile::scheme_of(file).is_some();
    pass::announce(&mut reader, remote, &passes, &entries);
    // The containers are on their way; nothing is written before the cached parts they were
    // found with are shown current.
    fetched.confirm()?;
    let unsupported = |u: output::Unsupported| {
        Failure::Message(format!("hts view does not support writing {} yet", u.0))
    };
    let main = if args.count {
        None
    } else {
        Some(Output::open(args, &plan.map_err(unsupported)?, &header)?)
    };
    let unselected = match (&args.select.unselected, args.count) {
        (Some(path), false) => Some(Output::open(
            args,
            &output::plan(args, Some(path)).map_err(unsupported)?,
            &header,
        )?),
        _ => None,
    };
    let mut w = Writer {
        args,
        file,
        header: &header,
        selection,
        keep,
        main,
        unselected,
        count: 0,
        spare: Vec::new(),
    };
    if args.header != HeaderMode::Only {
        if let Err(failure) = w.passes(&passes, &mut reader) {
            if let Failure::Message(_) = failure {
                w.abandon();
            }
            return Err(failure);
        }
    }
    report_filter_errors(&w.selection);
    if reader.ended_without_eof_marker() {
        eprintln!("[W::hts_close] EOF marker is absent. The input is probably truncated");
    }
    if let Some(m) = w.main {
        m.finish()?;
    }
    if let Some(u) = w.unselected {
        u.finish()?;
    }
    print_count(args, w.count)
}
