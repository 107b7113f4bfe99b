//! The regions of `hts view x.cram REGION...` read through the `.crai` index, one after
//! another as samtools reads them: each from the container the index names, its records
//! filtered as htslib's CRAM reader filters them (`cram::reader::Range`).

use bam::Header;
use cram::crai::CraiEntry;
use cram::reader::Range;
use region::parse_region;

use crate::view::Failure;

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
) -> Result<(Vec<Pass>, Vec<CraiEntry>), Failure> {
    if regions.is_empty() {
        return Ok((vec![Pass::Whole], Vec::new()));
    }
    let (crai_name, entries) = read_index(file, index, read)?;
    if let Some(e) = header.text_error() {
        eprintln!("{e}");
    }
    let mut passes = Vec::new();
    for region in regions {
        let range = match parse_region(region, header).map(|r| Range::from_region(&r)) {
            Ok(Some(range)) => range,
            Ok(None) => {
                // `.`: the whole file.
                passes.push(Pass::Whole);
                continue;
            }
            Err(e) => {
                if let Some(message) = e.htslib_message() {
                    eprintln!("{message}");
                }
                eprintln!("{}", e.samtools_warning());
                continue;
            }
        };
        cram::crai::check_order(&entries, &range).map_err(|e| {
            let name = hfile::redact_text(&crai_name);
            Failure::Message(format!("{name}: {e}"))
        })?;
        // A reference the index has nothing for: the region finds nothing.
        if let Some(containers) = cram::crai::plan_for_range(&entries, &range, data_end) {
            let offset = containers.first().map_or(0, |c| c.start);
            if offset >= file_len {
                return Err(Failure::Message(format!(
                    "{}: names a container at byte {offset}, past the end of {} ({file_len} bytes)",
                    hfile::redact_text(&crai_name),
                    hfile::redact_text(file)
                )));
            }
            passes.push(Pass::Range(containers, range));
        }
    }
    Ok((passes, entries))
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
) -> Result<(String, Vec<cram::crai::CraiEntry>), Failure> {
    let crai_name = crate::cram_remote::index_name(file, index).ok_or_else(|| {
        Failure::Message(format!(
            "{}: the index of a pre-signed URL cannot be derived from it (its signature covers \
             the path): give the index's own URL with -X",
            hfile::redact_text(file)
        ))
    })?;
    let data = read(&crai_name).map_err(|_| {
        Failure::Message(format!(
            "{}: no index found (looked for {}); region queries need an index",
            hfile::redact_text(file),
            hfile::redact_text(&crai_name)
        ))
    })?;
    let entries = cram::crai::parse(&data).map_err(|e| {
        let name = hfile::redact_text(&crai_name);
        Failure::Message(format!("{name}: {e}"))
    })?;
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
