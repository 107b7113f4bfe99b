//! The regions of `hts view x.cram REGION...` read through the `.crai` index, one after
//! another as samtools reads them: each from the container the index names, its records
//! filtered as htslib's CRAM reader filters them (`cram::reader::Range`).

use bam::Header;
use cram::crai::CraiEntry;
use cram::reader::Range;
use region::{parse_region, Region};

use crate::Error;

/// One pass over the file.
pub enum Pass {
    /// Every record from the first container.
    Whole,
    /// The records of a range, from exactly these containers (their bytes, in file order).
    Range(Vec<std::ops::Range<u64>>, Range),
    /// Every record of these containers, judged by the multi-region iterator (`cram_multi`).
    Planned(Vec<std::ops::Range<u64>>),
    /// Several ranges, one after another ([`joined`]).
    Ranges(Vec<(Vec<std::ops::Range<u64>>, Range)>),
}

impl Pass {
    /// The containers the pass reads (their bytes, in file order); none for a whole file.
    fn containers(&self) -> Vec<std::ops::Range<u64>> {
        match self {
            Pass::Range(containers, _) | Pass::Planned(containers) => containers.clone(),
            Pass::Ranges(ranges) => ranges.iter().flat_map(|(c, _)| c.clone()).collect(),
            Pass::Whole => Vec::new(),
        }
    }

    /// The bytes the pass reads: its containers and, for a region, the first
    /// [`cram::reader::HEADER_PEEK`] bytes of each container its reading meets past them or
    /// between them (the one that ends the region, one the index says it skips), whose
    /// headers the reader judges the region by.
    fn bytes(&self) -> Vec<std::ops::Range<u64>> {
        let peeks = |containers: &[std::ops::Range<u64>]| {
            let mut out = Vec::with_capacity(containers.len() + 1);
            for (i, c) in containers.iter().enumerate() {
                if !c.is_empty() {
                    out.push(c.clone());
                }
                let next = containers.get(i + 1).map(|n| n.start);
                if next.is_none_or(|n| n > c.end) {
                    out.push(c.end..c.end + cram::reader::HEADER_PEEK);
                }
            }
            out
        };
        match self {
            Pass::Range(containers, _) => peeks(containers),
            Pass::Ranges(ranges) => ranges.iter().flat_map(|(c, _)| peeks(c)).collect(),
            Pass::Planned(_) | Pass::Whole => self.containers(),
        }
    }

    /// Sets `reader` to read this pass from its start.
    pub fn start(&self, reader: &mut cram::Reader) {
        match self {
            Pass::Whole => reader.rewind(),
            Pass::Range(containers, range) => reader.read_containers(containers.clone(), *range),
            Pass::Planned(containers) => reader.read_planned(containers.clone()),
            Pass::Ranges(ranges) => reader.read_ranges(ranges.clone()),
        }
    }
}

/// The passes as one, when every pass is a range: the reader reads them in turn and decodes
/// the later ranges' containers while the earlier ones' records are written.
pub fn joined(passes: &[Pass]) -> Option<Pass> {
    let mut ranges = Vec::with_capacity(passes.len());
    for p in passes {
        match p {
            Pass::Range(containers, range) => ranges.push((containers.clone(), *range)),
            Pass::Whole | Pass::Planned(_) | Pass::Ranges(_) => return None,
        }
    }
    Some(Pass::Ranges(ranges))
}

/// The passes for the command line's regions, and the index's lines (none without regions);
/// `index` is `-X`'s index file, if given; `file_len` the CRAM's size, `data_end` where its EOF
/// container begins; `read` fetches the index's bytes (a local or remote file).
pub fn plan(
    file: &str,
    index: Option<&str>,
    regions: &[String],
    header: &Header,
    file_len: u64,
    data_end: u64,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(Vec<Pass>, Vec<CraiEntry>), Error> {
    if regions.is_empty() {
        return Ok((vec![Pass::Whole], Vec::new()));
    }
    let (crai_name, entries) = read_index(file, index, read)?;
    if let Some(e) = header.text_error() {
        eprintln!("{e}");
    }
    let mut passes = Vec::new();
    for region in regions {
        let region = match parse_region(region, header) {
            Ok(region) => region,
            Err(e) => {
                if let Some(message) = e.htslib_message() {
                    eprintln!("{message}");
                }
                eprintln!("{}", e.samtools_warning());
                continue;
            }
        };
        let at = Planning {
            file,
            crai_name: &crai_name,
            entries: &entries,
            file_len,
            data_end,
        };
        passes.extend(at.pass(&region)?);
    }
    Ok((passes, entries))
}

/// What a region's pass is planned from: the CRAM, its index and their sizes.
pub struct Planning<'a> {
    /// The CRAM, as given.
    pub file: &'a str,
    /// Its index's name.
    pub crai_name: &'a str,
    /// The index's lines.
    pub entries: &'a [CraiEntry],
    /// The CRAM's size.
    pub file_len: u64,
    /// Where its EOF container begins.
    pub data_end: u64,
}

impl Planning<'_> {
    /// The pass for `region`: the whole file for `.`, none for a reference the index has
    /// nothing for; an error when the index's lines are out of order or name a container past
    /// the end of the file.
    pub fn pass(&self, region: &Region) -> Result<Option<Pass>, Error> {
        let Some(range) = Range::from_region(region) else {
            // `.`: the whole file.
            return Ok(Some(Pass::Whole));
        };
        cram::crai::check_order(self.entries, &range)
            .map_err(|e| Error::cram(self.crai_name, e))?;
        let Some(containers) = cram::crai::plan_for_range(self.entries, &range, self.data_end)
        else {
            return Ok(None);
        };
        let offset = containers.first().map_or(0, |c| c.start);
        if offset >= self.file_len {
            return Err(Error::cram_at(
                self.crai_name,
                offset,
                format!(
                    "names a container at byte {offset}, past the end of {} ({} bytes)",
                    hfile::redact_text(self.file),
                    self.file_len
                ),
            ));
        }
        Ok(Some(Pass::Range(containers, range)))
    }
}

/// The index's lines of the slices `passes` read, in the order their containers are first
/// read, the first [`cram::reader::REFERENCES_AHEAD`] of them: what the reader reads
/// reference bases for while the containers are on their way.
fn slices_read(entries: &[CraiEntry], passes: &[Pass]) -> Vec<CraiEntry> {
    let mut by_container: Vec<&CraiEntry> = entries.iter().collect();
    by_container.sort_by_key(|e| e.container);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for container in passes.iter().flat_map(Pass::containers) {
        // Regions that share a container read it once.
        if !seen.insert(container.start) {
            continue;
        }
        let first = by_container.partition_point(|e| e.container < container.start);
        let lines = by_container[first..]
            .iter()
            .take_while(|e| e.container == container.start);
        out.extend(lines.copied().copied());
        if out.len() >= cram::reader::REFERENCES_AHEAD {
            out.truncate(cram::reader::REFERENCES_AHEAD);
            break;
        }
    }
    out
}

/// The `.crai` (`index`, `-X`'s, or the file's name with `.crai`): its name and entries.
pub fn read_index(
    file: &str,
    index: Option<&str>,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(String, Vec<cram::crai::CraiEntry>), Error> {
    let crai_name = crate::cram_cache::index_name(file, index).ok_or_else(|| {
        Error::cram(
            file,
            "the index of a pre-signed URL cannot be derived from it (its signature covers \
             the path): give the index's own URL with -X",
        )
    })?;
    let data = read(&crai_name).map_err(|_| {
        Error::cram(
            file,
            format!(
                "no index found (looked for {}); region queries need an index",
                hfile::redact_text(&crai_name)
            ),
        )
    })?;
    let entries = cram::crai::parse(&data).map_err(|e| Error::cram(&crai_name, e))?;
    Ok((crai_name, entries))
}

/// Tells `reader` what the passes will read: the containers to fetch ahead ([`advice`]) and,
/// for a remote file, the slices whose reference bases are read while they come (a round trip
/// at least; [`slices_read`] from the index's lines, `entries`).
pub fn announce(reader: &mut cram::Reader, file: &str, passes: &[Pass], entries: &[CraiEntry]) {
    // Each container the index leads to is checked against its lines.
    reader.set_index(entries);
    reader.advise(&advice(passes));
    if hfile::scheme_of(file).is_some() {
        reader.read_references_ahead(&slices_read(entries, passes));
    }
}

/// The spans a remote file fetches for the passes, in the order they are read: the passes'
/// containers joined as BAM's chunks are ([`index::plan::plan_ranges`], cut only at container
/// starts).
pub fn advice(passes: &[Pass]) -> Vec<std::ops::Range<u64>> {
    let ranges: Vec<std::ops::Range<u64>> = passes.iter().flat_map(Pass::bytes).collect();
    let mut starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
    starts.sort_unstable();
    starts.dedup();
    index::plan::plan_ranges(&ranges, &starts, &Default::default()).read_order()
}
