//! A query's passes over a CRAM: which containers each reads (from the `.crai`), the spans a
//! remote file is told to fetch for them, and the reader set to read each in turn. Format logic
//! only: the region grammar, the index's name and the errors about it are the caller's.

use crate::crai::CraiEntry;
use crate::reader::Range;

/// One pass over the file.
pub enum Pass {
    /// Every record from the first container.
    Whole,
    /// The records of a range, from exactly these containers (their bytes, in file order).
    Range(Vec<std::ops::Range<u64>>, Range),
    /// Every record of these containers, judged by htslib's multi-region iterator
    /// ([`crate::multi`]).
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
    /// [`crate::reader::HEADER_PEEK`] bytes of each container its reading meets past them or
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
                    out.push(c.end..c.end + crate::reader::HEADER_PEEK);
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
    pub fn start(&self, reader: &mut crate::Reader) {
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

/// The index's lines of the slices `passes` read, in the order their containers are first
/// read, the first [`crate::reader::REFERENCES_AHEAD`] of them: what the reader reads
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
        if out.len() >= crate::reader::REFERENCES_AHEAD {
            out.truncate(crate::reader::REFERENCES_AHEAD);
            break;
        }
    }
    out
}

/// Tells `reader` what the passes will read: the containers to fetch ahead ([`advice`]) and,
/// for a `remote` file, the slices whose reference bases are read while they come (a round
/// trip at least; `slices_read` from the index's lines, `entries`).
pub fn announce(reader: &mut crate::Reader, remote: bool, passes: &[Pass], entries: &[CraiEntry]) {
    // Each container the index leads to is checked against its lines.
    reader.set_index(entries);
    reader.advise(&advice(passes));
    if remote {
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
