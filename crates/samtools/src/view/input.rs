//! The input side of `samtools view`: opening the file, BAM or CRAM, through the facade (with
//! its index fetched ahead when the query will need it), and the records to process, planned
//! before any output is opened: the whole file, the regions one by one, or every region at
//! once (`-M`, `--region-file`, `-P`, and `-L` on a remote file), as samtools chooses in
//! `main_samview`.

use bam::Header;
use hts::alignment::{Reader, Records};
use region::{parse_region, RefId, RegionList, RegionSet};

use super::{Failure, HeaderMode, ViewArgs};
use crate::filter::bed::Targets;
use crate::filter::Selection;

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
        // A CRAM's records are read whole for it (the index is not asked).
        && !hts::sniff::is_cram(input_name(args))
}

/// The value of `--input-fmt-option KEY=VALUE` (the last one given).
fn input_option<'a>(args: &'a ViewArgs, key: &str) -> Option<&'a str> {
    args.input_options
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Opens the input, BAM or CRAM by its content; a remote file's index is fetched beside the
/// header when the query will need it. A stale cached part is an error ([`Failure::Stale`]):
/// the header the outputs are made with comes from the file as opened.
pub fn open(args: &ViewArgs) -> Result<Reader, Failure> {
    let file = input_name(args);
    let (index_location, regions) = index_and_regions(args)?;
    let needs_index = args.header != HeaderMode::Only
        && (!regions.is_empty()
            || args.select.multi_region
            || targets_through_index(args, regions));
    let mut options = hts::Options::new()
        .threads(args.threads)
        .no_cache(args.no_cache)
        .index_ahead(needs_index)
        .query_refs(region::distinct_references(regions))
        .stale_is_error(true)
        .adjust_transport(transport(args));
    if let Some(index) = index_location {
        options = options.index(index);
    }
    if let Some(reference) = args
        .reference
        .as_deref()
        .or(input_option(args, "reference"))
    {
        options = options.reference(reference);
    }
    let set =
        |key: &str| input_option(args, key).map(|v| v.trim().parse::<i64>().unwrap_or(0) != 0);
    if let Some(on) = set("decode_md") {
        options = options.decode_md(on);
    }
    if let Some(on) = set("ignore_md5") {
        options = options.ignore_md5(on);
    }
    if matches!(args.fetch_mode.as_deref(), Some("open-ended" | "per-chunk")) {
        options = options.fetch_plan(bam::FetchPlan::PerChunk);
    }
    let reader = Reader::open(file, &options)?;
    for warning in reader.warnings() {
        eprintln!("{warning}");
    }
    Ok(reader)
}

/// What the command line sets of the transport (request headers, time limit, S3, parts), over
/// each format's defaults.
pub fn transport(args: &ViewArgs) -> impl Fn(&mut hfile::OpenOptions) + Send + Sync + 'static {
    let headers = args.request_headers.clone();
    let (verbosity, deadline) = (args.verbosity, args.deadline);
    let s3 = hfile::S3Options {
        endpoint: args.s3_endpoint.clone(),
        requester_pays: args.requester_pays,
    };
    let (fetchers, part_size, read_ahead) = (args.fetchers, args.part_size, args.read_ahead);
    let unbounded = args.fetch_mode.as_deref() == Some("open-ended");
    move |t: &mut hfile::OpenOptions| {
        t.headers = headers.clone();
        t.verbosity = verbosity;
        t.deadline = deadline;
        t.s3 = s3.clone();
        if let Some(n) = fetchers {
            t.fetchers = n;
        }
        if let Some(n) = part_size {
            t.part_size = n;
        }
        if let Some(n) = read_ahead {
            t.read_ahead = n;
        }
        if unbounded {
            t.range_mode = hfile::RangeMode::Unbounded;
        }
    }
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
) -> Result<Records<'r>, Failure> {
    let (_, regions) = index_and_regions(args)?;
    if args.header == HeaderMode::Only {
        return Ok(reader.records()?);
    }
    if args.select.multi_region {
        return multi_region(args, reader, header, regions, selection);
    }
    if !regions.is_empty() {
        return query_regions(reader, regions);
    }
    if targets_through_index(args, regions) {
        if let Some(set) = targets_as_regions(args, reader, header)? {
            return Ok(reader.query_overlapping(&set)?);
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
) -> Result<Records<'r>, Failure> {
    let mut warn = |warning: String| eprintln!("{warning}");
    let plan = RegionPlan::new(args, regions).map_err(Failure::Message)?;
    if !args.select.fetch_pairs {
        return multi_region_query(&plan, reader, header, &mut warn);
    }
    let (set, unknown) = plan.resolve(header, &mut warn);
    let cram = reader.is_cram();
    refuse_unknown(cram, unknown, &mut warn);
    // The list samtools makes again for the second pass of -P gives `.` and `*` -1 too (and
    // reads what it would have anyway).
    let special = usize::from(set.all) + usize::from(set.unplaced);
    let second = crate::pairs::first_pass(reader, header, &plan.targets, set, selection)?;
    refuse_unknown(cram, unknown + special, &mut warn);
    Ok(crate::pairs::second_pass(reader, second)?)
}

/// samtools' `-M` and `--region-file` without `-P`: the region list of a [`RegionPlan`] read
/// through the multi-region iterator (overlapping regions merged, each record once, in file
/// order). The one walk of `view` on one file and of each sample of a cohort; `warn` is given
/// samtools' warnings (names the header lacks), one line each.
pub fn multi_region_query<'r>(
    plan: &RegionPlan,
    reader: &'r mut Reader,
    header: &Header,
    warn: &mut dyn FnMut(String),
) -> Result<Records<'r>, Failure> {
    let (set, unknown) = plan.resolve(header, warn);
    refuse_unknown(reader.is_cram(), unknown, warn);
    Ok(reader.query_set(&set)?)
}

/// Names the header does not hold stay in htslib's region list as reference -1, which its
/// CRAM iterator refuses, one line each (and goes on with the others).
fn refuse_unknown(cram: bool, unknown: usize, warn: &mut dyn FnMut(String)) {
    if cram {
        for _ in 0..unknown {
            warn("[E::hts_itr_multi_cram] Query with tid=-1 not implemented for CRAM files".into());
        }
    }
}

/// samtools' `multi_region_init`: the BED (`-L`, `--region-file`) and the command-line
/// regions merged into one region list (as its region hash holds them), made once, then
/// resolved against each file's header ([`RegionPlan::resolve`]): a cohort merges its BED
/// once, and says once that the list is empty.
pub struct RegionPlan {
    /// The BED and the regions merged (for `-P`'s second pass).
    pub targets: Targets,
    list: RegionList,
}

impl RegionPlan {
    /// The plan of `args`' BED and `regions`, or samtools' words for why there is none.
    pub fn new(args: &ViewArgs, regions: &[String]) -> Result<RegionPlan, String> {
        let bed = args.select.targets.clone();
        let (targets, filtered) = match bed {
            None if regions.is_empty() => return Err(NO_REGIONS.to_string()),
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
            return Err("Region list is empty or could not be created. Aborting.".to_string());
        }
        Ok(RegionPlan { targets, list })
    }

    /// How many references the list names (a remote BAM's first index request asks for
    /// about that many references' worth); `*` needs the whole index.
    pub fn references(&self) -> usize {
        if self.list.iter().any(|n| n.name == b"*") {
            return usize::MAX;
        }
        self.list.len()
    }

    /// The list resolved against `header`, with the count of names it does not hold (each
    /// warned of).
    pub fn resolve(&self, header: &Header, warn: &mut dyn FnMut(String)) -> (RegionSet, usize) {
        let mut unknown = 0;
        let set = RegionSet::resolve(&self.list, header, |warning| {
            unknown += 1;
            warn(warning);
        });
        (set, unknown)
    }
}

/// samtools' words for `-M` with neither regions nor a BED.
pub const NO_REGIONS: &str = "No regions or BED file have been provided. Aborting.";

/// The regions of the command line, as samtools reads them one by one (a bad one is skipped
/// with its warning), planned as one query.
fn query_regions<'r>(reader: &'r mut Reader, regions: &[String]) -> Result<Records<'r>, Failure> {
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
    let query = reader.query(&targets)?;
    for (i, name) in names.iter().enumerate() {
        if query.is_invalid(i) {
            eprintln!("{}", region::invalid_region_warning(name));
        }
    }
    Ok(query)
}

/// `-L` on a remote BAM: the BED's intervals on the references whose names they give (as
/// `bed_overlap` compares them: the names of the binary reference list), for the index. `None`
/// when the file has no index (samtools never looks for one here): then it is read whole.
fn targets_as_regions(
    args: &ViewArgs,
    reader: &mut Reader,
    header: &Header,
) -> Result<Option<RegionSet>, Failure> {
    match reader.load_index() {
        Ok(()) => {}
        Err(hts::Error::Bam(bam::Error::NoIndex { .. })) => return Ok(None),
        Err(hts::Error::Bam(e @ bam::Error::Index { .. })) => {
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
