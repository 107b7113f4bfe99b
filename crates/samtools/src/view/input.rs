//! The input side of `hts view`: opening the file (with its index fetched ahead when the query
//! will need it), and the records to process, planned before any output is opened: the whole
//! file, the regions one by one, or every region at once (`-M`, `--region-file`, `-P`, and `-L`
//! on a remote file), as samtools chooses in `main_samview`.

use crate::filter::bed::Targets;
use crate::filter::Selection;
use bam::{Error, Header, Query, Reader, Regions};
use region::{parse_region, RefId, RegionSet};

use super::Failure;
use super::{HeaderMode, ViewArgs};

/// The index file named with `-X`, and the regions (samtools' positional arguments).
pub fn index_and_regions(args: &ViewArgs) -> Result<(Option<&str>, &[String]), Failure> {
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

/// Whether samtools looks a reference name up for this command (regions, `-M`,
/// `--region-file`, `-P`), which makes htslib parse the header text.
pub fn looks_up_names(args: &ViewArgs) -> bool {
    args.header != HeaderMode::Only
        && (args.select.multi_region || index_and_regions(args).is_ok_and(|(_, r)| !r.is_empty()))
}

/// The input file (`-` when none is named).
fn input_name(args: &ViewArgs) -> &str {
    args.positional.first().map_or("-", String::as_str)
}

/// `-L` without regions or `-M` on a remote file: samtools reads the whole file and keeps what
/// overlaps the BED; hts asks the index for the same records (one plan for every line), and
/// reads the whole file only when there is no index. Not with `-U` or `-p`, which want the
/// records outside the BED too.
fn targets_through_index(args: &ViewArgs, regions: &[String]) -> bool {
    let s = &args.select;
    s.targets.is_some()
        && !s.multi_region
        && s.unselected.is_none()
        && !s.unmap
        && regions.is_empty()
        && hfile::scheme_of(input_name(args)).is_some()
}

/// Opens the input (`opened`: the local file, opened already to tell BAM from CRAM); for a
/// remote file the index is fetched beside the header when the query will need it.
pub fn open(args: &ViewArgs, opened: Option<std::fs::File>) -> Result<Reader, Failure> {
    let file = input_name(args);
    let (index_location, regions) = index_and_regions(args)?;
    let needs_index = args.header != HeaderMode::Only
        && (!regions.is_empty()
            || args.select.multi_region
            || targets_through_index(args, regions));
    let index = match (needs_index, index_location) {
        (false, _) => bam::IndexHint::None,
        (true, Some(at)) => bam::IndexHint::At(at.to_string()),
        (true, None) => bam::IndexHint::Auto,
    };
    let mut options = bam::OpenOptions {
        threads: args.threads,
        index,
        no_cache: args.no_cache,
        query_refs: distinct_references(regions),
        ..Default::default()
    };
    set_transport(args, &mut options.transport);
    match args.fetch_mode.as_deref() {
        Some("open-ended") => {
            options.transport.range_mode = hfile::RangeMode::Unbounded;
            options.fetch_plan = bam::FetchPlan::PerChunk;
        }
        Some("per-chunk") => options.fetch_plan = bam::FetchPlan::PerChunk,
        _ => {}
    }
    let reader = match opened {
        Some(opened) => Reader::open_file(file, opened, &options)?,
        None => Reader::open(file, &options)?,
    };
    for warning in reader.header().warnings() {
        eprintln!("{warning}");
    }
    Ok(reader)
}

/// The transport options of the command line (request headers, time limit, S3, parts).
pub fn set_transport(args: &ViewArgs, t: &mut hfile::OpenOptions) {
    t.headers = args.request_headers.clone();
    t.verbosity = args.verbosity;
    t.deadline = args.deadline;
    t.s3 = hfile::S3Options {
        endpoint: args.s3_endpoint.clone(),
        requester_pays: args.requester_pays,
    };
    if let Some(n) = args.fetchers {
        t.fetchers = n;
    }
    if let Some(n) = args.part_size {
        t.part_size = n;
    }
    if let Some(n) = args.read_ahead {
        t.read_ahead = n;
    }
}

/// How many distinct references the regions name, as far as can be told before the header is
/// read (`name`, `name:beg-end`, `{name}:beg-end`); `*` needs every reference.
fn distinct_references(regions: &[String]) -> usize {
    let mut names: Vec<&str> = Vec::new();
    for region in regions {
        if region == "*" {
            return usize::MAX;
        }
        let name = match region.strip_prefix('{').and_then(|r| r.split_once('}')) {
            Some((name, _)) => name,
            None => match region.rsplit_once(':') {
                Some((name, range))
                    if !range.is_empty()
                        && range
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == ',' || c == '-') =>
                {
                    name
                }
                _ => region.as_str(),
            },
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.len()
}

/// The records to process: the whole file, the regions one by one, or every region at once.
/// Any query is planned here, its spans on their way, and the cached parts of the file shown
/// current, before anything is written. `header` is the one records are selected with;
/// `selection` is used by the first pass of `-P`.
pub fn plan<'r>(
    args: &ViewArgs,
    reader: &'r mut Reader,
    header: &Header,
    selection: &mut Selection,
) -> Result<Query<'r>, Failure> {
    let (index_location, regions) = index_and_regions(args)?;
    if args.header == HeaderMode::Only {
        return Ok(reader.records()?);
    }
    if args.select.multi_region {
        reader.select_index(index_location)?;
        return multi_region(args, reader, header, regions, selection);
    }
    if !regions.is_empty() {
        reader.select_index(index_location)?;
        return query_regions(reader, regions);
    }
    if targets_through_index(args, regions) {
        if let Some(set) = targets_as_regions(args, reader, header)? {
            return Ok(reader.query(Regions::Overlapping(set))?);
        }
    }
    Ok(reader.records()?)
}

/// samtools' `-M`, `--region-file` and `-P` (`multi_region_init`): the command-line regions
/// and the BED merged into one region list, read through the multi-region iterator.
fn multi_region<'r>(
    args: &ViewArgs,
    reader: &'r mut Reader,
    header: &Header,
    regions: &[String],
    selection: &mut Selection,
) -> Result<Query<'r>, Failure> {
    let (targets, set, _) = region_set(args, header, regions)?;
    if args.select.fetch_pairs {
        return Ok(crate::pairs::query_pairs(
            reader, header, &targets, set, selection,
        )?);
    }
    Ok(reader.query(Regions::Multi(set))?)
}

/// samtools' `multi_region_init`: the BED (`-L`, `--region-file`) and the command-line
/// regions merged into one region list (as its region hash holds them), and that list
/// resolved against `header`, with the count of names it does not hold.
pub fn region_set(
    args: &ViewArgs,
    header: &Header,
    regions: &[String],
) -> Result<(Targets, RegionSet, usize), Failure> {
    let bed = args.select.targets.clone();
    let (targets, filtered) = match bed {
        None if regions.is_empty() => {
            return Err(Failure::Message(
                "No regions or BED file have been provided. Aborting.".to_string(),
            ))
        }
        Some(mut bed) if regions.is_empty() => {
            bed.unify();
            (bed, false)
        }
        bed => {
            let merged = Targets::merge_regions(bed, regions);
            (merged.targets, merged.filtered)
        }
    };
    let list = targets.region_list(filtered);
    if list.is_empty() {
        return Err(Failure::Message(
            "Region list is empty or could not be created. Aborting.".to_string(),
        ));
    }
    let mut unknown = 0;
    let set = RegionSet::resolve(&list, header, |warning| {
        unknown += 1;
        eprintln!("{warning}");
    });
    Ok((targets, set, unknown))
}

/// The regions of the command line, as samtools reads them one by one (a bad one is skipped
/// with its warning), planned as one query.
fn query_regions<'r>(reader: &'r mut Reader, regions: &[String]) -> Result<Query<'r>, Failure> {
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
    let query = reader.query(Regions::Targets(targets))?;
    for (i, name) in names.iter().enumerate() {
        if query.is_invalid(i) {
            eprintln!("{}", region::invalid_region_warning(name));
        }
    }
    Ok(query)
}

/// `-L` on a remote file: the BED's intervals on the references whose names they give (as
/// `bed_overlap` compares them: the names of the binary reference list), for the index. `None`
/// when the file has no index (samtools never looks for one here): then it is read whole.
fn targets_as_regions(
    args: &ViewArgs,
    reader: &mut Reader,
    header: &Header,
) -> Result<Option<RegionSet>, Failure> {
    match reader.select_index(None) {
        Ok(()) => {}
        Err(Error::NoIndex { .. }) => return Ok(None),
        Err(e @ Error::Index { .. }) => {
            eprintln!("[W::hts] {e}; reading the whole file");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    }
    let Some(targets) = &args.select.targets else {
        return Ok(None);
    };
    let tid_of: std::collections::HashMap<&[u8], RefId> = header
        .refs()
        .iter()
        .enumerate()
        .map(|(tid, r)| (r.name.as_slice(), RefId::new(tid)))
        .collect();
    let mut set = RegionSet::default();
    set.add_all(
        targets
            .region_list(false)
            .into_iter()
            .filter_map(|named| {
                let tid = *tid_of.get(named.name.as_slice())?;
                Some(named.intervals.into_iter().map(move |i| (tid, i)))
            })
            .flatten(),
    );
    Ok(Some(set))
}

#[cfg(test)]
mod tests {
    use super::distinct_references;

    #[test]
    fn references_are_counted_by_name() {
        let count =
            |r: &[&str]| distinct_references(&r.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(count(&[]), 0);
        assert_eq!(
            count(&["1:1000-2000", "1:5000", "2", "{3:4}:1-5", "X:1,000-2,000"]),
            4
        );
        assert_eq!(count(&["1", "*"]), usize::MAX);
    }
}
