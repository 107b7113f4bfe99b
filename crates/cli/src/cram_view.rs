//! `hts view` on a local CRAM file: the records made whole by the cram crate, turned into BAM
//! records here (the one place that knows both crates), then selected and written as for BAM.
//! Whole files, or regions through the `.crai` index (`cram_regions`).

use bam::{Header, Record, Reference};

use crate::args::{HeaderMode, ViewArgs};
use crate::cram_multi;
use crate::cram_regions::{self, Pass};
use crate::cram_remote::RemoteParts;
use crate::output;
use crate::select::{self, Fate};
use crate::sink::{self, Output};
use crate::view::{print_count, report_filter_errors, Failure};

/// Whether `path` names a CRAM file: a local one whose first bytes say so, or a URL whose path
/// ends in `.cram` (a remote file is not opened twice to tell).
pub fn is_cram(path: &str) -> bool {
    if path == "-" {
        return crate::cram_input::stdin_is_cram();
    }
    if hfile::scheme_of(path).is_some() {
        let path_part = path.split_once('?').map_or(path, |(p, _)| p);
        return path_part.to_ascii_lowercase().ends_with(".cram");
    }
    is_local_cram(path)
}

/// Whether `path` names a local CRAM file (its first bytes say so).
pub fn is_local_cram(path: &str) -> bool {
    matches!(sniff_local(path), Sniffed::Cram)
}

/// What an input is, as far as its first bytes tell.
pub enum Sniffed {
    /// A CRAM file.
    Cram,
    /// Anything else; for a local regular file, the file opened to tell, at its start, so that
    /// the BAM reader need not open it again (samtools opens its input once).
    Other(Option<std::fs::File>),
}

/// [`is_cram`], keeping a local regular file open for the reader that follows.
pub fn sniff(path: &str) -> Sniffed {
    if path == "-" || hfile::scheme_of(path).is_some() {
        return if is_cram(path) {
            Sniffed::Cram
        } else {
            Sniffed::Other(None)
        };
    }
    sniff_local(path)
}

/// A local path's first bytes: CRAM, or the regular file opened and rewound.
fn sniff_local(path: &str) -> Sniffed {
    if path == "-" || hfile::scheme_of(path).is_some() {
        return Sniffed::Other(None);
    }
    // Only a regular file is sniffed: reading a pipe's first bytes would take them from the
    // BAM reader that opens it next (and opening a named pipe would wait for a writer).
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Sniffed::Other(None);
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return Sniffed::Other(None);
    };
    let mut magic = [0u8; 4];
    if std::io::Read::read_exact(&mut file, &mut magic).is_ok() && &magic == b"CRAM" {
        return Sniffed::Cram;
    }
    let rewound = std::io::Seek::rewind(&mut file).is_ok();
    Sniffed::Other(rewound.then_some(file))
}

/// The CRAM record as a BAM record, as htslib's `bam_set1` lays it out.
pub fn to_bam(a: &cram::Alignment, n_ref: usize) -> Result<Record, String> {
    to_bam_in(a, n_ref, Vec::new())
}

/// [`to_bam`] laid out in `buf` (a record's bytes given back by `Record::into_data`, so that
/// a long read allocates nothing per record).
pub fn to_bam_in(a: &cram::Alignment, n_ref: usize, mut buf: Vec<u8>) -> Result<Record, String> {
    buf.clear();
    lay_out(a, &mut buf)?;
    Record::decode(buf, n_ref).map_err(|e| e.to_string())
}

/// The CRAM record's BAM bytes (after `block_size`), as htslib's `bam_set1` lays them out,
/// appended to `d`: the layout the reader's workers use ([`cram::Reader::set_layout`]).
pub fn lay_out(a: &cram::Alignment, d: &mut Vec<u8>) -> Result<(), String> {
    let name: &[u8] = if a.name.is_empty() { b"*" } else { &a.name };
    if name.len() > 254 {
        return Err(format!(
            "query name {} too long",
            String::from_utf8_lossy(name)
        ));
    }
    // A CIGAR too long for BAM's 16-bit count goes into a CG:B:I tag behind a `kSmN`
    // placeholder, as BAM stores it; `Record::decode` puts it back.
    let long = a.cigar.len() > 0xffff;
    let rlen = reference_len(a);
    let pos = a.pos - 1;
    let l_seq = a.seq.len();
    let placeholder = [((l_seq as u32) << 4) | 4, ((rlen as u32) << 4) | 3];
    let (cigar, n_cigar): (&[u32], u16) = if long {
        (&placeholder, 2)
    } else {
        (&a.cigar, a.cigar.len() as u16)
    };
    let bin = index::binning::reg2bin_signed(pos, pos + rlen.max(1), 14, 5) as u16;
    d.reserve(32 + name.len() + 1 + 4 * a.cigar.len() + l_seq * 2 + a.aux.len());
    d.extend_from_slice(&a.ref_id.to_le_bytes());
    d.extend_from_slice(&(pos as i32).to_le_bytes());
    d.push((name.len() + 1) as u8);
    d.push(a.mapq);
    d.extend_from_slice(&bin.to_le_bytes());
    d.extend_from_slice(&n_cigar.to_le_bytes());
    d.extend_from_slice(&a.flags.to_le_bytes());
    d.extend_from_slice(&(l_seq as i32).to_le_bytes());
    d.extend_from_slice(&a.mate_ref_id.to_le_bytes());
    d.extend_from_slice(&((a.mate_pos - 1) as i32).to_le_bytes());
    d.extend_from_slice(&(a.tlen as i32).to_le_bytes());
    d.extend_from_slice(name);
    d.push(0);
    for c in cigar {
        d.extend_from_slice(&c.to_le_bytes());
    }
    // Packed into bytes made room for first: an iterator extending `d` checks its capacity
    // a byte at a time.
    let packed = d.len();
    d.resize(packed + l_seq.div_ceil(2), 0);
    let mut pairs = a.seq.chunks_exact(2);
    for (o, p) in d[packed..].iter_mut().zip(&mut pairs) {
        *o = (NT16[usize::from(p[0])] << 4) | NT16[usize::from(p[1])];
    }
    if let ([last], Some(o)) = (pairs.remainder(), d.last_mut()) {
        *o = NT16[usize::from(*last)] << 4;
    }
    if a.qual.len() == l_seq {
        d.extend_from_slice(&a.qual);
    } else {
        d.extend(std::iter::repeat_n(0xff, l_seq));
    }
    d.extend_from_slice(&a.aux);
    if long {
        d.extend_from_slice(b"CGBI");
        d.extend_from_slice(&(a.cigar.len() as u32).to_le_bytes());
        for c in &a.cigar {
            d.extend_from_slice(&c.to_le_bytes());
        }
    }
    Ok(())
}

/// The reference bases a record's CIGAR covers (M, D, N, = and X); 0 for an unmapped one.
pub fn reference_len(a: &cram::Alignment) -> i64 {
    if a.flags & 0x4 != 0 {
        return 0;
    }
    a.cigar
        .iter()
        .filter(|&&c| matches!(c & 0xf, 0 | 2 | 3 | 7 | 8))
        .map(|c| i64::from(c >> 4))
        .sum()
}

/// [`nt16`] of every byte, looked up once a base.
const NT16: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = nt16(i as u8);
        i += 1;
    }
    t
};

/// htslib's `seq_nt16_table`: a base letter as its 4-bit code (anything else is N).
const fn nt16(b: u8) -> u8 {
    match b.to_ascii_uppercase() {
        b'=' => 0,
        b'A' => 1,
        b'C' => 2,
        b'M' => 3,
        b'G' => 4,
        b'R' => 5,
        b'S' => 6,
        b'V' => 7,
        b'T' | b'U' => 8,
        b'W' => 9,
        b'Y' => 10,
        b'H' => 11,
        b'K' => 12,
        b'D' => 13,
        b'B' => 14,
        _ => 15,
    }
}

/// The CRAM's header as a BAM header: its text, and references from its `@SQ` lines.
fn bam_header(h: &cram::SamHeader) -> Result<Header, String> {
    let refs = h
        .references
        .iter()
        .map(|(name, len)| Reference {
            name: name.clone(),
            len: u32::try_from(*len).unwrap_or(u32::MAX),
        })
        .collect();
    Header::from_parts(h.text.clone(), refs).map_err(|e| e.to_string())
}

/// The value of `--input-fmt-option KEY=VALUE` (the last one given).
fn input_option<'a>(args: &'a ViewArgs, key: &str) -> Option<&'a str> {
    args.input_options
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The reader of `file`, with its reference (`-T`, else found by the `@SQ` tags through
/// `references`) and the options `--input-fmt-option` and `-@` give it.
fn open_reader(
    args: &ViewArgs,
    file: &str,
    transport: &hfile::OpenOptions,
    fetched: &mut RemoteParts,
) -> Result<cram::Reader, Failure> {
    let references = std::sync::Arc::new(crate::cram_refs::References::new(transport));
    let path = args
        .reference
        .as_deref()
        .or(input_option(args, "reference"));
    // A remote reference's index and first bytes are fetched on a thread of their own while
    // the CRAM's opening is read: neither needs an answer from the other.
    let remote = path.filter(|p| cram::remote::is_url(p)).map(|p| {
        let (p, refs) = (p.to_string(), references.clone());
        std::thread::spawn(move || cram::Fasta::open_remote(&p, refs.as_ref()))
    });
    let local = match path {
        Some(p) if remote.is_none() => {
            Some(cram::Fasta::open(std::path::Path::new(p)).map_err(Failure::Message)?)
        }
        _ => None,
    };
    let shown = hfile::redact_text(file);
    // htslib names generated reads after the file name as given, less its directories.
    let prefix = file.rsplit('/').next().unwrap_or(file);
    let (input, opening) = fetched
        .open(file)
        .map_err(|e| Failure::Message(format!("{shown}: {e}")))?;
    let mut reader = cram::Reader::open_source(input, prefix, local)
        .map_err(|e| Failure::Message(format!("{shown}: {e}")))?;
    fetched.keep_opening(opening);
    if let Some(fetch) = remote {
        let fasta = fetch
            .join()
            .map_err(|_| Failure::Message("the reference's fetch failed".to_string()))?
            .map_err(Failure::Message)?;
        reader.set_reference(fasta);
    }
    if let Some(fasta) = reader.reference() {
        for (name, stated, found) in reader.header().length_mismatches(fasta) {
            let name = String::from_utf8_lossy(&name);
            eprintln!("[W::sanitise_SQ_lines] Header @SQ length mismatch for ref {name}, {stated} vs {found}");
        }
    }
    reader.set_remote(references);
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
    selection: samtools::filter::Selection,
    keep: Option<cram_multi::Keep>,
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
        let joined = crate::cram_regions::joined(passes);
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

/// Data requests in flight at once for a remote CRAM, unless `--fetchers` says (BAM's default
/// is 8). A container is decoded whole and in order, once all of it has arrived; eight fetched
/// at once over a link they share all finish together, and decoding starts only then. Six let
/// the first ones finish early and be decoded while the rest arrive, and still fill a store that
/// caps each connection. `bench-remote --format cram --runs 5 --cases r10 --variants`, 2026-12-06:
/// ec2 r10 0.150 s with 8, 0.134 s with 6, 0.135 s with 4; s3 0.112 s with 8, 0.109 s with 6,
/// 0.115 s with 4.
const CRAM_FETCHERS: usize = 6;

/// The transport options of a remote CRAM: the command line's, [`CRAM_FETCHERS`] unless it says.
fn transport(args: &ViewArgs) -> hfile::OpenOptions {
    let mut transport = hfile::OpenOptions {
        fetchers: CRAM_FETCHERS,
        ..Default::default()
    };
    crate::input::set_transport(args, &mut transport);
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
    let (index, regions) = crate::input::index_and_regions(args)?;
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
    view_with(args, command_line, asked, &transport, &mut fetched).map_err(|f| fetched.stale(f))
}

/// What the command line asks to read, and how records are selected.
struct Asked<'a> {
    file: &'a str,
    /// `-X`'s index.
    index: Option<&'a str>,
    regions: &'a [String],
    /// `-M` with more than the header: one pass over the index's containers for every region.
    multi: bool,
    selection: samtools::filter::Selection,
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
            let (pass, keep) = cram_multi::passes(
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
    cram_regions::announce(&mut reader, file, &passes, &entries);
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
