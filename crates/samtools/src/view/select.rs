//! The selection and processing options of `samtools view` (its filters, region files,
//! subsampling and record edits), the [`Selection`] they make, and what happens to each record
//! (`process_one_record` in `sam_view.c`). The CLI reads their values.

use std::collections::HashSet;

use crate::edit::Edit;
use crate::filter::bed::Targets;
use crate::filter::expr::Expression;
use crate::filter::subsample::Subsample;
use crate::filter::{FlagTests, Selection, TagTest};
use bam::Record;

/// The options, as given (files already read, as samtools reads them while parsing).
#[derive(Debug, Clone)]
pub struct SelectArgs {
    /// `-L`/`--region-file`: the BED targets.
    pub targets: Option<Targets>,
    /// `-M`, `--region-file` or `-P`: regions and targets through the index, each record once.
    pub multi_region: bool,
    /// `-P`.
    pub fetch_pairs: bool,
    /// `-r`/`-R`: the read groups to keep.
    pub read_groups: Option<HashSet<Vec<u8>>>,
    /// `-N`: the read names to keep.
    pub names: Option<HashSet<Vec<u8>>>,
    /// `-d`/`-D`: a tag (and values) to keep records by.
    pub tag: Option<TagTest>,
    /// `-l`: the library to keep.
    pub library: Option<Vec<u8>>,
    /// `-m`: the least query length (bases the CIGAR consumes).
    pub min_qlen: i32,
    /// `-e`: the filter expression, as given.
    pub expression: Option<String>,
    /// `--rf`.
    pub require_any: i32,
    /// `-G`.
    pub exclude_all: i32,
    /// Negative: no subsampling (samtools' -1.0).
    pub subsample_fraction: f64,
    /// `--subsample-seed`, or `-s`'s integer part.
    pub subsample_seed: u32,
    /// `--add-flags`.
    pub add_flags: i32,
    /// `--remove-flags`.
    pub remove_flags: i32,
    /// `-x`/`--remove-tag`: tags to remove.
    pub remove_tags: Option<HashSet<[u8; 2]>>,
    /// `--keep-tag` (or `-x ^TAGS`): the only tags to keep.
    pub keep_tags: Option<HashSet<[u8; 2]>>,
    /// `-B`: remove backward (`B`) CIGAR operations.
    pub remove_backward: bool,
    /// `-U FILE`.
    pub unselected: Option<String>,
    /// `-p`.
    pub unmap: bool,
}

impl Default for SelectArgs {
    fn default() -> SelectArgs {
        SelectArgs {
            targets: None,
            multi_region: false,
            fetch_pairs: false,
            read_groups: None,
            names: None,
            tag: None,
            library: None,
            min_qlen: 0,
            expression: None,
            require_any: 0,
            exclude_all: 0,
            subsample_fraction: -1.0,
            subsample_seed: 0,
            add_flags: 0,
            remove_flags: 0,
            remove_tags: None,
            keep_tags: None,
            remove_backward: false,
            unselected: None,
            unmap: false,
        }
    }
}

impl SelectArgs {
    /// The record selection, with the view options samtools checks in the same function
    /// (`-f`, `-F`, `-q`). A syntax error in `-e` names its column.
    pub fn selection(
        &self,
        require_all: i32,
        exclude_any: i32,
        min_mapq: i32,
    ) -> Result<Selection, String> {
        let expression = match &self.expression {
            Some(text) => Some(
                Expression::parse(text)
                    .map_err(|e| format!("filter expression \"{text}\": syntax error {e}"))?,
            ),
            None => None,
        };
        Ok(Selection {
            expression,
            remove_backward: self.remove_backward,
            min_query_len: self.min_qlen,
            min_mapq,
            flags: FlagTests {
                require_all,
                exclude_any,
                require_any: self.require_any,
                exclude_all: self.exclude_all,
            },
            // Without -M the BED is a filter; with it, the regions' iterator does the work.
            targets: if self.multi_region {
                None
            } else {
                self.targets.clone()
            },
            subsample: (self.subsample_fraction > 0.0)
                .then(|| Subsample::new(self.subsample_fraction, self.subsample_seed)),
            read_groups: self.read_groups.clone(),
            tag: self.tag.clone(),
            names: self.names.clone(),
            library: self.library.clone(),
            state: Default::default(),
        })
    }

    /// `-x`/`--keep-tag` (samtools' `adjust_tags`; all that `-P` applies).
    pub fn adjust_tags(&self, r: &mut Record) -> Result<(), String> {
        let result = if let Some(keep) = &self.keep_tags {
            r.retain_tags(|t| keep.contains(&t))
        } else if let Some(remove) = &self.remove_tags {
            r.retain_tags(|t| !remove.contains(&t))
        } else {
            Ok(())
        };
        result.map_err(|e| e.to_string())
    }

    /// Whether any record may be edited: `--add-flags`/`--remove-flags`, `-x`/`--keep-tag`,
    /// `-p`, or `-P` (which applies the tag edits and drops unselected records).
    pub fn edits(&self) -> bool {
        self.add_flags != 0
            || self.remove_flags != 0
            || self.keep_tags.is_some()
            || self.remove_tags.is_some()
            || self.unmap
            || self.fetch_pairs
    }

    /// `--add-flags`/`--remove-flags` (`change_flag`), then [`SelectArgs::adjust_tags`].
    fn edit_selected(&self, r: &mut Record) -> Result<(), String> {
        if self.add_flags != 0 || self.remove_flags != 0 {
            let flag = (i32::from(r.flags().bits()) | self.add_flags) & !self.remove_flags;
            r.set_flags(bam::Flags::from_bits(flag as u16));
        }
        self.adjust_tags(r)
    }
}

/// Where one record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Selected: to the output (edited), and counted.
    Selected,
    /// Not selected, `-p`: to the output, marked unmapped.
    Unmapped,
    /// Not selected: to `-U` if given.
    Unselected,
    /// Not selected, with `-P`: nowhere.
    Dropped,
}

/// samtools' `process_one_record`: selects, edits, and says where the record goes. With `-c`
/// (`count`) selected records are not edited and `-p` does not apply; with `-P` (`pairs`,
/// `fetch_pairs_collect_mates`) only the tag edits apply and unselected records go nowhere.
pub fn process(
    args: &SelectArgs,
    sel: &mut Selection,
    r: &mut Record,
    header: &bam::Header,
    count: bool,
) -> Result<Fate, String> {
    if sel.select(r, header) {
        if args.fetch_pairs {
            args.adjust_tags(r)?;
        } else if !count {
            args.edit_selected(r)?;
        }
        Ok(Fate::Selected)
    } else if args.fetch_pairs {
        Ok(Fate::Dropped)
    } else if args.unmap && !count {
        r.make_unmapped();
        Ok(Fate::Unmapped)
    } else {
        Ok(Fate::Unselected)
    }
}
