//! The regions of `hts view x.cram REGION...` read through the `.crai` index, one after
//! another as samtools reads them: each from the container the index names, its records
//! filtered as htslib's CRAM reader filters them (`cram::reader::Range`), as the passes of
//! [`cram::pass`]; the index found and read.

use bam::Header;
use cram::crai::CraiEntry;
use cram::pass::Pass;
use cram::reader::Range;
use region::{parse_region, Region};

use crate::Error;

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
