//! Writing records as BAM, SAM or BGZF-compressed SAM, optionally building a BAI or CSI index
//! on the way, byte-identical (after decompression) to what samtools 1.16 writes.
//!
//! ```
//! use bam::writer::{OutputFormat, Writer, WriterOptions};
//! use bam::header::{Header, Reference};
//!
//! let refs = vec![Reference { name: b"c".to_vec(), len: 9 }];
//! let header = Header::from_parts(b"@HD\tVN:1.6\n".to_vec(), refs).expect("a valid header");
//! let options = WriterOptions { format: OutputFormat::Bam, ..WriterOptions::default() };
//! let writer = Writer::new(Vec::new(), &header, &options)?;
//! let finished = writer.finish()?;
//! assert!(finished.index.is_none());
//! let bytes = finished.output;
//! let mut reader = bam::Reader::from_bytes("mem.bam", bytes)?;
//! assert_eq!(reader.header().refs()[0].name, b"c");
//! assert!(reader.records()?.next_record()?.is_none());
//! # Ok::<(), bam::Error>(())
//! ```

use std::collections::VecDeque;
use std::io::{self, Write};

use bgzf::BlockPosition;
use index::build::{Builder, BuiltIndex, Scheme};

use crate::encode::encode;
use crate::flags::Flags;
use crate::header::Header;
use crate::record::Record;
use crate::sam::{SamWriteError, SamWriter};
use crate::{Error, Result};

/// What a [`Writer`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// SAM text.
    #[default]
    Sam,
    /// SAM text in BGZF blocks (`.sam.gz`).
    SamBgzf,
    /// BAM.
    Bam,
}

/// How a [`Writer`] writes.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// BAM, SAM or BGZF-compressed SAM.
    pub format: OutputFormat,
    /// Compression level as samtools takes it: -1 the default, 0 stored blocks, 1 fastest to 9
    /// smallest (htslib's mapping to libdeflate levels, [`bgzf::writer::htslib_level`]).
    pub level: i64,
    /// Threads besides the calling one (0: none) compressing BGZF blocks, or for plain SAM,
    /// formatting batches of records ([`SamWriter`]).
    pub threads: usize,
    /// SAM text is handed to the output once this much has gathered (without threads): a
    /// megabyte suits a file; into a pipe, what the pipe holds (64 KiB) lets its reader run
    /// while the next piece is formatted.
    pub write_size: usize,
    /// Write the header of SAM output (BAM output always has one).
    pub sam_header: bool,
    /// Build an index of this scheme while writing (BAM and BGZF-compressed SAM only).
    pub index: Option<Scheme>,
    /// What messages call the output.
    pub name: String,
}

impl Default for WriterOptions {
    fn default() -> WriterOptions {
        WriterOptions {
            format: OutputFormat::Sam,
            level: -1,
            threads: 0,
            write_size: crate::sam::DEFAULT_WRITE_SIZE,
            sam_header: false,
            index: None,
            name: "output".to_string(),
        }
    }
}

enum Sink<W: Write> {
    Text(SamWriter<W>),
    Bgzf(bgzf::Writer<W>),
}

/// A record written but not yet in the index, because the address of its block is not known
/// yet (blocks are still being compressed on other threads).
struct Pending {
    start: Option<BlockPosition>,
    end: BlockPosition,
    tid: i32,
    beg: i64,
    end_pos: i64,
    flags: Flags,
}

struct Indexer {
    builder: Builder,
    pending: VecDeque<Pending>,
}

/// Writes a header and records.
pub struct Writer<W: Write> {
    header: Header,
    format: OutputFormat,
    sink: Sink<W>,
    index: Option<Indexer>,
    line: Vec<u8>,
    name: String,
}

fn vo(address: u64, position: BlockPosition) -> u64 {
    address << 16 | u64::from(position.uoffset)
}

impl<W: Write> Writer<W> {
    /// Writes `header` (for SAM only if [`WriterOptions::sam_header`]) and prepares for records.
    pub fn new(inner: W, header: &Header, options: &WriterOptions) -> Result<Writer<W>> {
        let name = options.name.clone();
        let werr = |source| Error::Write {
            name: name.clone(),
            source,
        };
        let mut sink = match options.format {
            OutputFormat::Sam => {
                if options.index.is_some() {
                    return Err(Error::Unwritable {
                        name,
                        what: "the output".to_string(),
                        reason: "uncompressed SAM cannot be indexed".into(),
                    });
                }
                let mut inner = inner;
                if options.sam_header {
                    inner.write_all(&header.text_for_output()).map_err(werr)?;
                }
                Sink::Text(
                    SamWriter::new(inner, header, options.threads)
                        .with_write_size(options.write_size),
                )
            }
            OutputFormat::SamBgzf | OutputFormat::Bam => {
                let level = bgzf::writer::htslib_level(options.level);
                let mut w = bgzf::Writer::with_level(inner, level).map_err(|e| Error::Write {
                    name: name.clone(),
                    source: io::Error::other(e),
                })?;
                w.set_threads(options.threads).map_err(werr)?;
                Sink::Bgzf(w)
            }
        };
        match &mut sink {
            Sink::Bgzf(w) if options.format == OutputFormat::Bam => {
                write_bam_header(w, header).map_err(werr)?;
                w.flush_block().map_err(werr)?;
            }
            Sink::Bgzf(w) => {
                if options.sam_header {
                    w.write_all(&header.text_for_output()).map_err(werr)?;
                    w.flush_block().map_err(werr)?;
                }
            }
            Sink::Text(_) => {}
        }
        let index = match (options.index, &mut sink) {
            (Some(scheme), Sink::Bgzf(w)) => {
                let first = w.virtual_offset().map_err(werr)?.raw();
                w.forget_before(w.position().block);
                Some(Indexer {
                    builder: Builder::new(scheme, header.refs().len(), first),
                    pending: VecDeque::new(),
                })
            }
            _ => None,
        };
        Ok(Writer {
            header: header.clone(),
            format: options.format,
            sink,
            index,
            line: Vec::with_capacity(1 << 16),
            name,
        })
    }

    /// The header written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    fn write_error(&self, source: io::Error) -> Error {
        Error::Write {
            name: self.name.clone(),
            source,
        }
    }

    /// Writes one record (owned, or read in place).
    pub fn write_record<D: AsRef<[u8]>>(&mut self, record: &Record<D>) -> Result<()> {
        let mut start = None;
        let result = match (&mut self.sink, self.format) {
            (Sink::Bgzf(w), OutputFormat::Bam) => {
                let e = encode(record).map_err(|e| Error::Unwritable {
                    name: self.name.clone(),
                    what: format!("read {}", String::from_utf8_lossy(record.name())),
                    reason: Box::new(e),
                })?;
                let mut put = || -> io::Result<()> {
                    if self.index.is_some() {
                        w.flush_try(4 + e.index_block_len)?;
                        start = Some(w.position());
                    }
                    w.flush_try(4 + e.block_len)?;
                    e.for_each_piece(|p| w.write_all(p))
                };
                put()
            }
            (Sink::Text(w), _) => {
                return w.write_record(record).map_err(|e| sam_error(&self.name, e));
            }
            (Sink::Bgzf(w), _) => {
                self.line.clear();
                crate::sam::write_sam(record, &self.header, &mut self.line).map_err(|kind| {
                    Error::Unwritable {
                        name: self.name.clone(),
                        what: format!("read {}", crate::error::printable(record.name())),
                        reason: Box::new(kind),
                    }
                })?;
                w.flush_try(self.line.len())
                    .and_then(|()| w.write_all(&self.line))
            }
        };
        result.map_err(|e| self.write_error(e))?;
        if let (Some(ix), Sink::Bgzf(w)) = (&mut self.index, &self.sink) {
            ix.pending.push_back(Pending {
                start,
                end: w.position(),
                // The index is built from the stored values, as htslib builds it.
                tid: record.stored_coordinates().ref_id,
                beg: i64::from(record.stored_coordinates().pos),
                end_pos: record.stored_end_pos(),
                flags: record.flags(),
            });
            self.resolve()?;
        }
        Ok(())
    }

    /// Passes buffered SAM text on to the inner writer and flushes it (for a reader waiting on
    /// records that come slowly). BGZF output is left as it is: ending a block early would
    /// move block boundaries away from htslib's, and the index offsets with them.
    pub fn flush_text(&mut self) -> Result<()> {
        match &mut self.sink {
            Sink::Text(w) => w.flush().map_err(|e| sam_error(&self.name, e)),
            Sink::Bgzf(_) => Ok(()),
        }
    }

    /// Hands to the index builder every pending record whose blocks have addresses.
    fn resolve(&mut self) -> Result<()> {
        let (Some(ix), Sink::Bgzf(w)) = (&mut self.index, &mut self.sink) else {
            return Ok(());
        };
        while let Some(p) = ix.pending.front() {
            let start = match p.start {
                Some(s) => match w.block_address(s.block) {
                    Some(a) => Some(vo(a, s)),
                    None => break,
                },
                None => None,
            };
            let Some(end) = w.block_address(p.end.block).map(|a| vo(a, p.end)) else {
                break;
            };
            if let Some(s) = start {
                ix.builder.amend_last(s);
            }
            let mapped = !p.flags.is_unmapped();
            ix.builder
                .push(p.tid, p.beg, p.end_pos, end, mapped)
                .map_err(|e| Error::Unwritable {
                    name: self.name.clone(),
                    what: format!(
                        "the record with flag {} at position {} of reference #{} (for the index)",
                        p.flags,
                        p.beg + 1,
                        p.tid + 1
                    ),
                    reason: Box::new(e),
                })?;
            let oldest = p.start.map_or(p.end.block, |s| s.block);
            ix.pending.pop_front();
            w.forget_before(oldest);
        }
        Ok(())
    }

    /// Writes what the records so far have produced (SAM text, BGZF blocks) and returns the
    /// inner writer, with no EOF marker and no index: for output cut short by a failure (a
    /// damaged input), which keeps the records before it as samtools does but must not look
    /// complete.
    pub fn abandon(self) -> Result<W> {
        let name = self.name.clone();
        match self.sink {
            Sink::Text(w) => w.finish().map_err(|e| sam_error(&name, e)),
            Sink::Bgzf(w) => w.abandon().map_err(|source| Error::Write { name, source }),
        }
    }

    /// Flushes everything, ends a BGZF output with its EOF marker, and returns the inner writer
    /// and the index built (if one was asked for), ready to be saved.
    pub fn finish(mut self) -> Result<Finished<W>> {
        let mut built = None;
        if let Sink::Bgzf(w) = &mut self.sink {
            // As `sam_idx_save`: the last block ends before the index takes its end offset.
            let end = w
                .flush_block()
                .and_then(|()| w.virtual_offset())
                .map_err(|e| Error::Write {
                    name: self.name.clone(),
                    source: e,
                })?;
            if self.index.is_some() {
                // Every block is written now, so every pending record resolves.
                self.resolve()?;
            }
            if let Some(mut ix) = self.index.take() {
                if self.format == OutputFormat::Bam {
                    ix.builder.amend_last(end.raw());
                }
                built = Some(ix.builder.finish(end.raw()));
            }
        }
        let name = self.name.clone();
        let name_for_sam = name.clone();
        let werr = |source| Error::Write { name, source };
        let inner = match self.sink {
            Sink::Text(w) => w.finish().map_err(|e| sam_error(&name_for_sam, e))?,
            Sink::Bgzf(w) => w.finish().map_err(werr)?,
        };
        Ok(Finished {
            output: inner,
            index: built,
        })
    }
}

/// What [`Writer::finish`] hands back.
#[derive(Debug)]
pub struct Finished<W> {
    /// The inner writer, everything written to it.
    pub output: W,
    /// The index built while writing, if one was asked for ([`WriterOptions::index`]).
    pub index: Option<BuiltIndex>,
}

/// What [`SamWriter`] reports, as the other formats report it.
fn sam_error(name: &str, e: SamWriteError) -> Error {
    match e {
        SamWriteError::Record(kind) => Error::Unwritable {
            name: name.to_string(),
            what: "a record as SAM".to_string(),
            reason: Box::new(kind),
        },
        SamWriteError::Io(source) => Error::Write {
            name: name.to_string(),
            source,
        },
    }
}

/// `bam_hdr_write`: magic, text, references.
fn write_bam_header<W: Write>(w: &mut W, header: &Header) -> io::Result<()> {
    let text = header.text();
    w.write_all(b"BAM\x01")?;
    w.write_all(&(text.len() as u32).to_le_bytes())?;
    w.write_all(text)?;
    w.write_all(&(header.refs().len() as i32).to_le_bytes())?;
    for r in header.refs() {
        w.write_all(&(r.name.len() as i32 + 1).to_le_bytes())?;
        w.write_all(&r.name)?;
        w.write_all(&[0])?;
        w.write_all(&r.len.to_le_bytes())?;
    }
    Ok(())
}
